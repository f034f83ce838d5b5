#include <cglm/quat.h>
#include <criterion/criterion.h>
#include <math.h>
#include <meshoptimizer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "road/road.h"
#include "pm_test_overlap.h"

/* ---- helpers ---- */

static const pm_prim *find_prim(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, name) == 0) return &s->prims[i];
    return NULL;
}

static const pm_meta *meta(const pm_scene *s, const char *key) {
    const pm_meta *m = pm_meta_get(s->meta, key);
    cr_assert_not_null(m, "metadata %s", key);
    return m;
}

static double meta_num(const pm_meta *obj, const char *key) {
    const pm_meta *m = pm_meta_get(obj, key);
    cr_assert_not_null(m, "metadata %s", key);
    return m->kind == PM_META_INT ? (double)m->u.i : m->u.n;
}

/* Every triangle of every primitive faces up: its normal, from the float
 * positions, has y > 0 (and so its area is positive). */
static void assert_faces_up(const pm_scene *s, const char *what) {
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *p = &s->prims[i];
        for (uint32_t t = 0; t < p->icount; t += 3) {
            const float *a = p->positions + 3 * p->indices[t], *b = p->positions + 3 * p->indices[t + 1],
                        *c = p->positions + 3 * p->indices[t + 2];
            double ny = (double)(b[2] - a[2]) * (c[0] - a[0]) - (double)(b[0] - a[0]) * (c[2] - a[2]);
            cr_assert_gt(ny, 0.0, "%s: %s triangle %u faces down (%g)", what, p->name, t / 3, ny);
        }
        for (uint32_t v = 0; v < p->vcount; v++) {
            const float *n = p->normals + 3 * v;
            double l = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
            cr_assert_float_eq(l, 1.0, 1e-5, "%s: %s normal %u not unit", what, p->name, v);
            cr_assert_gt(n[1], 0.0f, "%s: %s normal %u points down", what, p->name, v);
        }
    }
}

typedef struct edge { uint32_t *v; size_t n; const pm_prim *p; } edge;

static int cmp_u_prim_dummy;
static const pm_prim *cmp_prim;
static int cmp_u(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    float ua = cmp_prim->uvs[2 * a], ub = cmp_prim->uvs[2 * b];
    if (ua != ub) return ua < ub ? -1 : 1;
    return a < b ? -1 : (a > b);
}

/* The vertices of one column (its V), in road order (sorted by U). */
static edge column(const pm_prim *p, float v) {
    edge e = {malloc(p->vcount * sizeof(uint32_t)), 0, p};
    for (uint32_t i = 0; i < p->vcount; i++)
        if (p->uvs[2 * i + 1] == v) e.v[e.n++] = i;
    cmp_prim = p;
    (void)cmp_u_prim_dummy;
    qsort(e.v, e.n, sizeof(uint32_t), cmp_u);
    return e;
}

static const float *epos(const edge *e, size_t k) { return e->p->positions + 3 * e->v[k]; }
static float eu(const edge *e, size_t k) { return e->p->uvs[2 * e->v[k]]; }

static double fdist(const float *a, const float *b) {
    double d0 = (double)a[0] - b[0], d1 = (double)a[1] - b[1], d2 = (double)a[2] - b[2];
    return sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* U along the column starts at 0 and equals its own accumulated length x
 * uv_scale (1e-4 relative). Returns the column's length. A column may lack
 * its first or last vertex when it sits on an end section inside a fold
 * (no triangle uses it): then U counts from the first vertex present. */
static double assert_own_length_u(const edge *e, double uv_scale, const char *what) {
    cr_assert_gt(e->n, 1, "%s: column has %zu vertices", what, e->n);
    double u0 = eu(e, 0);
    if (u0 != 0.0f) cr_assert_leq(u0, eu(e, 1), "%s: U starts at %g", what, u0);
    double acc = 0.0;
    for (size_t k = 1; k < e->n; k++) {
        acc += fdist(epos(e, k - 1), epos(e, k));
        double want = acc * uv_scale, got = eu(e, k) - u0;
        cr_assert_leq(fabs(got - want), 1e-4 * fmax(want, 1e-3) + 1e-6,
                      "%s: U %g != length x uv_scale %g at %zu", what, got, want, k);
    }
    return acc;
}

static void random_road(pm_rng *r, pm_road_params *p, double *pts, size_t max) {
    pm_road_params_default(p);
    size_t n = 2 + (size_t)pm_rng_below(r, max - 1);
    double x = 0, y = 0, z = 0, heading = pm_rng_range(r, 0, 6.283);
    for (size_t i = 0; i < n; i++) {
        pts[3 * i] = x;
        pts[3 * i + 1] = y;
        pts[3 * i + 2] = z;
        double step = pm_rng_range(r, 2.0, 50.0);
        heading += pm_rng_range(r, -2.8, 2.8);   /* hairpins included */
        x += step * cos(heading);
        z += step * sin(heading);
        y += pm_rng_range(r, -2.0, 2.0);
    }
    p->points = pts;
    p->npoints = n;
    p->closed = n >= 3 && pm_rng_chance(r, 0.25);
    p->curve = pm_rng_chance(r, 0.15) ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
    p->alpha = pm_rng_chance(r, 0.3) ? pm_rng_unit(r) : 0.5;
    p->max_error = pm_rng_range(r, 0.01, 0.5);
    p->max_segment = pm_rng_range(r, 1.0, 10.0);
    p->width = pm_rng_range(r, 3.0, 14.0);
    p->shoulder = pm_rng_chance(r, 0.3) ? 0.0 : pm_rng_range(r, 0.3, 3.0);
    p->cross_segments = 1 + (uint32_t)pm_rng_below(r, 6);
    p->bank_max_degrees = pm_rng_chance(r, 0.5) ? pm_rng_range(r, 0, 30) : 0.0;
    p->bank_radius = pm_rng_range(r, 5, 100);
    p->bank_transition = pm_rng_range(r, 0, 40);
    p->conform = pm_rng_chance(r, 0.5) ? PM_ROAD_BANK : PM_ROAD_DRAPE;
    p->uv_scale = pm_rng_range(r, 0.05, 2.0);
}

static uint64_t scene_hash(const pm_scene *s) {
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *p = &s->prims[i];
        XXH64_update(st, p->name, strlen(p->name));
        XXH64_update(st, p->positions, p->vcount * 12);
        XXH64_update(st, p->normals, p->vcount * 12);
        XXH64_update(st, p->uvs, p->vcount * 8);
        XXH64_update(st, p->indices, p->icount * 4);
    }
    for (uint32_t i = 0; i < s->nprops; i++) {
        const pm_props *p = &s->props[i];
        XXH64_update(st, p->name, strlen(p->name));
        XXH64_update(st, p->translations, p->count * 12);
        XXH64_update(st, p->rotations, p->count * 16);
        XXH64_update(st, p->scales, p->count * 12);
    }
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

/* Overlapping plan triangle pairs of one level's surface (asphalt and
 * shoulder; suffix "" for the base, "_lod1".. for LODs), by the oracle. */
static size_t level_overlaps(const pm_scene *s, const char *suffix) {
    char an[32], sn[32];
    snprintf(an, sizeof an, "asphalt%s", suffix);
    snprintf(sn, sizeof sn, "shoulder%s", suffix);
    const char *names[] = {an, sn, NULL};
    size_t n;
    ptri *t = ptri_from_prims(s, names, &n);
    size_t k = ptri_count_overlaps(t, n);
    free(t);
    return k;
}

/* A refusal for overlap names at least one pair of existing points and
 * says what works. */
static void assert_overlap_refusal(const pm_road_params *p, const pm_road_failure *f, const char *what) {
    const pm_road_overlaps *o = &f->overlaps;
    cr_assert_gt(o->pairs, 0, "%s", what);
    cr_assert_gt(o->n, 0, "%s", what);
    cr_assert_leq(o->level, p->nlods, "%s", what);
    cr_assert_float_eq(o->radius, p->width / 2 + p->shoulder, 1e-12, "%s", what);
    cr_assert_float_eq(o->spacing, p->width + 2 * p->shoulder, 1e-12, "%s", what);
    for (size_t k = 0; k < o->n; k++) {
        cr_assert_leq(o->o[k].point[0], o->o[k].point[1], "%s", what);
        cr_assert_lt(o->o[k].point[1], p->npoints, "%s", what);
        cr_assert(isfinite(o->o[k].at[0]) && isfinite(o->o[k].at[1]), "%s", what);
    }
}

static pm_scene *gen(pm_arena *a, const pm_road_params *p) {
    pm_scene *s = NULL;
    pm_road_failure f;
    int r = pm_road_generate(a, p, &s, &f);
    cr_assert_eq(r, PM_OK, "generate: %s", pm_result_name((pm_result)r));
    return s;
}

static size_t border_pieces(const pm_scene *s, const char *sfx, size_t *over);

/* ---- cases ---- */

Test(road, straight) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[] = {0, 2, 0, 100, 2, 0};
    p.points = pts;
    p.npoints = 2;
    p.width = 8;
    p.shoulder = 1;
    p.cross_segments = 4;
    p.uv_scale = 0.5;
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "straight");
    cr_assert_float_eq(meta_num(s->meta, "length"), 100.0, 1e-9);
    cr_assert_eq(meta_num(s->meta, "samples"), 21);   /* 20 chords of 5 m (halving made 32 of 3.125 m) */
    cr_assert_leq(meta_num(s->meta, "max_chord_error"), 1e-9);
    const pm_meta *edges = meta(s, "edges");
    cr_assert_float_eq(meta_num(edges, "left"), 100.0, 1e-9);
    cr_assert_float_eq(meta_num(edges, "right"), 100.0, 1e-9);
    cr_assert_eq(meta(s, "folds")->u.kids.count, 0);
    const pm_prim *road = find_prim(s, "asphalt"), *sh = find_prim(s, "shoulder");
    cr_assert_not_null(road);
    cr_assert_not_null(sh);
    cr_assert_str_eq(sh->material, "shoulder");
    cr_assert_eq(road->vcount, 21 * 5);
    cr_assert_eq(road->icount / 3, 20 * 4 * 2);
    for (uint32_t v = 0; v < road->vcount; v++) {
        const float *q = road->positions + 3 * v;
        cr_assert_float_eq(q[1], 2.0f, 1e-6, "control point height kept");
        cr_assert_float_eq(road->uvs[2 * v + 1], (q[2] + 4.0) / 8.0, 1e-6, "V across: right is +z");
        cr_assert_float_eq(road->uvs[2 * v], q[0] * 0.5, 1e-4);
        cr_assert_float_eq(road->normals[3 * v + 1], 1.0f, 1e-6);
    }
    /* Shoulders: V beyond the carriageway by shoulder / width. */
    float vmin = 1, vmax = 0;
    for (uint32_t v = 0; v < sh->vcount; v++) {
        vmin = fminf(vmin, sh->uvs[2 * v + 1]);
        vmax = fmaxf(vmax, sh->uvs[2 * v + 1]);
    }
    cr_assert_float_eq(vmin, -0.125f, 1e-6);
    cr_assert_float_eq(vmax, 1.125f, 1e-6);
    pm_arena_destroy(a);
}

