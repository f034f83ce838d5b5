/* Junction generator: named cases (cross, T, Y, five-way, oblique, widths,
 * slopes, roundabouts, centerlines), invalid arm sets, and property tests
 * over 10,000+ random valid arm sets checking every invariant of the
 * issue: simple contour, exact area, faces up, mouths on the contour,
 * every vertex snapped, seams watertight. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "junction/junction.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_test_junction.h"

static void assert_valid(const jcase *c, jrun *r) {
    *r = run(c);
    const char *w = check_all(r, c, true);
    cr_assert_null(w, "%s", w);
}

static const pm_meta *corner(const jrun *r, size_t k) {
    return at(pm_meta_get(r->s->meta, "corners"), k);
}

static const pm_meta *arm_meta(const jrun *r, size_t i) {
    return at(pm_meta_get(r->s->meta, "arms"), i);
}

static const char *kind(const pm_meta *corner_m) { return pm_meta_get(corner_m, "kind")->u.s; }

/* Normal of a wall triangle points toward q ([x, z]): the side it faces. */
static bool faces_toward(const pm_prim *p, uint32_t t, const double q[2]) {
    const float *a = p->positions + 3 * p->indices[t], *b = p->positions + 3 * p->indices[t + 1],
                *c = p->positions + 3 * p->indices[t + 2];
    double u[3], v[3];
    for (int k = 0; k < 3; k++) {
        u[k] = (double)b[k] - (double)a[k];
        v[k] = (double)c[k] - (double)a[k];
    }
    double nx = u[1] * v[2] - u[2] * v[1], nz = u[0] * v[1] - u[1] * v[0];
    return nx * (q[0] - a[0]) + nz * (q[1] - a[2]) > 0;
}

/* ---- named cases -------------------------------------------------------- */

Test(junction, cross_is_symmetric_with_true_fillets) {
    jcase c;
    jcase_init(&c);
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 7);
    jrun r;
    assert_valid(&c, &r);
    const pm_prim *as = find_prim(r.s, "asphalt");
    /* 2 mouth points per arm + 2 inner arc points per corner. */
    cr_assert_eq(as->vcount, 16);
    cr_assert_eq(as->icount / 3, 14);
    for (size_t k = 0; k < 4; k++) {
        cr_assert_str_eq(kind(corner(&r, k)), "fillet");
        cr_assert_eq(mnum(corner(&r, k), "radius"), 3);
        /* Mouth where the fillet ends: half width + radius. */
        cr_assert_float_eq(mnum(pm_meta_get(arm_meta(&r, k), "mouth"), "distance"), 6.5, 1e-12);
    }
    /* Arc points lie on the fillet circle centred at (6.5, 6.5) etc. */
    for (uint32_t i = 0; i < as->vcount; i++) {
        double p[2];
        xz(as, i, p);
        double cx = p[0] > 0 ? 6.5 : -6.5, cz = p[1] > 0 ? 6.5 : -6.5;
        double d = hypot(p[0] - cx, p[1] - cz);
        bool mouth = fabs(fabs(p[0]) - 6.5) < 1e-9 || fabs(fabs(p[1]) - 6.5) < 1e-9;
        if (!mouth) cr_assert_float_eq(d, 3.0, 1e-3, "vertex %u off its fillet (%g)", i, d);
    }
    /* 13 x 13 square minus four corners of 3 x 3 less the 3-chord arc's
     * sector polygon (3 triangles of 9/2 sin 30 deg). */
    double area = 0;
    for (uint32_t t = 0; t < as->icount; t += 3) {
        double pts[6];
        for (int k = 0; k < 3; k++) xz(as, as->indices[t + k], pts + 2 * k);
        area += area2_xz(pts, 3) / 2;
    }
    cr_assert_float_eq(area, 169 - 4 * (9 - 2.25), 2e-2);
    cr_assert_eq(pm_meta_get(r.s->meta, "warnings")->u.kids.count, 0);
    pm_arena_destroy(r.a);
}

Test(junction, tee_joins_opposite_arms_straight) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 90, 7);
    add_arm(&c, 180, 7);
    jrun r;
    assert_valid(&c, &r);
    /* Sorted CCW: 0, 90, 180 deg; corner 2 runs from 180 deg back to 0. */
    cr_assert_str_eq(kind(corner(&r, 0)), "fillet");
    cr_assert_str_eq(kind(corner(&r, 1)), "fillet");
    cr_assert_str_eq(kind(corner(&r, 2)), "straight");
    /* The straight side is one edge on z = +3.5 (the right of the 0 deg arm). */
    const pm_meta *m0 = pm_meta_get(arm_meta(&r, 0), "mouth"), *m2 = pm_meta_get(arm_meta(&r, 2), "mouth");
    cr_assert_eq(num(at(pm_meta_get(m0, "right"), 2)), 3.5);
    cr_assert_eq(num(at(pm_meta_get(m2, "left"), 2)), 3.5);
    cr_assert_eq((uint32_t)mnum(m0, "right_index"),
                 ((uint32_t)mnum(m2, "left_index") + 1) % find_prim(r.s, "asphalt")->vcount);
    pm_arena_destroy(r.a);
}

Test(junction, wye_and_five_way) {
    double sets[3][5] = {{90, 210, 330}, {0, 72, 144, 216, 288}, {10, 65, 150, 200, 300}};
    size_t counts[3] = {3, 5, 5};
    for (int s = 0; s < 3; s++) {
        jcase c;
        jcase_init(&c);
        for (size_t i = 0; i < counts[s]; i++) add_arm(&c, sets[s][i], 6 + (double)i);
        jrun r;
        assert_valid(&c, &r);
        for (size_t k = 0; k < counts[s]; k++) cr_assert_str_eq(kind(corner(&r, k)), "fillet");
        pm_arena_destroy(r.a);
    }
}

