/* The stitch's and the sidewalk slabs' fast paths (core/network/
 * network_stitch.c, network_sidewalk.c) against their plain paths, whole
 * networks compared: every network built both ways on thousands of random
 * towns (jittered grids, bends, through nodes, rings, sidewalks on some
 * edges, curbs from ~0 to 0.4 m) and crowded networks built to overlap
 * (pm_test_overlap_oracle.h: side by side, hairpins, close junctions,
 * sidewalks cut where they overlap) must give the same return code, the
 * same problems in the same order and the same bytes once encoded as the
 * JSON mesh (every position, normal, UV and index, and the metadata: the
 * roads' pieces, seams, sidewalk gaps). The two builds of a network
 * run one after the other in fresh arenas whose memory malloc may hand
 * back from the one before: a field left unset (a sidewalk gap's
 * `overlap` was) shows up here as two different outputs. Both .c files are compiled into
 * this test with their plain switches below (their external symbols are
 * defined here, so the linker takes these copies). */
#include <criterion/criterion.h>
#include <stdbool.h>

static bool fast_off;   /* every fast path off */
#define PM__STITCH_PLAIN fast_off
#define PM__SIDEWALK_PLAIN fast_off
#include "../../core/network/network_stitch.c"
#include "../../core/network/network_sidewalk.c"

#include "pm_api/encode.h"
#include "pm_api/generator.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "pm_test_overlap_oracle.h"
#pragma GCC diagnostic pop

/* A town: a jittered grid 20 to 90 m apart, some edges bent, some nodes of
 * degree two (through nodes: roads of several edges), now and then a ring
 * of through nodes (a closed road), sidewalks on most edges. */
static void random_town(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 1, 4);
    double S = pm_rng_range(r, 20, 90);
    uint32_t id[5][4];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            id[i][j] = node(n, i * S + pm_rng_range(r, -4, 4), pm_rng_chance(r, 0.2) ? pm_rng_range(r, -2, 2) : 0,
                            -j * S + pm_rng_range(r, -4, 4));
    double hole = pm_rng_chance(r, 0.3) ? 0.6 : 0.0;
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx && pm_rng_chance(r, 0.85)) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], pm_rng_range(r, 4, 10));
                const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                if (pm_rng_chance(r, 0.4))
                    bend(n, e, (p[0] + q[0]) / 2, (p[2] + q[2]) / 2 + S * pm_rng_range(r, -0.3, 0.3));
            }
            if (j + 1 < gz && pm_rng_chance(r, 1.0 - hole)) edge(n, id[i][j], id[i][j + 1], pm_rng_range(r, 4, 10));
        }
    if (pm_rng_chance(r, 0.15) && n->nnodes + 6 <= 256) {
        /* A ring of six through nodes beside the grid. */
        double cx = gx * S + 80, rad = pm_rng_range(r, 25, 45);
        uint32_t first = (uint32_t)n->nnodes;
        for (int k = 0; k < 6; k++) node(n, cx + rad * cos(k * 1.0471975511965976), 0, rad * sin(k * 1.0471975511965976));
        double w = pm_rng_range(r, 5, 9);
        for (int k = 0; k < 6; k++) edge(n, first + k, first + (k + 1) % 6, w);
    }
    if (n->nedges == 0) edge(n, id[0][0], id[1][0], 7);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = pm_rng_chance(r, 0.8);
        double ch = pm_rng_chance(r, 0.05) ? 1e-9 : pm_rng_range(r, 0.02, 0.4);
        n->edges[e].sidewalk = (pm_junction_sidewalk){pm_rng_range(r, 0.8, 3.5), ch};
    }
    n->p.corner_radius = pm_rng_range(r, 0, 8);
    n->p.max_segment = pm_rng_chance(r, 0.2) ? 1000 : pm_rng_range(r, 1, 8);
    n->p.max_error = pm_rng_chance(r, 0.2) ? pm_rng_range(r, 0.5, 20) : pm_rng_range(r, 0.005, 0.3);
    finish(n);
}

typedef struct built {
    pm_arena *a;
    int rc;
    pm_network_diag d;
    pm_api_buf json;
} built;

static built build(const net *n, bool plain_path) {
    built b = {.a = pm_arena_create(1 << 20)};
    cr_assert(b.a);
    pm_scene *s = NULL;
    fast_off = plain_path;
    b.rc = pm_network_generate(b.a, &n->p, &s, &b.d);
    fast_off = false;
    if (b.rc == PM_OK) {
        cr_assert(s);
        cr_assert_eq(pm_api_encode(s, pm_api_find_generator("/v1/networks"), NULL, PM_API_FMT_JSON, &b.json), 0);
    }
    return b;
}

