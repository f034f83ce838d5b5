/* Junctions built in their node's local frame and reused: on a grid most
 * junctions are one junction translated. Each is generated with its node at
 * the origin (arms, heights and merged nodes relative to it), and the
 * result is translated when it is placed; a node whose local parameters
 * are bit-identical to an earlier one's (same key bytes, compared in full)
 * takes that result. Reuse therefore gives exactly the bytes a fresh build
 * would: the output does not depend on which node came first. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PM__JC_AVX 1
#else
#define PM__JC_AVX 0
#endif
#ifndef PM__JCACHE_PLAIN
#define PM__JCACHE_PLAIN false   /* tests: true for the plain loops only */
#endif

#include "network/network_internal.h"
#include "geom/predicates.h"
#include "scene/result.h"

/* The triangles (prim, first index) whose orientation is not clear of its
 * slack when corners move by up to d = 2^(ex - 24): the only ones
 * pm__keeps_orientation tests exactly at that d. */
typedef struct pm__jdoubt {
    int ex;
    uint32_t n;
    uint32_t (*tri)[2];
} pm__jdoubt;

/* One local result: the key it was built from and what the generator said. */
typedef struct pm__jentry {
    uint64_t hash;
    const uint64_t *key;
    size_t nkey;
    size_t narms;              /* d.slab_ends holds 2 per arm */
    int rc;
    pm_junction_diag d;        /* warnings and slab ends in the local frame (in N->a) */
    pm_scene *scene;           /* local frame, in N->a, its metadata empty; NULL when rc != PM_OK */
    double rmax;               /* the largest |x| or |z| of any vertex */
    PM_VEC(pm__jdoubt) doubts; /* per rounding step met so far */
    const pm__jmouth *mouths;  /* read once (NULL: missing) */
    const pm_meta *m_warnings; /* its metadata's "warnings" (pm__keep_meta) */
    const pm_meta *m_corners;  /* its "corners" when t_corners is NULL, else NULL */
    const pm_meta *t_corners;  /* its "corners" as network_meta.c's table (NULL: not one) */
    size_t t_point;            /* the offset of its rows' "point" (a pm_meta *) */
    struct pm__jentry *next;
} pm__jentry;

struct pm__jcache {
    pm__jentry **slot;
    size_t nslot, count;
    PM_VEC(uint64_t) buf;      /* the key being built */
    PM_VEC(uint32_t) tri;      /* pm__doubts' list being built, 2 words a triangle */
    PM_VEC(const char *) strs; /* the corner tables' strings, one copy each */
    pm_junction_memo *memo;    /* shared by the junctions built (NULL: none yet) */
    pm_arena *memo_a;          /* the memo's own arena (pm__memo) */
    pm_arena *w;               /* where an entry is built (pm__build), or NULL */
    pm_arena *pos;             /* the placed junctions' positions (pm__place), or NULL */
};

void pm__jcache_drop_positions(pm__net *N) {
    if (!N->jc || !N->jc->pos) return;
    for (size_t n = 0; n < N->p->nnodes; n++)
        for (uint32_t i = 0; N->nodes[n].scene && i < N->nodes[n].scene->nprims; i++)
            N->nodes[n].scene->prims[i].positions = NULL;
    pm_arena_destroy(N->jc->pos);
    N->jc->pos = NULL;
}

void pm__jcache_end(pm__net *N) {
    if (!N->jc) return;
    pm_arena_destroy(N->jc->w);
    N->jc->w = NULL;
    pm_arena_destroy(N->jc->memo_a);
    N->jc->memo_a = NULL;
    N->jc->memo = NULL;
}

