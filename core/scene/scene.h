#ifndef PM_SCENE_H
#define PM_SCENE_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "scene/arena.h"
#include "scene/meta.h"

/* The scene every generator returns and every encoder reads. All memory
 * lives in the scene's arena. Positions are metres, +Y up; triangles are
 * counter-clockwise seen from their front (from +Y for ground surfaces). */

enum {
    PM_PRIM_UV = 1u << 0,      /* the primitive carries TEXCOORD_0 */
    PM_PRIM_COLOR = 1u << 1,   /* the primitive carries COLOR_0 (RGBA) */
    /* Its normals not stored until pm_prim_late_normals (normals NULL till
     * then; vertices added meanwhile get none): for a generator that
     * computes them last, once its other big arrays are given back, so
     * that their pages take the normals instead of fresh ones. */
    PM_PRIM_LATE_NORMALS = 1u << 2,
    /* Its UVs (PM_PRIM_UV) likewise not stored until pm_prim_late_uvs:
     * for UVs computed from the positions at the end. */
    PM_PRIM_LATE_UVS = 1u << 3,
};

/* One named primitive: a triangle list with one material. Consecutive
 * primitives with the same mesh name form one group: glTF writes them as one
 * mesh (and node) of that name with several primitives. mesh is NULL for a
 * primitive that is its own group, named after the primitive. */
typedef struct pm_prim {
    const char *name;
    const char *material;
    const char *mesh;
    unsigned flags;            /* PM_PRIM_* */
    uint32_t vcount, vcap;
    uint32_t icount, icap;
    float *positions;          /* 3 * vcount */
    float *normals;            /* 3 * vcount, unit length */
    float *uvs;                /* 2 * vcount, or NULL without PM_PRIM_UV */
    float *colors;             /* 4 * vcount, or NULL without PM_PRIM_COLOR */
    uint32_t *indices;         /* icount, a multiple of 3 */
    /* Every normal is unit length as written by pm_prim_compute_normals
     * (which sets it; it always writes unit normals), so pm_scene_validate
     * need not measure them. Adding vertices clears it; code that writes
     * normals directly must clear it too. */
    bool normals_unit;
    /* The least and greatest position per axis (x, y, z), as a scalar
     * "if (x < min) min = x" pass over the vertices in order finds them
     * (a zero bound is the first zero, -0 or 0): set by pm_scene_validate
     * in its pass over the positions, valid while the scene is validated
     * and bounds_of is still positions (a prim copied over with other
     * positions, or whose array moved, does not pass for measured), so an
     * encoder need not read the positions again for them. */
    float pos_min[3], pos_max[3];
    const float *bounds_of;
} pm_prim;

/* An instanced prop: one name, many placements (TRS). */
typedef struct pm_props {
    const char *name;
    uint32_t count, cap;
    float *translations;       /* 3 * count */
    float *rotations;          /* 4 * count, unit quaternions x,y,z,w */
    float *scales;             /* 3 * count */
} pm_props;

typedef struct pm_scene {
    pm_arena *arena;
    pm_prim *prims;
    uint32_t nprims, prims_cap;
    pm_props *props;
    uint32_t nprops, props_cap;
    pm_meta *meta;             /* an object, never NULL */
    bool validated;            /* pm_scene_validate passed; adding to the scene clears it */
} pm_scene;

/* Creates an empty scene in arena a; NULL when out of memory. */
pm_scene *pm_scene_create(pm_arena *a);

/* A copy of src in arena a, each array exactly its size (primitives,
 * props, metadata, the validated flag): how a part built in a scratch arena
 * (pm_arena_create_scratch) outlives its reset. NULL when out of memory. */
pm_scene *pm_scene_copy(pm_arena *a, const pm_scene *src);
/* Adds a primitive with room for the given counts (it grows past them).
 * name and material are copied. The returned pointer stays valid only until
 * the next pm_scene_add_prim: keep the index for later access. */
pm_prim *pm_scene_add_prim(pm_scene *s, const char *name, const char *material,
                           unsigned flags, uint32_t vreserve, uint32_t ireserve);
/* Makes room in p for vcount vertices and icount indices in all, exactly
 * that much (no doubling): for a caller that knows its final size, so
 * that the arrays are not copied as they grow. Returns 0 or -1. */
int pm_prim_reserve(pm_scene *s, pm_prim *p, uint32_t vcount, uint32_t icount);
/* A PM_PRIM_LATE_NORMALS primitive's normals array (its vertex capacity,
 * contents undefined: pm_prim_compute_normals writes them all), the flag
 * cleared. 0, or -1 when out of memory. */
