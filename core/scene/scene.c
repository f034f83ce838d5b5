#include "scene/scene.h"

#include <string.h>

pm_scene *pm_scene_create(pm_arena *a) {
    pm_scene *s = pm_arena_calloc(a, 1, sizeof *s);
    if (!s) return NULL;
    s->arena = a;
    s->meta = pm_meta_obj(a);
    return s->meta ? s : NULL;
}

/* Grows the vertex arrays of p to hold at least need vertices. */
static int pm__prim_reserve_v(pm_arena *a, pm_prim *p, uint32_t need) {
    if (need <= p->vcap) return 0;
    uint64_t cap = p->vcap ? p->vcap : 16;
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX - 1) cap = UINT32_MAX - 1;
    if (cap < need) return -1;
    size_t oc = p->vcap, nc = (size_t)cap;
    float *pos = pm_arena_realloc(a, p->positions, oc * 3 * sizeof(float), nc * 3 * sizeof(float));
    if (!pos) return -1;
    p->positions = pos;
    float *nrm = pm_arena_realloc(a, p->normals, oc * 3 * sizeof(float), nc * 3 * sizeof(float));
    if (!nrm) return -1;
    p->normals = nrm;
    if (p->flags & PM_PRIM_UV) {
        float *uv = pm_arena_realloc(a, p->uvs, oc * 2 * sizeof(float), nc * 2 * sizeof(float));
        if (!uv) return -1;
        p->uvs = uv;
    }
    if (p->flags & PM_PRIM_COLOR) {
        float *c = pm_arena_realloc(a, p->colors, oc * 4 * sizeof(float), nc * 4 * sizeof(float));
        if (!c) return -1;
        p->colors = c;
    }
    p->vcap = (uint32_t)cap;
    return 0;
}

static int pm__prim_reserve_i(pm_arena *a, pm_prim *p, uint32_t need) {
    if (need <= p->icap) return 0;
    uint64_t cap = p->icap ? p->icap : 48;
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    if (cap < need) return -1;
    uint32_t *idx = pm_arena_realloc(a, p->indices, (size_t)p->icap * sizeof(uint32_t),
                                     (size_t)cap * sizeof(uint32_t));
    if (!idx) return -1;
    p->indices = idx;
    p->icap = (uint32_t)cap;
    return 0;
}

pm_prim *pm_scene_add_prim(pm_scene *s, const char *name, const char *material,
                           unsigned flags, uint32_t vreserve, uint32_t ireserve) {
    if (s->nprims == s->prims_cap) {
        uint32_t cap = s->prims_cap ? s->prims_cap * 2 : 4;
        pm_prim *np = pm_arena_realloc(s->arena, s->prims, s->prims_cap * sizeof(pm_prim),
                                       cap * sizeof(pm_prim));
        if (!np) return NULL;
        s->prims = np;
        s->prims_cap = cap;
    }
    pm_prim *p = &s->prims[s->nprims];
    memset(p, 0, sizeof *p);
    p->name = pm_arena_strdup(s->arena, name);
    p->material = pm_arena_strdup(s->arena, material);
    p->flags = flags;
    if (!p->name || !p->material) return NULL;
    if (pm__prim_reserve_v(s->arena, p, vreserve ? vreserve : 16) < 0) return NULL;
    if (pm__prim_reserve_i(s->arena, p, ireserve ? ireserve : 48) < 0) return NULL;
    s->nprims++;
    return p;
}

int pm_prim_set_mesh(pm_scene *s, pm_prim *p, const char *mesh) {
    p->mesh = pm_arena_strdup(s->arena, mesh);
    return p->mesh ? 0 : -1;
}

int64_t pm_prim_add_vertex(pm_scene *s, pm_prim *p, const float pos[3],
                           const float n[3], const float uv[2], const float rgba[4]) {
    if (p->vcount >= UINT32_MAX - 1) return -1;
    if (pm__prim_reserve_v(s->arena, p, p->vcount + 1) < 0) return -1;
    uint32_t i = p->vcount++;
    static const float zero[4] = {0, 0, 0, 0};
    memcpy(p->positions + 3 * i, pos, 3 * sizeof(float));
    memcpy(p->normals + 3 * i, n ? n : zero, 3 * sizeof(float));
    if (p->uvs) memcpy(p->uvs + 2 * i, uv ? uv : zero, 2 * sizeof(float));
    if (p->colors) memcpy(p->colors + 4 * i, rgba ? rgba : zero, 4 * sizeof(float));
    return i;
}

int pm_prim_add_tri(pm_scene *s, pm_prim *p, uint32_t a, uint32_t b, uint32_t c) {
    if (p->icount > UINT32_MAX - 3) return -1;
    if (pm__prim_reserve_i(s->arena, p, p->icount + 3) < 0) return -1;
    p->indices[p->icount++] = a;
    p->indices[p->icount++] = b;
    p->indices[p->icount++] = c;
    return 0;
}

pm_props *pm_scene_add_props(pm_scene *s, const char *name) {
    if (s->nprops == s->props_cap) {
        uint32_t cap = s->props_cap ? s->props_cap * 2 : 4;
        pm_props *np = pm_arena_realloc(s->arena, s->props, s->props_cap * sizeof(pm_props),
                                        cap * sizeof(pm_props));
        if (!np) return NULL;
        s->props = np;
        s->props_cap = cap;
    }
    pm_props *p = &s->props[s->nprops];
    memset(p, 0, sizeof *p);
    p->name = pm_arena_strdup(s->arena, name);
    if (!p->name) return NULL;
    s->nprops++;
    return p;
}

int pm_props_add(pm_scene *s, pm_props *p, const float t[3], const float r[4],
                 const float scale[3]) {
    if (p->count == p->cap) {
        if (p->cap > UINT32_MAX / 2) return -1;
        uint32_t cap = p->cap ? p->cap * 2 : 16;
        size_t oc = p->cap;
        float *nt = pm_arena_realloc(s->arena, p->translations, oc * 12, (size_t)cap * 12);
        if (!nt) return -1;
        p->translations = nt;
        float *nr = pm_arena_realloc(s->arena, p->rotations, oc * 16, (size_t)cap * 16);
        if (!nr) return -1;
        p->rotations = nr;
        float *ns = pm_arena_realloc(s->arena, p->scales, oc * 12, (size_t)cap * 12);
        if (!ns) return -1;
        p->scales = ns;
        p->cap = cap;
    }
    uint32_t i = p->count++;
    memcpy(p->translations + 3 * i, t, 12);
    memcpy(p->rotations + 4 * i, r, 16);
    memcpy(p->scales + 3 * i, scale, 12);
    return 0;
}

uint64_t pm_scene_vertex_count(const pm_scene *s) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->nprims; i++) n += s->prims[i].vcount;
    return n;
}

uint64_t pm_scene_triangle_count(const pm_scene *s) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->nprims; i++) n += s->prims[i].icount / 3;
    return n;
}
