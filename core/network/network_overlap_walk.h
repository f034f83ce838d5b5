/* A road with a sidewalk shown by its rows and its bands: part of
 * network_overlap.c, included there once after the strip path (it uses
 * that file's statics; not a header for anyone else).
 *
 * A road with a sidewalk is most often its asphalt strip of two column
 * pairs (pm__strip_rows2) and, per side, pieces of band over sections
 * lo .. hi of the side's chain (R->chain: the asphalt's outer column, row
 * by row), each step i -> i + 1 two triangles as network_sidewalk.c's
 * pm__band_emit makes them, (ia, ob, ib), (ia, oa, ob) or (ia, oa, ib),
 * (ib, oa, ob), over the band's inner vertices (the curb's: the plan
 * points of the sections' asphalt vertices) and its outer ones. The
 * summed way (pm__road_summed, pm__seam_loop) sums each primitive's edges
 * by index, gives each plan point an id, cancels the twins on the seam
 * and walks what is left once round. When
 *  - the asphalt is such a strip, every triangle turning one way, its
 *    border with each vertex once (so its edges are what its sum leaves;
 *    seen from its rows when they rise, else vertex by vertex),
 *  - every band triangle turns one way (exactly), its steps in the
 *    pattern above, its vertices rising (so all different, and pieces
 *    share none), its inner points those of its sections' asphalt
 *    vertices (the same floats), which the asphalt's border passes the
 *    other way round, no two pieces on one stretch of it,
 * then the directed edges of all the triangles, summed by plan point,
 * are exactly the loop L: the asphalt's border with each piece's seam
 * replaced by its outer points. Whatever the road's shape: turned,
 * curved, not convex. When L is simple (two chains rising along the
 * road, else pm_loop_convex, else pm_loop_simple, as the summed way
 * asks), no two triangles overlap
 * (the certificate of geom/plan_boundary.h), so no two edges the sum
 * gathers are the same points the same way (each has a triangle on its
 * left), its cancelling never fails and what it walks is L from another
 * start: the same verdict (simple or not does not depend on the start),
 * the same bounds (its points'; the sum takes a point's floats from the
 * first vertex met, so a zero's sign could differ: bounds on a zero go
 * the summed way). Anything else (a band ear-clipped or of one triangle a
 * step, L not shown simple, the sum's own limits: its far list, its
 * windows' size) goes the summed way, which decides it
 * (tests/core/test_network_overlap_walk.c compares the two on every road
 * this decides, with defects put in too). */
#ifdef __SSE2__
#ifndef PM__SEAM5_ON            /* (tests/core/test_network_overlap_bent.c turns it off now and then) */
#define PM__SEAM5_ON 1
#endif
#ifndef PM__WALK_CHAINS          /* (tests/core/test_network_overlap_walk.c turns it off now and then) */
#define PM__WALK_CHAINS pm__two_chains
#endif
#ifndef PM__WALK                 /* (tests/core/test_network_overlap_walk.c: checks each against the sum) */
#define PM__WALK pm__road_walk
#endif

/* One band piece: its sections lo .. hi on side, its outer vertices
 * out[first .. first + hi - lo] (section lo first). */
typedef struct pm__bpiece { uint32_t side, lo, hi, first; } pm__bpiece;

/* The sign of pm_orient2d_fast over triangle q's plan points (0: flat). */
static int pm__tri_turn(const float *pos, const uint32_t *q) {
    const float *a = pos + 3 * (size_t)q[0], *b = pos + 3 * (size_t)q[1], *c = pos + 3 * (size_t)q[2];
    double A[2] = {a[0], a[2]}, B[2] = {b[0], b[2]}, D[2] = {c[0], c[2]};
    double o = pm_orient2d_fast(A, B, D);
    return (o > 0) - (o < 0);
}

/* Whether triangles u and v (of pos) both turn the way s says, exactly:
 * two lanes at once (pm__turn2), the scalar way when a lane is not sure. */
