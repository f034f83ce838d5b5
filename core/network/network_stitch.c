/* The stitch: every junction's and every road's asphalt into one primitive
 * whose seams share vertices (the metadata is network_meta.c's). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "network/network_internal.h"
#include "geom/geom.h"
#include "scene/result.h"

#define PM__NONE UINT32_MAX

/* The lane paths below, picked at run time where the CPU has AVX2 (not
 * under ASan: its checks do not see the vector loads). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define PM__STITCH_AVX2 1
#endif

#ifndef PM__STITCH_PLAIN
#define PM__STITCH_PLAIN false   /* tests/core/test_network_stitch_fast.c: true for the plain path */
#endif

static int64_t pm__prim_index(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; s && i < s->nprims; i++)   /* (first letters first: no call for most) */
        if (s->prims[i].name[0] == name[0] && strcmp(s->prims[i].name, name) == 0) return i;
    return -1;
}

/* Appends src's vertices and triangles to dst; returns the vertex offset
 * through *voff. Normals are left zero: the stitch computes every
 * primitive's normals over the whole network at the end. */
static int pm__append(pm_scene *s, uint32_t dst, const pm_prim *src, uint32_t *voff) {
    int64_t off = pm_prim_append(s, &s->prims[dst], src);
    if (off < 0) return PM_ERR_NOMEM;
    *voff = (uint32_t)off;
    return PM_OK;
}

/* A road whose end section is not its mouth: it turns so tightly right
 * after the mouth that its inner side folds back over the mouth. */
static void pm__seam_problem(pm__net *N, const pm__road *R, int end) {
    pm_network_problem *q;
    if (pm__network_problem(N, &q)) return;
    const pm__step *st = &N->steps.data[R->first_step + (end ? R->nsteps - 1 : 0)];
    q->error = PM_NETWORK_SEAM;
    q->node = end ? R->end : R->start;
    q->edges[q->nedges++] = st->edge;
    snprintf(q->message, sizeof q->message, "the road along edge %u turns so tightly next to the "
             "junction mouth at node %lld that its inner side folds back over the mouth: give it "
             "more room after the mouth (a longer first segment, a gentler turn) or a smaller width",
             st->edge, (long long)q->node);
}

/* One vertex's part of pm__sections for its column's running state (the
 * column from its V: 0 left, 0.5 centre, 1 right). */
typedef struct pm__colsec { uint32_t s0, n0, s1, n1; float best; } pm__colsec;

static inline void pm__colsec_add(pm__colsec *c, float u, uint32_t v) {
    if (u == 0.0f) { c->s0 = v; c->n0++; }
    if (u > c->best) {
        c->best = u; c->s1 = v; c->n1 = 1;
    } else if (u == c->best) {
        c->n1++;
    }
}

#if PM__STITCH_AVX2
static inline pm__colsec *pm__colsec_of(pm__colsec *l, pm__colsec *m, pm__colsec *r, float x) {
    return x < 0.25f ? l : x > 0.75f ? r : m;
}

/* pm__sections in two passes, eight vertices at a time: a column's end
 * section is its vertices at its largest U (the plain loop's best ends as
 * the largest of -1 and every U that is not NaN; its s1 the first vertex
 * at that U when it is above -1, n1 how many are at it), so the first
 * pass takes each column's largest U and the U = 0 vertices (rare: the
 * start row), the second the vertices at the largest U (rare too). */
__attribute__((target("avx2"))) static void pm__sections_avx2(const float *uv, uint32_t n, pm__colsec *l,
                                                              pm__colsec *m, pm__colsec *r) {
    const __m256 lo = _mm256_set1_ps(0.25f), hi = _mm256_set1_ps(0.75f), zero = _mm256_setzero_ps();
    const __m256 none = _mm256_set1_ps(-INFINITY);
    const __m256i deal = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    __m256 bl = _mm256_set1_ps(-1.0f), bm = bl, br = bl;
    uint32_t n8 = n & ~7u;
#define PM__UX(v)                                                                                                  \
    __m256 a = _mm256_loadu_ps(uv + 2 * (size_t)(v)), b = _mm256_loadu_ps(uv + 2 * (size_t)(v) + 8);             \
    __m256 u = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), deal);                   \
    __m256 x = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)), deal);                   \
    __m256 il = _mm256_cmp_ps(x, lo, _CMP_LT_OQ), ir = _mm256_cmp_ps(x, hi, _CMP_GT_OQ)
    for (uint32_t v = 0; v < n8; v += 8) {
        PM__UX(v);
        __m256 im = _mm256_andnot_ps(_mm256_or_ps(il, ir), _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
        /* (MAXPS gives its second operand where the first is NaN.) */
        bl = _mm256_max_ps(_mm256_blendv_ps(none, u, il), bl);
        br = _mm256_max_ps(_mm256_blendv_ps(none, u, ir), br);
        bm = _mm256_max_ps(_mm256_blendv_ps(none, u, im), bm);
        for (int z = _mm256_movemask_ps(_mm256_cmp_ps(u, zero, _CMP_EQ_OQ)); z; z &= z - 1) {
            uint32_t w = v + (uint32_t)__builtin_ctz((unsigned)z);
            pm__colsec *c = pm__colsec_of(l, m, r, uv[2 * (size_t)w + 1]);
            c->s0 = w;
            c->n0++;
        }
    }
    float B[3][8];
    _mm256_storeu_ps(B[0], bl);
    _mm256_storeu_ps(B[1], bm);
    _mm256_storeu_ps(B[2], br);
    pm__colsec *cs[3] = {l, m, r};
    for (int k = 0; k < 3; k++) {
        float best = -1.0f;
        for (int j = 0; j < 8; j++) best = B[k][j] > best ? B[k][j] : best;
        for (uint32_t v = n8; v < n; v++) {   /* the tail's U = 0 and largest U */
            float uu = uv[2 * (size_t)v];
            if (pm__colsec_of(l, m, r, uv[2 * (size_t)v + 1]) != cs[k]) continue;
            if (uu == 0.0f) cs[k]->s0 = v, cs[k]->n0++;
            best = uu > best ? uu : best;
        }
        cs[k]->best = best;
    }
    bl = _mm256_set1_ps(l->best), bm = _mm256_set1_ps(m->best), br = _mm256_set1_ps(r->best);
    for (uint32_t v = 0; v < n8; v += 8) {
        PM__UX(v);
        __m256 bv = _mm256_blendv_ps(_mm256_blendv_ps(bm, br, ir), bl, il);
        for (int e = _mm256_movemask_ps(_mm256_cmp_ps(u, bv, _CMP_EQ_OQ)); e; e &= e - 1) {
            uint32_t w = v + (uint32_t)__builtin_ctz((unsigned)e);
            pm__colsec *c = pm__colsec_of(l, m, r, uv[2 * (size_t)w + 1]);
            if (c->n1++ == 0 && c->best > -1.0f) c->s1 = w;
        }
    }
#undef PM__UX
    for (uint32_t v = n8; v < n; v++) {
        pm__colsec *c = pm__colsec_of(l, m, r, uv[2 * (size_t)v + 1]);
        if (uv[2 * (size_t)v] == c->best && c->n1++ == 0 && c->best > -1.0f) c->s1 = v;
    }
}
#endif