Test(road, s_curve_per_side_uvs_follow_each_edge) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[] = {0, 0, 0, 40, 0, 0, 60, 0, 30, 80, 0, 60, 120, 0, 60};
    p.points = pts;
    p.npoints = 5;
    p.width = 10;
    p.uv_scale = 0.2;
    p.cross_segments = 5;   /* odd: the centre line is an extra column */
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "s-curve");
    const pm_prim *road = find_prim(s, "asphalt");
    edge L = column(road, 0.0f), R = column(road, 1.0f), C = column(road, 0.5f);
    size_t n = (size_t)meta_num(s->meta, "samples");
    cr_assert_eq(L.n, n);
    cr_assert_eq(R.n, n);
    cr_assert_eq(C.n, n);
    double ll = assert_own_length_u(&L, 0.2, "left"), lr = assert_own_length_u(&R, 0.2, "right");
    const pm_meta *edges = meta(s, "edges");
    cr_assert_float_eq(ll, meta_num(edges, "left"), 1e-3);
    cr_assert_float_eq(lr, meta_num(edges, "right"), 1e-3);
    /* An S: each edge is inner on one bend and outer on the other, so
     * their U part ways on the first bend (and meet again at the end). */
    double apart = 0.0;
    for (size_t k = 0; k < n; k++) apart = fmax(apart, fabs(eu(&L, k) - eu(&R, k)));
    cr_assert_gt(apart, 1.0, "U of both edges never differ by more than %g", apart);
    /* Interior columns interpolate in V between the two edges. */
    for (size_t k = 0; k < n; k++)
        cr_assert_float_eq(eu(&C, k), 0.5 * (eu(&L, k) + eu(&R, k)), 1e-4 * eu(&C, k) + 1e-5);
    /* Frames never flip: right - left points to the plan right of travel. */
    for (size_t k = 0; k + 1 < n; k++) {
        const float *l0 = epos(&L, k), *r0 = epos(&R, k), *l1 = epos(&L, k + 1), *r1 = epos(&R, k + 1);
        double tx = (l1[0] + r1[0]) - (l0[0] + r0[0]), tz = (l1[2] + r1[2]) - (l0[2] + r0[2]);
        double rx = r0[0] - l0[0], rz = r0[2] - l0[2];
        cr_assert_gt(rx * -tz + rz * tx, 0.0, "section %zu flipped", k);
        double rx1 = r1[0] - l1[0], rz1 = r1[2] - l1[2];
        cr_assert_gt(rx * rx1 + rz * rz1, 0.0, "frame twist between %zu and %zu", k, k + 1);
    }
    free(L.v);
    free(R.v);
    free(C.v);
    pm_arena_destroy(a);
}

Test(road, closed_loop_circle) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[3 * 16];
    const double R0 = 50.0;
    for (int i = 0; i < 16; i++) {   /* clockwise in (x, z): a left-hand loop seen from +Y */
        double th = -6.283185307179586 * i / 16.0;
        pts[3 * i] = R0 * cos(th);
        pts[3 * i + 1] = 0;
        pts[3 * i + 2] = R0 * sin(th);
    }
    p.points = pts;
    p.npoints = 16;
    p.closed = true;
    p.width = 8;
    p.shoulder = 0;
    p.uv_scale = 1.0;
    p.max_error = 0.01;
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "loop");
    cr_assert_null(find_prim(s, "shoulder"));
    const pm_prim *road = find_prim(s, "asphalt");
    edge L = column(road, 0.0f), R = column(road, 1.0f);
    double ll = assert_own_length_u(&L, 1.0, "left"), lr = assert_own_length_u(&R, 1.0, "right");
    /* Turning left: the left edge is the inner one, radius R0 - 4. */
    cr_assert_float_eq(ll, 6.283185307179586 * (R0 - 4.0), 0.01 * ll);
    cr_assert_float_eq(lr, 6.283185307179586 * (R0 + 4.0), 0.01 * lr);
    /* The loop closes: the last section sits exactly on the first. */
    cr_assert_eq(memcmp(epos(&L, 0), epos(&L, L.n - 1), 12), 0);
    cr_assert_eq(memcmp(epos(&R, 0), epos(&R, R.n - 1), 12), 0);
    /* Every vertex's U is its angle's share of its own column's length. */
    for (uint32_t v = 0; v < road->vcount; v++) {
        const float *q = road->positions + 3 * v;
        double ang = atan2(-q[2], q[0]);
        if (ang < 0) ang += 6.283185307179586;
        double vv = road->uvs[2 * v + 1], u = road->uvs[2 * v];
        double len = ll + (lr - ll) * vv;
        if (u > 0.99 * len || u == 0.0) continue;   /* the seam, where angle 0 = 2 pi */
        cr_assert_float_eq(u, ang / 6.283185307179586 * len, 0.004 * len, "vertex %u", v);
    }
    free(L.v);
    free(R.v);
    /* One sheet with two borders (its two sides), no edge of three triangles. */
    size_t over;
    cr_assert_eq(border_pieces(s, "", &over), 2);
    cr_assert_eq(over, 0);
    pm_arena_destroy(a);
}