/* Built both ways: the same. Returns whether it built (PM_OK). */
static bool same_both_ways(const net *n, const char *what, int it) {
    built f = build(n, false), p = build(n, true);
    cr_assert_eq(f.rc, p.rc, "%s %d: rc %d, plain %d", what, it, f.rc, p.rc);
    cr_assert_eq(f.d.nproblems, p.d.nproblems, "%s %d: %zu problems, plain %zu", what, it, f.d.nproblems,
                 p.d.nproblems);
    for (size_t k = 0; k < f.d.nproblems; k++) {
        const pm_network_problem *x = &f.d.problems[k], *y = &p.d.problems[k];
        cr_assert(x->error == y->error && x->node == y->node && x->node2 == y->node2 && x->nedges == y->nedges &&
                      !memcmp(x->point, y->point, sizeof x->point) && !memcmp(x->tris, y->tris, sizeof x->tris) &&
                      !memcmp(x->edges, y->edges, x->nedges * sizeof *x->edges) && !strcmp(x->message, y->message),
                  "%s %d, problem %zu: %s / plain: %s", what, it, k, x->message, y->message);
    }
    if (f.rc == PM_OK) {
        cr_assert(f.json.len == p.json.len && memcmp(f.json.data, p.json.data, f.json.len) == 0,
                  "%s %d: the JSON meshes differ (%zu and %zu bytes)", what, it, f.json.len, p.json.len);
        free(f.json.data);
        free(p.json.data);
    }
    pm_arena_destroy(f.a);
    pm_arena_destroy(p.a);
    return f.rc == PM_OK;
}

Test(network_stitch_fast, towns_are_the_same_with_and_without_the_fast_paths, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261202);
    int built_ok = 0;
    for (int it = 0; it < 700; it++) {
        net n;
        random_town(&n, &r);
        built_ok += same_both_ways(&n, "town", it);
    }
    cr_log_info("towns built: %d of 700", built_ok);
    cr_assert_geq(built_ok, 300, "only %d towns built", built_ok);
}

Test(network_stitch_fast, crowded_networks_are_the_same_with_and_without_the_fast_paths, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261203);
    int built_ok = 0, refused = 0;
    for (int it = 0; it < 1000; it++) {
        net n;
        crowded_net(&n, &r, it % 5, it % 3 == 0);
        if (n.nedges == 0) continue;
        if (net_crosses(&n)) continue;   /* (refused before the stitch) */
        if (same_both_ways(&n, "crowded", it)) built_ok++;
        else refused++;
    }
    cr_log_info("crowded networks: %d built, %d refused", built_ok, refused);
    cr_assert_geq(built_ok, 200, "only %d built", built_ok);
    cr_assert_geq(refused, 50, "only %d refused", refused);
}

/* A ring of through nodes (one closed road), jittered, on a slope now
 * and then, with sidewalks: closed slabs, whose walls close on their
 * first column (network_sidewalk.c's pm__wall_column). */
static void random_ring(net *n, pm_rng *r) {
    net_init(n);
    int k = (int)pm_rng_int(r, 5, 12);
    double rad = pm_rng_range(r, 25, 70), slope = pm_rng_chance(r, 0.3) ? pm_rng_range(r, -0.08, 0.08) : 0;
    for (int i = 0; i < k; i++) {
        double a = i * 6.283185307179586 / k, rr = rad + pm_rng_range(r, -3, 3);
        node(n, rr * cos(a), slope * rr * cos(a), rr * sin(a));
    }
    double w = pm_rng_range(r, 4, 10), sw = pm_rng_range(r, 0.8, 3.5);
    double ch = pm_rng_chance(r, 0.05) ? 1e-9 : pm_rng_range(r, 0.02, 0.4);
    for (int i = 0; i < k; i++) {
        pm_network_edge *e = edge(n, (uint32_t)i, (uint32_t)((i + 1) % k), w);
        e->has_sidewalk = true;
        e->sidewalk = (pm_junction_sidewalk){sw, ch};
    }
    n->p.max_segment = pm_rng_chance(r, 0.3) ? 1000 : pm_rng_range(r, 1, 8);
    n->p.max_error = pm_rng_range(r, 0.005, 0.3);
    finish(n);
}

/* A grid on whole metres, streets along the axes (as most towns' and the
 * benches' grids): segments and miters with a zero component. */
static void aligned_town(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 2, 4);
    double S = (double)pm_rng_int(r, 30, 100), y = pm_rng_chance(r, 0.2) ? (double)pm_rng_int(r, -5, 5) : 0;
    uint32_t id[5][4];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) id[i][j] = node(n, i * S, y, -j * S);
    double w = (double)pm_rng_int(r, 5, 9), sw = pm_rng_range(r, 0.8, 3.5), ch = pm_rng_range(r, 0.02, 0.4);
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx && pm_rng_chance(r, 0.9)) edge(n, id[i][j], id[i + 1][j], w);
            if (j + 1 < gz && pm_rng_chance(r, 0.9)) edge(n, id[i][j], id[i][j + 1], w);
        }
    if (n->nedges == 0) edge(n, id[0][0], id[1][0], w);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = pm_rng_chance(r, 0.9);
        n->edges[e].sidewalk = (pm_junction_sidewalk){sw, ch};
    }
    n->p.corner_radius = pm_rng_chance(r, 0.5) ? 0 : pm_rng_range(r, 0, 8);
    n->p.max_segment = pm_rng_chance(r, 0.3) ? 5 : pm_rng_range(r, 1, 8);
    finish(n);
}

