/* The metadata writer (pm_api__w_meta) against a plain reference written
 * here: byte by byte escaping, the reference number printer, no key cache.
 * The writer copies plain strings a word at a time, keeps keys' and
 * strings' quoted text by address, prints short decimals from their
 * integer and writes tables (scene/meta.h) from their rows' C types; none
 * of that may change a byte: a tree with tables is written as the plain
 * tree pm_meta_copy makes of it, which the reference writes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/encode_writer.h"
#include "pm_test_jsontext.h"
#include "scene/meta.h"

static void put_ref(pm_test_text *r, const pm_meta *m) {
    char t[48];
    switch (m->kind) {
    case PM_META_NULL: pm_test_put(r, "null", 4); break;
    case PM_META_BOOL: pm_test_put(r, m->u.b ? "true" : "false", m->u.b ? 4 : 5); break;
    case PM_META_INT: pm_test_put(r, t, (size_t)snprintf(t, sizeof t, "%lld", (long long)m->u.i)); break;
    case PM_META_NUM: pm_test_put(r, t, (size_t)pm_api__fmt_f64_ref(t, m->u.n)); break;
    case PM_META_STR: pm_test_put_str(r, m->u.s, strlen(m->u.s)); break;
    default: {
        cr_assert(m->kind == PM_META_OBJ || m->kind == PM_META_ARR, "kind %d in a plain copy", (int)m->kind);
        bool obj = m->kind == PM_META_OBJ;
        pm_test_put(r, obj ? "{" : "[", 1);
        for (const pm_meta *k = m->u.kids.first; k; k = k->next) {
            if (k != m->u.kids.first) pm_test_put(r, ",", 1);
            if (obj) {
                pm_test_put_str(r, k->key, k->key_len);
                pm_test_put(r, ":", 1);
            }
            put_ref(r, k);
        }
        pm_test_put(r, obj ? "}" : "]", 1);
    }
    }
}

static void expect_text(const pm_meta *m, const pm_test_text *r) {
    pm_api__w w;
    pm_api__w_init(&w, 16);
    pm_api__w_meta(&w, m);
    cr_assert(!w.oom);
    cr_assert_eq(w.len, r->len, "lengths %zu and %zu", w.len, r->len);
    cr_assert(memcmp(w.data, r->s, r->len) == 0, "%.*s\n%.*s", (int)w.len, w.data, (int)r->len, r->s);
    pm_api__w_free(&w);
}

/* m, and the plain copy of m (its tables made arrays of objects), both
 * written as the reference writes the copy. */
static void expect_same(const pm_meta *m) {
    pm_arena *a = pm_arena_create(0);
    const pm_meta *plain = pm_meta_copy(a, m);
    cr_assert_not_null(plain);
    pm_test_text r = {0};
    put_ref(&r, plain);
    expect_text(plain, &r);
    expect_text(m, &r);
    free(r.s);
    pm_arena_destroy(a);
}

/* m and its plain copy written in summary mode: the same text. */
static void expect_same_summary(const pm_meta *m, const pm_meta *plain, const pm_api_generator *gen) {
    pm_api__w w1, w2;
    pm_api__w_init(&w1, 16);
    pm_api__w_init(&w2, 16);
    pm_api__w_meta_mode(&w1, m, gen, PM_API_META_SUMMARY);
    pm_api__w_meta_mode(&w2, plain, gen, PM_API_META_SUMMARY);
    cr_assert(!w1.oom && !w2.oom);
    cr_assert(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0, "%.*s\n%.*s", (int)w1.len, w1.data,
              (int)w2.len, w2.data);
    pm_api__w_free(&w1);
    pm_api__w_free(&w2);
}

/* Strings of 0 to 40 bytes, plain or with one byte to escape at each
 * place: the word-at-a-time copy and its overlapping tail. */