Test(junction, oblique_twenty_degrees) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 20, 7);
    add_arm(&c, 180, 7);
    add_arm(&c, 200, 7);
    jrun r;
    assert_valid(&c, &r);
    /* The acute corners push the mouths out: curb lines meet h / tan(10 deg)
     * along the arms, the fillet adds r / tan(10 deg). */
    double need = 3.5 / tan(10 * PI / 180) + 3.0 / tan(10 * PI / 180);
    for (size_t i = 0; i < 4; i++)
        cr_assert_float_eq(mnum(pm_meta_get(arm_meta(&r, i), "mouth"), "distance"), need, 1e-9);
    cr_assert_float_eq(mnum(corner(&r, 0), "angle"), 20, 1e-9);
    pm_arena_destroy(r.a);
}

Test(junction, very_different_widths) {
    double widths[2][4] = {{40, 3, 40, 3}, {3, 60, 3, 5}};
    for (int s = 0; s < 2; s++) {
        jcase c;
        jcase_init(&c);
        for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i + (s ? 7 * i : 0), widths[s][i]);
        jrun r;
        assert_valid(&c, &r);
        for (int i = 0; i < 4; i++) {
            const pm_meta *m = pm_meta_get(arm_meta(&r, (size_t)i), "mouth");
            double L[3], R[3];
            for (int k = 0; k < 3; k++) {
                L[k] = num(at(pm_meta_get(m, "left"), k));
                R[k] = num(at(pm_meta_get(m, "right"), k));
            }
            /* The mouth spans exactly the arm's width. */
            cr_assert_float_eq(hypot(L[0] - R[0], L[2] - R[2]), widths[s][i], 2e-3);
        }
        pm_arena_destroy(r.a);
    }
}

/* Smooth heights: mouths at their elevations, every other vertex strictly
 * between the lowest and highest arm, normals tilted but up. */
Test(junction, sloped_arms_blend_heights) {
    jcase c;
    jcase_init(&c);
    double elev[4] = {0, 2, -1, 0.5};
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 8)->elevation = elev[i];
    set_sidewalks(&c, 2, 0.15);
    jrun r;
    assert_valid(&c, &r);
    const pm_prim *as = find_prim(r.s, "asphalt");
    int between = 0;
    for (uint32_t i = 0; i < as->vcount; i++) {
        float y = as->positions[3 * i + 1];
        cr_assert(y >= -1 && y <= 2);
        between += y > -1 && y < 2 && y != 0 && y != 0.5f;
        cr_assert_gt(as->normals[3 * i + 1], 0.5f);
    }
    cr_assert_geq(between, 8, "arc vertices should take blended heights");
    /* Tilted: some normal leans measurably. */
    double lean = 0;
    for (uint32_t i = 0; i < as->vcount; i++) lean = fmax(lean, 1 - as->normals[3 * i + 1]);
    cr_assert_gt(lean, 1e-3);
    pm_arena_destroy(r.a);
}

/* The asphalt follows the blend inside, not only at the contour: ear
 * clipping alone left this cross 17.5 x tol off at a centroid (creases
 * across long, thin triangles). Points are added inside and along the curb
 * runs, mouths stay single level edges, and the seams stay closed. */
Test(junction, sloped_cross_surface_follows_the_blend) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 5;
    double elev[4] = {0, 3, 0.5, -2};
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, i % 2 ? 7 : 8)->elevation = elev[i];
    set_sidewalks(&c, 2.5, 0.15);
    jrun r;
    assert_valid(&c, &r);
    const pm_prim *as = find_prim(r.s, "asphalt");
    size_t nc = pm_meta_get(r.s->meta, "contour")->u.kids.count;
    cr_assert_gt(as->vcount, nc + 20, "only %u vertices for %zu contour points", as->vcount, nc);
    double all = 0, gap = height_gap(r.s, &c, &all);
    cr_assert_leq(gap, 1.0 + 1e-6);
    cr_assert_leq(all, 1.0 + 1e-6, "no shared corners here: every triangle is bounded");
    /* The same arms flat: the contour of the ear-clipped junction, no more. */
    jcase f = c;
    f.p.arms = f.arms;
    for (int i = 0; i < 4; i++) f.arms[i].elevation = 1;
    jrun rf;
    assert_valid(&f, &rf);
    size_t ncf = pm_meta_get(rf.s->meta, "contour")->u.kids.count;
    cr_assert_eq(find_prim(rf.s, "asphalt")->vcount, ncf);
    cr_assert_gt(nc, ncf, "the sloped contour gets points along its curb runs");
    pm_arena_destroy(rf.a);
    pm_arena_destroy(r.a);
}

/* Every sidewalk slab closed on the sides (check_slab in check_all) and
 * every vertical face of it facing out of the slab. */
Test(junction_property, sidewalk_slabs_closed_and_facing_out, .timeout = 120) {
    pm_rng g;
    pm_rng_seed(&g, 9001);
    int ok = 0;
    for (int it = 0; ok < 400 && it < 1000; it++) {
        jcase c;
        random_case(&g, &c);
        for (size_t i = 0; i < c.p.narms; i++) c.arms[i].has_sidewalk = !pm_rng_chance(&g, 0.1);
        jrun r = run(&c);
        if (r.rc == PM_ERR_GEOMETRY) { pm_arena_destroy(r.a); continue; }
        const char *w = check_all(&r, &c, true);
        if (!w && find_prim(r.s, "curb")) w = check_slab_facing(r.s, 1e-3);
        if (w && getenv("PM_JUNCTION_DUMP")) dump_case(&c);
        cr_assert_null(w, "case %d: %s", it, w);
        ok++;
        pm_arena_destroy(r.a);
    }
    cr_assert_eq(ok, 400);
}

/* Random arm sets, all sloped, elevations up to 5 m apart: every invariant
 * (seams, exact cover, mouths level) and the height bound of check_heights. */
