#ifndef PM_API_CANON_SHORT_H
#define PM_API_CANON_SHORT_H
/* Internal to api/: the digit helpers of the canonical real text
 * (canon.c), and a short number token read and its canonical text written
 * in one inline step (pm_api__real_short), for the readers that write the
 * canonical text straight from the request's bytes (req_network_fast.c),
 * and the same token's value alone (pm_api__real_short_value) for the
 * road's points, whose canonical form is binary (req_road_fast.c). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decimal_short.h"
#include "json_fast.h"

/* x < 10^8 as 8 digit values (0..9, not yet ASCII), one a byte, the
 * first digit in the lowest byte (so a little-endian store writes them in
 * order): halves, quarters and digits split in all lanes at once, each
 * division by 100 or 10 a multiply and shift exact for these ranges. */
static inline uint64_t pm_api__digits8(uint32_t x) {
    uint64_t hi = x / 10000, y = hi | (uint64_t)(x - hi * 10000) << 32;
    uint64_t q = ((y * 10486) >> 20) & 0x0000007F0000007Full;   /* /100 for < 10^4 */
    y = q | (y - q * 100) << 16;
    q = ((y * 103) >> 10) & 0x000F000F000F000Full;   /* /10 for < 100 */
    return q | (y - q * 10) << 8;
}

/* The 17 significant digits of x (normal, > 0) when 10^e10 <= x <
 * 10^(e10 + 1) is known, rounded to nearest, ties to even, as "%.17g"
 * rounds: x 10^(16 - e10) exactly as m 5^p 2^-sh (one 64x64 multiply)
 * and its dropped fraction. False where that does not hold in 128 bits. */
static inline bool pm_api__digits17_at(double x, int e10, uint64_t *digits) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint64_t m = (bits & ((1ull << 52) - 1)) | 1ull << 52;
    int be = (int)(bits >> 52) - 1022, p = 16 - e10, sh = 53 - be - p;
    if (p < 0 || p > 27 || sh < 1 || sh > 63) return false;
    unsigned __int128 v = (unsigned __int128)m * pm_api__p5[p];
    uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
    if (hi >> sh) return false;
    uint64_t q = (hi << (64 - sh)) | (lo >> sh), r = lo & ((1ull << sh) - 1), half = 1ull << (sh - 1);
    *digits = q + (r > half || (r == half && (q & 1)));
    return true;
}

/* Bytes pm_api__real_short may read from the token's first byte. */
#define PM_API_REAL_SHORT_ROOM 32

#ifdef PM_API_JSON_SWAR
/* A short token's digits at q (after any '-'; 16 bytes readable): *n1
 * digits (1..7), then, when a '.' follows them, *n2 more (1..7; 0 when no
 * '.' follows), and *w the value of all n1 + n2 digits, the '.' left out.
 * False when the digits do not have that shape. pm_api__real_short takes
 * one of the scans below; each gives the same answer on every input. */
typedef bool (*pm_api__short_scan)(const char *q, int *n1, int *n2, uint64_t *w);

