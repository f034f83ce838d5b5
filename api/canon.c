#include "pm_api/key.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "canon_short.h"
#include "canon_text.h"
#include "pm_api/bulk.h"
#include "pm_api/rows.h"

/* The canonical form's bytes are what the cache key hashes, and keys
 * already issued must not change: the output is jansson's own (sorted
 * keys, compact, reals as "%.17g" plus jansson's touch-ups), byte for
 * byte. Reals are written here, because glibc's printf of a double costs
 * ~0.4 us and a request can carry 10^6 of them (inline terrain heights);
 * so are integers, literals and the strings and keys that need no escape
 * (jansson's dump of one costs an allocation and a callback per token).
 * Strings with escapes, and reals outside the exact path, go through
 * jansson itself.
 *
 * The one exception is a bulk array (pm_api/bulk.h), which pm_api_vec
 * makes of long numeric arrays: it is written as an 8-byte tag (its first
 * byte, 0xFF, never occurs in JSON text, so the stream stays unambiguous),
 * the count as 8 little-endian bytes, and the values' own bytes: float32
 * under pm_api_bulk_tag_f32 when every value is one, else doubles under
 * pm_api_bulk_tag (pm_api/bulk.h). A row block (pm_api/rows.h: a road's
 * points) is written in binary too, after its own tag. */

#define PM_API__DUMP_BUF 4096
#define PM_API__MAX_DEPTH 256 /* canonical forms are shallow; a cycle ends here */

/* Output batched into large blocks: one hash update per block, not one per
 * token. */
#define PM_API__MEMO 256   /* longest memoised object text */

typedef struct pm_api__out {
    json_dump_callback_t cb;
    void *data;
    size_t len;
    int err;
    unsigned long flushes;     /* bytes that left buf: a text that spans one is not memoised */
    const json_t *memo;        /* the last shared object written, and its text */
    size_t memo_len;
    char memo_buf[PM_API__MEMO];
    char buf[PM_API__DUMP_BUF];
} pm_api__out;

static int pm_api__flush(pm_api__out *o) {
    o->flushes++;
    if (o->len && !o->err && o->cb(o->buf, o->len, o->data) != 0) o->err = -1;
    o->len = 0;
    return o->err;
}