Test(junction_property, sloped_surfaces_follow_the_blend, .timeout = 120) {
    pm_rng g;
    pm_rng_seed(&g, 4242);
    int ok = 0, it = 0;
    double worst = 0, worst_all = 0;
    size_t inner = 0;
    for (; ok < 2000 && it < 4000; it++) {
        jcase c;
        random_case(&g, &c);
        for (size_t i = 0; i < c.p.narms; i++) c.arms[i].elevation = pm_rng_range(&g, -5, 5);
        jrun r = run(&c);
        if (r.rc == PM_ERR_GEOMETRY) {
            cr_assert(refusal_justified(&c, &r.d), "case %d refused: %s", it, r.d.message);
            pm_arena_destroy(r.a);
            continue;
        }
        const char *w = check_all(&r, &c, it % 2 == 0);
        if (w && getenv("PM_JUNCTION_DUMP")) dump_case(&c);
        cr_assert_null(w, "case %d: %s", it, w);
        double all = 0;
        worst = fmax(worst, height_gap(r.s, &c, &all));
        worst_all = fmax(worst_all, all);
        const pm_meta *rb = pm_meta_get(r.s->meta, "roundabout");
        inner += find_prim(r.s, "asphalt")->vcount - pm_meta_get(r.s->meta, "contour")->u.kids.count -
                 (rb ? pm_meta_get(rb, "island")->u.kids.count : 0);
        ok++;
        pm_arena_destroy(r.a);
    }
    fprintf(stderr, "junction heights: %d sloped junctions, worst centroid gap %.3f x tol "
            "(%.3f counting corners two mouths share and triangles under hmin), %.1f inner "
            "points on average\n", ok, worst, worst_all, (double)inner / ok);
    cr_assert_eq(ok, 2000);
}

Test(junction, flat_when_all_elevations_equal) {
    jcase c;
    jcase_init(&c);
    for (int i = 0; i < 3; i++) add_arm(&c, 120.0 * i + 15, 7)->elevation = 12.25;
    jrun r;
    assert_valid(&c, &r);
    const pm_prim *as = find_prim(r.s, "asphalt");
    for (uint32_t i = 0; i < as->vcount; i++) {
        cr_assert_eq(as->positions[3 * i + 1], 12.25f);
        cr_assert_eq(as->normals[3 * i + 1], 1.0f);
    }
    pm_arena_destroy(r.a);
}

Test(junction, planar_uvs_around_the_centre) {
    jcase c;
    jcase_init(&c);
    c.p.has_center = true;
    c.p.center[0] = 100;
    c.p.center[1] = -50;
    c.p.uv_scale = 0.25;
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i + 30, 7);
    jrun r;
    assert_valid(&c, &r);
    const pm_prim *as = find_prim(r.s, "asphalt");
    for (uint32_t i = 0; i < as->vcount; i++) {
        cr_assert_float_eq(as->uvs[2 * i], (as->positions[3 * i] - 100) * 0.25, 1e-5);
        cr_assert_float_eq(as->uvs[2 * i + 1], (as->positions[3 * i + 2] + 50) * 0.25, 1e-5);
    }
    pm_arena_destroy(r.a);
}

Test(junction, sidewalks_are_curbs_and_bands) {
    jcase c;
    jcase_init(&c);
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 7);
    set_sidewalks(&c, 2, 0.15);
    jrun r;
    assert_valid(&c, &r);
    cr_assert_eq(r.s->nprims, 3);
    const pm_prim *curb = find_prim(r.s, "curb"), *side = find_prim(r.s, "sidewalk");
    cr_assert_str_eq(curb->material, "curb");
    cr_assert_str_eq(side->material, "sidewalk");
    /* The vertical faces of each corner's slab: the curb faces the asphalt
     * (toward the centre here), the outer face away from it, and the two
     * end caps along their arms, outward. The curb primitive holds them all. */
    double o[2] = {0, 0};
    int toward = 0, away = 0, caps = 0;
    for (uint32_t t = 0; t < curb->icount; t += 3) {
        float x[3], z[3];
        for (int k = 0; k < 3; k++) {
            x[k] = curb->positions[3 * curb->indices[t + k]];
            z[k] = curb->positions[3 * curb->indices[t + k] + 2];
        }
        bool on_axis_x = x[0] == x[1] && x[1] == x[2], on_axis_z = z[0] == z[1] && z[1] == z[2];
        if ((on_axis_x && fabs(x[0]) > 6.4) || (on_axis_z && fabs(z[0]) > 6.4)) {
            /* A cap: in the mouth plane x = +-6.5 or z = +-6.5, facing out. */
            double out[2] = {on_axis_x ? 2 * x[0] : 0, on_axis_z ? 2 * z[0] : 0};
            cr_assert(faces_toward(curb, t, out), "cap triangle %u", t / 3);
            caps++;
        } else if (faces_toward(curb, t, o)) {
            toward++;
        } else {
            away++;
        }
    }
    cr_assert_eq(caps, 4 * 2 * 2, "two triangles per cap, two caps per corner");
    cr_assert_gt(toward, 0);
    cr_assert_gt(away, 0);
    cr_assert_null(check_slab_facing(r.s, 1e-3));
    /* Curb is curb_height tall; the sidewalk's outer edge is 2 m further out. */
    for (uint32_t i = 0; i < curb->vcount; i++) {
        float y = curb->positions[3 * i + 1];
        cr_assert(y == 0 || y == 0.15f);
    }
    double maxd = 0;
    for (uint32_t i = 0; i < side->vcount; i++) {
        cr_assert_eq(side->positions[3 * i + 1], 0.15f);
        maxd = fmax(maxd, fabs(side->positions[3 * i]));
    }
    /* The band ends at the mouth (6.5) on the arm's side line 3.5 + 2 out. */
    cr_assert_float_eq(maxd, 6.5, 1e-6);
    pm_arena_destroy(r.a);
}

/* A sidewalk wider than the corner radius: its outer edge gets the sharp
 * corner of its two offset lines, and the mouths move out to hold it. */
Test(junction, sidewalk_wider_than_radius) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 1;
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 7);
    set_sidewalks(&c, 3, 0.2);
    jrun r;
    assert_valid(&c, &r);
    /* Outer lines at 3.5 + 3 meet at 6.5: the mouth sits there. */
    for (size_t i = 0; i < 4; i++)
        cr_assert_float_eq(mnum(pm_meta_get(arm_meta(&r, i), "mouth"), "distance"), 6.5, 1e-12);
    pm_arena_destroy(r.a);
}