static bool pm__turns2(const float *pos, const uint32_t *u, const uint32_t *v, int s) {
    const float *a = pos + 3 * (size_t)u[0], *b = pos + 3 * (size_t)u[1], *c = pos + 3 * (size_t)u[2];
    const float *d = pos + 3 * (size_t)v[0], *e = pos + 3 * (size_t)v[1], *f = pos + 3 * (size_t)v[2];
    int sure = pm__turn2(_mm_set_pd(d[0], a[0]), _mm_set_pd(d[2], a[2]), _mm_set_pd(e[0], b[0]),
                         _mm_set_pd(e[2], b[2]), _mm_set_pd(f[0], c[0]), _mm_set_pd(f[2], c[2]),
                         _mm_set1_pd(s > 0 ? 0.0 : -0.0));
    return sure == 3 || (pm__tri_turn(pos, u) == s && pm__tri_turn(pos, v) == s);
}

/* Whether plan points p and q are the same (the floats equal: what the
 * sum's point table takes for one point). */
static bool pm__same_xz(const float *p, const float *q) { return p[0] == q[0] && p[2] == q[2]; }

/* Whether a road's asphalt ranges rg[0 .. n - 1) come one after another
 * from its first, every triangle owned (pm__road_strip's condition):
 * then its *t triangles from *t0. */
static bool pm__walk_asphalt(const pm__ov *O, const pm__range *rg, size_t n, uint32_t *t0, uint32_t *t) {
    *t0 = rg[0].ref0, *t = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (rg[i].ref0 != *t0 + *t) return false;
        const uint32_t *own = O->own + rg[i].ref0, part = rg[i].part;
        uint32_t other = 0;
        for (uint32_t c = 0; !O->roads_apart && c < rg[i].count; c++) other |= own[c] ^ part;
        if (other) return false;
        *t += rg[i].count;
    }
    return true;
}

/* Reads road r's sidewalk triangles (range S) as band pieces, the plain
 * way (pm__bands' reference: tests/core/test_network_overlap_walk.c
 * compares pm__bands_laid with it). */
static bool pm__bands_plain(const pm__ov *O, uint32_t r, const pm__range *S, pm__bpiece *pc, uint32_t *np,
                            uint32_t *out, int *turn, uint32_t *far, uint32_t *span) {
    const pm__net *N = O->N;
    const pm__road *R = &N->roads.data[r];
    const pm_prim *Q = &O->sc->prims[2], *A = &O->sc->prims[0];
    const uint32_t *own = O->own + O->na;
    const pm__swsrc *src = N->swsrc.data;
    uint32_t k = S->ref0 & ~PM__SW, end = k + S->count, nout = 0, ib = 0, ob = 0, first = 0, side = 2, at = 0;
    const uint32_t *chain = NULL;
    pm__bpiece *P = NULL;
    int sb = 0;
    *np = 0;
    /* (Each step's source only says where to look on the chain: what is
     * taken from it is checked, its twins' floats, its steps' vertices.) */
    for (; k + 1 < end; k += 2) {
        const pm__swsrc *c = &src[k];
        if (own[k] != S->part || own[k + 1] != S->part || c->hi != c->lo + 1 || c->side > 1 ||
            c->hi >= R->nchain[c->side])
            return false;
        const uint32_t *u = Q->indices + 3 * (size_t)k, *v = u + 3;
        uint32_t ia, oa, nb, nob;
        if (u[0] == v[0] && u[1] == v[2]) ia = u[0], nob = u[1], nb = u[2], oa = v[1];
        else if (u[2] == v[0] && u[1] == v[1]) ia = u[0], oa = u[1], nb = u[2], nob = v[2];
        else return false;
        if (!(ia < oa && oa < nb && nb < nob)) return false;
        if (sb == 0 && (sb = pm__tri_turn(Q->positions, u)) == 0) return false;
        if (!pm__turns2(Q->positions, u, v, sb)) return false;
        /* (Both triangles' vertices lie in ia .. nob: three edges each.) */
        *far += nob - ia >= PM__SLOTS ? 6 : 0;
        if (c->side != side || c->lo != at || ia != ib || oa != ob) {
            /* A new piece: after the last's vertices, its first inner point its section's. */
            side = c->side, chain = R->chain[side];
            if ((P && ia <= ob) || !pm__same_xz(Q->positions + 3 * (size_t)ia, A->positions + 3 * (size_t)chain[c->lo]))
                return false;
            if (!P) first = ia;
            P = &pc[(*np)++];
            *P = (pm__bpiece){.side = side, .lo = c->lo, .hi = c->lo, .first = nout};
            out[nout++] = oa;
        }
        if (!pm__same_xz(Q->positions + 3 * (size_t)nb, A->positions + 3 * (size_t)chain[c->hi])) return false;
        out[nout++] = nob;
        P->hi = at = c->hi;
        ib = nb, ob = nob;
    }
    if (k != end) return false;
    *turn = sb;
    *span = ob - first + 1;
    return *np > 0;
}

