/* The stitch's shortcuts against the plain paths, bit for bit. Normals
 * summed as they are built against pm_prim_compute_normals: the
 * stitch sums each curb wall's face where network_sidewalk.c makes it and
 * only normalizes at the end (pm_prim_normals_finish); the bits must be
 * those of the plain pass over the finished primitive. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "network/network_internal.h"
#include "pm_test_network.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

static const pm_prim *prim_named(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, name) == 0) return &s->prims[i];
    return NULL;
}

/* The normals of p as pm_prim_compute_normals gives them, into out. */
static void plain_normals(pm_scene *s, const pm_prim *p, float *out) {
    pm_prim q = *p;
    q.normals = pm_arena_alloc(s->arena, (size_t)p->vcount * 3 * sizeof(float) + 1);
    cr_assert(q.normals);
    for (size_t i = 0; i < (size_t)p->vcount * 3; i++) q.normals[i] = NAN;   /* none left over */
    pm_prim_compute_normals(&q);
    memcpy(out, q.normals, (size_t)p->vcount * 3 * sizeof(float));
}

/* A small town with sidewalks: a jittered grid, some bends and diagonals,
 * curbs from 0 (walls that round away) to 0.4 m, some edges without. */
static void random_town(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 4), gz = (int)pm_rng_int(r, 1, 3);
    double S = pm_rng_range(r, 22, 70);
    uint32_t id[4][3];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            id[i][j] = node(n, i * S + pm_rng_range(r, -4, 4), pm_rng_chance(r, 0.3) ? pm_rng_range(r, -2, 2) : 0,
                            j * S + pm_rng_range(r, -4, 4));
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx && pm_rng_chance(r, 0.85)) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], pm_rng_range(r, 4, 10));
                const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                if (pm_rng_chance(r, 0.5))
                    bend(n, e, (p[0] + q[0]) / 2, (p[2] + q[2]) / 2 + S * pm_rng_range(r, -0.4, 0.4));
            }
            if (j + 1 < gz && pm_rng_chance(r, 0.85)) edge(n, id[i][j], id[i][j + 1], pm_rng_range(r, 4, 10));
        }
    if (n->nedges == 0) edge(n, id[0][0], id[1][0], 7);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = pm_rng_chance(r, 0.85);
        double ch = pm_rng_chance(r, 0.1) ? 1e-9 : pm_rng_range(r, 0.02, 0.4);
        n->edges[e].sidewalk = (pm_junction_sidewalk){pm_rng_range(r, 0.8, 3.5), ch};
    }
    n->p.corner_radius = pm_rng_range(r, 0, 8);
    n->p.max_segment = pm_rng_range(r, 1, 8);
    n->p.max_error = pm_rng_range(r, 0.005, 0.3);
    finish(n);
}

Test(network_shortcuts, curb_normals_summed_while_built_match_the_plain_pass, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261202);
    int built = 0, walls = 0;
    for (int it = 0; it < 2000; it++) {
        net n;
        random_town(&n, &r);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_scene *s = NULL;
        pm_network_diag d;
        int rc = pm_network_generate(a, &n.p, &s, &d);
        cr_assert(rc == PM_OK || rc == PM_ERR_GEOMETRY || rc == PM_ERR_LIMIT, "town %d: rc %d", it, rc);
        const pm_prim *curb = rc == PM_OK ? prim_named(s, "curb") : NULL;
        if (curb) {
            float *want = malloc((size_t)curb->vcount * 3 * sizeof(float) + 1);
            cr_assert(want);
            plain_normals(s, curb, want);
            cr_assert(memcmp(want, curb->normals, (size_t)curb->vcount * 3 * sizeof(float)) == 0,
                      "town %d: the curb's normals differ from pm_prim_compute_normals'", it);
            cr_assert(curb->normals_unit);
            walls += curb->icount / 3;
            built++;
            free(want);
        }
        pm_arena_destroy(a);
    }
    cr_log_info("curb normals: %d towns with curbs, %d wall triangles", built, walls);
    cr_assert_geq(built, 1000, "only %d towns with curbs built", built);
}

/* Random primitives (some flat, some with shared and repeated vertices,
 * some degenerate faces): summed in random pieces, then finished from a
 * random triangle, against the plain pass. */
