/* The metadata tree: order, lookup, copying, failure propagation. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "scene/meta.h"

Test(meta, object_keeps_insertion_order) {
    pm_arena *a = pm_arena_create(0);
    pm_meta *o = pm_meta_obj(a);
    cr_assert_eq(pm_meta_set(a, o, "zeta", pm_meta_int(a, 1)), 0);
    cr_assert_eq(pm_meta_set(a, o, "alpha", pm_meta_bool(a, true)), 0);
    cr_assert_eq(pm_meta_set(a, o, "mid", pm_meta_str(a, "x")), 0);
    cr_assert_eq(o->u.kids.count, 3);
    const char *want[] = {"zeta", "alpha", "mid"};
    int i = 0;
    for (pm_meta *m = o->u.kids.first; m; m = m->next) cr_assert_str_eq(m->key, want[i++]);
    cr_assert_eq(i, 3);
    cr_assert_eq(pm_meta_get(o, "alpha")->u.b, true);
    cr_assert_eq(pm_meta_get(o, "zeta")->u.i, 1);
    cr_assert_null(pm_meta_get(o, "missing"));
    pm_arena_destroy(a);
}

Test(meta, values_and_copies) {
    pm_arena *a = pm_arena_create(0);
    char buf[] = "centre";
    pm_meta *s = pm_meta_str(a, buf);
    buf[0] = 'X';
    cr_assert_str_eq(s->u.s, "centre");
    cr_assert_eq(pm_meta_null(a)->kind, PM_META_NULL);
    cr_assert_eq(pm_meta_num(a, 2.5)->u.n, 2.5);
    cr_assert_eq(pm_meta_num(a, NAN)->kind, PM_META_NULL);
    cr_assert_eq(pm_meta_num(a, INFINITY)->kind, PM_META_NULL);
    cr_assert_eq(pm_meta_int(a, INT64_MIN)->u.i, INT64_MIN);
    pm_meta *o = pm_meta_obj(a);
    char key[] = "k";
    pm_meta_set(a, o, key, pm_meta_int(a, 5));
    key[0] = 'q';
    cr_assert_not_null(pm_meta_get(o, "k"));
    pm_arena_destroy(a);
}

Test(meta, number_arrays) {
    pm_arena *a = pm_arena_create(0);
    double v[4] = {1.5, -2, NAN, 0};
    pm_meta *arr = pm_meta_nums(a, v, 4);
    cr_assert_eq(arr->kind, PM_META_ARR);
    cr_assert_eq(arr->u.kids.count, 4);
    pm_meta *m = arr->u.kids.first;
    cr_assert_eq(m->u.n, 1.5);
    cr_assert_eq(m->next->u.n, -2.0);
    cr_assert_eq(m->next->next->kind, PM_META_NULL);
    int64_t iv[3] = {7, 8, 9};
    pm_meta *ints = pm_meta_ints(a, iv, 3);
    int64_t k = 7;
    for (pm_meta *e = ints->u.kids.first; e; e = e->next) cr_assert_eq(e->u.i, k++);
    cr_assert_eq(k, 10);
    pm_meta *empty = pm_meta_nums(a, NULL, 0);
    cr_assert_not_null(empty);
    cr_assert_eq(empty->u.kids.count, 0);
    pm_arena_destroy(a);
}

/* Literal keys are kept (not copied), every key's length is recorded,
 * and a number array made in one block takes pushes and copies like any. */
