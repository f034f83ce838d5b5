#ifndef PM_API_FMT_F64_H
#define PM_API_FMT_F64_H
/* Internal to api/: the metadata printer's general case (encode_writer.c's
 * pm_api__fmt_f64), inline: the text of "%.15g", else "%.16g", else
 * "%.17g", the first that strtod reads back, for |d| in [2^-36, 2^51) --
 * where network metadata's non-short values are (turned coordinates,
 * float32 vertices widened, lengths, angles) -- without printf, strtod or
 * a division by a variable.
 *
 * a = m 2^(be - 53) is scaled once by 10^P (P = 16 - x, x = floor(log10
 * a), from the estimate floor((be - 1) log10 2) and one comparison of
 * bits): A = m 5^P / 2^sh is exact in 128 bits, its floor has 17 digits. The numbers that read back as a lie strictly between the
 * midpoints to its neighbours, (2m - 1) 2^(be - 54) and (2m + 1)
 * 2^(be - 54) (the lower one a quarter ulp away at a power of two); scaled
 * the same way they are exact too, and never integers. Each candidate (A
 * rounded to p digits as printf rounds: to nearest, ties to even, on the
 * exact value) is an integer at that scale, so whether it reads back is
 * one exact range test. The 16 digits after the first are made together
 * (SSE2's lanes, else two 8-digit words), which also counts the zeros
 * "%g" drops. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "decimal_short.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PM_API__FMT_SWAR 1
#else
#define PM_API__FMT_SWAR 0   /* the digits' byte order below is little-endian's */
#endif

typedef unsigned __int128 pm_api__fmt_u128;

#if defined(__SSE2__)
#include <emmintrin.h>
/* The 16 digits of hi 10^8 + lo (hi, lo < 10^8, leading zeros included)
 * (pm_api__fmt_digits16v below). The four 4-digit
 * groups go through SSE2's 16-bit lanes together: g / 100 and g % 100,
 * then each of those / 10 and % 10 (multiply-high by 5243 >> 3 and by
 * 6554: exact for g < 10^4 and for values below 100). */
/* v, which the compiler no longer sees as a constant: a multiply by it
 * stays one pmullw instead of the shifts and adds gcc makes of it. */
static inline __m128i pm_api__fmt_opaque(__m128i v) {
    __asm__("" : "+x"(v));
    return v;
}

/* The 16 digits of hi 10^8 + lo as text (leading zeros included) in a
 * register, *tz: how many of them at the end are zeros. */
static inline __m128i pm_api__fmt_digits16v(uint32_t hi, uint32_t lo, int *tz) {
    /* hi and lo in 64-bit lanes; / 10^4 by multiply-high (0xd1b71759 >> 45:
     * exact for every 32-bit value), the quotients and remainders then in
     * 32-bit lanes in text order */
    __m128i x = _mm_unpacklo_epi64(_mm_cvtsi32_si128((int)hi), _mm_cvtsi32_si128((int)lo));
    __m128i gq = _mm_srli_epi64(_mm_mul_epu32(x, _mm_set1_epi32((int)0xd1b71759)), 45);
    __m128i gr = _mm_sub_epi32(x, _mm_mul_epu32(gq, _mm_set1_epi32(10000)));
    __m128i g = _mm_or_si128(gq, _mm_slli_epi64(gr, 32));   /* the four 4-digit groups */
    __m128i h = _mm_srli_epi16(_mm_mulhi_epu16(g, _mm_set1_epi16(5243)), 3);   /* g / 100; 0 in the high halves */
    __m128i l = _mm_sub_epi16(g, _mm_mullo_epi16(h, pm_api__fmt_opaque(_mm_set1_epi16(100))));
    __m128i y = _mm_or_si128(h, _mm_slli_epi32(l, 16));                        /* pairs < 100, in text order */
    __m128i t = _mm_mulhi_epu16(y, _mm_set1_epi16(6554));                     /* y / 10 */
    __m128i u = _mm_sub_epi16(y, _mm_mullo_epi16(t, pm_api__fmt_opaque(_mm_set1_epi16(10))));
    __m128i d = _mm_or_si128(t, _mm_slli_epi16(u, 8));                         /* digit values, in text order */
    unsigned zero = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128()));
    *tz = __builtin_clz((~zero & 0xFFFFu) << 16 | 0x8000u);
    return _mm_or_si128(d, _mm_set1_epi8('0'));
}