/* The road's start section (U = 0 exactly; ok[0]) and end section (the
 * largest U of each column; ok[1]), as road-local vertices left, centre,
 * right, in one pass; ok says whether each is one vertex per column. */
static void pm__sections(const pm_prim *P, uint32_t s0[3], uint32_t s1[3], bool ok[2]) {
    /* Each column's state in its own locals (not arrays indexed by the
     * column, which the compiler keeps in memory): the same updates in
     * the same vertex order. */
    pm__colsec l = {PM__NONE, 0, PM__NONE, 0, -1}, m = l, r = l;
    const float *uv = P->uvs;
    uint32_t v0 = 0;
#if PM__STITCH_AVX2
    if (!PM__STITCH_PLAIN && __builtin_cpu_supports("avx2")) {
        pm__sections_avx2(uv, P->vcount, &l, &m, &r);
        v0 = P->vcount;
    }
#endif
    for (uint32_t v = v0, n = P->vcount; v < n; v++) {
        float u = uv[2 * (size_t)v], x = uv[2 * (size_t)v + 1];
        if (x < 0.25f) pm__colsec_add(&l, u, v);
        else if (x > 0.75f) pm__colsec_add(&r, u, v);
        else pm__colsec_add(&m, u, v);
    }
    s0[0] = l.s0, s0[1] = m.s0, s0[2] = r.s0;
    s1[0] = l.s1, s1[1] = m.s1, s1[2] = r.s1;
    ok[0] = l.n0 == 1 && m.n0 == 1 && r.n0 == 1;
    ok[1] = l.n1 == 1 && m.n1 == 1 && r.n1 == 1;
}

/* Maps one end section onto junction mouth (jl, jr: output vertices, the
 * road's own left and right there). Returns false when they are not the
 * same points (beyond snapping). */
static bool pm__map_end(pm__net *N, const pm_prim *A, const pm_prim *P, const uint32_t sec[3],
                        uint32_t jl, uint32_t jr, uint32_t *remap) {
    double tol = 0.01 + 2.0 * N->p->snap;
    /* (Most ends are the mouth's very floats: distance 0, no root needed.) */
    const float *pl = P->positions + 3 * sec[0], *pr = P->positions + 3 * sec[2];
    const float *ml = A->positions + 3 * jl, *mr = A->positions + 3 * jr;
    bool same = pl[0] == ml[0] && pl[1] == ml[1] && pl[2] == ml[2] && pr[0] == mr[0] && pr[1] == mr[1] &&
                pr[2] == mr[2];
    if (!same && (pm_v3f_dist(pl, ml) > tol || pm_v3f_dist(pr, mr) > tol)) return false;
    remap[sec[0]] = jl;
    remap[sec[2]] = jr;
    return true;
}

static void pm__midpoint(pm_prim *A, uint32_t c, uint32_t l, uint32_t r) {
    for (int k = 0; k < 3; k++)
        A->positions[3 * c + k] = (float)(((double)A->positions[3 * l + k] + A->positions[3 * r + k]) / 2.0);
}

/* Appends road vertex v once (an aliased vertex becomes its twin). */
static int pm__emit(pm_scene *s, pm_prim *A, const pm_prim *P, uint32_t v, uint32_t *remap,
                    const uint32_t *alias) {
    if (remap[v] != PM__NONE) return PM_OK;
    if (alias[v] != PM__NONE) {
        int rc = pm__emit(s, A, P, alias[v], remap, alias);
        remap[v] = remap[alias[v]];
        return rc;
    }
    int64_t id = pm_prim_add_vertex(s, A, P->positions + 3 * v, NULL, NULL, NULL);   /* see pm__append */
    if (id < 0) return PM_ERR_NOMEM;
    remap[v] = (uint32_t)id;
    return PM_OK;
}

/* pm__emit_one_piece when the road's vertices not mapped to a mouth are
 * first used in their own order (a road's rows: its first row's left and
 * right are a mouth's): guessed, then checked. Each such vertex v gets
 * the next new vertex in order of v (numbered and its positions copied a
 * stretch at a time between the mouths' vertices: mapped, the only ones
 * remap holds yet); the indices go through remap, and the guess
 * is the plain loop's numbering exactly when each index is at most one
 * past every new vertex before it and the last new vertex is used
 * (then the new vertices come in order of first use, each used). In the
 * longest stretch remap is v + c: eight indices at a time there with
 * AVX2 (integer lanes). False when the guess fails: remap as it was, A's
 * counts unchanged (what it wrote past them the next path overwrites). */
