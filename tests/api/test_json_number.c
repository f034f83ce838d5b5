#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/rng.h"
#include "../../api/json_fast.h"

/* The request reader's number tokens (api/json_fast.c): the reader with its
 * short-token path (eight digits at a time) against the plain reader, and
 * every real it takes against strtod, every integer against strtoll: the
 * same verdict, end, kind and bits, or the test fails. */

static int rnd(pm_rng *r, int n) { return (int)(pm_rng_u64(r) % (uint64_t)n); }

typedef struct tok { char s[96]; size_t len; } tok;

static void put(tok *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n < sizeof t->s) memcpy(t->s + t->len, s, n), t->len += n;
}

static void put_digits(tok *t, pm_rng *r, int n, bool lead_nonzero) {
    for (int i = 0; i < n && t->len + 1 < sizeof t->s; i++)
        t->s[t->len++] = (char)('0' + (i == 0 && lead_nonzero ? 1 + rnd(r, 9) : rnd(r, 10)));
}

/* A token of any shape around the short path's bounds (0..9 integer
 * digits, 0..9 fraction digits, exponents, signs, leading zeros), then
 * what may follow it. */
static void random_token(tok *t, pm_rng *r) {
    static const char *const tails[] = {"", ",", "]", " ", "}", "e5", "E-2", "e+", ".5", "x",
                                        "-", "0", ".", "\n", "\xff", ":", "e", "E"};
    t->len = 0;
    int sign = rnd(r, 10);
    if (sign < 4) put(t, "-");
    else if (sign == 4) put(t, "+");
    int nint = rnd(r, 12) == 0 ? 0 : 1 + rnd(r, rnd(r, 3) ? 9 : 22);
    bool lead0 = rnd(r, 6) == 0;
    if (lead0 && nint) put(t, "0"), nint--;
    put_digits(t, r, nint, !lead0);
    if (rnd(r, 3)) {
        put(t, ".");
        int nfrac = rnd(r, 12) == 0 ? 0 : 1 + rnd(r, rnd(r, 3) ? 9 : 25);
        put_digits(t, r, nfrac, false);
    }
    if (rnd(r, 8) == 0) {
        put(t, rnd(r, 2) ? "e" : "E");
        int s = rnd(r, 3);
        if (s) put(t, s == 1 ? "-" : "+");
        put_digits(t, r, rnd(r, 4), false);
    }
    put(t, tails[rnd(r, sizeof tails / sizeof *tails)]);
}

/* Reads s[0, len) both ways; fails the test at the first difference. */
static bool same_reading(const char *s, size_t len) {
    char *buf = malloc(len ? len : 1);   /* exactly len: a read past it is a sanitizer error */
    cr_assert_not_null(buf);
    memcpy(buf, s, len);
    const char *a = buf, *b = buf, *end = buf + len;
    bool ia = false, ib = false;
    int64_t va = 0, vb = 0;
    double da = 0, db = 0;
    bool oka = pm_api__json_number(&a, end, &ia, &va, &da);
    bool okb = pm_api__json_number_plain(&b, end, &ib, &vb, &db);
    bool same = oka == okb && (!oka || (a == b && ia == ib && va == vb && memcmp(&da, &db, 8) == 0));
    if (same && oka) {   /* the independent references */
        char text[128] = {0};
        size_t n = (size_t)(a - buf);
        cr_assert_lt(n, sizeof text);
        memcpy(text, buf, n);
        if (ia) {
            same = strtoll(text, NULL, 10) == va && (double)va == da;
        } else {
            double x = strtod(text, NULL);
            same = memcmp(&x, &da, 8) == 0;
        }
    }
    if (!same)
        cr_log_error("\"%.*s\": fast %d %td %d %lld %a, plain %d %td %d %lld %a", (int)len, s, oka,
                     a - buf, ia, (long long)va, da, okb, b - buf, ib, (long long)vb, db);
    free(buf);
    return same;
}