Test(meta_writer, strings_with_an_escape_anywhere) {
    pm_arena *a = pm_arena_create(0);
    const char bad[] = {'"', '\\', '\n', 0x01, 0x1f};
    for (size_t n = 0; n <= 40; n++) {
        for (size_t at = 0; at <= n; at++) {   /* at == n: plain */
            for (size_t b = 0; b < (at < n ? sizeof bad : 1); b++) {
                char s[48];
                for (size_t i = 0; i < n; i++) s[i] = (char)('a' + i % 26);
                if (at < n) s[at] = bad[b];
                s[n] = '\0';
                pm_meta *o = pm_meta_obj(a);
                cr_assert_eq(pm_meta_set(a, o, s, pm_meta_str(a, s)), 0);
                cr_assert_eq(pm_meta_set_lit(o, "v", pm_meta_str(a, s)), 0);
                expect_same(o);
            }
        }
    }
    pm_arena_destroy(a);
}

static const char *const lits[] = {"id", "index", "kind", "position", "edges", "left_index",
                                   "a_key_of_exactly_28_bytes_xx", "a key longer than the cache keeps, 40 b",
                                   "q\"uote", "", "x"};

/* A random tree: objects whose keys are literals repeated at the same
 * address (cached), copies (new addresses each time), keys that need
 * escapes or are too long to cache, and every scalar kind. */
static pm_meta *random_table(pm_arena *a, uint64_t *s, int depth);
static pm_meta *random_rows(pm_arena *a, uint64_t *s, int depth, const pm_meta_shape *sh, size_t nrows);

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static pm_meta *random_tree(pm_arena *a, uint64_t *s, int depth) {
    uint64_t x = next(s);
    int kind = depth >= 4 ? (int)(x % 5) : (int)(x % 9);
    switch (kind) {
    case 7: return random_table(a, s, depth + 1);
    case 8: { /* a string shared by address with other nodes (cached text) */
        pm_meta *m = pm_meta_null(a);
        m->kind = PM_META_STR;
        m->u.s = lits[(x >> 10) % 11];
        return m;
    }
    case 0: /* every magnitude: 1 to 19 digits, both signs, INT64_MIN */
        return pm_meta_int(a, x % 97 == 0 ? INT64_MIN : (int64_t)(x ^ (x << 32)) >> (x % 64));
    case 1: return pm_meta_num(a, (double)((int64_t)(x >> 8) % 200001 - 100000) / (double)(1 + (x >> 40) % 1000));
    case 2: return pm_meta_num(a, (double)(int32_t)(x >> 16) * 0.5);
    case 3: return pm_meta_bool(a, x & 256);
    case 4: return (x >> 9) & 1 ? pm_meta_str(a, lits[(x >> 10) % 11]) : pm_meta_null(a);
    default: {
        pm_meta *c = kind == 5 ? pm_meta_obj(a) : pm_meta_arr(a);
        int n = (int)((x >> 20) % 12);
        for (int i = 0; i < n; i++) {
            pm_meta *v = random_tree(a, s, depth + 1);
            if (kind == 6) {
                cr_assert_eq(pm_meta_push(c, v), 0);
                continue;
            }
            size_t k = (x >> (24 + i)) % 11;
            bool copy = (x >> (40 + i)) & 1;
            int rc = copy ? pm_meta_set(a, c, lits[k], v) : pm_meta_set_keyn(c, lits[k], strlen(lits[k]), v);
            cr_assert_eq(rc, 0);
        }
        return c;
    }
    }
}

/* ---- tables ---- */

typedef struct trow {
    int64_t i64;
    uint32_t u32;
    double f64;
    bool b;
    const char *str;
    pm_meta_val val;
    uint32_t u2[2];
    double f3[3];
    pm_meta_u32s us;
    pm_meta_bools bs;
    const pm_meta *meta;
} trow;

static const pm_meta_col_kind col_kinds[] = {
    PM_META_COL_I64, PM_META_COL_U32, PM_META_COL_F64, PM_META_COL_BOOL, PM_META_COL_STR, PM_META_COL_VAL,
    PM_META_COL_U32X2, PM_META_COL_F64X3, PM_META_COL_U32S, PM_META_COL_BOOLS, PM_META_COL_META};
