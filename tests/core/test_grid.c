#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grid/grid.h"
#include "geom/predicates.h"
#include "scene/result.h"

static const pm_grid_shape shapes[] = {PM_GRID_HEXAGON, PM_GRID_SQUARE, PM_GRID_DISK};
static const pm_grid_points modes[] = {PM_GRID_LATTICE, PM_GRID_POISSON};

static pm_grid_params params(pm_grid_shape s, pm_grid_points m, uint64_t seed, uint32_t size) {
    pm_grid_params p;
    pm_grid_defaults(&p);
    p.shape = s;
    p.points = m;
    p.seed = seed;
    p.size = size;
    return p;
}

static const double *vp(const pm_grid *g, uint32_t v) { return g->verts + 2 * (size_t)v; }

/* Every quad strictly convex and CCW seen from +Y, checked exactly. */
static void check_quads(const pm_grid *g) {
    cr_assert_gt(g->nquads, 0);
    for (uint32_t i = 0; i < g->nquads; i++) {
        const uint32_t *q = g->quads + 4 * (size_t)i;
        for (int k = 0; k < 4; k++) {
            cr_assert_lt(q[k], g->nverts);
            cr_assert_gt(pm_orient_xz(vp(g, q[(k + 3) % 4]), vp(g, q[k]), vp(g, q[(k + 1) % 4])), 0,
                         "quad %u corner %d not convex / not CCW", i, k);
        }
    }
    cr_assert_eq(g->quality.inverted_quads, 0);
    cr_assert_gt(g->quality.min_scaled_jacobian, 0);
}

/* A directed quad edge, for pairing edges up. */
typedef struct dedge { uint32_t a, b; } dedge;

static int cmp_dedge(const void *x, const void *y) {
    const dedge *p = x, *q = y;
    uint32_t pa = p->a < p->b ? p->a : p->b, pb = p->a < p->b ? p->b : p->a;
    uint32_t qa = q->a < q->b ? q->a : q->b, qb = q->a < q->b ? q->b : q->a;
    if (pa != qa) return pa < qa ? -1 : 1;
    if (pb != qb) return pb < qb ? -1 : 1;
    return 0;
}

/* The quads form a disk: each edge is used once (boundary) or twice in
 * opposite directions, V - E + F = 1, the boundary flags are exactly the
 * ends of boundary edges, and the neighbour lists are the edge graph:
 * ascending, symmetric, complete. */
static void check_topology(const pm_grid *g) {
    size_t ne = 4 * (size_t)g->nquads;
    dedge *e = malloc(ne * sizeof *e);
    for (uint32_t i = 0; i < g->nquads; i++)
        for (int k = 0; k < 4; k++) e[4 * i + k] = (dedge){g->quads[4 * i + k], g->quads[4 * i + (k + 1) % 4]};
    qsort(e, ne, sizeof *e, cmp_dedge);
    uint8_t *on_boundary = calloc(g->nverts, 1);
    size_t edges = 0;
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && cmp_dedge(&e[i], &e[j]) == 0) j++;
        cr_assert_leq(j - i, 2, "edge used %zu times", j - i);
        if (j - i == 2) cr_assert(e[i].a == e[i + 1].b && e[i].b == e[i + 1].a, "edge twice the same way");
        else on_boundary[e[i].a] = on_boundary[e[i].b] = 1;
        edges++;
        i = j;
    }
    cr_assert_eq((int64_t)g->nverts - (int64_t)edges + (int64_t)g->nquads, 1, "not a disk");
    for (uint32_t v = 0; v < g->nverts; v++) {
        cr_assert_eq(g->boundary[v], on_boundary[v], "boundary flag of %u", v);
        uint32_t s = g->nbr_start[v], t = g->nbr_start[v + 1];
        cr_assert_geq(t - s, 2);
        for (uint32_t j = s; j < t; j++) {
            uint32_t u = g->nbr[j];
            if (j > s) cr_assert_lt(g->nbr[j - 1], u);
            dedge key = {v, u};
            cr_assert(bsearch(&key, e, ne, sizeof *e, cmp_dedge), "%u-%u is no quad edge", v, u);
            bool back = false;
            for (uint32_t k = g->nbr_start[u]; k < g->nbr_start[u + 1]; k++) back |= g->nbr[k] == v;
            cr_assert(back, "neighbours not symmetric: %u %u", v, u);
        }
    }
    /* 2 E = sum of neighbour counts. */
    cr_assert_eq(g->nbr_start[g->nverts], 2 * edges);
    free(on_boundary);
    free(e);
}