static uint64_t pm__bits(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Every field of the (local) parameters the generator reads, as words. */
static int pm__key(pm__net *N, const pm_junction_params *jp) {
    size_t n = 10 + 10 * jp->narms + 2 * jp->nnodes + 2 * jp->nlinks;
    if (pm_vec_reserve(N->a, &N->jc->buf, n)) return PM_ERR_NOMEM;
    uint64_t *w = N->jc->buf.data;
    *w++ = jp->narms;
    *w++ = pm__bits(jp->center[0]);
    *w++ = pm__bits(jp->center[1]);
    *w++ = pm__bits(jp->corner_radius);
    *w++ = jp->corner_segments;
    *w++ = pm__bits(jp->uv_scale);
    *w++ = pm__bits(jp->snap);
    *w++ = (uint64_t)jp->has_center | (uint64_t)jp->open_mouths << 1 |
           (uint64_t)jp->drop_tight_sidewalks << 2 | (uint64_t)jp->has_roundabout << 3 |
           (uint64_t)(jp->bare_corners != NULL) << 4 | (uint64_t)jp->no_normals << 5 |
           (uint64_t)jp->lean_meta << 6 | (uint64_t)jp->cut_tight_corners << 7;
    *w++ = jp->nnodes;
    *w++ = jp->nlinks;
    for (size_t i = 0; i < jp->narms; i++) {
        const pm_junction_arm *A = &jp->arms[i];
        *w++ = pm__bits(A->direction[0]);
        *w++ = pm__bits(A->direction[1]);
        *w++ = pm__bits(A->length);
        *w++ = pm__bits(A->width);
        *w++ = pm__bits(A->elevation);
        *w++ = A->has_sidewalk;
        *w++ = pm__bits(A->has_sidewalk ? A->sidewalk.width : 0.0);
        *w++ = pm__bits(A->has_sidewalk ? A->sidewalk.curb_height : 0.0);
        *w++ = A->node;
        *w++ = jp->bare_corners ? jp->bare_corners[i] : 0;
    }
    for (size_t i = 0; i < 2 * jp->nnodes; i++) *w++ = pm__bits(jp->nodes[i]);
    for (size_t i = 0; i < jp->nlinks; i++) {
        *w++ = (uint64_t)jp->links[i].a << 32 | jp->links[i].b;
        *w++ = pm__bits(jp->links[i].width);
    }
    N->jc->buf.len = n;
    return PM_OK;
}

/* Only spreads keys over the table's slots (each match compares the whole
 * key, pm__key's layout): the arm count and each arm's direction and
 * length (the words that tell a town's junctions apart), in two
 * independent multiply chains mixed at the end. */
static uint64_t pm__hash(const uint64_t *w, size_t n) {
    size_t narms = w[0];
    uint64_t h0 = 0x9e3779b97f4a7c15u ^ n, h1 = 0xc2b2ae3d27d4eb4fu ^ narms;
    for (size_t i = 0; i < narms && 10 + 10 * i + 3 <= n; i++) {
        const uint64_t *a = w + 10 + 10 * i;
        h0 = (h0 ^ a[0]) * 0xbf58476d1ce4e5b9u;
        h1 = (h1 ^ a[1]) * 0x94d049bb133111ebu;
        h0 = (h0 ^ (h0 >> 29) ^ a[2]) * 0xbf58476d1ce4e5b9u;
        h1 ^= h1 >> 31;
    }
    uint64_t h = (h0 ^ (h1 >> 17) ^ (h1 << 47)) * 0xff51afd7ed558ccdu;
    return h ^ (h >> 32);
}

static int pm__grow(pm__net *N) {
    pm__jcache *C = N->jc;
    size_t n = C->nslot ? 2 * C->nslot : 64;
    pm__jentry **s = pm_arena_calloc(N->a, n, sizeof *s);
    if (!s) return PM_ERR_NOMEM;
    for (size_t i = 0; i < C->nslot; i++)
        for (pm__jentry *e = C->slot[i], *nx; e; e = nx) {
            nx = e->next;
            e->next = s[e->hash & (n - 1)];
            s[e->hash & (n - 1)] = e;
        }
    C->slot = s;
    C->nslot = n;
    return PM_OK;
}

static double pm__orient(const float *P, const uint32_t *t, const double off[3]) {
    double q[3][2];
    for (int k = 0; k < 3; k++) {
        const float *v = P + 3 * (size_t)t[k];
        /* (x, -z): counter-clockwise seen from +Y is positive. */
        q[k][0] = off ? (double)(float)((double)v[0] + off[0]) : v[0];
        q[k][1] = -(off ? (double)(float)((double)v[2] + off[2]) : v[2]);
    }
    return pm_orient2d_fast(q[0], q[1], q[2]);
}

static int8_t pm__sgn(double v) { return (int8_t)((v > 0) - (v < 0)); }

#if PM__JC_AVX
/* pm__jcache_rmax's loop on *m for its vertices 8 at a time (24 floats,
 * the y lanes masked to zero). MAXPS gives its second operand where the first is NaN, as the
 * plain loop's > skips a NaN; a float's largest is the double's largest
 * (widening keeps order). Returns the vertices it did. */
__attribute__((target("avx"))) static uint32_t pm__rmax_avx(const float *pos, uint32_t nv, float *m) {
    const __m256 keep0 = _mm256_castsi256_ps(_mm256_setr_epi32(-1, 0, -1, -1, 0, -1, -1, 0));
    const __m256 keep1 = _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, 0, -1, -1, 0, -1, -1));
    const __m256 keep2 = _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, -1, 0, -1, -1, 0, -1));
    const __m256 mag = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 acc = _mm256_set1_ps(*m);
    uint32_t v = 0;
    for (; v + 8 <= nv; v += 8) {
        const float *q = pos + 3 * (size_t)v;
        acc = _mm256_max_ps(_mm256_and_ps(_mm256_and_ps(_mm256_loadu_ps(q), mag), keep0), acc);
        acc = _mm256_max_ps(_mm256_and_ps(_mm256_and_ps(_mm256_loadu_ps(q + 8), mag), keep1), acc);
        acc = _mm256_max_ps(_mm256_and_ps(_mm256_and_ps(_mm256_loadu_ps(q + 16), mag), keep2), acc);
    }
    float w[8];
    _mm256_storeu_ps(w, acc);
    for (int k = 0; k < 8; k++) *m = w[k] > *m ? w[k] : *m;
    return v;
}
#endif

double pm__jcache_rmax(const float *pos, uint32_t nv, double m, int path) {
    uint32_t v = 0;
    if (path == 1 || path > 2) return -1;
#if PM__JC_AVX
    if (path < 0) path = !PM__JCACHE_PLAIN && __builtin_cpu_supports("avx") ? 2 : 0;
    if (path == 2) {
        if (!__builtin_cpu_supports("avx")) return -1;
        /* (m is 0 or a float's magnitude so far: exact as a float.) */
        float f = (float)m;
        v = pm__rmax_avx(pos, nv, &f);
        if (f > m) m = f;
    }
#else
    if (path == 2) return -1;
#endif
    for (; v < nv; v++) {
        double x = fabs(pos[3 * v]), z = fabs(pos[3 * v + 2]);
        if (x > m) m = x;
        if (z > m) m = z;
    }
    return m;
}

/* The largest |x| or |z| of any vertex of the local result. */
static void pm__rmax(pm__jentry *e) {
    for (uint32_t i = 0; i < e->scene->nprims; i++) {
        const pm_prim *P = &e->scene->prims[i];
        e->rmax = pm__jcache_rmax(P->positions, P->vcount, e->rmax, -1);
    }
}

/* Whether triangle t of prim P is not clear of its slack when its corners
 * move by up to d: its plan orientation o (twice its signed area, in
 * doubles) against a bound on how far o can move, slack[0] + slack[1] d +
 * 8 d^2 (the product's own error, and the L1 lengths of the edges from
 * its third corner). A vertical face (two corners sharing x and z) never
 * is. */
