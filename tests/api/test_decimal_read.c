#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/rng.h"
#include "../../api/decimal.h"
#include "../../api/json_fast.h"

/* Reading decimals for long numeric arrays (api/decimal.c): the powers of
 * ten table against big-integer arithmetic of its own, the 128-bit product
 * conversion against strtod (glibc's is correctly rounded) on random
 * 17-19 digit decimals, ties and their neighbours, and the array run
 * reader against the plain token reader, element by element. */

static pm_rng rng;
static uint64_t next(void) { return pm_rng_u64(&rng); }
static void seed(void) { pm_rng_seed(&rng, 0x9e3779b97f4a7c15u); }

/* ---- big integers, little-endian 32-bit limbs ---- */

enum { LIMBS = 48 };   /* 1536 bits: 2^1200 and 10^400 fit */
typedef struct big { uint32_t l[LIMBS]; } big;

static big big_u128(uint64_t hi, uint64_t lo) {
    big b = {{0}};
    b.l[0] = (uint32_t)lo, b.l[1] = (uint32_t)(lo >> 32);
    b.l[2] = (uint32_t)hi, b.l[3] = (uint32_t)(hi >> 32);
    return b;
}

static void big_mul(big *b, uint32_t k) {
    uint64_t c = 0;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t v = (uint64_t)b->l[i] * k + c;
        b->l[i] = (uint32_t)v;
        c = v >> 32;
    }
    cr_assert_eq(c, 0, "big integer overflow");
}

static big big_pow10(int q) {
    big b = big_u128(0, 1);
    for (int i = 0; i < q; i++) big_mul(&b, 10);
    return b;
}

static void big_shl(big *b, int s) {
    for (; s >= 32; s -= 32) {
        cr_assert_eq(b->l[LIMBS - 1], 0);
        memmove(b->l + 1, b->l, (LIMBS - 1) * sizeof b->l[0]);
        b->l[0] = 0;
    }
    if (s) {
        cr_assert_eq(b->l[LIMBS - 1] >> (32 - s), 0);
        for (int i = LIMBS - 1; i > 0; i--) b->l[i] = b->l[i] << s | b->l[i - 1] >> (32 - s);
        b->l[0] <<= s;
    }
}

