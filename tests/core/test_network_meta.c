/* A junction's corners as a table (core/network/network_meta.c,
 * pm__corners_table): the network writes each node's corners from rows
 * instead of the junction's tree of objects. The table must stand for
 * exactly that tree (its plain copy, pm_meta_copy, equal to it member by
 * member), and any corner that is not exactly the junction's shape (a
 * member missing, moved, of another kind, an extra one, arms out of range)
 * must leave the tree as it was. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "network/network_internal.h"
#include "pm_test_scene.h"
#include "scene/meta.h"

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static const char *const kinds[] = {"fillet", "straight", "ring", "links", "other"};

/* A corner as core/junction writes it; with mutate > 0 one thing about it
 * differs from that shape (the table must then not be made). Keys are the
 * literals or, at random, copies (other addresses). */
static pm_meta *corner(pm_arena *a, uint64_t *s, int mutate) {
    uint64_t x = next(s);
    pm_meta *o = pm_meta_obj(a);
    bool copy = x & 1;
#define SET(key, v) (copy ? pm_meta_set(a, o, key, (v)) : pm_meta_set_lit(o, key, (v)))
    int64_t arms[3] = {(int64_t)(next(s) % 6), (int64_t)(next(s) % 6), 1};
    if (mutate == 1) arms[x >> 8 & 1] = x & 2 ? -1 : (int64_t)UINT32_MAX + 1;
    int rc = 0;
    if (mutate != 2) rc |= SET("arms", pm_meta_ints(a, arms, mutate == 3 ? 3 : 2));
    if (mutate == 4) rc |= SET("kind", pm_meta_int(a, 1));
    else rc |= SET("kind", pm_meta_str(a, kinds[(x >> 4) % 5]));
    double v[3] = {(double)(int64_t)(next(s) % 721) / 4, (double)(next(s) % 50) / 8, (double)(next(s) % 1000) / 3};
    rc |= SET("angle", pm_meta_num(a, mutate == 5 ? NAN : v[0]));
    if (mutate == 6) rc |= SET("radius", pm_meta_num(a, v[2]));   /* before requested_radius */
    rc |= SET("requested_radius", pm_meta_num(a, v[1]));
    if (mutate != 6) rc |= SET("radius", pm_meta_num(a, v[2]));
    if ((x >> 12) & 1) {
        double p[2] = {(double)(int64_t)(next(s) % 2001 - 1000) / 2, -0.0};
        rc |= SET("point", pm_meta_nums(a, p, 2));
    }
    if (mutate == 7) rc |= SET("point", pm_meta_null(a));
    rc |= SET("sidewalk", mutate == 8 ? pm_meta_int(a, 0) : pm_meta_bool(a, (x >> 13) & 1));
    if (mutate == 9) rc |= SET("extra", pm_meta_bool(a, true));
#undef SET
    cr_assert_eq(rc, 0);
    return o;
}

Test(network_meta, corners_table_is_the_junctions_tree_or_the_tree_itself) {
    uint64_t s = 0x510e527fade682d1ull;
    int made = 0, kept = 0;
    for (int t = 0; t < 4000; t++) {
        pm_arena *a = pm_arena_create(0);
        pm_meta *corners = pm_meta_arr(a);
        size_t n = next(&s) % 7;
        /* half the arrays have one corner that is not of the shape */
        int bad = next(&s) % 2 ? 1 + (int)(next(&s) % 9) : 0;
        size_t at = n ? next(&s) % n : 0;
        for (size_t i = 0; i < n; i++) cr_assert_eq(pm_meta_push(corners, corner(a, &s, i == at ? bad : 0)), 0);
        const pm_meta *before = pm_meta_copy(a, corners);
        pm_meta *t2 = pm__corners_table(a, corners);
        cr_assert_not_null(t2);
        if (bad || n == 0) {
            cr_assert_eq(t2, corners, "case %d: a corner off the shape (%d) or none must keep the tree", t, bad);
            cr_assert(pm_test_meta_same(a, corners, before));
            kept++;
        } else {
            cr_assert_eq(t2->kind, PM_META_TABLE, "case %d: %zu plain corners must make a table", t, n);
            cr_assert_eq(t2->u.table.n, n);
            made++;
        }
        cr_assert(pm_test_meta_same(a, pm_meta_copy(a, t2), before), "case %d: the table's copy differs from the tree", t);
        pm_arena_destroy(a);
    }
    cr_assert(made > 1000 && kept > 1000, "made %d, kept %d", made, kept);
}