Test(grid, all_quads_convex_ccw_every_shape_and_mode) {
    for (int s = 0; s < 3; s++)
        for (int m = 0; m < 2; m++)
            for (int r = 0; r < 2; r++)
                for (uint64_t seed = 1; seed <= 4; seed++) {
                    pm_grid_params p = params(shapes[s], modes[m], seed, 3 + (uint32_t)seed);
                    p.relax.mode = r ? PM_GRID_RELAX_LAPLACIAN : PM_GRID_RELAX_SQUARE;
                    p.relax.lock_boundary = seed % 2;
                    pm_arena *a = pm_arena_create(0);
                    pm_grid g;
                    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
                    check_quads(&g);
                    check_topology(&g);
                    cr_assert_leq(g.npoints, pm_grid_point_bound(&p));
                    cr_assert_leq(g.nverts, pm_grid_vertex_bound(&p));
                    pm_arena_destroy(a);
                }
}

/* Subdivision: 4 quads per merged pair, 3 per leftover triangle. */
Test(grid, stage_counts_add_up) {
    pm_grid_params p = params(PM_GRID_HEXAGON, PM_GRID_LATTICE, 9, 6);
    pm_arena *a = pm_arena_create(0);
    pm_grid g;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
    cr_assert_eq(g.npoints, 3 * 6 * 7 + 1);
    /* The hexagon's 6 n^2 triangles; rounding makes the lattice's edge rows
     * a hair off straight, and the flat slivers that leaves are dropped. */
    cr_assert_eq(g.ntriangles - g.ndropped, 6 * 36);
    cr_assert_eq(g.ntriangles - g.ndropped, 2 * g.nmerged + g.nleft_triangles);
    cr_assert_eq(g.nquads, 4 * g.nmerged + 3 * g.nleft_triangles);
    /* The matching leaves few triangles: under a tenth of the hexagon's. */
    cr_assert_lt(g.nleft_triangles, g.ntriangles / 10, "left %u", g.nleft_triangles);
    pm_arena_destroy(a);
}

Test(grid, merge_share_and_angle_limits) {
    pm_grid_params p = params(PM_GRID_HEXAGON, PM_GRID_LATTICE, 3, 5);
    pm_arena *a = pm_arena_create(0);
    pm_grid g;
    p.merge = 0;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
    cr_assert_eq(g.nmerged, 0);
    cr_assert_eq(g.nquads, 3 * (g.ntriangles - g.ndropped));
    check_quads(&g);
    /* Lattice pairs make 60/120 degree rhombi: limits of 80-100 forbid them. */
    p.merge = 1;
    p.merge_min_angle = 80;
    p.merge_max_angle = 100;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
    cr_assert_eq(g.nmerged, 0);
    p.merge_min_angle = 59;
    p.merge_max_angle = 121;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
    uint32_t full = g.nmerged;
    cr_assert_gt(full, (g.ntriangles - g.ndropped) / 3);
    p.merge = 0.3;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
    cr_assert_lt(g.nmerged, full);
    cr_assert_gt(g.nmerged, 0);
    pm_arena_destroy(a);
}