/* pm__bands_plain's answer when a piece's vertices come as
 * network_sidewalk.c lays them (section j's inner vertex f + 2 j, its
 * outer one f + 2 j + 1: step j's ia, oa, nb, nob are b .. b + 3, b = f +
 * 2 j), read a piece at a time: each step's source and indices compared
 * with what that layout makes them, its two new points loaded once (the
 * last step's carried as doubles) and its two turns pm__turns2's lanes
 * built from those (the same doubles in the same lanes; a lane not sure
 * taken the scalar way). A step that is not its piece's next in that
 * layout starts a new piece, read as pm__bands_plain reads one; anything
 * else: false, and the plain reading decides (so true gives the plain
 * reading's outputs: a step this goes on with, the plain one goes on
 * with too; one it starts a piece at, the plain one does, or rejects as
 * this does, ia <= ob). Out of line: inlined into pm__network_overlaps
 * its loop ran out of registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static bool pm__bands_laid(const pm__ov *O, uint32_t r, const pm__range *S, pm__bpiece *pc, uint32_t *np,
                           uint32_t *out, int *turn, uint32_t *span) {
    const pm__net *N = O->N;
    const pm__road *R = &N->roads.data[r];
    const pm_prim *Q = &O->sc->prims[2], *A = &O->sc->prims[0];
    const float *qp = Q->positions, *ap = A->positions;
    const uint32_t *qi = Q->indices, *own = O->own + O->na, part = S->part;
    const pm__swsrc *src = N->swsrc.data;
    uint32_t k0 = S->ref0 & ~PM__SW, end = k0 + S->count, k = k0, nout = 0, ob = 0, first = 0, n = 0;
    if (S->count % 2) return false;
    /* Every triangle owned, four at a time. */
    __m128i bad = _mm_setzero_si128(), pv = _mm_set1_epi32((int)part);
    for (; k + 4 <= end; k += 4) bad = _mm_or_si128(bad, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(own + k)), pv));
    for (; k < end; k++) bad = _mm_or_si128(bad, _mm_cvtsi32_si128((int)(own[k] ^ part)));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(bad, _mm_setzero_si128())) != 0xFFFF) return false;
    int sb = 0;
    __m128d flip = _mm_setzero_pd();
    _Static_assert(sizeof(pm__swsrc) == 16 && offsetof(pm__swsrc, lo) == 4 && offsetof(pm__swsrc, hi) == 8 &&
                       offsetof(pm__swsrc, side) == 12,
                   "pm__bands_laid reads a source as 16 bytes");
    const __m128i diag_d = _mm_set_epi32(0, 2, 3, 0), other_d = _mm_set_epi32(2, 2, 1, 0);
    const __m128i tail_e = _mm_set_epi32(0, 0, 3, 1), step_src = _mm_set_epi32(0, 1, 1, 0), step_b = _mm_set1_epi32(2);
    for (k = k0; k < end;) {
        /* A new piece at step k (pm__bands_plain's checks). */
        const pm__swsrc *c = &src[k];
        uint32_t side = c->side, at = c->lo;
        const uint32_t *u = qi + 3 * (size_t)k;
        if (side > 1 || c->hi != at + 1 || c->hi >= R->nchain[side] || (n && u[0] <= ob)) return false;
        const uint32_t *chain = R->chain[side], nch = R->nchain[side];
        uint32_t b = u[0];
        /* (oa = b + 1 in the layout: u's twin says so before its point is read.) */
        if (b > UINT32_MAX - 4 || u[4] != b + 1) return false;
        const float *pa = qp + 3 * (size_t)b, *po = pa + 3;
        if (!pm__same_xz(pa, ap + 3 * (size_t)chain[at])) return false;
        if (sb == 0) {
            if ((sb = pm__tri_turn(qp, u)) == 0) return false;
            flip = _mm_set1_pd(sb > 0 ? 0.0 : -0.0);
        }
        if (!n) first = b;
        pm__bpiece *P = &pc[n++];
        *P = (pm__bpiece){.side = side, .lo = at, .hi = at, .first = nout};
        out[nout++] = b + 1;
        double ax = pa[0], az = pa[2], ox = po[0], oz = po[2];
        uint32_t k1 = k;
        /* Its steps: (b, b + 3, b + 2), (b, b + 1, b + 3) or (b, b + 1,
         * b + 2), (b + 2, b + 1, b + 3), section at -> at + 1 on side. */
        /* (Compared 16 bytes at a time: the source's lo, hi and side
         * bytes with (at, at + 1, side); u[0 .. 4) and v[1 .. 3) less b
         * with (0, 3, 2, 0) or (0, 1, 2, 2), and (1, 3).) */
        __m128i want = _mm_set_epi32((int)side, (int)at + 1, (int)at, 0), bv = _mm_set1_epi32((int)b);
        for (; k < end && at + 1 < nch; k += 2, b += 2, at++) {
            c = &src[k], u = qi + 3 * (size_t)k;
            const uint32_t *v = u + 3;
            __m128i d = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)u), bv);
            __m128i e = _mm_sub_epi32(_mm_loadl_epi64((const __m128i *)(v + 1)), bv);
            int ms = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)c), want));
            int md = _mm_movemask_epi8(_mm_cmpeq_epi32(d, diag_d)), me = _mm_movemask_epi8(_mm_cmpeq_epi32(e, tail_e));
            bool diag = md == 0xFFFF;
            if ((ms & 0x1FF0) != 0x1FF0 || (me & 0xFF) != 0xFF ||
                (!diag && _mm_movemask_epi8(_mm_cmpeq_epi32(d, other_d)) != 0xFFFF))
                break;
            want = _mm_add_epi32(want, step_src), bv = _mm_add_epi32(bv, step_b);
            const float *pb = qp + 3 * ((size_t)b + 2), *pn = pb + 3;
            if (!pm__same_xz(pb, ap + 3 * (size_t)chain[at + 1])) return false;
            double bx = pb[0], bz = pb[2], nx = pn[0], nz = pn[2];
            __m128d cx = _mm_set_pd(nx, bx), cz = _mm_set_pd(nz, bz);
            int sure = diag ? pm__turn2(_mm_set1_pd(ax), _mm_set1_pd(az), _mm_set_pd(ox, nx), _mm_set_pd(oz, nz), cx, cz,
                                        flip)
                            : pm__turn2(_mm_set_pd(bx, ax), _mm_set_pd(bz, az), _mm_set1_pd(ox), _mm_set1_pd(oz), cx,
                                        cz, flip);
            if (sure != 3 && !(pm__tri_turn(qp, u) == sb && pm__tri_turn(qp, v) == sb)) return false;
            out[nout++] = b + 3;
            ax = bx, az = bz, ox = nx, oz = nz;
        }
        if (k == k1) return false;   /* (its first step not in the layout) */
        P->hi = at;
        ob = b + 1;
    }
    *np = n;
    *turn = sb;
    *span = ob - first + 1;
    return n > 0;
}

