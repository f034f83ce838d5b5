#ifndef PM_API_JSON_FAST_H
#define PM_API_JSON_FAST_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* pm_api__json_number, the short tokens requests are mostly made of read
 * inline: -?(0|[1-9][0-9]*)(.[0-9]+)? with at most 15 digits and no
 * exponent, whose value w / 10^k is one correctly rounded division of two
 * exact doubles, as pm_api__json_number computes it. Anything else is
 * read by pm_api__json_number from the start of the token. */
static inline bool pm_api__json_number_short(const char **pp, const char *end, bool *is_int,
                                             int64_t *i, double *d) {
    static const double p10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *p = *pp;
    bool neg = p < end && *p == '-';
    p += neg;
    const char *first = p;
    uint64_t w = 0;   /* wraps past 19 digits: such tokens are not taken here */
    while (p < end && (unsigned)(*p - '0') <= 9) w = w * 10 + (uint64_t)(*p++ - '0');
    size_t nint = (size_t)(p - first), nfrac = 0;
    if (p < end && *p == '.') {
        const char *f = ++p;
        while (p < end && (unsigned)(*p - '0') <= 9) w = w * 10 + (uint64_t)(*p++ - '0');
        nfrac = (size_t)(p - f);
        if (!nfrac) nint = 0;   /* "1." : not a number */
    }
    if (nint == 0 || (nint > 1 && *first == '0') || nint + nfrac > 15 ||
        (p < end && (*p == 'e' || *p == 'E')))
        return pm_api__json_number(pp, end, is_int, i, d);
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
#endif