static int big_cmp(const big *a, const big *b) {
    for (int i = LIMBS - 1; i >= 0; i--)
        if (a->l[i] != b->l[i]) return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

/* t * x (x a big integer, t two words) */
static big big_mul_t(const uint64_t t[2], const big *x) {
    big r = {{0}};
    uint32_t tl[4] = {(uint32_t)t[1], (uint32_t)(t[1] >> 32), (uint32_t)t[0], (uint32_t)(t[0] >> 32)};
    for (int j = 0; j < 4; j++) {
        uint64_t c = 0;
        for (int i = 0; i + j < LIMBS; i++) {
            uint64_t v = (uint64_t)x->l[i] * tl[j] + r.l[i + j] + c;
            r.l[i + j] = (uint32_t)v;
            c = v >> 32;
        }
    }
    return r;
}

/* Every entry is 10^q's leading 128 bits, truncated: T 2^b <= 10^q < (T+1) 2^b. */
Test(decimal_read, table_is_ten_to_the_q_truncated) {
    for (int q = PM_API__P10_QMIN; q <= PM_API__P10_QMAX; q++) {
        const uint64_t *t = pm_api__p10_t[q - PM_API__P10_QMIN];
        int b = pm_api__p10_b[q - PM_API__P10_QMIN];
        cr_assert(t[0] >> 63, "q %d: T below 2^127", q);
        uint64_t t1[2] = {t[0] + (t[1] == UINT64_MAX), t[1] + 1};
        big lo, hi, x;
        if (q >= 0) {
            x = big_pow10(q);
            lo = big_u128(t[0], t[1]);
            hi = big_u128(t1[0], t1[1]);
            if (t1[0] < t[0]) hi.l[4] = 1;   /* T + 1 = 2^128 */
            if (b >= 0) big_shl(&lo, b), big_shl(&hi, b);
            else big_shl(&x, -b);
        } else {   /* T X <= 2^-b < (T + 1) X, X = 10^-q */
            big d = big_pow10(-q);
            lo = big_mul_t(t, &d);
            hi = big_mul_t(t1, &d);
            if (t1[0] < t[0]) {   /* T + 1 = 2^128 */
                hi = d;
                big_shl(&hi, 128);
            }
            cr_assert_lt(b, 0);
            x = big_u128(0, 1);
            big_shl(&x, -b);
        }
        cr_assert(big_cmp(&lo, &x) <= 0 && big_cmp(&x, &hi) < 0, "q %d: entry is not 10^q's leading bits", q);
    }
}

/* w 10^q through pm_api__dec_to_double and through strtod: true and the
 * same bits, or false. */
static bool same_as_strtod(uint64_t w, int q, bool *decided) {
    char text[48];
    snprintf(text, sizeof text, "%llue%d", (unsigned long long)w, q);
    double want = strtod(text, NULL), got = 0;
    *decided = pm_api__dec_to_double(w, q, &got);
    if (*decided && memcmp(&want, &got, sizeof got) != 0) {
        cr_log_error("%s: %.17g, strtod %.17g", text, got, want);
        return false;
    }
    return true;
}

static uint64_t random_digits(int n) {
    uint64_t w = 1 + next() % 9;
    for (int i = 1; i < n; i++) w = w * 10 + next() % 10;
    return w;
}

/* Whether w 10^q is exactly halfway between two doubles. */
static bool exact_tie(uint64_t w, int q) {
    if (q < -27 || q > 23) return false;   /* past 5^23 > 2^54 the odd part is too long */
    unsigned __int128 v = w;   /* w 5^q: w 10^q's bits but for the 2^q */
    for (int i = 0; i < q; i++) v *= 5;
    for (int i = 0; i > q; i--) {   /* a finite binary fraction only when 5^-q divides w */
        if (v % 5) return false;
        v /= 5;
    }
    int bits = 0;
    for (unsigned __int128 t = v; t; t >>= 1) bits++;
    if (bits <= 53) return false;
    unsigned __int128 low = v & (((unsigned __int128)1 << (bits - 53)) - 1);
    return low == (unsigned __int128)1 << (bits - 54);
}

static long test_count(long fallback) {
    const char *s = getenv("PM_TEST_DECIMAL_N");   /* e.g. 100000000 for a long run */
    return s && atol(s) > 0 ? atol(s) : fallback;
}

Test(decimal_read, random_17_to_19_digits_are_strtod, .init = seed, .timeout = 240) {
    long n = test_count(12000000), undecided = 0;
    for (long i = 0; i < n; i++) {
        int nd = i % 8 == 7 ? 1 + (int)(next() % 16) : 17 + (int)(next() % 3);
        uint64_t w = random_digits(nd);
        int q = i % 3 ? -(int)(next() % 40) : PM_API__P10_QMIN - 30 + (int)(next() % 650);
        bool decided;
        cr_assert(same_as_strtod(w, q, &decided));
        bool in_range = q >= PM_API__P10_QMIN && q <= PM_API__P10_QMAX;
        cr_assert(decided || !in_range || exact_tie(w, q) || ++undecided < 64,
                  "too many undecided: the fast path is not taken");
        cr_assert(!decided || in_range, "q %d out of the table decided", q);
    }
}

/* The table's ends: the smallest and largest values it may make are normal
 * doubles, exactly strtod's. */
Test(decimal_read, range_ends) {
    static const uint64_t ws[] = {1, 2, 9, 17976931348623157ull, 9999999999999999999ull,
                                  2225073858507201ull, 4940656458412465ull, 10000000000000000000ull};
    for (size_t i = 0; i < sizeof ws / sizeof *ws; i++) {
        for (int q = PM_API__P10_QMIN - 30; q <= PM_API__P10_QMAX + 30; q++) {
            if (q > PM_API__P10_QMIN + 10 && q < PM_API__P10_QMAX - 10) continue;
            bool decided;
            cr_assert(same_as_strtod(ws[i], q, &decided));
            double d = 0;
            if (pm_api__dec_to_double(ws[i], q, &d)) cr_assert(isnormal(d), "%llue%d", (unsigned long long)ws[i], q);
        }
    }
}

/* Decimals exactly halfway between two doubles are never decided (the
 * ties-to-even rule is the exact fallback's), and their neighbours one
 * unit of the last digit away either side are decided as strtod does. */
Test(decimal_read, ties_undecided_and_their_neighbours_exact, .init = seed) {
    long decided_neighbours = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t w;
        int q;
        switch (i % 4) {
        case 0: {   /* k + 1/2 for k in [2^52, 2^53): ulp 1 */
            uint64_t k = (1ull << 52) + (next() >> 12);
            w = k * 10 + 5, q = -1;
            break;
        }
        case 1: {   /* k + 1/4 or 3/4 in [2^51, 2^52): ulp 1/2 */
            uint64_t k = (1ull << 51) + (next() >> 13);
            w = k * 100 + (next() & 1 ? 25 : 75), q = -2;
            break;
        }
        case 2: {   /* (2m + 1) 2^(s - 1): an integer tie, s 1..10 */
            int s = 1 + (int)(next() % 10);
            uint64_t m = (1ull << 52) + (next() >> 12);
            w = (2 * m + 1) << (s - 1), q = 0;
            break;
        }
        default: {   /* (2m + 1) = 5^k o: a tie that is w 10^k, k 1..8 */
            int k = 1 + (int)(next() % 8);
            uint64_t p5 = 1;
            for (int j = 0; j < k; j++) p5 *= 5;
            /* 2m + 1 = 5^k o, odd, in about [2^53, 2^54) */
            uint64_t o = ((1ull << 53) / p5 + next() % ((1ull << 53) / p5)) | 1;
            int s = k + 1 + (int)(next() % 6);   /* the tie (2m + 1) 2^(s - 1) = w 10^k */
            w = o << (s - 1 - k), q = k;
            break;
        }
        }
        double d;
        cr_assert(!pm_api__dec_to_double(w, q, &d), "tie %llue%d decided", (unsigned long long)w, q);
        for (int side = -1; side <= 1; side += 2) {
            bool decided;
            cr_assert(same_as_strtod(w + (uint64_t)side, q, &decided));
            decided_neighbours += decided;
        }
    }
    cr_assert_gt(decided_neighbours, 700000, "neighbours of ties should mostly be decided");
}

