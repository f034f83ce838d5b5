#include "scene/scene.h"

#include <math.h>
#include <string.h>

pm_scene *pm_scene_create(pm_arena *a) {
    pm_scene *s = pm_arena_calloc(a, 1, sizeof *s);
    if (!s) return NULL;
    s->arena = a;
    s->meta = pm_meta_obj(a);
    return s->meta ? s : NULL;
}

/* pm_arena_realloc, but an array not yet allocated (p NULL) straight
 * from the inline pm_arena_alloc, which is what pm_arena_realloc does
 * with it: a new primitive's arrays without a call each. */
static inline void *pm__grow(pm_arena *a, void *p, size_t old_size, size_t new_size) {
    return p ? pm_arena_realloc(a, p, old_size, new_size) : pm_arena_alloc(a, new_size);
}

/* Grows the vertex arrays of p to hold at least need vertices: doubling
 * (a primitive growing one vertex at a time), or exactly need when exact
 * (a caller that knows its count: no copies on the way, no slack). */
static int pm__prim_reserve_v(pm_arena *a, pm_prim *p, uint32_t need, bool exact) {
    if (need <= p->vcap) return 0;
    uint64_t cap = exact ? need : (p->vcap ? p->vcap : 16);
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX - 1) cap = UINT32_MAX - 1;
    if (cap < need) return -1;
    size_t oc = p->vcap, nc = (size_t)cap;
    float *pos = pm__grow(a, p->positions, oc * 3 * sizeof(float), nc * 3 * sizeof(float));
    if (!pos) return -1;
    p->positions = pos;
    if (!(p->flags & PM_PRIM_LATE_NORMALS)) {
        float *nrm = pm__grow(a, p->normals, oc * 3 * sizeof(float), nc * 3 * sizeof(float));
        if (!nrm) return -1;
        p->normals = nrm;
    }
    if ((p->flags & (PM_PRIM_UV | PM_PRIM_LATE_UVS)) == PM_PRIM_UV) {
        float *uv = pm__grow(a, p->uvs, oc * 2 * sizeof(float), nc * 2 * sizeof(float));
        if (!uv) return -1;
        p->uvs = uv;
    }
    if (p->flags & PM_PRIM_COLOR) {
        float *c = pm__grow(a, p->colors, oc * 4 * sizeof(float), nc * 4 * sizeof(float));
        if (!c) return -1;
        p->colors = c;
    }
    p->vcap = (uint32_t)cap;
    return 0;
}

static int pm__prim_reserve_i(pm_arena *a, pm_prim *p, uint32_t need, bool exact) {
    if (need <= p->icap) return 0;
    uint64_t cap = exact ? need : (p->icap ? p->icap : 48);
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    if (cap < need) return -1;
    uint32_t *idx = pm__grow(a, p->indices, (size_t)p->icap * sizeof(uint32_t), (size_t)cap * sizeof(uint32_t));
    if (!idx) return -1;
    p->indices = idx;
    p->icap = (uint32_t)cap;
    return 0;
}

pm_prim *pm_scene_add_prim(pm_scene *s, const char *name, const char *material,
                           unsigned flags, uint32_t vreserve, uint32_t ireserve) {
    if (s->nprims == s->prims_cap) {
        uint32_t cap = s->prims_cap ? s->prims_cap * 2 : 4;
        pm_prim *np = pm__grow(s->arena, s->prims, s->prims_cap * sizeof(pm_prim), cap * sizeof(pm_prim));
        if (!np) return NULL;
        s->prims = np;
        s->prims_cap = cap;
    }
    s->validated = false;
    pm_prim *p = &s->prims[s->nprims];
    memset(p, 0, sizeof *p);
    p->name = pm_arena_strdup(s->arena, name);
    p->material = pm_arena_strdup(s->arena, material);
    p->flags = flags;
    if (!p->name || !p->material) return NULL;
    if (pm__prim_reserve_v(s->arena, p, vreserve ? vreserve : 16, false) < 0) return NULL;
    if (pm__prim_reserve_i(s->arena, p, ireserve ? ireserve : 48, false) < 0) return NULL;
    s->nprims++;
    return p;
}

/* n bytes of src copied into a (NULL src: NULL, not a failure). */
static bool pm__dup(pm_arena *a, const void *src, size_t n, void **out) {
    *out = NULL;
    if (!src) return true;
    *out = pm_arena_alloc(a, n);
    if (*out) memcpy(*out, src, n);
    return *out != NULL;
}

