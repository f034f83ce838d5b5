#include "decimal_short.h"
#include "json_fast.h"

#include <string.h>

const uint64_t pm_api__u10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

typedef unsigned __int128 pm_api__u128;

/* 5^k for k <= 27 (< 2^63): 10^k / 2^k, in two steps past 10^19. */
static uint64_t pm_api__pow5(int k) {
    if (k <= 19) return pm_api__u10[k] >> k;
    return (pm_api__u10[19] >> 19) * (pm_api__u10[k - 19] >> (k - 19));
}

/* The fraction r / den (0 <= r < den) as the rounding rules need it:
 * 0 none, 1 below one half, 2 exactly one half, 3 above. */
static int pm_api__frac_class(pm_api__u128 r, pm_api__u128 den) {
    if (r == 0) return 0;
    pm_api__u128 rest = den - r;
    return r < rest ? 1 : r == rest ? 2 : 3;
}

/* floor(m 2^e 10^k) and the class of what the floor drops, exact in 128
 * bits; false when that does not fit (the caller falls back to printf)
 * or the integer part reaches 2^64. */
static bool pm_api__scale_floor(uint64_t m, int e, int k, uint64_t *n, int *frac) {
    pm_api__u128 v, q, r, den;
    if (k >= 0) {
        if (k > 27) return false;
        v = (pm_api__u128)m * pm_api__pow5(k);   /* < 2^53 * 2^63 */
        int s = e + k;
        if (s >= 0) {
            if (s >= 64 || (v >> (64 - s)) != 0) return false;
            *n = (uint64_t)(v << s);
            *frac = 0;
            return true;
        }
        if (s < -126) return false;
        den = (pm_api__u128)1 << -s;
        q = v >> -s;
        r = v & (den - 1);
    } else {
        if (k < -38 || e < 0 || e > 74) return false;   /* m 2^e < 2^127 */
        v = (pm_api__u128)m << e;
        den = -k <= 19 ? pm_api__u10[-k] : (pm_api__u128)pm_api__u10[19] * pm_api__u10[-k - 19];
        q = v / den;
        r = v - q * den;
    }
    if (q >> 64) return false;
    *n = (uint64_t)q;
    *frac = pm_api__frac_class(r, den);
    return true;
}

uint64_t pm_api__dec_round(uint64_t n, int frac, int p, int *x, bool *exact) {
    uint64_t div = pm_api__u10[17 - p], q = n / div, r = n - q * div;
    int c;   /* the dropped part against one half of the last kept digit */
    if (div == 1) c = frac == 0 ? -2 : frac == 2 ? 0 : frac == 1 ? -1 : 1;
    else if (r == div / 2) c = frac ? 1 : 0;
    else c = r == 0 && !frac ? -2 : r < div / 2 ? -1 : 1;
    *exact = c == -2;
    q += c > 0 || (c == 0 && (q & 1));
    if (q == pm_api__u10[p]) {
        q = pm_api__u10[p - 1];
        (*x)++;
    }
    return q;
}

/* 5^k for k <= 27. */
const uint64_t pm_api__p5[28] = {
    1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull, 1953125ull,
    9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull,
    152587890625ull, 762939453125ull, 3814697265625ull, 19073486328125ull, 95367431640625ull,
    476837158203125ull, 2384185791015625ull, 11920928955078125ull, 59604644775390625ull,
    298023223876953125ull, 1490116119384765625ull, 7450580596923828125ull};

/* The bits of the least double >= 10^j, j = -10 .. 17 (index j + 10). */
const uint64_t pm_api__p10_ceil_bits[28] = {
    0x3ddb7cdfd9d7bdbbull, 0x3e112e0be826d695ull, 0x3e45798ee2308c3aull, 0x3e7ad7f29abcaf49ull,
    0x3eb0c6f7a0b5ed8eull, 0x3ee4f8b588e368f1ull, 0x3f1a36e2eb1c432dull, 0x3f50624dd2f1a9fcull,
    0x3f847ae147ae147bull, 0x3fb999999999999aull, 0x3ff0000000000000ull, 0x4024000000000000ull,
    0x4059000000000000ull, 0x408f400000000000ull, 0x40c3880000000000ull, 0x40f86a0000000000ull,
    0x412e848000000000ull, 0x416312d000000000ull, 0x4197d78400000000ull, 0x41cdcd6500000000ull,
    0x4202a05f20000000ull, 0x42374876e8000000ull, 0x426d1a94a2000000ull, 0x42a2309ce5400000ull,
    0x42d6bcc41e900000ull, 0x430c6bf526340000ull, 0x4341c37937e08000ull, 0x4376345785d8a000ull};

