/* The junction contour's star proof (core/junction/junction_mesh.c: a
 * contour star-shaped around the junction's centre skips the simple-polygon
 * sweep, and its ear clipping skips the classification,
 * pm_earclip_star):
 *   - the claim on random polygons (star-shaped, wound twice, random
 *     walks, on a small integer grid full of collinear points and ties,
 *     and float-snapped): wherever pm_polygon_star_around holds for some
 *     point, pm__poly_simple accepts the polygon and pm_earclip_star gives
 *     pm_earclip's triangles;
 *   - whole junctions (random arm sets, turned crosses far from the
 *     origin) built with the proof and without it: the same result code,
 *     diagnostics and bytes.
 * junction_mesh.c is compiled into this test with its switch below (its
 * external symbols are defined here, so the linker takes this copy). */
#include <criterion/criterion.h>
#include <stdbool.h>

static bool star_off;      /* the plain path: always the sweep and pm_earclip */
static size_t star_used, star_asked;   /* contours the proof settled, of those tried */
static bool star_count(bool s) {
    star_asked++;
    star_used += s;
    return s;
}
#define PM__JMESH_STAR(s) (!star_off && star_count(s))
#include "../../core/junction/junction_mesh.c"

#include "geom/earclip.h"
#include "geom/polygon.h"
#include "scene/rng.h"
#include "pm_test_junction.h"

#define MAXN 48

/* One of the polygon shapes above in pts (x, y pairs); returns n; c: the
 * point it was built around. */
static size_t random_polygon(pm_rng *g, double *pts, double c[2]) {
    size_t n = (size_t)pm_rng_int(g, 3, MAXN / 2);
    int kind = (int)pm_rng_below(g, 6) - 2;   /* star-shaped round c half the time */
    if (kind < 0) kind = 0;
    bool grid = pm_rng_chance(g, 0.4), far = !grid && pm_rng_chance(g, 0.5);
    c[0] = grid ? (double)pm_rng_int(g, -3, 3) : pm_rng_range(g, -50, 50);
    c[1] = grid ? (double)pm_rng_int(g, -3, 3) : pm_rng_range(g, -50, 50);
    if (kind == 3) {   /* a random walk: rarely simple */
        for (size_t i = 0; i < n; i++) {
            pts[2 * i] = c[0] + (grid ? (double)pm_rng_int(g, -6, 6) : pm_rng_range(g, -30, 30));
            pts[2 * i + 1] = c[1] + (grid ? (double)pm_rng_int(g, -6, 6) : pm_rng_range(g, -30, 30));
        }
        return n;
    }
    /* Increasing angles, once round (twice for kind 2), radii as drawn. */
    double ang[MAXN], turns = kind == 2 ? 2 : 1;
    for (size_t i = 0; i < n; i++) {
        ang[i] = pm_rng_range(g, 0, turns * 6.283185307179586);
        for (size_t j = i; j > 0 && ang[j - 1] > ang[j]; j--) {
            double t = ang[j];
            ang[j] = ang[j - 1], ang[j - 1] = t;
        }
    }
    for (size_t i = 0; i < n; i++) {
        double a = ang[i], r = kind == 1 ? pm_rng_range(g, 1, 30) : pm_rng_range(g, 10, 30);
        double x = c[0] + r * cos(a), y = c[1] + r * sin(a);
        if (grid) x = round(x / 2), y = round(y / 2);   /* small coordinates: ties and collinear runs */
        else if (far) x = (float)(x + 4000), y = (float)(y - 3000);
        pts[2 * i] = x, pts[2 * i + 1] = y;
    }
    if (grid) c[0] = round(c[0] / 2), c[1] = round(c[1] / 2);
    else if (far) c[0] = (float)(c[0] + 4000), c[1] = (float)(c[1] - 3000);
    return n;
}

