#include "geom/geom.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <cglm/vec3.h>

#include "geom/predicates.h"

/* The AVX and AVX2 paths below, picked at run time where the CPU has them
 * (not under ASan: its checks do not see the vector loads). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define PM__NORM_AVX 1
#endif

/* ---- normals ------------------------------------------------------------ */

static void pm__normalize_or_up(float *n) {
    double x = n[0], y = n[1], z = n[2];
    double len = sqrt(x * x + y * y + z * z);
    if (!(len > 0.0) || !isfinite(len)) {
        n[0] = 0.0f, n[1] = 1.0f, n[2] = 0.0f;
        return;
    }
    n[0] = (float)(x / len), n[1] = (float)(y / len), n[2] = (float)(z / len);
}

/* Whether some triangle's face cross has a y that rounds to a negative
 * float (faces down): pm_face_cross's y, (b - a).z (c - a).x - (b - a).x
 * (c - a).z in double. The AVX2 path takes four triangles at a time
 * (corners widened to double, then each lane the scalar
 * operations in their order, so the same signs); tests/core/test_geom.c
 * compares the paths on random triangles. */
#if PM__NORM_AVX
/* Four triangles (the corners' x and z in lanes, widened to double): the
 * cross's y in double, then rounded to float: the lanes whose float is
 * negative. */
__attribute__((target("avx2"))) static inline int pm__face_down4(__m128 ax, __m128 az, __m128 bx, __m128 bz,
                                                                  __m128 cx, __m128 cz) {
    __m256d Ax = _mm256_cvtps_pd(ax), Az = _mm256_cvtps_pd(az);
    __m256d u0 = _mm256_sub_pd(_mm256_cvtps_pd(bx), Ax), u2 = _mm256_sub_pd(_mm256_cvtps_pd(bz), Az);
    __m256d v0 = _mm256_sub_pd(_mm256_cvtps_pd(cx), Ax), v2 = _mm256_sub_pd(_mm256_cvtps_pd(cz), Az);
    __m128 y = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_mul_pd(u2, v0), _mm256_mul_pd(u0, v2)));
    return _mm_movemask_ps(_mm_cmplt_ps(y, _mm_setzero_ps()));
}

/* The x and z of corner k of four triangles (tri, tri + 3, ..., corners
 * into pos) in lanes: eight scalar loads. (Loads, not AVX2 gathers: a
 * gather of eight floats costs about 30 cycles on the AMD hosts this
 * runs on, three times the loads and inserts.) */
__attribute__((target("avx2"), always_inline)) static inline void pm__xz4(const float *pos, const uint32_t *tri,
                                                                          __m128 *x, __m128 *z) {
    const float *p0 = pos + 3 * (size_t)tri[0], *p1 = pos + 3 * (size_t)tri[3];
    const float *p2 = pos + 3 * (size_t)tri[6], *p3 = pos + 3 * (size_t)tri[9];
    *x = _mm_setr_ps(p0[0], p1[0], p2[0], p3[0]);
    *z = _mm_setr_ps(p0[2], p1[2], p2[2], p3[2]);
}

/* The x, y and z of corner k of four triangles (as pm__xz4) in v[0 .. 3). */
__attribute__((target("avx2"), always_inline)) static inline void pm__xyz4(const float *pos, const uint32_t *tri,
                                                                           __m128 v[3]) {
    const float *p0 = pos + 3 * (size_t)tri[0], *p1 = pos + 3 * (size_t)tri[3];
    const float *p2 = pos + 3 * (size_t)tri[6], *p3 = pos + 3 * (size_t)tri[9];
    for (int k = 0; k < 3; k++) v[k] = _mm_setr_ps(p0[k], p1[k], p2[k], p3[k]);
}

/* Four triangles at a time: their corners' x and z (pm__xz4), then
 * pm__face_down4. */
__attribute__((target("avx2"))) static uint32_t pm__face_down_avx2(const float *pos, const uint32_t *ix, uint32_t nt,
                                                                   bool *down) {
    uint32_t t = 0;
    for (; t + 4 <= nt; t += 4) {
        const uint32_t *q = ix + 3 * (size_t)t;
        __m128 ax, az, bx, bz, cx, cz;
        pm__xz4(pos, q, &ax, &az);
        pm__xz4(pos, q + 1, &bx, &bz);
        pm__xz4(pos, q + 2, &cx, &cz);
        if (pm__face_down4(ax, az, bx, bz, cx, cz)) {
            *down = true;
            return t;
        }
    }
    return t;
}
#endif