Test(grid, locked_boundary_stays_put) {
    for (int s = 0; s < 3; s++) {
        pm_grid_params p = params(shapes[s], PM_GRID_POISSON, 11, 5);
        pm_arena *a = pm_arena_create(0);
        pm_grid g0, g1;
        p.relax.iterations = 0;
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g0), PM_OK);
        p.relax.iterations = 30;
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g1), PM_OK);
        cr_assert_eq(g0.nverts, g1.nverts);
        uint32_t moved_inside = 0;
        for (uint32_t v = 0; v < g0.nverts; v++) {
            bool same = g0.verts[2 * v] == g1.verts[2 * v] && g0.verts[2 * v + 1] == g1.verts[2 * v + 1];
            if (g0.boundary[v]) cr_assert(same, "boundary vertex %u moved", v);
            else moved_inside += !same;
        }
        cr_assert_gt(moved_inside, g0.nverts / 2);
        pm_arena_destroy(a);
    }
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Positions (as the floats the mesh carries) and quads. */
static uint64_t grid_hash(const pm_grid *g) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < 2 * g->nverts; i++) {
        float f = (float)g->verts[i];
        h = fnv(h, &f, sizeof f);
    }
    return fnv(h, g->quads, 4 * sizeof(uint32_t) * g->nquads);
}

/* Golden hashes: a change here changes output and must bump the grid
 * generator's version. */
Test(grid, golden_hashes) {
    static const struct { pm_grid_shape s; pm_grid_points m; pm_grid_relax_mode r; uint64_t seed; uint64_t hash; } cases[] = {
        {PM_GRID_HEXAGON, PM_GRID_LATTICE, PM_GRID_RELAX_SQUARE, 1, 0x0dba5ad305deeceaull},
        {PM_GRID_HEXAGON, PM_GRID_POISSON, PM_GRID_RELAX_SQUARE, 2, 0x55979d739313d762ull},
        {PM_GRID_SQUARE, PM_GRID_LATTICE, PM_GRID_RELAX_LAPLACIAN, 3, 0x8a7b2a9b4644ef5bull},
        {PM_GRID_SQUARE, PM_GRID_POISSON, PM_GRID_RELAX_SQUARE, 4, 0x647074f0309de09bull},
        {PM_GRID_DISK, PM_GRID_LATTICE, PM_GRID_RELAX_SQUARE, 5, 0xdf0248071ff8e45dull},
        {PM_GRID_DISK, PM_GRID_POISSON, PM_GRID_RELAX_LAPLACIAN, 18446744073709551615ull, 0xf43a58fe44b52f59ull},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pm_grid_params p = params(cases[i].s, cases[i].m, cases[i].seed, 6);
        p.relax.mode = cases[i].r;
        pm_arena *a = pm_arena_create(0);
        pm_grid g1, g2;
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g1), PM_OK);
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g2), PM_OK);
        uint64_t h = grid_hash(&g1);
        cr_assert_eq(h, grid_hash(&g2));
        cr_expect_eq(h, cases[i].hash, "case %zu: hash 0x%016llx", i, (unsigned long long)h);
        pm_arena_destroy(a);
    }
}

Test(grid, seeds_differ) {
    pm_grid_params p = params(PM_GRID_HEXAGON, PM_GRID_LATTICE, 1, 5);
    pm_arena *a = pm_arena_create(0);
    pm_grid g1, g2;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g1), PM_OK);
    p.seed = 2;
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g2), PM_OK);
    cr_assert_neq(grid_hash(&g1), grid_hash(&g2));
    pm_arena_destroy(a);
}

/* The quality goal, on a few hundred seeds here (bench/bench_grid runs
 * 1,000): with defaults every grid's 5th-percentile scaled Jacobian is at
 * least 0.8 with no inverted quad, and squareness beats plain Laplacian on
 * the same grids. */
