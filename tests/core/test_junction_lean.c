/* Lean junction metadata (pm_junction_params.lean_meta, what pm_network
 * asks for) against the full build of the same random arm sets: the same
 * result code and diagnostics, byte-identical primitives, "corners" and
 * "warnings" equal node for node, and diag->mouths equal to the full
 * metadata's "arms"[i]."mouth" (which the network used to read). */
#include <criterion/criterion.h>
#include <string.h>

#include "junction/junction.h"
#include "scene/meta.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_test_junction.h"
#include "pm_test_scene.h"

static bool floats_same(const float *a, const float *b, size_t n) {
    if (!a || !b) return a == b;
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void same_prims(const pm_scene *x, const pm_scene *y) {
    cr_assert_eq(x->nprims, y->nprims);
    for (uint32_t i = 0; i < x->nprims; i++) {
        const pm_prim *p = &x->prims[i], *q = &y->prims[i];
        cr_assert_str_eq(p->name, q->name);
        cr_assert_eq(p->vcount, q->vcount);
        cr_assert_eq(p->icount, q->icount);
        cr_assert(floats_same(p->positions, q->positions, 3 * (size_t)p->vcount));
        cr_assert(floats_same(p->normals, q->normals, 3 * (size_t)p->vcount));
        cr_assert(floats_same(p->uvs, q->uvs, 2 * (size_t)p->vcount));
        cr_assert_eq(memcmp(p->indices, q->indices, p->icount * sizeof *p->indices), 0);
    }
}

Test(junction_lean, matches_the_full_build_on_random_arm_sets) {
    pm_rng g;
    pm_rng_seed(&g, 0x1ea9);
    size_t ok = 0, failed = 0, warned = 0;
    for (int it = 0; it < 3000; it++) {
        jcase c;
        random_case(&g, &c);
        c.p.open_mouths = pm_rng_chance(&g, 0.5);
        c.p.no_normals = pm_rng_chance(&g, 0.5);
        c.p.drop_tight_sidewalks = pm_rng_chance(&g, 0.5);
        jrun full = run(&c);
        c.p.lean_meta = true;
        jrun lean = run(&c);
        cr_assert_eq(full.rc, lean.rc, "case %d", it);
        cr_assert_eq(full.d.error, lean.d.error);
        cr_assert_str_eq(full.d.message, lean.d.message);
        cr_assert_eq(full.d.nwarnings, lean.d.nwarnings);
        if (full.rc != PM_OK) {
            failed++;
        } else {
            ok++;
            warned += full.d.nwarnings > 0;
            same_prims(full.s, lean.s);
            const pm_meta *m = lean.s->meta;
            cr_assert_eq(m->u.kids.count, 2, "lean metadata: corners and warnings only");
            cr_assert(pm_test_meta_same(lean.a, pm_meta_get(m, "corners"), pm_meta_get(full.s->meta, "corners")), "case %d", it);
            cr_assert(pm_test_meta_same(lean.a, pm_meta_get(m, "warnings"), pm_meta_get(full.s->meta, "warnings")), "case %d", it);
            cr_assert_not_null(lean.d.mouths);
            const pm_meta *arms = pm_meta_get(full.s->meta, "arms");
            for (size_t i = 0; i < c.p.narms; i++) {
                const pm_meta *mo = pm_meta_get(at(arms, i), "mouth");
                const pm_junction_mouth *d = &lean.d.mouths[i], *f = &full.d.mouths[i];
                cr_assert_eq(d->left_index, (uint32_t)pm_meta_get(mo, "left_index")->u.i, "case %d arm %zu", it, i);
                cr_assert_eq(d->right_index, (uint32_t)pm_meta_get(mo, "right_index")->u.i);
                cr_assert(memcmp(&d->distance, &pm_meta_get(mo, "distance")->u.n, sizeof(double)) == 0);
                cr_assert(memcmp(d, f, sizeof *d) == 0, "the full build gives the same mouths");
            }
            if (full.d.slab_ends) {
                cr_assert_not_null(lean.d.slab_ends);
                cr_assert_eq(memcmp(full.d.slab_ends, lean.d.slab_ends, 2 * c.p.narms * sizeof *full.d.slab_ends), 0);
            }
        }
        pm_arena_destroy(full.a);
        pm_arena_destroy(lean.a);
    }
    /* The random sets reach both outcomes and warnings. */
    cr_assert_gt(ok, 1000);
    cr_assert_gt(failed, 10);
    cr_assert_gt(warned, 50);
}