Test(road, hairpin_whose_legs_lie_on_each_other_is_refused) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    /* Two legs 6 m apart joined by a turn of about 2 m radius; width 10:
     * the legs' surfaces lie on each other (148 m2 once, z-fighting). */
    double pts[] = {0, 0, 0, 40, 0, 0, 43, 0, 3, 40, 0, 6, 0, 0, 6};
    p.points = pts;
    p.npoints = 5;
    p.width = 10;
    p.shoulder = 1;
    p.cross_segments = 6;
    p.bank_max_degrees = 10;
    for (int conform = 0; conform < 2; conform++) {
        p.conform = conform ? PM_ROAD_BANK : PM_ROAD_DRAPE;
        pm_scene *s = NULL;
        pm_road_failure f;
        cr_assert_eq(pm_road_generate(a, &p, &s, &f), PM_ERR_GEOMETRY);
        assert_overlap_refusal(&p, &f, "hairpin");
        cr_assert_eq(f.overlaps.level, 0);
        cr_assert_float_eq(f.overlaps.radius, 6.0, 1e-12);
        cr_assert_float_eq(f.overlaps.spacing, 12.0, 1e-12);
        bool legs = false;
        for (size_t k = 0; k < f.overlaps.n; k++) {
            const pm_road_overlap *o = &f.overlaps.o[k];
            legs |= o->point[0] <= 1 && o->point[1] >= 3;   /* one leg on the other */
            cr_assert_lt(o->turn_radius, 5.0);
            cr_assert(o->at[0] > -7 && o->at[0] < 50 && o->at[1] > -7 && o->at[1] < 13, "at %g %g",
                      o->at[0], o->at[1]);
        }
        cr_assert(legs, "names the two legs");
        cr_assert_gt(f.overlaps.pairs, 100);
    }
    pm_arena_destroy(a);
}

Test(road, hairpin_tighter_than_half_width_collapses_inner_side) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    /* Legs 20 m apart, an apex of about 3.4 m radius; width 6 + 2 x 1:
     * the inner shoulder folds at the apex and collapses, nothing overlaps. */
    double pts[] = {0, 0, 0, 40, 0, 0, 50, 0, 10, 40, 0, 20, 0, 0, 20};
    p.points = pts;
    p.npoints = 5;
    p.width = 6;
    p.shoulder = 1;
    for (int conform = 0; conform < 2; conform++) {
        p.conform = conform ? PM_ROAD_BANK : PM_ROAD_DRAPE;
        pm_scene *s = gen(a, &p);
        assert_faces_up(s, "hairpin");
        cr_assert_eq(level_overlaps(s, ""), 0);
        const pm_meta *folds = meta(s, "folds");
        cr_assert_geq(folds->u.kids.count, 1);
        const pm_meta *f = folds->u.kids.first;
        cr_assert_str_eq(pm_meta_get(f, "side")->u.s, "right", "the turn is to the right");
        cr_assert_lt(meta_num(f, "min_radius"), 4.0);
        cr_assert_lt(meta_num(f, "from"), meta_num(f, "to"));
        const pm_meta *at = pm_meta_get(f, "at");
        /* The collapse point is near the apex, inside the turn. */
        double ax = at->u.kids.first->u.n, az = at->u.kids.last->u.n;
        cr_assert_lt(hypot(ax - 47.0, az - 10.0), 3.0, "collapse at (%g, %g)", ax, az);
        cr_assert_gt(meta(s, "warnings")->u.kids.count, 0);
        /* Per-side U still equals each edge's own length. */
        edge L = column(find_prim(s, "asphalt"), 0.0f), R = column(find_prim(s, "asphalt"), 1.0f);
        assert_own_length_u(&L, p.uv_scale, "left");
        assert_own_length_u(&R, p.uv_scale, "right");
        free(L.v);
        free(R.v);
    }
    pm_arena_destroy(a);
}

Test(road, linear_corners_are_mitred_and_folds_collapse) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[] = {0, 0, 0, 30, 0, 0, 30, 0, 30, 0, 0, 30};
    p.points = pts;
    p.npoints = 4;
    p.curve = PM_CURVE_LINEAR;
    p.width = 6;
    p.max_segment = 3.5;   /* sections 3.33 m apart, closer than the 4 m half width: the inner side folds */
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "linear");
    cr_assert_eq(level_overlaps(s, ""), 0);
    /* The outer edge of the first right-angle corner is mitred: the left
     * edge passes through (30 + 4, -4) (width/2 + shoulder = 4). */
    const pm_prim *sh = find_prim(s, "shoulder");
    edge L = column(sh, (float)(-1.0 / 6.0));
    bool found = false;
    for (size_t k = 0; k < L.n; k++) found |= fdist(epos(&L, k), (float[]){34, 0, -4}) < 1e-4;
    cr_assert(found, "mitred corner vertex");
    free(L.v);
    /* Both right-angle corners fold their inner side. */
    cr_assert_geq(meta(s, "folds")->u.kids.count, 2);
    pm_arena_destroy(a);
}

Test(road, linear_road_turning_back_fans_its_corner) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    /* Turns back 146 degrees at points[1]: the inner edge of the mitred
     * corner would poke across the other leg; the inner side of the corner
     * runs to one pivot instead. */
    double pts[] = {0, 0, 0, 30, 0, 0, 0, 0, 20};
    p.points = pts;
    p.npoints = 3;
    p.curve = PM_CURVE_LINEAR;
    p.width = 6;
    p.max_segment = 3.5;   /* sections 3.33 m apart, closer than the 4 m half width: the inner side folds */
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "linear");
    cr_assert_eq(level_overlaps(s, ""), 0);
    const pm_meta *folds = meta(s, "folds");
    cr_assert_eq(folds->u.kids.count, 1);
    const pm_meta *f = folds->u.kids.first;
    cr_assert(pm_meta_get(f, "fan")->u.b, "the corner is a fan");
    cr_assert_eq(meta_num(f, "min_radius"), 0.0, "a linear corner");
    /* The pivot is where the two legs' inner shoulder edges (4 m off each
     * centre line) meet, inside the corner. */
    const pm_meta *at = pm_meta_get(f, "at");
    double ax = at->u.kids.first->u.n, az = at->u.kids.last->u.n;
    double d1 = fabs(az), d2 = fabs((ax - 30.0) * 20.0 + az * 30.0) / hypot(20.0, 30.0);
    cr_assert_float_eq(d1, 4.0, 1e-6, "pivot %g %g", ax, az);
    cr_assert_float_eq(d2, 4.0, 1e-6, "pivot %g %g", ax, az);
    pm_arena_destroy(a);
}

/* Vertices of pr at exactly the plan point (x, z). */
static size_t vertices_at(const pm_prim *pr, double x, double z) {
    size_t k = 0;
    for (uint32_t v = 0; v < pr->vcount; v++)
        k += pr->positions[3 * v] == (float)x && pr->positions[3 * v + 2] == (float)z;
    return k;
}

/* Own-length U along both carriageway edges and both outer shoulder edges
 * (in road order: sorted by U, each step is the edge's own 3D length). */
static void assert_edges_own_u(const pm_scene *s, const pm_road_params *p, const char *sfx,
                               const char *what) {
    char an[32], sn[32];
    snprintf(an, sizeof an, "asphalt%s", sfx);
    snprintf(sn, sizeof sn, "shoulder%s", sfx);
    const pm_prim *road = find_prim(s, an), *sh = find_prim(s, sn);
    float vs[4] = {0.0f, 1.0f, (float)(-p->shoulder / p->width), (float)(1.0 + p->shoulder / p->width)};
    for (int k = 0; k < (sh ? 4 : 2); k++) {
        edge e = column(k < 2 ? road : sh, vs[k]);
        if (e.n > 1) assert_own_length_u(&e, p->uv_scale, what);
        free(e.v);
    }
}

/* ---- watertight: the level's asphalt and shoulder welded by float position ---- */

typedef struct wpos { float p[3]; uint32_t at; } wpos;
static int wpos_cmp(const void *x, const void *y) {
    const wpos *a = x, *b = y;
    int c = memcmp(a->p, b->p, sizeof a->p);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}
static int u64_cmp(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}
static uint32_t uf_find(uint32_t *up, uint32_t v) {
    while (up[v] != v) v = up[v] = up[up[v]];
    return v;
}

/* Welds the level's asphalt and shoulder by position; *over gets the edges
 * used by more than two triangles, the result is the number of connected
 * pieces of the border (edges used once): one for an open road, two (its
 * two sides) for a closed one. */