Test(junction, per_arm_sidewalk_override) {
    jcase c;
    jcase_init(&c);
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 7);
    set_sidewalks(&c, 2, 0.15);
    c.arms[1].has_sidewalk = false;     /* corners 0-1 and 1-2 lose theirs */
    c.arms[3].sidewalk.width = 4;
    jrun r = run(&c);
    cr_assert_null(check_all(&r, &c, false), "%s", why_buf());
    int with = 0;
    for (size_t k = 0; k < 4; k++) with += pm_meta_get(corner(&r, k), "sidewalk")->u.b;
    cr_assert_eq(with, 2);
    cr_assert_eq(pm_meta_get(arm_meta(&r, 1), "sidewalk")->kind, PM_META_NULL);
    cr_assert_eq(mnum(pm_meta_get(arm_meta(&r, 3), "sidewalk"), "width"), 4);
    pm_arena_destroy(r.a);
}

Test(junction, two_arms_straight_and_bend) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 180, 9);
    jrun r;
    assert_valid(&c, &r);
    cr_assert_str_eq(kind(corner(&r, 0)), "straight");
    cr_assert_str_eq(kind(corner(&r, 1)), "straight");
    /* The wider arm keeps its width back to the centre, then tapers: its
     * back corners stand out of the mouth-to-mouth chord. */
    const pm_prim *as = find_prim(r.s, "asphalt");
    cr_assert_eq(as->vcount, 6);
    int back = 0;
    for (uint32_t i = 0; i < as->vcount; i++)
        back += as->positions[3 * i] == 0 && fabsf(as->positions[3 * i + 2]) == 4.5f;
    cr_assert_eq(back, 2);
    pm_arena_destroy(r.a);
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 180, 7);
    assert_valid(&c, &r);
    cr_assert_eq(find_prim(r.s, "asphalt")->vcount, 4, "a straight road is one rectangle");
    pm_arena_destroy(r.a);
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 90, 7);
    set_sidewalks(&c, 2, 0.15);
    assert_valid(&c, &r);
    cr_assert_str_eq(kind(corner(&r, 0)), "fillet");
    cr_assert_str_eq(kind(corner(&r, 1)), "straight");
    pm_arena_destroy(r.a);
}

Test(junction, zero_radius_gives_sharp_corners) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 0;
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 7);
    jrun r;
    assert_valid(&c, &r);
    /* The plus sign collapses to its square; mouths share corner vertices. */
    cr_assert_eq(find_prim(r.s, "asphalt")->vcount, 4);
    pm_arena_destroy(r.a);
}

/* ---- radius that does not fit ------------------------------------------------ */

Test(junction, short_arm_shrinks_radius_with_warning) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 10;
    add_arm(&c, 0, 8)->length = 8;      /* room for 8 m: corner at 4 + r */
    add_arm(&c, 90, 8);
    add_arm(&c, 180, 8);
    jrun r;
    assert_valid(&c, &r);
    const pm_meta *w = pm_meta_get(r.s->meta, "warnings");
    cr_assert_eq(w->u.kids.count, 1);
    const pm_meta *w0 = at(w, 0);
    cr_assert_str_eq(pm_meta_get(w0, "code")->u.s, "corner_radius_reduced");
    cr_assert_eq(mnum(w0, "corner"), 0);
    cr_assert_eq(num(at(pm_meta_get(w0, "arms"), 0)), 0);
    cr_assert_eq(num(at(pm_meta_get(w0, "arms"), 1)), 1);
    cr_assert_float_eq(mnum(w0, "radius"), 4, 1e-9);
    cr_assert_float_eq(mnum(corner(&r, 0), "radius"), 4, 1e-9);
    cr_assert_eq(mnum(corner(&r, 1), "radius"), 10);
    cr_assert_eq(r.d.nwarnings, 1);
    cr_assert_float_eq(mnum(pm_meta_get(arm_meta(&r, 0), "mouth"), "distance"), 8, 1e-9);
    pm_arena_destroy(r.a);
}

Test(junction, acute_angle_on_short_arms_shrinks_radius) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 6)->length = 30;
    add_arm(&c, 15, 6)->length = 30;
    add_arm(&c, 180, 6);
    jrun r;
    assert_valid(&c, &r);
    /* Curb lines meet 3 / tan(7.5) = 22.8 m out; 7.2 m left for the
     * tangent length r / tan(7.5): r = 0.95. */
    double want = (30 - 3 / tan(7.5 * PI / 180)) * tan(7.5 * PI / 180);
    cr_assert_float_eq(mnum(corner(&r, 0), "radius"), want, 1e-9);
    cr_assert_eq(pm_meta_get(r.s->meta, "warnings")->u.kids.count, 1);
    pm_arena_destroy(r.a);
}

/* ---- invalid sets ---------------------------------------------------------------- */

static pm_junction_arm *add_line(jcase *c, const double *xz_pts, size_t n, double width);

static void expect_error(const jcase *c, pm_junction_error e, int a0, int a1) {
    jrun r = run(c);
    cr_assert_eq(r.rc, PM_ERR_GEOMETRY, "expected %s, got rc %d", pm_junction_error_name(e), r.rc);
    cr_assert_eq(r.d.error, e, "expected %s, got %s (%s)", pm_junction_error_name(e),
                 pm_junction_error_name(r.d.error), r.d.message);
    cr_assert_gt(strlen(r.d.message), 10);
    if (a0 >= 0) {
        bool f0 = false, f1 = a1 < 0;
        for (size_t i = 0; i < r.d.narms; i++) {
            f0 = f0 || r.d.arms[i] == a0;
            f1 = f1 || r.d.arms[i] == a1;
        }
        cr_assert(f0 && f1, "error does not name arms %d and %d: %s", a0, a1, r.d.message);
    }
    pm_arena_destroy(r.a);
}

Test(junction_invalid, arms_too_close) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 45, 7);
    add_arm(&c, 45, 9);       /* the same direction */
    expect_error(&c, PM_JUNCTION_ARMS_TOO_CLOSE, 0, 1);
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 120, 7);
    add_arm(&c, 240, 7);
    add_arm(&c, 120.3, 7);    /* 0.3 degrees from arm 1 */
    expect_error(&c, PM_JUNCTION_ARMS_TOO_CLOSE, 1, 3);
    jcase_init(&c);
    add_arm(&c, 359.8, 7);
    add_arm(&c, 90, 7);
    add_arm(&c, 0.1, 7);      /* across the 0/360 wrap */
    expect_error(&c, PM_JUNCTION_ARMS_TOO_CLOSE, 0, 2);
}