int pm__any_face_down(const float *pos, const uint32_t *ix, uint32_t nt, int path) {
    int best = 0;
#if PM__NORM_AVX
    if (__builtin_cpu_supports("avx2")) best = 1;
#endif
    if (path > best) return -1;
    if (path < 0) path = best;
    uint32_t t = 0;
    bool down = false;
#if PM__NORM_AVX
    if (path == 1) t = pm__face_down_avx2(pos, ix, nt, &down);
#endif
    for (; t < nt && !down; t++) {
        const uint32_t *tri = ix + 3 * (size_t)t;
        double c[3];
        pm_face_cross(pos, tri[0], tri[1], tri[2], c);
        down = (float)c[1] < 0.0f;
    }
    return down;
}

/* The flat case of pm_prim_compute_normals, bit for bit: every position at
 * one height makes each face's cross (0, c, 0) with x and z a signed zero
 * (a difference of equal floats is +0), so the sums' x and z are +0
 * (+0 + -0 is +0) and only the y sums need adding: a vertex's normal is
 * (0, y / |y|, 0), or +Y where the sum is 0 or not finite. When no face
 * has c < 0 every y sum is >= 0 (+inf at most, never NaN), so every normal
 * is (0, 1, 0) and nothing needs summing at all (a network's asphalt and
 * sidewalk tops). False, nothing written, when the primitive is not flat. */
#if PM__NORM_AVX
/* Whether the first vertices' heights are all y (== as floats), eight at
 * a time (their 24 floats in three loads, the heights' lanes picked by
 * mask); returns how many it checked, or UINT32_MAX when one is not. */
__attribute__((target("avx"))) static uint32_t pm__at_height_avx(const float *pos, uint32_t n, float y) {
    const __m256 h = _mm256_set1_ps(y);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float *q = pos + 3 * (size_t)i;
        int e0 = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(q), h, _CMP_EQ_OQ));
        int e1 = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(q + 8), h, _CMP_EQ_OQ));
        int e2 = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(q + 16), h, _CMP_EQ_OQ));
        if ((e0 & 0x92) != 0x92 || (e1 & 0x24) != 0x24 || (e2 & 0x49) != 0x49) return UINT32_MAX;
    }
    return i;
}
#endif

static bool pm__flat_normals(pm_prim *p) {
    const float *pos = p->positions;
    float *n = p->normals;
    if (p->vcount == 0) return true;
    float y = pos[1];
    if (y != y) return false;
    uint32_t v = 1;
#if PM__NORM_AVX
    if (__builtin_cpu_supports("avx") && (v = pm__at_height_avx(pos, p->vcount, y)) == UINT32_MAX) return false;
#endif
    for (; v < p->vcount; v++)
        if (pos[3 * (size_t)v + 1] != y) return false;
    bool down = pm__any_face_down(pos, p->indices, p->icount / 3, -1) != 0;
    if (!down) {
        for (uint32_t i = 0; i < p->vcount; i++) {
            float *m = n + 3 * (size_t)i;
            m[0] = 0.0f, m[1] = 1.0f, m[2] = 0.0f;
        }
        return true;
    }
    memset(n, 0, (size_t)p->vcount * 3 * sizeof *n);
    for (uint32_t t = 0; t < p->icount; t += 3) {
        const uint32_t *tri = p->indices + t;
        double c[3];
        pm_face_cross(pos, tri[0], tri[1], tri[2], c);
        float cy = (float)c[1];
        n[3 * (size_t)tri[0] + 1] += cy;
        n[3 * (size_t)tri[1] + 1] += cy;
        n[3 * (size_t)tri[2] + 1] += cy;
    }
    for (uint32_t i = 0; i < p->vcount; i++) pm__normalize_or_up(n + 3 * (size_t)i);
    return true;
}

void pm_prim_compute_normals(pm_prim *p) {
    assert(p && p->icount % 3 == 0);
    /* Every normal written here is unit length: (0, 1, 0), (0, +-1, 0), or
     * a vector over its length rounded to floats (each component within
     * 2^-24 of the exact one, so the squared length within ~4e-7 of 1,
     * far inside pm_normal_is_unit's 1e-4). pm_scene_validate trusts it. */
    if (pm__flat_normals(p)) {
        p->normals_unit = true;
        return;
    }
    if (p->vcount) memset(p->normals, 0, (size_t)p->vcount * 3 * sizeof(float));
    pm_prim_normals_finish(p, 0);
}

