/* Junctions in their node's local frame (network 1.4.0): identical
 * junctions are built once and reused, a junction's vertices are its local
 * result moved to its node (the same floats wherever it stands, whichever
 * node came first), and parameters that differ in one bit (after the
 * arms' rounding, pm__arm_round) are never confused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/predicates.h"
#include "network/network.h"
#include "network/network_internal.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_test_meta.h"
#include "pm_test_network.h"

/* An edge of width w, with 2 m sidewalks when sw. */
static pm_network_edge *street(net *n, uint32_t a, uint32_t b, double w, bool sw) {
    pm_network_edge *e = edge(n, a, b, w);
    e->has_sidewalk = sw;
    e->sidewalk = (pm_junction_sidewalk){2.0, 0.15};
    return e;
}

/* A k x k grid town, s metres apart, its origin at (x0, y0, z0), turned
 * by deg degrees about it; with reverse, the nodes are listed in the
 * opposite order (the same town). */
static void turned_grid(net *n, int k, double s, const double o[3], double deg, bool sw, bool reverse) {
    net_init(n);
    uint32_t id[16][16];
    double r = deg * (3.14159265358979323846 / 180.0), c = cos(r), si = sin(r);
    for (int t = 0; t < k * k; t++) {
        int u = reverse ? k * k - 1 - t : t, i = u / k, j = u % k;
        double x = s * i, z = s * j;
        id[i][j] = deg == 0 ? node(n, o[0] + x, o[1], o[2] + z)
                            : node(n, o[0] + c * x - si * z, o[1], o[2] + si * x + c * z);
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            if (i + 1 < k) street(n, id[i][j], id[i + 1][j], 7, sw);
            if (j + 1 < k) street(n, id[i][j], id[i][j + 1], 7, sw);
        }
    finish(n);
}

static const double far_off[3] = {3071.37, 12.625, -2048.11};

static void grid(net *n, int k, double s, const double o[3], bool sw, bool reverse) {
    turned_grid(n, k, s, o, 0.0, sw, reverse);
}

static pm_scene *build(net *n, pm_arena *a, pm_network_diag *d) {
    pm_scene *s = NULL;
    int rc = pm_network_generate(a, &n->p, &s, d);
    cr_assert_eq(rc, PM_OK, "rc %d: %s", rc, d->nproblems ? d->problems[0].message : "");
    s->meta = pm_meta_copy(a, s->meta);   /* its tables as plain nodes, to read */
    cr_assert_not_null(s->meta);
    return s;
}

/* The asphalt vertex block of node i's junction: first vertex and count. */
static void block(const pm_scene *s, size_t i, uint32_t *first, uint32_t *count) {
    const pm_meta *v = pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "nodes"), i), "vertices");
    *first = (uint32_t)v->u.kids.first->u.i;
    *count = (uint32_t)v->u.kids.last->u.i;
}

/* The node of n at (x, z), by position. */
static size_t node_at(const net *n, double x, double z) {
    for (size_t i = 0; i < n->nnodes; i++)
        if (n->nodes[3 * i] == x && n->nodes[3 * i + 2] == z) return i;
    cr_assert_fail("no node at %g %g", x, z);
    return 0;
}

Test(network_reuse, a_grid_builds_each_kind_of_junction_once) {
    for (int sw = 0; sw < 2; sw++) {
        net n;
        grid(&n, 8, 100, (double[3]){0, 0, 0}, sw, false);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d;
        build(&n, a, &d);
        size_t runs = d.junctions_built + d.junctions_reused;
        /* The 4 corners are through nodes (a road turning). */
        cr_log_info("8x8 grid%s: %zu junction builds, %zu generator runs, %zu reused, %zu in place",
                    sw ? " with sidewalks" : "", runs, d.junctions_built, d.junctions_reused,
                    d.junctions_in_place);
        cr_assert_geq(runs, 60);
        /* Sides (4 directions) and crossroads: kinds, not nodes. */
        cr_assert_leq(d.junctions_built, 12, "%zu generator runs for 64 nodes", d.junctions_built);
        cr_assert_eq(d.junctions_in_place, 0);
        pm_arena_destroy(a);
    }
}