#else
/* v < 10^8 as eight digit values 0..9, one per byte, the first digit in
 * the lowest byte (the text's order in memory), leading zeros included. */
static inline uint64_t pm_api__fmt_swar8(uint32_t v) {
    uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;   /* two 4-digit lanes */
    uint64_t h = ((x * 10486) >> 20) & 0x0000007F0000007Full;           /* lane / 100, v < 10^4 */
    x = h | (x - h * 100) << 16;                                        /* four 2-digit lanes */
    uint64_t t = ((x * 103) >> 10) & 0x000F000F000F000Full;             /* lane / 10, v < 100 */
    return t | (x - t * 10) << 8;
}

/* The 16 digits of hi 10^8 + lo (hi, lo < 10^8, leading zeros included)
 * at o; returns how many of them at the end are zeros. */
/* v, which the compiler no longer sees as a constant: a multiply by it
 * stays one pmullw instead of the shifts and adds gcc makes of it. */
static inline __m128i pm_api__fmt_opaque(__m128i v) {
    __asm__("" : "+x"(v));
    return v;
}

static inline int pm_api__fmt_digits16(char *o, uint32_t hi, uint32_t lo) {
    uint64_t xm = pm_api__fmt_swar8(hi), xl = pm_api__fmt_swar8(lo);
    int tz = xl ? __builtin_clzll(xl) >> 3 : xm ? 8 + (__builtin_clzll(xm) >> 3) : 16;
    xm += 0x3030303030303030ull;
    xl += 0x3030303030303030ull;
    memcpy(o, &xm, 8);
    memcpy(o + 8, &xl, 8);
    return tz;
}
#endif

/* The exponent part "%g" writes for decimal exponent x ("e+05", "e-123":
 * a sign and at least two digits); returns its length. */
static inline int pm_api__put_exp10(char *o, int x) {
    int n = 0;
    o[n++] = 'e';
    o[n++] = x < 0 ? '-' : '+';
    int ax = x < 0 ? -x : x;
    if (ax >= 100) o[n++] = (char)('0' + ax / 100);
    o[n++] = (char)('0' + ax / 10 % 10);
    o[n++] = (char)('0' + ax % 10);
    return n;
}

/* The candidate of p digits when A = ai + ar / 2^sh (ai with one or two
 * digits more than p: D = 10^(digits - p) of them dropped): A rounded as
 * printf rounds, to nearest with ties to even, to a multiple of D, at A's
 * scale. R = ai mod D; odd: the parity of ai's p-digit prefix. Rounded up
 * when R plus what breaks the tie at D / 2 (the fraction or an odd prefix,
 * which count only when R is exactly D / 2) passes D / 2. */
static inline __attribute__((always_inline)) uint64_t pm_api__fmt_cand(uint64_t ai, uint64_t R, bool sticky,
                                                                       bool odd, uint64_t D) {
    bool up = R + (sticky | odd) > D / 2;
    return ai - R + (up ? D : 0);
}

/* c ? a : b without a branch (a mask, which the compiler keeps as one):
 * for choices that vary from number to number. */
static inline uint64_t pm_api__fmt_pick(bool c, uint64_t a, uint64_t b) {
    uint64_t mask = 0 - (uint64_t)c;
    __asm__("" : "+r"(mask));
    return b ^ ((a ^ b) & mask);
}

/* The text of a = |d| > 0 with a '-' before it when neg, as
 * pm_api__fmt_f64_ref writes d, into o (32 bytes of room; what is past the
 * returned length is not text); 0 when a is out of the range above (or
 * not a normal double), o then unspecified. */