/* Eight bytes at a time in 64-bit registers. */
static inline bool pm_api__short_scan_swar(const char *q, int *n1p, int *n2p, uint64_t *w) {
    uint64_t a, b;
    memcpy(&a, q, 8);
    int n1 = pm_api__json_digits8(a), n2 = 0;
    if ((unsigned)(n1 - 1) > 6u) return false;
    uint64_t x = pm_api__json_value8(a, n1);
    if (q[n1] == '.') {
        memcpy(&b, q + n1 + 1, 8);
        n2 = pm_api__json_digits8(b);
        if ((unsigned)(n2 - 1) > 6u) return false;
        x = x * pm_api__u10[n2] + pm_api__json_value8(b, n2);
    }
    *n1p = n1;
    *n2p = n2;
    *w = x;
    return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PM_API_SHORT_SCAN_SSSE3 1
#include <immintrin.h>

/* pm_api__short_scan_ssse3's shuffle for n1 digits, a '.' and n2 more
 * (row 8 n1 + n2; rows of n1 = 0 unused): lane j of 16 takes digit k =
 * j - (16 - n1 - n2), one byte further on from the '.' on, and none
 * (0x80: a zero) where k < 0. One load where building it took ten steps. */
#define PM_API__SHUF_K(j, n1, n2) ((j) - 16 + (n1) + (n2))
#define PM_API__SHUF_LANE(j, n1, n2) \
    (PM_API__SHUF_K(j, n1, n2) < 0 ? 0x80 : PM_API__SHUF_K(j, n1, n2) + (PM_API__SHUF_K(j, n1, n2) >= (n1)))
#define PM_API__SHUF_ROW(n1, n2) \
    {PM_API__SHUF_LANE(0, n1, n2), PM_API__SHUF_LANE(1, n1, n2), PM_API__SHUF_LANE(2, n1, n2), \
     PM_API__SHUF_LANE(3, n1, n2), PM_API__SHUF_LANE(4, n1, n2), PM_API__SHUF_LANE(5, n1, n2), \
     PM_API__SHUF_LANE(6, n1, n2), PM_API__SHUF_LANE(7, n1, n2), PM_API__SHUF_LANE(8, n1, n2), \
     PM_API__SHUF_LANE(9, n1, n2), PM_API__SHUF_LANE(10, n1, n2), PM_API__SHUF_LANE(11, n1, n2), \
     PM_API__SHUF_LANE(12, n1, n2), PM_API__SHUF_LANE(13, n1, n2), PM_API__SHUF_LANE(14, n1, n2), \
     PM_API__SHUF_LANE(15, n1, n2)}
#define PM_API__SHUF_ROWS(n1) \
    PM_API__SHUF_ROW(n1, 0), PM_API__SHUF_ROW(n1, 1), PM_API__SHUF_ROW(n1, 2), PM_API__SHUF_ROW(n1, 3), \
    PM_API__SHUF_ROW(n1, 4), PM_API__SHUF_ROW(n1, 5), PM_API__SHUF_ROW(n1, 6), PM_API__SHUF_ROW(n1, 7)
_Alignas(16) static const uint8_t pm_api__short_shuf[64][16] = {
    PM_API__SHUF_ROWS(0), PM_API__SHUF_ROWS(1), PM_API__SHUF_ROWS(2), PM_API__SHUF_ROWS(3),
    PM_API__SHUF_ROWS(4), PM_API__SHUF_ROWS(5), PM_API__SHUF_ROWS(6), PM_API__SHUF_ROWS(7)};

/* The same in SSSE3 lanes, for callers compiled for SSSE3 (target
 * attribute; picked at run time): the 16 bytes' digit mask gives n1 and
 * n2 (a count past 7 fails as the SWAR count of 8 does), one shuffle
 * (pm_api__short_shuf) puts the n1 + n2 digits at the top of the register
 * with zeros below and the '.' left out, and three multiply-adds join
 * pairs, quads and eights. */
__attribute__((target("ssse3"))) static inline bool pm_api__short_scan_ssse3(const char *q, int *n1p,
                                                                             int *n2p, uint64_t *w) {
    __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)q), _mm_set1_epi8('0'));
    __m128i dig = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
    unsigned other = ~(unsigned)_mm_movemask_epi8(dig);   /* bits 16..31 set: never 0 */
    int n1 = __builtin_ctz(other), n2 = 0;
    if ((unsigned)(n1 - 1) > 6u) return false;
    if (q[n1] == '.') {
        n2 = __builtin_ctz(other >> (n1 + 1));
        if ((unsigned)(n2 - 1) > 6u) return false;
    }
    __m128i at = _mm_load_si128((const __m128i *)(const void *)pm_api__short_shuf[8 * n1 + n2]);
    __m128i g = _mm_shuffle_epi8(d, at);
    g = _mm_maddubs_epi16(g, _mm_set1_epi16(0x010A));    /* 10 a + b: pairs */
    g = _mm_madd_epi16(g, _mm_set1_epi32(0x00010064));   /* 100 a + b: quads */
    g = _mm_packs_epi32(g, g);
    g = _mm_madd_epi16(g, _mm_set1_epi32(0x00012710));   /* 10000 a + b: the two eights */
    uint64_t r = (uint64_t)_mm_cvtsi128_si64(g);
    *n1p = n1;
    *n2p = n2;
    *w = (r & 0xFFFFFFFFu) * 100000000u + (r >> 32);
    return true;
}
#endif
#endif
#ifndef PM_API_SHORT_SCAN_SSSE3
#define PM_API_SHORT_SCAN_SSSE3 0
#endif


/* pm_api__real_short: the number token at p (PM_API_REAL_SHORT_ROOM bytes
 * readable) when it is -?(0|[1-9][0-9]{0,6})(.[0-9]{1,7})? and no exponent follows: *v its
 * value as pm_api__json_number reads it (w / 10^k, one correctly rounded
 * division of two exact doubles), and at out (PM_API_CANON_REAL_ROOM
 * bytes) the text pm_api__canon_real_text writes for *v + 0.0, *n its
 * length. The 17 digits are the token's own followed by a short tail (or
 * the token's less one unit in its last digit, and a tail): the exact
 * value's, from its significand times a power of 5. Returns the token's end,
 * or NULL when the token or its value is anything else (nothing consumed;
 * the general readers then take it from p). */
#ifdef PM_API_JSON_SWAR
static const double pm_api__short_p10[8] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7};

/* A token of that shape at p, its digits read by scan (one of the scans
 * above, a constant where this is inlined: an SSSE3 caller passes
 * pm_api__short_scan_ssse3, which is inlined there): *q its digits (after
 * any '-'), n1, n2 and w as scan gives them. Returns the token's end, or
 * NULL (a leading zero, an exponent, another shape). */
static inline __attribute__((always_inline)) const char *pm_api__short_token(const char *p, pm_api__short_scan scan,
                                                                               const char **q, int *n1, int *n2,
                                                                               uint64_t *w) {
    *q = p + (*p == '-');
    if (!scan(*q, n1, n2, w) || (*n1 > 1 && **q == '0')) return NULL;
    const char *end = *q + *n1 + (*n2 ? *n2 + 1 : 0);
    return (*end | 0x20) == 'e' ? NULL : end;
}