/* Arms a few degrees apart build: their mouths go out to where their
 * edges part, the fillet beyond; with too little room the refusal says
 * how far out that is. */
Test(junction, arms_three_degrees_apart_part_where_their_edges_do) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 120, 7);
    add_arm(&c, 240, 7);
    add_arm(&c, 123, 7);
    jrun r;
    assert_valid(&c, &r);
    /* Curb lines 3 degrees apart, 3.5 m off each centre line, meet
     * (3.5 cos 3 + 3.5) / sin 3 out; the 3 m fillet ends 3 / tan 1.5 beyond. */
    double phi = 3 * PI / 180, meet = (3.5 * cos(phi) + 3.5) / sin(phi), fillet = 3 / tan(phi / 2);
    for (int i = 1; i <= 3; i += 2) {
        double d = mnum(pm_meta_get(arm_meta(&r, (size_t)i), "mouth"), "distance");
        cr_assert_float_eq(d, meet + fillet, 1e-6, "arm %d's mouth at %.6f", i, d);
    }
    pm_arena_destroy(r.a);
    c.arms[1].length = c.arms[3].length = 100;
    r = run(&c);
    cr_assert_eq(r.rc, PM_ERR_GEOMETRY);
    cr_assert_eq(r.d.error, PM_JUNCTION_ARM_TOO_SHORT);
    char want[64];
    snprintf(want, sizeof want, "lies %.3f m along arm", meet);
    cr_assert(strstr(r.d.message, want), "%s (wanted '%s')", r.d.message, want);
    pm_arena_destroy(r.a);
}

Test(junction_invalid, corner_beyond_short_arm) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 8)->length = 2;     /* the curb lines meet 4 m out */
    add_arm(&c, 90, 8);
    expect_error(&c, PM_JUNCTION_ARM_TOO_SHORT, 0, 1);
}

Test(junction_invalid, centerline_not_reaching_past_centre) {
    jcase c;
    jcase_init(&c);
    double a[4] = {10, 0, 20, 0};       /* runs away from the junction */
    double b[4] = {0, 10, 0, 0};
    memcpy(c.lines[0], a, sizeof a);
    memcpy(c.lines[1], b, sizeof b);
    c.arms[0] = (pm_junction_arm){.centerline = c.lines[0], .centerline_len = 2, .width = 6};
    c.arms[1] = (pm_junction_arm){.centerline = c.lines[1], .centerline_len = 2, .width = 6};
    c.p.narms = 2;
    c.p.has_center = true;
    expect_error(&c, PM_JUNCTION_ARM_TOO_SHORT, 0, -1);
}

/* Centerlines passing far from the given centre: their corners land on the
 * wrong sides and the contour would cross itself; both arms are named. */
Test(junction_invalid, crossing_contour_names_the_arms) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 1.8824532458573717;
    c.p.has_center = true;
    add_line(&c, (double[]){-22.104947024090364, 78.329747219667183, -14.91193016918235,
                            -1.3462247450663865}, 2, 13.40654872918306);
    add_line(&c, (double[]){61.175337195190167, 52.014465824623549, 4.9223878281167712,
                            -4.8679188608436714}, 2, 7.01485276578659);
    expect_error(&c, PM_JUNCTION_SELF_INTERSECTION, 0, 1);
}

Test(junction_invalid, roundabout_arms_overlap_at_ring) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 10);
    add_arm(&c, 20, 10);      /* 20 degrees apart on a 12 m ring: curbs cross */
    add_arm(&c, 180, 10);
    set_roundabout(&c, 12, 6, 32);
    expect_error(&c, PM_JUNCTION_RING_NO_FIT, 0, 1);
}

Test(junction_invalid, sidewalk_folding_over_itself) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 6)->length = 12;
    add_arm(&c, 30, 6)->length = 12;
    add_arm(&c, 180, 6);
    set_sidewalks(&c, 20, 0.15);    /* outer lines meet far beyond 12 m */
    expect_error(&c, PM_JUNCTION_SIDEWALK_NO_FIT, 0, 1);
}

/* ---- roundabouts ------------------------------------------------------------------ */

static void check_roundabout(const jrun *r, const jcase *c) {
    const pm_prim *as = find_prim(r->s, "asphalt"), *isl = find_prim(r->s, "island");
    cr_assert_not_null(isl);
    cr_assert_str_eq(isl->material, "island");
    double cx = c->p.has_center ? c->p.center[0] : 0, cz = c->p.has_center ? c->p.center[1] : 0;
    const pm_meta *rb = pm_meta_get(r->s->meta, "roundabout");
    size_t nc = pm_meta_get(r->s->meta, "contour")->u.kids.count;
    size_t ni = pm_meta_get(rb, "island")->u.kids.count;
    cr_assert_eq(mnum(rb, "island_first_index"), (double)nc);
    cr_assert_geq(ni, c->p.roundabout.segments);
    double R = c->p.roundabout.radius, Ri = c->p.roundabout.island_radius, g = c->p.snap;
    for (size_t i = 0; i < nc; i++) {
        double p[2];
        xz(as, (uint32_t)i, p);
        cr_assert_geq(hypot(p[0] - cx, p[1] - cz), R - 2 * g, "contour point %zu inside the ring", i);
    }
    for (size_t i = 0; i < ni; i++) {
        double p[2];
        xz(as, (uint32_t)(nc + i), p);
        cr_assert_float_eq(hypot(p[0] - cx, p[1] - cz), Ri, 2 * g);
    }
    for (size_t k = 0; k < c->p.narms; k++) cr_assert_str_eq(kind(corner(r, k)), "ring");
    /* Island top up, wall facing out, top at island_height. */
    int up = 0, wall = 0;
    for (uint32_t t = 0; t < isl->icount; t += 3) {
        const float *a = isl->positions + 3 * isl->indices[t];
        double pa[2] = {a[0], a[2]}, pb[2], pc[2];
        xz(isl, isl->indices[t + 1], pb);
        xz(isl, isl->indices[t + 2], pc);
        if (pm_orient_xz(pa, pb, pc) > 0) { up++; continue; }
        wall++;
        double far[2] = {cx + 10 * (a[0] - cx), cz + 10 * (a[2] - cz)};
        cr_assert(faces_toward(isl, t, far), "island wall triangle %u faces in", t / 3);
    }
    cr_assert_eq(up, (int)ni - 2);
    cr_assert_eq(wall, 2 * (int)ni);
}