static size_t border_pieces(const pm_scene *s, const char *sfx, size_t *over) {
    char an[32], sn[32];
    snprintf(an, sizeof an, "asphalt%s", sfx);
    snprintf(sn, sizeof sn, "shoulder%s", sfx);
    const pm_prim *pr[2] = {find_prim(s, an), find_prim(s, sn)};
    size_t nv = 0, nt = 0;
    for (int k = 0; k < 2; k++)
        if (pr[k]) { nv += pr[k]->vcount; nt += pr[k]->icount / 3; }
    wpos *w = malloc(nv * sizeof *w);
    uint32_t *id = malloc(nv * sizeof *id), *up = malloc(nv * sizeof *up);
    uint64_t *e = malloc(3 * nt * sizeof *e);
    size_t n = 0, ne = 0;
    for (int k = 0; k < 2; k++)
        for (uint32_t v = 0; pr[k] && v < pr[k]->vcount; v++, n++) {
            memcpy(w[n].p, pr[k]->positions + 3 * v, sizeof w[n].p);
            w[n].at = (uint32_t)n;
        }
    qsort(w, nv, sizeof *w, wpos_cmp);
    for (size_t i = 0, u = 0; i < nv; i++) {
        if (i && memcmp(w[i].p, w[i - 1].p, sizeof w[i].p)) u++;
        id[w[i].at] = (uint32_t)u;
    }
    for (size_t base = 0, k = 0; k < 2; base += pr[k] ? pr[k]->vcount : 0, k++)
        for (uint32_t t = 0; pr[k] && t < pr[k]->icount; t += 3)
            for (int c = 0; c < 3; c++) {
                uint64_t a = id[base + pr[k]->indices[t + c]], b = id[base + pr[k]->indices[t + (c + 1) % 3]];
                e[ne++] = a < b ? a << 32 | b : b << 32 | a;
            }
    qsort(e, ne, sizeof *e, u64_cmp);
    for (size_t v = 0; v < nv; v++) up[v] = (uint32_t)v;
    size_t pieces = 0;
    *over = 0;
    bool *on = calloc(nv, sizeof *on);
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        while (j < ne && e[j] == e[i]) j++;
        *over += j - i > 2;
        if (j - i == 1) {
            uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
            on[a] = on[b] = true;
            up[uf_find(up, a)] = uf_find(up, b);
        }
        i = j;
    }
    for (size_t v = 0; v < nv; v++) pieces += on[v] && uf_find(up, (uint32_t)v) == v;
    free(w);
    free(id);
    free(up);
    free(e);
    free(on);
    return pieces;
}

/* A tight turn: a hairpin whose legs are at least the road's full width
 * apart, or one corner turning 20..165 degrees with long legs, linear or
 * Catmull-Rom, any width, shoulder, banking, terrain mode and LODs. */
static void tight_turn(pm_rng *r, pm_road_params *p, double *pts) {
    pm_road_params_default(p);
    p->width = pm_rng_range(r, 3.0, 14.0);
    p->shoulder = pm_rng_chance(r, 0.25) ? 0.0 : pm_rng_range(r, 0.3, 3.0);
    double full = p->width + 2 * p->shoulder, h = pm_rng_range(r, 0, 6.283);
    double local[5][2];
    size_t n;
    if (pm_rng_chance(r, 0.5)) {
        double D = full * pm_rng_range(r, 1.05, 3.0), leg = pm_rng_range(r, 2.0, 6.0) * full;
        double apex = D * pm_rng_range(r, 0.0, 1.2);
        double q[5][2] = {{0, 0}, {leg, 0}, {leg + apex, D / 2}, {leg, D}, {0, D}};
        memcpy(local, q, sizeof q);
        n = 5;
    } else {
        double th = pm_rng_range(r, 20.0, 165.0) * (3.141592653589793 / 180.0), leg = pm_rng_range(r, 18.0, 30.0) * full;
        double q[3][2] = {{0, 0}, {leg, 0}, {leg - leg * cos(th), leg * sin(th)}};
        memcpy(local, q, sizeof q);
        n = 3;
    }
    bool mirror = pm_rng_chance(r, 0.5);
    for (size_t i = 0; i < n; i++) {
        double x = local[i][0], z = mirror ? -local[i][1] : local[i][1];
        pts[3 * i] = x * cos(h) - z * sin(h);
        pts[3 * i + 1] = pm_rng_range(r, -1.0, 1.0);
        pts[3 * i + 2] = x * sin(h) + z * cos(h);
    }
    p->points = pts;
    p->npoints = n;
    p->curve = pm_rng_chance(r, 0.4) ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
    p->max_error = pm_rng_range(r, 0.01, 0.3);
    p->max_segment = pm_rng_range(r, 1.0, 8.0);
    p->cross_segments = 1 + (uint32_t)pm_rng_below(r, 6);
    p->bank_max_degrees = pm_rng_chance(r, 0.5) ? pm_rng_range(r, 0, 30) : 0.0;
    p->bank_radius = pm_rng_range(r, 5, 100);
    p->conform = pm_rng_chance(r, 0.5) ? PM_ROAD_BANK : PM_ROAD_DRAPE;
    p->uv_scale = pm_rng_range(r, 0.05, 2.0);
}

Test(road, tight_turns_build_as_fans_with_no_overlap) {
    pm_rng r;
    pm_rng_seed(&r, 11);
    double pts[3 * 5];
    size_t fans = 0, shoulders_gone = 0, refused = 0;
    for (int iter = 0; iter < 2000; iter++) {
        pm_road_params p;
        tight_turn(&r, &p, pts);
        double lods[2] = {p.max_error * 4, p.max_error * 30};
        if (iter % 3 == 0) {
            p.lods = lods;
            p.nlods = 2;
        }
        char what[64];
        snprintf(what, sizeof what, "turn %d (%u points)", iter, (unsigned)p.npoints);
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = NULL;
        pm_road_failure f;
        int rc = pm_road_generate(a, &p, &s, &f);
        if (rc == PM_ERR_GEOMETRY) {
            /* Rare: several tight corners in a row whose fans would lie on
             * each other (a pocket narrower than the road); refused with
             * the parts named. */
            assert_overlap_refusal(&p, &f, what);
            refused++;
            pm_arena_destroy(a);
            continue;
        }
        cr_assert_eq(rc, PM_OK, "%s: %s", what, pm_result_name((pm_result)rc));
        for (size_t l = 0; l <= p.nlods; l++) {
            char sfx[24] = "";
            if (l) snprintf(sfx, sizeof sfx, "_lod%u", (unsigned)l);
            cr_assert_eq(level_overlaps(s, sfx), 0, "%s: level %u overlaps itself", what, (unsigned)l);
            size_t over;
            cr_assert_eq(border_pieces(s, sfx, &over), 1, "%s: level %u is not one sheet", what, (unsigned)l);
            cr_assert_eq(over, 0, "%s: level %u has edges of three triangles", what, (unsigned)l);
            assert_edges_own_u(s, &p, sfx, what);
        }
        assert_faces_up(s, what);
        /* Each fan ends its side on one vertex of the primitive holding
         * that edge. */
        for (const pm_meta *fm = meta(s, "folds")->u.kids.first; fm; fm = fm->next) {
            if (!pm_meta_get(fm, "fan")->u.b) continue;
            fans++;
            shoulders_gone += pm_meta_get(fm, "carriageway")->u.b;
            const pm_meta *at = pm_meta_get(fm, "at");
            const pm_prim *edge_prim = find_prim(s, p.shoulder > 0 ? "shoulder" : "asphalt");
            cr_assert_eq(vertices_at(edge_prim, at->u.kids.first->u.n, at->u.kids.last->u.n), 1,
                         "%s: the pivot is one vertex", what);
        }
        pm_arena_destroy(a);
    }
    fprintf(stderr, "tight turns: %zu fans (%zu reaching into the carriageway), %zu of 2000 refused\n",
            fans, shoulders_gone, refused);
    cr_assert_leq(refused, 4, "tight turns build (%zu refused)", refused);
    cr_assert_gt(fans, 1000);
    cr_assert_gt(shoulders_gone, 50);
}

/* ---- terrain ---- */

static pm_heightfield steep_terrain(pm_arena *a, uint64_t seed) {
    pm_heightfield hf = {.origin = {-20, -60}, .cell = 2.0, .cols = 121, .rows = 61};
    pm_noise nz = {.seed = seed, .amplitude = 25, .wavelength = 50, .octaves = 3};
    cr_assert_eq(pm_heightfield_from_noise(a, &hf, &nz, NULL), PM_OK);
    return hf;
}

/* Defaults, n control points (x, y, z each) on hf, conformed as conform. */
static void terrain_road(pm_road_params *p, const double *pts, size_t n, const pm_heightfield *hf,
                         pm_road_conform conform) {
    pm_road_params_default(p);
    p->points = pts;
    p->npoints = n;
    p->terrain = hf;
    p->conform = conform;
}