static bool pm__doubtful(const pm_prim *P, uint32_t t, double d) {
    const float *a = P->positions + 3 * (size_t)P->indices[t];
    const float *b = P->positions + 3 * (size_t)P->indices[t + 1];
    const float *c = P->positions + 3 * (size_t)P->indices[t + 2];
    /* Differences of floats are exact in doubles; so are their products
     * here, to within the bound below. */
    double ax = (double)a[0] - c[0], az = (double)a[2] - c[2];
    double bx = (double)b[0] - c[0], bz = (double)b[2] - c[2];
    double l = ax * -bz, r = -az * bx;
    /* The same tests, combined without branches. */
    bool vertical = ((a[0] == b[0]) & (a[2] == b[2])) | ((ax == 0) & (az == 0)) | ((bx == 0) & (bz == 0));
    if (vertical) return false;
    double o = l - r, sl0 = 4e-16 * (fabs(l) + fabs(r));
    double sl1 = 2.0 * (fabs(ax) + fabs(az) + fabs(bx) + fabs(bz));
    if (o == 0.0 && sl0 == 0.0) return false;
    return !(fabs(o) > sl0 + sl1 * d + 8.0 * d * d);
}

#if PM__JC_AVX
/* The x and z of corner tri[0] of four triangles (tri, tri + 3, ...,
 * corners into pos) in lanes, widened to double: scalar loads, not AVX2
 * gathers (a gather costs about three times its lanes' loads on the AMD
 * hosts this runs on). */
__attribute__((target("avx2"), always_inline)) static inline void pm__xz4(const float *pos, const uint32_t *tri,
                                                                          __m256d *x, __m256d *z) {
    const float *p0 = pos + 3 * (size_t)tri[0], *p1 = pos + 3 * (size_t)tri[3];
    const float *p2 = pos + 3 * (size_t)tri[6], *p3 = pos + 3 * (size_t)tri[9];
    *x = _mm256_cvtps_pd(_mm_setr_ps(p0[0], p1[0], p2[0], p3[0]));
    *z = _mm256_cvtps_pd(_mm_setr_ps(p0[2], p1[2], p2[2], p3[2]));
}

/* pm__doubtful for the four triangles from index t on, one per lane
 * (bit k of the result: triangle t + 3 k). Each lane does pm__doubtful's
 * operations in its order, on the same values (floats widened exactly,
 * no fused multiply-add): the same answers, NaN included (a NaN bound
 * test counts as doubtful there as here). */
__attribute__((target("avx2"))) static int pm__doubtful4(const pm_prim *P, uint32_t t, double d) {
    const uint32_t *q = P->indices + t;
    __m256d a0, a2, b0, b2, c0, c2;
    pm__xz4(P->positions, q, &a0, &a2);
    pm__xz4(P->positions, q + 1, &b0, &b2);
    pm__xz4(P->positions, q + 2, &c0, &c2);
    const __m256d sign = _mm256_set1_pd(-0.0), zero = _mm256_setzero_pd();
    __m256d ax = _mm256_sub_pd(a0, c0), az = _mm256_sub_pd(a2, c2);
    __m256d bx = _mm256_sub_pd(b0, c0), bz = _mm256_sub_pd(b2, c2);
    __m256d l = _mm256_mul_pd(ax, _mm256_xor_pd(bz, sign)), r = _mm256_mul_pd(_mm256_xor_pd(az, sign), bx);
#define PM__ABS(v) _mm256_andnot_pd(sign, (v))
#define PM__EQ(u, v) _mm256_cmp_pd((u), (v), _CMP_EQ_OQ)
    __m256d vertical = _mm256_or_pd(_mm256_or_pd(_mm256_and_pd(PM__EQ(a0, b0), PM__EQ(a2, b2)),
                                                 _mm256_and_pd(PM__EQ(ax, zero), PM__EQ(az, zero))),
                                    _mm256_and_pd(PM__EQ(bx, zero), PM__EQ(bz, zero)));
    __m256d o = _mm256_sub_pd(l, r);
    __m256d sl0 = _mm256_mul_pd(_mm256_set1_pd(4e-16), _mm256_add_pd(PM__ABS(l), PM__ABS(r)));
    __m256d sl1 = _mm256_mul_pd(_mm256_set1_pd(2.0), _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(PM__ABS(ax), PM__ABS(az)),
                                                                             PM__ABS(bx)), PM__ABS(bz)));
    __m256d flat = _mm256_and_pd(PM__EQ(o, zero), PM__EQ(sl0, zero));
    __m256d bound = _mm256_add_pd(_mm256_add_pd(sl0, _mm256_mul_pd(sl1, _mm256_set1_pd(d))), _mm256_set1_pd(8.0 * d * d));
    __m256d inside = _mm256_cmp_pd(PM__ABS(o), bound, _CMP_NGT_UQ);
#undef PM__ABS
#undef PM__EQ
    return _mm256_movemask_pd(_mm256_andnot_pd(_mm256_or_pd(vertical, flat), inside));
}
#endif

int pm__jcache_doubtful(const pm_prim *P, double d, uint8_t *out, int path) {
    uint32_t t = 0;
    if (path > 0) {
#if PM__JC_AVX
        if (path != 2 || P->vcount >= (1u << 29) || !__builtin_cpu_supports("avx2")) return -1;
        for (; t + 12 <= P->icount; t += 12) {
            int m = pm__doubtful4(P, t, d);
            for (int k = 0; k < 4; k++) out[t / 3 + (uint32_t)k] = (uint8_t)(m >> k & 1);
        }
#else
        return -1;
#endif
    }
    for (; t < P->icount; t += 3) out[t / 3] = pm__doubtful(P, t, d);
    return 0;
}

/* The entry's doubtful triangles at rounding step d = 2^(ex - 24), listed
 * the first time that step is met (one pass over the triangles, each
 * bound computed there: most entries meet one step only). */
