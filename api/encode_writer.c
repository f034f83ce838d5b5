#define _DEFAULT_SOURCE   /* madvise, MADV_HUGEPAGE, mincore */
#include "encode_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "decimal.h"
#include "fmt_f64.h"

void *pm_api__mem_realloc(const pm_api_alloc *al, void *p, size_t old_size, size_t new_size) {
    if (al) return al->realloc(al->ctx, p, old_size, new_size);
    return realloc(p, new_size);
}

void pm_api__mem_free(const pm_api_alloc *al, void *p, size_t size) {
    if (!p) return;
    if (al) al->free(al->ctx, p, size);
    else free(p);
}

void pm_api__w_init(pm_api__w *w, size_t cap) { pm_api__w_init_al(w, cap, NULL); }

void pm_api__w_init_al(pm_api__w *w, size_t cap, const pm_api_alloc *al) {
    w->len = 0;
    w->oom = false;
    w->al = al;
    w->cap = cap ? cap : 256;
    w->data = pm_api__mem_realloc(al, NULL, 0, w->cap);
    if (!w->data && al && w->cap > 65536) {
        w->cap = 65536;   /* the estimate was refused; the text may still fit */
        w->data = pm_api__mem_realloc(al, NULL, 0, w->cap);
    }
    if (!w->data) {
        w->cap = 0;
        w->oom = true;
    }
}

void pm_api__w_free(pm_api__w *w) {
    pm_api__mem_free(w->al, w->data, w->cap);
    w->data = NULL;
    w->len = w->cap = 0;
}

bool pm_api__w_grow(pm_api__w *w, size_t n) {
    if (w->oom) return false;
    if (n <= w->cap - w->len) return true;
    size_t cap = w->cap;
    while (cap - w->len < n) {
        if (cap > SIZE_MAX / 2) {
            w->oom = true;
            return false;
        }
        cap *= 2;
    }
    /* Room where the buffer lies comes first: free space after it is
     * used before a block twice the size is taken elsewhere (a network's
     * 4 MB of metadata text in the space its generator gave back, not in
     * fresh pages). */
    if (w->al && w->al->room) {
        size_t room = w->al->room(w->al->ctx, w->data, w->cap);
        if (room > w->cap && room - w->len >= n && room < cap) cap = room;   /* 0: not known */
    }
    char *d = pm_api__mem_realloc(w->al, w->data, w->cap, cap);
    if (!d && w->al) {
        /* Doubling was refused: what is needed and 1/16 more. */
        size_t need = w->len + n;
        cap = need + need / 16;
        d = pm_api__mem_realloc(w->al, w->data, w->cap, cap);
    }
    if (!d) {
        w->oom = true;
        return false;
    }
    w->data = d;
    w->cap = cap;
    return true;
}

int pm_api__w_take(pm_api__w *w, pm_api_buf *out) {
    if (w->oom) return -1;
    if (w->al && w->len && w->len < w->cap) {
        char *d = pm_api__mem_realloc(w->al, w->data, w->cap, w->len);
        if (d) {
            w->data = d;
            w->cap = w->len;
        }
    }
    if (w->al && w->cap != w->len) return -1;   /* the caller frees by length */
    out->data = (unsigned char *)w->data;
    out->len = w->len;
    w->data = NULL;
    w->len = w->cap = 0;
    return 0;
}


/* True when one of the 8 bytes in x is '"', '\\' or below 0x20 (exact:
 * the borrow tricks can only misplace a hit, not invent one). */
static bool pm_api__needs_escape8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    uint64_t hit = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b);
    return (hit & highs) != 0;
}

/* s[0..n) as the inside of a JSON string; o has room for 6 n bytes. Runs
 * of 8 plain bytes are copied as they are. */
static char *pm_api__put_escaped(char *o, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (pm_api__needs_escape8(x)) break;
        memcpy(o, &x, 8);
        o += 8;
    }
    /* The tail of a plain string (keys, ids) in one more check: its last 8
     * bytes, overlapping what was copied, or, shorter than 8, two 4-byte
     * halves that overlap; only the bytes of s are read. */
    if (n >= 8 && i < n && n - i < 8) {   /* every full word before was plain */
        uint64_t x;
        memcpy(&x, s + n - 8, 8);
        if (!pm_api__needs_escape8(x)) {
            memcpy(o - (8 - (n - i)), &x, 8);   /* i >= 8 bytes were written: o - 7 at the least */
            return o + (n - i);
        }
    } else if (n >= 4 && n < 8) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        if (!pm_api__needs_escape8((uint64_t)hi << 32 | lo)) {
            memcpy(o, &lo, 4);
            memcpy(o + n - 4, &hi, 4);
            return o + n;
        }
    }
    for (const unsigned char *c = (const unsigned char *)s + i, *end = (const unsigned char *)s + n; c < end; c++) {
        if (*c == '"' || *c == '\\') {
            *o++ = '\\';
            *o++ = (char)*c;
        } else if (*c < 0x20) {
            memcpy(o, "\\u00", 4);
            o[4] = hex[*c >> 4];
            o[5] = hex[*c & 15];
            o += 6;
        } else {
            *o++ = (char)*c;
        }
    }
    return o;
}

void pm_api__w_str(pm_api__w *w, const char *s) {
    size_t n = strlen(s);
    if (!pm_api__w_reserve(w, 6 * n + 2)) return;
    char *o = w->data + w->len;
    *o++ = '"';
    o = pm_api__put_escaped(o, s, n);
    *o++ = '"';
    w->len = (size_t)(o - w->data);
}