Test(road, drape_puts_every_vertex_on_steep_terrain) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hf = steep_terrain(a, 3);
    const double pts[] = {0, 0, 0, 60, 0, 20, 120, 0, -30, 200, 0, 0};
    pm_road_params p;
    terrain_road(&p, pts, 4, &hf, PM_ROAD_DRAPE);
    p.width = 8;
    p.shoulder = 2;
    p.cross_segments = 6;
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "drape");
    const char *names[] = {"asphalt", "shoulder"};
    for (int j = 0; j < 2; j++) {
        const pm_prim *pr = find_prim(s, names[j]);
        for (uint32_t v = 0; v < pr->vcount; v++) {
            const float *q = pr->positions + 3 * v;
            double h = pm_heightfield_height(&hf, q[0], q[2]);
            cr_assert_float_eq(q[1], h, 2e-3, "%s vertex %u off the terrain", names[j], v);
        }
    }
    /* The sampled centre line follows the terrain: chord error includes it. */
    cr_assert_leq(meta_num(s->meta, "max_chord_error"), p.max_error * (1 + 1e-9));
    const pm_prim *t = find_prim(s, "terrain");
    cr_assert_not_null(t);
    cr_assert_eq(t->vcount, 121 * 61);
    cr_assert_eq(t->icount / 3, 2 * 120 * 60);
    /* The terrain mesh is seated under the draped road (the heightfield is
     * not changed): its triangles stay below the road's vertices, except
     * where a triangle reaches past the road's edge. */
    cr_assert(pm_meta_get(meta(s, "terrain"), "seated")->u.b);
    cr_assert_not(pm_meta_get(meta(s, "terrain"), "flattened")->u.b);
    double *node = malloc(sizeof(double) * 121 * 61);
    for (uint32_t v = 0; v < t->vcount; v++) {
        const float *q = t->positions + 3 * v;
        long c = lround((q[0] - hf.origin[0]) / hf.cell), r = lround((q[2] - hf.origin[1]) / hf.cell);
        node[r * 121 + c] = q[1];
    }
    const pm_prim *road = find_prim(s, "asphalt");
    uint32_t below = 0;
    for (uint32_t v = 0; v < road->vcount; v++) {
        const float *q = road->positions + 3 * v;
        double gx = (q[0] - hf.origin[0]) / hf.cell, gz = (q[2] - hf.origin[1]) / hf.cell;
        long c = (long)floor(gx), r = (long)floor(gz);
        double fx = gx - c, fz = gz - r, *h = node + r * 121 + c;
        double ht = fx + fz <= 1 ? h[0] + fx * (h[1] - h[0]) + fz * (h[121] - h[0])
                                 : h[122] + (1 - fx) * (h[121] - h[122]) + (1 - fz) * (h[1] - h[122]);
        below += ht <= q[1] + 1e-3;
    }
    cr_assert_gt(below, road->vcount * 0.95, "only %u of %u road vertices have the terrain mesh below them", below, road->vcount);
    free(node);
    pm_arena_destroy(a);
}

Test(road, bank_keeps_sections_straight_with_centre_on_terrain) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hf = steep_terrain(a, 5);
    const double pts[] = {0, 0, 0, 80, 0, 10, 200, 0, 0};
    pm_road_params p;
    terrain_road(&p, pts, 3, &hf, PM_ROAD_BANK);
    p.width = 8;
    p.cross_segments = 4;
    p.bank_max_degrees = 6;
    for (int up = 0; up < 2; up++) {
        p.up = up ? PM_ROAD_UP_TERRAIN : PM_ROAD_UP_WORLD;
        pm_scene *s = gen(a, &p);
        assert_faces_up(s, "bank");
        const pm_prim *road = find_prim(s, "asphalt");
        edge L = column(road, 0.0f), C = column(road, 0.5f), R = column(road, 1.0f);
        cr_assert_eq(L.n, C.n);
        double worst_tilt = 0.0;
        for (size_t k = 0; k < C.n; k++) {
            const float *c = epos(&C, k), *l = epos(&L, k), *r = epos(&R, k);
            cr_assert_float_eq(c[1], pm_heightfield_height(&hf, c[0], c[2]), 2e-3, "centre %zu", k);
            for (int d = 0; d < 3; d++)   /* straight: the centre is the edges' midpoint */
                cr_assert_float_eq(c[d], 0.5 * (l[d] + r[d]), 2e-3, "section %zu not straight", k);
            cr_assert_float_eq(fdist(l, r), 8.0, 1e-3, "the section keeps its width");
            worst_tilt = fmax(worst_tilt, fabs(r[1] - l[1]));
        }
        /* With up = terrain the section follows the cross slope. */
        if (up) cr_assert_gt(worst_tilt, 1.0);
        free(L.v);
        free(C.v);
        free(R.v);
    }
    pm_arena_destroy(a);
}