#if PM__NORM_AVX
/* Four lanes of pm_face_cross (corners' floats widened to double, each
 * lane the scalar operations in their order), rounded to floats into
 * f[0 .. 4), f[8 ..), f[16 ..) (x, y, z). */
__attribute__((target("avx2"), always_inline)) static inline void pm__cross4(const __m128 a[3], const __m128 b[3],
                                                                             const __m128 c[3], float *f) {
    __m256d A[3], u[3], v[3];
    for (int k = 0; k < 3; k++) {
        A[k] = _mm256_cvtps_pd(a[k]);
        u[k] = _mm256_sub_pd(_mm256_cvtps_pd(b[k]), A[k]);
        v[k] = _mm256_sub_pd(_mm256_cvtps_pd(c[k]), A[k]);
    }
    _mm_storeu_ps(f, _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_mul_pd(u[1], v[2]), _mm256_mul_pd(u[2], v[1]))));
    _mm_storeu_ps(f + 8, _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_mul_pd(u[2], v[0]), _mm256_mul_pd(u[0], v[2]))));
    _mm_storeu_ps(f + 16, _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_mul_pd(u[0], v[1]), _mm256_mul_pd(u[1], v[0]))));
}

/* pm__normals_sum eight triangles at a time: their corners' x, y and z
 * in lanes (pm__xyz4, loads as pm__xz4), the eight face crosses in lanes
 * (pm__cross4), then added to the vertices one triangle after another as
 * pm_prim_normals_add adds them (the same sums in the same order);
 * returns the next triangle. */
__attribute__((target("avx2"))) static uint32_t pm__normals_sum_avx2(pm_prim *p, uint32_t t0, uint32_t t1) {
    const float *pos = p->positions;
    float *nrm = p->normals;
    uint32_t t = t0;
    for (; t + 8 <= t1; t += 8) {
        const uint32_t *ix = p->indices + 3 * (size_t)t;
        float f[24];
        __m128 lo[3][3], hi[3][3];
        for (int j = 0; j < 3; j++) {
            pm__xyz4(pos, ix + j, lo[j]);
            pm__xyz4(pos, ix + 12 + j, hi[j]);
        }
        pm__cross4(lo[0], lo[1], lo[2], f);
        pm__cross4(hi[0], hi[1], hi[2], f + 4);
        for (int i = 0; i < 8; i++) {
            const float fx = f[i], fy = f[8 + i], fz = f[16 + i];
            for (int k = 0; k < 3; k++) {
                float *n = nrm + 3 * (size_t)ix[3 * i + k];
                n[0] = n[0] + fx;
                n[1] = n[1] + fy;
                n[2] = n[2] + fz;
            }
        }
    }
    return t;
}
#endif

int pm__normals_sum(pm_prim *p, uint32_t t0, uint32_t t1, int path) {
    assert(p && t0 <= t1 && t1 <= p->icount / 3);
    int best = 0;
#if PM__NORM_AVX
    if (__builtin_cpu_supports("avx2")) best = 1;
#endif
    if (path > best) return -1;
    if (path < 0) path = best;
    uint32_t t = t0;
#if PM__NORM_AVX
    if (path == 1) t = pm__normals_sum_avx2(p, t0, t1);
#endif
    for (; t < t1; t++) {
        const uint32_t *tri = p->indices + 3 * (size_t)t;
        assert(tri[0] < p->vcount && tri[1] < p->vcount && tri[2] < p->vcount);
        double c[3];
        pm_face_cross(p->positions, tri[0], tri[1], tri[2], c);
        pm_prim_normals_add(p, tri[0], tri[1], tri[2], c);
    }
    return 0;
}

void pm_prim_normals_sum(pm_prim *p, uint32_t t0, uint32_t t1) { pm__normals_sum(p, t0, t1, -1); }

/* pm__normalize_or_up over many normals, eight at a time with AVX2: their
 * 24 floats in three loads, dealt into x, y and z by lane permutes and
 * blends (as the flat test's heights and the stitch's planar UVs), then
 * each lane does the scalar code's operations in its order (widen to
 * double, x x + y y, + z z, IEEE sqrt, divide, round to float;
 * -ffp-contract=off, no FMA), so the same bits; a lane whose length is 0
 * or not finite takes +Y; then dealt back and stored in three.
 * tests/core/test_geom.c compares both paths on random sums, zeros and
 * non-finite ones included. */