/* "00" .. "99": digits are written two at a time. */
static const char pm_api__pairs[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* The n lowest decimal digits of v (leading zeros included) into o[0..n);
 * in 32-bit arithmetic when v fits (floats' digits, indices). */
static void pm_api__put_digits(char *o, uint64_t v, int n) {
    for (; n >= 2 && v > UINT32_MAX; n -= 2, v /= 100) memcpy(o + n - 2, pm_api__pairs + 2 * (v % 100), 2);
    uint32_t s = (uint32_t)v;
    for (; n >= 2; n -= 2, s /= 100) memcpy(o + n - 2, pm_api__pairs + 2 * (s % 100), 2);
    if (n) o[0] = (char)('0' + s % 10);
}

/* 1 to 4 digits of v < 10000, no leading zeros; returns the count. */
static inline int pm_api__put_upto4(char *o, uint32_t v) {
    if (v < 100) {
        if (v < 10) {
            o[0] = (char)('0' + v);
            return 1;
        }
        memcpy(o, pm_api__pairs + 2 * v, 2);
        return 2;
    }
    uint32_t hi = v / 100, lo = v % 100;
    if (hi < 10) {
        o[0] = (char)('0' + hi);
        memcpy(o + 1, pm_api__pairs + 2 * lo, 2);
        return 3;
    }
    memcpy(o, pm_api__pairs + 2 * hi, 2);
    memcpy(o + 2, pm_api__pairs + 2 * lo, 2);
    return 4;
}

/* Decimal digits of v, as "%" PRIu64 writes them (metadata holds many
 * indices and counts: snprintf's format parsing was most of their cost).
 * Below 10^8 (indices, counts) in two groups of four without a digit
 * count or a loop. */
static inline __attribute__((always_inline)) int pm_api__fmt_u64(char *o, uint64_t v) {
    if (v < 10000) return pm_api__put_upto4(o, (uint32_t)v);
    if (v < 100000000) {
        uint32_t hi = (uint32_t)v / 10000, lo = (uint32_t)v % 10000;
        int n = pm_api__put_upto4(o, hi);
        memcpy(o + n, pm_api__pairs + 2 * (lo / 100), 2);
        memcpy(o + n + 2, pm_api__pairs + 2 * (lo % 100), 2);
        return n + 4;
    }
    int k = ((63 - __builtin_clzll(v | 1)) * 1233) >> 12;   /* floor(log10 v), or one below */
    k += v >= pm_api__u10[k + 1];   /* k <= 18 before */
    pm_api__put_digits(o, v, k + 1);
    return k + 1;
}

char *pm_api__put_u64(char *o, uint64_t v) { return o + pm_api__fmt_u64(o, v); }

void pm_api__w_u64(pm_api__w *w, uint64_t v) {
    char tmp[24];
    pm_api__w_raw(w, tmp, (size_t)pm_api__fmt_u64(tmp, v));
}

void pm_api__w_i64(pm_api__w *w, int64_t v) {
    char tmp[24];
    int n = 0;
    if (v < 0) tmp[n++] = '-';
    /* The magnitude in unsigned arithmetic: -INT64_MIN does not fit. */
    n += pm_api__fmt_u64(tmp + n, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    pm_api__w_raw(w, tmp, (size_t)n);
}

/* Small integers are common in meshes (grid coordinates, 0 and 1 in
 * normals and UVs) and need no search for the shortest form. */
static int pm_api__fmt_small_int(char *o, double d) {
    if (!(fabs(d) < 1e6)) return 0;
    long v = (long)d;   /* truncated: d is an integer when it comes back */
    if ((double)v != d) return 0;
    int n = 0;
    if (v < 0) {
        o[n++] = '-';
        v = -v;
    }
    return n + pm_api__fmt_u64(o + n, (uint64_t)v);
}

/* Exact powers of ten (every 10^k up to 10^22 is a double). */
static const double pm_api__p10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* True when decimal text s reads back as f both directly (strtof) and
 * through a double first (as JavaScript and most JSON readers do). */
static bool pm_api__reads_back(const char *s, float f) {
    return strtof(s, NULL) == f && (float)strtod(s, NULL) == f;
}

int pm_api__fmt_f32_ref(char *o, float f) {
    if (f == 0) f = 0;
    int n = 0;
    for (int prec = 6; prec <= 9; prec++) {
        n = snprintf(o, 24, "%.*g", prec, (double)f);
        if (pm_api__reads_back(o, f)) break;
    }
    return n;
}

/* Writes digits m (p of them, trailing zeros dropped) with decimal
 * exponent x the way "%.<p>g" does. */
static int pm_api__fmt_digits(char *o, bool neg, uint64_t m, int p, int x) {
    char d[17];
    pm_api__put_digits(d, m, p);
    int nd = p;
    while (nd > 1 && d[nd - 1] == '0') nd--;   /* "%g" drops trailing zeros */
    int n = 0;
    if (neg) o[n++] = '-';
    if (x < -4 || x >= p) {
        o[n++] = d[0];
        if (nd > 1) {
            o[n++] = '.';
            memcpy(o + n, d + 1, (size_t)nd - 1);
            n += nd - 1;
        }
        n += pm_api__put_exp10(o + n, x);
    } else if (x >= nd - 1) {   /* an integer: digits, then zeros */
        memcpy(o + n, d, (size_t)nd);
        memset(o + n + nd, '0', (size_t)(x + 1 - nd));
        n += x + 1;
    } else if (x >= 0) {
        memcpy(o + n, d, (size_t)x + 1);
        n += x + 1;
        o[n++] = '.';
        memcpy(o + n, d + x + 1, (size_t)(nd - x - 1));
        n += nd - x - 1;
    } else {
        o[n++] = '0';
        o[n++] = '.';
        for (int i = -1; i > x; i--) o[n++] = '0';
        memcpy(o + n, d, (size_t)nd);
        n += nd;
    }
    return n;
}

/* The shortest of 6..9 significant digits that reads back as f. Each
 * candidate is checked exactly: its double value (one correctly rounded
 * operation on exact operands) must lie strictly between the midpoints to
 * f's float neighbours, which are exact doubles; only values whose scaling
 * would be inexact (|f| < 1e-13 or >= 1e15) take the snprintf path. */
int pm_api__fmt_f32(char *o, float f) {
    if (f == 0) f = 0;
    int n = pm_api__fmt_small_int(o, f);
    if (n) return n;
    float fa = fabsf(f);
    if (!(fa >= 1e-13f && fa < 1e15f)) return pm_api__fmt_f32_ref(o, f);
    double a = fa;
    /* fa's float neighbours: fa is normal and below FLT_MAX here. */
    uint32_t bits, down, up;
    memcpy(&bits, &fa, sizeof bits);
    down = bits - 1, up = bits + 1;
    float fd, fu;
    memcpy(&fd, &down, sizeof fd);
    memcpy(&fu, &up, sizeof fu);
    double lo = (a + (double)fd) / 2, hi = (a + (double)fu) / 2;
    /* floor(log10 a), or one below; each precision starts from it again
     * (a carry at 6 digits, 999999.9 -> 10^6, says nothing about 7). */
    int e0 = (((int)(bits >> 23) - 127) * 78913) >> 18;
    for (int p = 6; p <= 9; p++) {
        int e = e0;
        for (int tries = 0;; tries++) {
            if (tries == 4) return pm_api__fmt_f32_ref(o, f);
            int sc = p - 1 - e;
            double m = nearbyint(sc >= 0 ? a * pm_api__p10[sc] : a / pm_api__p10[-sc]);
            if (m >= pm_api__p10[p]) { e++; continue; }
            if (m < pm_api__p10[p - 1]) { e--; continue; }
            double q = sc >= 0 ? m / pm_api__p10[sc] : m * pm_api__p10[-sc];
            if (q > lo && q < hi) return pm_api__fmt_digits(o, f < 0, (uint32_t)m, p, e);
            if (q == lo || q == hi) return pm_api__fmt_f32_ref(o, f); /* a tie: let libc decide */
            break;
        }
    }
    return pm_api__fmt_f32_ref(o, f);
}

void pm_api__w_f32(pm_api__w *w, float f) {
    if (!pm_api__w_reserve(w, 24)) return;
    w->len += (size_t)pm_api__fmt_f32(w->data + w->len, f);
}

/* Long arrays are written in runs of this many values, each reserving its
 * worst case: reserving a whole array's worst case (twice its usual text)
 * would make a writer with a byte limit stop far before the limit. */
#define PM_API__RUN 4096

void pm_api__w_f32s(pm_api__w *w, const float *v, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t end = n - i > PM_API__RUN ? i + PM_API__RUN : n;
        if (!pm_api__w_reserve(w, (end - i) * 17 + 8)) return;
        char *o = w->data + w->len;
        for (; i < end; i++) {
            if (i) *o++ = ',';
            o += pm_api__fmt_f32(o, v[i]);
        }
        w->len = (size_t)(o - w->data);
    }
}

/* Values [i, end) of v, comma-separated after the first of the array. */
static void pm_api__w_u32_run(pm_api__w *w, const uint32_t *v, size_t i, size_t end) {
    char *o = w->data + w->len;
    for (; i < end; i++) {
        if (i) *o++ = ',';
        o += pm_api__fmt_u64(o, v[i]);
    }
    w->len = (size_t)(o - w->data);
}

void pm_api__w_u32s(pm_api__w *w, const uint32_t *v, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t end = n - i > PM_API__RUN ? i + PM_API__RUN : n;
        if (!pm_api__w_reserve(w, (end - i) * 11)) return;
        pm_api__w_u32_run(w, v, i, end);
        i = end;
    }
}

int pm_api__fmt_f64_ref(char *o, double d) {
    if (d == 0) d = 0;
    int n = pm_api__fmt_small_int(o, d);
    for (int prec = 15; n == 0 && prec <= 17; prec++) {
        n = snprintf(o, 32, "%.*g", prec, d);
        if (prec < 17 && strtod(o, NULL) != d) n = 0;
    }
    return n;
}

/* Halves below 10^6 in magnitude (integers and x.5: most of the numbers
 * in metadata: coordinates on a grid, widths, mouths 6.5 m in): "%.15g"
 * writes the integer part and ".5" for these, with -0 as 0, and 15 digits
 * read back, so that text is the reference's. 0 when d is not one. */
static inline __attribute__((always_inline)) int pm_api__fmt_half(char *o, double d) {
    double h = d * 2;   /* exact */
    if (!(fabs(h) < 2e6)) return 0;
    long v = (long)h;
    if ((double)v != h) return 0;
    /* The sign and ".5" are stored whatever they turn out to be (o has
     * room for 32 bytes) and kept by the length: no branch on either. */
    o[0] = '-';
    int n = v < 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    n += pm_api__fmt_u64(o + n, u >> 1);
    memcpy(o + n, ".5", 2);
    return n + 2 * (int)(u & 1);
}

/* A finite d of magnitude outside pm_api__fmt_f64_exact's range (out of
 * line: rare in metadata). The same text as pm_api__fmt_f64_ref without
 * printf for |d| in [1e-10, 1e38): the 17 significant digits are exact
 * (128-bit integer scaling) with what they leave out, so the 15- and
 * 16-digit roundings are printf's; whether one reads back is decided
 * exactly where the digits are below 2^53 and the power of ten exact
 * (|exponent| <= 22: one correctly rounded operation, as strtod's),
 * by strtod otherwise. */
static __attribute__((noinline)) int pm_api__fmt_f64_far(char *o, double d) {
    int n;
    double a = fabs(d);
    if (!(a >= 1e-10 && a < 1e38)) return pm_api__fmt_f64_ref(o, d);
    uint64_t digits;
    int x, frac;
    if (!pm_api__dec17(a, &digits, &x, &frac)) return pm_api__fmt_f64_ref(o, d);
    for (int p = 15; p <= 17; p++) {
        int px = x;
        bool exact;
        uint64_t q = pm_api__dec_round(digits, frac, p, &px, &exact);
        if (p < 17 && !exact) {
            int ex = px - p + 1;   /* the text's value: q 10^ex */
            if (q < (1ull << 53) && ex >= -22 && ex <= 22) {
                double back = ex >= 0 ? (double)q * pm_api__p10[ex] : (double)q / pm_api__p10[-ex];
                if (back != a) continue;
            } else {
                n = pm_api__fmt_digits(o, false, q, p, px);
                o[n] = '\0';
                if (strtod(o, NULL) != a) continue;
            }
        }
        return pm_api__fmt_digits(o, d < 0, q, p, px);
    }
    return pm_api__fmt_f64_ref(o, d);   /* not reached: 17 digits always read back */
}

/* pm_api__fmt_f64 of a d that is not a half: neither zero nor an integer
 * below 10^6 (pm_api__fmt_small_int's) is left, and what has few decimals
 * (6.25, 0.001) takes the general path like the rest. */
static inline __attribute__((always_inline)) int pm_api__fmt_f64_nonhalf(char *o, double d) {
    int n = pm_api__fmt_f64_exact(o, d < 0, fabs(d));
    return n ? n : pm_api__fmt_f64_far(o, d);
}

int pm_api__fmt_f64(char *o, double d) {
    int n = pm_api__fmt_half(o, d);
    return n ? n : pm_api__fmt_f64_nonhalf(o, d);
}

void pm_api__w_f64(pm_api__w *w, double d) {
    if (!isfinite(d)) {
        pm_api__w_lit(w, "null");
        return;
    }
    if (!pm_api__w_reserve(w, 32)) return;
    w->len += (size_t)pm_api__fmt_f64(w->data + w->len, d);
}

static inline __attribute__((always_inline)) char *pm_api__put_i64(char *o, int64_t i) {
    if (i < 0) *o++ = '-';
    /* The magnitude in unsigned arithmetic: -INT64_MIN does not fit. */
    return o + pm_api__fmt_u64(o, i < 0 ? 0 - (uint64_t)i : (uint64_t)i);
}

/* A number that is not a half below 10^6 (out of line: its many
 * registers would make every caller save and restore them). */
static __attribute__((noinline)) char *pm_api__put_f64_rest(char *o, double d) {
    /* pm_api__put_f64 took the halves; the general path's range leaves
     * out infinities and NaN, tested only past it */
    int n = pm_api__fmt_f64_exact(o, d < 0, fabs(d));
    if (n) return o + n;
    if (!isfinite(d)) {
        memcpy(o, "null", 4);
        return o + 4;
    }
    return o + pm_api__fmt_f64_far(o, d);
}

/* Inline where metadata's numbers are written: most are halves. */
static inline __attribute__((always_inline)) char *pm_api__put_f64(char *o, double d) {
    int n = pm_api__fmt_half(o, d);   /* pm_api__fmt_f64's first step, here with no call */
    if (n) return o + n;
    return pm_api__put_f64_rest(o, d);
}

/* The empty number slot 0's bits (1.0's: its hash is another slot; the
 * others' are 0, +0's, whose slot is 0). */
#define PM_API__NUM_EMPTY0 0x3ff0000000000000ull

/* d's text (pm_api__put_f64) from the numbers' cache when d's bits are
 * kept there, else printed and kept by the rule above PM_API__NUMS
 * (o has room for 32 bytes). */
static inline __attribute__((always_inline)) char *pm_api__put_f64_kept(char *o, double d, pm_api__meta_cache *c) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    uint64_t i = (b * 0x9E3779B97F4A7C15ull) >> (64 - PM_API__NUM_BITS);
    char *text = c->num_text[i];
    if (c->num_bits[i] == b) {   /* an empty slot holds bits that choose another slot */
        memcpy(o, text, sizeof c->num_text[i]);   /* the length too: past the text, in o's room */
        return o + text[23];
    }
    char *e = pm_api__put_f64(o, d);
    if (c->num_bits[i] != (i ? 0 : PM_API__NUM_EMPTY0) && c->num_pending[i] != b) {
        c->num_pending[i] = b;   /* kept this time */
    } else if (e - o < (ptrdiff_t)sizeof c->num_text[i]) {
        c->num_bits[i] = b;
        memcpy(text, o, sizeof c->num_text[i]);   /* past the text: what the room held, never read as text */
        text[23] = (char)(e - o);
        c->num_pending[i] = b;
    }
    return e;
}