Test(json_number, short_path_is_the_plain_reader_on_random_tokens) {
    pm_rng r;
    pm_rng_seed(&r, 41);
    int bad = 0;
    tok t;
    for (int i = 0; i < 1500000 && bad < 10; i++) {
        random_token(&t, &r);
        /* Room after the token or none: the short path must not need it. */
        size_t pad = (size_t)rnd(&r, 14);
        for (size_t k = 0; k < pad && t.len + 1 < sizeof t.s; k++)
            t.s[t.len++] = rnd(&r, 2) ? ' ' : (char)('0' + rnd(&r, 10));
        bad += !same_reading(t.s, t.len);
    }
    cr_expect_eq(bad, 0);
}

/* Every length of the short shape, ends at every distance from the end of
 * the buffer, and values whose division ties or nearly ties. */
Test(json_number, short_shapes_at_every_length_and_end) {
    pm_rng r;
    pm_rng_seed(&r, 42);
    int bad = 0;
    tok t;
    for (int i = 0; i < 600000 && bad < 10; i++) {
        t.len = 0;
        if (rnd(&r, 2)) put(&t, "-");
        int nint = 1 + rnd(&r, 9), nfrac = rnd(&r, 10);
        put_digits(&t, &r, nint, nint > 1 || rnd(&r, 2));
        if (nfrac) put(&t, "."), put_digits(&t, &r, nfrac, false);
        static const char *const tails[] = {"]", ",", " ", "", "e1", "0"};
        put(&t, tails[rnd(&r, 6)]);
        size_t pad = (size_t)rnd(&r, 10);
        for (size_t k = 0; k < pad; k++) put(&t, " ");
        bad += !same_reading(t.s, t.len);
    }
    cr_expect_eq(bad, 0);
}

/* Hand-picked tokens: zeros of both signs, halfway and near-halfway
 * cases, 15-17 digits, exponents at the fast paths' limits, subnormals,
 * the largest and smallest doubles, overflow and malformed tokens. */
Test(json_number, adversarial_tokens) {
    static const char *const toks[] = {
        "0", "-0", "0.0", "-0.0", "0.0000000", "-0.0000001", "00", "-00.5", "0.", "-", "-.5", ".5",
        "1.", "1e", "1e+", "1.5e", "0.1", "0.2", "0.3", "0.30000000000000004", "1234567.1234567",
        "9999999.9999999", "99999999", "9999999", "12345678.5", "1234567.12345678",
        "9007199254740992", "9007199254740993", "9007199254740993.0", "9007199254740992.5",
        "4503599627370496.5", "4503599627370497.5", "2.5", "3.5", "0.5", "1.00000000000000011102230246251565404236316680908203125",
        "1.0000000000000001110223024625156540423631668090820312", "123456789012345678",
        "1234567890123456789", "12345678901234567890", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "1e22", "1e23",
        "1e-22", "1e-23", "9007199254740991e22", "9007199254740993e22", "1e19", "1e-19",
        "123456789012345678e19", "123456789012345678e-19", "2.2250738585072011e-308",
        "2.2250738585072014e-308", "4.9e-324", "5e-324", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "1e-400", "1.7976931348623157e308", "1.7976931348623158e308",
        "1.7976931348623159e308", "1e309", "-1e309", "8.98846567431158e307", "0.000001",
        "0.0000001", "0.00000001", "1e0", "1E0", "1e-0", "1e+0", "209.983342", "-0.499583",
        "1.7", "7.1", "1.05", "8.55", "0.015", "45.455", "123.456e2", "1.5.3", "1..5", "1-2",
    };
    int bad = 0;
    static const char *const tails[] = {"", "]", "        ", ",0000000000", "e5       "};
    for (size_t i = 0; i < sizeof toks / sizeof *toks; i++)
        for (size_t k = 0; k < sizeof tails / sizeof *tails; k++) {
            char s[160];
            snprintf(s, sizeof s, "%s%s", toks[i], tails[k]);
            bad += !same_reading(s, strlen(s));
        }
    cr_expect_eq(bad, 0);
}