/* Reads road r's sidewalk triangles (range S) as band pieces into pc (*np
 * of them, outer vertices into out); their turn into *turn, the far
 * edges the sum would list at most added to *far, their vertices' span
 * into *span. false when they are not in the pattern: pm__bands_laid,
 * else pm__bands_plain. */
static bool pm__bands(const pm__ov *O, uint32_t r, const pm__range *S, pm__bpiece *pc, uint32_t *np,
                      uint32_t *out, int *turn, uint32_t *far, uint32_t *span) {
    /* (Laid out so, no step's vertices are PM__SLOTS apart: none far.) */
    return pm__bands_laid(O, r, S, pc, np, out, turn, span) || pm__bands_plain(O, r, S, pc, np, out, turn, far, span);
}

/* The border position of the strip's column c (0 or 2) at row g (border
 * of 2 G + 4 points as pm__border2 walks it). */
static uint32_t pm__border_at(uint32_t c, uint32_t g, uint32_t G, int turn) {
    if (turn > 0) return c == 0 ? (g == 0 ? 0 : 2 * G + 4 - g) : 2 + g;
    return c == 0 ? g : 2 * G + 2 - g;
}

/* Each band piece's seam placed on the asphalt's border (xa, mA points,
 * rows row[0 .. 3 (G + 1)), turning turn; the bands turning sb): at[p] =
 * piece + 1 at the border position its walk enters it, UINT32_MAX on the
 * rest of it, 0 off every seam. false when a piece's sections are not a
 * stretch of the border its band passes the other way round, or two
 * pieces share one. */