/* ---- the array run reader ---- */

/* Any token a request may hold, and some that are no JSON number; with
 * clean, only numbers the run takes (no ties, nothing out of range). */
static void token(char *out, size_t cap, bool clean) {
    uint64_t r = next();
    double x;
    memcpy(&x, &r, sizeof x);
    if (!isfinite(x)) x = 0.25;
    static const char *const odd[] = {
        "-0", "-0.0", "0", "0.0", "0e5", "-0E-5", "1e400", "1e-400", "4.9e-324", "2.2250738585072011e-308",
        "1.7976931348623157e308", "1.7976931348623159e308", "9007199254740992", "9007199254740993",
        "-9007199254740993", "12345678901234567890", "1234567890123456789", "0.1234567890123456789",
        "0.12345678901234567890", "0.0000000000000000000000001234", "1.", ".5", "01", "-", "+1", "1e",
        "1e+", "1E+7", "1e-7", "00.5", "1.5e-0", "-1.5E+00012", "9.999999999999999999e22",
        "4503599627370496.5", "4503599627370497.5", "0.5", "\"x\"", "true", "[1]", "1.0.0", "1e5e5",
        "123456789012345678e-320", "18446744073709551615", "18446744073709551616.0"};
    switch (next() % (clean ? 5 : 8)) {
    case 0: snprintf(out, cap, "%.3f", (double)(int64_t)(next() % 2000000) / 1000.0 - 1000.0); break;
    case 1: snprintf(out, cap, "%.17g", (double)(float)((double)(next() % 100000) / 7.0 - 5000.0)); break;
    case 2: snprintf(out, cap, "%.17g", (double)(next() % 30000) / 1000.0); break;
    case 3: snprintf(out, cap, "%lld", (long long)(next() % 18000000000000000ull) - 9000000000000000ll); break;
    case 4: snprintf(out, cap, "%.*g", 1 + (int)(next() % 19), (double)(int64_t)next() * 1e-12); break;
    case 5: snprintf(out, cap, "%.*g", 1 + (int)(next() % 20), x); break;
    case 6: snprintf(out, cap, "%s", odd[next() % (sizeof odd / sizeof *odd)]); break;
    default: snprintf(out, cap, "0.%0*llu", 1 + (int)(next() % 22), (unsigned long long)(next() % 1000000)); break;
    }
}

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* Texts of random elements with random blanks, read by pm_api__dec_run
 * (in a buffer of exactly their size, so that a read past it is a
 * sanitizer's error) and token by token by the plain reader: the same
 * values (-0 as 0, integers within 2^53 only), and the run stops at the
 * start of an element. */
Test(decimal_read, run_reads_what_the_plain_reader_reads, .init = seed, .timeout = 120) {
    static const char *const blanks[] = {"", "", "", " ", "\n", " \t", "\r\n  "};
    long taken = 0, elements = 0;
    for (int round = 0; round < 6000; round++) {
        char text[8192];
        size_t len = 0;
        int n = 1 + (int)(next() % 120);
        bool clean = next() % 4 != 0;   /* only numbers the run takes: it must read them all */
        for (int i = 0; i < n; i++) {
            char tok[64];
            token(tok, sizeof tok, clean);
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s%s,%s", blanks[next() % 7], tok,
                                    blanks[next() % 7], blanks[next() % 7]);
        }
        len += (size_t)snprintf(text + len, sizeof text - len, "1]}");
        char *buf = malloc(len);
        cr_assert_not_null(buf);
        memcpy(buf, text, len);
        const char *end = buf + len, *p = buf, *run = skip_ws(buf, end);
        double out[128];
        size_t got = pm_api__dec_run(&run, end, (unsigned char *)out, 128);
        p = skip_ws(p, end);
        for (size_t i = 0; i < got; i++) {
            bool is_int;
            int64_t iv;
            double d;
            const char *s = p;
            cr_assert(pm_api__json_number_plain(&p, end, &is_int, &iv, &d), "run took %.*s", (int)(p - s + 8), s);
            if (is_int) cr_assert(fabs(d) <= 9007199254740992.0, "run took integer %.*s", (int)(p - s), s);
            d += 0.0;
            cr_assert(memcmp(&d, &out[i], sizeof d) == 0, "%.*s: run %.17g, plain %.17g", (int)(p - s), s,
                      out[i], d);
            p = skip_ws(p, end);
            cr_assert_eq(*p, ',');
            p = skip_ws(p + 1, end);
        }
        cr_assert_eq(run, p, "the run stops at the start of an element");
        if (clean) cr_assert(got >= (size_t)n - 1, "clean text: the run stopped at element %zu of %d (%.20s)",
                             got, n, run);
        taken += (long)got;
        elements += n;
        free(buf);
    }
    cr_assert_gt(taken, elements / 2);
}

/* A run stops at room values, and in a buffer that ends inside a token. */
Test(decimal_read, run_stops_at_room_and_at_the_end) {
    const char text[] = "1.25, 2.5, 3.75, 4.0, 5.5, 6.75, 7.125, 8.0, ";
    const char *p = text;
    double out[8];
    cr_assert_eq(pm_api__dec_run(&p, text + sizeof text - 1, (unsigned char *)out, 3), 3);
    cr_assert(out[0] == 1.25 && out[1] == 2.5 && out[2] == 3.75);
    cr_assert_eq(p, text + 17);   /* at "4.0" */
    static const double rest[] = {4.0, 5.5, 6.75, 7.125, 8.0};
    size_t n = pm_api__dec_run(&p, text + sizeof text - 1, (unsigned char *)out, 8);
    cr_assert_lt(n, 5, "the last bytes of the buffer are left to the plain reader");
    for (size_t i = 0; i < n; i++) cr_assert_eq(out[i], rest[i]);
}