Test(road, flatten_matches_the_road_within_the_margin) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hf = steep_terrain(a, 11);
    const double pts[] = {0, 0, -10, 70, 0, 10, 150, 0, -20, 200, 0, 10};
    pm_road_params p;
    terrain_road(&p, pts, 4, &hf, PM_ROAD_BANK);
    p.width = 8;
    p.shoulder = 1.5;
    p.flatten = true;
    p.flatten_opts = (pm_flatten_opts){.margin = 2.0, .falloff = 10.0, .depth = 0.05};
    pm_scene *s = gen(a, &p);
    assert_faces_up(s, "flatten");
    const pm_meta *tm = meta(s, "terrain");
    cr_assert(pm_meta_get(tm, "flattened")->u.b);
    const pm_meta *hs = pm_meta_get(tm, "heights");
    cr_assert_eq(hs->u.kids.count, (size_t)hf.cols * hf.rows);
    const pm_prim *tp = find_prim(s, "terrain");
    /* Under the road: the node sits `depth` below the road surface. */
    size_t under = 0, ring = 0, far_nodes = 0, k = 0, exact = 0, ring_exact = 0;
    unsigned char *surely = calloc((size_t)hf.cols * hf.rows, 1);   /* certainly flattened */
    double drop_sum = 0, drop_max = 0;
    const pm_prim *shp = find_prim(s, "shoulder");
    edge outL = column(shp, (float)((-1.5 - 4.0 + 4.0) / 8.0)), outR = column(shp, (float)((5.5 + 4.0) / 8.0));
    cr_assert_gt(outL.n, 10);
    cr_assert_gt(outR.n, 10);
    const char *names[] = {"asphalt", "shoulder"};
    for (const pm_meta *m = hs->u.kids.first; m; m = m->next, k++) {
        uint32_t col = (uint32_t)(k % hf.cols), row = (uint32_t)(k / hf.cols);
        double x = hf.origin[0] + col * hf.cell, z = hf.origin[1] + row * hf.cell, h = m->u.n;
        double best = INFINITY, surf = NAN;
        for (int j = 0; j < 2; j++) {
            const pm_prim *pr = find_prim(s, names[j]);
            for (uint32_t t = 0; t < pr->icount; t += 3) {
                const float *A = pr->positions + 3 * pr->indices[t], *B = pr->positions + 3 * pr->indices[t + 1],
                            *C = pr->positions + 3 * pr->indices[t + 2];
                double det = (B[0] - A[0]) * (C[2] - A[2]) - (C[0] - A[0]) * (B[2] - A[2]);
                double wb = ((x - A[0]) * (C[2] - A[2]) - (C[0] - A[0]) * (z - A[2])) / det;
                double wc = ((B[0] - A[0]) * (z - A[2]) - (x - A[0]) * (B[2] - A[2])) / det;
                if (wb >= -1e-9 && wc >= -1e-9 && wb + wc <= 1 + 1e-9) {
                    surf = (1 - wb - wc) * A[1] + wb * B[1] + wc * C[1];
                    best = 0;
                }
            }
        }
        if (best == 0) {
            /* Never above the surface less depth; lowered only where the
             * road bends inside a neighbouring cell. */
            surely[k] = 1;
            cr_assert_leq(h, surf - 0.05 + 2e-3, "node (%u, %u) under the road", col, row);
            exact += fabs(h - (surf - 0.05)) < 2e-3;
            drop_sum += surf - 0.05 - h;
            drop_max = fmax(drop_max, surf - 0.05 - h);
            under++;
        }
        /* Terrain primitive heights are the metadata heights. */
        (void)tp;
        double orig = hf.h[k];
        if (best != 0) {
            /* The outline: both outer shoulder edges in road order, and
             * the end sections (first and last of each edge). */
            double dmin = INFINITY, target = NAN;
            for (int e = 0; e < 2; e++) {
                const edge *ol = e ? &outR : &outL;
                for (size_t j = 0; j + 1 < ol->n; j++) {
                    const float *A = epos(ol, j), *B = epos(ol, j + 1);
                    double ex = B[0] - A[0], ez = B[2] - A[2], l2 = ex * ex + ez * ez;
                    double t = l2 > 0 ? ((x - A[0]) * ex + (z - A[2]) * ez) / l2 : 0;
                    t = t < 0 ? 0 : (t > 1 ? 1 : t);
                    double d = hypot(x - (A[0] + t * ex), z - (A[2] + t * ez));
                    if (d < dmin) dmin = d, target = A[1] + t * (B[1] - A[1]) - 0.05;
                }
            }
            for (int e = 0; e < 2; e++) {   /* end sections: straight, edge to edge */
                const float *A = epos(&outL, e ? outL.n - 1 : 0), *B = epos(&outR, e ? outR.n - 1 : 0);
                double ex = B[0] - A[0], ez = B[2] - A[2], l2 = ex * ex + ez * ez;
                double t = ((x - A[0]) * ex + (z - A[2]) * ez) / l2;
                t = t < 0 ? 0 : (t > 1 ? 1 : t);
                double d = hypot(x - (A[0] + t * ex), z - (A[2] + t * ez));
                if (d < dmin) dmin = d, target = A[1] + t * (B[1] - A[1]) - 0.05;
            }
            if (dmin > 12.0 + 1e-3) {
                cr_assert_eq(h, orig, "node (%u, %u) past the falloff must keep its height", col, row);
                far_nodes++;
            } else if (dmin < 2.0 - 1e-3) {
                /* Within the margin: the nearest outline height (or lower,
                 * as under the road). */
                cr_assert_leq(h, target + 2e-3, "node (%u, %u) in the margin (d %g): %g > %g", col, row, dmin, h,
                              target);
                surely[k] = dmin < 2.0 - 0.01;
                ring_exact += fabs(h - target) < 2e-3;
                ring++;
            } else {
                /* In the falloff: between its own height and the road's. */
                cr_assert(h >= fmin(orig, target) - 2e-3 && h <= fmax(orig, target) + 2e-3,
                          "node (%u, %u) in the falloff: %g not between %g and %g", col, row, h, orig, target);
            }
        }
    }
    cr_assert_gt(under, 100);
    cr_assert_gt(ring, 20);
    cr_assert_gt(far_nodes, 1000);
    /* On this steep terrain (25 m amplitude, 50 m wavelength) the road
     * bends inside many 2 m cells; the terrain drops 4 cm on average
     * there (0.47 m at most) so that it stays under the road. */
    cr_assert_gt(exact, under / 4, "%zu of %zu nodes under the road match it exactly", exact, under);
    cr_assert_lt(drop_sum / under, 0.1, "mean drop %g", drop_sum / under);
    cr_assert_lt(drop_max, 1.0, "max drop %g", drop_max);
    cr_assert_gt(ring_exact, ring / 4, "%zu of %zu margin nodes match exactly", ring_exact, ring);
    /* The terrain mesh (its triangles, not just its nodes) stays below the
     * road at every road vertex: no poking through. */
    const pm_prim *tm_prim = find_prim(s, "terrain");
    size_t checked = 0;
    cr_assert_eq(tm_prim->vcount, (uint32_t)(hf.cols * hf.rows));
    for (int j = 0; j < 2; j++) {
        const pm_prim *pr = find_prim(s, names[j]);
        for (uint32_t v = 0; v < pr->vcount; v++) {
            const float *q = pr->positions + 3 * v;
            double gx = (q[0] - hf.origin[0]) / hf.cell, gz = (q[2] - hf.origin[1]) / hf.cell;
            uint32_t c = (uint32_t)floor(gx), r = (uint32_t)floor(gz);
            double fx = gx - c, fz = gz - r;
            const pm_meta *m = hs->u.kids.first;
            double h00 = 0, h10 = 0, h01 = 0, h11 = 0;
            size_t want[4] = {(size_t)r * hf.cols + c, (size_t)r * hf.cols + c + 1,
                              (size_t)(r + 1) * hf.cols + c, (size_t)(r + 1) * hf.cols + c + 1};
            for (size_t i = 0; m; m = m->next, i++) {
                if (i == want[0]) h00 = m->u.n;
                if (i == want[1]) h10 = m->u.n;
                if (i == want[2]) h01 = m->u.n;
                if (i == want[3]) { h11 = m->u.n; break; }
            }
            /* The grid's diagonal runs from (c, r+1) to (c+1, r). */
            bool lower = fx + fz <= 1;
            double ht = lower ? h00 + fx * (h10 - h00) + fz * (h01 - h00)
                              : h11 + (1 - fx) * (h01 - h11) + (1 - fz) * (h10 - h11);
            bool flat = lower ? surely[want[0]] && surely[want[1]] && surely[want[2]]
                              : surely[want[3]] && surely[want[1]] && surely[want[2]];
            if (flat) {
                cr_assert_leq(ht, q[1] - 0.05 + 2e-3, "terrain above the road at %s vertex %u", names[j], v);
                checked++;
            }
        }
    }
    cr_assert_gt(checked, 500, "road vertices over fully flattened terrain triangles: %zu", checked);
    free(surely);
    free(outL.v);
    free(outR.v);
    pm_arena_destroy(a);
}

/* ---- props ---- */

/* v turned by the prop rotation q (x, y, z, w), as a glTF viewer does it. */
static void quat_rotate(const float q[4], const double v[3], double o[3]) {
    versor r = {q[0], q[1], q[2], q[3]};
    vec3 fv = {(float)v[0], (float)v[1], (float)v[2]}, out;
    glm_quat_rotatev(r, fv, out);
    for (int k = 0; k < 3; k++) o[k] = out[k];
}

Test(road, props_on_both_sides_at_arc_length_spacing) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[] = {0, 0, 0, 50, 5, 0, 100, 0, 0};
    p.points = pts;
    p.npoints = 3;
    p.curve = PM_CURVE_LINEAR;
    p.width = 8;
    p.shoulder = 1;
    p.bank_max_degrees = 0;
    pm_road_prop props[] = {{"guardrail", 4.0, 5.5, PM_ROAD_SIDE_BOTH, PM_ROAD_ALIGN_TANGENT},
                            {"lamp", 25.0, 6.0, PM_ROAD_SIDE_LEFT, PM_ROAD_ALIGN_TANGENT}};
    p.props = props;
    p.nprops = 2;
    pm_scene *s = gen(a, &p);
    cr_assert_eq(s->nprops, 2);
    double L = meta_num(s->meta, "length");
    const pm_props *g = &s->props[0], *l = &s->props[1];
    cr_assert_str_eq(g->name, "guardrail");
    cr_assert_eq(g->count, 2 * ((uint32_t)floor(L / 4.0) + 1));
    cr_assert_eq(l->count, (uint32_t)floor(L / 25.0) + 1);
    for (uint32_t i = 0; i < g->count; i++) {
        const float *t = g->translations + 3 * i, *q = g->rotations + 4 * i;
        double ql = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
        cr_assert_float_eq(ql, 1.0, 1e-6);
        cr_assert_float_eq(fabs(t[2]), 5.5, 1e-4, "offset sideways");
        double X[3], fx[3] = {1, 0, 0};
        quat_rotate(q, fx, X);
        /* +X follows the road, pitched with the grade (5 m over 50 m);
         * near the crest the frames blend. */
        cr_assert_gt(X[0], 0.99);
        if (fabs(t[0] - 50.0) > 4.0) cr_assert_float_eq(fabs(X[1]), 5.0 / hypot(50, 5), 1e-4);
        cr_assert_float_eq(g->scales[3 * i], 1.0f, 0);
    }
    /* Consecutive guardrails on one side: 4 m of arc length apart. */
    for (uint32_t i = 2; i < g->count; i += 2) {
        const float *t0 = g->translations + 3 * (i - 2), *t1 = g->translations + 3 * i;
        double d = fdist(t0, t1);   /* a chord: a little shorter over the crest */
        cr_assert(d <= 4.0 + 1e-3 && d > 3.97, "spacing at %u: %g", i, d);
    }
    pm_arena_destroy(a);
}

Test(road, props_align_terrain_stand_on_the_ground) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hf = steep_terrain(a, 9);
    const double pts[] = {0, 0, 0, 100, 0, 20, 200, 0, 0};
    pm_road_params p;
    terrain_road(&p, pts, 3, &hf, PM_ROAD_BANK);
    pm_road_prop pr = {"tree", 10.0, 12.0, PM_ROAD_SIDE_BOTH, PM_ROAD_ALIGN_TERRAIN};
    p.props = &pr;
    p.nprops = 1;
    pm_scene *s = gen(a, &p);
    const pm_props *t = &s->props[0];
    cr_assert_gt(t->count, 30);
    for (uint32_t i = 0; i < t->count; i++) {
        const float *x = t->translations + 3 * i;
        cr_assert_float_eq(x[1], pm_heightfield_height(&hf, x[0], x[2]), 2e-3);
        double n[3], Y[3], fy[3] = {0, 1, 0};
        pm_heightfield_normal(&hf, x[0], x[2], n);
        quat_rotate(t->rotations + 4 * i, fy, Y);
        cr_assert_float_eq(Y[0] * n[0] + Y[1] * n[1] + Y[2] * n[2], 1.0, 1e-5, "up = ground normal");
    }
    pm_arena_destroy(a);
}