static int pm__doubts(pm__net *N, pm__jentry *e, int ex, double d, const pm__jdoubt **out) {
    for (size_t i = 0; i < e->doubts.len; i++)
        if (e->doubts.data[i].ex == ex) {
            *out = &e->doubts.data[i];
            return PM_OK;
        }
    pm__jdoubt g = {.ex = ex};
    /* Listed in the cache's scratch list, then copied to its size. */
    pm__jcache *C = N->jc;
    C->tri.len = 0;
    for (uint32_t i = 0; i < e->scene->nprims; i++) {
        const pm_prim *P = &e->scene->prims[i];
        uint32_t t = 0;
#if PM__JC_AVX
        if (!PM__JCACHE_PLAIN && P->vcount < (1u << 29) && __builtin_cpu_supports("avx2")) {
            /* Four triangles a time (their float indices in 32-bit lanes);
             * the rare doubtful ones listed. */
            for (; t + 12 <= P->icount; t += 12)
                for (int m = pm__doubtful4(P, t, d); m; m &= m - 1) {
                    if (pm_vec_reserve(N->a, &C->tri, C->tri.len + 2)) return PM_ERR_NOMEM;
                    C->tri.data[C->tri.len++] = i;
                    C->tri.data[C->tri.len++] = t + 3 * (uint32_t)__builtin_ctz((unsigned)m);
                }
        }
#endif
        for (; t < P->icount; t += 3) {
            if (!pm__doubtful(P, t, d)) continue;
            if (pm_vec_reserve(N->a, &C->tri, C->tri.len + 2)) return PM_ERR_NOMEM;
            C->tri.data[C->tri.len++] = i;
            C->tri.data[C->tri.len++] = t;
        }
    }
    g.n = (uint32_t)(C->tri.len / 2);
    if (!(g.tri = pm_arena_alloc(N->a, (g.n + 1) * sizeof *g.tri))) return PM_ERR_NOMEM;
    if (g.n) memcpy(g.tri, C->tri.data, g.n * sizeof *g.tri);
    if (pm_vec_push(N->a, &e->doubts, g)) return PM_ERR_NOMEM;
    *out = &e->doubts.data[e->doubts.len - 1];
    return PM_OK;
}

/* frexp(m, ex) and ldexp(1, *ex - 24), for m positive and normal with a
 * normal result read off m's exponent bits (the calls otherwise). */
static double pm__jcache_step(double m, int *ex) {
    uint64_t u = pm__bits(m), be = u >> 52;   /* (the sign bit included) */
    if (be >= 24 && be < 0x7ff) {
        *ex = (int)be - 1022;
        u = (be - 23) << 52;
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    frexp(m, ex);
    return ldexp(1.0, *ex - 24);
}

/* Whether every triangle keeps its plan orientation's sign when its
 * corners are moved by off and rounded to floats. Rounding moves each
 * coordinate by at most d (an ulp of the largest magnitude there), so a
 * triangle whose orientation is clear of its slack needs no exact test;
 * the others (the same ones for every off with the same d: pm__doubts)
 * are tested exactly, before and after. A vertical face stays one: its
 * two corners with the same x and z keep them the same. */
static int pm__keeps_orientation(pm__net *N, pm__jentry *e, const double off[3], bool *keeps) {
    double ox = fabs(off[0]), oz = fabs(off[2]);
    double m = e->rmax + (ox > oz || oz != oz ? ox : oz);   /* fmax's value */
    int ex;
    double d = pm__jcache_step(m, &ex);   /* an ulp of a float below 2^ex */
    const pm__jdoubt *g;
    int rc = pm__doubts(N, e, ex, d, &g);
    if (rc) return rc;
    *keeps = true;
    for (uint32_t j = 0; j < g->n && *keeps; j++) {
        const pm_prim *P = &e->scene->prims[g->tri[j][0]];
        const uint32_t *t = P->indices + g->tri[j][1];
        *keeps = pm__sgn(pm__orient(P->positions, t, off)) == pm__sgn(pm__orient(P->positions, t, NULL));
    }
    return PM_OK;
}

static void pm__move(float out[3], const float in[3], const double off[3]) {
    for (int k = 0; k < 3; k++) out[k] = (float)((double)in[k] + off[k]);
}

/* pm__move of vertices four at a time, as three quads of floats (x0 y0
 * z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3), each float widened, summed in
 * double and rounded back: the same operations, lane by lane, as
 * pm__move's. Each returns how many vertices it moved (a multiple of 4). */
#ifdef __SSE2__
static size_t pm__move_sse2(float *out, const float *in, size_t nv, const double off[3]) {
    const __m128d o[6] = {_mm_setr_pd(off[0], off[1]), _mm_setr_pd(off[2], off[0]),
                          _mm_setr_pd(off[1], off[2]), _mm_setr_pd(off[0], off[1]),
                          _mm_setr_pd(off[2], off[0]), _mm_setr_pd(off[1], off[2])};
    size_t v = 0;
    for (; v + 4 <= nv; v += 4) {
        for (int q = 0; q < 3; q++) {
            __m128 f = _mm_loadu_ps(in + 3 * v + 4 * q);
            __m128d lo = _mm_add_pd(_mm_cvtps_pd(f), o[2 * q]);
            __m128d hi = _mm_add_pd(_mm_cvtps_pd(_mm_movehl_ps(f, f)), o[2 * q + 1]);
            _mm_storeu_ps(out + 3 * v + 4 * q, _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi)));
        }
    }
    return v;
}
#endif

#if PM__JC_AVX
/* With AVX a quad widens to four doubles at once (CPUs without it take
 * the SSE2 loop). */
