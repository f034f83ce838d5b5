#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/rng.h"
#include "pm_api/key.h"
#include "../../api/canon_text.h"

/* pm_api_canonical_dump must write jansson's bytes exactly (keys already
 * handed out depend on them): every test compares against jansson itself. */

#define FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)

typedef struct sink { char *s; size_t len, cap; } sink;

static int sink_cb(const char *buf, size_t n, void *data) {
    sink *k = data;
    if (k->len + n + 1 > k->cap) {
        k->cap = (k->len + n + 1) * 2;
        k->s = realloc(k->s, k->cap);
        cr_assert_not_null(k->s);
    }
    memcpy(k->s + k->len, buf, n);
    k->len += n;
    k->s[k->len] = '\0';
    return 0;
}

static char *ours(const json_t *j) {
    sink k = {0};
    cr_assert_eq(pm_api_canonical_dump(j, sink_cb, &k), 0);
    return k.s ? k.s : strdup("");
}

/* Compares one real; returns false (and says which) on a mismatch. */
static bool same_real(double x) {
    json_t *j = json_real(x);
    char *a = ours(j), *b = json_dumps(j, FLAGS);
    bool eq = strcmp(a, b) == 0;
    if (!eq) cr_log_error("%.17g (%a): ours %s, jansson %s", x, x, a, b);
    free(a);
    free(b);
    json_decref(j);
    return eq;
}

static double random_bits(pm_rng *r) {
    for (;;) {
        uint64_t u = pm_rng_u64(r);
        double x;
        memcpy(&x, &u, sizeof x);
        if (isfinite(x) && !(x == 0 && signbit(x))) return x;
    }
}

Test(canon, reals_from_random_bits) {
    pm_rng r;
    pm_rng_seed(&r, 1);
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 10; i++) bad += !same_real(random_bits(&r));
    cr_expect_eq(bad, 0);
}

/* What requests carry: short decimals, integers, quarters (which make
 * exact ties at the 17th digit), over every magnitude of the fast path. */
Test(canon, reals_as_requests_spell_them) {
    pm_rng r;
    pm_rng_seed(&r, 2);
    int bad = 0;
    for (int i = 0; i < 300000 && bad < 10; i++) {
        double sign = (pm_rng_u64(&r) & 1) ? -1.0 : 1.0;
        uint64_t m = pm_rng_u64(&r) >> (pm_rng_u64(&r) % 64);
        int kind = i % 4;
        double x = kind == 0 ? (double)(m % 100000000) / pow(10, (double)(pm_rng_u64(&r) % 12))
                   : kind == 1 ? (double)m
                   : kind == 2 ? (double)(m >> 11) / (double)(1u << (pm_rng_u64(&r) % 12))
                               : pm_rng_range(&r, -1, 1) * pow(10, pm_rng_range(&r, -20, 40));
        bad += !same_real(x == 0 ? x : sign * x);
    }
    cr_expect_eq(bad, 0);
}

/* Integral reals, which have their own short path below 10^15: every
 * length of digits, both signs, and the neighbours of the bound. */
Test(canon, integral_reals) {
    pm_rng r;
    pm_rng_seed(&r, 3);
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 10; i++) {
        double x = (double)(pm_rng_u64(&r) % 1000000000000000ull) / pow(10, (double)(i % 16));
        x = floor(x);
        bad += !same_real(x) + (x != 0 && !same_real(-x));   /* -0 is 0: its own test */
    }
    double more[] = {1.0, 9.0, 10.0, 1e14, 999999999999999.0, 1e15, 1000000000000001.0,
                     4503599627370496.0, 9007199254740992.0, 0.5, 999999999999999.5};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        bad += !same_real(more[i]) + !same_real(-more[i]);
    cr_expect_eq(bad, 0);
}