static const size_t col_offsets[] = {
    offsetof(trow, i64), offsetof(trow, u32), offsetof(trow, f64), offsetof(trow, b), offsetof(trow, str),
    offsetof(trow, val), offsetof(trow, u2), offsetof(trow, f3), offsetof(trow, us), offsetof(trow, bs),
    offsetof(trow, meta)};

/* Numbers of every shape the printer tells apart: short decimals, long
 * ones, integers, huge, tiny, -0 and the non-finite (written null). */
static double random_double(uint64_t x) {
    switch (x % 8) {
    case 0: return (double)((int64_t)(x >> 8) % 2000001 - 1000000) / 10.0;
    case 1: return (double)((int64_t)(x >> 8) % 200001 - 100000) / (double)(1 + (x >> 40) % 1000);
    case 2: return (double)(int32_t)(x >> 16);
    case 3: return x & 512 ? 1e300 * (double)(x >> 50) : 1e-300 / (double)(1 + (x >> 50));
    case 4: return x & 512 ? -0.0 : 0.0;
    case 5: return x & 512 ? NAN : (x & 1024 ? INFINITY : -INFINITY);
    default: return (double)(x >> 11) * 0x1p-40;
    }
}

static void random_val(pm_meta_val *v, uint64_t x) {
    v->kind = (pm_meta_kind)(x % 5);
    switch (v->kind) {
    case PM_META_BOOL: v->u.b = (x >> 8) & 1; break;
    case PM_META_INT: v->u.i = (int64_t)(x ^ (x << 29)) >> ((x >> 8) % 64); break;
    case PM_META_NUM: v->u.n = random_double(x >> 3); break;
    case PM_META_STR: v->u.s = (x >> 8) % 12 == 11 ? NULL : lits[(x >> 8) % 12]; break;
    default: break;
    }
}

/* A table of 0 to 6 rows under a random shape of 0 to 20 columns (past
 * the writer's PM_API__TABLE_KEYS of kept keys), keys repeated, escaped
 * or too long to keep; META members absent (NULL) or any tree, tables
 * inside tables included. */
static pm_meta *random_table(pm_arena *a, uint64_t *s, int depth) {
    uint64_t x = next(s);
    size_t ncols = x % 21, nrows = (x >> 8) % 7;
    pm_meta_col *cols = pm_arena_alloc(a, (ncols ? ncols : 1) * sizeof *cols);
    for (size_t c = 0; c < ncols; c++) {
        uint64_t y = next(s);
        const char *key = lits[y % 11];
        size_t k = (y >> 8) % 11;
        cols[c] = (pm_meta_col){key, (uint32_t)strlen(key), col_kinds[k], col_offsets[k]};
    }
    pm_meta_shape *sh = pm_arena_alloc(a, sizeof *sh);
    *sh = (pm_meta_shape){cols, ncols, sizeof(trow)};
    return random_rows(a, s, depth, sh, nrows);
}

static pm_meta *random_rows(pm_arena *a, uint64_t *s, int depth, const pm_meta_shape *sh, size_t nrows) {
    trow *rows = pm_arena_alloc(a, (nrows ? nrows : 1) * sizeof *rows);
    for (size_t r = 0; r < nrows; r++) {
        trow *t = &rows[r];
        uint64_t y = next(s), z = next(s);
        t->i64 = y % 97 == 0 ? INT64_MIN : (int64_t)(y ^ (y << 32)) >> (y % 64);
        t->u32 = (uint32_t)(z >> (z % 32));
        t->f64 = random_double(next(s));
        t->b = z & 1;
        t->str = (z >> 4) % 12 == 11 ? NULL : lits[(z >> 4) % 12];
        random_val(&t->val, next(s));
        t->u2[0] = (uint32_t)next(s), t->u2[1] = (uint32_t)(next(s) >> 40);
        for (int i = 0; i < 3; i++) t->f3[i] = random_double(next(s));
        size_t nu = next(s) % 9, nb = next(s) % 5;
        uint32_t *u = pm_arena_alloc(a, (nu + 1) * sizeof *u);
        bool *b = pm_arena_alloc(a, (nb + 1) * sizeof *b);
        for (size_t i = 0; i < nu; i++) u[i] = (uint32_t)(next(s) >> (next(s) % 32));
        for (size_t i = 0; i < nb; i++) b[i] = next(s) & 1;
        t->us = (pm_meta_u32s){u, nu};
        t->bs = (pm_meta_bools){b, nb};
        t->meta = next(s) % 3 == 0 ? NULL : random_tree(a, s, depth + 1);
    }
    pm_meta *m = pm_meta_table(a, sh, rows, nrows);
    cr_assert_not_null(m);
    return m;
}

