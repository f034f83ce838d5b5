#ifndef PM_TEST_OVERLAP_ORACLE_H
#define PM_TEST_OVERLAP_ORACLE_H
/* The network's plan-overlap check (core/network/network_overlap.c)
 * against a brute-force oracle: every pair of asphalt and sidewalk
 * triangles of the output tested with pm_test_overlap.h's own exact test,
 * on random small networks built to overlap (roads side by side closer
 * than their widths, hairpins, a road passing a junction, two junctions
 * close together, crowded grids with diagonals; sidewalks on some). An
 * accepted network has no overlapping pair at all; a network refused for
 * overlaps names pairs that are triangles of the mesh it built and do
 * overlap. A check that missed a kind of overlap (a road's own, a road
 * against a junction, two roads, a sidewalk) would let some of these
 * through. Used by tests/core/test_network_overlap.c and
 * test_network_overlap_parts.c (the check built with every road's own pairs
 * tested one by one). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "network/network.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_test_network.h"
#include "pm_test_overlap.h"

/* ---- the oracle ---- */

static const char *const surfaces[] = {"asphalt", "sidewalk", NULL};

/* Every pair, no pruning: how many overlap. */
static size_t all_pairs(const ptri *t, size_t n) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) found += ptri_overlap(&t[i], &t[j]);
    return found;
}

/* Whether plan triangle q (three [x, z]) is one of t's, corners in any order. */
static bool is_mesh_triangle(const ptri *t, size_t n, const double q[6]) {
    for (size_t i = 0; i < n; i++) {
        int same = 0;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) same += t[i].v[a][0] == q[2 * b] && t[i].v[a][1] == q[2 * b + 1];
        if (same == 3) return true;
    }
    return false;
}

/* ---- networks built to overlap ---- */

static void sidewalks(net *n, pm_rng *r) {
    bool sw = pm_rng_chance(r, 0.5);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = sw && pm_rng_chance(r, 0.8);
        n->edges[e].sidewalk = (pm_junction_sidewalk){pm_rng_range(r, 1, 2.5), 0.15};
    }
}

/* Two or three roads side by side, their centre lines 3 to 16 m apart. */
static void side_by_side(net *n, pm_rng *r) {
    int k = (int)pm_rng_int(r, 2, 3);
    double z = 0;
    for (int i = 0; i < k; i++) {
        double len = pm_rng_range(r, 30, 60), x0 = pm_rng_range(r, -5, 5);
        uint32_t a = node(n, x0, 0, z), b = node(n, x0 + len, pm_rng_range(r, -1, 1), z + pm_rng_range(r, -2, 2));
        pm_network_edge *e = edge(n, a, b, pm_rng_range(r, 4, 8));
        if (pm_rng_chance(r, 0.3)) bend(n, e, x0 + len / 2, z + pm_rng_range(r, -3, 3));
        z += pm_rng_range(r, 3, 16);
    }
}

/* One road out and back round a tip: its legs gap apart. */
static void hairpin(net *n, pm_rng *r) {
    double gap = pm_rng_range(r, 3, 24), len = pm_rng_range(r, 20, 40), tip = pm_rng_range(r, 2, 10);
    pm_network_edge *e = edge(n, node(n, 0, 0, 0), node(n, 0, 0, gap), pm_rng_range(r, 4, 8));
    double *q = n->pts + 3 * n->npts;
    double p[9] = {len, 0, 0, len + tip, 0, gap / 2, len, 0, gap};
    memcpy(q, p, sizeof p);
    n->npts += 3;
    e->points = q;
    e->npoints = 3;
}

/* A junction of three or four arms and a road passing it 2 to 20 m from
 * its centre. */
static void past_a_junction(net *n, pm_rng *r) {
    uint32_t c = node(n, 0, 0, 0);
    int arms = (int)pm_rng_int(r, 3, 4);
    double w = pm_rng_range(r, 4, 8);
    for (int k = 0; k < arms; k++) {
        double a = k * 6.283185307179586 / arms + pm_rng_range(r, -0.2, 0.2), l = pm_rng_range(r, 25, 40);
        edge(n, c, node(n, l * cos(a), 0, l * sin(a)), w);
    }
    /* Between two arms (the first two), across the bisector. */
    double mid = 3.141592653589793 / arms, d = pm_rng_range(r, 2, 20);
    double px = d * cos(mid), pz = d * sin(mid), tx = -sin(mid), tz = cos(mid), h = pm_rng_range(r, 4, 10);
    edge(n, node(n, px - h * tx, 0, pz - h * tz), node(n, px + h * tx, 0, pz + h * tz), pm_rng_range(r, 4, 8));
}