Test(canon, reals_at_the_edges) {
    int bad = 0;
    for (int e = -330; e <= 310; e++) {
        double p = pow(10, e);
        double xs[] = {p, nextafter(p, 0), nextafter(p, INFINITY), 9.5 * p, 0.5 * p, 1.5 * p,
                       99999999999999999.0 * p, 0.99999999999999999 * p};
        for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
            if (isfinite(xs[i]) && xs[i] != 0) bad += !same_real(xs[i]) + !same_real(-xs[i]);
    }
    double more[] = {0.0, 1.0, 2.0, 0.1, 0.2, 0.3, 1e-5, 1e-4, 1e16, 1e17, 123456789012345678.0,
                     9007199254740993.0, 4503599627370496.5, 1234567890123456.25,
                     1234567890123456.75, DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 5e-324, 1e-310};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        bad += !same_real(more[i]) + (more[i] != 0 && !same_real(-more[i]));
    cr_expect_eq(bad, 0);
}

Test(canon, negative_zero_is_zero) {
    json_t *j = json_pack("[f, {s:f}]", -0.0, "a", -0.0);
    char *a = ours(j);
    cr_expect_str_eq(a, "[0.0,{\"a\":0.0}]");
    free(a);
    json_decref(j);
}

/* A random document of the kinds canonical forms hold. */
static json_t *random_doc(pm_rng *r, int depth) {
    static const char *const keys[] = {"a", "b", "ab", "a b", "é", "\xf0\x9f\x98\x80", "q\"uote",
                                       "back\\slash", "tab\t", "ctl\x01", "/slash", "Z", "_", "aa"};
    unsigned k = (unsigned)(pm_rng_u64(r) % (depth > 3 ? 6 : 8));
    switch (k) {
    case 0: return json_null();
    case 1: return json_boolean(pm_rng_u64(r) & 1);
    case 2: return json_integer((json_int_t)pm_rng_u64(r) >> (pm_rng_u64(r) % 64));
    case 3: return json_real(random_bits(r));
    case 4: return json_real((double)(int)(pm_rng_u64(r) % 200001 - 100000) / 1000.0);
    case 5: return json_string(keys[pm_rng_u64(r) % (sizeof keys / sizeof *keys)]);
    case 6: {
        json_t *a = json_array();
        for (unsigned i = 0, n = (unsigned)(pm_rng_u64(r) % 6); i < n; i++)
            json_array_append_new(a, random_doc(r, depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (unsigned i = 0, n = (unsigned)(pm_rng_u64(r) % 7); i < n; i++)
            json_object_set_new(o, keys[pm_rng_u64(r) % (sizeof keys / sizeof *keys)],
                                random_doc(r, depth + 1));
        return o;
    }
    }
}

Test(canon, documents_byte_for_byte) {
    pm_rng r;
    pm_rng_seed(&r, 3);
    for (int i = 0; i < 3000; i++) {
        json_t *d = random_doc(&r, 0);
        char *a = ours(d), *b = json_dumps(d, FLAGS);
        cr_assert_str_eq(a, b, "document %d", i);
        free(a);
        free(b);
        json_decref(d);
    }
}

static int failing_cb(const char *buf, size_t n, void *data) {
    (void)buf, (void)n, (void)data;
    return -1;
}

/* Longer than the dump's internal block, and a failing sink. */
Test(canon, large_arrays_and_failures) {
    json_t *a = json_array();
    for (int i = 0; i < 50000; i++) json_array_append_new(a, json_real(i * 0.001 - 17.5));
    char *x = ours(a), *y = json_dumps(a, FLAGS);
    cr_expect_str_eq(x, y);
    free(x);
    free(y);
    cr_expect_eq(pm_api_canonical_dump(a, failing_cb, NULL), -1, "a failing sink is reported");
    json_decref(a);
}

/* Objects shared by many members (a request default set on every element):
 * each occurrence written as jansson writes it, also when one straddles the
 * dump's internal block, when two shared objects alternate, when one holds
 * another, and when one is too long to be copied. */
Test(canon, shared_objects) {
    json_t *small = json_pack("{s:f,s:f}", "width", 2.0, "curb_height", 0.15);
    json_t *other = json_pack("{s:i,s:s}", "b", -3, "a", "x y");
    json_t *outer = json_pack("{s:O,s:f}", "in", small, "k", 1.0 / 3);
    json_t *big = json_object();
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof k, "key%02d", i);
        json_object_set_new(big, k, json_real(i * 0.1));
    }
    json_t *a = json_array();
    for (int i = 0; i < 3000; i++) {
        json_t *e = json_object();
        json_object_set(e, "sidewalk", i % 3 ? small : other);
        json_object_set_new(e, "from", json_integer(i));
        if (i % 7 == 0) json_object_set(e, "outer", outer);
        if (i % 101 == 0) json_object_set(e, "big", big);
        json_array_append_new(a, e);
    }
    char *x = ours(a), *y = json_dumps(a, FLAGS);
    cr_assert_gt(strlen(y), 3 * 4096, "the dump spans several blocks");
    cr_expect_str_eq(x, y);
    free(x);
    free(y);
    json_decref(a);
    json_decref(big);
    json_decref(outer);
    json_decref(other);
    json_decref(small);
}