#if PM__STITCH_AVX2
/* Indices [0, n) of q through remap into d, eight at a time: those in
 * [lo, lo + len) as q + c (remap there), the others gathered; *top as in
 * pm__emit_in_order (one past the largest index so far, at least A's
 * vertex count) and *bad set when an index is past it, where check
 * (without it, top and bad are not read: indices known to pass). Returns
 * how many it did (the rest: fewer than eight). */
__attribute__((target("avx2"), always_inline)) static inline uint32_t
pm__remap_lanes(const uint32_t *q, uint32_t n, const uint32_t *remap, uint32_t lo, uint32_t len, uint32_t c,
                uint32_t *d, bool check, uint32_t *top, bool *bad) {
    const __m256i vlo = _mm256_set1_epi32((int)lo), vlast = _mm256_set1_epi32((int)(len - 1));
    const __m256i vc = _mm256_set1_epi32((int)c), one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
    const __m256i l3 = _mm256_set1_epi32(3), l7 = _mm256_set1_epi32(7);
    const __m256i back = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
    __m256i carry = _mm256_set1_epi32(check ? (int)*top : 0), fail = zero;
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i t = _mm256_sub_epi32(x, vlo), y;
        if (__builtin_expect(_mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(t, vlast), vlast)) == -1, 1))
            y = _mm256_add_epi32(x, vc);
        else   /* some index outside the stretch (a road's first and last rows): looked up */
            y = _mm256_i32gather_epi32((const int *)remap, x, 4);
        if (check) {
            __m256i y1 = _mm256_add_epi32(y, one);
            /* Each lane's largest y + 1 up to it, then up to the lane before. */
            __m256i p = _mm256_max_epu32(y1, _mm256_slli_si256(y1, 4));
            p = _mm256_max_epu32(p, _mm256_slli_si256(p, 8));
            p = _mm256_max_epu32(p, _mm256_blend_epi32(zero, _mm256_permutevar8x32_epi32(p, l3), 0xF0));
            __m256i e = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(p, back), zero, 0x01);
            __m256i m = _mm256_max_epu32(e, carry);
            fail = _mm256_or_si256(fail, _mm256_xor_si256(_mm256_max_epu32(y, m), m));   /* nonzero: y > m */
            carry = _mm256_max_epu32(carry, _mm256_permutevar8x32_epi32(p, l7));
        }
        _mm256_storeu_si256((__m256i *)(d + i), y);
    }
    if (check) {
        *top = (uint32_t)_mm256_cvtsi256_si32(carry);
        if (!_mm256_testz_si256(fail, fail)) *bad = true;
    }
    return i;
}
__attribute__((target("avx2"))) static uint32_t pm__remap_run_avx2(const uint32_t *q, uint32_t n, const uint32_t *remap,
                                                                   uint32_t lo, uint32_t len, uint32_t c,
                                                                   uint32_t *d, uint32_t *top, bool *bad) {
    return pm__remap_lanes(q, n, remap, lo, len, c, d, true, top, bad);
}
/* pm__remap_run_avx2 without the check: for indices already known to
 * pass it (pm__road_memo). */
__attribute__((target("avx2"))) static uint32_t pm__remap_only_avx2(const uint32_t *q, uint32_t n, const uint32_t *remap,
                                                                    uint32_t lo, uint32_t len, uint32_t c, uint32_t *d) {
    return pm__remap_lanes(q, n, remap, lo, len, c, d, false, NULL, NULL);
}
/* remap[0, n) numbered id, id + 1, ..., eight at a time; returns how
 * many (the rest: fewer than eight). */