Test(meta, literal_keys_lengths_and_blocks) {
    pm_arena *a = pm_arena_create(0);
    pm_meta *o = pm_meta_obj(a);
    static const char lit[] = "position";
    cr_assert_eq(pm_meta_set_lit(o, "position", pm_meta_int(a, 1)), 0);
    cr_assert_eq(pm_meta_set(a, o, "copied", pm_meta_int(a, 2)), 0);
    cr_assert_eq(pm_meta_set_lit(NULL, "x", pm_meta_int(a, 3)), -1);
    cr_assert_eq(pm_meta_set_lit(o, "x", NULL), -1);
    cr_assert_str_eq(o->u.kids.first->key, lit);
    cr_assert_eq(o->u.kids.first->key_len, 8);
    cr_assert_eq(o->u.kids.last->key_len, 6);
    cr_assert_eq(o->u.kids.count, 2);
    double v[2] = {1, 2};
    pm_meta *arr = pm_meta_nums(a, v, 2);
    cr_assert_eq(pm_meta_push(arr, pm_meta_num(a, 3)), 0);
    cr_assert_eq(arr->u.kids.count, 3);
    cr_assert_eq(arr->u.kids.last->u.n, 3.0);
    double want = 1;
    for (pm_meta *m = arr->u.kids.first; m; m = m->next) cr_assert_eq(m->u.n, want++);
    cr_assert_eq(pm_meta_set_lit(o, "arr", arr), 0);
    pm_meta *c = pm_meta_copy(a, o);
    cr_assert_eq(pm_meta_get(c, "arr")->u.kids.count, 3);
    cr_assert_eq(pm_meta_get(c, "arr")->key_len, 3);
    cr_assert_eq(pm_meta_get(c, "position")->key_len, 8);
    pm_arena_destroy(a);
}

Test(meta, nesting) {
    pm_arena *a = pm_arena_create(0);
    pm_meta *root = pm_meta_obj(a), *arms = pm_meta_arr(a);
    for (int i = 0; i < 3; i++) {
        pm_meta *arm = pm_meta_obj(a);
        pm_meta_set(a, arm, "index", pm_meta_int(a, i));
        cr_assert_eq(pm_meta_push(arms, arm), 0);
    }
    cr_assert_eq(pm_meta_set(a, root, "arms", arms), 0);
    pm_meta *got = pm_meta_get(root, "arms");
    cr_assert_eq(got->u.kids.count, 3);
    cr_assert_eq(pm_meta_get(got->u.kids.last, "index")->u.i, 2);
    pm_arena_destroy(a);
}

/* NULL values (a failed constructor) and wrong container kinds give -1, so
 * a generator can check once at the end. */
Test(meta, failures_propagate) {
    pm_arena *a = pm_arena_create(0);
    pm_meta *o = pm_meta_obj(a), *arr = pm_meta_arr(a);
    cr_assert_eq(pm_meta_set(a, o, "x", NULL), -1);
    cr_assert_eq(pm_meta_push(arr, NULL), -1);
    cr_assert_eq(pm_meta_push(NULL, pm_meta_int(a, 1)), -1);
    cr_assert_eq(pm_meta_set(a, NULL, "x", pm_meta_int(a, 1)), -1);
    cr_assert_eq(pm_meta_push(o, pm_meta_int(a, 1)), -1, "push onto an object");
    cr_assert_eq(pm_meta_set(a, arr, "x", pm_meta_int(a, 1)), -1, "set on an array");
    cr_assert_null(pm_meta_get(arr, "x"));
    cr_assert_null(pm_meta_get(NULL, "x"));
    cr_assert_eq(o->u.kids.count, 0);
    cr_assert_eq(arr->u.kids.count, 0);
    pm_arena_destroy(a);
}

Test(meta, out_of_memory_gives_null) {
    pm_arena *a = pm_arena_create(1024);
    pm_arena_set_limit(a, 4096);
    pm_meta *arr = pm_meta_arr(a);
    cr_assert_not_null(arr);
    int r = 0;
    for (int i = 0; i < 10000 && r == 0; i++) r = pm_meta_push(arr, pm_meta_num(a, i));
    cr_assert_eq(r, -1);
    double v[1000];
    for (int i = 0; i < 1000; i++) v[i] = i;
    cr_assert_null(pm_meta_nums(a, v, 1000));
    cr_assert_null(pm_meta_str(a, "no room"));
    pm_arena_destroy(a);
}