Test(meta_writer, tables_write_as_their_plain_copy) {
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (int t = 0; t < 3000; t++) {
        pm_arena *a = pm_arena_create(0);
        pm_meta *root = pm_meta_obj(a);
        cr_assert_eq(pm_meta_set_lit(root, "t", random_table(a, &s, 0)), 0);
        cr_assert_eq(pm_meta_set_lit(root, "u", random_tree(a, &s, 1)), 0);
        expect_same(root);
        expect_same(root->u.kids.first);   /* a table at the top */
        pm_arena_destroy(a);
    }
}

/* Many tables of one shape (as a network's mouths, one table per node,
 * inside the rows of a table with a META column, and one after another):
 * the writer plans such a shape once and writes every later table of it
 * from that plan, with and without columns skipped by summary. */
Test(meta_writer, tables_of_one_shape_match_the_reference) {
    uint64_t s = 0x6a09e667f3bcc908ull;
    static const pm_meta_col outer_cols[] = {PM_META_COL("i", I64, trow, i64), PM_META_COL("m", META, trow, meta),
                                             PM_META_COL("s", STR, trow, str)};
    static const pm_meta_shape outer = {outer_cols, 3, sizeof(trow)};
    static const char *const omit[] = {"t[].m.x", NULL};
    const pm_api_generator gen = {.name = "test", .summary_omit = omit};
    for (int t = 0; t < 400; t++) {
        pm_arena *a = pm_arena_create(0);
        /* the shared shape: no META column (a plan kept across tables) */
        uint64_t x = next(&s);
        size_t ncols = 1 + x % 12;
        pm_meta_col *cols = pm_arena_alloc(a, ncols * sizeof *cols);
        for (size_t c = 0; c < ncols; c++) {
            uint64_t y = next(&s);
            const char *key = t % 4 == 0 ? lits[y % 11] : lits[y % 6];   /* mostly plain, short keys */
            size_t k = (y >> 8) % 10;
            cols[c] = (pm_meta_col){key, (uint32_t)strlen(key), col_kinds[k], col_offsets[k]};
        }
        if (t % 3 == 0) cols[0] = (pm_meta_col){"x", 1, PM_META_COL_U32, offsetof(trow, u32)};
        pm_meta_shape *sh = pm_arena_alloc(a, sizeof *sh);
        *sh = (pm_meta_shape){cols, ncols, sizeof(trow)};
        size_t nouter = 1 + next(&s) % 6;
        trow *orows = pm_arena_alloc(a, nouter * sizeof *orows);
        for (size_t r = 0; r < nouter; r++)
            orows[r] = (trow){.i64 = (int64_t)r, .str = lits[next(&s) % 11],
                              .meta = next(&s) % 4 ? random_rows(a, &s, 2, sh, next(&s) % 5) : NULL};
        pm_meta *root = pm_meta_obj(a), *list = pm_meta_arr(a);
        cr_assert_eq(pm_meta_set_lit(root, "t", pm_meta_table(a, &outer, orows, nouter)), 0);
        for (int k = 0; k < 4; k++) cr_assert_eq(pm_meta_push(list, random_rows(a, &s, 2, sh, next(&s) % 5)), 0);
        cr_assert_eq(pm_meta_set_lit(root, "u", list), 0);
        expect_same(root);
        /* summary: the inner tables written without their x column */
        const pm_meta *plain = pm_meta_copy(a, root);
        expect_same_summary(root, plain, &gen);
        pm_arena_destroy(a);
    }
}

