/* The metadata writer (pm_api__w_meta) against a plain reference written
 * here: byte by byte escaping, the reference number printer, no key cache.
 * The writer copies plain strings a word at a time, keeps keys' quoted text
 * by address and prints short decimals from their integer; none of that may
 * change a byte. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/encode_writer.h"
#include "scene/meta.h"

typedef struct ref { char *s; size_t len, cap; } ref;

static void put(ref *r, const char *s, size_t n) {
    if (r->len + n + 1 > r->cap) {
        r->cap = 2 * (r->len + n + 1);
        r->s = realloc(r->s, r->cap);
        cr_assert_not_null(r->s);
    }
    memcpy(r->s + r->len, s, n);
    r->len += n;
}

static void put_str(ref *r, const char *s, size_t n) {
    put(r, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[8];
        if (c == '"' || c == '\\') put(r, (char[]){'\\', (char)c}, 2);
        else if (c < 0x20) put(r, e, (size_t)snprintf(e, sizeof e, "\\u%04x", c));
        else put(r, (const char *)&c, 1);
    }
    put(r, "\"", 1);
}

static void put_ref(ref *r, const pm_meta *m) {
    char t[48];
    switch (m->kind) {
    case PM_META_NULL: put(r, "null", 4); break;
    case PM_META_BOOL: put(r, m->u.b ? "true" : "false", m->u.b ? 4 : 5); break;
    case PM_META_INT: put(r, t, (size_t)snprintf(t, sizeof t, "%lld", (long long)m->u.i)); break;
    case PM_META_NUM: put(r, t, (size_t)pm_api__fmt_f64_ref(t, m->u.n)); break;
    case PM_META_STR: put_str(r, m->u.s, strlen(m->u.s)); break;
    default: {
        bool obj = m->kind == PM_META_OBJ;
        put(r, obj ? "{" : "[", 1);
        for (const pm_meta *k = m->u.kids.first; k; k = k->next) {
            if (k != m->u.kids.first) put(r, ",", 1);
            if (obj) {
                put_str(r, k->key, k->key_len);
                put(r, ":", 1);
            }
            put_ref(r, k);
        }
        put(r, obj ? "}" : "]", 1);
    }
    }
}

static void expect_same(const pm_meta *m) {
    pm_api__w w;
    pm_api__w_init(&w, 16);
    pm_api__w_meta(&w, m);
    cr_assert(!w.oom);
    ref r = {0};
    put_ref(&r, m);
    cr_assert_eq(w.len, r.len, "lengths %zu and %zu", w.len, r.len);
    cr_assert(memcmp(w.data, r.s, r.len) == 0, "%.*s\n%.*s", (int)w.len, w.data, (int)r.len, r.s);
    pm_api__w_free(&w);
    free(r.s);
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
static pm_meta *random_tree(pm_arena *a, uint64_t *s, int depth) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    uint64_t x = *s;
    int kind = depth >= 4 ? (int)(x % 5) : (int)(x % 7);
    switch (kind) {
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