__attribute__((target("avx2"))) static uint32_t pm__iota_avx2(uint32_t *remap, uint32_t n, uint32_t id) {
    const __m256i step = _mm256_set1_epi32(8);
    __m256i ids = _mm256_add_epi32(_mm256_set1_epi32((int)id), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    uint32_t v = 0;
    for (; v + 8 <= n; v += 8) {
        _mm256_storeu_si256((__m256i *)(remap + v), ids);
        ids = _mm256_add_epi32(ids, step);
    }
    return v;
}
#endif

/* The last road whose guess held: its indices and its mouths' vertices
 * (sorted, once each, then its vertex count). The check's verdict depends
 * on these alone (the new vertices are numbered nv + their rank among the
 * road's vertices not mapped, the mapped ones go below nv, where the check
 * never fails and top starts), so a road with the very same ones (many in
 * a town: roads of one length and detail) holds too, unchecked. */
typedef struct pm__road_memo {
    const uint32_t *q;
    uint32_t n, nu, mk[5];
    /* The last road's UVs and pm__sections' answer for them (a function
     * of the UVs alone). */
    const float *uv;
    uint32_t un, s0[3], s1[3];
    bool ok[2];
} pm__road_memo;

static bool pm__emit_in_order(pm_scene *s, pm_prim *A, const pm_prim *P, uint32_t *restrict remap,
                              const uint32_t *mapped, uint32_t nmapped, pm__road_memo *memo) {
    uint32_t nv = A->vcount, ni = A->icount, n = P->icount, pv = P->vcount;
    const float *restrict src = P->positions;
    float *restrict pos = A->positions;
    /* The mouths' vertices (the only ones mapped yet) sorted, once each,
     * then pv: the stretches of new vertices lie between them. */
    uint32_t mk[5], nm = 0;
    for (uint32_t j = 0; j < nmapped; j++) {
        uint32_t v = mapped[j], k = nm;
        for (; k > 0 && mk[k - 1] > v; k--) mk[k] = mk[k - 1];
        mk[k] = v;
        nm++;
    }
    uint32_t nu = 0;
    for (uint32_t j = 0; j < nm; j++)
        if (nu == 0 || mk[j] != mk[nu - 1]) mk[nu++] = mk[j];
    mk[nu++] = pv;
    uint32_t id = nv, lo = 0, len = 0, run = 0;   /* run: where the current stretch starts */
    for (uint32_t j = 0; j < nu; j++) {
        uint32_t end = mk[j], k = 0;
        if (end > run) {
#if PM__STITCH_AVX2
            if (!PM__STITCH_PLAIN && __builtin_cpu_supports("avx2")) k = pm__iota_avx2(remap + run, end - run, id);
#endif
            for (; k < end - run; k++) remap[run + k] = id + k;
            memcpy(pos + 3 * (size_t)id, src + 3 * (size_t)run, 3 * (size_t)(end - run) * sizeof *pos);
            if (end - run > len) lo = run, len = end - run;
            id += end - run;
        }
        run = end + 1;
    }
#if !PM__STITCH_AVX2
    (void)lo;   /* (the stretch is the lanes') */
#endif
    const uint32_t *restrict q = P->indices;
    uint32_t *restrict d = A->indices + ni;
    uint32_t top = nv;   /* one past the largest index so far (at least nv) */
    bool bad = false;
    uint32_t i = 0;
    bool known = memo->q && memo->n == n && memo->nu == nu && memcmp(memo->mk, mk, nu * sizeof *mk) == 0 &&
                 memcmp(memo->q, q, (size_t)n * sizeof *q) == 0;
    if (known) {
#if PM__STITCH_AVX2
        if (len && !PM__STITCH_PLAIN && __builtin_cpu_supports("avx2"))
            i = pm__remap_only_avx2(q, n, remap, lo, len, remap[lo] - lo, d);
#endif
        for (; i < n; i++) d[i] = remap[q[i]];
        top = id;
    } else {
#if PM__STITCH_AVX2
        if (len && !PM__STITCH_PLAIN && __builtin_cpu_supports("avx2"))
            i = pm__remap_run_avx2(q, n, remap, lo, len, remap[lo] - lo, d, &top, &bad);
#endif
        for (; i < n; i++) {   /* the rest (all of them without the lanes) */
            uint32_t x = remap[q[i]];
            d[i] = x;
            bad |= x > top;
            top = x >= top ? x + 1 : top;
        }
    }
    if (bad || top != id) {
        for (uint32_t v = 0; v < pv; v++)
            if (remap[v] != PM__NONE && remap[v] >= nv) remap[v] = PM__NONE;
        return false;
    }
    if (!known) {
        memo->q = q, memo->n = n, memo->nu = nu;
        memcpy(memo->mk, mk, nu * sizeof *mk);
    }
    /* The new vertices' normals and UVs are left as they are (the plain
     * path zeroes them): nothing reads them before pm__stitch_all writes
     * every vertex's UV (planar) and normal (pm_prim_compute_normals); a
     * second pass over those pages was all the zeroing did. */
    if (A->colors) memset(A->colors + 4 * (size_t)nv, 0, 4 * (size_t)(id - nv) * sizeof *A->colors);
    if (n) {
        s->validated = false;
        A->normals_unit = false;
    }
    A->vcount = id;
    A->icount = ni + n;
    return true;
}

/* pm__emit_pieces' loop for a road of one edge with no aliases (not a
 * welded ring) and room for all of its vertices and triangles in A: every
 * triangle is that edge's, each corner's vertex appended at its first use
 * (a copy of its position; normals and UVs zero, as pm__emit leaves them)
 * and the triangle after its corners, as the plain loop does, without a
 * call, a capacity test or an alias test per vertex. */
static void pm__emit_one_piece(pm_scene *s, pm_prim *A, const pm_prim *P, uint32_t *restrict remap) {
    /* (The arrays in restrict locals: stores through A's would make the
     * compiler reload them per index.) */
    uint32_t nv = A->vcount, ni = A->icount, n = P->icount;
    const uint32_t *restrict q = P->indices;
    const float *restrict src = P->positions;
    uint32_t *restrict d = A->indices;
    float *restrict pos = A->positions, *restrict nrm = A->normals, *restrict uv = A->uvs, *restrict rgba = A->colors;
    uint32_t nv0 = nv;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = q[i], o = remap[v];
        if (o == PM__NONE) {
            o = remap[v] = nv;
            memcpy(pos + 3 * (size_t)nv, src + 3 * (size_t)v, 3 * sizeof *pos);
            nv++;
        }
        d[ni++] = o;
    }
    /* The new vertices' other attributes zero, in one go each. */
    size_t added = nv - nv0;
    if (nrm) memset(nrm + 3 * (size_t)nv0, 0, 3 * added * sizeof *nrm);
    if (uv) memset(uv + 2 * (size_t)nv0, 0, 2 * added * sizeof *uv);
    if (rgba) memset(rgba + 4 * (size_t)nv0, 0, 4 * added * sizeof *rgba);
    if (n) {
        s->validated = false;
        A->normals_unit = false;
    }
    A->vcount = nv;
    A->icount = ni;
}

/* The road's triangles edge by edge of its chain (each edge's vertices and
 * triangles then form ranges), vertices in order of first use. */