#if PM__NORM_AVX
/* Four lanes of x, y, z (floats) normalized as the scalar code does: the
 * results into *x, *y, *z, +Y where the length is 0 or not finite. */
__attribute__((target("avx2"))) static inline void pm__normalize4(__m128 *x, __m128 *y, __m128 *z) {
    const __m256d zero = _mm256_setzero_pd(), big = _mm256_set1_pd(DBL_MAX), one = _mm256_set1_pd(1.0);
    __m256d dx = _mm256_cvtps_pd(*x), dy = _mm256_cvtps_pd(*y), dz = _mm256_cvtps_pd(*z);
    __m256d len = _mm256_sqrt_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)),
                                               _mm256_mul_pd(dz, dz)));
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(len, zero, _CMP_GT_OQ), _mm256_cmp_pd(len, big, _CMP_LE_OQ));
    /* (The mask narrowed to four float lanes: 1.0 where good, 0.0 not.) */
    __m128 good = _mm_cmpeq_ps(_mm256_cvtpd_ps(_mm256_and_pd(ok, one)), _mm_set1_ps(1.0f));
    *x = _mm_and_ps(good, _mm256_cvtpd_ps(_mm256_div_pd(dx, len)));
    *y = _mm_blendv_ps(_mm_set1_ps(1.0f), _mm256_cvtpd_ps(_mm256_div_pd(dy, len)), good);
    *z = _mm_and_ps(good, _mm256_cvtpd_ps(_mm256_div_pd(dz, len)));
}

__attribute__((target("avx2"))) static uint32_t pm__normalize_avx2(float *n, uint32_t count) {
    /* Floats 0-7: x0 y0 z0 x1 y1 z1 x2 y2, 8-15: z2 x3 y3 z3 x4 y4 z4 x5,
     * 16-23: y5 z5 x6 y6 z6 x7 y7 z7. In: lane i of x, y, z picked from
     * the three loads; out: float j of each store from lane i of x, y, z. */
    const __m256i xa = _mm256_setr_epi32(0, 3, 6, 0, 0, 0, 0, 0), xb = _mm256_setr_epi32(0, 0, 0, 1, 4, 7, 0, 0);
    const __m256i xc = _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 2, 5), ya = _mm256_setr_epi32(1, 4, 7, 0, 0, 0, 0, 0);
    const __m256i yb = _mm256_setr_epi32(0, 0, 0, 2, 5, 0, 0, 0), yc = _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 3, 6);
    const __m256i za = _mm256_setr_epi32(2, 5, 0, 0, 0, 0, 0, 0), zb = _mm256_setr_epi32(0, 0, 0, 3, 6, 0, 0, 0);
    const __m256i zc = _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 4, 7);
    const __m256i o0x = _mm256_setr_epi32(0, 0, 0, 1, 0, 0, 2, 0), o0y = _mm256_setr_epi32(0, 0, 0, 0, 1, 0, 0, 2);
    const __m256i o0z = _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 0, 0), o1x = _mm256_setr_epi32(0, 3, 0, 0, 4, 0, 0, 5);
    const __m256i o1y = _mm256_setr_epi32(0, 0, 3, 0, 0, 4, 0, 0), o1z = _mm256_setr_epi32(2, 0, 0, 3, 0, 0, 4, 0);
    const __m256i o2x = _mm256_setr_epi32(0, 0, 6, 0, 0, 7, 0, 0), o2y = _mm256_setr_epi32(5, 0, 0, 6, 0, 0, 7, 0);
    const __m256i o2z = _mm256_setr_epi32(0, 5, 0, 0, 6, 0, 0, 7);
    uint32_t i = 0;
    for (; i + 8 <= count; i += 8) {
        float *q = n + 3 * (size_t)i;
        __m256 a = _mm256_loadu_ps(q), b = _mm256_loadu_ps(q + 8), c = _mm256_loadu_ps(q + 16);
        /* (x: lanes 0-2 from a, 3-5 from b, 6-7 from c; y: 0-2, 3-4, 5-7; z: 0-1, 2-4, 5-7.) */
        __m256 x = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, xa), _mm256_permutevar8x32_ps(b, xb), 0x38),
                                   _mm256_permutevar8x32_ps(c, xc), 0xC0);
        __m256 y = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, ya), _mm256_permutevar8x32_ps(b, yb), 0x18),
                                   _mm256_permutevar8x32_ps(c, yc), 0xE0);
        __m256 z = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, za), _mm256_permutevar8x32_ps(b, zb), 0x1C),
                                   _mm256_permutevar8x32_ps(c, zc), 0xE0);
        __m128 x0 = _mm256_castps256_ps128(x), y0 = _mm256_castps256_ps128(y), z0 = _mm256_castps256_ps128(z);
        __m128 x1 = _mm256_extractf128_ps(x, 1), y1 = _mm256_extractf128_ps(y, 1), z1 = _mm256_extractf128_ps(z, 1);
        pm__normalize4(&x0, &y0, &z0);
        pm__normalize4(&x1, &y1, &z1);
        x = _mm256_set_m128(x1, x0), y = _mm256_set_m128(y1, y0), z = _mm256_set_m128(z1, z0);
        /* (Store 0: x at floats 0, 3, 6, y at 1, 4, 7, z at 2, 5; store 1: z
         * at 0, 3, 6, x at 1, 4, 7, y at 2, 5; store 2: y at 0, 3, 6, z at
         * 1, 4, 7, x at 2, 5.) */
        _mm256_storeu_ps(q, _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(x, o0x),
                                                            _mm256_permutevar8x32_ps(y, o0y), 0x92),
                                            _mm256_permutevar8x32_ps(z, o0z), 0x24));
        _mm256_storeu_ps(q + 8, _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(z, o1z),
                                                                _mm256_permutevar8x32_ps(x, o1x), 0x92),
                                                _mm256_permutevar8x32_ps(y, o1y), 0x24));
        _mm256_storeu_ps(q + 16, _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(y, o2y),
                                                                 _mm256_permutevar8x32_ps(z, o2z), 0x92),
                                                 _mm256_permutevar8x32_ps(x, o2x), 0x24));
    }
    return i;
}
#endif