/* A jittered grid 9 to 26 m apart with diagonals, some edges bowed. */
static void crowded_grid(net *n, pm_rng *r) {
    int gx = (int)pm_rng_int(r, 2, 3), gz = (int)pm_rng_int(r, 2, 3);
    double S = pm_rng_range(r, 9, 26);
    uint32_t id[3][3];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            id[i][j] = node(n, i * S + pm_rng_range(r, -3, 3), 0, j * S + pm_rng_range(r, -3, 3));
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx && pm_rng_chance(r, 0.8)) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], pm_rng_range(r, 4, 9));
                /* Bowed towards the next row's (or the last's) nodes. */
                const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                if (pm_rng_chance(r, 0.5))
                    bend(n, e, (p[0] + q[0]) / 2, (p[2] + q[2]) / 2 + (j ? -1 : 1) * S * pm_rng_range(r, 0.3, 0.8));
            }
            if (j + 1 < gz && pm_rng_chance(r, 0.8)) edge(n, id[i][j], id[i][j + 1], pm_rng_range(r, 4, 9));
            if (i + 1 < gx && j + 1 < gz && pm_rng_chance(r, 0.4))
                edge(n, id[i][j], id[i + 1][j + 1], pm_rng_range(r, 4, 8));
        }
}

/* Two junctions of three arms each, not joined, their centres 2 to 14 m
 * apart, their arms turned away from each other. */
static void two_junctions(net *n, pm_rng *r) {
    double d = pm_rng_range(r, 2, 14);
    for (int s = 0; s < 2; s++) {
        double cx = s ? d : 0, away = s ? 0 : 3.141592653589793, w = pm_rng_range(r, 4, 8);
        uint32_t c = node(n, cx, 0, pm_rng_range(r, -2, 2));
        for (int k = 0; k < 3; k++) {
            double a = away + (k - 1) * pm_rng_range(r, 0.8, 1.2), l = pm_rng_range(r, 20, 30);
            edge(n, c, node(n, cx + l * cos(a), 0, l * sin(a)), w);
        }
    }
}

/* A grid of gx by gz nodes s apart, turned by ang, nodes rounded to the
 * millimetre, some edges bowed by up to bow s off their middle; streets w
 * wide, sidewalks on some. */
static inline void turned_grid(net *n, pm_rng *r, double bow) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 4), gz = (int)pm_rng_int(r, 2, 4);
    double s = pm_rng_range(r, 12, 60), ang = pm_rng_range(r, 0, 6.283185307179586), w = pm_rng_range(r, 4, 10);
    double c = cos(ang), sn = sin(ang), ox = pm_rng_range(r, -2000, 2000), oz = pm_rng_range(r, -2000, 2000);
    uint32_t id[4][4];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double x = i * s, z = j * s;
            id[i][j] = node(n, round((ox + x * c - z * sn) * 1000) / 1000, 0, round((oz + x * sn + z * c) * 1000) / 1000);
        }
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], w);
                if (pm_rng_chance(r, 0.3)) {
                    const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                    double k = pm_rng_range(r, -bow, bow) * s;
                    bend(n, e, (p[0] + q[0]) / 2 - k * sn, (p[2] + q[2]) / 2 + k * c);
                }
            }
            if (j + 1 < gz) edge(n, id[i][j], id[i][j + 1], w);
        }
    sidewalks(n, r);
    n->p.corner_radius = pm_rng_range(r, 0, 6);
    n->p.max_segment = pm_rng_range(r, 2, 10);
    finish(n);
}

/* coarse: netconvert's detail (max_segment 1000) and a chord error up to
 * 100 m, so that roads are a few triangles each (the check tests such a
 * road's own pairs one by one, not by its outline). */
static void crowded_net(net *n, pm_rng *r, int kind, bool coarse) {
    net_init(n);
    switch (kind) {
    case 0: side_by_side(n, r); break;
    case 1: hairpin(n, r); break;
    case 2: past_a_junction(n, r); break;
    case 3: two_junctions(n, r); break;
    default: crowded_grid(n, r); break;
    }
    sidewalks(n, r);
    n->p.corner_radius = pm_rng_range(r, 0, 4);
    n->p.max_segment = pm_rng_range(r, 3, 8);
    if (coarse) {
        n->p.max_segment = 1000;
        n->p.max_error = pm_rng_chance(r, 0.5) ? 100 : pm_rng_range(r, 0.05, 5);
    }
    finish(n);
}

/* Runs networks of the five kinds against the oracle; counts per kind
 * (accepted, refused for overlaps) and the refusals naming a road's
 * overlap with itself. */
