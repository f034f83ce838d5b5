#include "json_fast.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "pm_api/bulk.h"
#include "pm_api/rows.h"

/* A strict JSON reader for request bodies, about 20x faster than
 * json_loadb on large numeric arrays: arrays of numbers become bulk arrays
 * (pm_api/bulk.h), one block of doubles instead of a node per number.
 *
 * It accepts a subset of what json_loadb(JSON_REJECT_DUPLICATES) accepts
 * and builds the same tree for it. Anything outside the subset (every
 * error, a duplicate key, \u escapes, deep nesting, a top level that is not
 * an object, integers beyond int64, reals that overflow) makes it give up,
 * and the caller runs jansson, whose tree or error message (with line and
 * column) is then the answer: errors read exactly as before. */

#define PM_JF_MAX_DEPTH 64
#define PM_JF_EXACT_INT 9007199254740992.0 /* 2^53 */

typedef struct pm_jf {
    const char *p, *end;
    int depth;
    char *scratch;          /* bulk array being read: tag space + doubles */
    size_t cap;             /* doubles scratch holds */
    char *sbuf;             /* unescaped string */
    size_t scap;
    bool rows;              /* arrays of short numeric arrays as row blocks */
} pm_jf;

static json_t *pm_jf__value(pm_jf *j);

static void pm_jf__ws(pm_jf *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

/* ---- numbers ---- */

static const double pm_jf__p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

typedef struct pm_jf_num {
    bool is_int;
    int64_t i;    /* is_int */
    double d;     /* the value as a double (also for integers) */
} pm_jf_num;

/* strtod of the token [s, e): the exact fallback of the fast path. */
static bool pm_jf__strtod(const char *s, const char *e, double *out) {
    char small[64], *buf = small;
    size_t n = (size_t)(e - s);
    if (n >= sizeof small && !(buf = malloc(n + 1))) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end);
    bool ok = end == buf + n && isfinite(*out);   /* overflow: jansson's error */
    if (buf != small) free(buf);
    return ok;
}

typedef unsigned __int128 pm_jf_u128;

static const uint64_t pm_jf__u10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

static int pm_jf__bits(pm_jf_u128 q) {
    uint64_t hi = (uint64_t)(q >> 64);
    return hi ? 128 - __builtin_clzll(hi) : q ? 64 - __builtin_clzll((uint64_t)q) : 0;
}

/* q 2^e2 (plus less than one unit of q when sticky) rounded to the
 * nearest double, ties to even: the rounding strtod does. The callers keep
 * the result well inside the normal range. */
static double pm_jf__round(pm_jf_u128 q, int e2, bool sticky) {
    int nb = pm_jf__bits(q);
    if (nb <= 53) return ldexp((double)(uint64_t)q, e2);   /* exact (sticky is 0 here) */
    int shift = nb - 53;
    uint64_t m = (uint64_t)(q >> shift);
    pm_jf_u128 rem = q & (((pm_jf_u128)1 << shift) - 1), half = (pm_jf_u128)1 << (shift - 1);
    if (rem > half || (rem == half && (sticky || (m & 1)))) m++;
    return ldexp((double)m, e2 + shift);   /* m == 2^53 after a carry is exact too */
}

/* w 10^e10 (w < 10^19 exactly, |e10| <= 19) correctly rounded, with exact
 * 128-bit integer arithmetic: a product, or a quotient of at least 63 bits
 * whose remainder decides ties. */
