/* Mesh utilities: normals, bounds, snapping, welding, degenerate faces. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "scene/rng.h"
#include "scene/scene.h"

typedef struct fixture { pm_arena *a; pm_scene *s; } fixture;

static fixture make(void) {
    fixture f;
    f.a = pm_arena_create(0);
    cr_assert_not_null(f.a);
    f.s = pm_scene_create(f.a);
    cr_assert_not_null(f.s);
    return f;
}

static uint32_t add_v(fixture *f, pm_prim *p, float x, float y, float z) {
    float pos[3] = {x, y, z};
    int64_t i = pm_prim_add_vertex(f->s, p, pos, NULL, NULL, NULL);
    cr_assert_geq(i, 0);
    return (uint32_t)i;
}

static void add_t(fixture *f, pm_prim *p, uint32_t a, uint32_t b, uint32_t c) {
    cr_assert_eq(pm_prim_add_tri(f->s, p, a, b, c), 0);
}

static void assert_vec(const float *v, double x, double y, double z, double tol) {
    cr_assert(fabs(v[0] - x) <= tol && fabs(v[1] - y) <= tol && fabs(v[2] - z) <= tol,
              "(%g, %g, %g) != (%g, %g, %g)", v[0], v[1], v[2], x, y, z);
}

/* ---- normals ------------------------------------------------------------ */

Test(geom, normals_floor_faces_up) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "floor", "floor", 0, 4, 6);
    /* CCW seen from +Y: (0,0,0) -> (0,0,1) -> (1,0,1) -> (1,0,0). */
    uint32_t a = add_v(&f, p, 0, 0, 0), b = add_v(&f, p, 0, 0, 1);
    uint32_t c = add_v(&f, p, 1, 0, 1), d = add_v(&f, p, 1, 0, 0);
    add_t(&f, p, a, b, c);
    add_t(&f, p, a, c, d);
    pm_prim_compute_normals(p);
    for (uint32_t i = 0; i < 4; i++) assert_vec(p->normals + 3 * i, 0, 1, 0, 0);
    pm_arena_destroy(f.a);
}

/* A vertex shared by a floor triangle of area 2 and a wall triangle of area
 * 0.5: its normal leans towards the floor by the area ratio. */
Test(geom, normals_area_weighted) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    uint32_t o = add_v(&f, p, 0, 0, 0);
    uint32_t fz = add_v(&f, p, 0, 0, 2), fx = add_v(&f, p, 2, 0, 0);
    uint32_t wx = add_v(&f, p, 1, 0, 0), wy = add_v(&f, p, 0, 1, 0);
    add_t(&f, p, o, fz, fx); /* normal +Y, area 2 */
    add_t(&f, p, o, wx, wy); /* normal +Z, area 0.5 */
    pm_prim_compute_normals(p);
    double len = sqrt(2.0 * 2.0 + 0.5 * 0.5);
    assert_vec(p->normals + 3 * o, 0, 2.0 / len, 0.5 / len, 1e-7);
    assert_vec(p->normals + 3 * fz, 0, 1, 0, 0);
    assert_vec(p->normals + 3 * wy, 0, 0, 1, 0);
    pm_arena_destroy(f.a);
}

Test(geom, normals_isolated_and_degenerate_get_up) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    uint32_t lone = add_v(&f, p, 5, 5, 5);
    uint32_t a = add_v(&f, p, 0, 0, 0), b = add_v(&f, p, 1, 1, 1), c = add_v(&f, p, 2, 2, 2);
    add_t(&f, p, a, b, c); /* collinear: zero area */
    /* Two opposite faces on the same vertices cancel out. */
    uint32_t d = add_v(&f, p, 0, 3, 0), e = add_v(&f, p, 1, 3, 0), g = add_v(&f, p, 0, 3, 1);
    add_t(&f, p, d, e, g);
    add_t(&f, p, d, g, e);
    pm_prim_compute_normals(p);
    for (uint32_t i = 0; i < p->vcount; i++) assert_vec(p->normals + 3 * i, 0, 1, 0, 0);
    (void)lone;
    pm_arena_destroy(f.a);
}