static int pm__emit_pieces(pm__net *N, pm_scene *s, pm__road *R, const pm_prim *P, uint32_t *remap,
                           const uint32_t *alias, bool weld, const uint32_t *mapped, uint32_t nmapped,
                           pm__road_memo *memo) {
    pm_prim *A = &s->prims[0];
    uint32_t nt = P->icount / 3;
    R->piece = pm_arena_calloc(N->a, 4 * R->nsteps, sizeof *R->piece);
    R->piece_len = pm_arena_calloc(N->a, R->nsteps, sizeof *R->piece_len);
    if (!R->piece || !R->piece_len) return PM_ERR_NOMEM;
    /* A road of one edge: every triangle is that edge's and its piece is the
     * whole road (what pm__network_pieces finds for it), without a
     * per-triangle array; tri_edge NULL reads as all 0. */
    uint32_t *tri_edge = NULL;
    int rc = PM_OK;
    if (R->nsteps == 1 && !PM__STITCH_PLAIN) {
        R->piece_len[0] = R->length;
    } else {
        tri_edge = pm_arena_alloc(N->tmp, (nt + 1) * sizeof *tri_edge);
        if (!tri_edge) return PM_ERR_NOMEM;
        rc = pm__network_pieces(N, R, P, tri_edge, R->piece_len);
    }
    R->voff = A->vcount;
    R->toff = A->icount / 3;
    /* The vertices it can add: its own but those mapped onto mouths (the
     * room pm__add_prims left for it). */
    uint32_t fresh = P->vcount;
    for (uint32_t j = 0; j < nmapped; j++) {
        bool again = false;
        for (uint32_t k = 0; k < j; k++) again |= mapped[k] == mapped[j];
        fresh -= !again;
    }
    if (rc == PM_OK && R->nsteps == 1 && !weld && !PM__STITCH_PLAIN && A->vcap - A->vcount >= fresh &&
        A->icap - A->icount >= P->icount) {
        if (!pm__emit_in_order(s, A, P, remap, mapped, nmapped, memo)) pm__emit_one_piece(s, A, P, remap);
        R->piece[0] = R->voff;
        R->piece[1] = A->vcount - R->voff;
        R->piece[2] = R->toff;
        R->piece[3] = A->icount / 3 - R->toff;
        R->vcount = A->vcount - R->voff;
        R->tcount = A->icount / 3 - R->toff;
        return PM_OK;
    }
    for (uint32_t k = 0; rc == PM_OK && k < R->nsteps; k++) {
        uint32_t v0 = A->vcount, t0 = A->icount / 3;
        for (uint32_t t = 0; rc == PM_OK && t < nt; t++) {
            if ((tri_edge ? tri_edge[t] : 0) != k) continue;
            const uint32_t *q = P->indices + 3 * t;
            uint32_t o[3];
            for (int c = 0; c < 3 && rc == PM_OK; c++) {
                o[c] = remap[q[c]];
                if (o[c] != PM__NONE) continue;    /* most corners: a vertex already out */
                rc = pm__emit(s, A, P, q[c], remap, alias);
                o[c] = remap[q[c]];
            }
            if (rc == PM_OK && pm_prim_add_tri(s, A, o[0], o[1], o[2])) rc = PM_ERR_NOMEM;
        }
        R->piece[4 * k] = v0;
        R->piece[4 * k + 1] = A->vcount - v0;
        R->piece[4 * k + 2] = t0;
        R->piece[4 * k + 3] = A->icount / 3 - t0;
    }
    R->vcount = A->vcount - R->voff;
    R->tcount = A->icount / 3 - R->toff;
    return rc;
}

/* pm__sections, or its answer for the last road when P's UVs are that
 * road's very floats (roads of one length along a grid). */
static void pm__sections_memo(const pm_prim *P, pm__road_memo *memo, uint32_t s0[3], uint32_t s1[3], bool ok[2]) {
    if (!PM__STITCH_PLAIN && memo->uv && memo->un == P->vcount &&
        memcmp(memo->uv, P->uvs, 2 * (size_t)P->vcount * sizeof *P->uvs) == 0) {
        memcpy(s0, memo->s0, sizeof memo->s0), memcpy(s1, memo->s1, sizeof memo->s1);
        ok[0] = memo->ok[0], ok[1] = memo->ok[1];
        return;
    }
    pm__sections(P, s0, s1, ok);
    memo->uv = P->uvs, memo->un = P->vcount;
    memcpy(memo->s0, s0, sizeof memo->s0), memcpy(memo->s1, s1, sizeof memo->s1);
    memo->ok[0] = ok[0], memo->ok[1] = ok[1];
}

/* One road into the asphalt: its end sections replaced by the mouths'
 * vertices (the centre column kept, moved to the mouth's midpoint). */