static bool pm__copy_prim(pm_arena *a, pm_prim *d, const pm_prim *p) {
    size_t nv = p->vcount;
    *d = (pm_prim){.flags = p->flags, .vcount = p->vcount, .vcap = p->vcount, .icount = p->icount,
                   .icap = p->icount, .normals_unit = p->normals_unit};
    memcpy(d->pos_min, p->pos_min, sizeof d->pos_min);   /* with the validated flag */
    memcpy(d->pos_max, p->pos_max, sizeof d->pos_max);
    bool measured = p->bounds_of && p->bounds_of == p->positions;
    d->name = pm_arena_strdup(a, p->name);
    d->material = pm_arena_strdup(a, p->material);
    if (!d->name || !d->material || (p->mesh && !(d->mesh = pm_arena_strdup(a, p->mesh)))) return false;
    if (!pm__dup(a, p->positions, 3 * nv * sizeof(float), (void **)&d->positions)) return false;
    d->bounds_of = measured ? d->positions : NULL;
    return pm__dup(a, p->normals, 3 * nv * sizeof(float), (void **)&d->normals) &&
           pm__dup(a, p->uvs, 2 * nv * sizeof(float), (void **)&d->uvs) &&
           pm__dup(a, p->colors, 4 * nv * sizeof(float), (void **)&d->colors) &&
           pm__dup(a, p->indices, (size_t)p->icount * sizeof(uint32_t), (void **)&d->indices);
}

static bool pm__copy_props(pm_arena *a, pm_props *d, const pm_props *p) {
    size_t n = p->count;
    *d = (pm_props){.count = p->count, .cap = p->count};
    d->name = pm_arena_strdup(a, p->name);
    return d->name && pm__dup(a, p->translations, 3 * n * sizeof(float), (void **)&d->translations) &&
           pm__dup(a, p->rotations, 4 * n * sizeof(float), (void **)&d->rotations) &&
           pm__dup(a, p->scales, 3 * n * sizeof(float), (void **)&d->scales);
}

pm_scene *pm_scene_copy(pm_arena *a, const pm_scene *src) {
    pm_scene *s = pm_arena_calloc(a, 1, sizeof *s);
    if (!s) return NULL;
    s->arena = a;
    s->meta = pm_meta_copy(a, src->meta);
    s->prims = pm_arena_alloc(a, (src->nprims ? src->nprims : 1) * sizeof *s->prims);
    s->props = pm_arena_alloc(a, (src->nprops ? src->nprops : 1) * sizeof *s->props);
    if (!s->meta || !s->prims || !s->props) return NULL;
    s->nprims = s->prims_cap = src->nprims;
    s->nprops = s->props_cap = src->nprops;
    for (uint32_t i = 0; i < src->nprims; i++)
        if (!pm__copy_prim(a, &s->prims[i], &src->prims[i])) return NULL;
    for (uint32_t i = 0; i < src->nprops; i++)
        if (!pm__copy_props(a, &s->props[i], &src->props[i])) return NULL;
    s->validated = src->validated;
    return s;
}

int pm_prim_set_mesh(pm_scene *s, pm_prim *p, const char *mesh) {
    p->mesh = pm_arena_strdup(s->arena, mesh);
    return p->mesh ? 0 : -1;
}

int64_t pm__prim_add_vertex_grow(pm_scene *s, pm_prim *p, const float pos[3], const float n[3],
                                 const float uv[2], const float rgba[4]) {
    s->validated = false;
    if (p->vcount >= UINT32_MAX - 1) return -1;
    if (p->vcount == p->vcap && pm__prim_reserve_v(s->arena, p, p->vcount + 1, false) < 0) return -1;
    return pm_prim_add_vertex(s, p, pos, n, uv, rgba);
}

int pm__prim_add_tri_grow(pm_scene *s, pm_prim *p, uint32_t a, uint32_t b, uint32_t c) {
    s->validated = false;
    if (p->icount > UINT32_MAX - 3) return -1;
    if (p->icount + 3 > p->icap && pm__prim_reserve_i(s->arena, p, p->icount + 3, false) < 0) return -1;
    return pm_prim_add_tri(s, p, a, b, c);
}

int pm_prim_reserve(pm_scene *s, pm_prim *p, uint32_t vcount, uint32_t icount) {
    if (vcount > UINT32_MAX - 1) return -1;
    if (pm__prim_reserve_v(s->arena, p, vcount, true) < 0) return -1;
    return pm__prim_reserve_i(s->arena, p, icount, true);
}

/* A late array (flag) of p taken now: comps floats per vertex of its
 * capacity, the flag cleared. 0 (also when p has no such flag), or -1
 * when out of memory. */