static inline char *pm_api__put_bool(char *o, bool b) {
    memcpy(o, b ? "true" : "false", b ? 4 : 5);
    return o + (b ? 4 : 5);
}

/* A scalar's text (at most 32 bytes), or NULL for a string or container. */
static inline __attribute__((always_inline)) char *pm_api__put_scalar(char *o, const pm_meta *m,
                                                                      pm_api__meta_cache *c) {
    switch (m->kind) {
    case PM_META_NULL: memcpy(o, "null", 4); return o + 4;
    case PM_META_BOOL: return pm_api__put_bool(o, m->u.b);
    case PM_META_INT: return pm_api__put_i64(o, m->u.i);
    case PM_META_NUM: return pm_api__put_f64_kept(o, m->u.n, c);
    default: return NULL;
    }
}

/* Object keys as written ("key":) and string values as written ("text"),
 * by address: a tree's keys are mostly a few literals repeated
 * (pm_meta_set_lit), and many of its strings are one text shared by many
 * nodes (a literal, or a node copied shallowly), so each is checked for
 * escapes once and then copied as one 32-byte block. */

/* Fibonacci hashing: the top bits of a multiple mix every bit of the
 * address (a tree's few dozen literals must not collide and thrash). */
static inline uint64_t pm_api__addr_hash(const char *k, size_t kl) {
    return ((uint64_t)(uintptr_t)k ^ (uint64_t)kl << 48) * 0x9E3779B97F4A7C15ull;
}

/* Whether slot i of the strings' table was written since
 * pm_api__meta_cache_init (its bytes are garbage until then). */
static inline bool pm_api__slot_live(const uint64_t *live, uint64_t i) { return live[i >> 6] >> (i & 63) & 1; }

/* Each text may sit in its hash's slot i or in the slot beside it, i ^ 1:
 * with one slot per hash, two keys of a tree whose addresses collide
 * (which depends on where the linker put them) would evict each other on
 * every row. The slot for k and len, or NULL. */
static inline const pm_api__key_slot *pm_api__slot_find(const pm_api__key_slot *slots, const uint64_t *live,
                                                        uint64_t i, const char *k, size_t len) {
    if ((!live || pm_api__slot_live(live, i)) && slots[i].key == k && slots[i].len == len) return &slots[i];
    i ^= 1;
    if ((!live || pm_api__slot_live(live, i)) && slots[i].key == k && slots[i].len == len) return &slots[i];
    return NULL;
}

/* The keys' slot holding k (kl bytes): i or the one beside it (as
 * pm_api__slot_find, by the owners in key_at), or NULL. */
static inline const pm_api__key_slot *pm_api__key_find(const pm_api__meta_cache *cache, uint64_t i, const char *k,
                                                       size_t kl) {
    if (cache->key_at[i] == k && cache->keys[i].len == kl) return &cache->keys[i];
    i ^= 1;
    if (cache->key_at[i] == k && cache->keys[i].len == kl) return &cache->keys[i];
    return NULL;
}

/* Writes key k (kl bytes) as "k": at o (room for 6 kl + 35 bytes);
 * returns the end. */