/* The network's tables read through pm_meta_copy: each row an object with
 * its members in column order, META members left out where NULL. */
Test(meta_writer, a_table_copy_has_the_rows_values) {
    pm_arena *a = pm_arena_create(0);
    static const pm_meta_col cols[] = {
        PM_META_COL("n", I64, trow, i64), PM_META_COL("p", F64X3, trow, f3),
        PM_META_COL("m", META, trow, meta), PM_META_COL("l", U32S, trow, us),
        PM_META_COL("v", VAL, trow, val)};
    static const pm_meta_shape sh = {cols, 5, sizeof(trow)};
    static const uint32_t list[] = {5, 45, 1603};
    trow rows[2] = {{.i64 = -7, .f3 = {93.5, 0, -496.5}, .us = {list, 3}, .val = {.kind = PM_META_STR, .u.s = "n1_5"}},
                    {.i64 = 8, .f3 = {1, NAN, 3}, .val = {.kind = PM_META_NULL}}};
    rows[1].meta = pm_meta_int(a, 42);
    pm_meta *c = pm_meta_copy(a, pm_meta_table(a, &sh, rows, 2));
    cr_assert_eq(c->kind, PM_META_ARR);
    cr_assert_eq(c->u.kids.count, 2);
    const pm_meta *r0 = c->u.kids.first, *r1 = r0->next;
    cr_assert_eq(r0->u.kids.count, 4, "m is absent in row 0");
    cr_assert_eq(pm_meta_get(r0, "n")->u.i, -7);
    cr_assert_null(pm_meta_get(r0, "m"));
    const pm_meta *p = pm_meta_get(r0, "p");
    cr_assert_eq(p->u.kids.count, 3);
    cr_assert_eq(p->u.kids.first->u.n, 93.5);
    cr_assert_eq(p->u.kids.last->u.n, -496.5);
    cr_assert_eq(pm_meta_get(r0, "l")->u.kids.last->u.i, 1603);
    cr_assert_str_eq(pm_meta_get(r0, "v")->u.s, "n1_5");
    cr_assert_eq(pm_meta_get(r1, "m")->u.i, 42);
    cr_assert_eq(pm_meta_get(r1, "p")->u.kids.first->next->kind, PM_META_NULL, "NaN is null");
    cr_assert_eq(pm_meta_get(r1, "v")->kind, PM_META_NULL);
    cr_assert_eq(pm_meta_get(r1, "l")->u.kids.count, 0);
    const char *order[] = {"n", "p", "m", "l", "v"};
    size_t i = 0;
    for (const pm_meta *k = r1->u.kids.first; k; k = k->next) cr_assert_str_eq(k->key, order[i++]);
    pm_arena_destroy(a);
}

/* ?metadata=summary over a table leaves out its omitted members row by
 * row, as over the plain copy, counting the same. */
Test(meta_writer, summary_over_tables_matches_the_plain_copy) {
    /* members of the rows (written without their columns), and a path
     * below a member (each row filtered as its plain object) */
    static const char *const omit[] = {"t[].id", "t[].kind", "u", NULL};
    static const char *const deep[] = {"t[].index.x", "t[].edges", NULL};
    const pm_api_generator gens[2] = {{.name = "test", .summary_omit = omit},
                                      {.name = "test", .summary_omit = deep}};
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < 1000; t++) {
        pm_arena *a = pm_arena_create(0);
        pm_meta *root = pm_meta_obj(a);
        cr_assert_eq(pm_meta_set_lit(root, "t", random_table(a, &s, 0)), 0);
        cr_assert_eq(pm_meta_set_lit(root, "u", random_tree(a, &s, 1)), 0);
        const pm_meta *plain = pm_meta_copy(a, root);
        expect_same_summary(root, plain, &gens[t & 1]);
        pm_arena_destroy(a);
    }
}