Test(network_reuse, a_turned_grid_builds_each_kind_of_junction_once_too) {
    /* Turned, the nodes' differences round differently node by node; the
     * arms' directions and rooms are rounded (pm__arm_round) below those
     * last bits, so a turned grid shares its junctions like one along the
     * axes, wherever it stands. */
    static const double deg[] = {30.0, 7.0, 45.0, 61.3, 133.7, -89.99};
    for (size_t t = 0; t < sizeof deg / sizeof deg[0]; t++)
        for (int sw = 0; sw < 2; sw++) {
            net n;
            turned_grid(&n, 8, 100, t % 2 ? far_off : (double[3]){0, 0, 0}, deg[t], sw, false);
            pm_arena *a = pm_arena_create(1 << 20);
            pm_network_diag d;
            build(&n, a, &d);
            cr_log_info("8x8 grid turned %g degrees%s: %zu built, %zu reused, %zu in place", deg[t],
                        sw ? " with sidewalks" : "", d.junctions_built, d.junctions_reused,
                        d.junctions_in_place);
            cr_assert_leq(d.junctions_built, 12, "turned %g: %zu generator runs for 64 nodes", deg[t],
                          d.junctions_built);
            pm_arena_destroy(a);
        }
}

/* A crossroads of 7 m streets, 40 m arms, centred at o. */
static void crossroads(net *n, const double o[3], bool sw) {
    net_init(n);
    uint32_t m = node(n, o[0], o[1], o[2]);
    street(n, m, node(n, o[0] + 40, o[1], o[2]), 7, sw);
    street(n, m, node(n, o[0], o[1] + 1, o[2] + 40), 7, sw);
    street(n, node(n, o[0] - 40, o[1], o[2]), m, 7, sw);
    street(n, m, node(n, o[0] + 1, o[1] - 2, o[2] - 40), 7, sw);
    finish(n);
}

Test(network_reuse, a_junction_is_its_local_result_moved) {
    /* At the origin a junction's floats are its local result; far away
     * they are those floats moved, (float)(local + offset). */
    for (int sw = 0; sw < 2; sw++) {
        net n0, n1;
        crossroads(&n0, (double[3]){0, 0, 0}, sw);
        crossroads(&n1, far_off, sw);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d0, d1;
        const pm_scene *s0 = build(&n0, a, &d0), *s1 = build(&n1, a, &d1);
        cr_assert_eq(d1.junctions_in_place, 0);
        const pm_prim *A0 = &s0->prims[0], *A1 = &s1->prims[0];
        uint32_t f0, k0, f1, k1;
        block(s0, 0, &f0, &k0);
        block(s1, 0, &f1, &k1);
        cr_assert_eq(k0, k1);
        cr_assert_gt(k0, 8);
        for (uint32_t v = 0; v < k0; v++) {
            for (int q = 0; q < 3; q++) {
                float want = (float)((double)A0->positions[3 * (f0 + v) + q] + far_off[q]);
                cr_assert_eq(A1->positions[3 * (f1 + v) + q], want, "vertex %u axis %d: %.9g, want %.9g",
                             v, q, A1->positions[3 * (f1 + v) + q], want);
            }
        }
        pm_arena_destroy(a);
    }
}

Test(network_reuse, which_node_comes_first_changes_nothing) {
    /* The same far-away town with its nodes listed forwards and backwards
     * (so a different node of each kind is built and the others reuse it):
     * every junction's vertices are the same floats. */
    for (int sw = 0; sw < 2; sw++) {
        net n0, n1;
        grid(&n0, 4, 60, far_off, sw, false);
        grid(&n1, 4, 60, far_off, sw, true);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d0, d1;
        const pm_scene *s0 = build(&n0, a, &d0), *s1 = build(&n1, a, &d1);
        cr_assert_gt(d0.junctions_reused, 0);
        const pm_prim *A0 = &s0->prims[0], *A1 = &s1->prims[0];
        for (size_t i = 0; i < n0.nnodes; i++) {
            const double *c = n0.nodes + 3 * i;
            size_t j = node_at(&n1, c[0], c[2]);
            if (strcmp(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s0->meta, "nodes"), i), "kind")->u.s, "junction") != 0) continue;
            uint32_t f0, k0, f1, k1;
            block(s0, i, &f0, &k0);
            block(s1, j, &f1, &k1);
            cr_assert_eq(k0, k1, "node %zu: %u vertices against %u", i, k0, k1);
            cr_assert(memcmp(A0->positions + 3 * f0, A1->positions + 3 * f1, 3 * k0 * sizeof(float)) == 0,
                      "node %zu: other floats", i);
            cr_assert(memcmp(A0->uvs + 2 * f0, A1->uvs + 2 * f1, 2 * k0 * sizeof(float)) == 0);
        }
        pm_arena_destroy(a);
    }
}