Test(geom, normals_unit_length_on_random_meshes) {
    fixture f = make();
    pm_rng r;
    pm_rng_seed(&r, 3);
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    for (int i = 0; i < 300; i++)
        add_v(&f, p, (float)pm_rng_range(&r, -1e3, 1e3), (float)pm_rng_range(&r, -1, 1),
              (float)pm_rng_range(&r, -1e-3, 1e-3));
    for (int t = 0; t < 500; t++)
        add_t(&f, p, (uint32_t)pm_rng_below(&r, 300), (uint32_t)pm_rng_below(&r, 300),
              (uint32_t)pm_rng_below(&r, 300));
    pm_prim_compute_normals(p);
    for (uint32_t i = 0; i < p->vcount; i++) {
        const float *n = p->normals + 3 * i;
        double len = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
        cr_assert(fabs(len - 1.0) < 1e-6, "vertex %u normal length %.9g", i, len);
    }
    pm_arena_destroy(f.a);
}

/* The general recipe, written out: area-weighted float sums of the double
 * face crosses, each normalized in double (zero or not finite: +Y). */
static void reference_normals(const pm_prim *p, float *out) {
    memset(out, 0, (size_t)p->vcount * 3 * sizeof(float));
    for (uint32_t t = 0; t < p->icount; t += 3) {
        const float *a = p->positions + 3 * p->indices[t], *b = p->positions + 3 * p->indices[t + 1],
                    *c = p->positions + 3 * p->indices[t + 2];
        double u[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
        double v[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
        float cf[3] = {(float)(u[1] * v[2] - u[2] * v[1]), (float)(u[2] * v[0] - u[0] * v[2]),
                       (float)(u[0] * v[1] - u[1] * v[0])};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++) out[3 * p->indices[t + k] + j] += cf[j];
    }
    for (uint32_t i = 0; i < p->vcount; i++) {
        float *n = out + 3 * i;
        double x = n[0], y = n[1], z = n[2], len = sqrt(x * x + y * y + z * z);
        if (!(len > 0.0) || !isfinite(len)) { n[0] = 0.0f, n[1] = 1.0f, n[2] = 0.0f; continue; }
        n[0] = (float)(x / len), n[1] = (float)(y / len), n[2] = (float)(z / len);
    }
}

/* A flat primitive (one height: roads and networks on flat ground) takes a
 * shortcut; it must give the general recipe's bits, also with degenerate
 * faces, unused vertices, a face pointing down or one vertex off the plane. */
Test(geom, normals_flat_shortcut_is_bit_exact) {
    pm_rng r;
    pm_rng_seed(&r, 11);
    for (int round = 0; round < 400; round++) {
        fixture f = make();
        pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
        float y = round % 3 ? 0.0f : (float)pm_rng_range(&r, -50, 50);
        uint32_t nv = 3 + (uint32_t)pm_rng_below(&r, 60);
        for (uint32_t i = 0; i < nv; i++)
            add_v(&f, p, (float)pm_rng_range(&r, -1e3, 1e3), y, (float)pm_rng_range(&r, -1e3, 1e3));
        int mode = round % 5;   /* 0-2 CCW only, 3 one face down, 4 one vertex off the plane */
        for (uint32_t t = 0; t < 2 * nv; t++) {
            uint32_t a = (uint32_t)pm_rng_below(&r, nv), b = (uint32_t)pm_rng_below(&r, nv),
                     c = round % 7 == 0 && t == 0 ? b : (uint32_t)pm_rng_below(&r, nv);
            const float *pa = p->positions + 3 * a, *pb = p->positions + 3 * b, *pc = p->positions + 3 * c;
            double o = ((double)pb[2] - pa[2]) * ((double)pc[0] - pa[0]) -
                       ((double)pb[0] - pa[0]) * ((double)pc[2] - pa[2]);
            bool down = mode == 3 && t == nv;
            if ((o < 0.0) != down) add_t(&f, p, a, c, b);
            else add_t(&f, p, a, b, c);
        }
        if (mode == 4) p->positions[3 * (nv - 1) + 1] = y + 0.25f;
        float *want = pm_arena_alloc(f.a, (size_t)nv * 3 * sizeof(float));
        cr_assert_not_null(want);
        reference_normals(p, want);
        pm_prim_compute_normals(p);
        cr_assert(memcmp(want, p->normals, (size_t)nv * 3 * sizeof(float)) == 0, "round %d (mode %d)", round, mode);
        pm_arena_destroy(f.a);
    }
}

/* A random primitive at height y, as a network's asphalt: nv vertices (the
 * last two never used), nt triangles of either orientation, some degenerate
 * (a repeated corner, three points on a line), some opposite pairs that
 * cancel; with up, every face turned to face up (its float c >= 0;
 * swapping two corners negates c exactly). At height 0, +0 and -0 mixed. */
static pm_prim *random_flat(fixture *f, pm_rng *r, uint32_t nv, uint32_t nt, float y, bool up) {
    pm_prim *p = pm_scene_add_prim(f->s, "asphalt", "asphalt", PM_PRIM_UV, nv, 3 * nt);
    cr_assert_not_null(p);
    for (uint32_t v = 0; v < nv; v++) {
        float x = (float)pm_rng_range(r, -500, 500), z = (float)pm_rng_range(r, -500, 500);
        if (v % 7 == 3) x = z = (float)v;   /* on a line with its like */
        add_v(f, p, x, y == 0.0f && v % 2 == 0 ? -y : y, z);
    }
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t a = (uint32_t)pm_rng_below(r, nv - 2), b = (uint32_t)pm_rng_below(r, nv - 2),
                 c = (uint32_t)pm_rng_below(r, nv - 2);
        if (t % 11 == 5) b = a;                  /* a repeated corner */
        if (t % 13 == 6) a = 3, b = 10, c = 17;  /* collinear */
        const float *pa = p->positions + 3 * a, *pb = p->positions + 3 * b, *pc = p->positions + 3 * c;
        double o = ((double)pb[2] - pa[2]) * ((double)pc[0] - pa[0]) -
                   ((double)pb[0] - pa[0]) * ((double)pc[2] - pa[2]);
        if (up && (float)o < 0.0f) add_t(f, p, a, c, b);
        else add_t(f, p, a, b, c);
        if (!up && t % 9 == 4 && ++t < nt) add_t(f, p, a, c, b);   /* cancels */
    }
    return p;
}