Test(junction, roundabouts_three_to_six_arms) {
    for (int n = 3; n <= 6; n++) {
        for (int sw = 0; sw < 2; sw++) {
            jcase c;
            jcase_init(&c);
            c.p.has_center = true;
            c.p.center[0] = 20;
            c.p.center[1] = 10;
            for (int i = 0; i < n; i++) add_arm(&c, 360.0 * i / n + 11 * (i % 2), 7 + i);
            set_roundabout(&c, 16, 8, 40);
            if (sw) set_sidewalks(&c, 2.5, 0.15);
            jrun r;
            assert_valid(&c, &r);
            check_roundabout(&r, &c);
            cr_assert_eq(r.s->nprims, sw ? 4 : 2);
            pm_arena_destroy(r.a);
        }
    }
}

Test(junction, roundabout_fillets_tangent_to_ring) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 5;
    c.p.corner_segments = 6;
    for (int i = 0; i < 4; i++) add_arm(&c, 90.0 * i, 8);
    set_roundabout(&c, 15, 6, 32);
    jrun r;
    assert_valid(&c, &r);
    check_roundabout(&r, &c);
    /* The right fillet of the 0 deg arm touches its curb z = 4 and the ring
     * at distance 15: centre at z = 9, |centre| = 20, so x = sqrt(400 - 81). */
    double fx = sqrt(400.0 - 81.0);
    cr_assert_float_eq(mnum(pm_meta_get(arm_meta(&r, 0), "mouth"), "distance"), fx, 1e-9);
    const pm_prim *as = find_prim(r.s, "asphalt");
    int on_fillet = 0;
    for (uint32_t i = 0; i < as->vcount; i++) {
        double p[2];
        xz(as, i, p);
        if (fabs(hypot(p[0] - fx, p[1] - 9) - 5) < 2e-3) on_fillet++;
    }
    cr_assert_eq(on_fillet, 6, "the fillet's 6 points lie on its circle");
    pm_arena_destroy(r.a);
}

/* ---- centerline input ---------------------------------------------------------------- */

static pm_junction_arm *add_line(jcase *c, const double *xz_pts, size_t n, double width) {
    size_t i = c->p.narms++;
    memcpy(c->lines[i], xz_pts, 2 * n * sizeof(double));
    c->arms[i] = (pm_junction_arm){.centerline = c->lines[i], .centerline_len = n, .width = width};
    return &c->arms[i];
}

static void center_of(const jrun *r, double out[2]) {
    const pm_meta *m = pm_meta_get(r->s->meta, "center");
    out[0] = num(at(m, 0));
    out[1] = num(at(m, 1));
}

Test(junction, centerlines_two_arms_meet_at_last_segments) {
    jcase c;
    jcase_init(&c);
    add_line(&c, (double[]){30, 0, 10, 0, 0.5, 0.2}, 3, 7);
    add_line(&c, (double[]){0, 40, 0, 5}, 2, 7);
    jrun r;
    assert_valid(&c, &r);
    double ctr[2];
    center_of(&r, ctr);
    cr_assert_float_eq(ctr[0], 0, 1e-12);
    cr_assert_float_eq(ctr[1], 0.2 + 0.5 * 0.2 / 9.5, 1e-12);
    double api[2];
    pm_junction_center(&c.p, api);
    cr_assert_eq(api[0], ctr[0]);
    cr_assert_eq(api[1], ctr[1]);
    pm_arena_destroy(r.a);
}

Test(junction, centerlines_parallel_use_midpoint) {
    jcase c;
    jcase_init(&c);
    add_line(&c, (double[]){20, 1, 2, 1}, 2, 7);
    add_line(&c, (double[]){-20, -1, -4, -1}, 2, 7);
    jrun r;
    assert_valid(&c, &r);
    double ctr[2];
    center_of(&r, ctr);
    cr_assert_float_eq(ctr[0], -1, 1e-12);
    cr_assert_float_eq(ctr[1], 0, 1e-12);
    pm_arena_destroy(r.a);
}

Test(junction, centerlines_three_arms_least_squares) {
    jcase c;
    jcase_init(&c);
    add_line(&c, (double[]){30, 0, 2, 0}, 2, 6);
    add_line(&c, (double[]){0, 30, 0, 2}, 2, 6);
    add_line(&c, (double[]){-20, 21, -2, 3}, 2, 6);
    jrun r;
    assert_valid(&c, &r);
    double ctr[2];
    center_of(&r, ctr);
    /* Minimises z^2 + x^2 + (x + z - 1)^2 / 2: x = z = 1/4. */
    cr_assert_float_eq(ctr[0], 0.25, 1e-12);
    cr_assert_float_eq(ctr[1], 0.25, 1e-12);
    /* Each mouth is centred on its own centerline, not on the centre. */
    const pm_meta *m = pm_meta_get(arm_meta(&r, 0), "mouth");
    double zl = num(at(pm_meta_get(m, "left"), 2)), zr = num(at(pm_meta_get(m, "right"), 2));
    cr_assert_float_eq(zl + zr, 0, 1e-9);
    pm_arena_destroy(r.a);
}

Test(junction, centerline_short_last_segment_limits_radius) {
    jcase c;
    jcase_init(&c);
    c.p.corner_radius = 8;
    add_line(&c, (double[]){40, 10, 9, 0, 0, 0}, 3, 6);   /* last segment 9 m */
    add_line(&c, (double[]){0, 50, 0, 0}, 2, 6);
    add_line(&c, (double[]){-50, 0, 0, 0}, 2, 6);
    jrun r;
    assert_valid(&c, &r);
    /* Sorted: arm 0 (+X), arm 2 (-X), arm 1 (+Z); corner 2 runs from arm 1
     * to arm 0 and its tangent point on arm 0 must stay within 9 m. */
    cr_assert_float_eq(mnum(corner(&r, 2), "radius"), 6, 1e-9, "9 m room - 3 m half width");
    cr_assert_eq(mnum(corner(&r, 1), "radius"), 8);
    cr_assert_eq(pm_meta_get(r.s->meta, "warnings")->u.kids.count, 1);
    pm_arena_destroy(r.a);
}