int pm_prim_late_normals(pm_scene *s, pm_prim *p);
/* The same for a PM_PRIM_LATE_UVS primitive's UVs. */
int pm_prim_late_uvs(pm_scene *s, pm_prim *p);
/* Appends src's vertices and triangles to dst in one go, the same as
 * pm_prim_add_vertex (src's positions and UVs; normals and colours zero)
 * for each vertex, then pm_prim_add_tri for each whole triangle with its
 * indices offset by dst's vertex count before. Returns that offset, or -1
 * (out of memory or past 2^32-2 vertices; dst then unchanged). */
int64_t pm_prim_append(pm_scene *s, pm_prim *dst, const pm_prim *src);
/* Puts p in the group (glTF mesh) named mesh (copied). Returns 0 or -1. */
int pm_prim_set_mesh(pm_scene *s, pm_prim *p, const char *mesh);
/* The name of p's group: its mesh name, or its own name. */
static inline const char *pm_prim_mesh(const pm_prim *p) { return p->mesh ? p->mesh : p->name; }

/* Appends a vertex; n or uv or rgba may be NULL (zeros). Returns its index
 * or -1 when out of memory (or past 2^32-2 vertices). Inline: generators
 * call it once per vertex, and with room left it is a few stores. */
static inline int64_t pm_prim_add_vertex(pm_scene *s, pm_prim *p, const float pos[3],
                                         const float n[3], const float uv[2], const float rgba[4]);
/* Appends one triangle. Returns 0 or -1. */
static inline int pm_prim_add_tri(pm_scene *s, pm_prim *p, uint32_t a, uint32_t b, uint32_t c);
/* Their paths that grow the arrays first (scene.c). */
int64_t pm__prim_add_vertex_grow(pm_scene *s, pm_prim *p, const float pos[3], const float n[3],
                                 const float uv[2], const float rgba[4]);
int pm__prim_add_tri_grow(pm_scene *s, pm_prim *p, uint32_t a, uint32_t b, uint32_t c);

/* k floats of src, or zeros; src tested once (a vertex's attributes are
 * a stitch's inner loop). */
static inline void pm__put(float *d, const float *src, int k) {
    if (src) memcpy(d, src, (size_t)k * sizeof *d);
    else memset(d, 0, (size_t)k * sizeof *d);
}

static inline int64_t pm_prim_add_vertex(pm_scene *s, pm_prim *p, const float pos[3],
                                         const float n[3], const float uv[2], const float rgba[4]) {
    if (p->vcount >= p->vcap) return pm__prim_add_vertex_grow(s, p, pos, n, uv, rgba);
    s->validated = false;
    p->normals_unit = false;
    uint32_t i = p->vcount++;
    pm__put(p->positions + 3 * (size_t)i, pos, 3);
    if (p->normals) pm__put(p->normals + 3 * (size_t)i, n, 3);
    if (p->uvs) pm__put(p->uvs + 2 * (size_t)i, uv, 2);
    if (p->colors) pm__put(p->colors + 4 * (size_t)i, rgba, 4);
    return i;
}

static inline int pm_prim_add_tri(pm_scene *s, pm_prim *p, uint32_t a, uint32_t b, uint32_t c) {
    if (p->icount > p->icap || p->icap - p->icount < 3) return pm__prim_add_tri_grow(s, p, a, b, c);
    s->validated = false;
    uint32_t *d = p->indices + p->icount;
    d[0] = a, d[1] = b, d[2] = c;
    p->icount += 3;
    return 0;
}

/* Adds an (empty) prop set; name copied. Stable until the next add. */
pm_props *pm_scene_add_props(pm_scene *s, const char *name);
int pm_props_add(pm_scene *s, pm_props *p, const float t[3], const float r[4],
                 const float scale[3]);

/* The contract encoders rely on, checked once where the scene is made
 * (each generator's last step) so the encoders need not check it again:
 * every number finite, every index below its primitive's vertex count,
 * index counts multiples of 3. Normals that are not unit length (squared
 * length off by more than 1e-4, or zero: +Y) are renormalized and colours
 * clamped to [0, 1] in place: the same fixes encoders make in private
 * copies for a scene that was not validated, so the output is the same.
 * Returns 0 and sets s->validated, or -1 (a broken contract; validated
 * stays false and the encoders refuse the scene). Code that writes the
 * arrays directly after this must clear s->validated. */
int pm_scene_validate(pm_scene *s);
/* The parts of it, for encoders checking a scene that was not validated. */
bool pm_prim_contract_ok(const pm_prim *p);
bool pm_props_finite(const pm_props *p);
bool pm_normal_is_unit(const float n[3]);
void pm_normal_fix(float n[3]);            /* unit length, or +Y when ~zero */
float pm_color_clamp(float c);             /* to [0, 1] */

/* Total vertices and triangles over all primitives. */
uint64_t pm_scene_vertex_count(const pm_scene *s);
uint64_t pm_scene_triangle_count(const pm_scene *s);
#endif