Test(network_stitch_fast, rings_and_aligned_grids_are_the_same_with_and_without_the_fast_paths, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261204);
    int rings = 0, grids = 0;
    for (int it = 0; it < 300; it++) {
        net n;
        random_ring(&n, &r);
        rings += same_both_ways(&n, "ring", it);
        aligned_town(&n, &r);
        grids += same_both_ways(&n, "aligned grid", it);
    }
    cr_log_info("rings built: %d of 300, aligned grids %d of 300", rings, grids);
    cr_assert_geq(rings, 150, "only %d rings built", rings);
    cr_assert_geq(grids, 250, "only %d aligned grids built", grids);
}

/* A grid turned by a random angle, nodes rounded to the millimetre (as a
 * map editor draws one and bench/netconvert.sh's turned grid): straight
 * streets whose segments' lengths and miters are full doubles, long
 * enough for the slabs' lane code (sections four at a time) to run with
 * tails of every length; some streets bent, some two-way-wide, widths and
 * sidewalks mixed, at the default detail or finer. */
static void turned_town(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 2, 4);
    double S = pm_rng_range(r, 40, 140), a = pm_rng_range(r, 0, 6.283185307179586), ca = cos(a), sa = sin(a);
    uint32_t id[5][4];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double x = i * S, z = -j * S;
            id[i][j] = node(n, round((x * ca - z * sa) * 1000) / 1000, 0, round((x * sa + z * ca) * 1000) / 1000);
        }
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double w = pm_rng_chance(r, 0.3) ? pm_rng_range(r, 10, 16) : pm_rng_range(r, 5, 9);
            if (i + 1 < gx && pm_rng_chance(r, 0.9)) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], w);
                const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                if (pm_rng_chance(r, 0.25))
                    bend(n, e, (p[0] + q[0]) / 2 + S * pm_rng_range(r, -0.2, 0.2),
                         (p[2] + q[2]) / 2 + S * pm_rng_range(r, -0.2, 0.2));
            }
            if (j + 1 < gz && pm_rng_chance(r, 0.9)) edge(n, id[i][j], id[i][j + 1], w);
        }
    if (n->nedges == 0) edge(n, id[0][0], id[1][0], 7);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = pm_rng_chance(r, 0.9);
        n->edges[e].sidewalk = (pm_junction_sidewalk){pm_rng_range(r, 0.8, 3.5), pm_rng_range(r, 0.02, 0.4)};
    }
    n->p.corner_radius = pm_rng_chance(r, 0.5) ? 0 : pm_rng_range(r, 0, 8);
    if (pm_rng_chance(r, 0.5)) n->p.max_segment = pm_rng_range(r, 1, 8);
    finish(n);
}

Test(network_stitch_fast, turned_grids_are_the_same_with_and_without_the_fast_paths, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261205);
    int grids = 0;
    for (int it = 0; it < 300; it++) {
        net n;
        turned_town(&n, &r);
        grids += same_both_ways(&n, "turned grid", it);
    }
    cr_log_info("turned grids built: %d of 300", grids);
    cr_assert_geq(grids, 250, "only %d turned grids built", grids);
}

/* A jittered, turned grid whose streets zigzag (two or three points
 * each, 0.15 to 0.4 of the spacing off the straight line, on alternate
 * sides) under wide sidewalks: outer edges that cross themselves in the
 * tight bends (trimmed), bands that fold (a gap, and the side's pieces on
 * both sides of it trimmed again from its untrimmed outer points:
 * network_sidewalk.c's pm__slab_own; a side trimming its own outer points
 * in place fails here). */