static inline char *pm_api__put_key(char *o, const char *k, size_t kl, pm_api__meta_cache *cache) {
    uint64_t i = pm_api__addr_hash(k, kl) >> (64 - PM_API__KEY_BITS);
    const pm_api__key_slot *c = pm_api__key_find(cache, i, k, kl);
    if (c) {
        memcpy(o, c->text, PM_API__KEY_TEXT);
        return o + kl + 3;
    }
    char *start = o;
    *o++ = '"';
    o = pm_api__put_escaped(o, k, kl);
    *o++ = '"';
    *o++ = ':';
    size_t n = (size_t)(o - start);
    if (n == kl + 3 && n <= PM_API__KEY_TEXT) {   /* plain (no escapes) and short: kept */
        if (cache->key_at[i] && !cache->key_at[i ^ 1]) i ^= 1;
        pm_api__key_slot *s = &cache->keys[i];
        cache->key_at[i] = k;   /* the owner: the slot's key member stays unused */
        s->len = (uint32_t)kl;
        s->text_len = (uint32_t)n;
        memcpy(s->text, start, n);
        memset(s->text + n, ' ', PM_API__KEY_TEXT - n);   /* copied past the text, overwritten */
    }
    return o;
}

/* String s as "s" at o from the cache (room for 32 bytes); NULL when s
 * was not seen before. A string's slot has len 0: it is found by address. */
static inline char *pm_api__put_cached_str(char *o, const char *s, const pm_api__meta_cache *cache) {
    uint64_t i = pm_api__addr_hash(s, 0) >> (64 - PM_API__STR_BITS);
    const pm_api__key_slot *c = pm_api__slot_find(cache->strs, cache->strs_live, i, s, 0);
    if (!c) return NULL;
    memcpy(o, c->text, PM_API__KEY_TEXT);
    return o + c->text_len;
}

/* The same written in full (room checked here) and kept for next time. */
static void pm_api__w_str_kept(pm_api__w *w, const char *s, pm_api__meta_cache *cache) {
    size_t len = strlen(s);
    /* the text and the 32-byte block a slot copies from it */
    if (!pm_api__w_reserve(w, 6 * len + 2 + PM_API__KEY_TEXT)) return;
    char *start = w->data + w->len, *o = start;
    *o++ = '"';
    o = pm_api__put_escaped(o, s, len);
    *o++ = '"';
    size_t n = (size_t)(o - start);
    w->len += n;
    if (n != len + 2 || n > PM_API__KEY_TEXT) return;   /* escaped, or too long to keep */
    /* Kept as pm_api__put_key keeps a key, the block copied whole: what
     * follows the text there is overwritten wherever the block lands. */
    uint64_t i = pm_api__addr_hash(s, 0) >> (64 - PM_API__STR_BITS);
    uint64_t *live = cache->strs_live;
    if (pm_api__slot_live(live, i) && !pm_api__slot_live(live, i ^ 1)) i ^= 1;
    pm_api__key_slot *c = &cache->strs[i];
    live[i >> 6] |= 1ull << (i & 63);
    c->key = s;
    c->len = 0;
    c->text_len = (uint32_t)n;
    memcpy(c->text, start, PM_API__KEY_TEXT);
}

static void pm_api__w_node(pm_api__w *w, const pm_meta *m, pm_api__meta_cache *c);

/* A short array of scalars ([0, 2], a point) at o, where lim ends the
 * room, without a call per array: the end, or NULL (nothing counts as
 * written) when it is longer, has another kind of element or lacks room. */
static inline char *pm_api__put_scalars(char *o, const char *lim, const pm_meta *arr, pm_api__meta_cache *c) {
    if ((size_t)(lim - o) < 8 * 33 + 2) return NULL;
    *o++ = '[';
    int n = 0;
    for (const pm_meta *e = arr->u.kids.first; e; e = e->next) {
        if (++n > 8) return NULL;   /* counted here: the room is for 8 */
        if (e != arr->u.kids.first) *o++ = ',';
        if (!(o = pm_api__put_scalar(o, e, c))) return NULL;
    }
    *o++ = ']';
    return o;
}

/* The members or elements of container m. The write position o runs in
 * a register between room checks (each member's worst case, as one
 * pm_api__w_reserve per member would ask), and is handed back to w only
 * around a nested container or a string not written before. */
static void pm_api__w_kids(pm_api__w *w, const pm_meta *m, pm_api__meta_cache *c) {
    bool obj = m->kind == PM_META_OBJ;
    if (!pm_api__w_reserve(w, 1)) return;
    char *o = w->data + w->len, *lim = w->data + w->cap;
    *o++ = obj ? '{' : '[';
    for (const pm_meta *k = m->u.kids.first; k; k = k->next) {
        size_t kl = obj && k->key ? k->key_len : 0;
        /* comma, key (6 kl + 3 escaped, or its 32-byte block), scalar or
         * cached string (32) */
        if ((size_t)(lim - o) < 6 * kl + 36) {
            w->len = (size_t)(o - w->data);
            if (!pm_api__w_reserve(w, 6 * kl + 36)) return;
            o = w->data + w->len, lim = w->data + w->cap;
        }
        if (k != m->u.kids.first) *o++ = ',';
        if (obj) o = pm_api__put_key(o, k->key ? k->key : "", kl, c);
        char *end = pm_api__put_scalar(o, k, c);
        if (!end && k->kind == PM_META_STR) end = pm_api__put_cached_str(o, k->u.s, c);
        if (!end && k->kind == PM_META_ARR) end = pm_api__put_scalars(o, lim, k, c);
        if (end) {
            o = end;
            continue;
        }
        w->len = (size_t)(o - w->data);
        pm_api__w_node(w, k, c);
        if (w->oom) return;
        o = w->data + w->len, lim = w->data + w->cap;
    }
    w->len = (size_t)(o - w->data);
    if (!pm_api__w_reserve(w, 1)) return;
    w->data[w->len++] = obj ? '}' : ']';
}

/* Room a table column's value may take past its fixed part (a META
 * value or an uncached string is written apart, with its own room
 * checks): a list's elements. */
static inline size_t pm_api__col_list_room(const pm_meta_col *col, const char *row) {
    if (col->kind == PM_META_COL_U32S) return 21 * ((const pm_meta_u32s *)(row + col->offset))->n;
    if (col->kind == PM_META_COL_BOOLS) return 6 * ((const pm_meta_bools *)(row + col->offset))->n;
    return 0;
}


/* The value of a column of kind at f, written at o; the end, or NULL for
 * a META column (the caller's). A string (STR, or a VAL holding one) is
 * the caller's to write too: it goes to *str (a NULL one is written null
 * here). */
static inline __attribute__((always_inline)) char *pm_api__put_cell(char *o, pm_meta_col_kind kind, const void *f,
                                                                    const char **str, pm_api__meta_cache *c) {
    switch (kind) {
    case PM_META_COL_I64: return pm_api__put_i64(o, *(const int64_t *)f);
    case PM_META_COL_U32: return o + pm_api__fmt_u64(o, *(const uint32_t *)f);
    case PM_META_COL_F64: return pm_api__put_f64_kept(o, *(const double *)f, c);
    case PM_META_COL_BOOL: return pm_api__put_bool(o, *(const bool *)f);
    case PM_META_COL_STR: *str = *(const char *const *)f; break;
    case PM_META_COL_VAL: {
        const pm_meta_val *v = f;
        switch (v->kind) {
        case PM_META_BOOL: return pm_api__put_bool(o, v->u.b);
        case PM_META_INT: return pm_api__put_i64(o, v->u.i);
        case PM_META_NUM: return pm_api__put_f64_kept(o, v->u.n, c);
        case PM_META_STR: *str = v->u.s; break;
        default: break;
        }
        break;
    }
    case PM_META_COL_U32X2: {
        const uint32_t *u = f;
        *o++ = '[';
        o += pm_api__fmt_u64(o, u[0]);
        *o++ = ',';
        o += pm_api__fmt_u64(o, u[1]);
        *o++ = ']';
        return o;
    }
    case PM_META_COL_F64X3: {
        const double *d = f;
        *o++ = '[';
        o = pm_api__put_f64_kept(o, d[0], c);
        *o++ = ',';
        o = pm_api__put_f64_kept(o, d[1], c);
        *o++ = ',';
        o = pm_api__put_f64_kept(o, d[2], c);
        *o++ = ']';
        return o;
    }
    case PM_META_COL_U32S: {
        const pm_meta_u32s *l = f;
        *o++ = '[';
        for (size_t j = 0; j < l->n; j++) {
            if (j) *o++ = ',';
            o += pm_api__fmt_u64(o, l->v[j]);
        }
        *o++ = ']';
        return o;
    }
    case PM_META_COL_BOOLS: {
        const pm_meta_bools *l = f;
        *o++ = '[';
        for (size_t j = 0; j < l->n; j++) {
            if (j) *o++ = ',';
            o = pm_api__put_bool(o, l->v[j]);
        }
        *o++ = ']';
        return o;
    }
    case PM_META_COL_META: return NULL;
    default: break;
    }
    if (*str) return o;
    memcpy(o, "null", 4);
    return o + 4;
}