static int pm__late_array(pm_scene *s, pm_prim *p, unsigned flag, float **arr, size_t comps) {
    if (!(p->flags & flag)) return 0;
    *arr = pm_arena_alloc(s->arena, (size_t)p->vcap * comps * sizeof(float));
    if (!*arr) return -1;
    p->flags &= ~flag;
    s->validated = false;
    return 0;
}

int pm_prim_late_normals(pm_scene *s, pm_prim *p) {
    bool late = p->flags & PM_PRIM_LATE_NORMALS;
    if (pm__late_array(s, p, PM_PRIM_LATE_NORMALS, &p->normals, 3)) return -1;
    if (late) p->normals_unit = false;
    return 0;
}

int pm_prim_late_uvs(pm_scene *s, pm_prim *p) {
    return pm__late_array(s, p, PM_PRIM_LATE_UVS, &p->uvs, 2);
}

int64_t pm_prim_append(pm_scene *s, pm_prim *dst, const pm_prim *src) {
    uint32_t off = dst->vcount, nv = src->vcount, ni = src->icount;
    if (nv > UINT32_MAX - 1 - off || ni > UINT32_MAX - dst->icount) return -1;
    if (off + nv > dst->vcap && pm__prim_reserve_v(s->arena, dst, off + nv, false) < 0) return -1;
    if (dst->icount + ni > dst->icap && pm__prim_reserve_i(s->arena, dst, dst->icount + ni, false) < 0)
        return -1;
    s->validated = false;
    dst->normals_unit = false;
    size_t o = off, n = nv;
    if (n) {
        memcpy(dst->positions + 3 * o, src->positions, 3 * n * sizeof(float));
        if (dst->normals) memset(dst->normals + 3 * o, 0, 3 * n * sizeof(float));
        if (dst->uvs && src->uvs) memcpy(dst->uvs + 2 * o, src->uvs, 2 * n * sizeof(float));
        else if (dst->uvs) memset(dst->uvs + 2 * o, 0, 2 * n * sizeof(float));
        if (dst->colors) memset(dst->colors + 4 * o, 0, 4 * n * sizeof(float));
    }
    /* restrict: the two arrays never overlap, so the loop vectorizes. */
    uint32_t *restrict d = dst->indices + dst->icount;
    const uint32_t *restrict si = src->indices;
    for (uint32_t i = 0; i < ni; i++) d[i] = si[i] + off;
    dst->vcount = off + nv;
    dst->icount += ni - ni % 3;
    return off;
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
    s->validated = false;
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
    s->validated = false;
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

/* ---- the contract (pm_scene_validate) ----
 * The loops run to the end without branching on the data, so the compiler
 * vectorizes them: they go at memory speed. */

/* Eight lanes of independent work per step: with no trip count known,
 * -O2 vectorizes only straight-line code like this body. */
#define PM__LANES 8

/* The passes below also in an AVX2 build picked at load time: the same
 * loops (integer masks and compares, and each normal's float products and
 * sums in the same order: -ffp-contract=off and no FMA target, so every
 * element's result is bit for bit the default build's), 8 lanes to an
 * instruction instead of 4. Not under ASan (its ifunc resolvers run too
 * early). tests/core/test_scene.c checks them against a plain reference on
 * random scenes with bad values injected anywhere. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PM__CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PM__CLONES
#endif

/* Bit 31 of a float's exponent bits plus one exponent step is set exactly
 * when the exponent is all ones (infinite or NaN): OR-ed over the array it
 * takes no compare and no branch. */
static inline uint32_t pm__nonfinite_bit(const float *f) {
    uint32_t b;
    memcpy(&b, f, sizeof b);
    return (b & 0x7f800000u) + 0x00800000u;
}

/* Eight 32-bit lanes (one AVX2 register, two SSE2 ones), two to a step. */
typedef uint32_t pm__v8u __attribute__((vector_size(32)));

/* A float's exponent bits, and the least exponent step, in each lane:
 * ((bits & mask) + one) has its top bit set exactly for an Inf or NaN. */
#define PM__V8_EXP_MASK {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u, \
                         0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u}
#define PM__V8_EXP_ONE {0x00800000u, 0x00800000u, 0x00800000u, 0x00800000u, \
                        0x00800000u, 0x00800000u, 0x00800000u, 0x00800000u}