Test(grid, quality_goal_over_seeds, .timeout = 120) {
    double sum_sq = 0, sum_lap = 0, min_sq = 0, min_lap = 0;
    const unsigned n = 300;
    for (uint64_t seed = 1; seed <= n; seed++) {
        pm_grid_params p;
        pm_grid_defaults(&p);
        p.seed = seed;
        pm_arena *a = pm_arena_create(0);
        pm_grid g;
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
        cr_assert_geq(g.quality.p05_scaled_jacobian, 0.8, "seed %llu: p05 %.3f",
                      (unsigned long long)seed, g.quality.p05_scaled_jacobian);
        cr_assert_eq(g.quality.inverted_quads, 0);
        sum_sq += g.quality.p05_scaled_jacobian;
        min_sq += g.quality.min_scaled_jacobian;
        p.relax.mode = PM_GRID_RELAX_LAPLACIAN;
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
        cr_assert_eq(g.quality.inverted_quads, 0);
        sum_lap += g.quality.p05_scaled_jacobian;
        min_lap += g.quality.min_scaled_jacobian;
        pm_arena_destroy(a);
    }
    cr_assert_gt(sum_sq / n, sum_lap / n + 0.01, "p05: square %.3f laplacian %.3f", sum_sq / n, sum_lap / n);
    cr_assert_gt(min_sq / n, min_lap / n + 0.05, "min: square %.3f laplacian %.3f", min_sq / n, min_lap / n);
}

/* Poisson grids meet the same bar in every shape. */
Test(grid, poisson_quality, .timeout = 120) {
    for (int s = 0; s < 3; s++)
        for (uint64_t seed = 1; seed <= 40; seed++) {
            pm_grid_params p = params(shapes[s], PM_GRID_POISSON, seed, 8);
            pm_arena *a = pm_arena_create(0);
            pm_grid g;
            cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
            cr_assert_geq(g.quality.p05_scaled_jacobian, 0.8, "%s seed %llu: %.3f",
                          pm_grid_shape_name(p.shape), (unsigned long long)seed,
                          g.quality.p05_scaled_jacobian);
            cr_assert_eq(g.quality.inverted_quads, 0);
            pm_arena_destroy(a);
        }
}

Test(grid, quality_measure_known_shapes) {
    /* A unit square (SJ 1) and a 60-degree rhombus (SJ sin 60), CCW from +Y:
     * in x/z that is clockwise, e.g. (0,0) (0,1) (1,1) (1,0). */
    double v[] = {0, 0, 0, 1, 1, 1, 1, 0, 3, 0, 3.5, sqrt(0.75), 4.5, sqrt(0.75), 4, 0};
    uint32_t q[] = {0, 1, 2, 3, 4, 5, 6, 7};
    pm_arena *a = pm_arena_create(0);
    pm_grid_quality qa;
    pm_grid_measure(v, q, 1, a, &qa);
    cr_assert_float_eq(qa.min_scaled_jacobian, 1.0, 1e-12);
    cr_assert_eq(qa.angles_outside_45_135, 0);
    pm_grid_measure(v, q, 2, a, &qa);
    cr_assert_float_eq(qa.min_scaled_jacobian, sqrt(0.75), 1e-12);
    cr_assert_float_eq(qa.mean_scaled_jacobian, (1 + sqrt(0.75)) / 2, 1e-12);
    cr_assert_eq(qa.inverted_quads, 0);
    /* Reversed winding counts as inverted. */
    uint32_t r[] = {3, 2, 1, 0};
    pm_grid_measure(v, r, 1, a, &qa);
    cr_assert_eq(qa.inverted_quads, 1);
    cr_assert_lt(qa.min_scaled_jacobian, 0);
    pm_arena_destroy(a);
}