__attribute__((target("avx"))) static size_t pm__move_avx(float *out, const float *in, size_t nv,
                                                          const double off[3]) {
    const __m256d o0 = _mm256_setr_pd(off[0], off[1], off[2], off[0]);
    const __m256d o1 = _mm256_setr_pd(off[1], off[2], off[0], off[1]);
    const __m256d o2 = _mm256_setr_pd(off[2], off[0], off[1], off[2]);
    size_t v = 0;
    for (; v + 4 <= nv; v += 4) {
        const float *i = in + 3 * v;
        float *o = out + 3 * v;
        _mm_storeu_ps(o, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(i)), o0)));
        _mm_storeu_ps(o + 4, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(i + 4)), o1)));
        _mm_storeu_ps(o + 8, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(i + 8)), o2)));
    }
    return v;
}
#endif

int pm__jcache_move(float *out, const float *in, size_t nv, const double off[3], int path) {
    size_t v = 0;
    int best = 0;
#ifdef __SSE2__
    best = 1;
#endif
#if PM__JC_AVX
    if (__builtin_cpu_supports("avx")) best = 2;
#endif
    if (path > best) return -1;
    if (path < 0) path = best;
#if PM__JC_AVX
    if (path == 2) v = pm__move_avx(out, in, nv, off);
#endif
#ifdef __SSE2__
    if (path == 1) v = pm__move_sse2(out, in, nv, off);
#endif
    for (; v < nv; v++) pm__move(out + 3 * v, in + 3 * v, off);
    return 0;
}

static void pm__move_all(float *out, const float *in, size_t nv, const double off[3]) {
    pm__jcache_move(out, in, nv, off, -1);
}

#if PM__JC_AVX
/* pm__move of the three points in a row at in (a slab end's curb top,
 * outer top and outer bottom: nine floats) in place of three calls: the
 * first eight floats as two quads (x y z x | y z x y), widened, summed in
 * double and rounded back lane by lane (pm__move's operations), the
 * ninth by pm__move's own. */
__attribute__((target("avx"))) static void pm__move3_avx(float *out, const float *in, const double off[3]) {
    const __m256d o0 = _mm256_setr_pd(off[0], off[1], off[2], off[0]);
    const __m256d o1 = _mm256_setr_pd(off[1], off[2], off[0], off[1]);
    _mm_storeu_ps(out, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(in)), o0)));
    _mm_storeu_ps(out + 4, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + 4)), o1)));
    out[8] = (float)((double)in[8] + off[2]);
}
#endif

/* A slab end's three points moved by off (each as pm__move moves it). */
static void pm__move_slab_end(pm_junction_slab_end *D, const pm_junction_slab_end *S, const double off[3]) {
#if PM__JC_AVX
    if (!PM__JCACHE_PLAIN && __builtin_cpu_supports("avx")) {
        _Static_assert(offsetof(pm_junction_slab_end, outer_top) == offsetof(pm_junction_slab_end, curb_top) + 3 * sizeof(float) &&
                           offsetof(pm_junction_slab_end, outer_bottom) == offsetof(pm_junction_slab_end, outer_top) + 3 * sizeof(float),
                       "a slab end's points are nine floats in a row");
        pm__move3_avx(D->curb_top, S->curb_top, off);
        return;
    }
#endif
    pm__move(D->curb_top, S->curb_top, off);
    pm__move(D->outer_top, S->outer_top, off);
    pm__move(D->outer_bottom, S->outer_bottom, off);
}

/* A copy of array/object m's node that shares m's children (read only). */
static pm_meta *pm__shallow(pm_arena *a, const pm_meta *m) {
    pm_meta *c = pm_arena_alloc(a, sizeof *c);
    if (!c || !m) return NULL;
    *c = *m;
    c->next = NULL;
    return c;
}

static pm_meta *pm__link(pm_meta *list, pm_meta *last, pm_meta *m) {
    if (last) last->next = m;
    else list->u.kids.first = m;
    list->u.kids.last = m;
    return m;
}

/* A copy of the junction's "corners" whose objects and fillet points are
 * the node's own, moved by off; the other values are shared. Each corner
 * object and its members in one block, linked in the local object's
 * order (one allocation per corner, not per member). */
static pm_meta *pm__corners(pm_arena *a, const pm_meta *local, const double off[3]) {
    pm_meta *arr = pm__shallow(a, local);
    if (!arr) return NULL;
    pm_meta *lc = NULL;
    for (const pm_meta *c = local->u.kids.first; c; c = c->next) {
        size_t k = 0;
        for (const pm_meta *m = c->u.kids.first; m; m = m->next) k++;
        pm_meta *o = pm_arena_alloc(a, (k + 1) * sizeof *o), *q = o + 1;
        if (!o) return NULL;
        *o = *c;
        o->next = NULL;
        for (const pm_meta *m = c->u.kids.first; m; m = m->next, q++) {
            *q = *m;
            q->next = m->next ? q + 1 : NULL;
            if (m->kind == PM_META_ARR && m->key_len == 5 && memcmp(m->key, "point", 5) == 0 &&
                m->u.kids.count == 2) {
                double v[2] = {m->u.kids.first->u.n + off[0], m->u.kids.last->u.n + off[2]};
                pm_meta *p = pm_meta_nums(a, v, 2);
                if (!p) return NULL;
                q->u.kids = p->u.kids;
            }
        }
        if (k) o->u.kids.first = o + 1, o->u.kids.last = o + k;
        lc = pm__link(arr, lc, o);
    }
    return arr;
}

/* The point [v[0], v[1]] in q[0..2] as pm_meta_nums(a, v, 2) builds it:
 * the array, then its two numbers (a non-finite one null). */