Test(meta_writer, random_trees_match_the_reference) {
    uint64_t s = 0x853c49e6748fea9bull;
    for (int t = 0; t < 2000; t++) {
        pm_arena *a = pm_arena_create(0);
        pm_meta *root = pm_meta_obj(a);
        /* more distinct literal keys than the cache has slots */
        char keys[100][8];
        for (int i = 0; i < 100; i++) {
            snprintf(keys[i], sizeof keys[i], "k%d", i);
            pm_meta_set_keyn(root, keys[i], strlen(keys[i]), random_tree(a, &s, 0));
        }
        for (int i = 0; i < 100; i++) pm_meta_set_keyn(root, keys[i], strlen(keys[i]), pm_meta_int(a, i));
        expect_same(root);
        pm_arena_destroy(a);
    }
}

/* Numbers written again by their bits (the writer keeps each number's
 * text in a slot chosen by its bits, and replaces it only on a second miss
 * in a row of another number): values drawn from a pool larger than the
 * slots, so texts are found, kept, replaced and found again, 0 and -0 and
 * the non-finite among them, texts too long to keep, in table cells of
 * every number kind and in trees. */
Test(meta_writer, numbers_repeated_by_bits_match_the_reference) {
    static const pm_meta_col cols[] = {
        PM_META_COL("f", F64, trow, f64), PM_META_COL("p", F64X3, trow, f3),
        PM_META_COL("v", VAL, trow, val), PM_META_COL("m", META, trow, meta)};
    static const pm_meta_shape sh = {cols, 4, sizeof(trow)};
    uint64_t s = 0xbb67ae8584caa73bull;
    for (int t = 0; t < 40; t++) {
        pm_arena *a = pm_arena_create(0);
        size_t npool = 1 + next(&s) % (3 * PM_API__NUMS);
        double *pool = pm_arena_alloc(a, npool * sizeof *pool);
        for (size_t i = 0; i < npool; i++) {
            uint64_t x = next(&s);
            /* a third with texts of 16 to 24 bytes (the slots keep up to
             * 23): float32 values widened, negative, tiny exponents */
            if (x % 3) pool[i] = random_double(x >> 2);
            else if (x & 4) pool[i] = -(double)(float)((double)(x >> 20) * 0x1p-30);
            else pool[i] = -(double)(x >> 11) * 0x1p-1000;
        }
        pool[0] = -0.0;
        size_t nrows = 1 + next(&s) % (6 * PM_API__NUMS);
        trow *rows = pm_arena_alloc(a, nrows * sizeof *rows);
        for (size_t r = 0; r < nrows; r++) {
            trow *w = &rows[r];
            *w = (trow){.f64 = pool[next(&s) % npool]};
            for (int i = 0; i < 3; i++) w->f3[i] = pool[next(&s) % npool];
            w->val = (pm_meta_val){.kind = PM_META_NUM, .u.n = pool[next(&s) % npool]};
            if (next(&s) % 2) {
                double xz[2] = {pool[next(&s) % npool], pool[next(&s) % npool]};
                w->meta = pm_meta_nums(a, xz, 2);
            }
        }
        pm_meta *root = pm_meta_obj(a), *arr = pm_meta_arr(a);
        for (size_t i = 0; i < 2 * npool; i++) cr_assert_eq(pm_meta_push(arr, pm_meta_num(a, pool[next(&s) % npool])), 0);
        cr_assert_eq(pm_meta_set_lit(root, "t", pm_meta_table(a, &sh, rows, nrows)), 0);
        cr_assert_eq(pm_meta_set_lit(root, "a", arr), 0);
        expect_same(root);
        pm_arena_destroy(a);
    }
}

/* Tables of more shapes than the writer keeps plans for, inside one
 * another (a network's nodes hold mouths and corners): each shape's plan
 * is made, kept, replaced and made again, and a plan whose rows are being
 * written is not replaced by a table inside them. */