static double pm_jf__exact(uint64_t w, int e10) {
    if (e10 >= 0) return pm_jf__round((pm_jf_u128)w * pm_jf__u10[e10], 0, false);
    int s = 127 - pm_jf__bits(w);
    pm_jf_u128 num = (pm_jf_u128)w << s, d = pm_jf__u10[-e10];
    return pm_jf__round(num / d, -s, num % d != 0);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PM_JF_SWAR 1
/* The short tokens requests are made of, -?(0|[1-9][0-9]{0,6})(.[0-9]{1,7})?
 * not followed by an exponent, with eight bytes to read at each part:
 * their digits eight at a time, and the value as pm_jf__number's slow
 * path gives it (integers as they are; reals w / 10^f, one correctly
 * rounded division of exact doubles, w < 10^14). False, nothing read,
 * for anything else. */
static inline __attribute__((always_inline)) bool pm_jf__number_short_inline(pm_jf *j,
                                                                              pm_jf_num *out) {
    const char *p = j->p, *e = j->end;
    bool neg = p < e && *p == '-';
    p += neg;
    if (e - p < 8) return false;
    uint64_t v;
    memcpy(&v, p, 8);
    int n = pm_api__json_digits8(v);
    if (n == 0 || n == 8 || (n > 1 && *p == '0')) return false;
    uint64_t w = pm_api__json_value8(v, n);
    p += n;
    if (*p != '.') {
        if (*p == 'e' || *p == 'E') return false;
        out->is_int = true;
        out->i = neg ? -(int64_t)w : (int64_t)w;
        out->d = (double)out->i;
        j->p = p;
        return true;
    }
    p++;
    if (e - p < 8) return false;
    memcpy(&v, p, 8);
    n = pm_api__json_digits8(v);
    if (n == 0 || n == 8) return false;
    w = w * pm_jf__u10[n] + pm_api__json_value8(v, n);
    p += n;
    if (*p == 'e' || *p == 'E') return false;
    double d = (double)w / pm_jf__p10[n];
    out->is_int = false;
    out->d = neg ? -d : d;
    j->p = p;
    return true;
}

static bool pm_jf__number_short(pm_jf *j, pm_jf_num *out) {
    return pm_jf__number_short_inline(j, out);
}
#endif

/* One number token (JSON grammar exactly). Reals are exactly strtod's:
 * up to 19 significant digits with a decimal exponent within 19 are
 * rounded exactly in integer arithmetic (the short ones, within 2^53 and
 * 10^22, by one exact double operation); anything else goes to strtod. */
static bool pm_jf__number_plain(pm_jf *j, pm_jf_num *out) {
    const char *s = j->p, *p = j->p, *e = j->end;
    bool neg = p < e && *p == '-';
    p += neg;
    if (p >= e || (unsigned)(*p - '0') > 9) return false;
    uint64_t w = 0;
    int digits = 0, exp10 = 0;
    if (*p == '0') {
        p++;
        if (p < e && (unsigned)(*p - '0') <= 9) return false;   /* leading zero */
    } else {
        for (; p < e && (unsigned)(*p - '0') <= 9 && digits < 19; p++)
            w = w * 10 + (uint64_t)(*p - '0'), digits++;
        for (; p < e && (unsigned)(*p - '0') <= 9; p++) digits++, exp10++;
    }
    bool real = false;
    if (p < e && *p == '.') {
        real = true;
        p++;
        if (p >= e || (unsigned)(*p - '0') > 9) return false;
        if (w == 0)   /* leading zeros of 0.00ddd are not significant */
            for (; p < e && *p == '0'; p++) exp10--;
        const char *f = p;
        for (; p < e && (unsigned)(*p - '0') <= 9 && digits < 19; p++)
            w = w * 10 + (uint64_t)(*p - '0'), digits++;
        exp10 -= (int)(p - f);
        for (; p < e && (unsigned)(*p - '0') <= 9; p++) digits++;   /* past 19: strtod */
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        real = true;
        p++;
        bool eneg = false;
        if (p < e && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= e || (unsigned)(*p - '0') > 9) return false;
        int x = 0;
        for (; p < e && (unsigned)(*p - '0') <= 9; p++)
            if (x < 100000) x = x * 10 + (*p - '0');
        exp10 += eneg ? -x : x;
    }
    j->p = p;
    if (!real) {
        if (digits > 18) {   /* maybe beyond int64: strtoll decides, as jansson */
            char buf[32];
            size_t n = (size_t)(p - s);
            if (n >= sizeof buf) return false;
            memcpy(buf, s, n);
            buf[n] = '\0';
            errno = 0;
            long long v = strtoll(buf, NULL, 10);
            if (errno == ERANGE) return false;
            out->i = v;
        } else {
            out->i = neg ? -(int64_t)w : (int64_t)w;
        }
        out->is_int = true;
        out->d = (double)out->i;
        return true;
    }
    out->is_int = false;
    if (digits <= 19 && w == 0) {
        out->d = neg ? -0.0 : 0.0;
    } else if (digits <= 19 && w < (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)w;
        d = exp10 < 0 ? d / pm_jf__p10[-exp10] : d * pm_jf__p10[exp10];
        out->d = neg ? -d : d;
    } else if (digits <= 19 && exp10 >= -19 && exp10 <= 19) {
        double d = pm_jf__exact(w, exp10);
        out->d = neg ? -d : d;
    } else if (!pm_jf__strtod(s, p, &out->d)) {
        return false;
    }
    return true;
}

/* pm_jf__number_plain, the short tokens first read by
 * pm_jf__number_short. */
static bool pm_jf__number(pm_jf *j, pm_jf_num *out) {
#ifdef PM_JF_SWAR
    if (pm_jf__number_short(j, out)) return true;
#endif
    return pm_jf__number_plain(j, out);
}

static bool pm_api__json_number_with(bool (*read)(pm_jf *, pm_jf_num *), const char **p,
                                     const char *end, bool *is_int, int64_t *i, double *d) {
    pm_jf j = {.p = *p, .end = end};
    pm_jf_num x;
    if (!read(&j, &x)) return false;
    *p = j.p;
    *is_int = x.is_int;
    *i = x.is_int ? x.i : 0;
    *d = x.d;
    return true;
}

bool pm_api__json_number(const char **p, const char *end, bool *is_int, int64_t *i, double *d) {
    return pm_api__json_number_with(pm_jf__number, p, end, is_int, i, d);
}

bool pm_api__json_number_plain(const char **p, const char *end, bool *is_int, int64_t *i,
                               double *d) {
    return pm_api__json_number_with(pm_jf__number_plain, p, end, is_int, i, d);
}

/* ---- strings ---- */

/* Length of the valid UTF-8 sequence at s (as jansson accepts it: no
 * overlongs, no surrogates, at most U+10FFFF), or 0. */
static size_t pm_jf__utf8(const unsigned char *s, const unsigned char *e) {
    unsigned c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
    else return 0;
    if ((size_t)(e - s) < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static bool pm_jf__sput(pm_jf *j, size_t *len, char c) {
    if (*len == j->scap) {
        size_t cap = j->scap ? 2 * j->scap : 256;
        char *b = realloc(j->sbuf, cap);
        if (!b) return false;
        j->sbuf = b;
        j->scap = cap;
    }
    j->sbuf[(*len)++] = c;
    return true;
}

/* A string token (j->p at the opening quote). *s, *n: its bytes, either in
 * the input (no escapes) or in j->sbuf. \u escapes are left to jansson. */
static bool pm_jf__string(pm_jf *j, const char **s, size_t *n) {
    const unsigned char *p = (const unsigned char *)j->p + 1, *e = (const unsigned char *)j->end;
    const unsigned char *start = p;
    bool escaped = false;
    size_t len = 0;
    while (p < e && *p != '"') {
        if (*p < 0x20) return false;
        if (*p == '\\') {
            if (!escaped) {
                escaped = true;
                for (const unsigned char *q = start; q < p; q++)
                    if (!pm_jf__sput(j, &len, (char)*q)) return false;
            }
            if (p + 1 >= e) return false;
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *k = memchr(from, p[1], sizeof from - 1);
            if (!k || !pm_jf__sput(j, &len, to[k - from])) return false;
            p += 2;
            continue;
        }
        size_t u = pm_jf__utf8(p, e);
        if (!u) return false;
        for (size_t i = 0; escaped && i < u; i++)
            if (!pm_jf__sput(j, &len, (char)p[i])) return false;
        p += u;
    }
    if (p >= e) return false;
    j->p = (const char *)p + 1;
    *s = escaped ? j->sbuf : (const char *)start;
    *n = escaped ? len : (size_t)(p - start);
    return true;
}

/* ---- containers ---- */

/* After a member or element: 1 at ',' (then at the next token), 0 at the
 * closing bracket (consumed), -1 at anything else. */
static inline __attribute__((always_inline)) int pm_jf__after(pm_jf *j, char close) {
    const char *p = j->p, *e = j->end;
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    int r = -1;
    if (p < e && *p == ',') {
        p++;
        while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
        r = 1;
    } else if (p < e && *p == close) {
        p++;
        r = 0;
    }
    j->p = p;
    return r;
}

static json_t *pm_jf__object(pm_jf *j) {
    json_t *o = json_object();
    j->p++;
    pm_jf__ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return o;
    }
    while (o) {
        const char *k;
        size_t kn;
        if (j->p >= j->end || *j->p != '"' || !pm_jf__string(j, &k, &kn)) break;
        /* jansson keys are C strings: a key with NUL is left to it, as is a
         * duplicate (its message names the key, line and column). */
        if (memchr(k, '\0', kn)) break;
        char kbuf[128], *key = kn < sizeof kbuf ? kbuf : malloc(kn + 1);
        if (!key) break;
        memcpy(key, k, kn);
        key[kn] = '\0';
        pm_jf__ws(j);
        json_t *v = NULL;
        if (j->p < j->end && *j->p == ':') {
            j->p++;
            pm_jf__ws(j);
            v = pm_jf__value(j);
        }
        /* A duplicate replaces the earlier member: the size then does not
         * grow, which finds it without a lookup per member. */
        size_t before = json_object_size(o);
        int r = v ? json_object_setn_new_nocheck(o, key, kn, v) : -1;
        if (key != kbuf) free(key);
        if (r < 0 || json_object_size(o) == before) break;
        int next = pm_jf__after(j, '}');
        if (next == 0) return o;
        if (next < 0) break;
    }
    json_decref(o);
    return NULL;
}

/* Room for at least want doubles (at least double the current room). */
static bool pm_jf__grow(pm_jf *j, size_t want) {
    size_t cap = j->cap ? 2 * j->cap : 4096;
    if (cap < want) cap = want;
    char *b = realloc(j->scratch, PM_API_BULK_TAG_LEN + cap * sizeof(double));
    if (!b) return false;
    j->scratch = b;
    j->cap = cap;
    return true;
}

/* An array that starts with a number is tried as a bulk array: numbers
 * only, integers within 2^53 (so a real holds them exactly, and the
 * readers treat them alike). Returns the bulk array, or a plain array of
 * integer and real nodes when it is shorter than PM_API_BULK_PARSE_MIN,
 * or NULL with j->p back at the '[' when it holds anything else (the
 * generic path then reads it). */
static json_t *pm_jf__bulk(pm_jf *j) {
    const char *open = j->p;
    pm_jf_num first[PM_API_BULK_PARSE_MIN];
    size_t n = 0;
    /* A numeric array ends at the first ']' and holds at most one number
     * per two bytes: one allocation, no copies while it grows. */
    const char *close = memchr(j->p, ']', (size_t)(j->end - j->p));
    size_t bound = close ? (size_t)(close - j->p) / 2 + 1 : 0;
    if (bound > j->cap && bound > PM_API_BULK_PARSE_MIN && !pm_jf__grow(j, bound)) return NULL;
    j->p++;
    for (;;) {
        pm_jf__ws(j);
        if (n >= PM_API_BULK_PARSE_MIN)   /* past the head: runs of numbers at once (decimal.h) */
            n += pm_api__dec_run(&j->p, j->end,
                                 (unsigned char *)j->scratch + PM_API_BULK_TAG_LEN + n * sizeof(double),
                                 j->cap - n);
        pm_jf_num x;
        if (!pm_jf__number(j, &x) || (x.is_int && !(fabs(x.d) <= PM_JF_EXACT_INT))) break;
        if (n == j->cap && !pm_jf__grow(j, 0)) break;
        /* -0 stored as 0: every reader makes it 0, and a canonical bulk
         * array can then share these bytes instead of copying them. */
        double d = x.d + 0.0;
        memcpy(j->scratch + PM_API_BULK_TAG_LEN + n * sizeof(double), &d, sizeof d);
        if (n < PM_API_BULK_PARSE_MIN) first[n] = x;
        n++;
        pm_jf__ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p >= j->end || *j->p != ']') break;
        j->p++;
        if (n >= PM_API_BULK_PARSE_MIN) return pm_api_bulk_adopt(j->scratch, n);
        json_t *a = json_array();   /* short: integer and real nodes as jansson makes */
        for (size_t i = 0; a && i < n; i++) {
            json_t *v = first[i].is_int ? json_integer(first[i].i) : json_real(first[i].d);
            if (json_array_append_new(a, v) < 0) {
                json_decref(a);
                a = NULL;
            }
        }
        if (a) return a;
        break;
    }
    j->p = open;
    return NULL;
}

/* One number of a bulk array or row block (integers within 2^53), -0 as
 * 0; false at anything else. */
static bool pm_jf__bulk_number(pm_jf *j, double *d) {
    pm_jf_num x;
#ifdef PM_JF_SWAR
    if (pm_jf__number_short_inline(j, &x)) {   /* within 2^53 */
        *d = x.d + 0.0;
        return true;
    }
#endif
    if (!pm_jf__number_plain(j, &x) || (x.is_int && !(fabs(x.d) <= PM_JF_EXACT_INT))) return false;
    *d = x.d + 0.0;
    return true;
}

/* An array that starts with '[' and a number, when row blocks are on, is
 * tried as one (pm_api/rows.h): every element an array of the same count
 * (1 .. PM_API_ROWS_MAX_COLS) of bulk numbers. Returns the row block, or
 * NULL with j->p back at the '[' (the generic path then reads it). The
 * scratch holds the head in its first two doubles' room. */
static json_t *pm_jf__rows(pm_jf *j) {
    const char *open = j->p;
    size_t n = 0, cols = 0, have = 0;   /* values, columns, values in this row */
    const size_t head = PM_API_ROWS_HEAD - PM_API_BULK_TAG_LEN;   /* in the scratch's doubles */
    j->p++;
    for (;;) {
        pm_jf__ws(j);
        if (j->p >= j->end || *j->p != '[') break;
        j->p++;
        have = 0;
        for (;;) {
            pm_jf__ws(j);
            double d;
            if (have == PM_API_ROWS_MAX_COLS || !pm_jf__bulk_number(j, &d)) goto fail;
            if (head / sizeof(double) + n + 1 > j->cap &&
                !pm_jf__grow(j, head / sizeof(double) + n + 1))
                goto fail;
            memcpy(j->scratch + PM_API_ROWS_HEAD + n * sizeof d, &d, sizeof d);
            n++, have++;
            int next = pm_jf__after(j, ']');
            if (next > 0) continue;
            if (next < 0) goto fail;
            break;
        }
        if (cols == 0) cols = have;
        if (have != cols) break;
        int next = pm_jf__after(j, ']');
        if (next > 0) continue;
        if (next < 0) break;
        json_t *r = pm_api_rows_adopt(j->scratch, n / cols, cols);
        if (r) return r;
        break;
    }
fail:
    j->p = open;
    return NULL;
}

static json_t *pm_jf__array(pm_jf *j) {
    const char *q = j->p + 1;
    while (q < j->end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) q++;
    if (q < j->end && (*q == '-' || (unsigned)(*q - '0') <= 9)) {
        json_t *b = pm_jf__bulk(j);
        if (b) return b;
    }
    if (j->rows && q < j->end && *q == '[') {
        json_t *b = pm_jf__rows(j);
        if (b) return b;
    }
    json_t *a = json_array();
    j->p++;
    pm_jf__ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return a;
    }
    while (a) {
        json_t *v = pm_jf__value(j);
        if (!v || json_array_append_new(a, v) < 0) break;
        int next = pm_jf__after(j, ']');
        if (next == 0) return a;
        if (next < 0) break;
    }
    json_decref(a);
    return NULL;
}