static void assert_reference(pm_prim *p) {
    size_t n = 3 * (size_t)p->vcount;
    float *want = malloc((n + 1) * sizeof *want);
    cr_assert_not_null(want);
    reference_normals(p, want);
    memset(p->normals, 0x7f, n * sizeof *p->normals);
    pm_prim_compute_normals(p);
    for (size_t i = 0; i < n; i++)
        cr_assert(memcmp(&want[i], &p->normals[i], sizeof(float)) == 0,
                  "vertex %zu axis %zu: %a against %a (reference)", i / 3, i % 3, p->normals[i], want[i]);
    free(want);
}

static const float flat_heights[] = {0.0f, -0.0f, 0.15f, -37.25f, 1e-30f, 812.5f};

/* The flat shortcut on faces of both orientations (the y sums), with the
 * heights a town on flat ground has: the reference's bits. */
Test(geom, normals_flat_sums_are_the_reference) {
    pm_rng r;
    pm_rng_seed(&r, 14);
    for (int k = 0; k < 60; k++) {
        fixture f = make();
        random_flat(&f, &r, 30 + (uint32_t)pm_rng_below(&r, 400), 10 + (uint32_t)pm_rng_below(&r, 900),
                    flat_heights[k % 6], false);
        assert_reference(&f.s->prims[0]);
        pm_arena_destroy(f.a);
    }
}