static int pm__stitch_road(pm__net *N, pm_scene *s, pm__road *R, pm__road_memo *memo) {
    const pm_prim *P = R->asphalt;
    pm_prim *A = &s->prims[0];
    pm_arena_reset(N->tmp);   /* the road's working arrays: until the next road */
    uint32_t *remap = pm_arena_alloc(N->tmp, (P->vcount ? P->vcount : 1) * sizeof *remap);
    uint32_t *alias = pm_arena_alloc(N->tmp, (P->vcount ? P->vcount : 1) * sizeof *alias);
    if (!remap || !alias) return PM_ERR_NOMEM;
    memset(remap, 0xFF, (size_t)P->vcount * sizeof *remap);   /* PM__NONE */
    memset(alias, 0xFF, (size_t)P->vcount * sizeof *alias);
    uint32_t sec0[3], sec1[3];
    bool sec_ok[2];
    pm__sections_memo(P, memo, sec0, sec1, sec_ok);
    const pm__node *J0 = R->arm0 >= 0 ? &N->nodes[R->start] : NULL;
    const pm__node *J1 = R->arm1 >= 0 ? &N->nodes[R->end] : NULL;
    if (J0 && !(sec_ok[0] &&
                pm__map_end(N, A, P, sec0, J0->voff + J0->mouth_l[R->arm0],
                            J0->voff + J0->mouth_r[R->arm0], remap))) {
        pm__seam_problem(N, R, 0);
        return PM_OK;
    }
    /* Entering the junction, the road's left is the mouth's right. */
    if (J1 && !(sec_ok[1] &&
                pm__map_end(N, A, P, sec1, J1->voff + J1->mouth_r[R->arm1],
                            J1->voff + J1->mouth_l[R->arm1], remap))) {
        pm__seam_problem(N, R, 1);
        return PM_OK;
    }
    /* A closed road repeats its first section at the end (its own U runs
     * on); here UVs are planar, so the two are one. */
    bool weld = R->closed && sec_ok[0] && sec_ok[1];
    if (weld)
        for (int c = 0; c < 3; c++) alias[sec1[c]] = sec0[c];
    uint32_t mapped[4], nmapped = 0;   /* what pm__map_end mapped */
    if (J0) mapped[nmapped++] = sec0[0], mapped[nmapped++] = sec0[2];
    if (J1) mapped[nmapped++] = sec1[0], mapped[nmapped++] = sec1[2];
    int rc = pm__emit_pieces(N, s, R, P, remap, alias, weld, mapped, nmapped, memo);
    /* The centre of a seam is always used by the road's triangles; should
     * it not be, it still has to exist for the junction's split. */
    if (rc == PM_OK && J0) rc = pm__emit(s, A, P, sec0[1], remap, alias);
    if (rc == PM_OK && J1) rc = pm__emit(s, A, P, sec1[1], remap, alias);
    if (rc) return rc;
    if (J0) {
        for (int c = 0; c < 3; c++) R->seam0[c] = remap[sec0[c]];
        pm__midpoint(A, R->seam0[1], R->seam0[0], R->seam0[2]);
        N->nodes[R->start].split[R->arm0] = R->seam0[1];
    }
    if (J1) {
        for (int c = 0; c < 3; c++) R->seam1[c] = remap[sec1[c]];
        pm__midpoint(A, R->seam1[1], R->seam1[0], R->seam1[2]);
        N->nodes[R->end].split[R->arm1] = R->seam1[1];
    }
    rc = pm__network_road_sides(N, R, P, remap, A);
    if (rc == PM_ERR_GEOMETRY) {
        pm_network_problem *q;
        if (pm__network_problem(N, &q)) return PM_OK;
        q->error = PM_NETWORK_SIDEWALK;
        q->node = -1;
        q->edges[q->nedges++] = N->steps.data[R->first_step].edge;
        snprintf(q->message, sizeof q->message, "the road along edge %u folds so tightly that its "
                 "edge has no single curb line for a sidewalk: give it gentler curves",
                 q->edges[0]);
        return PM_OK;
    }
    return rc;
}

/* The triangle holding directed edge a -> b among [t0, t1) and [e0, e1),
 * and through *rot the corner where that edge starts. */
static int64_t pm__find_edge(const pm_prim *A, uint32_t t0, uint32_t t1, uint32_t e0, uint32_t e1,
                             uint32_t a, uint32_t b, int *rot) {
    for (int pass = 0; pass < 2; pass++) {
        uint32_t lo = pass ? e0 : t0, hi = pass ? e1 : t1;
        for (uint32_t t = lo; t < hi; t++) {
            const uint32_t *q = A->indices + 3 * t;
            /* Corners in order 0, 1, 2: the first that starts the edge. */
            int r = q[0] == a && q[1] == b ? 0 : q[1] == a && q[2] == b ? 1 : q[2] == a && q[0] == b ? 2 : -1;
            if (r >= 0) { *rot = r; return t; }
        }
    }
    return -1;
}

/* Splits each junction's mouth-edge triangle at the road's centre vertex,
 * so the junction's side of the seam has the road's two edges. */
static int pm__split_mouths(pm__net *N, pm_scene *s) {
    pm_prim *A = &s->prims[0];
    for (size_t n = 0; n < N->p->nnodes; n++) {
        pm__node *V = &N->nodes[n];
        if (!V->scene) continue;
        uint32_t e0 = A->icount / 3;
        for (uint32_t k = 0; k < V->deg; k++) {
            uint32_t c = V->split[k];
            if (c == PM__NONE) continue;
            uint32_t l = V->voff + V->mouth_l[k], r = V->voff + V->mouth_r[k];
            int rot = 0;
            int64_t t = pm__find_edge(A, V->toff, V->toff + V->tcount, e0, A->icount / 3, r, l, &rot);
            if (t < 0) return PM_ERR_GEOMETRY;
            uint32_t x = A->indices[3 * t + (rot + 2) % 3];
            A->indices[3 * t] = r;
            A->indices[3 * t + 1] = c;
            A->indices[3 * t + 2] = x;
            if (pm_prim_add_tri(s, A, c, l, x)) return PM_ERR_NOMEM;
        }
        V->xt0 = e0;
        V->xtn = A->icount / 3 - e0;
    }
    return PM_OK;
}