Test(network_reuse, parameters_one_bit_apart_are_never_confused) {
    /* Two crossroads far apart: alike, the second reuses the first; with
     * one arm's width or one sidewalk's curb height one ulp apart, or one
     * arm's direction turned by the rounding's step (2^-32), both are
     * built. A far node moved by one ulp along its arm changes only the
     * arm's room below its rounding (pm__arm_round): reused. */
    for (int change = 0; change < 5; change++) {
        net n;
        net_init(&n);
        for (int c = 0; c < 2; c++) {
            double x = 500.0 * c;
            uint32_t m = node(&n, x, 0, 0);
            uint32_t far[4] = {node(&n, x + 50, 0, 0), node(&n, x, 0, 50), node(&n, x - 50, 0, 0),
                               node(&n, x, 0, -50)};
            for (int k = 0; k < 4; k++) {
                double w = 7.0;
                if (c == 1 && k == 2 && change == 1) w = nextafter(7.0, 8.0);
                pm_network_edge *e = street(&n, m, far[k], w, true);
                if (c == 1 && k == 1 && change == 2) e->sidewalk.curb_height = nextafter(0.15, 1.0);
            }
            if (c == 1 && change == 3) n.nodes[3 * far[0]] = nextafter(x + 50, 1e9);
            if (c == 1 && change == 4) n.nodes[3 * far[1]] = x + 50 * 0x1p-32;
        }
        finish(&n);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d;
        build(&n, a, &d);
        cr_assert_eq(d.junctions_reused, change == 0 || change == 3 ? 1u : 0u, "change %d: %zu reused", change,
                     d.junctions_reused);
        pm_arena_destroy(a);
    }
}

Test(network_reuse, jittered_towns_reuse_only_what_is_identical) {
    /* Map-editor towns (nodes jittered by up to 5 m, heights varying):
     * hardly any two junctions are alike, and whatever is reused must give
     * what a build would, which the other tests check; here the rate. */
    pm_rng r;
    pm_rng_seed(&r, 20261201);
    size_t built = 0, reused = 0;
    for (int it = 0; it < 20; it++) {
        net n;
        net_init(&n);
        int k = 5;
        uint32_t id[5][5];
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                id[i][j] = node(&n, 45.0 * i + pm_rng_range(&r, -5, 5), pm_rng_range(&r, -1, 1),
                                45.0 * j + pm_rng_range(&r, -5, 5));
        bool sw = pm_rng_chance(&r, 0.5);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                if (i + 1 < k) street(&n, id[i][j], id[i + 1][j], 7, sw);
                if (j + 1 < k) street(&n, id[i][j], id[i][j + 1], 7, sw);
            }
        finish(&n);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_scene *s = NULL;
        pm_network_diag d;
        int rc = pm_network_generate(a, &n.p, &s, &d);
        cr_assert(rc == PM_OK || rc == PM_ERR_GEOMETRY, "rc %d", rc);
        built += d.junctions_built;
        reused += d.junctions_reused;
        pm_arena_destroy(a);
    }
    cr_log_info("jittered 5x5 towns: %zu generator runs, %zu reused (%.1f %%)", built, reused,
                100.0 * (double)reused / (double)(built + reused));
    cr_assert_gt(built, 20 * 9);
}