/* A string value not in the cache, written at o in full and kept. The
 * write position after it, with room for need more bytes (NULL when out
 * of memory). */
static __attribute__((noinline)) char *pm_api__put_str_new(pm_api__w *w, char *o, const char *str, size_t need,
                                                           pm_api__meta_cache *c) {
    w->len = (size_t)(o - w->data);
    pm_api__w_str_kept(w, str, c);
    if (!pm_api__w_reserve(w, need)) return NULL;
    return w->data + w->len;
}

/* Starts row r (at row): room for need bytes (fixed, and its lists'
 * elements when the shape has lists), and its comma after the row
 * before. The write position: every member goes with a comma before it,
 * the first one's becomes the row's '{' (pm_api__row_close). NULL when
 * out of memory. */
static inline __attribute__((always_inline)) char *pm_api__row_open(pm_api__w *w, const pm_meta_shape *sh,
                                                                    const char *row, size_t r, size_t fixed,
                                                                    bool lists, size_t *need) {
    *need = fixed + 1;
    for (size_t i = 0; lists && i < sh->ncols; i++) *need += pm_api__col_list_room(&sh->cols[i], row);
    if (!pm_api__w_reserve(w, *need)) return NULL;
    char *o = w->data + w->len;
    if (r) *o++ = ',';
    return o;
}

/* Ends a row written from o's start (its first member's comma): that
 * comma becomes the '{', or the row has no member. */
static inline void pm_api__row_close(pm_api__w *w, char *o, size_t start) {
    if ((size_t)(o - w->data) == start) *o++ = '{';
    else w->data[start] = '{';
    *o++ = '}';
    w->len = (size_t)(o - w->data);
}

/* How many rows ahead a table's META values are asked for, their tables'
 * rows, and what those rows' META columns point to (4, 2, 1 measured the
 * same). */
#define PM_API__AHEAD 8
#define PM_API__AHEAD2 4
#define PM_API__AHEAD3 2

/* Asks for the nodes the META columns at offsets moff (nm of them) of row
 * point to: the node and the two lines after it (a short array's
 * elements follow it in its block). */
static inline void pm_api__prefetch_metas(const char *row, const size_t *moff, size_t nm) {
    for (size_t i = 0; i < nm; i++) {
        const char *sub = *(const char *const *)(const void *)(row + moff[i]);
        if (!sub) continue;
        __builtin_prefetch(sub);
        __builtin_prefetch(sub + 64);
        __builtin_prefetch(sub + 128);
    }
}

/* For a row whose META values are (mostly) in the cache by now: the rows
 * of those that are tables (a node's corners), or, deep (a row or two
 * later, those rows in the cache too), the nodes their own META columns
 * point to (each corner's point). */
static inline void pm_api__prefetch_tables(const char *row, const size_t *moff, size_t nm, bool deep) {
    for (size_t i = 0; i < nm; i++) {
        const pm_meta *sub = *(const pm_meta *const *)(const void *)(row + moff[i]);
        if (!sub || sub->kind != PM_META_TABLE) continue;
        const char *rows = sub->u.table.rows;
        const pm_meta_shape *tsh = sub->u.table.shape;
        if (!deep) {
            __builtin_prefetch(rows);
            __builtin_prefetch(rows + 64);
            __builtin_prefetch(rows + 128);
            continue;
        }
        size_t n = sub->u.table.n < 8 ? sub->u.table.n : 8;
        for (size_t c = 0; c < tsh->ncols; c++) {
            if (tsh->cols[c].kind != PM_META_COL_META) continue;
            for (size_t j = 0; j < n; j++) {
                const char *p = *(const char *const *)(const void *)(rows + j * tsh->row_size + tsh->cols[c].offset);
                if (p) __builtin_prefetch(p), __builtin_prefetch(p + 64), __builtin_prefetch(p + 128);
            }
        }
    }
}

/* The rows of table m through its columns' plan (the columns written,
 * in order, each key's text kept): no test of skips, kept keys or absent
 * members before a member. Each column's code is reached from the one
 * before by its address (next[], by the column's kind; the row's end
 * after the last column): a member costs one indirect jump, with no
 * switch's range test and table and no loop test. fixed is
 * pm_api__w_table_cols's room per row, lists the shape's list columns
 * (their elements' room, as pm_api__row_open counts it); the '[' is
 * written, the ']' is the caller's. Out of line: GCC inlines no function
 * with a computed goto. */