/* ---- determinism --------------------------------------------------------------------- */

Test(junction, same_params_same_bits) {
    jcase c;
    jcase_init(&c);
    for (int i = 0; i < 5; i++) add_arm(&c, 70.0 * i + 3, 5 + i)->elevation = i * 0.3;
    set_sidewalks(&c, 2, 0.12);
    jrun a = run(&c), b = run(&c);
    cr_assert_eq(a.rc, 0);
    cr_assert_eq(a.s->nprims, b.s->nprims);
    for (uint32_t q = 0; q < a.s->nprims; q++) {
        const pm_prim *p = &a.s->prims[q], *o = &b.s->prims[q];
        cr_assert_eq(p->vcount, o->vcount);
        cr_assert_eq(p->icount, o->icount);
        cr_assert_eq(memcmp(p->positions, o->positions, 12 * (size_t)p->vcount), 0);
        cr_assert_eq(memcmp(p->normals, o->normals, 12 * (size_t)p->vcount), 0);
        cr_assert_eq(memcmp(p->indices, o->indices, 4 * (size_t)p->icount), 0);
    }
    pm_arena_destroy(a.a);
    pm_arena_destroy(b.a);
}

/* ---- property tests ------------------------------------------------------------------ */

Test(junction_property, random_valid_arm_sets, .timeout = 120) {
    pm_rng g;
    pm_rng_seed(&g, 20261129);
    const int N = 10000;
    int fails[8] = {0}, refused = 0, ok = 0, it = 0;
    for (; ok < N && it < 2 * N; it++) {
        jcase c;
        random_case(&g, &c);
        jrun r = run(&c);
        if (r.rc == PM_ERR_GEOMETRY) {
            /* A refusal must say why, name arms that exist, and be called for. */
            cr_assert_neq(r.d.error, PM_JUNCTION_OK, "case %d", it);
            cr_assert_gt(strlen(r.d.message), 10);
            for (size_t i = 0; i < r.d.narms; i++)
                cr_assert(r.d.arms[i] >= 0 && (size_t)r.d.arms[i] < c.p.narms);
            bool fine = refusal_justified(&c, &r.d);
            if (!fine && getenv("PM_JUNCTION_DUMP")) dump_case(&c);
            cr_assert(fine, "case %d refused without cause: %s: %s", it,
                      pm_junction_error_name(r.d.error), r.d.message);
            fails[r.d.error]++;
            refused++;
            if (getenv("PM_JUNCTION_REFUSED")) fprintf(stderr, "refused %d: %s\n", it, r.d.message);
            pm_arena_destroy(r.a);
            continue;
        }
        cr_assert_eq(r.rc, 0, "case %d: rc %d", it, r.rc);
        const char *w = check_all(&r, &c, it % 4 == 0);
        if (w && getenv("PM_JUNCTION_DUMP")) dump_case(&c);
        cr_assert_null(w, "case %d: %s", it, w);
        ok++;
        pm_arena_destroy(r.a);
    }
    fprintf(stderr, "junction property: %d valid junctions checked, %d refused (short %d, "
            "sidewalk %d, ring %d)\n", ok, refused, fails[PM_JUNCTION_ARM_TOO_SHORT],
            fails[PM_JUNCTION_SIDEWALK_NO_FIT], fails[PM_JUNCTION_RING_NO_FIT]);
    cr_assert_eq(ok, N);
    cr_assert_lt(refused, N / 4, "%d of %d refused", refused, it);
}

/* Any arm set with two neighbours 1 to 5 degrees apart builds, valid by
 * every check, when the arms have room; when those two arms' rooms end
 * before their edges part, it is refused naming exactly those two. */
Test(junction_property, random_close_pairs) {
    pm_rng g;
    pm_rng_seed(&g, 77);
    for (int it = 0; it < 2000; it++) {
        jcase c;
        jcase_init(&c);
        size_t n = 2 + (size_t)pm_rng_below(&g, 5);
        double base = pm_rng_range(&g, 0, 360), step = 360.0 / (double)n;
        for (size_t i = 0; i < n; i++) add_arm(&c, base + step * (double)i, pm_rng_range(&g, 3, 20));
        size_t k = (size_t)pm_rng_below(&g, n);
        double off = pm_rng_range(&g, 1, 4.9) * (pm_rng_chance(&g, 0.5) ? 1 : -1);
        add_arm(&c, base + step * (double)k + off, 5);
        if (it % 2) set_sidewalks(&c, pm_rng_range(&g, 1, 3), 0.15);
        jrun r;
        r = run(&c);
        const char *w = check_all(&r, &c, true);
        cr_assert_null(w, "case %d (%g degrees): %s", it, off, w);
        pm_arena_destroy(r.a);
        /* Room for everything but the parting of the two close arms. */
        double phi = fabs(off) * PI / 180;
        double meet = (0.5 * c.arms[k].width * cos(phi) + 2.5) / sin(phi);
        c.arms[k].length = c.arms[n].length = 0.9 * meet;
        expect_error(&c, PM_JUNCTION_ARM_TOO_SHORT, (int)k, (int)n);
    }
}

/* Parameters at the edges of what the api accepts: tiny and huge widths,
 * coordinates far out, coarse and fine snapping, big radii, many arms.
 * Never a crash or a broken mesh: a valid junction or a reasoned refusal. */
