#include "encode_lod.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The level k of a name <base>_lod<k> (1..8) with *base_len set, or 0. */
static int pm_api__lod_level(const char *name, size_t *base_len) {
    size_t n = strlen(name);
    if (n < 6 || name[n - 1] < '1' || name[n - 1] > '0' + PM_API__LOD_LEVELS) return 0;
    if (memcmp(name + n - 5, "_lod", 4) != 0) return 0;
    *base_len = n - 5;
    return name[n - 1] - '0';
}

/* The first primitive of each group, and its triangle count. */
typedef struct pm_api__lod_group { const char *name; uint64_t tris; } pm_api__lod_group;

static uint32_t pm_api__lod_find_set(pm_api__lods *l, const char *base, size_t len) {
    for (uint32_t i = 0; i < l->nsets; i++)
        if (strlen(l->sets[i].base) == len && memcmp(l->sets[i].base, base, len) == 0) return i;
    return UINT32_MAX;
}

/* Screen coverage: level k takes over from level k-1 when the object
 * covers so little of the screen that level k's triangles are as dense
 * there as level 0's at half the screen (0.5 x T_k / T_0); never rising
 * from one level to the next; the last level is never culled (0). */
static void pm_api__lod_coverage(pm_api__lod_set *set, const pm_api__lod_group *g,
                                 const uint32_t *children) {
    uint64_t t0 = 0;
    for (uint32_t c = 0; c < set->nchildren; c++) t0 += g[children[set->first_child + c]].tris;
    double prev = 1.0;
    for (uint32_t k = 0; k < set->nids; k++) {
        double c = t0 ? 0.5 * (double)g[set->ids[k]].tris / (double)t0 : 0.0;
        if (c > prev) c = prev;
        set->coverage[k] = c;
        prev = c;
    }
    set->coverage[set->nids] = 0.0;
}

int pm_api__lods_plan(pm_api__lods *l, const pm_scene *s, const uint32_t *prim_group,
                      uint32_t ngroups) {
    memset(l, 0, sizeof *l);
    size_t cap = ngroups ? ngroups : 1;
    /* No group named as a level (most scenes): no sets, every group a root. */
    bool levels = false;
    for (uint32_t i = 0; i < s->nprims && !levels; i++) {
        size_t blen;
        levels = prim_group[i] != UINT32_MAX && pm_api__lod_level(pm_prim_mesh(&s->prims[i]), &blen);
    }
    if (!levels) return (l->role = calloc(cap, 1)) ? 0 : -1;
    pm_api__lod_group *g = calloc(cap, sizeof *g);
    l->role = calloc(cap, 1);
    l->sets = calloc(cap, sizeof *l->sets);
    l->children = calloc(cap, sizeof *l->children);
    l->names = NULL;
    size_t names_cap = 0;
    for (uint32_t i = 0; i < s->nprims; i++) names_cap += strlen(pm_prim_mesh(&s->prims[i])) + 1;
    l->names = malloc(names_cap ? names_cap : 1);
    if (!g || !l->role || !l->sets || !l->children || !l->names) {
        free(g);
        pm_api__lods_free(l);
        return -1;
    }
    for (uint32_t i = 0; i < s->nprims; i++) {
        uint32_t k = prim_group[i];
        if (k == UINT32_MAX) continue;
        if (!g[k].name) g[k].name = pm_prim_mesh(&s->prims[i]);
        g[k].tris += s->prims[i].icount / 3;
    }
    /* the levels, by base name, in level order */
    size_t names_used = 0;
    for (int level = 1; level <= PM_API__LOD_LEVELS; level++) {
        for (uint32_t k = 0; k < ngroups; k++) {
            size_t blen;
            if (pm_api__lod_level(g[k].name, &blen) != level) continue;
            uint32_t si = pm_api__lod_find_set(l, g[k].name, blen);
            if (si == UINT32_MAX) {
                si = l->nsets++;
                char *b = l->names + names_used;
                memcpy(b, g[k].name, blen);
                b[blen] = '\0';
                names_used += blen + 1;
                l->sets[si].base = b;
            }
            if (l->sets[si].nids < PM_API__LOD_LEVELS) l->sets[si].ids[l->sets[si].nids++] = k;
            l->role[k] = PM_API__LOD_LOWER;
        }
    }
    /* level 0 of each set: the standalone groups named like a level's
     * primitives without the suffix */
    uint32_t nchildren = 0;
    for (uint32_t si = 0; si < l->nsets; si++) {
        pm_api__lod_set *set = &l->sets[si];
        set->first_child = nchildren;
        for (uint32_t i = 0; i < s->nprims; i++) {
            uint32_t k = prim_group[i];
            size_t blen;
            if (k == UINT32_MAX || l->role[k] != PM_API__LOD_LOWER) continue;
            if (pm_api__lod_find_set(l, g[k].name, strlen(g[k].name) - 5) != si) continue;
            if (!pm_api__lod_level(s->prims[i].name, &blen)) continue;
            for (uint32_t h = 0; h < ngroups; h++) {
                if (l->role[h] != PM_API__LOD_ROOT || strlen(g[h].name) != blen ||
                    memcmp(g[h].name, s->prims[i].name, blen) != 0)
                    continue;
                l->role[h] = PM_API__LOD_CHILD;
                l->children[nchildren++] = h;
            }
        }
        set->nchildren = nchildren - set->first_child;
        if (set->nchildren == 0)   /* no level 0: not a set */
            for (uint32_t k = 0; k < set->nids; k++) l->role[set->ids[k]] = PM_API__LOD_ROOT;
    }
    /* drop the sets without level 0, keep the order of the rest */
    uint32_t kept = 0;
    for (uint32_t si = 0; si < l->nsets; si++) {
        if (l->sets[si].nchildren == 0) continue;
        l->sets[kept] = l->sets[si];
        pm_api__lod_coverage(&l->sets[kept], g, l->children);
        kept++;
    }
    l->nsets = kept;
    free(g);
    return 0;
}

void pm_api__lods_free(pm_api__lods *l) {
    free(l->sets);
    free(l->role);
    free(l->children);
    free(l->names);
    memset(l, 0, sizeof *l);
}