/* crossroads() added to a net that may hold others; returns its centre node. */
static uint32_t add_crossroads(net *n, const double o[3], bool sw) {
    uint32_t m = node(n, o[0], o[1], o[2]);
    street(n, m, node(n, o[0] + 40, o[1], o[2]), 7, sw);
    street(n, m, node(n, o[0], o[1] + 1, o[2] + 40), 7, sw);
    street(n, node(n, o[0] - 40, o[1], o[2]), m, 7, sw);
    street(n, m, node(n, o[0] + 1, o[1] - 2, o[2] - 40), 7, sw);
    return m;
}

Test(network_reuse, one_result_placed_at_many_offsets_is_each_built_alone) {
    /* One town of 24 crossroads at offsets of every magnitude (so one
     * cached result is placed with many float rounding steps): each
     * junction is the same bytes as the crossroads built alone there, and,
     * placed, its floats are (float)(local + offset) with every triangle
     * keeping its orientation's sign (checked here exactly). */
    pm_rng r;
    pm_rng_seed(&r, 77);
    for (int sw = 0; sw < 2; sw++) {
        net all, zero;
        net_init(&all);
        double off[24][3];
        uint32_t centre[24];
        for (int c = 0; c < 24; c++) {
            off[c][0] = (c % 2 ? -1.0 : 1.0) * (300.0 * c + pow(1.7, c)) + pm_rng_range(&r, -1, 1);
            off[c][1] = pm_rng_range(&r, -50, 50);
            off[c][2] = 13.0 * c + pm_rng_range(&r, -5, 5);
            for (int k = 0; k < 3; k++) off[c][k] = round(8.0 * off[c][k]) / 8.0;   /* arms exact */
            centre[c] = add_crossroads(&all, off[c], sw);
        }
        finish(&all);
        crossroads(&zero, (double[3]){0, 0, 0}, sw);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag dall, dz;
        const pm_scene *sall = build(&all, a, &dall), *sz = build(&zero, a, &dz);
        cr_assert_eq(dall.junctions_built, 1, "%zu built", dall.junctions_built);
        const pm_prim *A = &sall->prims[0], *Z = &sz->prims[0];
        uint32_t fz, kz;
        block(sz, 0, &fz, &kz);
        for (int c = 0; c < 24; c++) {
            net one;
            crossroads(&one, off[c], sw);
            pm_network_diag d1;
            const pm_scene *s1 = build(&one, a, &d1);
            const pm_prim *O = &s1->prims[0];
            uint32_t f0, k0, f1, k1;
            block(sall, centre[c], &f0, &k0);
            block(s1, 0, &f1, &k1);
            cr_assert_eq(k0, k1, "crossroads %d", c);
            cr_assert(memcmp(A->positions + 3 * f0, O->positions + 3 * f1, 12 * (size_t)k0) == 0,
                      "crossroads %d: other floats", c);
            cr_assert(memcmp(A->uvs + 2 * f0, O->uvs + 2 * f1, 8 * (size_t)k0) == 0, "crossroads %d", c);
            if (d1.junctions_in_place) continue;
            cr_assert_eq(k0, kz);
            for (uint32_t v = 0; v < k0; v++)
                for (int q = 0; q < 3; q++)
                    cr_assert_eq(A->positions[3 * (f0 + v) + q],
                                 (float)((double)Z->positions[3 * (fz + v) + q] + off[c][q]),
                                 "crossroads %d vertex %u axis %d", c, v, q);
            /* Its triangles: those of the asphalt whose corners are all in its block. */
            for (uint32_t t = 0; t < A->icount; t += 3) {
                const uint32_t *i = A->indices + t;
                if (i[0] < f0 || i[0] >= f0 + k0 || i[1] < f0 || i[1] >= f0 + k0 || i[2] < f0 ||
                    i[2] >= f0 + k0)
                    continue;
                double p[3][2], q[3][2];
                for (int k = 0; k < 3; k++) {
                    const float *w = A->positions + 3 * i[k], *l = Z->positions + 3 * (fz + i[k] - f0);
                    p[k][0] = w[0], p[k][1] = -w[2];
                    q[k][0] = l[0], q[k][1] = -l[2];
                }
                double sp = pm_orient2d(p[0], p[1], p[2]), sq = pm_orient2d(q[0], q[1], q[2]);
                cr_assert_eq((sp > 0) - (sp < 0), (sq > 0) - (sq < 0), "crossroads %d triangle %u", c, t / 3);
            }
        }
        pm_arena_destroy(a);
    }
}