bool pm_api__dec17(double a, uint64_t *digits, int *x, int *frac) {
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);   /* normal: a = m 2^(be - 53) */
    uint64_t m = (bits & ((1ull << 52) - 1)) | 1ull << 52;
    int be = (int)(bits >> 52) - 1022;
    int k = ((be - 1) * 78913) >> 18;   /* floor((be - 1) log10 2): 10^k <= a, or one above */
    if (pm_api__dec17_short(m, be, digits, x, frac)) return true;
    for (int tries = 0; tries < 3; tries++) {
        if (!pm_api__scale_floor(m, be - 53, 16 - k, digits, frac)) return false;
        if (*digits >= pm_api__u10[17]) k++;
        else if (*digits < pm_api__u10[16]) k--;
        else {
            *x = k;
            return true;
        }
    }
    return false;
}

/* ---- reading decimals ---- */

/* pm_api__dec_to_double, inline in the run reader. */
static inline __attribute__((always_inline)) bool pm_api__dec_to_double_inline(uint64_t w, int q,
                                                                             double *d) {
    if (q < PM_API__P10_QMIN || q > PM_API__P10_QMAX) return false;
    const uint64_t *t = pm_api__p10_t[q - PM_API__P10_QMIN];
    int lz = __builtin_clzll(w);
    uint64_t wn = w << lz;
    /* U: the product's top 128 bits (of 192). T is at most one unit below
     * 10^q's leading bits and wn < 2^64, so the exact wn 10^q, in U's
     * units, is in [U, U + 2); U is in [2^126, 2^128). */
    pm_api__u128 a = (pm_api__u128)wn * t[0], b = (pm_api__u128)wn * t[1];
    pm_api__u128 u = a + (b >> 64);
    uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
    int top = (int)(hi >> 63), sh = 10 + top;   /* the 53 bits below U's top bit: hi >> sh */
    uint64_t m = hi >> sh, fh = hi & ((1ull << sh) - 1), half = 1ull << (sh - 1);
    /* The dropped fraction F = fh:lo against one half H = half:0. F + 2 <= H:
     * below one half whatever the error; F > H: above it (or, past a carry
     * into m, just above m + 1: m + 1 either way). F = H - 1 or H: undecided. */
    if ((fh == half && lo == 0) || (fh == half - 1 && lo == UINT64_MAX)) return false;
    m += fh > half || (fh == half && lo != 0);
    int e2 = sh + 128 - lz + pm_api__p10_b[q - PM_API__P10_QMIN];   /* value m 2^e2 */
    if (m >> 53) {
        m >>= 1;
        e2++;
    }
    uint64_t bits = ((uint64_t)(e2 + 1075) << 52) | (m & ((1ull << 52) - 1));
    memcpy(d, &bits, sizeof bits);
    return true;
}

bool pm_api__dec_to_double(uint64_t w, int q, double *d) { return pm_api__dec_to_double_inline(w, q, d); }

#ifdef PM_API_JSON_SWAR
static const double pm_api__p10d[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Digits at *p eight at a time into *w (at most 19 of them in all, *nd
 * counting), *p past them. False past 19 digits or where eight bytes
 * cannot be read. */
static inline __attribute__((always_inline)) bool pm_api__dec_digits8(const char **p,
                                                                      const char *end,
                                                                      uint64_t *w, int *nd) {
    const char *s = *p;
    for (;;) {
        if (end - s < 8) return false;
        uint64_t v;
        memcpy(&v, s, 8);
        int n = pm_api__json_digits8(v);
        if (n) *w = *w * pm_api__u10[n] + pm_api__json_value8(v, n);
        s += n;
        *nd += n;
        if (*nd > 19) return false;
        if (n < 8) break;
    }
    *p = s;
    return true;
}

#if defined(__SSE2__)
#include <emmintrin.h>
/* Loaded at n: bytes 16 - n .. 15 all ones, the others zero. */
static const unsigned char pm_api__dec_keep[32] = {
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

/* pm_api__dec_digits8, sixteen digits at a time (SSE2: x86-64's
 * baseline): a run of n digits is read again as the 16 bytes that end
 * with it, the bytes before it masked to zero, and joined in pairs,
 * fours and eights by three multiply-adds. first: the lowest address
 * that may be read (short of it, and near end, eight at a time). */
static inline __attribute__((always_inline)) bool pm_api__dec_digits(const char **p,
                                                                     const char *end,
                                                                     const char *first,
                                                                     uint64_t *w, int *nd) {
    const char *s = *p;
    const __m128i zero = _mm_set1_epi8('0');
    for (;;) {
        if (end - s < 16) break;
        __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)s), zero);
        __m128i is = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
        int n = __builtin_ctz(~(unsigned)_mm_movemask_epi8(is));   /* 0..16 */
        if (n) {
            if ((size_t)(s - first) + (size_t)n < 16) break;
            __m128i t = n == 16 ? d
                                : _mm_and_si128(
                                      _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + n - 16)), zero),
                                      _mm_loadu_si128((const __m128i *)(const void *)(pm_api__dec_keep + n)));
            const __m128i z = _mm_setzero_si128();
            __m128i two = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(t, z), _mm_set_epi16(1, 10, 1, 10, 1, 10, 1, 10)),
                                          _mm_madd_epi16(_mm_unpackhi_epi8(t, z), _mm_set_epi16(1, 10, 1, 10, 1, 10, 1, 10)));
            __m128i four = _mm_madd_epi16(two, _mm_set_epi16(1, 100, 1, 100, 1, 100, 1, 100));
            four = _mm_packs_epi32(four, four);
            __m128i eight = _mm_madd_epi16(four, _mm_set_epi16(1, 10000, 1, 10000, 1, 10000, 1, 10000));
            uint64_t halves = (uint64_t)_mm_cvtsi128_si64(eight);   /* digits 0-7, 8-15 of the 16 */
            *w = *w * pm_api__u10[n] + (halves & 0xFFFFFFFFu) * 100000000u + (halves >> 32);
        }
        s += n;
        *nd += n;
        if (*nd > 19) return false;
        if (n < 16) {
            *p = s;
            return true;
        }
    }
    *p = s;   /* the rest eight at a time */
    return pm_api__dec_digits8(p, end, w, nd);
}
#else
#define pm_api__dec_digits(p, end, first, w, nd) pm_api__dec_digits8(p, end, w, nd)
#endif