static void pm__nums2_at(pm_meta *q, const double v[2]) {
    q[0] = (pm_meta){.kind = PM_META_ARR};
    q[0].u.kids.first = q + 1, q[0].u.kids.last = q + 2, q[0].u.kids.count = 2;
    for (int k = 0; k < 2; k++) {
        q[1 + k] = (pm_meta){.kind = isfinite(v[k]) ? PM_META_NUM : PM_META_NULL, .next = k ? NULL : q + 2};
        if (q[1 + k].kind == PM_META_NUM) q[1 + k].u.n = v[k];
    }
}

/* The entry's corner table for a node: its rows copied, each fillet point
 * moved by off as pm__corners moves it (the same values, the same test
 * of which points move), the moved points' nodes in one block. */
static pm_meta *pm__corners_rows(pm_arena *a, const pm__jentry *e, const double off[3]) {
    const pm_meta *t = e->t_corners;
    size_t n = t->u.table.n, sz = t->u.table.shape->row_size;
    char *rows = pm_arena_alloc(a, n * sz + 1);
    pm_meta *pts = pm_arena_alloc(a, (3 * n + 1) * sizeof *pts);
    if (!rows || !pts) return NULL;
    memcpy(rows, t->u.table.rows, n * sz);
    for (size_t i = 0; i < n; i++) {
        pm_meta **pp = (pm_meta **)(void *)(rows + i * sz + e->t_point);
        const pm_meta *m = *pp;
        if (!m || m->kind != PM_META_ARR || m->u.kids.count != 2) continue;
        double v[2] = {m->u.kids.first->u.n + off[0], m->u.kids.last->u.n + off[2]};
        pm__nums2_at(pts + 3 * i, v);
        *pp = pts + 3 * i;
    }
    return pm_meta_table(a, t->u.table.shape, rows, n);
}

/* The node's metadata: the members the network reads, "corners" its own
 * (the stitch moves it into the output) with each fillet point moved. */
static pm_meta *pm__place_meta(pm_arena *a, const pm__jentry *e, const double off[3]) {
    pm_meta *o = pm_meta_obj(a);
    pm_meta *corners = e->t_corners ? pm__corners_rows(a, e, off)
                       : e->m_corners ? pm__corners(a, e->m_corners, off) : NULL;
    if (!o || !corners) return NULL;
    int rc = pm_meta_set_lit(o, "corners", corners);
    rc |= pm_meta_set_lit(o, "warnings", pm__shallow(a, e->m_warnings));
    return rc == 0 ? o : NULL;
}

/* The local result moved by off into a scene of its own (positions new,
 * the other arrays shared). *fits false: a triangle's plan orientation
 * changed when its corners were rounded to floats there. */
static int pm__place(pm__net *N, pm__jentry *e, const double off[3], pm_scene **out,
                     pm_junction_diag *d, bool *fits) {
    const pm_scene *L = e->scene;
    int rc = pm__keeps_orientation(N, e, off, fits);
    if (rc || !*fits) return rc;
    pm_scene *s = pm_scene_create(N->a);
    if (!s) return PM_ERR_NOMEM;
    s->prims = pm_arena_alloc(N->a, (L->nprims + 1) * sizeof *s->prims);
    /* With sidewalks the positions (curbs and slabs too: 2.1 MB on the
     * 40 x 40 town) go in an arena of their own: the last stitch is their
     * last reader, and their pages then take the late arrays' and the
     * metadata's. (Without, the metadata fits where the roads' copies
     * were, and the arena's blocks would only add to what lies under the
     * stitch.) */
    if (N->sidewalks && !N->jc->pos) N->jc->pos = pm_arena_create_child_max(N->a, PM__SMALL_BLOCK);
    pm_arena *pa = N->sidewalks ? N->jc->pos : N->a;
    if (!s->prims || !pa) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < L->nprims; i++) {
        pm_prim P = L->prims[i];
        float *pos = pm_arena_alloc(pa, (3 * (size_t)P.vcount + 1) * sizeof *pos);
        if (!pos) return PM_ERR_NOMEM;
        pm__move_all(pos, P.positions, P.vcount, off);
        P.positions = pos;
        P.vcap = P.vcount;     /* nothing may grow the shared arrays */
        P.icap = P.icount;
        s->prims[i] = P;
    }
    s->nprims = s->prims_cap = L->nprims;
    if (!(s->meta = pm__place_meta(N->a, e, off))) return PM_ERR_NOMEM;
    *d = e->d;
    if (e->d.slab_ends) {
        size_t n = 2 * e->narms;
        d->slab_ends = pm_arena_alloc(N->a, n * sizeof *d->slab_ends);
        if (!d->slab_ends) return PM_ERR_NOMEM;
        for (size_t i = 0; i < n; i++) {
            d->slab_ends[i] = e->d.slab_ends[i];
            pm__move_slab_end(&d->slab_ends[i], &e->d.slab_ends[i], off);
        }
    }
    *out = s;
    return PM_OK;
}

/* Each arm's mouth out of the generator's diag->mouths: *out NULL when
 * one is missing or its distance is not finite (metadata would hold null
 * there). */
static int pm__read_mouths(pm_arena *a, const pm_junction_diag *d, size_t narms, const pm__jmouth **out) {
    *out = NULL;
    if (!d->mouths) return PM_OK;
    pm__jmouth *m = pm_arena_alloc(a, (narms + 1) * sizeof *m);
    if (!m) return PM_ERR_NOMEM;
    for (size_t k = 0; k < narms; k++) {
        const pm_junction_mouth *g = &d->mouths[k];
        if (!isfinite(g->distance)) return PM_OK;
        m[k] = (pm__jmouth){g->left_index, g->right_index, g->distance};
    }
    *out = m;
    return PM_OK;
}

/* The cache's junction memo, made on first use in an arena of its own on
 * malloc, given back by pm__jcache_end: at most PM__MEMO_ARCS arcs (0.5
 * MB) outside the job's limit and page pool. In the job's arena or a child
 * of it, its 0.2 MB of entries on req0rot moved the pool's high-water mark
 * across a 2 MB page on req0rot or req1rot (max RSS +2.2 MB). NULL for the
 * tests' plain path, or when out of memory (the generator then runs
 * without). */