Test(grid, scene_mesh) {
    for (int s = 0; s < 3; s++) {
        pm_grid_params p = params(shapes[s], PM_GRID_POISSON, 7, 4);
        pm_arena *a = pm_arena_create(0);
        pm_grid g;
        pm_scene *sc;
        cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
        cr_assert_eq(pm_grid_scene(a, &p, &g, &sc), PM_OK);
        cr_assert_eq(sc->nprims, 1);
        const pm_prim *pr = &sc->prims[0];
        cr_assert_str_eq(pr->name, "grid");
        cr_assert_str_eq(pr->material, "grid");
        cr_assert_eq(pr->vcount, g.nverts);
        cr_assert_eq(pr->icount, 6 * g.nquads);
        for (uint32_t v = 0; v < pr->vcount; v++) {
            cr_assert_eq(pr->positions[3 * v + 1], 0.0f);
            cr_assert_eq(pr->positions[3 * v], (float)g.verts[2 * v]);
            cr_assert_eq(pr->normals[3 * v + 1], 1.0f);
            cr_assert(pr->uvs[2 * v] >= 0 && pr->uvs[2 * v] <= 1 && pr->uvs[2 * v + 1] >= 0 &&
                      pr->uvs[2 * v + 1] <= 1);
        }
        for (uint32_t t = 0; t < pr->icount; t += 3) {
            double c[3][2];
            for (int k = 0; k < 3; k++) {
                c[k][0] = pr->positions[3 * pr->indices[t + k]];
                c[k][1] = pr->positions[3 * pr->indices[t + k] + 2];
            }
            cr_assert_gt(pm_orient_xz(c[0], c[1], c[2]), 0, "triangle %u not CCW from +Y", t / 3);
        }
        pm_meta *quads = pm_meta_get(sc->meta, "quads"), *nb = pm_meta_get(sc->meta, "neighbors");
        cr_assert(quads && quads->kind == PM_META_ARR && quads->u.kids.count == g.nquads);
        cr_assert(nb && nb->kind == PM_META_ARR && nb->u.kids.count == g.nverts);
        cr_assert_eq(quads->u.kids.first->u.kids.count, 4);
        pm_meta *qual = pm_meta_get(sc->meta, "quality");
        cr_assert(qual && pm_meta_get(qual, "inverted_quads")->u.i == 0);
        cr_assert(pm_meta_get(sc->meta, "boundary") && pm_meta_get(sc->meta, "counts"));
        pm_arena_destroy(a);
    }
}

Test(grid, smallest_sizes) {
    for (int s = 0; s < 3; s++)
        for (int m = 0; m < 2; m++)
            for (uint32_t size = 1; size <= 2; size++) {
                pm_grid_params p = params(shapes[s], modes[m], 1, size);
                pm_arena *a = pm_arena_create(0);
                pm_grid g;
                cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK, "%s %s %u",
                             pm_grid_shape_name(p.shape), pm_grid_points_name(p.points), size);
                check_quads(&g);
                check_topology(&g);
                pm_arena_destroy(a);
            }
}

Test(grid, cancel_and_memory_limit) {
    pm_grid_params p = params(PM_GRID_HEXAGON, PM_GRID_POISSON, 1, 10);
    pm_arena *a = pm_arena_create(0);
    pm_grid g;
    volatile int cancel = 1;
    cr_assert_eq(pm_grid_build(a, &p, &cancel, &g), PM_ERR_CANCELLED);
    pm_arena_destroy(a);
    a = pm_arena_create(4096);
    pm_arena_set_limit(a, 64 * 1024);
    cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_ERR_NOMEM);
    pm_arena_destroy(a);
}

/* Poisson's point bound holds with margin for every shape and many seeds. */
Test(grid, point_bound_holds) {
    for (int s = 0; s < 3; s++)
        for (uint64_t seed = 1; seed <= 20; seed++) {
            pm_grid_params p = params(shapes[s], PM_GRID_POISSON, seed, 1 + (uint32_t)seed % 12);
            p.relax.iterations = 0;
            pm_arena *a = pm_arena_create(0);
            pm_grid g;
            cr_assert_eq(pm_grid_build(a, &p, NULL, &g), PM_OK);
            cr_assert_leq(g.npoints, pm_grid_point_bound(&p));
            pm_arena_destroy(a);
        }
}