static __attribute__((noinline)) void pm_api__w_rows_planned(pm_api__w *w, const pm_meta *m,
                                                             const pm_api__tcol *plan, size_t np, size_t fixed,
                                                             const pm_api__tcol *lists, size_t nlists,
                                                             pm_api__meta_cache *c) {
    const pm_meta_shape *sh = m->u.table.shape;
    /* the plan holds these kinds only (pm_api__w_table_cols) */
    const void *const by_kind[] = {
        [PM_META_COL_I64] = &&col_i64,     [PM_META_COL_U32] = &&col_u32,     [PM_META_COL_F64] = &&col_f64,
        [PM_META_COL_BOOL] = &&col_bool,   [PM_META_COL_STR] = &&col_str,     [PM_META_COL_VAL] = &&col_val,
        [PM_META_COL_U32X2] = &&col_u32x2, [PM_META_COL_F64X3] = &&col_f64x3, [PM_META_COL_U32S] = &&col_u32s,
        [PM_META_COL_BOOLS] = &&col_bools, [PM_META_COL_META] = &&col_meta,
    };
    const void *next[PM_API__TABLE_KEYS + 1];
    /* The META columns' values are nodes made elsewhere and long ago (a
     * node's vertices, mouths and corners tables, a corner's point): each
     * row's are asked for PM_API__AHEAD rows before it is written (the
     * first rows' before the loop), a level deeper as it comes nearer, not
     * waited for one miss after another on the way. */
    size_t moff[PM_API__TABLE_KEYS], nm = 0;
    for (size_t i = 0; i < np; i++) {
        next[i] = by_kind[plan[i].kind];
        if (plan[i].kind == PM_META_COL_META) moff[nm++] = plan[i].offset;
    }
    next[np] = &&row_end;
    const size_t nrows = m->u.table.n;
    if (nm)
        for (size_t r = 0; r < nrows && r < PM_API__AHEAD; r++)
            pm_api__prefetch_metas((const char *)m->u.table.rows + r * sh->row_size, moff, nm);
    for (size_t r = 0; r < nrows; r++) {
        const char *row = (const char *)m->u.table.rows + r * sh->row_size;
        if (nm) {
            if (r + PM_API__AHEAD < nrows) pm_api__prefetch_metas(row + PM_API__AHEAD * sh->row_size, moff, nm);
            if (r + PM_API__AHEAD2 < nrows) pm_api__prefetch_tables(row + PM_API__AHEAD2 * sh->row_size, moff, nm, false);
            if (r + PM_API__AHEAD3 < nrows) pm_api__prefetch_tables(row + PM_API__AHEAD3 * sh->row_size, moff, nm, true);
        }
        /* pm_api__row_open's room, from the list columns only */
        size_t need = fixed + 1;
        for (size_t i = 0; i < nlists; i++) {
            const void *f = row + lists[i].offset;
            need += lists[i].kind == PM_META_COL_U32S ? 21 * ((const pm_meta_u32s *)f)->n
                                                      : 6 * ((const pm_meta_bools *)f)->n;
        }
        if (!pm_api__w_reserve(w, need)) return;
        char *o = w->data + w->len;
        if (r) *o++ = ',';
        size_t start = (size_t)(o - w->data);
        const pm_api__tcol *p = plan;
        const void *const *t = next;
        const void *f;
        const char *str;
/* a member's key, and f at its value */
#define PM_API__CELL_KEY() (f = row + p->offset, memcpy(o, p->key, PM_API__KEY_TEXT), o += p->key_len)
/* on to the next member's code */
#define PM_API__CELL_NEXT() \
    do {                    \
        p++;                \
        goto **++t;         \
    } while (0)
        goto **t;
    col_i64:
        PM_API__CELL_KEY();
        o = pm_api__put_i64(o, *(const int64_t *)f);
        PM_API__CELL_NEXT();
    col_u32:
        PM_API__CELL_KEY();
        o += pm_api__fmt_u64(o, *(const uint32_t *)f);
        PM_API__CELL_NEXT();
    col_f64:
        PM_API__CELL_KEY();
        o = pm_api__put_f64_kept(o, *(const double *)f, c);
        PM_API__CELL_NEXT();
    col_bool:
        PM_API__CELL_KEY();
        o = pm_api__put_bool(o, *(const bool *)f);
        PM_API__CELL_NEXT();
    col_u32x2:
        PM_API__CELL_KEY();
        str = NULL;   /* not a string: unused */
        o = pm_api__put_cell(o, PM_META_COL_U32X2, f, &str, c);
        PM_API__CELL_NEXT();
    col_f64x3:
        PM_API__CELL_KEY();
        str = NULL;
        o = pm_api__put_cell(o, PM_META_COL_F64X3, f, &str, c);
        PM_API__CELL_NEXT();
    col_u32s:
        PM_API__CELL_KEY();
        str = NULL;
        o = pm_api__put_cell(o, PM_META_COL_U32S, f, &str, c);
        PM_API__CELL_NEXT();
    col_bools:
        PM_API__CELL_KEY();
        str = NULL;
        o = pm_api__put_cell(o, PM_META_COL_BOOLS, f, &str, c);
        PM_API__CELL_NEXT();
    col_val: {
        PM_API__CELL_KEY();
        const pm_meta_val *v = f;
        switch (v->kind) {
        case PM_META_BOOL: o = pm_api__put_bool(o, v->u.b); PM_API__CELL_NEXT();
        case PM_META_INT: o = pm_api__put_i64(o, v->u.i); PM_API__CELL_NEXT();
        case PM_META_NUM: o = pm_api__put_f64_kept(o, v->u.n, c); PM_API__CELL_NEXT();
        case PM_META_STR: str = v->u.s; goto cell_str;
        default: str = NULL; goto cell_str;
        }
    }
    col_str:
        PM_API__CELL_KEY();
        str = *(const char *const *)f;
    cell_str:
        if (!str) {
            memcpy(o, "null", 4);
            o += 4;
            PM_API__CELL_NEXT();
        }
        {   /* mostly a text seen before: found inline, no call */
            char *kept = pm_api__put_cached_str(o, str, c);
            if (kept) o = kept;
            else if (!(o = pm_api__put_str_new(w, o, str, need, c))) return;
        }
        PM_API__CELL_NEXT();
    col_meta: {
        PM_API__CELL_KEY();
        const pm_meta *sub = *(const pm_meta *const *)f;
        if (!sub) {   /* absent from this row: the key is taken back */
            o -= p->key_len;
            PM_API__CELL_NEXT();
        }
        /* A short array of scalars (a point, a pair of indices) in
         * place when there is room enough that pm_api__w_kids would
         * not ask for more while writing it (36 bytes before each of
         * at most 8 elements): the same text, the buffer grown at the
         * same points. */
        size_t room = w->cap - (size_t)(o - w->data);
        char *arr = sub->kind == PM_META_ARR && room >= 8 * 33 + 2 + 36 ? pm_api__put_scalars(o, o + room, sub, c)
                                                                         : NULL;
        if (arr) {
            w->len = (size_t)(arr - w->data);
        } else {
            w->len = (size_t)(o - w->data);
            pm_api__w_node(w, sub, c);
        }
        /* room again for what is left of the row (all of it, as a bound) */
        if (!pm_api__w_reserve(w, need)) return;
        o = w->data + w->len;
        PM_API__CELL_NEXT();
    }
#undef PM_API__CELL_KEY
#undef PM_API__CELL_NEXT
    row_end:
        pm_api__row_close(w, o, start);
    }
}

/* A table: rows as objects, each value written from its C type. The
 * columns' keys are made once per table (the first PM_API__TABLE_KEYS
 * that are plain and short: the others through the key cache), and the
 * room a row may take (every member's comma, key and value, its lists'
 * elements) is checked once per row. */
static inline __attribute__((always_inline)) void pm_api__w_table_cols(pm_api__w *w, const pm_meta *m,
                                                                       uint64_t skip, pm_api__meta_cache *c) {
    const pm_meta_shape *sh = m->u.table.shape;
    for (pm_api__plan *pl = c->plans, *pe = c->plans + PM_API__PLANS; pl < pe; pl++) {
        if (pl->shape != sh || pl->skip != skip) continue;
        if (!pm_api__w_reserve(w, 1)) return;
        w->data[w->len++] = '[';
        /* Busy while its rows are written: a table inside them (another
         * shape) must not take this slot and its columns. */
        bool was = pl->busy;
        pl->busy = true;
        pm_api__w_rows_planned(w, m, pl->cols, pl->n, pl->fixed, pl->lists, pl->nlists, c);
        pl->busy = was;
        pm_api__w_char(w, ']');
        return;
    }
    char kt[PM_API__TABLE_KEYS][PM_API__KEY_TEXT];
    bool kok[PM_API__TABLE_KEYS], lists = false;
    size_t fixed = 2;   /* the braces */
    for (size_t i = 0; i < sh->ncols; i++) {
        const pm_meta_col *col = &sh->cols[i];
        size_t kl = col->key_len;
        /* comma, key (6 kl + 3 escaped, or its 32-byte block), value */
        fixed += 6 * kl + 36 + (col->kind == PM_META_COL_F64X3   ? 100
                                : col->kind == PM_META_COL_U32X2 ? 44
                                : col->kind == PM_META_COL_U32S || col->kind == PM_META_COL_BOOLS ? 2
                                                                 : 32);
        lists |= col->kind == PM_META_COL_U32S || col->kind == PM_META_COL_BOOLS;
        if (i >= PM_API__TABLE_KEYS) continue;
        char tmp[6 * 28 + 36];
        kok[i] = false;
        if (kl > 28) continue;
        tmp[0] = ',';
        char *e = pm_api__put_key(tmp + 1, col->key, kl, c);
        if ((size_t)(e - tmp) != kl + 4) continue;   /* escaped */
        memcpy(kt[i], tmp, (size_t)(e - tmp));   /* ,"key": */
        kok[i] = true;
    }
    if (!pm_api__w_reserve(w, 1)) return;
    w->data[w->len++] = '[';
    /* The usual table: every column written has its key kept above. */
    pm_api__tcol plan[PM_API__TABLE_KEYS];
    size_t np = 0;
    bool planned = sh->ncols <= PM_API__TABLE_KEYS;
    pm_api__tcol lcols[PM_API__TABLE_KEYS];
    size_t nl = 0;
    for (size_t i = 0; planned && i < sh->ncols; i++)
        if (sh->cols[i].kind == PM_META_COL_U32S || sh->cols[i].kind == PM_META_COL_BOOLS)
            lcols[nl++] = (pm_api__tcol){NULL, sh->cols[i].offset, 0, sh->cols[i].kind};
    for (size_t i = 0; planned && i < sh->ncols; i++) {
        if (skip >> i & 1) continue;
        planned = kok[i] && (unsigned)sh->cols[i].kind <= PM_META_COL_META;
        plan[np++] = (pm_api__tcol){kt[i], sh->cols[i].offset, (uint32_t)sh->cols[i].key_len + 4,
                                    sh->cols[i].kind};
    }
    if (planned) {
        /* Kept for the next table of this shape, in a slot whose rows are
         * not being written (round robin among them; none: not kept). */
        pm_api__plan *pl = NULL;
        for (unsigned t = 0; t < PM_API__PLANS && !pl; t++) {
            pm_api__plan *q = &c->plans[(c->plan_next + t) % PM_API__PLANS];
            if (!q->shape || !q->busy) pl = q;
        }
        if (pl) {
            c->plan_next = (unsigned)(pl - c->plans + 1) % PM_API__PLANS;
            *pl = (pm_api__plan){.shape = sh, .skip = skip, .n = np, .fixed = fixed, .nlists = nl};
            memcpy(pl->lists, lcols, nl * sizeof *lcols);
            for (size_t j = 0; j < np; j++) {
                memcpy(pl->keys[j], plan[j].key, PM_API__KEY_TEXT);
                pl->cols[j] = plan[j];
                pl->cols[j].key = pl->keys[j];
            }
        }
        pm_api__w_rows_planned(w, m, plan, np, fixed, lcols, nl, c);
        pm_api__w_char(w, ']');
        return;
    }
    for (size_t r = 0; r < m->u.table.n; r++) {
        const char *row = (const char *)m->u.table.rows + r * sh->row_size;
        size_t need;
        char *o = pm_api__row_open(w, sh, row, r, fixed, lists, &need);
        if (!o) return;
        size_t start = (size_t)(o - w->data);
        for (size_t i = 0; i < sh->ncols; i++) {
            const pm_meta_col *col = &sh->cols[i];
            const void *f = row + col->offset;
            const pm_meta *sub = NULL;
            if (col->kind == PM_META_COL_META && !(sub = *(const pm_meta *const *)f)) continue;
            if (i < 64 && (skip >> i & 1)) continue;
            size_t kl = col->key_len;
            if (i < PM_API__TABLE_KEYS && kok[i]) {
                memcpy(o, kt[i], PM_API__KEY_TEXT);
                o += kl + 4;
            } else {
                *o++ = ',';
                o = pm_api__put_key(o, col->key, kl, c);
            }
            const char *str = NULL;
            if (!sub) o = pm_api__put_cell(o, col->kind, f, &str, c);
            if (str) {
                char *end = pm_api__put_cached_str(o, str, c);
                if (end) {
                    o = end;
                    continue;
                }
            }
            if (!str && !sub) continue;
            w->len = (size_t)(o - w->data);
            if (str) pm_api__w_str_kept(w, str, c);
            else pm_api__w_node(w, sub, c);
            /* room again for what is left of the row (all of it, as a bound) */
            if (!pm_api__w_reserve(w, need)) return;
            o = w->data + w->len;
        }
        pm_api__row_close(w, o, start);
    }
    pm_api__w_char(w, ']');
}