static pm_junction_memo *pm__memo(pm__net *N) {
    pm__jcache *C = N->jc;
    if (PM__JCACHE_PLAIN) return NULL;
    if (!C->memo_a) C->memo_a = pm_arena_create(0);
    if (C->memo_a && !C->memo) C->memo = pm_junction_memo_create(C->memo_a);
    return C->memo;
}

/* The same junction built where it stands (no reuse): when the local
 * result would not survive its move. */
static int pm__in_place(pm__net *N, const pm_junction_params *local, const double off[3],
                        pm_scene **out, pm_junction_diag *d) {
    pm_junction_params g = *local;
    pm_junction_arm *arms = pm_arena_alloc(N->a, local->narms * sizeof *arms);
    double *nodes = local->nnodes ? pm_arena_alloc(N->a, 2 * local->nnodes * sizeof *nodes) : NULL;
    *out = pm_scene_create(N->a);
    if (!arms || (local->nnodes && !nodes) || !*out) return PM_ERR_NOMEM;
    memcpy(arms, local->arms, local->narms * sizeof *arms);
    for (size_t i = 0; i < local->narms; i++) arms[i].elevation += off[1];
    for (size_t i = 0; i < local->nnodes; i++) {
        nodes[2 * i] = local->nodes[2 * i] + off[0];
        nodes[2 * i + 1] = local->nodes[2 * i + 1] + off[2];
    }
    g.arms = arms;
    g.nodes = nodes;
    g.memo = pm__memo(N);
    g.center[0] = local->center[0] + off[0];
    g.center[1] = local->center[1] + off[2];
    N->jc_built++;
    N->jc_in_place++;
    return pm_junction_generate(*out, &g, d);
}

/* n elements of size bytes at src copied into a (NULL src: NULL); false
 * when out of memory. */
static bool pm__dup_into(pm_arena *a, void **dst, const void *src, size_t n, size_t size) {
    *dst = NULL;
    if (!src) return true;
    *dst = pm_arena_alloc(a, n ? n * size : 1);
    if (*dst && n) memcpy(*dst, src, n * size);
    return *dst != NULL;
}

/* s in N->a: the one copy of its text (the tables' strings are a few
 * names, written from the same pointer each time); NULL when out of
 * memory. */
static const char *pm__intern(pm__net *N, const char *s) {
    pm__jcache *C = N->jc;
    for (size_t i = 0; i < C->strs.len; i++)
        if (strcmp(C->strs.data[i], s) == 0) return C->strs.data[i];
    const char *d = pm_arena_strdup(N->a, s);
    return d && pm_vec_push(N->a, &C->strs, d) == 0 ? d : NULL;
}

/* m in a: a point ([x, z]: two numbers or nulls, the nodes pm_meta_nums
 * makes) as three nodes in one block, anything else by pm_meta_copy;
 * NULL when out of memory. */
static pm_meta *pm__point_copy(pm_arena *a, const pm_meta *m) {
    const pm_meta *x = m->kind == PM_META_ARR && m->u.kids.count == 2 ? m->u.kids.first : NULL;
    const pm_meta *z = x ? x->next : NULL;
    if (!z || z->next || x->key || z->key || (x->kind != PM_META_NUM && x->kind != PM_META_NULL) ||
        (z->kind != PM_META_NUM && z->kind != PM_META_NULL))
        return pm_meta_copy(a, m);
    pm_meta *q = pm_arena_alloc(a, 3 * sizeof *q);
    if (!q) return NULL;
    q[0] = *m;
    q[1] = *x;
    q[2] = *z;
    q[0].next = NULL;
    q[0].u.kids.first = q + 1, q[0].u.kids.last = q + 2;
    q[1].next = q + 2;
    return q;
}

/* Entry e's "corners" and "warnings" (c and wn, NULL when absent, in the
 * scratch arena w) kept in N->a. The corners as the table network_meta.c
 * makes of them (pm__corners_table), so that each node copies its rows
 * and moves their points (pm__corners_rows) instead of copying the tree
 * for network_meta.c to turn into the same table: the table's rows
 * copied, their strings interned and their values (the points) copied.
 * The tree copied instead when they make no such table (or a column
 * holds what is not copied here), and for the tests' plain path. */
static int pm__keep_meta(pm__net *N, pm_arena *w, pm__jentry *e, const pm_meta *c, const pm_meta *wn) {
    pm_arena *a = N->a;
    e->m_corners = e->m_warnings = e->t_corners = NULL;
    if (wn && !(e->m_warnings = pm_meta_copy(a, wn))) return PM_ERR_NOMEM;
    if (!c) return PM_OK;
    const pm_meta *t = PM__JCACHE_PLAIN ? c : pm__corners_table(w, (pm_meta *)c);   /* (reads c only) */
    const pm_meta_shape *sh = t && t != c && t->kind == PM_META_TABLE ? t->u.table.shape : NULL;
    size_t point = SIZE_MAX;
    for (size_t k = 0; sh && k < sh->ncols; k++) {
        const pm_meta_col *col = &sh->cols[k];
        if (col->kind == PM_META_COL_META && col->key_len == 5 && memcmp(col->key, "point", 5) == 0)
            point = col->offset;
        else if (col->kind == PM_META_COL_META || col->kind == PM_META_COL_VAL ||
                 col->kind == PM_META_COL_U32S || col->kind == PM_META_COL_BOOLS)
            sh = NULL;   /* pointers this copy does not follow */
    }
    if (!sh || point == SIZE_MAX) return (e->m_corners = pm_meta_copy(a, c)) ? PM_OK : PM_ERR_NOMEM;
    size_t n = t->u.table.n, sz = sh->row_size;
    char *rows = pm_arena_alloc(a, n * sz + 1);
    if (!rows) return PM_ERR_NOMEM;
    memcpy(rows, t->u.table.rows, n * sz);
    for (size_t k = 0; k < sh->ncols; k++) {
        pm_meta_col_kind kind = sh->cols[k].kind;
        if (kind != PM_META_COL_STR && kind != PM_META_COL_META) continue;
        for (char *v = rows + sh->cols[k].offset, *end = rows + n * sz; v < end; v += sz) {
            if (kind == PM_META_COL_STR) {
                const char **ps = (const char **)(void *)v;
                if (*ps && !(*ps = pm__intern(N, *ps))) return PM_ERR_NOMEM;
            } else {
                const pm_meta **pm = (const pm_meta **)(void *)v;
                if (*pm && !(*pm = pm__point_copy(a, *pm))) return PM_ERR_NOMEM;
            }
        }
    }
    pm_meta *kept = pm_meta_table(a, sh, rows, n);
    if (!kept) return PM_ERR_NOMEM;
    e->t_corners = kept;
    e->t_point = point;
    return PM_OK;
}