static bool pm__seams(const pm__road *R, const uint32_t *row, uint32_t G, int turn, int sb, const pm__bpiece *pc,
                      uint32_t np, uint32_t mA, uint32_t *at) {
    memset(at, 0, (size_t)mA * sizeof *at);
    for (uint32_t i = 0; i < np; i++) {
        const pm__bpiece *B = &pc[i];
        const uint32_t *chain = R->chain[B->side];
        /* The column and row of its first section, the way its rows run. */
        uint32_t c = 3, g = 0;
        for (uint32_t h = 0; h <= G && c == 3; h++)
            for (uint32_t cc = 0; cc <= 2 && c == 3; cc += 2)
                if (row[3 * h + cc] == chain[B->lo]) c = cc, g = h;
        if (c == 3) return false;
        int dir = g < G && row[3 * (g + 1) + c] == chain[B->lo + 1]   ? 1
                  : g > 0 && row[3 * (g - 1) + c] == chain[B->lo + 1] ? -1
                                                                       : 0;
        uint32_t cnt = B->hi - B->lo + 1;
        if (dir == 0 || (dir < 0 ? g < cnt - 1 : G - g < cnt - 1)) return false;
        bool asc = (c == 2) == (turn > 0), fwd = (dir > 0) == asc;
        if (fwd != (sb > 0)) return false;
        const uint32_t *rp = row + 3 * (size_t)g + c, *ch = chain + B->lo;
        ptrdiff_t step = dir > 0 ? 3 : -3;
        for (uint32_t j = 0; j < cnt; j++, rp += step)
            if (*rp != ch[j]) return false;
        /* (p0 < mA and cnt <= G + 1 < mA: it wraps once at most.) */
        uint32_t p = pm__border_at(c, fwd ? g : (dir > 0 ? g + cnt - 1 : g - (cnt - 1)), G, turn);
        for (uint32_t j = 0; j < cnt; j++) {
            if (at[p]) return false;
            at[p] = j ? UINT32_MAX : i + 1;
            p = p + 1 == mA ? 0 : p + 1;
        }
    }
    return true;
}

/* Whether the border of road r's strip (rows row[0 .. 3 (G + 1)), as
 * pm__border2 walks it) has each vertex once: 1 yes, 0 no,
 * PM_ERR_NOMEM. pm__border2_once when its inner rows rise, else vertex
 * by vertex as pm__road_strip does (O->stamp). */
static int pm__walk_once(pm__ov *O, uint32_t r, const uint32_t *row, uint32_t G, const pm__sides *sd) {
    if (pm__border2_once(row, G, sd)) return 1;
    if (!O->stamp && !(O->stamp = pm_arena_calloc(O->s, (size_t)O->sc->prims[0].vcount + 1, sizeof *O->stamp)))
        return PM_ERR_NOMEM;
    uint32_t *stamp = O->stamp, id = r + 1, repeated = 0;
    const uint32_t mid[2] = {row[1], row[3 * (size_t)G + 1]};
    for (int i = 0; i < 2; i++) {
        repeated |= stamp[mid[i]] == id;
        stamp[mid[i]] = id;
    }
    for (const uint32_t *v = row; v <= row + 3 * (size_t)G; v += 3)
        for (int c = 0; c <= 2; c += 2) {
            repeated |= stamp[v[c]] == id;
            stamp[v[c]] = id;
        }
    return !repeated;
}

/* Whether plan points a and b (x, z each) are the same. */
static bool pm__same_xz2(const float *a, const float *b) { return a[0] == b[0] && a[1] == b[1]; }