/* Every face up (asphalt, sidewalk tops): every normal exactly (+0, 1, +0). */
Test(geom, normals_flat_faces_up_are_exactly_up) {
    pm_rng r;
    pm_rng_seed(&r, 16);
    for (int k = 0; k < 60; k++) {
        fixture f = make();
        pm_prim *p = random_flat(&f, &r, 30 + (uint32_t)pm_rng_below(&r, 400),
                                 10 + (uint32_t)pm_rng_below(&r, 900), flat_heights[k % 6], true);
        assert_reference(p);
        for (uint32_t v = 0; v < p->vcount; v++)
            cr_assert(p->normals[3 * v] == 0.0f && !signbit(p->normals[3 * v]) &&
                      p->normals[3 * v + 1] == 1.0f && p->normals[3 * v + 2] == 0.0f &&
                      !signbit(p->normals[3 * v + 2]));
        pm_arena_destroy(f.a);
    }
}

/* One face turned down among faces up is summed: its lone corners get -Y. */
Test(geom, normals_flat_one_face_down_is_summed) {
    pm_rng r;
    pm_rng_seed(&r, 17);
    fixture f = make();
    pm_prim *p = random_flat(&f, &r, 60, 120, 3.5f, true);
    uint32_t u0 = p->vcount - 2, u1 = p->vcount - 1, u2 = add_v(&f, p, 1000.0f, 3.5f, 1000.0f);
    p->positions[3 * u0] = 900.0f, p->positions[3 * u0 + 2] = 900.0f;
    p->positions[3 * u1] = 950.0f, p->positions[3 * u1 + 2] = 900.0f;
    add_t(&f, p, u0, u1, u2);   /* clockwise from +Y */
    assert_reference(p);
    cr_assert(p->normals[3 * u2 + 1] == -1.0f, "the face down's corner points down");
    pm_arena_destroy(f.a);
}

/* One vertex a float off the plane: not flat, the general sums. */
Test(geom, normals_one_vertex_off_flat_is_the_reference) {
    pm_rng r;
    pm_rng_seed(&r, 15);
    fixture f = make();
    pm_prim *p = random_flat(&f, &r, 50, 80, 2.0f, false);
    p->positions[3 * 20 + 1] = nextafterf(2.0f, 3.0f);
    assert_reference(p);
    pm_arena_destroy(f.a);
}

/* The normalize step of pm_prim_normals_finish, written out as the plain
 * reference: widen, x x + y y + z z, sqrt, divide, round; +Y where the
 * length is 0 or not finite. */
static void ref_normalize(float *n) {
    double x = n[0], y = n[1], z = n[2];
    double len = sqrt(x * x + y * y + z * z);
    if (!(len > 0.0) || !isfinite(len)) {
        n[0] = 0.0f, n[1] = 1.0f, n[2] = 0.0f;
        return;
    }
    n[0] = (float)(x / len), n[1] = (float)(y / len), n[2] = (float)(z / len);
}

Test(geom, normalize_paths_are_the_plain_one) {
    /* pm__normalize_all's paths (plain, AVX2 where the CPU has it) against
     * the reference on random sums of every magnitude: zeros, -0, huge
     * ones whose squares overflow, subnormals, infinities and NaNs, and
     * every count's remainder. */
    pm_rng r;
    pm_rng_seed(&r, 4242);
    static float in[3 * 100], out[3 * 100 + 1], want[3 * 100];
    int ran[2] = {0, 0};
    for (int it = 0; it < 20000; it++) {
        uint32_t nv = (uint32_t)pm_rng_below(&r, 101);
        for (uint32_t i = 0; i < 3 * nv; i++) {
            double m = ldexp(pm_rng_range(&r, -1, 1), (int)pm_rng_below(&r, 300) - 150);
            uint64_t pick = pm_rng_below(&r, 40);
            in[i] = pick == 0 ? 0.0f : pick == 1 ? -0.0f : pick == 2 ? INFINITY : pick == 3 ? NAN
                  : pick == 4 ? 3e38f : pick == 5 ? 1e-45f : (float)m;
        }
        if (it % 7 == 0 && nv) in[0] = in[1] = in[2] = 0.0f;
        memcpy(want, in, sizeof want);
        for (uint32_t v = 0; v < nv; v++) ref_normalize(want + 3 * v);
        for (int path = -1; path <= 1; path++) {
            memcpy(out, in, sizeof in);
            out[3 * nv] = 12345.0f;   /* past the end: untouched */
            if (pm__normalize_all(out, nv, path) < 0) continue;
            if (path >= 0) ran[path]++;
            cr_assert(memcmp(out, want, 3 * nv * sizeof *out) == 0, "path %d, %u normals differ", path, nv);
            cr_assert_eq(out[3 * nv], 12345.0f, "path %d wrote past the end", path);
        }
    }
    cr_assert_gt(ran[0], 0);
    cr_log_info("normalize paths run: plain %d, AVX2 %d", ran[0], ran[1]);
}