static int pm_api__emit(const char *s, size_t n, void *data) {
    pm_api__out *o = data;
    if (o->len + n > sizeof o->buf && pm_api__flush(o) < 0) return -1;
    if (n > sizeof o->buf) {
        o->flushes++;
        return o->cb(s, n, o->data) != 0 ? (o->err = -1) : 0;
    }
    if (n == 1) o->buf[o->len] = *s;   /* brackets and commas: no call */
    else memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

/* ---- "%.17g" of a double, exactly as glibc rounds it ---- */

/* Writes x as jansson writes a real at precision 17 ("%.17g"; ".0" added
 * when there is neither '.' nor 'e'; no '+' or leading zeros in the
 * exponent), with -0 as 0. Returns the length, or 0 when x is outside the
 * fast path (zero excepted: subnormal, tiny, huge, non-finite). out has
 * room for PM_API__REAL_ROOM bytes (whole blocks are copied past the end). */
#define PM_API__REAL_ROOM 40
static size_t pm_api__real17(double x, char *out) {
    char *o = out;
    if (x == 0) {
        memcpy(out, "0.0", 3);
        return 3;
    }
    if (!isnormal(x)) return 0;
    /* Integers below 10^15 (grid towns, widths, segments): "%.17g" writes
     * their digits with no point, so jansson adds ".0". */
    double ax = fabs(x);
    if (ax < 1e15 && ax == (double)(uint64_t)ax) {
        char tmp[40] = {0}, *e = tmp + 16, *b = e;   /* digits end at e, ".0" follows */
        uint64_t u = (uint64_t)ax;
        do *--b = (char)('0' + u % 10);
        while ((u /= 10) != 0);
        memcpy(e, ".0", 2);
        if (x < 0) *o++ = '-';
        memcpy(o, b, 20);   /* fixed size: out and tmp have the room */
        return (size_t)(o + (e + 2 - b) - out);
    }
    uint64_t d, bits;
    int k, frac;
    memcpy(&bits, &ax, sizeof bits);   /* normal */
    if (!pm_api__dec17_short((bits & ((1ull << 52) - 1)) | 1ull << 52, (int)(bits >> 52) - 1022, &d,
                             &k, &frac) &&
        !pm_api__dec17(ax, &d, &k, &frac))
        return 0;
    d += frac == 3 || (frac == 2 && (d & 1));   /* 17 digits: to nearest, ties to even */
    if (d == pm_api__u10[17]) {
        d = pm_api__u10[16];
        k++;
    }
    char dig[40];   /* 17 digits, then '0's: the copies below are of fixed size */
    memset(dig + 17, '0', sizeof dig - 17);
    uint64_t lead = d / pm_api__u10[16], rest = d - lead * pm_api__u10[16];
    uint64_t high = rest / 100000000u;
    uint64_t b1 = pm_api__digits8((uint32_t)high), b2 = pm_api__digits8((uint32_t)(rest - high * 100000000u));
    dig[0] = (char)('0' + lead);
    /* The last nonzero digit: the highest nonzero byte of the second
     * eight, else of the first, else the lead digit. */
    int nd = b2 ? 17 - (__builtin_clzll(b2) >> 3) : b1 ? 9 - (__builtin_clzll(b1) >> 3) : 1;
    b1 += 0x3030303030303030ull;
    b2 += 0x3030303030303030ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    b1 = __builtin_bswap64(b1);
    b2 = __builtin_bswap64(b2);
#endif
    memcpy(dig + 1, &b1, 8);
    memcpy(dig + 9, &b2, 8);
    if (x < 0) *o++ = '-';
    if (k >= 0 && k < 17) { /* "%f" style: integer digits, then the rest */
        memcpy(o, dig, 17);   /* the digits past nd are '0' */
        o += k + 1;
        *o++ = '.';
        if (nd > k + 1) {
            memcpy(o, dig + k + 1, 16);
            o += nd - k - 1;
        } else {
            *o++ = '0';
        }
    } else if (k < 0 && k >= -4) { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = -1; i > k; i--) *o++ = '0';
        memcpy(o, dig, 17);
        o += nd;
    } else { /* "%e" style: d.ddde-5, d.ddde17 */
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, dig + 1, 16);
            o += nd - 1;
        }
        *o++ = 'e';
        if (k < 0) *o++ = '-';
        int ak = abs(k);
        if (ak >= 100) *o++ = (char)('0' + ak / 100);
        if (ak >= 10) *o++ = (char)('0' + ak / 10 % 10);
        *o++ = (char)('0' + ak % 10);
    }
    return (size_t)(o - out);
}

const char pm_api__canon_text_tag[PM_API_CANON_TEXT_TAG_LEN] = {'\xff', 'p', 'm', 'c',
                                                                  'a', 'n', 'o', 'n'};

bool pm_api__canon_text_is(const json_t *j) {
    return json_is_string(j) && json_string_length(j) >= PM_API_CANON_TEXT_TAG_LEN &&
           memcmp(json_string_value(j), pm_api__canon_text_tag, PM_API_CANON_TEXT_TAG_LEN) == 0;
}

size_t pm_api__canon_real_text(double x, char *out) {
    _Static_assert(PM_API_CANON_REAL_ROOM >= PM_API__REAL_ROOM, "room for a real");
    size_t n = pm_api__real17(x, out);
    if (n) return n;
    json_t *j = json_real(x);   /* outside the exact path: jansson's own text */
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    n = t ? strlen(t) : 0;
    if (n > PM_API_CANON_REAL_ROOM) n = 0;
    if (n) memcpy(out, t, n);
    free(t);
    return n;
}