/* The canonical real printer (canon_text.h) against a plain reference,
 * glibc's "%.17g" with jansson's touch-ups, on millions of values where
 * requests have them: short decimals of every length and magnitude, their
 * neighbours one ulp away, exact halves at the 17th digit, and random bits.
 * The reference itself is held against jansson on the first values. */
static size_t plain_real17(double x, char *out, size_t cap) {
    char t[64];
    snprintf(t, sizeof t, "%.17g", x == 0 ? 0.0 : x);
    char *e = strchr(t, 'e'), *o = out;
    size_t n = e ? (size_t)(e - t) : strlen(t);
    memcpy(o, t, n);
    o += n;
    if (e) {   /* jansson drops '+' and the exponent's leading zeros */
        *o++ = 'e';
        const char *s = e + 1;
        if (*s == '-') *o++ = *s;
        if (*s == '+' || *s == '-') s++;
        while (*s == '0' && s[1]) s++;
        while (*s) *o++ = *s++;
    } else if (!strchr(t, '.')) {
        memcpy(o, ".0", 2), o += 2;
    }
    cr_assert_lt((size_t)(o - out), cap);
    *o = '\0';
    return (size_t)(o - out);
}

Test(canon, real_printer_against_printf_on_millions) {
    pm_rng r;
    pm_rng_seed(&r, 77);
    int bad = 0;
    for (int i = 0; i < 3000000 && bad < 10; i++) {
        double x;
        switch (i % 5) {
        case 0:   /* a short decimal as a request spells it */
            x = (double)(pm_rng_u64(&r) % 100000000000000ull >> (pm_rng_u64(&r) % 40)) /
                pow(10, (double)(pm_rng_u64(&r) % 22));
            break;
        case 1: {   /* one of its neighbours */
            double y = (double)(pm_rng_u64(&r) % 10000000) / pow(10, (double)(pm_rng_u64(&r) % 12));
            x = nextafter(y, (pm_rng_u64(&r) & 1) ? INFINITY : 0);
            break;
        }
        case 2:   /* integers over 2^k: exact ties at the 17th digit */
            x = ldexp((double)(pm_rng_u64(&r) >> 11), -(int)(pm_rng_u64(&r) % 110));
            break;
        case 3: x = pm_rng_range(&r, -1, 1) * pow(10, pm_rng_range(&r, -14, 18)); break;
        default: x = random_bits(&r); break;
        }
        if (pm_rng_u64(&r) & 1) x = -x;
        char a[PM_API_CANON_REAL_ROOM + 1], b[64];
        size_t na = pm_api__canon_real_text(x, a), nb = plain_real17(x, b, sizeof b);
        bool eq = na == nb && memcmp(a, b, na) == 0;
        if (eq && i < 20000) {   /* the reference is jansson's text */
            json_t *j = json_real(x == 0 ? 0.0 : x);
            char *s = json_dumps(j, FLAGS);
            eq = strcmp(s, b) == 0;
            free(s);
            json_decref(j);
        }
        if (!eq) {
            cr_log_error("%a: ours %.*s, plain %s", x, (int)na, a, b);
            bad++;
        }
    }
    cr_expect_eq(bad, 0);
}
