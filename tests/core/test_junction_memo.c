/* The junction memo (pm_junction_memo: arm angles and fillet arcs kept by
 * their inputs' bits, core/junction/junction.c and junction_contour.c)
 * against the generator without one: families of junctions alike but not
 * equal (a random junction, its arms' directions moved by a few ulps, now
 * and then a width, sidewalk or room changed, as a turned town's
 * junctions differ), each family built in turn with one memo shared by
 * all its members, and each member built again without a memo: the same
 * result code, diagnostics, warnings, slab ends and bytes once encoded as
 * the JSON mesh (metadata included). The memo must have been used: fewer
 * arcs kept than asked for. */
#include <criterion/criterion.h>
#include <stdbool.h>

#include "junction/junction_internal.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "scene/rng.h"
#include "pm_test_junction.h"

/* x moved by k ulps (k in -2..2). */
static double nudge(double x, int k) {
    for (; k > 0; k--) x = nextafter(x, INFINITY);
    for (; k < 0; k++) x = nextafter(x, -INFINITY);
    return x;
}

/* A network's junction: three or four arms at right angles (or nearly),
 * turned. */
static void turned_cross(pm_rng *g, jcase *c) {
    jcase_init(c);
    double t = pm_rng_range(g, 0, 360), w = pm_rng_chance(g, 0.5) ? 7 : pm_rng_range(g, 3, 14);
    size_t n = pm_rng_chance(g, 0.7) ? 4 : 3;
    for (size_t i = 0; i < n; i++) add_arm(c, t + 90.0 * (double)i + (pm_rng_chance(g, 0.3) ? pm_rng_range(g, -8, 8) : 0), w);
    c->p.has_center = true;
    c->p.corner_radius = pm_rng_chance(g, 0.2) ? pm_rng_range(g, 0, 12) : 3;
    c->p.corner_segments = (uint32_t)pm_rng_int(g, 2, 8);
    if (pm_rng_chance(g, 0.5)) set_sidewalks(c, pm_rng_range(g, 0.5, 4), 0.15);
    for (size_t i = 0; i < n; i++)
        if (pm_rng_chance(g, 0.3)) c->arms[i].length = pm_rng_range(g, 5, 60);
}

/* Member of base's family: each direction component moved by a few ulps;
 * now and then one arm's width, sidewalk width or room changed, or for
 * every arm the sidewalks' widths or curb heights, the fillets' point
 * count or the snap (arcs alike but for one argument), or the junction
 * mirrored (arm directions alike but for one component's sign). */
static void member(pm_rng *g, const jcase *base, jcase *c) {
    *c = *base;
    c->p.arms = c->arms;
    bool mirror = pm_rng_chance(g, 0.1);
    for (size_t i = 0; i < c->p.narms; i++) {
        pm_junction_arm *a = &c->arms[i];
        if (a->centerline) a->centerline = c->lines[i];
        for (int k = 0; k < 2; k++)
            if (pm_rng_chance(g, 0.3)) a->direction[k] = nudge(a->direction[k], (int)pm_rng_int(g, -2, 2));
        if (mirror) {
            a->direction[0] = -a->direction[0];
            for (size_t j = 0; a->centerline && j < a->centerline_len; j++) c->lines[i][2 * j] = -c->lines[i][2 * j];
        }
    }
    if (pm_rng_chance(g, 0.15)) {
        pm_junction_arm *a = &c->arms[pm_rng_below(g, c->p.narms)];
        int what = (int)pm_rng_below(g, 3);
        if (what == 0) a->width = nudge(a->width, 1);
        else if (what == 1 && a->has_sidewalk) a->sidewalk.width = nudge(a->sidewalk.width, -1);
        else if (a->length > 0) a->length = nudge(a->length, 1);
    }
    int what = (int)pm_rng_below(g, 12);
    double sw = pm_rng_range(g, 0.5, 4), ch = pm_rng_range(g, 0.05, 0.3);
    for (size_t i = 0; i < c->p.narms; i++) {
        if (what == 0) c->arms[i].sidewalk.width = sw;
        if (what == 1) c->arms[i].sidewalk.curb_height = ch;
    }
    if (what == 2) c->p.corner_segments = (uint32_t)pm_rng_int(g, 2, 8);
    if (what == 3) c->p.snap = c->p.snap == 0.001 ? 0.0005 : 0.001;
}