int pm__normalize_all(float *n, uint32_t count, int path) {
    uint32_t i = 0;
    int best = 0;
#if PM__NORM_AVX
    if (__builtin_cpu_supports("avx2")) best = 1;
#endif
    if (path > best) return -1;
    if (path < 0) path = best;
#if PM__NORM_AVX
    if (path == 1) i = pm__normalize_avx2(n, count);
#endif
    for (; i < count; i++) pm__normalize_or_up(n + 3 * (size_t)i);
    return 0;
}

void pm_prim_normals_finish(pm_prim *p, uint32_t t0) {
    assert(p && p->icount % 3 == 0 && t0 <= p->icount / 3);
    p->normals_unit = true;   /* (see pm_prim_compute_normals) */
    pm_prim_normals_sum(p, t0, p->icount / 3);
    pm__normalize_all(p->normals, p->vcount, -1);
}

/* ---- bounds ------------------------------------------------------------- */

/* Widens min/max by the positions of p. */
static void pm__extend_bounds(const pm_prim *p, float min[3], float max[3]) {
    for (uint32_t i = 0; i < p->vcount; i++) {
        float *v = p->positions + 3 * (size_t)i;
        glm_vec3_minv(v, min, min);   /* v < min ? v : min, per coordinate */
        glm_vec3_maxv(v, max, max);
    }
}

bool pm_prim_bounds(const pm_prim *p, float min[3], float max[3]) {
    assert(p && min && max);
    if (p->vcount == 0) return false;
    memcpy(min, p->positions, 3 * sizeof(float));
    memcpy(max, p->positions, 3 * sizeof(float));
    pm__extend_bounds(p, min, max);
    return true;
}

bool pm_scene_bounds(const pm_scene *s, float min[3], float max[3]) {
    assert(s && min && max);
    bool any = false;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *p = &s->prims[i];
        if (p->vcount == 0) continue;
        if (!any) {
            memcpy(min, p->positions, 3 * sizeof(float));
            memcpy(max, p->positions, 3 * sizeof(float));
            any = true;
        }
        pm__extend_bounds(p, min, max);
    }
    return any;
}

/* ---- snapping ----------------------------------------------------------- */

void pm_prim_snap(pm_prim *p, double grid) {
    assert(p && grid > 0.0 && isfinite(grid));
    for (size_t i = 0; i < (size_t)p->vcount * 3; i++)
        p->positions[i] = (float)pm_snap(p->positions[i], grid);
}

/* ---- welding ------------------------------------------------------------ */

