#ifndef PM_API_JSON_FAST_H
#define PM_API_JSON_FAST_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The fast path of pm_api_parse_body (api/json_fast.c): the document in
 * buf when it is an object that the fast reader takes (arrays of at least
 * PM_API_BULK_PARSE_MIN numbers as bulk arrays; with rows, arrays of
 * equally long short numeric arrays as row blocks, pm_api/rows.h), else
 * NULL: then json_loadb decides, so every error message is jansson's. */
json_t *pm_api__json_fast(const char *buf, size_t len, bool rows);

/* One JSON number token at *p (before end), read as pm_api__json_fast and
 * jansson read it: *is_int for a token with no fraction or exponent (then
 * *i its value), *d the value as a double (reals exactly strtod's). Returns
 * false, *p unspecified, at anything that is not a number jansson takes. */
bool pm_api__json_number(const char **p, const char *end, bool *is_int, int64_t *i, double *d);

/* pm_api__json_number without its short-token path (eight digits at a
 * time): the plain reader the tests hold the short path against. */
bool pm_api__json_number_plain(const char **p, const char *end, bool *is_int, int64_t *i,
                               double *d);

/* A number token as written, for writers that derive its canonical text
 * from its digits (pm_api__canon_real_tok): when plain, the token is
 * -?digits(.digits)? of at most 15 digits and no exponent, w their value
 * (the '.' left out), nint and nfrac the digits before and after the '.'
 * (nfrac 0: none), and digits where they start (after any '-'). */
typedef struct pm_api_numtok {
    const char *digits;
    uint64_t w;
    uint8_t nint, nfrac;
    bool neg, plain;
    bool room16;          /* 16 bytes can be read from digits */
} pm_api_numtok;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PM_API_JSON_SWAR 1
/* How many of the eight bytes of v (the text's first byte lowest) are
 * ASCII digits before the first that is not. A byte of 0xFA or more
 * carries into the next one in the addition, but only past a byte that
 * is already no digit, so the first non-digit is always found. */
static inline __attribute__((always_inline)) int pm_api__json_digits8(uint64_t v) {
    uint64_t t = (v & 0xF0F0F0F0F0F0F0F0ull) |
                 (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4);
    t ^= 0x3333333333333333ull;   /* zero bytes: digits */
    return t ? __builtin_ctzll(t) >> 3 : 8;
}

/* The value of the first n (1..8) digits of v: the other bytes are
 * shifted out (with any borrow they made), then pairs, quads and the two
 * halves are joined in three multiplications. */
static inline __attribute__((always_inline)) uint64_t pm_api__json_value8(uint64_t v, int n) {
    uint64_t d = (v - 0x3030303030303030ull) << (64 - 8 * n);
    d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFull;
    d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFull;
    return (d * 10000 + (d >> 32)) & 0xFFFFFFFFull;
}
#endif

/* pm_api__json_number, the short tokens requests are mostly made of read
 * inline: -?(0|[1-9][0-9]*)(.[0-9]+)? with at most 15 digits and no
 * exponent, whose value w / 10^k is one correctly rounded division of two
 * exact doubles, as pm_api__json_number computes it; *t describes the
 * token. Where eight bytes can be read at each part, its digits are taken
 * eight at a time. Anything else is read by pm_api__json_number from the
 * start of the token (t->plain false). */
static inline __attribute__((always_inline)) bool
pm_api__json_number_tok(const char **pp, const char *end, bool *is_int, int64_t *i, double *d,
                        pm_api_numtok *t) {
    static const double p10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *p = *pp;
    bool neg = p < end && *p == '-';
    p += neg;
    const char *first = p;
    uint64_t w = 0;   /* wraps past 19 digits: such tokens are not taken here */
    size_t nint, nfrac = 0;
#ifdef PM_API_JSON_SWAR
    uint64_t v8;
    int n8;
    if (end - p >= 8) {
        /* Up to 7 digits, then (when a '.' follows) up to 7 more; a run of
         * eight is a long token: the full reader's at once. */
        memcpy(&v8, p, 8);
        n8 = pm_api__json_digits8(v8);
        if (n8 == 8) goto full;
        w = n8 ? pm_api__json_value8(v8, n8) : 0;
        nint = (size_t)n8;
        p += n8;
        if (*p == '.') {
            const char *f = ++p;
            if (end - f >= 8) {
                static const uint64_t u10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
                memcpy(&v8, f, 8);
                n8 = pm_api__json_digits8(v8);
                if (n8 == 8) goto full;
                if (n8) w = w * u10[n8] + pm_api__json_value8(v8, n8);
                p = f + n8;
            } else {
                while (p < end && (unsigned)(*p - '0') <= 9) w = w * 10 + (uint64_t)(*p++ - '0');
            }
            nfrac = (size_t)(p - f);
            if (!nfrac) nint = 0;   /* "1." : not a number */
        }
    } else
#endif
    {
        while (p < end && (unsigned)(*p - '0') <= 9) w = w * 10 + (uint64_t)(*p++ - '0');
        nint = (size_t)(p - first);
        if (p < end && *p == '.') {
            const char *f = ++p;
            while (p < end && (unsigned)(*p - '0') <= 9) w = w * 10 + (uint64_t)(*p++ - '0');
            nfrac = (size_t)(p - f);
            if (!nfrac) nint = 0;   /* "1." : not a number */
        }
    }
    if (nint == 0 || (nint > 1 && *first == '0') || nint + nfrac > 15 ||
        (p < end && (*p == 'e' || *p == 'E'))) {
#ifdef PM_API_JSON_SWAR
    full:
#endif
        t->plain = false;
        return pm_api__json_number(pp, end, is_int, i, d);
    }
    *t = (pm_api_numtok){.digits = first, .w = w, .nint = (uint8_t)nint, .nfrac = (uint8_t)nfrac,
                         .neg = neg, .plain = true, .room16 = end - first >= 16};
    *pp = p;
    *is_int = nfrac == 0;
    if (*is_int) {
        *i = neg ? -(int64_t)w : (int64_t)w;
        *d = (double)*i;
        return true;
    }
    *i = 0;
    double x = w ? (double)w / p10[nfrac] : 0.0;
    *d = neg ? -x : x;
    return true;
}

/* pm_api__json_number_tok without the token's description. */
static inline __attribute__((always_inline)) bool
pm_api__json_number_short(const char **pp, const char *end, bool *is_int, int64_t *i, double *d) {
    pm_api_numtok t;
    return pm_api__json_number_tok(pp, end, is_int, i, d, &t);
}
#endif