/* Road r with a sidewalk, its outline xu (m points, bounds lo .. hi)
 * just shown simple: for each end at a junction whose cluster's bounds
 * meet lo .. hi (a pair pm__cross_probe will see), the side of that
 * mouth's seam of five (pm_pseam: the outline's neighbours of p and q
 * beyond them, the band's outer points there, then p, k, q) the whole
 * road lies on (pm_pseam_loop_sides: both ends in one pass over the
 * outline), kept in O->rside[r] as
 * pm__road_sides keeps a bent line's, with bit 4 + e set and the seam
 * itself in O->rseam[r][e] (pm__seam5_apart reads it; the road's two
 * seams taken from the arena as it first needs them, so that they come
 * in its blocks, which the stages after it use again). (Out of line:
 * inlined, it cost pm__road_walk more where no box meets.) */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void pm__walk_sides(pm__ov *O, uint32_t r, const float *xu, uint32_t m, const float lo[2], const float hi[2]) {
    const pm__road *R = &O->N->roads.data[r];
    const float *pos = O->sc->prims[0].positions;
    pm_pseam *S = NULL, *use[2] = {NULL, NULL};
    for (int e = 0; e < 2; e++) {
        int64_t node = e ? R->end : R->start;
        uint32_t j = node >= 0 && node < (int64_t)O->V ? O->jclu[node] : UINT32_MAX;
        const uint32_t *sv =
            j != UINT32_MAX && pm__meets(O->clu[j].lo, O->clu[j].hi, lo, hi) ? pm__end_seam(O, R, e) : NULL;
        if (!sv) continue;
        float pkq[3][2];
        for (int i = 0; i < 3; i++) pkq[i][0] = pos[3 * (size_t)sv[i]], pkq[i][1] = pos[3 * (size_t)sv[i] + 2];
        /* k on the outline, p and q beside it (either way round). */
        uint32_t at = 0;
        if (pkq[1][0] != 0 && pkq[1][1] != 0 && pkq[1][0] == pkq[1][0] && pkq[1][1] == pkq[1][1]) {
            /* (Neither coordinate zero nor NaN: == is equality of the bits, a point's two floats at once.) */
            uint64_t key, w;
            memcpy(&key, pkq[1], sizeof key);
            for (; at < m; at++) {
                memcpy(&w, xu + 2 * (size_t)at, sizeof w);
                if (w == key) break;
            }
        } else
            while (at < m && !(xu[2 * (size_t)at] == pkq[1][0] && xu[2 * (size_t)at + 1] == pkq[1][1])) at++;
        if (at == m) continue;
        uint32_t b1 = at ? at - 1 : m - 1, a1 = at + 1 < m ? at + 1 : 0;
        uint32_t b2 = b1 ? b1 - 1 : m - 1, a2 = a1 + 1 < m ? a1 + 1 : 0;
        uint32_t op, oq;
        if (pm__same_xz2(xu + 2 * (size_t)b1, pkq[0]) && pm__same_xz2(xu + 2 * (size_t)a1, pkq[2])) op = b2, oq = a2;
        else if (pm__same_xz2(xu + 2 * (size_t)a1, pkq[0]) && pm__same_xz2(xu + 2 * (size_t)b1, pkq[2])) op = a2, oq = b2;
        else continue;
        const float out[4] = {xu[2 * (size_t)op], xu[2 * (size_t)op + 1], xu[2 * (size_t)oq], xu[2 * (size_t)oq + 1]};
        if (!S && !(S = O->rseam[r] = pm_arena_alloc(O->s, 2 * sizeof *S))) break;   /* (out of memory: none kept) */
        if (pm__end_seam5(O, sv, out, &S[e])) use[e] = &S[e];
    }
    unsigned bits = 0;
    if (use[0] || use[1]) {
        int side[2];
        pm_pseam_loop_sides(use, 2, xu, m, side);
        for (int e = 0; e < 2; e++)
            if (side[e]) bits |= (1u | (side[e] > 0 ? 2u : 0u)) << (2 * e) | 16u << e;
    }
    O->rside[r] = (uint8_t)bits;
}

/* Road r's certificate by its rows and bands: as pm__road_strip (1 shown,
 * its cluster added; *sure false: not decided here, nothing kept). */