Test(network_reuse, every_move_path_is_the_plain_sum) {
    /* pm__jcache_move's SSE2 and AVX loops (where this CPU has them)
     * against (float)((double)in + off), vertex counts of every remainder,
     * floats of every magnitude and sign, -0 and subnormals included. */
    pm_rng r;
    pm_rng_seed(&r, 31337);
    static float in[3 * 67], out[3 * 67 + 1];
    int ran[3] = {0, 0, 0};
    for (int it = 0; it < 400; it++) {
        size_t nv = pm_rng_below(&r, 68);
        for (size_t i = 0; i < 3 * nv; i++) {
            double m = ldexp(pm_rng_range(&r, -1, 1), (int)pm_rng_below(&r, 60) - 20);
            in[i] = (float)(it % 17 == 0 && i % 5 == 0 ? (i % 2 ? -0.0 : 1e-40) : m);
        }
        double off[3];
        for (int k = 0; k < 3; k++) off[k] = ldexp(pm_rng_range(&r, -1, 1), (int)pm_rng_below(&r, 40) - 8);
        if (it % 9 == 0) off[1] = 0.0;
        for (int path = -1; path <= 2; path++) {
            out[3 * nv] = 12345.0f;   /* past the end: untouched */
            if (pm__jcache_move(out, in, nv, off, path) < 0) continue;
            if (path >= 0) ran[path]++;
            for (size_t i = 0; i < 3 * nv; i++) {
                float want = (float)((double)in[i] + off[i % 3]);
                cr_assert(memcmp(&out[i], &want, sizeof want) == 0, "path %d, %zu vertices, float %zu: %a, want %a",
                          path, nv, i, out[i], want);
            }
            cr_assert_eq(out[3 * nv], 12345.0f, "path %d wrote past the end", path);
        }
    }
    cr_assert_gt(ran[0], 0);
    cr_log_info("move paths run: plain %d, SSE2 %d, AVX %d", ran[0], ran[1], ran[2]);
}

/* A random plan coordinate: magnitudes from 2^-12 to 2^16, now and then
 * -0, 0, an infinity or a NaN. */
static float rand_coord(pm_rng *r, bool odd) {
    if (odd && pm_rng_chance(r, 0.02)) {
        static const float weird[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f};
        return weird[pm_rng_below(r, 6)];
    }
    return (float)ldexp(pm_rng_range(r, -1, 1), (int)pm_rng_below(r, 28) - 12);
}