size_t pm_api__canon_real_tok(double x, const pm_api_numtok *t, char *out) {
    if (x == 0) {
        memcpy(out, "0.0", 3);
        return 3;
    }
    if (!t->plain || !isnormal(x)) return pm_api__canon_real_text(x, out);
    char *o = out;
    *o = '-';
    o += t->neg;
    size_t len = t->nint + (t->nfrac ? 1u + t->nfrac : 0u);   /* at most 16 */
    if (t->room16) memcpy(o, t->digits, 16);   /* fixed size: no call */
    else memcpy(o, t->digits, len);
    if (!t->nfrac) {   /* an integer below 10^15: its digits, then ".0" */
        memcpy(o + len, ".0", 2);
        return (size_t)(o - out) + len + 2;
    }
    /* w has nd significant digits; x is w / 10^nfrac correctly rounded, so
     * 10^e10 <= |x| < 10^(e10 + 1) up to the rounding, which the digits'
     * range below catches. "%.17g" writes "%f" style for e10 >= -4. */
    uint64_t w = t->w;
    int bits = 64 - __builtin_clzll(w), nd = (bits * 1233) >> 12;   /* floor(log10 w) or one less */
    nd += w >= pm_api__u10[nd];
    int e10 = nd - 1 - t->nfrac, k = 17 - nd;
    uint64_t d;
    if (e10 < -4 || !pm_api__digits17_at(fabs(x), e10, &d)) return pm_api__canon_real_text(x, out);
    /* The 17 digits are w's followed by k more (the exact binary value's
     * tail, within a few units of 0), or w - 1's followed by k more when
     * the value is a little below the token's. Anything else (17 digits
     * that are not, a carry) goes the general way. */
    uint64_t wk = w * pm_api__u10[k], tail;
    bool below = d < wk;
    if (below) {
        wk -= pm_api__u10[k];
        if (d < pm_api__u10[16] || d < wk) return pm_api__canon_real_text(x, out);
    }
    tail = d - wk;
    if (tail >= pm_api__u10[k]) return pm_api__canon_real_text(x, out);
    o += len;
    if (tail == 0) {   /* the token's own digits; trailing zeros dropped, one kept */
        while (o[-1] == '0' && o[-2] != '.') o--;
        return (size_t)(o - out);
    }
    if (below) {   /* w - 1: the last digit lowered, borrowing past '0's (w's lead stays) */
        char *c = o - 1;
        for (; *c == '0' || *c == '.'; c--)
            if (*c == '0') *c = '9';
        --*c;
    }
    /* tail as k digits (2..16), leading zeros kept, trailing ones dropped. */
    char dig[32];
    memset(dig + 16, '0', 16);   /* what the fixed-size copy below reads past the digits */
    uint64_t b2;
    if (k <= 8) {
        b2 = pm_api__digits8((uint32_t)tail) + 0x3030303030303030ull;
    } else {
        uint64_t hi8 = tail / 100000000u;
        uint64_t b1 = pm_api__digits8((uint32_t)hi8) + 0x3030303030303030ull;
        b2 = pm_api__digits8((uint32_t)(tail - hi8 * 100000000u)) + 0x3030303030303030ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        b1 = __builtin_bswap64(b1);
#endif
        memcpy(dig, &b1, 8);
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    b2 = __builtin_bswap64(b2);
#endif
    memcpy(dig + 8, &b2, 8);
    memcpy(o, dig + 16 - k, 16);   /* fixed size: no call; the room holds it */
    o += k;
    while (o[-1] == '0') o--;
    return (size_t)(o - out);
}

/* ---- the walk ---- */

#define PM_API__FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)

/* Room for n bytes at the end of the block (flushed first when needed);
 * NULL when the sink failed. n is at most the block's size. */
static char *pm_api__room(pm_api__out *o, size_t n) {
    if (o->len + n > sizeof o->buf && pm_api__flush(o) < 0) return NULL;
    return o->buf + o->len;
}

/* A string as jansson writes it when it needs no escape (printable ASCII
 * other than '"' and '\\'): quoted, bytes as they are. Returns 0, -1
 * when the sink failed, or 1 when the string needs jansson's escaping. */
static int pm_api__plain_string(const char *s, size_t n, pm_api__out *o) {
    if (n + 2 > sizeof o->buf) return 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return 1;
    }
    char *w = pm_api__room(o, n + 2);
    if (!w) return -1;
    w[0] = '"';
    memcpy(w + 1, s, n);
    w[n + 1] = '"';
    o->len += n + 2;
    return 0;
}

/* An integer as jansson writes it ("%" JSON_INTEGER_FORMAT). */
static int pm_api__integer(json_int_t v, pm_api__out *o) {
    char tmp[24], *e = tmp + sizeof tmp, *b = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--b = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0) *--b = '-';
    return pm_api__emit(b, (size_t)(e - b), o);
}