/* Every column (the full metadata: no skip test per member), or some. */
static void pm_api__w_table(pm_api__w *w, const pm_meta *m, pm_api__meta_cache *c) {
    pm_api__w_table_cols(w, m, 0, c);
}

static void pm_api__w_table_some(pm_api__w *w, const pm_meta *m, uint64_t skip, pm_api__meta_cache *c) {
    pm_api__w_table_cols(w, m, skip, c);
}

static void pm_api__w_node(pm_api__w *w, const pm_meta *m, pm_api__meta_cache *c) {
    if (m->kind == PM_META_ARR || m->kind == PM_META_OBJ) {
        pm_api__w_kids(w, m, c);
        return;
    }
    if (m->kind == PM_META_TABLE) {
        pm_api__w_table(w, m, c);
        return;
    }
    if (m->kind == PM_META_STR) {
        if (!pm_api__w_reserve(w, PM_API__KEY_TEXT)) return;
        char *end = pm_api__put_cached_str(w->data + w->len, m->u.s, c);
        if (end) w->len = (size_t)(end - w->data);
        else pm_api__w_str_kept(w, m->u.s, c);
        return;
    }
    if (!pm_api__w_reserve(w, 32)) return;
    w->len = (size_t)(pm_api__put_scalar(w->data + w->len, m, c) - w->data);
}

void pm_api__meta_cache_init(pm_api__meta_cache *c) {
    /* Keys (looked up for every member) by a NULL owner; the strings' 48 KiB
     * by their live bits only: a small tree touches a few of them. */
    memset(c->key_at, 0, sizeof c->key_at);
    memset(c->strs_live, 0, sizeof c->strs_live);
    /* Empty number slots: bits whose hash is another slot, so that no
     * lookup in that slot can match them (0's is slot 0: 1's elsewhere). */
    memset(c->num_bits, 0, sizeof c->num_bits);
    c->num_bits[0] = PM_API__NUM_EMPTY0;
    for (int i = 0; i < PM_API__PLANS; i++) c->plans[i].shape = NULL, c->plans[i].busy = false;
    c->plan_next = 0;
}

void pm_api__w_meta_cached(pm_api__w *w, const pm_meta *m, pm_api__meta_cache *c) { pm_api__w_node(w, m, c); }

void pm_api__w_table_skip(pm_api__w *w, const pm_meta *m, uint64_t skip, pm_api__meta_cache *c) {
    pm_api__w_table_some(w, m, skip, c);
}

void pm_api__w_meta(pm_api__w *w, const pm_meta *m) {
    pm_api__meta_cache c;
    pm_api__meta_cache_init(&c);
    pm_api__w_node(w, m, &c);
}

void pm_api__w_base64(pm_api__w *w, const unsigned char *b, size_t n) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!pm_api__w_reserve(w, (n + 2) / 3 * 4)) return;
    char *o = w->data + w->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = tab[(v >> 6) & 63];
        *o++ = tab[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0);
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    w->len = (size_t)(o - w->data);
}

/* ---- the output buffer ---- */

#define PM_API__HUGE ((size_t)2 << 20)