/* Attribute arrays of a primitive, with their float counts per vertex. */
typedef struct pm__attr { float *data; int width; } pm__attr;

static int pm__attrs(pm_prim *p, pm__attr out[4]) {
    int n = 0;
    out[n++] = (pm__attr){p->positions, 3};
    out[n++] = (pm__attr){p->normals, 3};
    if (p->uvs) out[n++] = (pm__attr){p->uvs, 2};
    if (p->colors) out[n++] = (pm__attr){p->colors, 4};
    return n;
}

static uint64_t pm__mix(uint64_t h, uint32_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static uint64_t pm__vertex_hash(const pm__attr *at, int na, uint32_t v) {
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int k = 0; k < na; k++) {
        const float *f = at[k].data + (size_t)v * (size_t)at[k].width;
        for (int j = 0; j < at[k].width; j++) {
            uint32_t bits;
            memcpy(&bits, f + j, sizeof bits);
            h = pm__mix(h, bits);
        }
    }
    return h;
}

static bool pm__vertex_equal(const pm__attr *at, int na, uint32_t u, uint32_t v) {
    for (int k = 0; k < na; k++) {
        size_t w = (size_t)at[k].width;
        if (memcmp(at[k].data + u * w, at[k].data + v * w, w * sizeof(float)) != 0) return false;
    }
    return true;
}

static void pm__vertex_move(const pm__attr *at, int na, uint32_t to, uint32_t from) {
    for (int k = 0; k < na; k++) {
        size_t w = (size_t)at[k].width;
        memmove(at[k].data + to * w, at[k].data + from * w, w * sizeof(float));
    }
}

int64_t pm_prim_weld(pm_arena *scratch, pm_prim *p) {
    assert(scratch && p);
    size_t cap = 16;
    while (cap < 2 * (size_t)p->vcount) cap *= 2;
    uint32_t *table = pm_arena_alloc(scratch, cap * sizeof *table);
    uint32_t *remap = pm_arena_alloc(scratch, ((size_t)p->vcount + 1) * sizeof *remap);
    if (!table || !remap) return -1;
    memset(table, 0xFF, cap * sizeof *table); /* UINT32_MAX: empty slot */
    pm__attr at[4];
    int na = pm__attrs(p, at);
    uint32_t n = 0;
    /* Kept vertices move down to slot n <= i, never over an unread one, so
     * the compaction happens in place in first-occurrence order. */
    for (uint32_t i = 0; i < p->vcount; i++) {
        size_t slot = (size_t)pm__vertex_hash(at, na, i) & (cap - 1);
        while (table[slot] != UINT32_MAX && !pm__vertex_equal(at, na, table[slot], i))
            slot = (slot + 1) & (cap - 1);
        if (table[slot] == UINT32_MAX) {
            pm__vertex_move(at, na, n, i);
            table[slot] = n++;
        }
        remap[i] = table[slot];
    }
    for (uint32_t t = 0; t < p->icount; t++) {
        assert(p->indices[t] < p->vcount);
        p->indices[t] = remap[p->indices[t]];
    }
    p->vcount = n;
    return n;
}

/* ---- degenerate triangles ----------------------------------------------- */

/* Exactly zero area in 3D: the cross product's components are the signed
 * areas of the three axis-plane projections, each decided exactly. */
static bool pm__tri_degenerate(const float *pos, const uint32_t *tri) {
    double v[3][3];
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) v[j][k] = pos[3 * (size_t)tri[j] + (size_t)k];
    for (int k = 0; k < 3; k++) {
        int u = (k + 1) % 3, w = (k + 2) % 3;
        double a[2] = {v[0][u], v[0][w]}, b[2] = {v[1][u], v[1][w]}, c[2] = {v[2][u], v[2][w]};
        if (pm_orient2d(a, b, c) != 0.0) return false;
    }
    return true;
}

uint32_t pm_prim_drop_degenerate(pm_prim *p) {
    assert(p && p->icount % 3 == 0);
    uint32_t kept = 0;
    for (uint32_t t = 0; t < p->icount; t += 3) {
        const uint32_t *tri = p->indices + t;
        assert(tri[0] < p->vcount && tri[1] < p->vcount && tri[2] < p->vcount);
        if (pm__tri_degenerate(p->positions, tri)) continue;
        memmove(p->indices + kept, tri, 3 * sizeof *tri);
        kept += 3;
    }
    uint32_t dropped = (p->icount - kept) / 3;
    p->icount = kept;
    return dropped;
}