Test(geom, normals_sum_paths_are_the_plain_one) {
    /* pm__normals_sum's paths (plain, AVX2 where the CPU has it) against
     * the sums written out (pm_face_cross rounded to floats, added to a,
     * b, c in triangle order) over random triangle runs t0 .. t1 of every
     * remainder, on random starting normals, with shared and repeated
     * corners, degenerate triangles and positions of every scale. */
    pm_rng r;
    pm_rng_seed(&r, 7171);
    static float pos[3 * 64], n0[3 * 64], want[3 * 64];
    static uint32_t ix[3 * 80];
    int ran[2] = {0, 0};
    for (int it = 0; it < 20000; it++) {
        uint32_t nv = (uint32_t)pm_rng_int(&r, 1, 64), nt = (uint32_t)pm_rng_below(&r, 81);
        double scale = ldexp(1.0, (int)pm_rng_below(&r, 60) - 30);
        for (uint32_t v = 0; v < nv; v++) {
            for (int k = 0; k < 3; k++) {
                pos[3 * v + k] = (float)(pm_rng_range(&r, -50, 50) * scale);
                n0[3 * v + k] = pm_rng_chance(&r, 0.5) ? 0.0f : (float)pm_rng_range(&r, -3, 3);
            }
            if (v > 0 && pm_rng_chance(&r, 0.1)) memcpy(pos + 3 * v, pos + 3 * (v - 1), 3 * sizeof *pos);
        }
        for (uint32_t i = 0; i < 3 * nt; i++) ix[i] = (uint32_t)pm_rng_below(&r, nv);
        uint32_t t0 = nt ? (uint32_t)pm_rng_below(&r, nt + 1) : 0, t1 = t0 + (uint32_t)pm_rng_below(&r, nt - t0 + 1);
        if (it % 3 == 0) t0 = 0, t1 = nt;
        memcpy(want, n0, 3 * nv * sizeof *want);
        for (uint32_t t = t0; t < t1; t++) {
            double c[3];
            pm_face_cross(pos, ix[3 * t], ix[3 * t + 1], ix[3 * t + 2], c);
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++) want[3 * ix[3 * t + k] + j] = want[3 * ix[3 * t + k] + j] + (float)c[j];
        }
        for (int path = -1; path <= 1; path++) {
            float nrm[3 * 64];
            memcpy(nrm, n0, 3 * nv * sizeof *nrm);
            pm_prim p = {.positions = pos, .normals = nrm, .indices = ix, .vcount = nv, .vcap = nv,
                         .icount = 3 * nt, .icap = 3 * nt};
            if (pm__normals_sum(&p, t0, t1, path) < 0) continue;
            if (path >= 0) ran[path]++;
            cr_assert(memcmp(nrm, want, 3 * nv * sizeof *nrm) == 0, "path %d, triangles %u .. %u: sums differ", path,
                      t0, t1);
        }
    }
    cr_assert_gt(ran[0], 0);
    cr_log_info("normals sum paths run: plain %d, AVX2 %d", ran[0], ran[1]);
}