static void zigzag_town(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 2, 4);
    double S = pm_rng_range(r, 30, 80), turn = pm_rng_range(r, 0, 6.283185307179586);
    double ca = cos(turn), sa = sin(turn);
    uint32_t id[5][4];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double x = i * S + pm_rng_range(r, -4, 4), z = -j * S + pm_rng_range(r, -4, 4);
            id[i][j] = node(n, x * ca - z * sa, 0, x * sa + z * ca);
        }
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            for (int dir = 0; dir < 2; dir++) {
                if ((dir == 0 && i + 1 >= gx) || (dir == 1 && j + 1 >= gz) || !pm_rng_chance(r, 0.85)) continue;
                pm_network_edge *e = edge(n, id[i][j], dir ? id[i][j + 1] : id[i + 1][j], pm_rng_range(r, 5, 12));
                const double *a = n->nodes + 3 * e->from, *b = n->nodes + 3 * e->to;
                double dx = b[0] - a[0], dz = b[2] - a[2], l = hypot(dx, dz);
                int k = (int)pm_rng_int(r, 2, 3);
                double *q = n->pts + 3 * n->npts;
                for (int t = 1; t <= k; t++) {
                    double f = (double)t / (k + 1), off = S * (t % 2 ? 1 : -1) * pm_rng_range(r, 0.15, 0.4);
                    q[3 * t - 3] = a[0] + f * dx - dz / l * off;
                    q[3 * t - 2] = 0;
                    q[3 * t - 1] = a[2] + f * dz + dx / l * off;
                }
                n->npts += (size_t)k;
                e->points = q;
                e->npoints = (size_t)k;
            }
    if (n->nedges == 0) edge(n, id[0][0], id[1][0], 7);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = pm_rng_chance(r, 0.9);
        n->edges[e].sidewalk = (pm_junction_sidewalk){pm_rng_range(r, 1.5, 4.5), pm_rng_range(r, 0.02, 0.4)};
    }
    n->p.corner_radius = pm_rng_range(r, 0, 4);
    n->p.max_segment = pm_rng_chance(r, 0.5) ? 5 : pm_rng_range(r, 1, 8);
    finish(n);
}

Test(network_stitch_fast, zigzag_towns_are_the_same_with_and_without_the_fast_paths, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261208);
    int towns = 0, refused = 0;
    for (int it = 0; it < 400; it++) {
        net n;
        zigzag_town(&n, &r);
        if (net_crosses(&n)) continue;   /* (refused before the stitch) */
        if (same_both_ways(&n, "zigzag town", it)) towns++;
        else refused++;
    }
    cr_log_info("zigzag towns: %d built, %d refused", towns, refused);
    cr_assert_geq(towns, 50, "only %d zigzag towns built", towns);
}

/* The slab's lane code (segments, offsets, the outer edge's lengths)
 * against the plain loops, bit for bit, on random curb chains: turned
 * straight runs (each segment's length and normal full doubles), runs
 * along an axis, bends, U-turns (normals summing to ~0), repeated points
 * (zero-length segments), open and closed, 2 to 40 sections (every tail
 * length after the lanes' fours). */
static void slab_arrays(pm__slab *S, pm_v2 *out, float *top, float *oy, float *oby, double *len, pm_v2 *sn) {
    S->out = out, S->top = top, S->oy = oy, S->oby = oby;
    pm__segments(S, len, sn);
    S->len = len;
    pm__offsets(S, sn);
}

Test(network_stitch_fast, slab_lanes_are_the_same_as_the_plain_loops) {
    pm_rng r;
    pm_rng_seed(&r, 20261206);
    enum { M = 40 };
    float pos[3 * M];
    uint32_t cv[M];
    int turned = 0;
    for (int it = 0; it < 40000; it++) {
        uint32_t n = (uint32_t)pm_rng_int(&r, 2, M);
        double a = pm_rng_chance(&r, 0.2) ? (double)pm_rng_int(&r, 0, 3) * 1.5707963267948966
                                          : pm_rng_range(&r, 0, 6.283185307179586);
        double x = pm_rng_range(&r, -3000, 3000), z = pm_rng_range(&r, -3000, 3000), y = pm_rng_range(&r, -5, 5);
        int kind = (int)pm_rng_int(&r, 0, 3);
        for (uint32_t i = 0; i < n; i++) {
            pos[3 * i] = (float)x, pos[3 * i + 1] = (float)y, pos[3 * i + 2] = (float)z;
            cv[i] = i;
            double step = pm_rng_chance(&r, 0.05) ? 0 : pm_rng_range(&r, 0.01, 9);
            if (kind == 1) a += pm_rng_range(&r, -0.4, 0.4);
            if (kind == 2 && pm_rng_chance(&r, 0.1)) a += 3.141592653589793;
            if (kind == 3 && pm_rng_chance(&r, 0.2)) a += pm_rng_range(&r, -2.5, 2.5);
            x += step * cos(a), z += step * sin(a), y += pm_rng_range(&r, -0.05, 0.05);
        }
        bool closed = n > 3 && pm_rng_chance(&r, 0.1);
        if (closed) cv[n - 1] = 0;
        pm__slab S = {.n = n, .cv = cv, .asphalt = pos, .closed = closed, .width = pm_rng_range(&r, 0.8, 3.5),
                      .ch = pm_rng_range(&r, 0.02, 0.4)};
        pm_v2 fo[M], po[M], fsn[M], psn[M];
        float ft[M], pt[M], fy[M], py[M], fb[M], pb[M];
        double fl[M], pl[M];
        memset(fsn, 0, sizeof fsn), memset(psn, 0, sizeof psn), memset(fl, 0, sizeof fl), memset(pl, 0, sizeof pl);
        slab_arrays(&S, fo, ft, fy, fb, fl, fsn);
        fast_off = true;
        slab_arrays(&S, po, pt, py, pb, pl, psn);
        fast_off = false;
        cr_assert(!memcmp(fl, pl, (n - 1) * sizeof *fl) && !memcmp(fsn, psn, (n - 1) * sizeof *fsn),
                  "%d (%u sections, kind %d): segments differ", it, n, kind);
        cr_assert(!memcmp(fo, po, n * sizeof *fo) && !memcmp(ft, pt, n * sizeof *ft) &&
                      !memcmp(fy, py, n * sizeof *fy) && !memcmp(fb, pb, n * sizeof *fb),
                  "%d (%u sections, kind %d): offsets differ", it, n, kind);
        /* The outer edge's lengths: pm__hypot_run against hypot. */
        double hx[M], hy[M];
        for (uint32_t i = 0; i + 1 < n; i++) hx[i] = fo[i + 1].x - fo[i].x, hy[i] = fo[i + 1].y - fo[i].y;
        double h[M];
        for (uint32_t i = 0; i + 1 < n; i++) h[i] = hypot(hx[i], hy[i]);
        pm__hypot_run(hx, hy, n - 1);
        cr_assert(!memcmp(hx, h, (n - 1) * sizeof *h), "%d: outer lengths differ", it);
        turned += n > 5 && kind == 0 && fl[0] != fabs(pos[3] - pos[0]);
    }
    cr_assert_gt(turned, 5000);   /* straight runs off the axes: full hypot in the lanes */
}