Test(network_shortcuts, summed_in_pieces_then_finished_matches_the_plain_pass) {
    pm_rng r;
    pm_rng_seed(&r, 77);
    for (int it = 0; it < 3000; it++) {
        pm_arena *a = pm_arena_create(1 << 16);
        pm_scene *s = pm_scene_create(a);
        uint32_t nv = (uint32_t)pm_rng_int(&r, 1, 40), nt = (uint32_t)pm_rng_int(&r, 0, 60);
        pm_prim *p = pm_scene_add_prim(s, "x", "x", 0, nv, 3 * nt);
        cr_assert(p);
        bool flat = pm_rng_chance(&r, 0.3);
        for (uint32_t v = 0; v < nv; v++) {
            float q[3] = {(float)pm_rng_range(&r, -50, 50), flat ? 1.5f : (float)pm_rng_range(&r, -3, 3),
                          (float)pm_rng_range(&r, -50, 50)};
            if (v > 0 && pm_rng_chance(&r, 0.1)) memcpy(q, p->positions + 3 * (v - 1), sizeof q);
            cr_assert(pm_prim_add_vertex(s, p, q, NULL, NULL, NULL) >= 0);
        }
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t i = (uint32_t)pm_rng_int(&r, 0, nv - 1), j = (uint32_t)pm_rng_int(&r, 0, nv - 1),
                     k = (uint32_t)pm_rng_int(&r, 0, nv - 1);
            cr_assert(pm_prim_add_tri(s, p, i, j, k) == 0);
        }
        float *want = pm_arena_alloc(a, (size_t)nv * 3 * sizeof(float));
        plain_normals(s, p, want);
        /* Summed by the builder up to t0, in pieces; the rest by finish. */
        uint32_t t0 = nt ? (uint32_t)pm_rng_int(&r, 0, nt) : 0;
        memset(p->normals, 0, (size_t)nv * 3 * sizeof(float));
        for (uint32_t t = 0; t < t0;) {
            uint32_t t1 = t + (uint32_t)pm_rng_int(&r, 0, 5);
            if (t1 > t0) t1 = t0;
            if (pm_rng_chance(&r, 0.5)) pm_prim_normals_sum(p, t, t1);
            else
                for (uint32_t u = t; u < t1; u++) {
                    const uint32_t *q = p->indices + 3 * u;
                    double c[3];
                    pm_face_cross(p->positions, q[0], q[1], q[2], c);
                    pm_prim_normals_add(p, q[0], q[1], q[2], c);
                }
            t = t1;
        }
        pm_prim_normals_finish(p, t0);
        cr_assert(memcmp(want, p->normals, (size_t)nv * 3 * sizeof(float)) == 0, "prim %d (t0 %u of %u)", it,
                  t0, nt);
        cr_assert(p->normals_unit);
        pm_arena_destroy(a);
    }
}

/* ---- the road sides' shortcut for the usual strip ---- */

/* A road primitive as pm__road_emit makes it for a network (n sections of
 * left, centre, right; two quads between each two), then, sometimes, one
 * of the things that make it unusual: a triangle left out, a vertex
 * shared (a collapsed column), two triangles swapped, a column's V off. */