/* ---- LODs ---- */

Test(road, lods_have_fewer_triangles_and_keep_the_rules) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hf = steep_terrain(a, 21);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[] = {0, 0, 0, 60, 0, 30, 100, 0, -20, 140, 0, 0, 200, 0, 40};
    p.points = pts;
    p.npoints = 5;
    double lods[] = {0.3, 1.5};
    p.lods = lods;
    p.nlods = 2;
    for (int conform = 0; conform < 3; conform++) {
        p.terrain = conform == 2 ? NULL : &hf;
        p.conform = conform ? PM_ROAD_BANK : PM_ROAD_DRAPE;
        pm_scene *s = gen(a, &p);
        assert_faces_up(s, "lods");
        const pm_prim *b = find_prim(s, "asphalt"), *l1 = find_prim(s, "asphalt_lod1"),
                      *l2 = find_prim(s, "asphalt_lod2");
        cr_assert_not_null(l1);
        cr_assert_not_null(l2);
        cr_assert_not_null(find_prim(s, "shoulder_lod2"));
        cr_assert_lt(l1->icount, b->icount);
        cr_assert_lt(l2->icount, l1->icount);
        const pm_meta *lm = meta(s, "lods");
        cr_assert_eq(lm->u.kids.count, 2);
        const pm_meta *e = lm->u.kids.first;
        for (int k = 0; k < 2; k++, e = e->next) {
            cr_assert_leq(meta_num(e, "max_chord_error"), lods[k] * (1 + 1e-9));
            const pm_prim *sl = find_prim(s, k ? "shoulder_lod2" : "shoulder_lod1");
            cr_assert_eq(meta_num(e, "triangles"), ((k ? l2 : l1)->icount + sl->icount) / 3);
        }
        edge L = column(l2, 0.0f);
        assert_own_length_u(&L, p.uv_scale, "lod2 left");
        free(L.v);
    }
    pm_arena_destroy(a);
}

/* ---- vertex cache ---- */

Test(road, meshes_are_ordered_for_the_vertex_cache) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hf = steep_terrain(a, 2);
    const double pts[] = {0, 0, 0, 100, 0, 20, 200, 0, 0};
    pm_road_params p;
    terrain_road(&p, pts, 3, &hf, PM_ROAD_DRAPE);
    p.cross_segments = 8;
    pm_scene *s = gen(a, &p);
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *pr = &s->prims[i];
        struct meshopt_VertexCacheStatistics st =
            meshopt_analyzeVertexCache(pr->indices, pr->icount, pr->vcount, 16, 0, 0);
        /* A strip mesh cannot do better than one new vertex per its share
         * of triangles: allow 20% above that bound. */
        float bound = (float)pr->vcount / (float)(pr->icount / 3);
        cr_assert_lt(st.acmr, 1.2f * bound, "%s ACMR %g (bound %g)", pr->name, st.acmr, bound);
        struct meshopt_VertexFetchStatistics fs =
            meshopt_analyzeVertexFetch(pr->indices, pr->icount, pr->vcount, 12);
        cr_assert_lt(fs.overfetch, 1.3f, "%s overfetch %g", pr->name, fs.overfetch);
    }
    pm_arena_destroy(a);
}

/* ---- properties over many random roads ---- */

/* 800 x 800 m of noise hills around the origin, for random roads. */
static pm_heightfield hills(pm_arena *a, uint64_t seed) {
    pm_heightfield hf = {.origin = {-400, -400}, .cell = 8.0, .cols = 101, .rows = 101};
    pm_noise nz = {.seed = seed, .amplitude = 15, .wavelength = 120, .octaves = 3};
    pm_heightfield_from_noise(a, &hf, &nz, NULL);
    return hf;
}

Test(road, random_roads_face_up_bound_error_own_uvs_and_repeat_bytes) {
    pm_rng r;
    pm_rng_seed(&r, 2024);
    double pts[3 * 10];
    pm_arena *ta = pm_arena_create(0);
    pm_heightfield hf = hills(ta, 77);
    size_t folds = 0, refused = 0, lod_refused = 0;
    for (int iter = 0; iter < 1000; iter++) {
        pm_road_params p;
        random_road(&r, &p, pts, 10);
        if (iter % 4 == 0) {
            p.terrain = &hf;
            p.up = iter % 8 == 0 ? PM_ROAD_UP_TERRAIN : PM_ROAD_UP_WORLD;
        }
        double lods[2] = {p.max_error * 4, p.max_error * 40};
        if (iter % 3 == 0) {
            p.lods = lods;
            p.nlods = 2;
        }
        pm_arena *a = pm_arena_create(0), *b = pm_arena_create(0);
        char what[32];
        snprintf(what, sizeof what, "road %d", iter);
        pm_scene *s = NULL;
        pm_road_failure fail;
        int rc = pm_road_generate(a, &p, &s, &fail);
        if (rc == PM_ERR_GEOMETRY) {
            /* Refused: it lies on itself (and refuses the same way again). */
            assert_overlap_refusal(&p, &fail, what);
            pm_road_failure again;
            cr_assert_eq(pm_road_generate(b, &p, &s, &again), PM_ERR_GEOMETRY, "%s", what);
            cr_assert_eq(memcmp(&again.overlaps, &fail.overlaps, sizeof fail.overlaps), 0, "%s", what);
            refused++;
            lod_refused += fail.overlaps.level > 0;
            pm_arena_destroy(a);
            pm_arena_destroy(b);
            continue;
        }
        cr_assert_eq(rc, PM_OK, "%s: %s", what, pm_result_name((pm_result)rc));
        /* Built: its surface never lies on itself in plan. */
        cr_assert_eq(level_overlaps(s, ""), 0, "%s: overlaps itself", what);
        for (size_t l = 1; l <= p.nlods; l++) {
            char sfx[16];
            snprintf(sfx, sizeof sfx, "_lod%zu", l);
            cr_assert_eq(level_overlaps(s, sfx), 0, "%s: LOD %zu overlaps itself", what, l);
        }
        assert_faces_up(s, what);
        cr_assert_leq(meta_num(s->meta, "max_chord_error"), p.max_error * (1 + 1e-9), "%s", what);
        const pm_prim *road = find_prim(s, "asphalt");
        edge L = column(road, 0.0f), R = column(road, 1.0f);
        double ll = assert_own_length_u(&L, p.uv_scale, what);
        double lr = assert_own_length_u(&R, p.uv_scale, what);
        /* The metadata's edge lengths are the columns' lengths. Inside a
         * fold, consecutive sections share one collapse point and only one
         * of those vertices is used; a column whose first or last vertex
         * lies on an end section inside a fold may lose it (no triangle). */
        const pm_meta *edges = meta(s, "edges");
        size_t ns = (size_t)meta_num(s->meta, "samples");
        double ml = meta_num(edges, "left"), mr = meta_num(edges, "right");
        cr_assert_leq(ll, ml * (1 + 1e-4) + 1e-4, "%s", what);
        cr_assert_leq(lr, mr * (1 + 1e-4) + 1e-4, "%s", what);
        if (L.n == ns) cr_assert_float_eq(ll, ml, 1e-4 * ll + 1e-4, "%s", what);
        if (R.n == ns) cr_assert_float_eq(lr, mr, 1e-4 * lr + 1e-4, "%s", what);
        if (L.n == ns) cr_assert_eq(eu(&L, 0), 0.0f, "%s", what);
        if (R.n == ns) cr_assert_eq(eu(&R, 0), 0.0f, "%s", what);
        free(L.v);
        free(R.v);
        folds += meta(s, "folds")->u.kids.count;
        pm_scene *s2 = gen(b, &p);
        cr_assert_eq(scene_hash(s), scene_hash(s2), "%s: output differs between runs", what);
        pm_arena_destroy(a);
        pm_arena_destroy(b);
    }
    fprintf(stderr, "random roads: %zu refused for overlap (%zu at a LOD), %zu folds built\n", refused,
            lod_refused, folds);
    cr_assert_gt(folds, 15, "the random set must include folding hairpins that build (%zu)", folds);
    cr_assert_gt(refused, 50, "the random set must include roads lying on themselves (%zu)", refused);
    pm_arena_destroy(ta);
}