static inline __attribute__((always_inline)) int pm_api__fmt_f64_exact(char *o, bool neg, double a) {
    if (!PM_API__FMT_SWAR) return 0;
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    uint64_t frac_bits = bits & ((1ull << 52) - 1);
    int ef = (int)(bits >> 52);
    /* ef 987..1073 (a in [2^-36, 2^51)): exactly where P is 0..27 and sh 1..61 */
    if ((unsigned)(ef - 987) > 1073 - 987) return 0;
    uint64_t m = frac_bits | 1ull << 52;
    int be = ef - 1022;                   /* a in [2^(be-1), 2^be) */
    int k = ((be - 1) * 78913) >> 18;    /* floor((be - 1) log10 2): 10^k <= a */
    /* a >= 10^(k+1) (the estimate one too low) by its bits, beside the
     * load of 5^P: the scaling whose floor has 17 digits is the one made.
     * A = a 10^P = m 5^P / 2^sh in [10^16, 10^17); sh is at most 61 (at
     * ef 987 a is below 10^-10: never one too low there). */
    bool up = bits >= pm_api__p10_ceil_bits[k + 11];
    int P0 = 16 - k, sh = 53 - be - P0 + up, x = k + up;   /* x: the decimal exponent of A's first digit */
    uint64_t p5 = pm_api__fmt_pick(up, pm_api__p5[P0 - 1], pm_api__p5[P0]);
    pm_api__fmt_u128 v = (pm_api__fmt_u128)m * p5;   /* < 2^116 */
    /* ai < 2^64: one double-word shift (sh & 63 is sh); ar: what it dropped */
    uint64_t ai = (uint64_t)(v >> (sh & 63)), ar = (uint64_t)v - (ai << sh);
    /* The ends, (2v -+ 5^P) / 2^(sh+1) (or (4v - 5^P) / 2^(sh+2) below a
     * power of two: its lower neighbour is half as far), are ai plus what
     * ar and 5^P make: one word each (ar < 2^sh, 5^P < 2^63, sh <= 61),
     * the lower one signed, floored by the arithmetic shift. Their
     * numerators are odd (5^P is) and sh >= 1: neither end is an integer,
     * so the integers that read back at A's scale are [lb, ui] (lb: the
     * lower end's floor plus one), with no tie for strtod's round-to-even
     * to break. A candidate c reads back when c - lb <= span (unsigned:
     * below lb wraps past it). */
    int pw = frac_bits == 0;
    uint64_t ui = ai + ((2 * ar + p5) >> (sh + 1));
    int64_t lt = (int64_t)((2 * ar) << pw) - (int64_t)p5;
    uint64_t lb = ai + (uint64_t)(lt >> (sh + 1 + pw)) + 1, span = ui - lb;
    /* The first p of 15, 16, 17 that reads back (17 always does), as its
     * candidate c at A's scale (c = q 10^(17 - p), q the p digits printf
     * writes), all three made and the first chosen without a branch (which
     * one it is varies from number to number): one division by a constant
     * gives Q and R for the shortest; the 16-digit prefix is 10 Q + R / 10
     * (10 Q even), so its parity and remainder come from R alone. */
    bool sticky = ar != 0;
    uint64_t Q = ai / 100, R = ai - Q * 100;
    uint32_t R1 = (uint32_t)R / 10;
    uint64_t c15 = pm_api__fmt_cand(ai, R, sticky, Q & 1, 100);
    uint64_t c16 = pm_api__fmt_cand(ai, R - R1 * 10, sticky, R1 & 1, 10);
    uint64_t c17 = ai + (ar + (ai & 1) > 1ull << (sh - 1));   /* the fraction: ties at 2^(sh-1) */
    bool ok15 = c15 - lb <= span, ok16 = c16 - lb <= span;
    uint64_t c = pm_api__fmt_pick(ok15, c15, pm_api__fmt_pick(ok16, c16, c17));
    int p = 17 - (ok15 | ok16) - ok15;
    if (c == 100000000000000000ull) {   /* carried into one more digit */
        c = 10000000000000000ull;
        x++;
    }
    /* the first digit and the two 8-digit words after it, the two
     * divisions side by side */
    uint64_t hi = c / 100000000, lo8 = c - hi * 100000000;
    uint32_t top = (uint32_t)(c / 10000000000000000ull), mid = (uint32_t)(hi - (uint64_t)top * 100000000);
#if defined(__SSE2__)
    /* The text straight into o, by stores only: built in a stack buffer
     * and copied out, each 16-byte load of it straddled the smaller
     * stores just made there (no store forwarding: a stall of a dozen
     * cycles or more per number). The first digit at q; the other 16 (dv,
     * those past q's digits zeros) after it, with the point put in among
     * them in the register: before digit xp of dv (16: no point), the
     * digits from there on one byte later, the last one's byte (at q + 17
     * whatever xp is) from a second store of dv one byte on. */
    int tz;
    __m128i dv = pm_api__fmt_digits16v(mid, (uint32_t)lo8, &tz);
    int nd = 17 - tz;   /* the digits without the trailing zeros (the first is not one) */
    o[0] = '-';
    char *q = o + neg;
    int xp, n;
    if (x < -4 || x >= p) {   /* d.ddde+XX, as "%g" past its fixed range */
        xp = 0;
        n = (nd > 1 ? nd + 1 : 1) + neg;   /* then the exponent, after the stores */
    } else if (x < 0) {   /* 0.000ddd */
        memcpy(q, "0.0000", 6);
        q += 1 - x;
        xp = 16;
        n = neg + 1 - x + nd;
    } else if (x >= nd - 1) {   /* an integer: its digits, then zeros */
        xp = 16;
        n = neg + x + 1;
    } else {   /* ddd.ddd */
        xp = x;
        n = neg + nd + 1;
    }
    __m128i xv = _mm_set1_epi8((char)xp), idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m128i before = _mm_cmpgt_epi8(xv, idx), at = _mm_cmpeq_epi8(xv, idx);
    __m128i y = _mm_or_si128(_mm_or_si128(_mm_and_si128(before, dv), _mm_and_si128(at, _mm_set1_epi8('.'))),
                             _mm_andnot_si128(_mm_or_si128(before, at), _mm_slli_si128(dv, 1)));
    q[0] = (char)('0' + top);
    _mm_storeu_si128((__m128i *)(void *)(q + 2), dv);
    _mm_storeu_si128((__m128i *)(void *)(q + 1), y);
    if (x < -4 || x >= p) n += pm_api__put_exp10(o + n, x);
    return n;
#else
    /* c's 17 digits (those past q's are zeros) at buf[0..17), zeros after;
     * nd: without the trailing zeros (the first digit is not one). */
    char buf[48];
    buf[0] = (char)('0' + top);
    int tz = pm_api__fmt_digits16(buf + 1, mid, (uint32_t)lo8);
    memset(buf + 17, '0', 16);
    const char *dg = buf;
    int nd = 17 - tz;
    char t[80];
    t[0] = '-';
    int n = neg;
    if (x < -4 || x >= p) {   /* d.ddde+XX, as "%g" past its fixed range */
        t[n] = dg[0];
        t[n + 1] = '.';
        memcpy(t + n + 2, dg + 1, 16);
        n += nd > 1 ? nd + 1 : 1;
        n += pm_api__put_exp10(t + n, x);
    } else if (x < 0) {   /* 0.000ddd */
        memcpy(t + n, "0.0000", 6);
        memcpy(t + n + 1 - x, dg, 17);
        n += 1 - x + nd;
    } else if (x >= nd - 1) {   /* an integer: its digits, then zeros */
        memcpy(t + n, dg, 17);   /* dg[nd..] are '0' */
        n += x + 1;
    } else {   /* ddd.ddd */
        memcpy(t + n, dg, 16);
        t[n + x + 1] = '.';
        memcpy(t + n + x + 2, dg + x + 1, 16);
        n += nd + 1;
    }
    memcpy(o, t, 32);
    return n;
#endif
}
#endif