static void random_strip(pm_scene *s, pm_rng *r, pm_prim **out) {
    uint32_t n = (uint32_t)pm_rng_int(r, 1, 24);
    pm_prim *P = pm_scene_add_prim(s, "road", "asphalt", PM_PRIM_UV, 3 * n, 12 * n);
    cr_assert(P);
    for (uint32_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            float q[3] = {(float)(i * 3.0 + pm_rng_range(r, -0.5, 0.5)), 0, (float)(c * 2.0 - 2.0)};
            float uv[2] = {(float)i, (float)(c * 0.5)};
            cr_assert(pm_prim_add_vertex(s, P, q, NULL, uv, NULL) >= 0);
        }
    for (uint32_t a = 0; a + 3 < 3 * n; a += 3) {
        uint32_t t[4][3] = {{a, a + 1, a + 3}, {a + 1, a + 4, a + 3}, {a + 1, a + 2, a + 4}, {a + 2, a + 5, a + 4}};
        for (int k = 0; k < 4; k++) cr_assert(pm_prim_add_tri(s, P, t[k][0], t[k][1], t[k][2]) == 0);
    }
    uint32_t nt = P->icount / 3;
    switch (pm_rng_int(r, 0, 5)) {
    case 0:   /* a triangle left out */
        if (nt) {
            uint32_t t = (uint32_t)pm_rng_int(r, 0, nt - 1);
            memmove(P->indices + 3 * t, P->indices + 3 * t + 3, 3 * (nt - t - 1) * sizeof *P->indices);
            P->icount -= 3;
        }
        break;
    case 1: {   /* an edge vertex collapsed onto its centre */
        uint32_t v = 3 * (uint32_t)pm_rng_int(r, 0, n - 1) + (pm_rng_chance(r, 0.5) ? 0 : 2);
        for (uint32_t k = 0; k < P->icount; k++)
            if (P->indices[k] == v) P->indices[k] = v - (v % 3) + 1;
        break;
    }
    case 2:   /* two triangles in the other order */
        if (nt > 1) {
            uint32_t t = (uint32_t)pm_rng_int(r, 0, nt - 2), tmp[3];
            memcpy(tmp, P->indices + 3 * t, sizeof tmp);
            memcpy(P->indices + 3 * t, P->indices + 3 * t + 3, sizeof tmp);
            memcpy(P->indices + 3 * t + 3, tmp, sizeof tmp);
        }
        break;
    case 3: {   /* a vertex's V says another column, or sits on a bound, or is NaN (the centre) */
        static const float odd[] = {0.25f, 0.75f, 0.2499f, 0.7501f, NAN};
        int k = (int)pm_rng_int(r, 0, 5);
        P->uvs[2 * pm_rng_int(r, 0, 3 * n - 1) + 1] = k < 5 ? odd[k] : (float)pm_rng_range(r, 0, 1);
        break;
    }
    default: break;
    }
    *out = P;
}

Test(network_shortcuts, strip_side_chains_match_the_plain_walk) {
    pm_rng r;
    pm_rng_seed(&r, 4242);
    int fast = 0, geometry = 0;
    for (int it = 0; it < 6000; it++) {
        pm_arena *a = pm_arena_create(1 << 16);
        pm_scene *s = pm_scene_create(a);
        pm_prim *P;
        random_strip(s, &r, &P);
        /* Output vertices: each road vertex its own, sometimes at its
         * predecessor's position (kept once in a chain). */
        pm_prim *A = pm_scene_add_prim(s, "asphalt", "asphalt", PM_PRIM_UV, P->vcount, 3);
        uint32_t *remap = pm_arena_alloc(a, (P->vcount + 1) * sizeof *remap);
        cr_assert(A && remap);
        for (uint32_t v = 0; v < P->vcount; v++) {
            const float *q = P->positions + 3 * v;
            if (v >= 3 && pm_rng_chance(&r, 0.15)) q = P->positions + 3 * (v - 3);
            remap[v] = (uint32_t)pm_prim_add_vertex(s, A, q, NULL, NULL, NULL);
        }
        if (pm_rng_chance(&r, 0.3) && P->vcount >= 6)   /* a closed road's last section is its first */
            for (int c = 0; c < 3; c++) remap[P->vcount - 3 + c] = remap[c];
        bool closed = pm_rng_chance(&r, 0.3);
        pm__road R[2];
        int rc[2];
        for (int k = 0; k < 2; k++) {
            pm__net N;
            memset(&N, 0, sizeof N);
            N.a = a;
            N.tmp = pm_arena_create_scratch(a);
            memset(&R[k], 0, sizeof R[k]);
            R[k].closed = closed;
            rc[k] = pm__network_side_chains(&N, &R[k], P, remap, A, k == 1);
            pm_arena_destroy(N.tmp);
        }
        cr_assert_eq(rc[0], rc[1], "strip %d: rc %d, plain %d", it, rc[0], rc[1]);
        if (rc[0] == PM_OK)
            for (int side = 0; side < 2; side++) {
                cr_assert_eq(R[0].nchain[side], R[1].nchain[side], "strip %d side %d", it, side);
                cr_assert(memcmp(R[0].chain[side], R[1].chain[side], R[0].nchain[side] * sizeof(uint32_t)) == 0,
                          "strip %d side %d: the chains differ", it, side);
            }
        geometry += rc[0] == PM_ERR_GEOMETRY;
        fast += P->vcount % 3 == 0 && P->icount == 4 * (P->vcount - 3);
        pm_arena_destroy(a);
    }
    cr_log_info("strips: %d of the usual shape (counts), %d not one path", fast, geometry);
    cr_assert_geq(fast, 2000);
    cr_assert_geq(geometry, 50);
}