Test(geom, face_down_paths_are_the_plain_one) {
    /* pm__any_face_down's paths (plain, AVX2 where the CPU has it) against
     * the plain test written out, on random flat and tilted triangle sets
     * of every count's remainder: all up, one down anywhere (first, last,
     * in a group of four), flat ones whose cross y rounds to +-0, and
     * tiny crosses that round to a float zero. */
    pm_rng r;
    pm_rng_seed(&r, 9191);
    static float pos[3 * 64];
    static uint32_t ix[3 * 50];
    int ran[2] = {0, 0}, downs = 0;
    for (int it = 0; it < 4000; it++) {
        uint32_t nv = (uint32_t)pm_rng_int(&r, 3, 64), nt = (uint32_t)pm_rng_below(&r, 51);
        double scale = ldexp(1.0, (int)pm_rng_below(&r, 40) - 30);
        for (uint32_t v = 0; v < nv; v++) {
            pos[3 * v] = (float)(pm_rng_range(&r, -50, 50) * scale);
            pos[3 * v + 1] = it % 2 ? 2.0f : (float)pm_rng_range(&r, -3, 3);
            pos[3 * v + 2] = (float)(pm_rng_range(&r, -50, 50) * scale);
            if (v > 0 && pm_rng_chance(&r, 0.1)) memcpy(pos + 3 * v, pos + 3 * (v - 1), 3 * sizeof *pos);
        }
        bool want = false;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t a = (uint32_t)pm_rng_below(&r, nv), b = (uint32_t)pm_rng_below(&r, nv), c = (uint32_t)pm_rng_below(&r, nv);
            double cr[3];
            pm_face_cross(pos, a, b, c, cr);
            /* Mostly up (swapped to face up), now and then left as drawn. */
            if ((float)cr[1] < 0.0f && !pm_rng_chance(&r, 0.02)) {
                uint32_t x = b;
                b = c, c = x;
            }
            ix[3 * t] = a, ix[3 * t + 1] = b, ix[3 * t + 2] = c;
            pm_face_cross(pos, a, b, c, cr);
            want |= (float)cr[1] < 0.0f;
        }
        downs += want;
        for (int path = -1; path <= 1; path++) {
            int got = pm__any_face_down(pos, ix, nt, path);
            if (got < 0) continue;
            if (path >= 0) ran[path]++;
            cr_assert_eq(got, want, "path %d, %u triangles: %d, want %d", path, nt, got, want);
        }
    }
    cr_assert_gt(ran[0], 0);
    cr_assert_gt(downs, 200, "only %d sets face down", downs);
    cr_assert_lt(downs, 3800, "%d sets of 4000 face down", downs);
    cr_log_info("face-down paths run: plain %d, AVX2 %d; %d sets down", ran[0], ran[1], downs);
}

/* ---- bounds ------------------------------------------------------------- */

Test(geom, bounds) {
    fixture f = make();
    float mn[3], mx[3];
    cr_assert_not(pm_scene_bounds(f.s, mn, mx));
    pm_prim *p = pm_scene_add_prim(f.s, "a", "a", 0, 0, 0);
    cr_assert_not(pm_prim_bounds(p, mn, mx));
    cr_assert_not(pm_scene_bounds(f.s, mn, mx));
    add_v(&f, p, 1, -2, 3);
    add_v(&f, p, -4, 5, 0.5f);
    cr_assert(pm_prim_bounds(p, mn, mx));
    assert_vec(mn, -4, -2, 0.5, 0);
    assert_vec(mx, 1, 5, 3, 0);
    pm_scene_add_prim(f.s, "empty", "e", 0, 0, 0);
    pm_prim *q = pm_scene_add_prim(f.s, "b", "b", 0, 0, 0);
    add_v(&f, q, 10, 0, -7);
    cr_assert(pm_scene_bounds(f.s, mn, mx));
    assert_vec(mn, -4, -2, -7, 0);
    assert_vec(mx, 10, 5, 3, 0);
    pm_arena_destroy(f.a);
}

/* ---- snapping ----------------------------------------------------------- */