static bool pm_jf__word(pm_jf *j, const char *w, size_t n) {
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0) return false;
    j->p += n;
    return true;
}

static json_t *pm_jf__value(pm_jf *j) {
    if (j->p >= j->end) return NULL;
    json_t *v = NULL;
    switch (*j->p) {
    case '{':
    case '[':
        if (++j->depth > PM_JF_MAX_DEPTH) return NULL;
        v = *j->p == '{' ? pm_jf__object(j) : pm_jf__array(j);
        j->depth--;
        return v;
    case '"': {
        const char *s;
        size_t n;
        if (!pm_jf__string(j, &s, &n) || memchr(s, '\0', n)) return NULL;
        return json_stringn_nocheck(s, n);
    }
    case 't': return pm_jf__word(j, "true", 4) ? json_true() : NULL;
    case 'f': return pm_jf__word(j, "false", 5) ? json_false() : NULL;
    case 'n': return pm_jf__word(j, "null", 4) ? json_null() : NULL;
    default: {
        pm_jf_num x;
        if (!pm_jf__number(j, &x)) return NULL;
        return x.is_int ? json_integer(x.i) : json_real(x.d);
    }
    }
}

json_t *pm_api__json_fast(const char *buf, size_t len, bool rows) {
    pm_jf j = {.p = buf, .end = buf + len, .rows = rows};
    pm_jf__ws(&j);
    json_t *doc = NULL;
    if (j.p < j.end && *j.p == '{') {
        doc = pm_jf__value(&j);
        pm_jf__ws(&j);
        if (doc && j.p != j.end) {
            json_decref(doc);
            doc = NULL;
        }
    }
    free(j.scratch);
    free(j.sbuf);
    return doc;
}