/* pm__is_strip's lanes against its plain comparisons: usual strips of 2
 * to 60 sections, most with one index (or a column) changed somewhere,
 * now and then by a high bit only. */
Test(network_stitch_fast, strip_test_is_the_same_in_lanes) {
    pm_rng r;
    pm_rng_seed(&r, 20261207);
    enum { M = 60 };
    static uint32_t ix[12 * M];
    static float uv[6 * M];
    int strips = 0, not_strips = 0;
    for (int it = 0; it < 20000; it++) {
        uint32_t n = (uint32_t)pm_rng_int(&r, 2, M);
        for (uint32_t v = 0; v < 3 * n; v++) uv[2 * v] = (float)(v / 3), uv[2 * v + 1] = (float)(v % 3) * 0.5f;
        for (uint32_t i = 0, a = 0; i + 1 < n; i++, a += 3) {
            const uint32_t q[12] = {a, a + 1, a + 3, a + 1, a + 4, a + 3, a + 1, a + 2, a + 4, a + 2, a + 5, a + 4};
            memcpy(ix + 12 * i, q, sizeof q);
        }
        int change = (int)pm_rng_int(&r, 0, 3);
        uint32_t at = (uint32_t)pm_rng_below(&r, 12 * (n - 1));
        if (change == 1) ix[at] += (uint32_t)pm_rng_int(&r, 1, 3);
        if (change == 2) ix[at] ^= 1u << pm_rng_int(&r, 0, 31);
        if (change == 3) uv[2 * pm_rng_below(&r, 3 * n) + 1] = 0.5f;
        pm_prim P = {.vcount = 3 * n, .icount = 12 * (n - 1), .indices = ix, .uvs = uv};
        bool f = pm__is_strip(&P);
        fast_off = true;
        bool p = pm__is_strip(&P);
        fast_off = false;
        cr_assert_eq(f, p, "%d (%u sections, change %d at %u): lanes %d, plain %d", it, n, change, at, f, p);
        strips += f, not_strips += !f;
    }
    cr_assert(strips > 4000 && not_strips > 4000, "%d strips, %d not", strips, not_strips);
}

/* pm__sections' lane path against its plain loop on random UVs: U and V
 * drawn from a few values that meet (0, -0, -1, the largest U again, NaN,
 * values either side of the column bounds) so that sections repeat, go
 * missing and tie; every output compared, s1 too where ok[1] is false. */
