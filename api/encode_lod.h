#ifndef PM_API_ENCODE_LOD_H
#define PM_API_ENCODE_LOD_H
/* Internal to the glTF encoder: levels of detail as MSFT_lod.
 *
 * A primitive group (glTF mesh) named <base>_lod<k> (k = 1..8) is level k
 * of the LOD set <base>. Its level 0 is the groups that stand alone (not
 * themselves a level) and are named like the level's primitives without
 * the _lod<k> suffix: road_lod1 holds asphalt_lod1 and shoulder_lod1, so
 * road's level 0 is the groups asphalt and shoulder. A set without level 0
 * is no set: its groups stay ordinary scene nodes. */
#include <stdint.h>

#include "scene/scene.h"

#define PM_API__LOD_LEVELS 8

typedef enum pm_api__lod_role {
    PM_API__LOD_ROOT = 0,    /* an ordinary node in the scene's root list */
    PM_API__LOD_CHILD = 1,   /* level 0: a child of its set's node */
    PM_API__LOD_LOWER = 2,   /* level k >= 1: only named by MSFT_lod ids */
} pm_api__lod_role;

typedef struct pm_api__lod_set {
    const char *base;                       /* the name of the set's node */
    uint32_t ids[PM_API__LOD_LEVELS];       /* level groups, coarser and coarser */
    uint32_t nids;
    uint32_t first_child, nchildren;        /* in pm_api__lods.children */
    double coverage[PM_API__LOD_LEVELS + 1];   /* MSFT_screencoverage */
} pm_api__lod_set;

typedef struct pm_api__lods {
    pm_api__lod_set *sets;
    uint32_t nsets;
    unsigned char *role;   /* per group: pm_api__lod_role */
    uint32_t *children;    /* level-0 groups of every set, set after set */
    char *names;           /* storage of the sets' base names */
} pm_api__lods;

/* Finds the LOD sets among ngroups groups; prim_group maps each scene
 * primitive to its group (UINT32_MAX: not written). Returns 0, -1 when out
 * of memory. */
int pm_api__lods_plan(pm_api__lods *l, const pm_scene *s, const uint32_t *prim_group,
                      uint32_t ngroups);
void pm_api__lods_free(pm_api__lods *l);
#endif