/* One number token at p as pm_api__dec_run takes it: its end, the value
 * in *d; NULL when not taken. */
static inline __attribute__((always_inline)) const char *pm_api__dec_token(const char *p,
                                                                           const char *end,
                                                                           const char *first,
                                                                           double *d) {
    bool neg = p < end && *p == '-';
    p += neg;
    if (p >= end || (unsigned)(*p - '0') > 9) return NULL;
    if (*p == '0' && p + 1 < end && (unsigned)(p[1] - '0') <= 9) return NULL;   /* leading zero */
    uint64_t w = 0;
    int nd = 0, q = 0;
    if (p + 1 < end && p[1] == '.') {   /* one digit before the point, as most reals have */
        w = (uint64_t)(*p++ - '0');
        nd = w != 0;
    } else {
        if (!pm_api__dec_digits(&p, end, first, &w, &nd)) return NULL;
        if (w == 0) nd = 0;   /* "0": no significant digit yet */
    }
    bool real = false;
    if (*p == '.') {   /* p is before end: within the eight bytes last read, or at p[1] */
        real = true;
        const char *f = ++p;
        if (w == 0)
            while (p < end && *p == '0') p++;   /* 0.000ddd: zeros not significant */
        if (!pm_api__dec_digits(&p, end, first, &w, &nd) || p == f) return NULL;
        q = -(int)(p - f);
    }
    if ((*p | 0x20) == 'e') {
        real = true;
        p++;
        bool eneg = p < end && *p == '-';
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || (unsigned)(*p - '0') > 9) return NULL;
        int x = 0;
        for (; p < end && (unsigned)(*p - '0') <= 9; p++)
            if (x < 100000) x = x * 10 + (*p - '0');
        q += eneg ? -x : x;
    }
    double x;
    if (!real) {
        if (w > (1ull << 53)) return NULL;   /* the bulk reader's bound for integers */
        x = (double)w;
    } else if (w == 0) {
        x = 0.0;
    } else if (w < (1ull << 53) && q >= -22 && q <= 22) {
        x = q < 0 ? (double)w / pm_api__p10d[-q] : (double)w * pm_api__p10d[q];   /* one rounding */
    } else if (!pm_api__dec_to_double_inline(w, q, &x)) {
        return NULL;
    }
    *d = (neg ? -x : x) + 0.0;
    return p;
}

size_t pm_api__dec_run(const char **pp, const char *end, unsigned char *out, size_t room) {
    const char *p = *pp, *first = *pp;
    size_t n = 0;
    while (n < room) {
        double d;
        const char *s = pm_api__dec_token(p, end, first, &d);
        if (!s) break;
        if (s < end && *s != ',')
            while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) s++;
        if (s >= end || *s != ',') break;
        s++;
        if (s < end && (unsigned)(*s - '0') > 9)
            while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) s++;
        memcpy(out + n * sizeof d, &d, sizeof d);
        n++;
        p = s;
    }
    *pp = p;
    return n;
}
#else
size_t pm_api__dec_run(const char **pp, const char *end, unsigned char *out, size_t room) {
    (void)pp, (void)end, (void)out, (void)room;
    return 0;
}
#endif