static int pm__add_prims(pm__net *N, pm_scene *s, bool *sidewalks) {
    uint64_t nv = 0, nt = 0;
    *sidewalks = false;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm_scene *J = N->nodes[n].scene;
        if (!J) continue;
        nv += J->prims[0].vcount;
        nt += J->prims[0].icount / 3 + N->nodes[n].deg;
        if (pm__prim_index(J, "curb") >= 0) *sidewalks = true;
    }
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        /* A road's end at a junction adds no left and right vertex there
         * (the mouth's are used), a welded ring no last section. */
        uint32_t shared = 2 * (R->arm0 >= 0) + 2 * (R->arm1 >= 0) + 3 * R->closed;
        uint32_t rv = R->asphalt->vcount;
        nv += rv > shared ? rv - shared : 0;
        nt += R->asphalt->icount / 3;
        if (N->p->edges[N->steps.data[R->first_step].edge].has_sidewalk) *sidewalks = true;
    }
    if (nv >= UINT32_MAX / 4 || nt >= UINT32_MAX / 4) return PM_ERR_LIMIT;
    /* Exactly the counts summed (the triangles' bound: a junction's split
     * mouths add at most one each; the vertices' without those a road
     * shares with its mouths or its own start), not rounded up to a power
     * of two: the asphalt is the network's biggest array, and its slack
     * was touched memory (the next array's pages; the shared vertices
     * alone were 0.4 MB of the 40 x 40 town's 9.5). A road that does not
     * share them (a ring not welded) grows the arrays: the same bytes. */
    /* With sidewalks the asphalt's and the sidewalk's normals and planar
     * UVs are computed last (pm__network_late), after the overlap check's
     * arrays are given back: their pages take them. (Without, the check's
     * one array is where the encoder's text grows in place.) */
    unsigned late = *sidewalks ? PM_PRIM_LATE_NORMALS | PM_PRIM_LATE_UVS : 0;
    pm_prim *A = pm_scene_add_prim(s, "asphalt", "asphalt", PM_PRIM_UV | late, 1, 3);
    if (!A || pm_prim_reserve(s, A, (uint32_t)nv, (uint32_t)(3 * nt))) return PM_ERR_NOMEM;
    if (*sidewalks && (!pm_scene_add_prim(s, "curb", "curb", PM_PRIM_UV, 0, 0) ||
                       !pm_scene_add_prim(s, "sidewalk", "sidewalk", PM_PRIM_UV | late, 0, 0)))
        return PM_ERR_NOMEM;
    return PM_OK;
}

static int pm__stitch_junction(pm_scene *s, pm__node *V) {
    uint32_t off;
    for (uint32_t k = 0; k < V->deg; k++) V->split[k] = PM__NONE;
    int rc = pm__append(s, 0, &V->scene->prims[0], &off);
    if (rc) return rc;
    V->voff = off;
    V->vcount = V->scene->prims[0].vcount;
    V->tcount = V->scene->prims[0].icount / 3;
    V->toff = s->prims[0].icount / 3 - V->tcount;
    V->swt0 = V->swtn = 0;
    return PM_OK;
}

/* The junctions' curbs and sidewalks, in node order, ahead of the roads'
 * slabs: each primitive sized once for all of them and the roads' (the
 * road sides are known by now), so that it is not copied as it grows. */
static int pm__stitch_slabs(pm__net *N, pm_scene *s) {
    static const char *const names[2] = {"curb", "sidewalk"};
    uint64_t v[2], t[2];
    pm__network_sidewalk_bound(N, v, t);
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm_scene *J = N->nodes[n].scene;
        for (uint32_t i = 0; J && i < 2; i++) {
            int64_t k = pm__prim_index(J, names[i]);
            if (k < 0) continue;
            v[i] += J->prims[k].vcount;
            t[i] += J->prims[k].icount / 3;
        }
    }
    for (uint32_t i = 0; i < 2; i++)
        if (v[i] < UINT32_MAX / 4 && t[i] < UINT32_MAX / 12 &&
            pm_prim_reserve(s, &s->prims[1 + i], (uint32_t)v[i], (uint32_t)(3 * t[i])))
            return PM_ERR_NOMEM;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        pm__node *V = &N->nodes[n];
        if (!V->scene) continue;
        V->swt0 = s->prims[2].icount / 3;
        for (uint32_t i = 0; i < 2; i++) {
            int64_t k = pm__prim_index(V->scene, names[i]);
            uint32_t off;
            int rc = k >= 0 ? pm__append(s, 1 + i, &V->scene->prims[k], &off) : PM_OK;
            if (rc) return rc;
        }
        V->swtn = s->prims[2].icount / 3 - V->swt0;
    }
    /* The junctions' curb faces summed into the normals now; the roads'
     * are as they are made (network_sidewalk.c's pm__wall). */
    N->curb_nt = s->prims[1].icount / 3;
    pm_prim_normals_sum(&s->prims[1], 0, N->curb_nt);
    return PM_OK;
}

static int pm__stitch_all(pm__net *N, pm_scene **out);

void pm__network_drop_chains(pm__net *N) {
    if (!N->sides) return;
    for (size_t r = 0; r < N->roads.len; r++) N->roads.data[r].chain[0] = N->roads.data[r].chain[1] = NULL;
    pm_arena_destroy(N->sides);
    N->sides = NULL;
}

int pm__network_stitch(pm__net *N, pm_scene **out) {
    /* The working arrays of one road or one sidewalk side at a time, in a
     * scratch arena: they go back to the job's arena as they end instead
     * of staying until the job does. */
    N->tmp = pm_arena_create_scratch(N->a);
    int rc = N->tmp ? pm__stitch_all(N, out) : PM_ERR_NOMEM;
    pm_arena_destroy(N->tmp);
    N->tmp = NULL;
    return rc;
}

#if PM__STITCH_AVX2
/* Eight vertices at a time: their 24 floats in three loads, x and z
 * picked out by lane permutes, then per lane the same widening, multiply
 * and rounding as the loop below (the same bits); returns how many it
 * did. */