Test(network_stitch_fast, road_sections_are_the_same_with_and_without_the_lanes) {
    pm_rng r;
    pm_rng_seed(&r, 20261204);
    static const float us[] = {0.0f, -0.0f, -1.0f, -2.0f, 0.5f, 3.0f, 3.0f, 7.25f, 7.25f, 1e30f, NAN, INFINITY};
    static const float xs[] = {0.0f, 0.25f, 0.2499f, 0.5f, 0.75f, 0.7501f, 1.0f, -0.0f, NAN};
    float uv[2 * 80];
    int differ_from_first = 0;
    for (int it = 0; it < 20000; it++) {
        uint32_t n = (uint32_t)pm_rng_int(&r, 0, 80);
        int spice = (int)pm_rng_int(&r, 0, 3);   /* how far from the usual road (0: a plain one) */
        for (uint32_t v = 0; v < n; v++) {
            if (spice == 0) {   /* rows of three: U the row, V 0, 0.5, 1 */
                uv[2 * v] = (float)(v / 3) * 1.5f;
                uv[2 * v + 1] = (float)(v % 3) * 0.5f;
            } else {
                uv[2 * v] = us[pm_rng_below(&r, spice == 1 ? 9 : sizeof us / sizeof *us)];
                uv[2 * v + 1] = xs[pm_rng_below(&r, spice == 1 ? 7 : sizeof xs / sizeof *xs)];
            }
        }
        pm_prim P = {.vcount = n, .uvs = uv};
        uint32_t f0[3], f1[3], p0[3], p1[3];
        bool fok[2], pok[2];
        pm__sections(&P, f0, f1, fok);
        fast_off = true;
        pm__sections(&P, p0, p1, pok);
        fast_off = false;
        cr_assert(!memcmp(f0, p0, sizeof f0) && !memcmp(f1, p1, sizeof f1) && fok[0] == pok[0] && fok[1] == pok[1],
                  "%d (%u vertices): start %u %u %u ok %d, end %u %u %u ok %d; plain start %u %u %u ok %d, end "
                  "%u %u %u ok %d", it, n, f0[0], f0[1], f0[2], fok[0], f1[0], f1[1], f1[2], fok[1], p0[0], p0[1],
                  p0[2], pok[0], p1[0], p1[1], p1[2], pok[1]);
        differ_from_first += n > 8 && f1[1] != PM__NONE && f1[1] + 3 < n;
    }
    cr_assert_gt(differ_from_first, 1000);   /* end sections short of the last row: lanes' work, not the tail's */
}

/* pm__quad_sure (the band step's two turns in lanes) against the exact
 * orientations: true only where both are positive, and (as the filter
 * it repeats) on all clear-cut steps; points of every scale, nearly
 * collinear ones a few ulps off a line, shared and repeated points. */
Test(network_stitch_fast, band_quad_test_in_lanes_is_exact) {
    pm_rng r;
    pm_rng_seed(&r, 20261203);
    size_t sure = 0, unsure_both = 0, neither = 0;
    for (int it = 0; it < 400000; it++) {
        double sc = ldexp(1.0, (int)pm_rng_below(&r, 40) - 20), ox = pm_rng_range(&r, -5000, 5000);
        pm_v2 p[4];
        for (int i = 0; i < 4; i++) p[i] = (pm_v2){ox + pm_rng_range(&r, -1, 1) * sc, pm_rng_range(&r, -1, 1) * sc};
        int kind = (int)pm_rng_below(&r, 4);
        if (kind == 1) {   /* ob a few ulps off the line a -> b */
            double t = pm_rng_range(&r, -0.5, 1.5);
            p[2] = (pm_v2){p[0].x + t * (p[3].x - p[0].x), p[0].y + t * (p[3].y - p[0].y)};
            for (int k = (int)pm_rng_int(&r, -3, 3); k != 0; k += k > 0 ? -1 : 1)
                p[2].x = nextafter(p[2].x, k > 0 ? INFINITY : -INFINITY);
        }
        if (kind == 2) p[(int)pm_rng_below(&r, 4)] = p[(int)pm_rng_below(&r, 4)];
        pm_v2 a = p[0], oa = p[1], ob = p[2], b = p[3];
        bool both = pm_v2_orient(a, ob, b) > 0 && pm_v2_orient(a, oa, ob) > 0;
        bool lanes = pm__quad_sure(a, oa, ob, b);
        cr_assert(!lanes || both, "%d: called sure where a turn is not positive", it);
        double A[2] = {a.x, a.y}, OA[2] = {oa.x, oa.y}, OB[2] = {ob.x, ob.y}, B[2] = {b.x, b.y};
        double l1 = (A[0] - B[0]) * (OB[1] - B[1]), r1 = (A[1] - B[1]) * (OB[0] - B[0]);
        double l2 = (A[0] - OB[0]) * (OA[1] - OB[1]), r2 = (A[1] - OB[1]) * (OA[0] - OB[0]);
        bool clear = l1 - r1 > 3.3306690738754716e-16 * (fabs(l1) + fabs(r1)) &&
                     l2 - r2 > 3.3306690738754716e-16 * (fabs(l2) + fabs(r2));
#ifdef __SSE2__
        cr_assert_eq(lanes, clear, "%d: the lanes' filter is not pm_orient2d_fast's", it);
#endif
        sure += lanes, unsure_both += both && !lanes, neither += !both;
    }
    cr_log_info("band quad lanes: %zu sure, %zu positive but not sure, %zu not both positive", sure, unsure_both, neither);
    cr_assert_geq(sure, 50000);
    cr_assert_geq(unsure_both, 100);
    cr_assert_geq(neither, 50000);
}