Test(junction_property, extreme_parameters, .timeout = 120) {
    pm_rng g;
    pm_rng_seed(&g, 5150);
    int ok = 0;
    for (int it = 0; it < 1500; it++) {
        jcase c;
        jcase_init(&c);
        size_t n = 2 + (size_t)pm_rng_below(&g, 15);
        c.p.snap = pm_rng_chance(&g, 0.5) ? 1e-6 : pm_rng_chance(&g, 0.5) ? 0.1 : 0.001;
        double wmin = 10 * c.p.snap;
        c.p.corner_radius = pm_rng_chance(&g, 0.3) ? pm_rng_range(&g, 0, 1000) : pm_rng_range(&g, 0, 10);
        c.p.corner_segments = (uint32_t)pm_rng_int(&g, 2, 64);
        c.p.has_center = true;
        c.p.center[0] = pm_rng_range(&g, -1e5, 1e5);
        c.p.center[1] = pm_rng_range(&g, -1e5, 1e5);
        for (size_t i = 0; i < n; i++) {
            pm_junction_arm *a = add_arm(&c, pm_rng_range(&g, 0, 360),
                                         pm_rng_chance(&g, 0.2) ? wmin : exp(pm_rng_range(&g, log(wmin), log(1000))));
            a->elevation = pm_rng_chance(&g, 0.3) ? pm_rng_range(&g, -1e4, 1e4) : 0;
            if (pm_rng_chance(&g, 0.2)) a->length = pm_rng_range(&g, wmin, 1e5);
            a->has_sidewalk = pm_rng_chance(&g, 0.3);
            a->sidewalk.width = pm_rng_range(&g, wmin, 100);
            a->sidewalk.curb_height = pm_rng_range(&g, 2 * c.p.snap, 2);
        }
        if (pm_rng_chance(&g, 0.2)) {
            double R = pm_rng_range(&g, 1, 1e4);
            set_roundabout(&c, R, R * pm_rng_range(&g, 0.01, 0.99), (uint32_t)pm_rng_int(&g, 8, 256));
        }
        jrun r = run(&c);
        cr_assert(r.rc == 0 || r.rc == PM_ERR_GEOMETRY, "case %d: rc %d", it, r.rc);
        if (r.rc == 0) {
            const char *w = check_all(&r, &c, it % 5 == 0);
            if (w && getenv("PM_JUNCTION_DUMP")) dump_case(&c);
            cr_assert_null(w, "case %d: %s", it, w);
            ok++;
        } else {
            cr_assert_gt(strlen(r.d.message), 10);
        }
        pm_arena_destroy(r.a);
    }
    fprintf(stderr, "junction extremes: %d of 1500 built\n", ok);
    cr_assert_gt(ok, 100);
}

/* pm_network's hook: open_mouths leaves exactly the end caps out, and
 * slab_ends gives each slab's cross-section at its mouths on the floats
 * the mesh has (with or without the caps). */
Test(junction, open_mouths_leave_the_caps_out_and_report_the_slab_ends) {
    jcase c;
    jcase_init(&c);
    add_arm(&c, 0, 7);
    add_arm(&c, 100, 9);
    add_arm(&c, 215, 6);
    add_arm(&c, 290, 8)->elevation = 1.5;
    set_sidewalks(&c, 2, 0.15);
    c.arms[1].sidewalk.width = 3;           /* widths blend round two corners */
    c.arms[3].has_sidewalk = false;         /* two corners without a slab */
    jrun closed = run(&c);
    c.p.open_mouths = true;
    jrun open = run(&c);
    cr_assert_eq(closed.rc, PM_OK);
    cr_assert_eq(open.rc, PM_OK);
    const pm_prim *cc = find_prim(closed.s, "curb"), *oc = find_prim(open.s, "curb");
    const pm_prim *cs = find_prim(closed.s, "sidewalk"), *os = find_prim(open.s, "sidewalk");
    /* Two slabs (the corners between arms 0-1 and 1-2), two caps each, two
     * triangles per cap; everything else the same floats. */
    cr_assert_eq(oc->icount / 3 + 2 * 2 * 2, cc->icount / 3);
    cr_assert_eq(os->vcount, cs->vcount);
    cr_assert_eq(memcmp(os->positions, cs->positions, 3 * sizeof(float) * os->vcount), 0);
    cr_assert_null(check_slab(closed.s));
    cr_assert_not_null(check_slab(open.s), "open at the mouths");
    const pm_prim *as = find_prim(open.s, "asphalt");
    const pm_meta *arms = pm_meta_get(open.s->meta, "arms");
    int present = 0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            const pm_junction_slab_end *e = &open.d.slab_ends[2 * i + k];
            cr_assert_eq(memcmp(e, &closed.d.slab_ends[2 * i + k], sizeof *e), 0);
            /* Arm 3 has no sidewalk: no slab at its mouth nor at the
             * neighbouring mouths of its corners. */
            bool want = (i == 0 && k == 0) || i == 1 || (i == 2 && k == 1);
            cr_assert_eq(e->present, want, "arm %d side %d", i, k);
            if (!e->present) continue;
            present++;
            const pm_meta *m = pm_meta_get(at(arms, (size_t)i), "mouth");
            cr_assert_eq(e->curb_vertex, (uint32_t)mnum(m, k ? "right_index" : "left_index"));
            const float *b = as->positions + 3 * e->curb_vertex;
            cr_assert(e->curb_top[0] == b[0] && e->curb_top[2] == b[2] && e->curb_top[1] > b[1]);
            cr_assert(e->outer_bottom[0] == e->outer_top[0] && e->outer_bottom[2] == e->outer_top[2] &&
                      e->outer_bottom[1] < e->outer_top[1]);
            double w = hypot((double)e->outer_top[0] - b[0], (double)e->outer_top[2] - b[2]);
            cr_assert_float_eq(w, i == 1 ? 3.0 : 2.0, 0.01, "band width at arm %d's mouth: %g", i, w);
            bool top = false, inner = false;
            for (uint32_t v = 0; v < os->vcount; v++) {
                top |= memcmp(os->positions + 3 * v, e->outer_top, sizeof e->outer_top) == 0;
                inner |= memcmp(os->positions + 3 * v, e->curb_top, sizeof e->curb_top) == 0;
            }
            cr_assert(top && inner, "the slab end's floats are the band's");
        }
    cr_assert_eq(present, 4);
    pm_arena_destroy(closed.a);
    pm_arena_destroy(open.a);
}