/* Entry e's junction, built in a scratch arena and copied into the job's
 * arena: the scene (each array its size; of the metadata the members the
 * network reads, pm__keep_meta) and what its diag points to
 * (warnings, slab ends, mouths), so that the generator's working memory
 * (contours, sides, growing arrays) goes back for the next one instead of
 * staying until the job ends. e->scene NULL unless PM_OK. */
static int pm__build(pm__net *N, const pm_junction_params *local, pm__jentry *e) {
    pm__jcache *C = N->jc;
    if (C->w) pm_arena_reset(C->w);
    else C->w = pm_arena_create_scratch(N->a);
    pm_arena *w = C->w;
    pm_scene *s = w ? pm_scene_create(w) : NULL;
    e->scene = NULL;
    pm_junction_params p = *local;
    p.memo = pm__memo(N);
    int rc = s ? pm_junction_generate(s, &p, &e->d) : PM_ERR_NOMEM;
    if (!s) memset(&e->d, 0, sizeof e->d);
    if (rc == PM_OK) {
        const pm_meta *c = pm_meta_get(s->meta, "corners"), *wn = pm_meta_get(s->meta, "warnings");
        pm_meta *none = pm_meta_obj(w);   /* the rest of the metadata is not read */
        if (none) s->meta = none;
        if (!none || !(e->scene = pm_scene_copy(N->a, s))) rc = PM_ERR_NOMEM;
        if (rc == PM_OK) rc = pm__keep_meta(N, w, e, c, wn);
    }
    pm_junction_diag *d = &e->d;
    if ((rc == PM_OK || rc == PM_ERR_GEOMETRY) &&
        (!pm__dup_into(N->a, (void **)&d->warnings, d->warnings, d->nwarnings, sizeof *d->warnings) ||
         !pm__dup_into(N->a, (void **)&d->slab_ends, d->slab_ends, 2 * local->narms, sizeof *d->slab_ends) ||
         !pm__dup_into(N->a, (void **)&d->mouths, d->mouths, local->narms, sizeof *d->mouths)))
        rc = PM_ERR_NOMEM;
    return rc;
}

int pm__jcache_generate(pm__net *N, const pm_junction_params *local, const double off[3],
                        pm_scene **out, pm_junction_diag *d, const pm__jmouth **mouths) {
    *mouths = NULL;
    if (!N->jc && !(N->jc = pm_arena_calloc(N->a, 1, sizeof *N->jc))) return PM_ERR_NOMEM;
    pm__jcache *C = N->jc;
    int rc = pm__key(N, local);
    if (rc) return rc;
    uint64_t h = pm__hash(C->buf.data, C->buf.len);
    pm__jentry *e = NULL;
    for (e = C->nslot ? C->slot[h & (C->nslot - 1)] : NULL; e; e = e->next)
        if (e->hash == h && e->nkey == C->buf.len &&
            memcmp(e->key, C->buf.data, C->buf.len * sizeof *e->key) == 0)
            break;
    if (e) {
        N->jc_reused++;
    } else {
        if ((C->count + 1) * 2 > C->nslot && (rc = pm__grow(N))) return rc;
        e = pm_arena_calloc(N->a, 1, sizeof *e);
        uint64_t *key = pm_arena_alloc(N->a, C->buf.len * sizeof *key);
        if (!e || !key) return PM_ERR_NOMEM;
        memcpy(key, C->buf.data, C->buf.len * sizeof *key);
        e->hash = h;
        e->key = key;
        e->nkey = C->buf.len;
        e->narms = local->narms;
        N->jc_built++;
        e->rc = pm__build(N, local, e);
        if (e->rc < 0 && e->rc != PM_ERR_GEOMETRY) return e->rc;
        if (e->rc == PM_OK) pm__rmax(e);
        if (e->rc == PM_OK && (rc = pm__read_mouths(N->a, &e->d, local->narms, &e->mouths))) return rc;
        if (e->rc != PM_OK) e->scene = NULL;
        e->next = C->slot[h & (C->nslot - 1)];
        C->slot[h & (C->nslot - 1)] = e;
        C->count++;
    }
    if (e->rc != PM_OK) {
        *d = e->d;
        *out = NULL;
        return e->rc;
    }
    bool fits;
    rc = pm__place(N, e, off, out, d, &fits);
    if (rc == PM_OK && fits) *mouths = e->mouths;
    if (rc == PM_OK && !fits) {
        rc = pm__in_place(N, local, off, out, d);
        if (rc == PM_OK) {
            int mr = pm__read_mouths(N->a, d, local->narms, mouths);
            if (mr) return mr;
        }
    }
    return rc;
}