/* pm__emit_in_order with its memo (the last road whose guess held) against
 * the same call with a fresh memo: the same verdict, remap, indices,
 * positions and counts, on roads drawn from a few kept index arrays (in
 * order, or a corner changed, or two swapped) and a few mouth sets (none,
 * the first row's sides, the last row's, both, repeated ones, random
 * ones), so that the memo meets the same indices with other mouths, other
 * indices of the same length, and the very same ones. */
static bool emit_in_order_case(const pm_prim *P, const uint32_t *mapped, uint32_t nmapped, uint32_t nv,
                               pm__road_memo *memo, uint32_t *remap, uint32_t *d, float *pos, uint32_t *counts) {
    pm_arena *a = pm_arena_create(1 << 14);
    cr_assert(a);
    pm_scene *s = pm_scene_create(a);
    cr_assert(s);
    pm_prim *A = pm_scene_add_prim(s, "asphalt", "asphalt", PM_PRIM_UV, nv + P->vcount, P->icount);
    cr_assert(A);
    for (uint32_t v = 0; v < 3 * nv; v++) A->positions[v] = (float)v * 0.5f;
    A->vcount = nv;
    for (uint32_t v = 0; v < P->vcount; v++) remap[v] = PM__NONE;
    for (uint32_t j = 0; j < nmapped; j++) remap[mapped[j]] = mapped[j] % nv;   /* a junction's vertex */
    bool ok = pm__emit_in_order(s, A, P, remap, mapped, nmapped, memo);
    counts[0] = A->vcount, counts[1] = A->icount;
    memcpy(d, A->indices, A->icount * sizeof *d);
    memcpy(pos, A->positions, 3 * (size_t)A->vcount * sizeof *pos);
    pm_arena_destroy(a);
    return ok;
}

Test(network_stitch_fast, in_order_memo_gives_the_checked_verdict) {
    enum { NPAT = 12, MAXV = 90, MAXI = 6 * MAXV };
    pm_rng r;
    pm_rng_seed(&r, 20261205);
    static uint32_t q[NPAT][MAXI];
    static float src[3 * MAXV];
    pm_prim P[NPAT];
    for (uint32_t v = 0; v < 3 * MAXV; v++) src[v] = (float)v + 0.25f;
    for (int p = 0; p < NPAT; p++) {
        /* Rows of three, two triangles per quad, vertices first used in order. */
        uint32_t rows = (uint32_t)pm_rng_int(&r, 2, MAXV / 3), n = 0;
        if (p >= 2 && pm_rng_chance(&r, 0.5)) rows = P[p - 2].vcount / 3;   /* lengths repeat with other indices */
        for (uint32_t k = 0; k + 1 < rows; k++)
            for (uint32_t c = 0; c < 2; c++) {
                uint32_t a = 3 * k + c, b = a + 1, e = a + 3, f = a + 4;
                uint32_t t[6] = {a, e, b, b, e, f};
                memcpy(q[p] + n, t, sizeof t);
                n += 6;
            }
        uint32_t ren[MAXV], next = 0;   /* renumbered in order of first use */
        for (uint32_t v = 0; v < 3 * rows; v++) ren[v] = PM__NONE;
        for (uint32_t i = 0; i < n; i++) {
            if (ren[q[p][i]] == PM__NONE) ren[q[p][i]] = next++;
            q[p][i] = ren[q[p][i]];
        }
        int change = p < 4 ? 0 : (int)pm_rng_int(&r, 0, 2);
        uint32_t at = (uint32_t)pm_rng_below(&r, n), to = (uint32_t)pm_rng_below(&r, n);
        if (change == 1) q[p][at] = (uint32_t)pm_rng_below(&r, 3 * rows);
        if (change == 2) { uint32_t x = q[p][at]; q[p][at] = q[p][to], q[p][to] = x; }
        P[p] = (pm_prim){.vcount = 3 * rows, .icount = n, .indices = q[p], .positions = src};
    }
    static uint32_t remap[MAXV], d0[MAXI], d1[MAXI];
    static float pos0[3 * 2 * MAXV], pos1[3 * 2 * MAXV];
    pm__road_memo memo = {NULL, 0, 0, {0}, NULL, 0, {0}, {0}, {false, false}};
    int hits = 0, held = 0, failed = 0;
    for (int it = 0; it < 20000; it++) {
        const pm_prim *R = &P[pm_rng_below(&r, NPAT)];
        uint32_t last = R->vcount - 3, mapped[4], nmapped = 0;
        switch (pm_rng_int(&r, 0, 5)) {
        case 1: mapped[0] = 0, mapped[1] = 2, nmapped = 2; break;
        case 2: mapped[0] = last, mapped[1] = last + 2, nmapped = 2; break;
        case 3: mapped[0] = 0, mapped[1] = 2, mapped[2] = last, mapped[3] = last + 2, nmapped = 4; break;
        case 4: mapped[0] = 0, mapped[1] = 2, mapped[2] = 0, mapped[3] = 2, nmapped = 4; break;
        case 5:
            nmapped = (uint32_t)pm_rng_int(&r, 1, 4);
            for (uint32_t j = 0; j < nmapped; j++) mapped[j] = (uint32_t)pm_rng_below(&r, R->vcount);
            break;
        default: break;
        }
        uint32_t nv = (uint32_t)pm_rng_int(&r, 1, 40), c0[2], c1[2];
        pm__road_memo fresh = {NULL, 0, 0, {0}, NULL, 0, {0}, {0}, {false, false}};
        bool ok0 = emit_in_order_case(R, mapped, nmapped, nv, &fresh, remap, d0, pos0, c0);
        uint32_t remap0[MAXV];
        memcpy(remap0, remap, R->vcount * sizeof *remap);
        hits += memo.q == R->indices;
        bool ok1 = emit_in_order_case(R, mapped, nmapped, nv, &memo, remap, d1, pos1, c1);
        cr_assert_eq(ok0, ok1, "%d: verdict %d, with the memo %d", it, ok0, ok1);
        cr_assert(c0[0] == c1[0] && c0[1] == c1[1], "%d: counts differ", it);
        cr_assert(!memcmp(remap0, remap, R->vcount * sizeof *remap), "%d: remap differs", it);
        if (ok0) {
            cr_assert(!memcmp(d0, d1, c0[1] * sizeof *d0), "%d: indices differ", it);
            cr_assert(!memcmp(pos0, pos1, 3 * (size_t)c0[0] * sizeof *pos0), "%d: positions differ", it);
        }
        held += ok0, failed += !ok0;
    }
    cr_assert(hits > 1000 && held > 4000 && failed > 4000, "%d memo hits, %d held, %d failed", hits, held, failed);
}