Test(meta_writer, tables_of_many_shapes_inside_one_another) {
    uint64_t s = 0x3c6ef372fe94f82bull;
    for (int t = 0; t < 300; t++) {
        pm_arena *a = pm_arena_create(0);
        enum { NSH = 7 };
        pm_meta_shape *shapes = pm_arena_alloc(a, NSH * sizeof *shapes);
        for (int k = 0; k < NSH; k++) {
            size_t ncols = 2 + next(&s) % 6;
            pm_meta_col *cols = pm_arena_alloc(a, ncols * sizeof *cols);
            for (size_t c = 0; c < ncols; c++) {
                uint64_t y = next(&s);
                const char *key = lits[y % 6];
                size_t kind = (y >> 8) % 11;
                cols[c] = (pm_meta_col){key, (uint32_t)strlen(key), col_kinds[kind], col_offsets[kind]};
            }
            cols[0] = (pm_meta_col){"m", 1, PM_META_COL_META, offsetof(trow, meta)};
            shapes[k] = (pm_meta_shape){cols, ncols, sizeof(trow)};
        }
        /* depth 0: one table; each row's m a table of another shape, down
         * to depth 3 */
        pm_meta *levels[4] = {0};
        for (int d = 3; d >= 0; d--) {
            int k = (int)(next(&s) % NSH);
            pm_meta *m = random_rows(a, &s, 4, &shapes[k], 1 + next(&s) % 5);
            trow *rows = (trow *)m->u.table.rows;
            for (size_t r = 0; r < m->u.table.n; r++) {
                if (d == 3) continue;
                /* a fresh table of a random shape under each row, sometimes the parent's own */
                int kk = next(&s) % 4 == 0 ? k : (int)(next(&s) % NSH);
                pm_meta *sub = random_rows(a, &s, 4, &shapes[kk], next(&s) % 4);
                trow *sr = (trow *)sub->u.table.rows;
                for (size_t q = 0; q < sub->u.table.n; q++) sr[q].meta = levels[d + 1];
                rows[r].meta = sub;
            }
            levels[d] = m;
        }
        pm_meta *root = pm_meta_obj(a);
        cr_assert_eq(pm_meta_set_lit(root, "t", levels[0]), 0);
        cr_assert_eq(pm_meta_set_lit(root, "u", levels[1]), 0);
        expect_same(root);
        pm_arena_destroy(a);
    }
}

/* A column of a kind the writer does not know (a shape built wrong) is
 * written null, as before the writer planned tables: the planned rows'
 * code, reached by the column's kind, is only for the kinds it knows, so
 * such a shape takes the unplanned path, twice (the second table of the
 * shape would find a plan if one had been made). */
Test(meta_writer, an_unknown_column_kind_is_written_null) {
    pm_arena *a = pm_arena_create(0);
    static const pm_meta_col cols[] = {
        PM_META_COL("n", I64, trow, i64),
        {"x", 1, (pm_meta_col_kind)(PM_META_COL_META + 1), offsetof(trow, u32)},
        PM_META_COL("b", BOOL, trow, b)};
    static const pm_meta_shape sh = {cols, 3, sizeof(trow)};
    trow rows[2] = {{.i64 = -7, .u32 = 3, .b = true}, {.i64 = 12, .u32 = 4}};
    pm_meta *root = pm_meta_arr(a);
    cr_assert_eq(pm_meta_push(root, pm_meta_table(a, &sh, rows, 2)), 0);
    cr_assert_eq(pm_meta_push(root, pm_meta_table(a, &sh, rows + 1, 1)), 0);
    const char *want = "[[{\"n\":-7,\"x\":null,\"b\":true},{\"n\":12,\"x\":null,\"b\":false}],"
                       "[{\"n\":12,\"x\":null,\"b\":false}]]";
    pm_test_text r = {0};
    pm_test_put(&r, want, strlen(want));
    expect_text(root, &r);
    free(r.s);
    pm_arena_destroy(a);
}