static int pm__road_walk(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure) {
    *sure = false;
    const pm__net *N = O->N;
    const pm__road *R = &N->roads.data[r];
    const pm__range *S = &rg[n - 1];
    uint32_t ns = O->sc->nprims == 3 ? O->sc->prims[2].icount / 3 : 0, t0, t;
    if (n < 2 || S->count == 0 || !(S->ref0 & PM__SW) || R->closed || N->swsrc.len != ns ||
        (size_t)R->vcount > 8 * cap + 64 || !pm__walk_asphalt(O, rg, n, &t0, &t) || t == 0 || t % 4)
        return PM_OK;
    const pm_prim *P = &O->sc->prims[0];
    const float *pos = P->positions;
    uint32_t G = t / 4, mA = 2 * G + 4, far = 0, span, np;
    uint32_t *row = pm_arena_alloc(O->w, 3 * ((size_t)G + 1) * sizeof *row);
    float *xa = pm_arena_alloc(O->w, 4 * ((size_t)mA + 1) * sizeof *xa);
    pm__bpiece *pc = pm_arena_alloc(O->w, ((size_t)S->count / 2 + 1) * sizeof *pc);
    uint32_t *out = pm_arena_alloc(O->w, ((size_t)S->count + 2) * sizeof *out);
    uint32_t *at = pm_arena_alloc(O->w, ((size_t)mA + 1) * sizeof *at);
    if (!row || !xa || !pc || !out || !at) return PM_ERR_NOMEM;
    int turn, sb;
    pm__sides sd = {.xz = {xa + 2 * (size_t)mA + 2, xa + 3 * (size_t)mA + 3}};
    if (!pm__strip_rows2(P->indices + 3 * (size_t)t0, t, pos, row, &turn, R->voff, R->vcount, &far, &sd))
        return PM_OK;
    int once = pm__walk_once(O, r, row, G, &sd);
    if (once != 1) return once;
    if (!pm__bands(O, r, S, pc, &np, out, &sb, &far, &span) || far > PM__FAR ||
        (size_t)R->vcount + span > 8 * cap + 64)
        return PM_OK;
    pm__border2(&sd, G, pos + 3 * (size_t)row[1], pos + 3 * (size_t)row[3 * G + 1], turn, xa);
    if (!pm__seams(R, row, G, turn, sb, pc, np, mA, at)) return PM_OK;
    /* L: the border with each seam's inner points replaced by its outer
     * ones, from a piece's entry. */
    const float *bpos = O->sc->prims[2].positions;
    uint32_t mU = mA + 2 * np, k = 0, p = 0;
    float *xu = pm_arena_alloc(O->w, 2 * ((size_t)mU + 1) * sizeof *xu);
    if (!xu) return PM_ERR_NOMEM;
    while (at[p] == 0 || at[p] == UINT32_MAX) p++;
    uint32_t start = p;
    do {
        if (k >= mU) return PM_OK;
        xu[2 * k] = xa[2 * p], xu[2 * k + 1] = xa[2 * p + 1];
        k++;
        uint32_t i = at[p];
        if (i == 0 || i == UINT32_MAX) {
            p = p + 1 == mA ? 0 : p + 1;
            continue;
        }
        const pm__bpiece *B = &pc[i - 1];
        uint32_t cnt = B->hi - B->lo + 1;
        if (k + cnt > mU) return PM_OK;
        /* (Its outer points, section lo first when the bands turn as
         * the loop, else hi first.) */
        const uint32_t *ov = out + B->first + (sb > 0 ? 0 : cnt - 1);
        ptrdiff_t os = sb > 0 ? 1 : -1;
        for (uint32_t j = 0; j < cnt; j++, k++, ov += os) {
            const float *o = bpos + 3 * (size_t)*ov;
            xu[2 * k] = o[0], xu[2 * k + 1] = o[2];
        }
        p = (p + cnt - 1) % mA;
    } while (p != start);
    if (k != mU) return PM_OK;
    float lo[2], hi[2];
    pm_xz_box(xu, 0, mU, lo, hi);
    if (lo[0] == 0 || lo[1] == 0 || hi[0] == 0 || hi[1] == 0) return PM_OK;
    /* L two chains rising along the road (all its triangles turning one
     * way): simple (docs/network.md), else asked as the summed way asks. */
    float d[2];
    pm__strip_axis(pos + 3 * (size_t)row[0], pos + 3 * (size_t)row[1], pos + 3 * (size_t)row[2],
                   pos + 3 * (size_t)row[3 * G + 1], d);
    int rc = PM__WALK_CHAINS(xu, mU, d) ? 1 : pm_loop_convex(xu, mU);
    if (rc == 0) rc = pm_loop_simple(O->w, xu, mU);
    if (rc != 1) return rc < 0 ? rc : PM_OK;   /* (not shown: the sum decides) */
    *sure = true;
    if (PM__SEAM5_ON) pm__walk_sides(O, r, xu, mU, lo, hi);
    O->clu[O->nclu++] = (pm__clu){.node = UINT32_MAX, .road = r, .lo = {lo[0], lo[1]}, .hi = {hi[0], hi[1]}};
    return 1;
}
#endif