Test(geom, snap_rounding_rule) {
    cr_assert_eq(pm_snap(0.5, 1.0), 1.0);
    cr_assert_eq(pm_snap(-0.5, 1.0), -1.0);
    cr_assert_eq(pm_snap(2.5, 1.0), 3.0);
    cr_assert_eq(pm_snap(2.4999, 1.0), 2.0);
    cr_assert_eq(pm_snap(7.3, 0.25), 7.25);
    cr_assert_eq(pm_snap(1.0004, 0.001), 1000.0 * 0.001);
    cr_assert_eq(pm_snap(-1.0006, 0.001), -1001.0 * 0.001);
    double z = pm_snap(-0.0004, 0.001);
    cr_assert(z == 0.0 && !signbit(z), "snap must not return -0");
    cr_assert(!signbit(pm_snap(-0.0, 0.5)));
}

/* Two generators computing the same point by different arithmetic paths
 * (differing in the last bits) get identical bits after snapping, and
 * snapping is idempotent, also through the float store. */
Test(geom, snap_same_bits_and_idempotent) {
    pm_rng r;
    pm_rng_seed(&r, 5);
    const double grid = 0.001;
    for (int i = 0; i < 100000; i++) {
        double x = pm_rng_range(&r, -2000, 2000);
        double y = nextafter(nextafter(x, INFINITY), INFINITY);
        double sx = pm_snap(x, grid), sy = pm_snap(y, grid);
        /* Only values two ulps from a rounding boundary may differ. */
        if (sx != sy) cr_assert(fabs(fmod(fabs(x / grid), 1.0) - 0.5) < 1e-9);
        cr_assert_eq(pm_snap(sx, grid), sx);
        float fx = (float)sx;
        cr_assert_eq((float)pm_snap(fx, grid), fx, "float round trip at %.17g", sx);
    }
}

Test(geom, prim_snap) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    add_v(&f, p, 1.23456f, -0.0001f, 1000.0004f);
    pm_prim_snap(p, 0.001);
    cr_assert_eq(p->positions[0], (float)pm_snap((double)1.23456f, 0.001));
    cr_assert_eq(p->positions[0], (float)1.235);
    cr_assert(p->positions[1] == 0.0f && !signbit(p->positions[1]));
    cr_assert_eq(p->positions[2], (float)1000.0);
    float before[3];
    memcpy(before, p->positions, sizeof before);
    pm_prim_snap(p, 0.001);
    cr_assert_eq(memcmp(before, p->positions, sizeof before), 0);
    pm_arena_destroy(f.a);
}

/* ---- welding ------------------------------------------------------------ */

static uint32_t add_vu(fixture *f, pm_prim *p, float x, float z, float u) {
    float pos[3] = {x, 0, z}, n[3] = {0, 1, 0}, uv[2] = {u, 0};
    int64_t i = pm_prim_add_vertex(f->s, p, pos, n, uv, NULL);
    cr_assert_geq(i, 0);
    return (uint32_t)i;
}

Test(geom, weld_first_occurrence_order) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", PM_PRIM_UV, 0, 0);
    uint32_t a = add_vu(&f, p, 0, 0, 0);
    uint32_t b = add_vu(&f, p, 1, 0, 0);
    uint32_t a2 = add_vu(&f, p, 0, 0, 0);    /* duplicate of a */
    uint32_t c = add_vu(&f, p, 0, 1, 0);
    uint32_t a_uv = add_vu(&f, p, 0, 0, 0.5f); /* same position, other UV */
    uint32_t b2 = add_vu(&f, p, 1, 0, 0);
    add_t(&f, p, a2, c, b2);
    add_t(&f, p, a_uv, c, b);
    add_t(&f, p, a, c, b);
    pm_arena *scratch = pm_arena_create(0);
    cr_assert_eq(pm_prim_weld(scratch, p), 4);
    cr_assert_eq(p->vcount, 4);
    /* Survivors in first-occurrence order: a, b, c, a_uv. */
    cr_assert_eq(p->positions[3 * 1], 1.0f);
    cr_assert_eq(p->positions[3 * 2 + 2], 1.0f);
    cr_assert_eq(p->uvs[2 * 3], 0.5f);
    static const uint32_t want[9] = {0, 2, 1, 3, 2, 1, 0, 2, 1};
    cr_assert_eq(memcmp(p->indices, want, sizeof want), 0);
    pm_arena_destroy(scratch);
    pm_arena_destroy(f.a);
}