static bool same_floats(const float *a, const float *b, size_t n) {
    if (!a || !b) return a == b;
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* x and y (built with and without the memo) alike, metadata included. */
static void same_builds(const jrun *x, const jrun *y, size_t narms, int fam, int it) {
    cr_assert_eq(x->rc, y->rc, "family %d member %d: rc %d, plain %d", fam, it, x->rc, y->rc);
    cr_assert_eq(x->d.error, y->d.error, "family %d member %d", fam, it);
    cr_assert_str_eq(x->d.message, y->d.message, "family %d member %d", fam, it);
    cr_assert_eq(x->d.nwarnings, y->d.nwarnings, "family %d member %d", fam, it);
    for (size_t k = 0; k < x->d.nwarnings; k++)
        cr_assert_str_eq(x->d.warnings[k].message, y->d.warnings[k].message, "family %d member %d", fam, it);
    if (x->rc != PM_OK) return;
    cr_assert_eq(x->s->nprims, y->s->nprims);
    for (uint32_t i = 0; i < x->s->nprims; i++) {
        const pm_prim *p = &x->s->prims[i], *q = &y->s->prims[i];
        cr_assert_eq(p->vcount, q->vcount, "family %d member %d prim %u", fam, it, i);
        cr_assert_eq(p->icount, q->icount, "family %d member %d prim %u", fam, it, i);
        cr_assert(same_floats(p->positions, q->positions, 3 * (size_t)p->vcount), "family %d member %d", fam, it);
        cr_assert(same_floats(p->uvs, q->uvs, 2 * (size_t)p->vcount), "family %d member %d", fam, it);
        cr_assert_eq(memcmp(p->indices, q->indices, p->icount * sizeof *p->indices), 0, "family %d member %d", fam, it);
    }
    cr_assert_eq(!x->d.slab_ends, !y->d.slab_ends);
    if (x->d.slab_ends)
        cr_assert_eq(memcmp(x->d.slab_ends, y->d.slab_ends, 2 * narms * sizeof *x->d.slab_ends), 0);
    pm_api_buf jx = {0}, jy = {0};
    const pm_api_generator *gen = pm_api_find_generator("/v1/junctions");
    cr_assert(gen);
    cr_assert_eq(pm_api_encode(x->s, gen, NULL, PM_API_FMT_JSON, &jx), 0);
    cr_assert_eq(pm_api_encode(y->s, gen, NULL, PM_API_FMT_JSON, &jy), 0);
    cr_assert(jx.len == jy.len && memcmp(jx.data, jy.data, jx.len) == 0,
              "family %d member %d: the JSON meshes differ", fam, it);
    free(jx.data);
    free(jy.data);
}

/* Fillet arcs the memo was asked for: corners of kind fillet with a
 * radius, from the metadata. */
static size_t fillets(const pm_scene *s) {
    const pm_meta *corners = pm_meta_get(s->meta, "corners");
    size_t n = 0;
    for (const pm_meta *c = corners ? corners->u.kids.first : NULL; c; c = c->next) {
        const pm_meta *k = pm_meta_get(c, "kind"), *r = pm_meta_get(c, "radius");
        n += k && strcmp(k->u.s, "fillet") == 0 && r && r->kind == PM_META_NUM && r->u.n > 0;
    }
    return n;
}

Test(junction_memo, families_build_alike_with_and_without_a_memo, .timeout = 300) {
    pm_rng g;
    pm_rng_seed(&g, 0x3e30);
    size_t ok = 0, failed = 0, asked = 0, kept = 0;
    for (int fam = 0; fam < 400; fam++) {
        jcase base;
        if (fam % 2) random_case(&g, &base);
        else turned_cross(&g, &base);
        bool lean = pm_rng_chance(&g, 0.5);
        pm_arena *ma = pm_arena_create(0);
        pm_junction_memo *memo = pm_junction_memo_create(ma);
        cr_assert(memo);
        size_t fam_asked = 0;
        for (int it = 0; it < 16; it++) {
            jcase c;
            member(&g, &base, &c);
            c.p.lean_meta = lean;
            c.p.memo = memo;
            jrun with = run(&c);
            c.p.memo = NULL;
            jrun plain = run(&c);
            same_builds(&with, &plain, c.p.narms, fam, it);
            if (with.rc == PM_OK && !c.p.has_roundabout) fam_asked += fillets(with.s);
            ok += with.rc == PM_OK;
            failed += with.rc != PM_OK;
            pm_arena_destroy(with.a);
            pm_arena_destroy(plain.a);
        }
        if (!base.p.has_roundabout) {
            asked += fam_asked;
            kept += memo->narcs;
        }
        pm_arena_destroy(ma);
    }
    cr_log_info("built %zu, failed %zu; fillet arcs %zu, kept %zu", ok, failed, asked, kept);
    cr_assert_gt(ok, 3000);
    cr_assert_gt(failed, 10);
    cr_assert_gt(asked, 10000);
    cr_assert_lt(kept, asked * 2 / 3, "the memo kept %zu arcs of %zu", kept, asked);
}

/* The memo keeps at most PM__MEMO_ARCS arcs (past that it only looks
 * up): each random junction built twice with it, so that half the arcs
 * are found and it stays on. */
Test(junction_memo, full_memo_still_builds_alike) {
    pm_rng g;
    pm_rng_seed(&g, 0x3e31);
    pm_arena *ma = pm_arena_create(0);
    pm_junction_memo *memo = pm_junction_memo_create(ma);
    cr_assert(memo);
    size_t built = 0;
    for (int it = 0; memo->narcs < PM__MEMO_ARCS || it < 3000; it++) {
        jcase c;
        turned_cross(&g, &c);
        c.p.memo = NULL;
        jrun plain = run(&c);
        for (int twice = 0; twice < 2; twice++) {
            c.p.memo = memo;
            jrun with = run(&c);
            same_builds(&with, &plain, c.p.narms, 0, it);
            built += with.rc == PM_OK;
            pm_arena_destroy(with.a);
        }
        pm_arena_destroy(plain.a);
        cr_assert_lt(it, 20000);
    }
    cr_assert_eq(memo->narcs, PM__MEMO_ARCS);
    cr_assert_gt(memo->looked, PM__MEMO_ARCS);
    cr_assert_gt(built, 2000);
    pm_arena_destroy(ma);
}

/* Junctions that share no arc: after its trial the memo is left out
 * (nothing more looked up or kept), and the builds stay alike. */
Test(junction_memo, memo_left_out_where_nothing_repeats) {
    pm_rng g;
    pm_rng_seed(&g, 0x3e32);
    pm_arena *ma = pm_arena_create(0);
    pm_junction_memo *memo = pm_junction_memo_create(ma);
    cr_assert(memo);
    for (int it = 0; it < 1500; it++) {
        jcase c;
        turned_cross(&g, &c);
        c.p.memo = memo;
        jrun with = run(&c);
        c.p.memo = NULL;
        jrun plain = run(&c);
        same_builds(&with, &plain, c.p.narms, 0, it);
        pm_arena_destroy(with.a);
        pm_arena_destroy(plain.a);
    }
    cr_assert_eq(memo->looked, PM__MEMO_TRIAL, "%zu arcs looked up", memo->looked);
    cr_assert_lt(memo->found * PM__MEMO_RARE, memo->looked);
    cr_assert_eq(memo->narcs, memo->looked - memo->found);
    pm_arena_destroy(ma);
}