typedef struct pm_api__key { const char *s; size_t len; const json_t *v; } pm_api__key;

/* jansson's order for sorted keys: bytes, then length. */
static int pm_api__key_cmp(const void *a, const void *b) {
    const pm_api__key *x = a, *y = b;
    int r = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

static int pm_api__walk(const json_t *j, pm_api__out *o, int depth);

/* A string or key: written here when plain, else by jansson. */
static int pm_api__string(const char *s, size_t n, pm_api__out *o) {
    int r = pm_api__plain_string(s, n, o);
    if (r <= 0) return r;
    json_t *js = json_stringn_nocheck(s, n);
    r = js ? json_dump_callback(js, pm_api__emit, o, PM_API__FLAGS) : -1;
    json_decref(js);
    return r;
}

/* Keys sorted by insertion into a small array (canonical objects have a
 * few dozen members at most); qsort past that. */
#define PM_API__SMALL_OBJECT 32

static int pm_api__object_text(const json_t *j, pm_api__out *o, int depth);

/* An object held in several places of the canonical form (a request
 * default shared by every element, e.g. a network's sidewalk) is written
 * once; its next occurrences copy that text. The canonical form is not
 * modified while it is written, so the same object has the same text. */
static int pm_api__object(const json_t *j, pm_api__out *o, int depth) {
    if (j->refcount < 2) return pm_api__object_text(j, o, depth);
    if (j == o->memo) {
        char *w = pm_api__room(o, o->memo_len);
        if (!w) return -1;
        memcpy(w, o->memo_buf, o->memo_len);
        o->len += o->memo_len;
        return 0;
    }
    size_t start = o->len;
    unsigned long flushes = o->flushes;
    int r = pm_api__object_text(j, o, depth);
    if (r == 0 && o->flushes == flushes && o->len - start <= sizeof o->memo_buf) {
        o->memo = j;
        o->memo_len = o->len - start;
        memcpy(o->memo_buf, o->buf + start, o->memo_len);
    }
    return r;
}

static int pm_api__object_text(const json_t *j, pm_api__out *o, int depth) {
    size_t n = json_object_size(j), i = 0;
    pm_api__key small[PM_API__SMALL_OBJECT];
    pm_api__key *keys = n <= PM_API__SMALL_OBJECT ? small : malloc(n * sizeof *keys);
    if (!keys) return -1;
    for (void *it = json_object_iter((json_t *)j); it && i < n;
         it = json_object_iter_next((json_t *)j, it), i++) {
        pm_api__key k = {json_object_iter_key(it), json_object_iter_key_len(it),
                         json_object_iter_value(it)};
        if (keys != small) {
            keys[i] = k;
            continue;
        }
        size_t at = i;
        for (; at > 0 && pm_api__key_cmp(&keys[at - 1], &k) > 0; at--) keys[at] = keys[at - 1];
        keys[at] = k;
    }
    n = i;
    if (keys != small) qsort(keys, n, sizeof *keys, pm_api__key_cmp);
    int r = pm_api__emit("{", 1, o);
    for (i = 0; i < n && r == 0; i++) {
        if (i) r = pm_api__emit(",", 1, o);
        if (r == 0) r = pm_api__string(keys[i].s, keys[i].len, o);
        if (r == 0) r = pm_api__emit(":", 1, o);
        if (r == 0) r = pm_api__walk(keys[i].v, o, depth + 1);
    }
    if (keys != small) free(keys);
    return r == 0 ? pm_api__emit("}", 1, o) : -1;
}

static int pm_api__bulk(const json_t *j, pm_api__out *o) {
    size_t n = pm_api_bulk_len(j);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    /* Values that are all float32 (binary uploads, and text or PNG heights
     * that are) are hashed as float32 under the float32 tag, any other as
     * doubles: one key for the same values whichever way they came, half
     * the bytes to hash, and a double that is no float32 never meets its
     * rounding (the tags differ). */
    bool f32 = pm_api_bulk_f32_exact(j);
    int r = pm_api__emit(f32 ? pm_api_bulk_tag_f32 : pm_api_bulk_tag, PM_API_BULK_TAG_LEN, o);
    if (r == 0) r = pm_api__emit((const char *)len, sizeof len, o);
    if (r == 0 && (!f32 || pm_api_bulk_is_f32(j)))
        return pm_api__emit((const char *)pm_api_bulk_data(j),
                            n * (f32 ? sizeof(float) : sizeof(double)), o);
    /* Exact doubles: each converted block goes straight to the callback
     * (already a large block: no copy into buf). */
    if (r == 0) r = pm_api__flush(o);
    for (size_t i = 0; i < n && r == 0; i += PM_API__DUMP_BUF / sizeof(float)) {
        float f[PM_API__DUMP_BUF / sizeof(float)];
        size_t k = n - i < PM_API__DUMP_BUF / sizeof(float) ? n - i : PM_API__DUMP_BUF / sizeof(float);
        pm_api_bulk_get_f32(j, i, k, f);
        o->flushes++;
        if (o->cb((const char *)f, k * sizeof *f, o->data) != 0) r = o->err = -1;
    }
    return r;
}

static int pm_api__real(double x, pm_api__out *o) {
    char *w = pm_api__room(o, PM_API__REAL_ROOM);
    if (!w) return -1;
    size_t n = pm_api__real17(x, w);
    if (n) {
        o->len += n;
        return 0;
    }
    json_t *j = json_real(x);
    int r = j ? json_dump_callback(j, pm_api__emit, o, PM_API__FLAGS) : -1;
    json_decref(j);
    return r;
}

/* A row block (pm_api/rows.h) in binary: its canonical head (tag,
 * columns, rows), then its doubles as they are (-0 stored as 0). */
static int pm_api__rows(const json_t *j, pm_api__out *o) {
    size_t n = pm_api_rows_count(j), cols = pm_api_rows_cols(j);
    char head[PM_API_ROWS_CANON_HEAD];
    int r = pm_api__emit(head, pm_api_rows_canon_head(head, n, cols), o);
    return r == 0 ? pm_api__emit(json_string_value(j) + PM_API_ROWS_HEAD, n * cols * sizeof(double), o)
                  : -1;
}

static int pm_api__walk(const json_t *j, pm_api__out *o, int depth) {
    if (!j || depth > PM_API__MAX_DEPTH) return -1;
    switch (json_typeof(j)) {
    case JSON_REAL: return pm_api__real(json_real_value(j), o);
    case JSON_INTEGER: return pm_api__integer(json_integer_value(j), o);
    case JSON_TRUE: return pm_api__emit("true", 4, o);
    case JSON_FALSE: return pm_api__emit("false", 5, o);
    case JSON_NULL: return pm_api__emit("null", 4, o);
    case JSON_STRING:
        if (pm_api_bulk_is(j)) return pm_api__bulk(j, o);
        if (pm_api_rows_is(j)) return pm_api__rows(j, o);
        if (pm_api__canon_text_is(j))
            return pm_api__emit(json_string_value(j) + PM_API_CANON_TEXT_TAG_LEN,
                                json_string_length(j) - PM_API_CANON_TEXT_TAG_LEN, o);
        return pm_api__string(json_string_value(j), json_string_length(j), o);
    case JSON_OBJECT: return pm_api__object(j, o, depth);
    case JSON_ARRAY: break;
    }
    int r = pm_api__emit("[", 1, o);
    size_t n = json_array_size(j);
    for (size_t i = 0; i < n && r == 0; i++) {
        if (i) r = pm_api__emit(",", 1, o);
        if (r == 0) r = pm_api__walk(json_array_get(j, i), o, depth + 1);
    }
    return r == 0 ? pm_api__emit("]", 1, o) : -1;
}

int pm_api_canonical_dump(const json_t *canonical, json_dump_callback_t cb, void *data) {
    pm_api__out *o = malloc(sizeof *o);
    if (!o) return -1;
    o->cb = cb;
    o->data = data;
    o->len = 0;
    o->err = 0;
    o->flushes = 0;
    o->memo = NULL;
    o->memo_len = 0;
    int r = pm_api__walk(canonical, o, 0);
    if (pm_api__flush(o) < 0) r = -1;
    free(o);
    return r;
}