static void oracle_run(uint64_t seed, int runs, bool coarse, int accepted[5], int refused[5], int *own) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    int other = 0, crossing = 0;
    size_t named = 0;
    for (int it = 0; it < runs; it++) {
        int kind = it % 5;
        net n;
        crowded_net(&n, &r, kind, coarse);
        if (n.nedges == 0) continue;
        pm_arena *a = pm_arena_create(1 << 20);
        uint32_t pairs[4][2];
        if (pm_network_crossings(a, &n.p, pairs, 4) != 0) {
            crossing++;
            pm_arena_destroy(a);
            continue;
        }
        pm_scene *s = NULL;
        pm_network_diag d;
        int rc = pm_network_generate(a, &n.p, &s, &d);
        cr_assert(rc == PM_OK || rc == PM_ERR_GEOMETRY, "network %d: rc %d", it, rc);
        bool overlap_only = rc == PM_ERR_GEOMETRY && d.nproblems > 0 && s != NULL;
        for (size_t k = 0; overlap_only && k < d.nproblems; k++)
            overlap_only = d.problems[k].error == PM_NETWORK_OVERLAP;
        if (rc == PM_ERR_GEOMETRY && !overlap_only) {
            other++;
            pm_arena_destroy(a);
            continue;
        }
        size_t nt;
        ptri *t = ptri_from_prims(s, surfaces, &nt);
        size_t bad = all_pairs(t, nt);
        if (rc == PM_OK) {
            cr_assert_eq(bad, 0, "network %d (kind %d%s) was built with %zu overlapping triangle pairs", it, kind,
                         coarse ? ", coarse" : "", bad);
            accepted[kind]++;
        } else {
            cr_assert_gt(bad, 0, "network %d (kind %d) refused for overlaps the oracle does not find: %s", it,
                         kind, d.problems[0].message);
            for (size_t k = 0; k < d.nproblems; k++) {
                const pm_network_problem *q = &d.problems[k];
                if (q->nedges == 0 && q->node < 0) continue;   /* the "in all" summary */
                ptri p[2];
                for (int w = 0; w < 2; w++) {
                    cr_assert(ptri_make(q->tris[w], q->tris[w] + 2, q->tris[w] + 4, &p[w]), "network %d", it);
                    cr_assert(is_mesh_triangle(t, nt, q->tris[w]), "network %d: a named triangle is not the "
                              "mesh's: %s", it, q->message);
                }
                cr_assert(ptri_overlap(&p[0], &p[1]), "network %d: %s", it, q->message);
                *own += strstr(q->message, "overlaps itself") != NULL;
                named++;
            }
            refused[kind]++;
        }
        free(t);
        pm_arena_destroy(a);
    }
    cr_log_info("overlap oracle%s: accepted %d/%d/%d/%d/%d, refused for overlaps %d/%d/%d/%d/%d (side by "
                "side, hairpin, past a junction, two junctions, grid), %zu pairs named (%d a road's own); %d "
                "refused otherwise, %d crossing", coarse ? " (coarse)" : "", accepted[0], accepted[1], accepted[2],
                accepted[3], accepted[4], refused[0], refused[1], refused[2], refused[3], refused[4], named, *own,
                other, crossing);
}

/* The network built twice, *off false then true (a fast path's switch in
 * a test that compiles network_overlap.c in): the same scene and the same
 * problems in the same order. */
static inline void same_with_and_without(const net *n, int it, bool *off) {
    pm_arena *a[2];
    pm_scene *s[2];
    pm_network_diag d[2];
    int rc[2];
    for (int w = 0; w < 2; w++) {
        *off = w == 1;
        a[w] = pm_arena_create(1 << 20);
        s[w] = NULL;
        d[w] = (pm_network_diag){0};
        rc[w] = pm_network_generate(a[w], &n->p, &s[w], &d[w]);
    }
    *off = false;
    cr_assert_eq(rc[0], rc[1], "network %d", it);
    cr_assert_eq(d[0].nproblems, d[1].nproblems, "network %d", it);
    for (size_t k = 0; k < d[0].nproblems; k++) {
        const pm_network_problem *p = &d[0].problems[k], *q = &d[1].problems[k];
        cr_assert(p->error == q->error && p->node == q->node && p->node2 == q->node2 && p->nedges == q->nedges &&
                  !memcmp(p->point, q->point, sizeof p->point) && !memcmp(p->tris, q->tris, sizeof p->tris) &&
                  !memcmp(p->edges, q->edges, p->nedges * sizeof *p->edges) && !strcmp(p->message, q->message),
                  "network %d, problem %zu: %s / %s", it, k, p->message, q->message);
    }
    cr_assert_eq(s[0] == NULL, s[1] == NULL, "network %d", it);
    if (s[0]) {
        cr_assert_eq(s[0]->nprims, s[1]->nprims, "network %d", it);
        for (size_t k = 0; k < s[0]->nprims; k++) {
            const pm_prim *P = &s[0]->prims[k], *Q = &s[1]->prims[k];
            cr_assert(P->vcount == Q->vcount && P->icount == Q->icount &&
                      !memcmp(P->positions, Q->positions, 3 * (size_t)P->vcount * sizeof *P->positions) &&
                      !memcmp(P->indices, Q->indices, (size_t)P->icount * sizeof *P->indices),
                      "network %d, primitive %zu differs", it, k);
        }
    }
    for (int w = 0; w < 2; w++) pm_arena_destroy(a[w]);
}

#endif