PM__CLONES static bool pm__finite(const float *v, size_t n) {
    const pm__v8u m = PM__V8_EXP_MASK, e = PM__V8_EXP_ONE;
    pm__v8u acc = {0};
    uint32_t any = 0;
    size_t i = 0;
    for (; i + 2 * PM__LANES <= n; i += 2 * PM__LANES) {
        pm__v8u x, y;
        memcpy(&x, v + i, sizeof x);
        memcpy(&y, v + i + PM__LANES, sizeof y);
        acc |= ((x & m) + e) | ((y & m) + e);
    }
    for (; i < n; i++) any |= pm__nonfinite_bit(v + i);
    for (int k = 0; k < PM__LANES; k++) any |= acc[k];
    return !(any & 0x80000000u);
}

typedef float pm__v8f __attribute__((vector_size(32)));
typedef int32_t pm__v8i __attribute__((vector_size(32)));

/* a where take_a is all ones, else b: MINPS / MAXPS on numbers. A macro:
 * a function passing 32-byte vectors would change the ABI by target. */
#define pm__v8_pick(a, b, take_a) \
    ((pm__v8f)(((pm__v8i)(a) & (take_a)) | ((pm__v8i)(b) & ~(take_a))))

/* pm__finite over the n xyz points at p (3n floats), and in the same pass
 * their least and greatest coordinate per axis into lo and hi (eight
 * points a step: three vectors, lane j of vector q on axis (8q + j) % 3).
 * Numbers have one least and one greatest value but for the sign of a
 * zero, which the caller settles (pm__first_zero); with a NaN the bounds
 * mean nothing, and the answer is false. */
PM__CLONES static bool pm__finite_bounds3(const float *p, size_t n, float lo[3], float hi[3]) {
    const pm__v8u m = PM__V8_EXP_MASK, e = PM__V8_EXP_ONE;
    pm__v8u acc = {0};
    uint32_t any = 0;
    for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
    size_t i = 0;
    if (n >= PM__LANES) {
        pm__v8f l[3], h[3];
        for (int q = 0; q < 3; q++) memcpy(&l[q], p + PM__LANES * q, sizeof l[q]), h[q] = l[q];
        for (; i + PM__LANES <= n; i += PM__LANES) {   /* the three vectors spelt out */
            pm__v8f x0, x1, x2;
            memcpy(&x0, p + 3 * i, sizeof x0);
            memcpy(&x1, p + 3 * i + PM__LANES, sizeof x1);
            memcpy(&x2, p + 3 * i + 2 * PM__LANES, sizeof x2);
            acc |= (((pm__v8u)x0 & m) + e) | (((pm__v8u)x1 & m) + e) | (((pm__v8u)x2 & m) + e);
            l[0] = pm__v8_pick(x0, l[0], x0 < l[0]), h[0] = pm__v8_pick(x0, h[0], x0 > h[0]);
            l[1] = pm__v8_pick(x1, l[1], x1 < l[1]), h[1] = pm__v8_pick(x1, h[1], x1 > h[1]);
            l[2] = pm__v8_pick(x2, l[2], x2 < l[2]), h[2] = pm__v8_pick(x2, h[2], x2 > h[2]);
        }
        for (int q = 0; q < 3 * PM__LANES; q++) {
            int k = q % 3;
            float a = l[q / PM__LANES][q % PM__LANES], b = h[q / PM__LANES][q % PM__LANES];
            lo[k] = a < lo[k] ? a : lo[k];
            hi[k] = b > hi[k] ? b : hi[k];
        }
    }
    for (; i < n; i++)
        for (int k = 0; k < 3; k++) {
            float x = p[3 * i + k];
            any |= pm__nonfinite_bit(&x);
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    for (int k = 0; k < PM__LANES; k++) any |= acc[k];
    return !(any & 0x80000000u);
}

/* The first of p[k], p[k + 3], ... (n of them) that is zero, with its
 * sign: the zero a scalar pass keeps as a bound. */
static float pm__first_zero(const float *p, size_t n, int k) {
    for (size_t i = 0; i < n; i++)
        if (p[3 * i + k] == 0.0f) return p[3 * i + k];
    return 0.0f;
}

PM__CLONES static bool pm__indices_below(const uint32_t *idx, size_t count, uint32_t n) {
    const pm__v8u nv = {n, n, n, n, n, n, n, n};
    pm__v8u bad = {0};
    uint32_t any = 0;
    size_t i = 0;
    for (; i + 2 * PM__LANES <= count; i += 2 * PM__LANES) {
        pm__v8u x, y;
        memcpy(&x, idx + i, sizeof x);
        memcpy(&y, idx + i + PM__LANES, sizeof y);
        bad |= (pm__v8u)(x >= nv) | (pm__v8u)(y >= nv);   /* all ones where past */
    }
    for (; i < count; i++) any |= idx[i] >= n;
    for (int k = 0; k < PM__LANES; k++) any |= bad[k];
    return !any;
}

static uint32_t pm__bad_normals(const pm_prim *p);

/* pm_prim_contract_ok (below), with p's position bounds found in the
 * positions' finiteness pass, and through *bad how many normals are not unit
 * length. Unit-length normals are finite (an infinite or NaN component
 * makes the squared length infinite or NaN), so the normals' own finite
 * check runs only when some are not: the same verdict, one pass fewer;
 * normals that pm_prim_compute_normals wrote (normals_unit) are unit
 * without measuring them. */
static bool pm__contract(pm_prim *p, uint32_t *bad) {
    *bad = 0;
    if (p->icount % 3 != 0) return false;
    uint32_t n = p->vcount;
    if (!pm__indices_below(p->indices, p->icount, n) ||
        !pm__finite_bounds3(p->positions, n, p->pos_min, p->pos_max))
        return false;
    p->bounds_of = p->positions;
    for (int k = 0; k < 3; k++) {   /* which zero, as the scalar pass keeps it */
        if (p->pos_min[k] == 0.0f) p->pos_min[k] = pm__first_zero(p->positions, n, k);
        if (p->pos_max[k] == 0.0f) p->pos_max[k] = pm__first_zero(p->positions, n, k);
    }
    *bad = p->normals_unit ? 0 : pm__bad_normals(p);
    return (*bad == 0 || pm__finite(p->normals, 3 * (size_t)n)) &&
           (!p->uvs || pm__finite(p->uvs, 2 * (size_t)n)) && (!p->colors || pm__finite(p->colors, 4 * (size_t)n));
}

bool pm_prim_contract_ok(const pm_prim *p) {
    if (p->icount % 3 != 0) return false;
    uint32_t n = p->vcount;
    return pm__indices_below(p->indices, p->icount, n) && pm__finite(p->positions, 3 * (size_t)n) &&
           pm__finite(p->normals, 3 * (size_t)n) && (!p->uvs || pm__finite(p->uvs, 2 * (size_t)n)) &&
           (!p->colors || pm__finite(p->colors, 4 * (size_t)n));
}

bool pm_props_finite(const pm_props *p) {
    size_t n = p->count;
    return pm__finite(p->translations, 3 * n) && pm__finite(p->rotations, 4 * n) &&
           pm__finite(p->scales, 3 * n);
}

bool pm_normal_is_unit(const float n[3]) {
    float l2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    return fabsf(l2 - 1.0f) <= 1e-4f;
}

void pm_normal_fix(float v[3]) {
    double l = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
    if (l > 1e-12) {
        for (int k = 0; k < 3; k++) v[k] = (float)(v[k] / l);
    } else {
        v[0] = 0, v[1] = 1, v[2] = 0;
    }
}

float pm_color_clamp(float c) { return fminf(fmaxf(c, 0.0f), 1.0f); }

/* How many normals of p are not unit length (counted without branches). */
PM__CLONES static uint32_t pm__bad_normals(const pm_prim *p) {
    uint32_t bad = 0;
    for (uint32_t i = 0; i < p->vcount; i++) bad += !pm_normal_is_unit(p->normals + 3 * (size_t)i);
    return bad;
}

static bool pm__colors_in_range(const float *c, size_t n) {
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) bad |= !(c[i] >= 0 && c[i] <= 1);
    return !bad;
}