/* pm_api__real_short with its digits read by scan. */
static inline __attribute__((always_inline)) const char *pm_api__real_short_with(const char *p, double *v,
                                                                                   char *out, size_t *n,
                                                                                   pm_api__short_scan scan) {
    const double *p10 = pm_api__short_p10;
    const char *q;
    int n1, n2;
    uint64_t w;
    const char *end = pm_api__short_token(p, scan, &q, &n1, &n2, &w);
    if (!end) return NULL;
    bool neg = q != p;
    char *o = out;
    *o = '-';
    if (n2 == 0) {   /* an integer below 10^7: its digits and ".0" */
        *v = (double)(neg ? -(int64_t)w : (int64_t)w);   /* -0 is 0, as the reader reads it */
        o += neg & (w != 0);
        memcpy(o, q, 8);
        memcpy(o + n1, ".0", 2);
        *n = (size_t)(o - out) + (size_t)n1 + 2;
        return end;
    }
    double x = (double)(int64_t)w / p10[n2];
    *v = neg ? -x : x;
    if (w == 0) {
        memcpy(out, "0.0", 3);
        *n = 3;
        return end;
    }
    /* nd significant digits; 10^e10 <= |x| < 10^(e10 + 1) up to the
     * rounding, which the range of the digits below catches. */
    int nd, e10;
    if (*q != '0') {
        nd = n1 + n2;
        e10 = n1 - 1;
    } else {   /* 0.000ddd: "%.17g" writes it so down to 10^-4 */
        int bits = 64 - __builtin_clzll(w);
        nd = (bits * 1233) >> 12;
        nd += w >= pm_api__u10[nd];
        e10 = nd - 1 - n2;
        if (e10 < -4) return NULL;
    }
    int k = 17 - nd;   /* 3..16 */
    /* The 17 digits D = round(x 10^(16 - e10)), exactly: x's significand
     * times 5^(16 - e10) in 128 bits, shifted and rounded half to even
     * (pm_api__digits17_at, as "%.17g" rounds); for these tokens (x
     * below 10^17 at p = 16 - e10 in 10..20, so a quotient below 2^57,
     * shift 19..46) the product always fits. D is w 10^k (w's nd digits, then k zeros) + t,
     * t small: x is within 2^-53 of w / 10^n2 (relative), so |t| <= 11.1;
     * anything else is left to the general print. Integer steps after the
     * division, not a chain of float ones: a shorter dependency chain. */
    uint64_t D;
    if (!pm_api__digits17_at(x, e10, &D)) return NULL;
    int64_t t = (int64_t)(D - w * pm_api__u10[k]);
    if (t <= -100 || t >= 100) return NULL;
    o += neg;
    memcpy(o, q, 16);   /* fixed size: the token and what follows, within the room */
    o += end - q;
    if (t == 0) {   /* the token's own digits; trailing zeros dropped, one kept */
        while (o[-1] == '0' && o[-2] != '.') o--;
        *n = (size_t)(o - out);
        return end;
    }
    /* k - 2 digits of fill, then the last two. */
    const char *fill = "0000000000000000";
    if (t < 0) {   /* w - 1's digits, the last lowered, borrowing past '0's; 9s; 100 + t */
        if (D < pm_api__u10[16]) return NULL;   /* 16 digits */
        t += 100;
        fill = "9999999999999999";
        char *c = o - 1;
        for (; *c == '0' || *c == '.'; c--)
            if (*c == '0') *c = '9';
        --*c;
    }
    memcpy(o, fill, 16);   /* fixed size: k - 2 of them count */
    uint32_t t10 = (uint32_t)t / 10, t1 = (uint32_t)t - 10 * t10;
    o[k - 2] = (char)('0' + t10);
    o[k - 1] = (char)('0' + t1);
    *n = (size_t)(o - out) + (size_t)k - (t1 == 0);   /* t is 1..99: one trailing zero at most */
    return end;
}


/* The value alone of a token pm_api__real_short takes (the same tokens
 * and values), -0 as 0: for a reader whose canonical form holds the values
 * themselves, not their text (a road's points, docs/api.md). */
static inline __attribute__((always_inline)) const char *pm_api__real_short_value(const char *p, double *v,
                                                                                    pm_api__short_scan scan) {
    const char *q;
    int n1, n2;
    uint64_t w;
    const char *end = pm_api__short_token(p, scan, &q, &n1, &n2, &w);
    if (!end) return NULL;
    double x = (double)(int64_t)w / pm_api__short_p10[n2];
    *v = (q != p ? -x : x) + 0.0;
    return end;
}
#endif

static inline __attribute__((always_inline)) const char *pm_api__real_short(const char *p, double *v,
                                                                              char *out, size_t *n) {
#ifdef PM_API_JSON_SWAR
    return pm_api__real_short_with(p, v, out, n, pm_api__short_scan_swar);
#else
    (void)p, (void)v, (void)out, (void)n;
    return NULL;
#endif
}

#endif