Test(junction_star, star_polygons_are_simple_and_clip_alike) {
    pm_rng g;
    pm_rng_seed(&g, 0x57a2);
    size_t star = 0, not_star = 0, not_simple = 0, clipped = 0;
    pm_arena *a = pm_arena_create(0);
    for (int it = 0; it < 60000; it++) {
        double pts[2 * MAXN], c[2];
        size_t n = random_polygon(&g, pts, c);
        pm_v2 v[MAXN];
        for (size_t i = 0; i < n; i++) v[i] = pm_v2_xy(pts[2 * i], pts[2 * i + 1]);
        bool simple = pm__poly_simple(v, n, NULL);
        not_simple += !simple;
        /* The point it was built around, the vertex mean, a random one. */
        double cs[3][2] = {{c[0], c[1]}, {0, 0}, {c[0] + pm_rng_range(&g, -3, 3), c[1] + pm_rng_range(&g, -3, 3)}};
        for (size_t i = 0; i < n; i++) cs[1][0] += pts[2 * i] / (double)n, cs[1][1] += pts[2 * i + 1] / (double)n;
        for (int k = 0; k < 3; k++) {
            if (!pm_polygon_star_around(pts, n, cs[k])) {
                not_star++;
                continue;
            }
            star++;
            cr_assert(simple, "case %d: star-shaped around a point, yet not simple", it);
            uint32_t t0[3 * MAXN], t1[3 * MAXN];
            pm_arena_reset(a);
            long n0 = pm_earclip(a, pts, n, t0), n1 = pm_earclip_star(a, pts, n, cs[k], t1);
            cr_assert_eq(n0, n1, "case %d", it);
            cr_assert_eq(n0, (long)n - 2, "case %d", it);
            cr_assert_eq(memcmp(t0, t1, 3 * (size_t)n0 * sizeof *t0), 0, "case %d: other triangles", it);
            clipped++;
        }
    }
    pm_arena_destroy(a);
    cr_assert_gt(star, 50000);
    cr_assert_gt(not_star, 100000);
    cr_assert_gt(not_simple, 15000);
    cr_assert_eq(clipped, star);
}