int pm_scene_validate(pm_scene *s) {
    s->validated = false;
    for (uint32_t i = 0; i < s->nprops; i++)
        if (!pm_props_finite(&s->props[i])) return -1;
    /* Which primitives have normals to fix (the first 64; the others are
     * counted again): the contract counts them anyway. */
    uint64_t fix = 0;
    for (uint32_t i = 0; i < s->nprims; i++) {
        uint32_t bad;
        if (!pm__contract(&s->prims[i], &bad)) return -1;
        if (bad && i < 64) fix |= (uint64_t)1 << i;
    }
    for (uint32_t i = 0; i < s->nprims; i++) {
        pm_prim *p = &s->prims[i];
        if (i < 64 ? (fix >> i & 1) != 0 : !p->normals_unit && pm__bad_normals(p) != 0)
            for (uint32_t v = 0; v < p->vcount; v++)
                if (!pm_normal_is_unit(p->normals + 3 * (size_t)v)) pm_normal_fix(p->normals + 3 * (size_t)v);
        size_t nc = 4 * (size_t)p->vcount;
        if (p->colors && !pm__colors_in_range(p->colors, nc))
            for (size_t k = 0; k < nc; k++) p->colors[k] = pm_color_clamp(p->colors[k]);
    }
    s->validated = true;
    return 0;
}