/* ---- the outer edge's trim: the shortcut for an edge that runs one way ---- */

/* n outer points (floats): x rising (or falling, or y instead) in random
 * steps with some wobble across; sometimes a step back that makes a loop
 * (segments two apart crossing), sometimes a repeated point, sometimes a
 * random walk with tight turns. */
static uint32_t random_outer(pm_rng *r, pm_v2 *p, float *oy, float *oby, double *len) {
    uint32_t n = (uint32_t)pm_rng_int(r, 2, 60);
    int kind = (int)pm_rng_int(r, 0, 4);
    double x = 0, y = 0, dir = pm_rng_chance(r, 0.5) ? 1 : -1, h = pm_rng_range(r, 0, 3);
    uint32_t loop = kind == 1 ? (uint32_t)pm_rng_int(r, 0, n) : UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        if (kind == 3) {   /* a random walk */
            x += pm_rng_range(r, -3, 3);
            y += pm_rng_range(r, -3, 3);
        } else if (i == loop && i > 0) {
            x -= dir * pm_rng_range(r, 1, 6);
            y += pm_rng_range(r, -4, 4);
        } else if (kind == 2 && pm_rng_chance(r, 0.1)) {   /* the same x again */
            y += pm_rng_range(r, -2, 2);
        } else if (i > 0) {
            x += dir * (pm_rng_chance(r, 0.1) ? pm_rng_range(r, 1e-6, 1e-3) : pm_rng_range(r, 0.1, 6));
            y += pm_rng_range(r, -2, 2);
        }
        pm_v2 q = {(float)x, (float)y};
        p[i] = kind == 4 ? (pm_v2){q.y, q.x} : q;
        oy[i] = (float)(h + i);
        oby[i] = (float)(h - i);
        len[i] = pm_rng_range(r, 0.05, 6);
    }
    return n;
}

Test(network_shortcuts, trim_shortcut_matches_the_plain_trim) {
    pm_rng r;
    pm_rng_seed(&r, 31337);
    int shortcut = 0, trimmed = 0;
    pm_arena *a = pm_arena_create(1 << 16);
    for (int it = 0; it < 20000; it++) {
        pm_v2 p[2][64], p0[64];
        float oy[2][64], oby[2][64];
        double len[64];
        uint32_t n = random_outer(&r, p[0], oy[0], oby[0], len);
        double width = pm_rng_range(&r, 0.5, 4);
        memcpy(p[1], p[0], sizeof p[0]);
        memcpy(p0, p[0], sizeof p0);
        memcpy(oy[1], oy[0], sizeof oy[0]);
        memcpy(oby[1], oby[0], sizeof oby[0]);
        cr_assert_eq(pm__network_trim(a, n, width, len, p[0], oy[0], oby[0], false), PM_OK);
        cr_assert_eq(pm__network_trim(a, n, width, len, p[1], oy[1], oby[1], true), PM_OK);
        cr_assert(memcmp(p[0], p[1], n * sizeof(pm_v2)) == 0 && memcmp(oy[0], oy[1], n * sizeof(float)) == 0 &&
                      memcmp(oby[0], oby[1], n * sizeof(float)) == 0,
                  "edge %d (%u points): the trims differ", it, n);
        bool moved = memcmp(p0, p[1], n * sizeof(pm_v2)) != 0;
        trimmed += moved;
        bool xi = true, xd = true, yi = true, yd = true;
        for (uint32_t i = 0; i + 1 < n; i++) {
            xi &= p0[i + 1].x > p0[i].x, xd &= p0[i + 1].x < p0[i].x;
            yi &= p0[i + 1].y > p0[i].y, yd &= p0[i + 1].y < p0[i].y;
        }
        shortcut += xi || xd || yi || yd;
    }
    pm_arena_destroy(a);
    cr_log_info("outer edges: %d one way (the shortcut), %d trimmed", shortcut, trimmed);
    cr_assert_geq(shortcut, 5000);
    cr_assert_geq(trimmed, 500);
}