__attribute__((target("avx2"))) static uint32_t pm__planar_uvs_avx2(const float *pos, float *uv, uint32_t n,
                                                                    double sc) {
    const __m256d s = _mm256_set1_pd(sc);
    /* Floats 0-7: x0 y0 z0 x1 y1 z1 x2 y2, 8-15: z2 x3 y3 z3 x4 y4 z4 x5,
     * 16-23: y5 z5 x6 y6 z6 x7 y7 z7. */
    const __m256i xa = _mm256_setr_epi32(0, 3, 6, 0, 0, 0, 0, 0), xb = _mm256_setr_epi32(0, 0, 0, 1, 4, 7, 0, 0);
    const __m256i xc = _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 2, 5), za = _mm256_setr_epi32(2, 5, 0, 0, 0, 0, 0, 0);
    const __m256i zb = _mm256_setr_epi32(0, 0, 0, 3, 6, 0, 0, 0), zc = _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 4, 7);
    uint32_t v = 0;
    for (; v + 8 <= n; v += 8) {
        const float *q = pos + 3 * (size_t)v;
        __m256 a = _mm256_loadu_ps(q), b = _mm256_loadu_ps(q + 8), c = _mm256_loadu_ps(q + 16);
        __m256 x = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, xa), _mm256_permutevar8x32_ps(b, xb), 0x38),
                                   _mm256_permutevar8x32_ps(c, xc), 0xC0);
        __m256 z = _mm256_blend_ps(_mm256_blend_ps(_mm256_permutevar8x32_ps(a, za), _mm256_permutevar8x32_ps(b, zb), 0x1C),
                                   _mm256_permutevar8x32_ps(c, zc), 0xE0);
        __m128 x0 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), s));
        __m128 x1 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), s));
        __m128 z0 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(z)), s));
        __m128 z1 = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(z, 1)), s));
        float *o = uv + 2 * (size_t)v;
        _mm_storeu_ps(o, _mm_unpacklo_ps(x0, z0));
        _mm_storeu_ps(o + 4, _mm_unpackhi_ps(x0, z0));
        _mm_storeu_ps(o + 8, _mm_unpacklo_ps(x1, z1));
        _mm_storeu_ps(o + 12, _mm_unpackhi_ps(x1, z1));
    }
    return v;
}
#endif

/* UV = (x, z) * scale for every vertex (planar). The scale and arrays in
 * locals: written through p->uvs, N->p->uv_scale would be reloaded per
 * vertex. */
static void pm__planar_uvs(pm_prim *p, double sc) {
    const float *restrict pos = p->positions;
    float *restrict uv = p->uvs;
    uint32_t v0 = 0;
#if PM__STITCH_AVX2
    if (!PM__STITCH_PLAIN && __builtin_cpu_supports("avx2")) v0 = pm__planar_uvs_avx2(pos, uv, p->vcount, sc);
#endif
    for (uint32_t v = v0, n = p->vcount; v < n; v++) {
        uv[2 * (size_t)v] = (float)((double)pos[3 * (size_t)v] * sc);
        uv[2 * (size_t)v + 1] = (float)((double)pos[3 * (size_t)v + 2] * sc);
    }
}

static int pm__stitch_all(pm__net *N, pm_scene **out) {
    pm_scene *s = pm_scene_create(N->a);
    if (!s) return PM_ERR_NOMEM;
    bool sidewalks;
    N->curb_nt = 0;
    int rc = pm__add_prims(N, s, &sidewalks);
    /* The side chains in an arena of their own, given back after the last
     * check (pm_network_generate): the pages of their 1 MB on the 40 x 40
     * town then take the metadata's. */
    pm__network_drop_chains(N);   /* the last round's */
    if (rc == PM_OK && sidewalks && !(N->sides = pm_arena_create_child(N->a))) rc = PM_ERR_NOMEM;
    for (size_t n = 0; rc == PM_OK && n < N->p->nnodes; n++)
        if (N->nodes[n].scene) rc = pm__stitch_junction(s, &N->nodes[n]);
    pm__road_memo memo = {NULL, 0, 0, {0}, NULL, 0, {0}, {0}, {false, false}};
    for (size_t r = 0; rc == PM_OK && r < N->roads.len; r++) rc = pm__stitch_road(N, s, &N->roads.data[r], &memo);
    /* The roads' copies have no other reader: given back before the
     * curb's and sidewalk's big arrays are taken, the first of which then
     * takes their pages instead of fresh ones (a round that cuts
     * sidewalks back builds them again: network.c). */
    for (size_t r = 0; r < N->roads.len; r++) N->roads.data[r].asphalt = NULL;
    pm_arena_destroy(N->copies);
    N->copies = NULL;
    if (rc == PM_OK && N->problems.len) return PM_OK;     /* reported by the caller */
    if (rc == PM_OK) rc = pm__split_mouths(N, s);
    if (rc == PM_OK && s->nprims == 3) rc = pm__stitch_slabs(N, s);
    if (rc == PM_OK && s->nprims == 3) rc = pm__network_sidewalks(N, s);
    if (rc == PM_OK && N->problems.len) return PM_OK;     /* reported by the caller */
    if (rc) return rc;
    if (s->nprims == 3) pm_prim_normals_finish(&s->prims[1], N->curb_nt);
    /* One UV scheme for the whole surface: a seam vertex can carry only one
     * UV, and planar UVs are the scheme that is continuous across seams
     * (with sidewalks, pm__network_late writes them). */
    if (s->prims[0].uvs) pm__planar_uvs(&s->prims[0], N->p->uv_scale);
    *out = s;
    return PM_OK;
}

int pm__network_late(pm_scene *s, double uv_scale) {
    /* The asphalt's (prims[0]) and, with sidewalks, the sidewalk's
     * (prims[2]; the curb's, prims[1], are summed as it is made:
     * pm__stitch_all finishes them). The bands' UVs are planar over the
     * whole network like the asphalt's, so they run on across
     * junction/road seams: every band vertex's UV and normal is written
     * here (the roads' slabs leave them to this: network_sidewalk.c's
     * pm__band_vertices_fast). */
    pm_prim *late[2] = {&s->prims[0], s->nprims == 3 ? &s->prims[2] : NULL};
    for (int i = 0; i < 2 && late[i]; i++) {
        bool uvs = late[i]->flags & PM_PRIM_LATE_UVS;
        if (pm_prim_late_uvs(s, late[i]) || pm_prim_late_normals(s, late[i])) return PM_ERR_NOMEM;
        if (uvs) pm__planar_uvs(late[i], uv_scale);
        pm_prim_compute_normals(late[i]);
    }
    return PM_OK;
}