Test(network_reuse, doubtful_four_at_a_time_is_the_plain_test) {
    /* pm__jcache_doubtful's AVX2 lanes against its one-at-a-time test on
     * random triangle soups: general triangles, vertical faces (corners
     * sharing x and z), thin ones (a corner within a few ulps of the
     * line through the other two: at the slack's edge), repeated
     * corners, odd values (zeros, infinities, NaN); rounding steps d of
     * every size; triangle counts of every remainder. */
    pm_rng r;
    pm_rng_seed(&r, 4242);
    static float pos[3 * 64];
    static uint32_t idx[3 * 80];
    static uint8_t plain[81], fast[81];
    int ran = 0;
    long doubtful = 0, clear = 0;
    for (int it = 0; it < 4000; it++) {
        uint32_t nv = 3 + (uint32_t)pm_rng_below(&r, 62), nt = (uint32_t)pm_rng_below(&r, 81);
        bool odd = it % 7 == 0;
        int scale = (int)pm_rng_below(&r, 20) - 6;
        for (uint32_t v = 0; v < nv; v++) {
            pos[3 * v] = (float)ldexp(rand_coord(&r, odd), scale);
            pos[3 * v + 1] = rand_coord(&r, false);
            pos[3 * v + 2] = (float)ldexp(rand_coord(&r, odd), scale);
        }
        for (uint32_t v = 2; v < nv; v++) {
            double u = pm_rng_range(&r, -0.5, 1.5);
            switch (pm_rng_below(&r, 5)) {
            case 0:   /* on the line through the two before, within a few ulps */
                for (int k = 0; k < 3; k += 2) {
                    float a = pos[3 * (v - 2) + k], b = pos[3 * (v - 1) + k];
                    float c = (float)(a + u * ((double)b - a));
                    for (int s = (int)pm_rng_below(&r, 7) - 3; s > 0; s--) c = nextafterf(c, INFINITY);
                    pos[3 * v + k] = c;
                }
                break;
            case 1:   /* above the one before: a vertical face */
                pos[3 * v] = pos[3 * (v - 1)];
                pos[3 * v + 2] = pos[3 * (v - 1) + 2];
                break;
            default: break;
            }
        }
        for (uint32_t t = 0; t < nt; t++) {
            bool local = pm_rng_chance(&r, 0.7);
            uint32_t base = local ? (uint32_t)pm_rng_below(&r, nv - 2) : 0;
            for (int k = 0; k < 3; k++)
                idx[3 * t + k] = local ? base + (uint32_t)k : (uint32_t)pm_rng_below(&r, nv);
            if (pm_rng_chance(&r, 0.05)) idx[3 * t + 2] = idx[3 * t];   /* a repeated corner */
        }
        pm_prim P = {.positions = pos, .indices = idx, .vcount = nv, .icount = 3 * nt};
        double d = ldexp(1.0, (int)pm_rng_below(&r, 80) - 70);   /* down to where sl0 rules */
        memset(fast, 7, sizeof fast);
        cr_assert_eq(pm__jcache_doubtful(&P, d, plain, 0), 0);
        if (pm__jcache_doubtful(&P, d, fast, 2) < 0) continue;
        ran++;
        for (uint32_t t = 0; t < nt; t++) {
            cr_assert_eq(fast[t], plain[t], "round %d, triangle %u of %u: %d, the plain test %d", it, t, nt,
                         fast[t], plain[t]);
            plain[t] ? doubtful++ : clear++;
        }
        cr_assert_eq(fast[nt], 7, "round %d: wrote past the last triangle", it);
    }
    if (ran) cr_assert(doubtful > 1000 && clear > 1000, "doubtful %ld, clear %ld: both kinds met", doubtful, clear);
}

Test(network_reuse, rmax_eight_at_a_time_is_the_plain_loop) {
    /* pm__jcache_rmax's AVX loop against its plain loop: vertex counts of
     * every remainder, magnitudes of every size and sign, the largest in
     * any lane (x, z; a larger y never counts), NaN and -0 here and there,
     * starting values 0 and larger than every vertex. */
    pm_rng r;
    pm_rng_seed(&r, 977);
    static float pos[3 * 70];
    int ran = 0;
    for (int it = 0; it < 3000; it++) {
        uint32_t nv = (uint32_t)pm_rng_below(&r, 71);
        for (uint32_t i = 0; i < 3 * nv; i++) pos[i] = rand_coord(&r, it % 5 == 0);
        /* No infinities here: rmax is of a finished (finite) result's; a
         * NaN is left out by both. */
        for (uint32_t i = 0; i < 3 * nv; i++)
            if (isinf(pos[i])) pos[i] = 1.0f;
        if (nv && pm_rng_chance(&r, 0.5)) pos[3 * pm_rng_below(&r, nv) + 1] = 1e30f;   /* a y: never counts */
        if (nv && pm_rng_chance(&r, 0.5)) pos[3 * pm_rng_below(&r, nv) + 2 * pm_rng_below(&r, 2)] = -1e20f;
        double m0 = pm_rng_chance(&r, 0.8) ? 0.0 : (double)(float)ldexp(1.0, (int)pm_rng_below(&r, 80) - 20);
        double want = pm__jcache_rmax(pos, nv, m0, 0), got = pm__jcache_rmax(pos, nv, m0, 2);
        if (got == -1) continue;
        ran++;
        cr_assert(memcmp(&got, &want, sizeof got) == 0, "round %d, %u vertices: %a, the plain loop %a", it, nv, got,
                  want);
    }
    cr_log_info("rmax: %d rounds on the AVX path", ran);
}