static bool floats_same(const float *a, const float *b, size_t n) {
    if (!a || !b) return a == b;
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void same_builds(const jrun *x, const jrun *y, size_t narms, int it) {
    cr_assert_eq(x->rc, y->rc, "case %d", it);
    cr_assert_eq(x->d.error, y->d.error, "case %d", it);
    cr_assert_str_eq(x->d.message, y->d.message, "case %d", it);
    cr_assert_eq(x->d.nwarnings, y->d.nwarnings, "case %d", it);
    if (x->rc != PM_OK) return;
    cr_assert_eq(x->s->nprims, y->s->nprims);
    for (uint32_t i = 0; i < x->s->nprims; i++) {
        const pm_prim *p = &x->s->prims[i], *q = &y->s->prims[i];
        cr_assert_str_eq(p->name, q->name);
        cr_assert_eq(p->vcount, q->vcount, "case %d prim %u", it, i);
        cr_assert_eq(p->icount, q->icount, "case %d prim %u", it, i);
        cr_assert(floats_same(p->positions, q->positions, 3 * (size_t)p->vcount));
        cr_assert(floats_same(p->normals, q->normals, 3 * (size_t)p->vcount));
        cr_assert(floats_same(p->uvs, q->uvs, 2 * (size_t)p->vcount));
        cr_assert_eq(memcmp(p->indices, q->indices, p->icount * sizeof *p->indices), 0, "case %d prim %u", it, i);
    }
    cr_assert_eq(!x->d.slab_ends, !y->d.slab_ends);
    if (x->d.slab_ends)
        cr_assert_eq(memcmp(x->d.slab_ends, y->d.slab_ends, 2 * narms * sizeof *x->d.slab_ends), 0, "case %d", it);
}

/* A network's junction: four arms at right angles (or nearly), turned,
 * its centre far out. */
static void turned_cross(pm_rng *g, jcase *c) {
    jcase_init(c);
    double t = pm_rng_range(g, 0, 360), w = pm_rng_chance(g, 0.5) ? 7 : pm_rng_range(g, 3, 14);
    size_t n = pm_rng_chance(g, 0.7) ? 4 : 3;
    for (size_t i = 0; i < n; i++) add_arm(c, t + 90.0 * (double)i + (pm_rng_chance(g, 0.3) ? pm_rng_range(g, -8, 8) : 0), w);
    c->p.has_center = true;
    c->p.center[0] = pm_rng_range(g, -6000, 6000);
    c->p.center[1] = pm_rng_range(g, -6000, 6000);
    c->p.corner_radius = pm_rng_chance(g, 0.2) ? pm_rng_range(g, 0, 12) : 3;
    if (pm_rng_chance(g, 0.4)) set_sidewalks(c, pm_rng_range(g, 0.5, 4), 0.15);
}

Test(junction_star, junctions_build_alike_with_and_without_the_proof) {
    pm_rng g;
    pm_rng_seed(&g, 0x57a3);
    size_t ok = 0, failed = 0;
    star_used = star_asked = 0;
    for (int it = 0; it < 4000; it++) {
        jcase c;
        if (it % 2) random_case(&g, &c);
        else turned_cross(&g, &c);
        c.p.lean_meta = pm_rng_chance(&g, 0.5);
        star_off = false;
        jrun fast = run(&c);
        star_off = true;
        jrun plain = run(&c);
        star_off = false;
        same_builds(&fast, &plain, c.p.narms, it);
        ok += fast.rc == PM_OK;
        failed += fast.rc != PM_OK;
        pm_arena_destroy(fast.a);
        pm_arena_destroy(plain.a);
    }
    /* Most contours are star-shaped round their centre; some are not, and
     * some builds fail. */
    cr_assert_gt(star_used, star_asked / 2);
    cr_assert_lt(star_used, star_asked);
    cr_assert_gt(ok, 2000);
    cr_assert_gt(failed, 10);
}

/* A band as pm__sidewalk_band builds it: n curb points on an arc (or a
 * noisy one) and their outer points w further out from the arc's centre
 * (outward or across it, a wide band on a tight arc crossing itself),
 * now and then one outer point for all (a sidewalk corner); the outline
 * curb forward, outer points back. Returns the outline's size. */
static size_t random_band(pm_rng *g, pm__side *s, pm_v2 *inner, pm_v2 *outline) {
    size_t n = (size_t)pm_rng_int(g, 2, 12);
    double cx = pm_rng_range(g, -50, 50), cy = pm_rng_range(g, -50, 50), r = pm_rng_range(g, 0.5, 12);
    double a0 = pm_rng_range(g, 0, 6.283185307179586), sweep = pm_rng_range(g, 0.2, 5.5) * (pm_rng_chance(g, 0.5) ? 1 : -1);
    double w = pm_rng_range(g, 0.2, 1.5) * r * (pm_rng_chance(g, 0.8) ? 1 : -1), noise = pm_rng_chance(g, 0.3) ? pm_rng_range(g, 0, 2) : 0;
    bool corner = pm_rng_chance(g, 0.15);
    s->nc = s->nb = n;
    for (size_t i = 0; i < n; i++) {
        double a = a0 + sweep * (double)i / (double)(n - 1), u = cos(a), v = sin(a);
        inner[i] = pm_v2_xy((float)(cx + r * u + pm_rng_range(g, -noise, noise)), (float)(cy + r * v + pm_rng_range(g, -noise, noise)));
        s->bc[i] = i;
        s->bout[i] = corner ? pm_v2_xy((float)(cx + (r - w) * cos(a0 + sweep / 2)), (float)(cy + (r - w) * sin(a0 + sweep / 2)))
                            : pm_v2_xy((float)(cx + (r - w) * u), (float)(cy + (r - w) * v));
    }
    for (size_t j = 0; j < n; j++) outline[j] = inner[j], outline[n + j] = s->bout[n - 1 - j];
    size_t map[64];
    return pm__dedupe(outline, 2 * n, map, true);
}

/* The band's star test (pm__band_star) on random bands, simple or not:
 * it is pm_polygon_star_around's on the outline reversed, and wherever it
 * holds, pm__poly_simple accepts the outline. */
Test(junction_star, band_star_implies_simple) {
    pm_rng g;
    pm_rng_seed(&g, 0x57a4);
    size_t star = 0, not_simple = 0, simple_not_star = 0;
    for (int it = 0; it < 200000; it++) {
        pm__side s;
        size_t bc[12];
        pm_v2 bout[12], inner[12], outline[24];
        s.bc = bc, s.bout = bout;
        size_t no = random_band(&g, &s, inner, outline);
        bool simple = no >= 3 && pm__poly_simple(outline, no, NULL);
        not_simple += !simple;
        bool st = pm__band_star(&s, inner, outline, no);
        if (no >= 3) {
            /* pm_polygon_star_around's answer on the outline reversed,
             * round the same point. */
            size_t mid = s.nc / 2, j = 0;
            while (j < s.nb && s.bc[j] != mid) j++;
            double rev[48], c[2] = {0.5 * (inner[mid].x + s.bout[j].x), 0.5 * (inner[mid].y + s.bout[j].y)};
            for (size_t i = 0; i < no; i++) rev[2 * i] = outline[no - 1 - i].x, rev[2 * i + 1] = outline[no - 1 - i].y;
            cr_assert_eq(st, pm_polygon_star_around(rev, no, c), "band %d", it);
        }
        if (st) {
            star++;
            cr_assert(simple, "band %d: star-shaped round its middle, yet not simple", it);
        } else {
            simple_not_star += simple;
        }
    }
    cr_log_info("bands: %zu star-shaped, %zu not simple, %zu simple but not star-shaped", star, not_simple, simple_not_star);
    cr_assert_gt(star, 20000);
    cr_assert_gt(not_simple, 20000);
    cr_assert_gt(simple_not_star, 10000);
}