/* pm__sections_memo against pm__sections on roads drawn from a few kept UV
 * arrays, several of one length (the same rows with one float changed),
 * so that the memo meets the very same floats and others of that length. */
Test(network_stitch_fast, sections_memo_gives_the_sections) {
    enum { NPAT = 10, MAXV = 60 };
    pm_rng r;
    pm_rng_seed(&r, 20261206);
    static float uv[NPAT][2 * MAXV];
    static const float us[] = {0.0f, -0.0f, -1.0f, 3.0f, 7.25f, NAN};
    static const float xs[] = {0.0f, 0.5f, 1.0f, 0.25f, 0.75f};
    pm_prim P[NPAT];
    for (int p = 0; p < NPAT; p++) {
        uint32_t n = p % 2 ? P[p - 1].vcount : (uint32_t)pm_rng_int(&r, 3, MAXV);
        for (uint32_t v = 0; v < n; v++) uv[p][2 * v] = (float)(v / 3) * 1.5f, uv[p][2 * v + 1] = (float)(v % 3) * 0.5f;
        if (p >= 2) {   /* one float changed (for p odd: the only difference from p - 1) */
            uint32_t at = (uint32_t)pm_rng_below(&r, n);
            uv[p][2 * at] = us[pm_rng_below(&r, 6)], uv[p][2 * at + 1] = xs[pm_rng_below(&r, 5)];
        }
        P[p] = (pm_prim){.vcount = n, .uvs = uv[p]};
    }
    pm__road_memo memo = {NULL, 0, 0, {0}, NULL, 0, {0}, {0}, {false, false}};
    int hits = 0, differ = 0;
    for (int it = 0; it < 20000; it++) {
        const pm_prim *R = &P[pm_rng_below(&r, NPAT)];
        hits += memo.uv == R->uvs;
        uint32_t f0[3], f1[3], p0[3], p1[3];
        bool fok[2], pok[2];
        pm__sections_memo(R, &memo, f0, f1, fok);
        pm__sections(R, p0, p1, pok);
        cr_assert(!memcmp(f0, p0, sizeof f0) && !memcmp(f1, p1, sizeof f1) && fok[0] == pok[0] && fok[1] == pok[1],
                  "%d: the memo's sections differ", it);
    }
    for (int p = 1; p < NPAT; p += 2) {
        uint32_t a0[3], a1[3], b0[3], b1[3];
        bool aok[2], bok[2];
        pm__sections(&P[p - 1], a0, a1, aok);
        pm__sections(&P[p], b0, b1, bok);
        differ += memcmp(a0, b0, sizeof a0) || memcmp(a1, b1, sizeof a1) || aok[0] != bok[0] || aok[1] != bok[1];
    }
    cr_assert(hits > 1000 && differ >= 2, "%d memo hits, %d pairs of one length with other sections", hits, differ);
}