void *pm_api__out_alloc(size_t n) {
    if (n < 4 * PM_API__HUGE) return malloc(n ? n : 1);
    void *p = aligned_alloc(PM_API__HUGE, n);
#ifdef MADV_HUGEPAGE
    /* Advice only: where THP is off the pages are simply 4 KiB. */
    if (p) (void)madvise(p, n & ~(PM_API__HUGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

bool pm_api__resident(const void *p, size_t n) {
    long ps = sysconf(_SC_PAGESIZE);   /* once per big output: no shared state to race on */
    size_t page = ps > 0 ? (size_t)ps : 4096;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1), end = (uintptr_t)p + n;
    unsigned char vec[1024];
    while (a < end) {
        size_t pages = (end - a + page - 1) / page;
        if (pages > sizeof vec) pages = sizeof vec;
        if (mincore((void *)a, pages * page, vec) != 0) return false;
        for (size_t i = 0; i < pages; i++)
            if (!(vec[i] & 1)) return false;
        a += pages * page;
    }
    return true;
}

/* ---- POSITION bounds ---- */

/* Four floats at a time (GCC and clang vector extensions). */
typedef float pm_api__v4f __attribute__((vector_size(16)));
typedef int32_t pm_api__v4i __attribute__((vector_size(16)));

/* x < l ? x : l and x > h ? x : h in every lane: exactly what SSE's
 * MINPS and MAXPS do (on equal values, zeros of either sign included, and
 * on a NaN, they return the second operand), one instruction each. */
#if defined(__SSE__)
static inline pm_api__v4f pm_api__v4_min(pm_api__v4f x, pm_api__v4f l) {
    return (pm_api__v4f)_mm_min_ps((__m128)x, (__m128)l);
}
static inline pm_api__v4f pm_api__v4_max(pm_api__v4f x, pm_api__v4f h) {
    return (pm_api__v4f)_mm_max_ps((__m128)x, (__m128)h);
}
#else
static inline pm_api__v4f pm_api__v4_pick(pm_api__v4f a, pm_api__v4f b, pm_api__v4i take_a) {
    return (pm_api__v4f)(((pm_api__v4i)a & take_a) | ((pm_api__v4i)b & ~take_a));
}
static inline pm_api__v4f pm_api__v4_min(pm_api__v4f x, pm_api__v4f l) {
    return pm_api__v4_pick(x, l, x < l);
}
static inline pm_api__v4f pm_api__v4_max(pm_api__v4f x, pm_api__v4f h) {
    return pm_api__v4_pick(x, h, x > h);
}
#endif

/* The first of p[k], p[k + 3], ... (n of them) that is zero: which zero a
 * scalar "if (x < min) min = x" pass keeps when the bound is 0. */
static double pm_api__first_zero(const float *p, uint32_t n, int k) {
    for (uint32_t i = 0; i < n; i++)
        if (p[3 * i + k] == 0.0f) return (double)p[3 * i + k];
    return 0.0;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define PM_API__BOUNDS_AVX 1
/* Eight vertices per step where the CPU has AVX: 24 floats in three
 * 8-lane vectors (float j of a step on axis j % 3), VMINPS and VMAXPS
 * lane by lane as MINPS and MAXPS below, the lanes folded the same way.
 * Takes the first multiple of 8 of n (n >= 8) vertices into lo and hi and
 * returns how many it took. */
__attribute__((target("avx"))) static uint32_t pm_api__bounds8_avx(const float *p, uint32_t n, float lo[3],
                                                                   float hi[3]) {
    __m256 l0 = _mm256_loadu_ps(p), l1 = _mm256_loadu_ps(p + 8), l2 = _mm256_loadu_ps(p + 16);
    __m256 h0 = l0, h1 = l1, h2 = l2;
    uint32_t i = 8;
    for (; i + 8 <= n; i += 8) {
        __m256 x0 = _mm256_loadu_ps(p + 3 * (size_t)i), x1 = _mm256_loadu_ps(p + 3 * (size_t)i + 8),
               x2 = _mm256_loadu_ps(p + 3 * (size_t)i + 16);
        l0 = _mm256_min_ps(x0, l0), h0 = _mm256_max_ps(x0, h0);
        l1 = _mm256_min_ps(x1, l1), h1 = _mm256_max_ps(x1, h1);
        l2 = _mm256_min_ps(x2, l2), h2 = _mm256_max_ps(x2, h2);
    }
    float lv[24], hv[24];
    _mm256_storeu_ps(lv, l0), _mm256_storeu_ps(lv + 8, l1), _mm256_storeu_ps(lv + 16, l2);
    _mm256_storeu_ps(hv, h0), _mm256_storeu_ps(hv + 8, h1), _mm256_storeu_ps(hv + 16, h2);
    for (int q = 0; q < 24; q++) {
        int k = q % 3;
        lo[k] = lv[q] < lo[k] ? lv[q] : lo[k];
        hi[k] = hv[q] > hi[k] ? hv[q] : hi[k];
    }
    return i;
}
#endif

/* Four vertices (twelve floats, three vectors whose lanes cycle through
 * the axes) per step, eight with AVX: the plain pass over every position
 * took longer than copying the whole GLB buffer. A zero bound is looked up
 * again (pm_api__first_zero), so which lane's zero won does not matter. */
void pm_api__f32_bounds3(const float *p, uint32_t n, double mn[3], double mx[3]) {
    for (int k = 0; k < 3; k++) mn[k] = INFINITY, mx[k] = -INFINITY;
    if (n == 0) return;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    uint32_t i = 0;
#ifdef PM_API__BOUNDS_AVX
    static int avx = -1;   /* benign race: every thread stores the same answer */
    if (avx < 0) avx = __builtin_cpu_supports("avx") ? 1 : 0;
    if (avx && n >= 16) i = pm_api__bounds8_avx(p, n, lo, hi);
#endif
    if (i == 0 && n >= 4) {
        pm_api__v4f l[3], h[3];
        for (int j = 0; j < 3; j++) memcpy(&l[j], p + 4 * j, sizeof l[j]), h[j] = l[j];
        for (i = 4; i + 4 <= n; i += 4) {   /* the three vectors spelt out: no inner loop */
            pm_api__v4f x0, x1, x2;
            memcpy(&x0, p + 3 * i, sizeof x0);
            memcpy(&x1, p + 3 * i + 4, sizeof x1);
            memcpy(&x2, p + 3 * i + 8, sizeof x2);
            l[0] = pm_api__v4_min(x0, l[0]), h[0] = pm_api__v4_max(x0, h[0]);
            l[1] = pm_api__v4_min(x1, l[1]), h[1] = pm_api__v4_max(x1, h[1]);
            l[2] = pm_api__v4_min(x2, l[2]), h[2] = pm_api__v4_max(x2, h[2]);
        }
        /* lane axes: l[0] x y z x, l[1] y z x y, l[2] z x y z */
        static const int lane[3][4][2] = {{{0, 0}, {0, 3}, {1, 2}, {2, 1}},
                                          {{0, 1}, {1, 0}, {1, 3}, {2, 2}},
                                          {{0, 2}, {1, 1}, {2, 0}, {2, 3}}};
        for (int k = 0; k < 3; k++)
            for (int q = 0; q < 4; q++) {
                float a = l[lane[k][q][0]][lane[k][q][1]], b = h[lane[k][q][0]][lane[k][q][1]];
                lo[k] = a < lo[k] ? a : lo[k];
                hi[k] = b > hi[k] ? b : hi[k];
            }
    }
    for (; i < n; i++)
        for (int k = 0; k < 3; k++) {
            float x = p[3 * i + k];
            lo[k] = x < lo[k] ? x : lo[k];
            hi[k] = x > hi[k] ? x : hi[k];
        }
    for (int k = 0; k < 3; k++) {
        mn[k] = lo[k] == 0.0f ? pm_api__first_zero(p, n, k) : (double)lo[k];
        mx[k] = hi[k] == 0.0f ? pm_api__first_zero(p, n, k) : (double)hi[k];
    }
}

/* ---- the scene view ---- */

/* Returns a malloc'd copy of normals with the bad ones fixed, NULL when all
 * are unit already (*oom tells a failed malloc apart). */
static float *pm_api__fix_normals(const pm_prim *p, bool *oom) {
    uint32_t first = 0;
    while (first < p->vcount && pm_normal_is_unit(p->normals + 3 * first)) first++;
    if (first == p->vcount) return NULL;
    float *n = malloc((size_t)p->vcount * 3 * sizeof *n);
    if (!n) {
        *oom = true;
        return NULL;
    }
    memcpy(n, p->normals, (size_t)p->vcount * 3 * sizeof *n);
    for (uint32_t i = first; i < p->vcount; i++) {
        float *v = n + 3 * i;
        if (!pm_normal_is_unit(v)) pm_normal_fix(v);
    }
    return n;
}

static float *pm_api__clamp_colors(const pm_prim *p, bool *oom) {
    size_t n = (size_t)p->vcount * 4, i = 0;
    while (i < n && p->colors[i] >= 0 && p->colors[i] <= 1) i++;
    if (i == n) return NULL;
    float *c = malloc(n * sizeof *c);
    if (!c) {
        *oom = true;
        return NULL;
    }
    for (i = 0; i < n; i++) c[i] = pm_color_clamp(p->colors[i]);
    return c;
}

int pm_api__view_init(pm_api__view *v, const pm_scene *s) {
    v->s = s;
    v->al = NULL;
    if (s->nprims <= sizeof v->local / sizeof *v->local) {
        memset(v->local, 0, sizeof v->local);
        v->prims = v->local;
    } else if (!(v->prims = calloc(s->nprims, sizeof *v->prims))) {
        return -1;
    }
    if (s->validated) {   /* pm_scene_validate checked and fixed it where it was made */
        for (uint32_t i = 0; i < s->nprims; i++) {
            const pm_prim *p = &s->prims[i];
            v->prims[i] = (pm_api__prim_view){p, p->normals, p->colors, NULL, NULL};
        }
        return 0;
    }
    for (uint32_t i = 0; i < s->nprops; i++)
        if (!pm_props_finite(&s->props[i])) return -2;
    bool oom = false;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *p = &s->prims[i];
        pm_api__prim_view *pv = &v->prims[i];
        pv->p = p;
        if (!pm_prim_contract_ok(p)) return -2;
        pv->own_normals = pm_api__fix_normals(p, &oom);
        pv->own_colors = p->colors ? pm_api__clamp_colors(p, &oom) : NULL;
        if (oom) return -1;
        pv->normals = pv->own_normals ? pv->own_normals : p->normals;
        pv->colors = pv->own_colors ? pv->own_colors : p->colors;
    }
    return 0;
}

void pm_api__view_free(pm_api__view *v) {
    for (uint32_t i = 0; v->prims && i < v->s->nprims; i++) {
        free(v->prims[i].own_normals);
        free(v->prims[i].own_colors);
    }
    if (v->prims != v->local) free(v->prims);
    v->prims = NULL;
}