Test(geom, weld_negative_zero_is_distinct) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    add_v(&f, p, 0.0f, 0, 0);
    add_v(&f, p, -0.0f, 0, 0);
    pm_arena *scratch = pm_arena_create(0);
    cr_assert_eq(pm_prim_weld(scratch, p), 2);
    pm_prim_snap(p, 0.001); /* snapping clears the sign of zero */
    cr_assert_eq(pm_prim_weld(scratch, p), 1);
    pm_arena_destroy(scratch);
    pm_arena_destroy(f.a);
}

/* A grid mesh whose every quad has its own four vertices welds to the
 * shared-vertex grid, and the rewritten triangles keep their positions. */
Test(geom, weld_grid_keeps_geometry) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    const int n = 40;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            uint32_t a = add_v(&f, p, (float)i, 0, (float)j);
            uint32_t b = add_v(&f, p, (float)i, 0, (float)j + 1);
            uint32_t c = add_v(&f, p, (float)i + 1, 0, (float)j + 1);
            uint32_t d = add_v(&f, p, (float)i + 1, 0, (float)j);
            add_t(&f, p, a, b, c);
            add_t(&f, p, a, c, d);
        }
    size_t isz = p->icount * sizeof(float) * 3;
    float *before = malloc(isz);
    for (uint32_t t = 0; t < p->icount; t++)
        memcpy(before + 3 * t, p->positions + 3 * p->indices[t], 3 * sizeof(float));
    pm_arena *scratch = pm_arena_create(0);
    cr_assert_eq(pm_prim_weld(scratch, p), (n + 1) * (n + 1));
    for (uint32_t t = 0; t < p->icount; t++) {
        cr_assert_lt(p->indices[t], p->vcount);
        cr_assert_eq(memcmp(before + 3 * t, p->positions + 3 * p->indices[t], 3 * sizeof(float)), 0);
    }
    free(before);
    pm_arena_destroy(scratch);
    pm_arena_destroy(f.a);
}

Test(geom, weld_out_of_memory_leaves_prim) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    for (int i = 0; i < 1000; i++) add_v(&f, p, (float)(i % 10), 0, 0);
    add_t(&f, p, 0, 10, 20);
    pm_arena *scratch = pm_arena_create(1024);
    pm_arena_set_limit(scratch, 2048);
    cr_assert_eq(pm_prim_weld(scratch, p), -1);
    cr_assert_eq(p->vcount, 1000);
    cr_assert_eq(p->indices[1], 10);
    pm_arena_destroy(scratch);
    pm_arena_destroy(f.a);
}

/* ---- degenerate triangles ----------------------------------------------- */

Test(geom, drop_degenerate) {
    fixture f = make();
    pm_prim *p = pm_scene_add_prim(f.s, "x", "x", 0, 0, 0);
    uint32_t a = add_v(&f, p, 0, 0, 0), b = add_v(&f, p, 1, 2, 3), c = add_v(&f, p, 2, 4, 6);
    uint32_t d = add_v(&f, p, 0, 1, 0);
    /* Nearly collinear: (2, 4, 6) moved by one float ulp in y. */
    uint32_t e = add_v(&f, p, 2, nextafterf(4.0f, 5.0f), 6);
    add_t(&f, p, a, b, d);  /* kept */
    add_t(&f, p, a, b, c);  /* collinear, skew to every axis: dropped */
    add_t(&f, p, a, a, d);  /* repeated corner: dropped */
    add_t(&f, p, a, b, e);  /* tiny but positive area: kept */
    add_t(&f, p, d, b, a);  /* kept */
    cr_assert_eq(pm_prim_drop_degenerate(p), 2);
    static const uint32_t want[9] = {0, 1, 3, 0, 1, 4, 3, 1, 0};
    cr_assert_eq(p->icount, 9);
    cr_assert_eq(memcmp(p->indices, want, sizeof want), 0);
    cr_assert_eq(pm_prim_drop_degenerate(p), 0);
    pm_arena_destroy(f.a);
}