/* A road with no fold anywhere is cleared by its outline alone: a wide
 * loop (radius 40 m, far above the half width) whose end runs back over
 * its start must still be refused, a spiral whose turns stay a width
 * apart must build, both checked against the brute-force oracle. */
/* Whether primitives a and b hold the same bytes. */
static bool same_prim(const pm_prim *a, const pm_prim *b) {
    return strcmp(a->name, b->name) == 0 && strcmp(a->material, b->material) == 0 &&
           a->flags == b->flags && a->vcount == b->vcount && a->icount == b->icount &&
           memcmp(a->positions, b->positions, 12 * (size_t)a->vcount) == 0 &&
           memcmp(a->normals, b->normals, 12 * (size_t)a->vcount) == 0 &&
           memcmp(a->uvs, b->uvs, 8 * (size_t)a->vcount) == 0 &&
           memcmp(a->indices, b->indices, 4 * (size_t)a->icount) == 0;
}

/* pm_road_generate_base (a network's roads) against the whole road: the
 * same base primitives, length and samples, and the same refusals. */
Test(road, base_level_alone_matches_the_whole_road) {
    pm_rng r;
    pm_rng_seed(&r, 1414);
    double pts[3 * 10];
    pm_arena *ta = pm_arena_create(0);
    pm_heightfield hf = hills(ta, 5);
    size_t built = 0, refused = 0;
    for (int iter = 0; iter < 600; iter++) {
        pm_road_params p;
        random_road(&r, &p, pts, 10);
        if (iter % 5 == 0) p.terrain = &hf;
        if (iter % 7 == 0) p.terrain_mesh = false;
        p.overlaps_checked_by_caller = iter % 2 == 0;
        if (iter % 11 == 0) p.max_vertices = 40 + pm_rng_below(&r, 400);
        pm_arena *a = pm_arena_create(0), *b = pm_arena_create(0);
        pm_scene *whole = NULL, *base = NULL;
        pm_road_failure fw, fb;
        pm_road_base rb = {0};
        int rw = pm_road_generate(a, &p, &whole, &fw);
        int rbc = pm_road_generate_base(b, &p, &base, &rb, &fb);
        cr_assert_eq(rbc, rw, "road %d: %d against %d", iter, rbc, rw);
        if (rw == PM_OK) {
            uint32_t k = 0;
            for (uint32_t i = 0; i < whole->nprims; i++) {
                const char *n = whole->prims[i].name;
                if (strcmp(n, "asphalt") && strcmp(n, "shoulder")) continue;
                cr_assert_lt(k, base->nprims, "road %d", iter);
                cr_assert(same_prim(&whole->prims[i], &base->prims[k++]), "road %d: %s differs", iter, n);
            }
            cr_assert_eq(k, base->nprims, "road %d", iter);
            cr_assert_eq(base->nprops, 0);
            cr_assert_eq(rb.length, meta_num(whole->meta, "length"), "road %d", iter);
            cr_assert_eq(rb.samples, (int64_t)meta_num(whole->meta, "samples"), "road %d", iter);
            built++;
        } else if (rw == PM_ERR_LIMIT) {
            cr_assert_str_eq(fb.field, fw.field, "road %d", iter);
            cr_assert_eq(fb.needed, fw.needed, "road %d", iter);
            refused++;
        } else if (rw == PM_ERR_GEOMETRY) {
            cr_assert_eq(memcmp(&fb.overlaps, &fw.overlaps, sizeof fw.overlaps), 0, "road %d", iter);
            refused++;
        }
        pm_arena_destroy(a);
        pm_arena_destroy(b);
    }
    cr_assert_gt(built, 300);
    cr_assert_gt(refused, 10);
    pm_arena_destroy(ta);
}

Test(road, unfolded_roads_crossing_themselves_are_refused) {
    for (int k = 0; k < 2; k++) {
        pm_arena *a = pm_arena_create(0);
        double pts[3 * 40];
        size_t n = 0;
        for (int i = 0; i < 40; i++) {
            double ang = 0.25 * i, rad = k ? 40.0 + 3.0 * i : 40.0;
            pts[3 * n] = rad * cos(ang);
            pts[3 * n + 1] = 0.0;
            pts[3 * n + 2] = rad * sin(ang);
            n++;
            if (k == 0 && ang > 7.5) break;   /* a turn and a fifth: over its start */
        }
        pm_road_params p;
        pm_road_params_default(&p);
        p.points = pts;
        p.npoints = n;
        p.width = 7;
        pm_scene *s = NULL;
        pm_road_failure f;
        int rc = pm_road_generate(a, &p, &s, &f);
        if (k == 0) {
            cr_assert_eq(rc, PM_ERR_GEOMETRY, "the loop over its start must be refused (%d)", rc);
            assert_overlap_refusal(&p, &f, "loop");
        } else {
            cr_assert_eq(rc, PM_OK, "the spiral must build (%d)", rc);
            cr_assert_eq(meta(s, "folds")->u.kids.count, 0);
            cr_assert_eq(level_overlaps(s, ""), 0);
        }
        pm_arena_destroy(a);
    }
}

/* ---- limits, cancel ---- */

Test(road, vertex_limit_and_cancel) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    pm_road_params_default(&p);
    double pts[] = {0, 0, 0, 1000, 0, 0};
    p.points = pts;
    p.npoints = 2;
    p.max_vertices = 500;
    pm_scene *s;
    pm_road_failure f;
    cr_assert_eq(pm_road_generate(a, &p, &s, &f), PM_ERR_LIMIT);
    cr_assert_str_eq(f.field, "/max_error");
    cr_assert_gt(f.needed, 500);
    p.max_vertices = 0;
    pm_road_prop pr = {"post", 0.1, 5, PM_ROAD_SIDE_BOTH, PM_ROAD_ALIGN_TANGENT};
    p.props = &pr;
    p.nprops = 1;
    p.max_vertices = 5000;
    cr_assert_eq(pm_road_generate(a, &p, &s, &f), PM_ERR_LIMIT);
    cr_assert_str_eq(f.field, "/props/0/spacing");
    p.nprops = 0;
    volatile int stop = 1;
    p.cancel = &stop;
    cr_assert_eq(pm_road_generate(a, &p, &s, &f), PM_ERR_CANCELLED);
    pm_arena_destroy(a);
}

/* ---- golden hashes ---- */

Test(road, golden_hashes) {
    pm_arena *a = pm_arena_create(0);
    pm_road_params p;
    uint64_t got[3];
    /* 1: S-curve with props and a LOD. */
    pm_road_params_default(&p);
    double pts[] = {0, 0, 0, 40, 1, 0, 60, 2, 30, 80, 1, 60, 120, 0, 60};
    p.points = pts;
    p.npoints = 5;
    p.bank_max_degrees = 8;
    double lods[] = {0.5};
    p.lods = lods;
    p.nlods = 1;
    pm_road_prop pr = {"lamp", 20, 5, PM_ROAD_SIDE_BOTH, PM_ROAD_ALIGN_TANGENT};
    p.props = &pr;
    p.nprops = 1;
    got[0] = scene_hash(gen(a, &p));
    /* 2: U turn, linear (its corners fold). */
    pm_road_params_default(&p);
    double hp[] = {0, 0, 0, 40, 0, 0, 40, 0, 20, 0, 0, 20};
    p.points = hp;
    p.npoints = 4;
    p.width = 10;
    p.curve = PM_CURVE_LINEAR;
    got[1] = scene_hash(gen(a, &p));
    /* 3: noise terrain, drape, flatten. */
    pm_road_params_default(&p);
    pm_heightfield hf = {.origin = {-20, -60}, .cell = 4.0, .cols = 60, .rows = 30};
    pm_noise nz = {.seed = 1, .amplitude = 10, .wavelength = 60, .octaves = 3};
    pm_heightfield_from_noise(a, &hf, &nz, NULL);
    double tp[] = {0, 0, 0, 100, 0, 20, 200, 0, 0};
    p.points = tp;
    p.npoints = 3;
    p.terrain = &hf;
    p.flatten = true;
    got[2] = scene_hash(gen(a, &p));
    const uint64_t want[3] = {0x50428f0a1f00364eull, 0xa21b5ee7c8c0c1bfull, 0x79dbea14a8312cd4ull};
    for (int i = 0; i < 3; i++)
        cr_expect_eq(got[i], want[i], "golden %d: 0x%016llx", i, (unsigned long long)got[i]);
    pm_arena_destroy(a);
}
