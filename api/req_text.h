#ifndef PM_API_REQ_TEXT_H
#define PM_API_REQ_TEXT_H
/* Reading a request straight from its bytes and writing its canonical
 * text as it goes (pm_api_generator.parse_text: api/req_network_fast.c,
 * api/req_road_fast.c). The cursor takes the plain spelling of JSON only
 * and says false at anything else; its caller then gives the body up to
 * the document path, which answers every error as ever. The writer writes
 * what pm_api_canonical_dump would write for the same values. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "canon_short.h"
#include "canon_text.h"
#include "json_fast.h"

/* The readers below are small and called per value: inlined into the
 * loops that call them, they cost no call and no saved registers. */
#define PM__TX_INLINE static inline __attribute__((always_inline))

/* ---- the cursor ---- */

typedef struct pm__tx { const char *p, *end; } pm__tx;


static inline void pm__tx_ws(pm__tx *f) {
    const char *p = f->p;
    /* Every blank is at most ' ': one test passes the rest, and most
     * calls meet no blank at all, or one space before a token. */
    if (p < f->end && (unsigned char)*p > ' ') return;
    if (f->end - p >= 2 && *p == ' ' && (unsigned char)p[1] > ' ') {
        f->p = p + 1;
        return;
    }
    while (p < f->end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    f->p = p;
}

/* Skips blanks, then takes c. */
PM__TX_INLINE bool pm__tx_take(pm__tx *f, char c) {
    pm__tx_ws(f);
    if (f->p >= f->end || *f->p != c) return false;
    f->p++;
    return true;
}

/* After a member or element: 1 at ',', 0 at close (both taken), -1 else. */
PM__TX_INLINE int pm__tx_next(pm__tx *f, char close) {
    pm__tx_ws(f);
    if (f->p < f->end && *f->p == ',') {
        f->p++;
        return 1;
    }
    if (f->p < f->end && *f->p == close) {
        f->p++;
        return 0;
    }
    return -1;
}

/* 1 when the container just opened is empty (its close taken), else 0. */
PM__TX_INLINE int pm__tx_empty(pm__tx *f, char close) {
    pm__tx_ws(f);
    if (f->p < f->end && *f->p == close) {
        f->p++;
        return 1;
    }
    return 0;
}

/* The bytes a plain string may hold: printable ASCII other than '"' and
 * '\\' (so its text is its bytes, in the input and in the canonical form
 * alike). */
#define PM__TX_P8(c) ((c) >= 0x20 && (c) <= 0x7e && (c) != '"' && (c) != '\\')
#define PM__TX_P16(c) PM__TX_P8(c), PM__TX_P8(c + 1), PM__TX_P8(c + 2), PM__TX_P8(c + 3), \
    PM__TX_P8(c + 4), PM__TX_P8(c + 5), PM__TX_P8(c + 6), PM__TX_P8(c + 7), PM__TX_P8(c + 8), \
    PM__TX_P8(c + 9), PM__TX_P8(c + 10), PM__TX_P8(c + 11), PM__TX_P8(c + 12), \
    PM__TX_P8(c + 13), PM__TX_P8(c + 14), PM__TX_P8(c + 15)
static const bool pm__tx_plain_byte[256] = {
    PM__TX_P16(0x00), PM__TX_P16(0x10), PM__TX_P16(0x20), PM__TX_P16(0x30),
    PM__TX_P16(0x40), PM__TX_P16(0x50), PM__TX_P16(0x60), PM__TX_P16(0x70)};

/* A plain string (the bytes above between quotes). */
PM__TX_INLINE bool pm__tx_plain(pm__tx *f, const char **s, size_t *n) {
    pm__tx_ws(f);
    if (f->p >= f->end || *f->p != '"') return false;
    const char *start = ++f->p, *p = start;
    while (p < f->end && pm__tx_plain_byte[(unsigned char)*p]) p++;
    if (p >= f->end || *p != '"') return false;
    f->p = p + 1;
    *s = start;
    *n = (size_t)(p - start);
    return true;
}

/* An object's member names (at most 16 bytes, zero-padded), with their
 * lengths. */
typedef struct pm__tx_name { char s[16]; size_t n; } pm__tx_name;
#define PM__TX_NAME(s) {s, sizeof(s) - 1}

/* Whether the n bytes at k are name's: two masked 8-byte compares when 16
 * bytes can be read at k, else byte by byte. */
PM__TX_INLINE bool pm__tx_is_name(const char *k, size_t room, const pm__tx_name *name) {
    static const unsigned char ones[32] = {255, 255, 255, 255, 255, 255, 255, 255,
                                           255, 255, 255, 255, 255, 255, 255, 255};
    size_t n = name->n;
    if (room >= 16) {
        uint64_t k0, k1, s0, s1, m0, m1;
        memcpy(&k0, k, 8);
        memcpy(&k1, k + 8, 8);
        memcpy(&s0, name->s, 8);
        memcpy(&s1, name->s + 8, 8);
        memcpy(&m0, ones + 16 - n, 8);   /* n bytes of ones, whatever the byte order */
        memcpy(&m1, ones + 24 - n, 8);
        return (((k0 ^ s0) & m0) | ((k1 ^ s1) & m1)) == 0;
    }
    size_t j = 0;
    while (j < n && name->s[j] == k[j]) j++;
    return j == n;
}

/* A member's key and its ':'; *bit the key's index in names (count of
 * them), which must not be in *seen yet: unknown and repeated keys give
 * up, as does any key that is not one of the names byte for byte (an
 * escape, for one). */
PM__TX_INLINE bool pm__tx_key(pm__tx *f, const pm__tx_name *names, unsigned count, unsigned *seen,
                       unsigned *bit) {
    pm__tx_ws(f);
    if (f->p >= f->end || *f->p != '"') return false;
    const char *k = f->p + 1;
    size_t room = (size_t)(f->end - k);
    for (unsigned i = 0; i < count; i++) {
        size_t n = names[i].n;
        /* The first byte first (most names differ there). */
        if (room <= n || names[i].s[0] != k[0] || k[n] != '"' || !pm__tx_is_name(k, room, &names[i]))
            continue;
        if (*seen & (1u << i)) return false;
        f->p = k + n + 1;
        if (!pm__tx_take(f, ':')) return false;
        *seen |= 1u << i;
        *bit = i;
        return true;   /* every value's reader skips the blanks before it */
    }
    return false;
}

PM__TX_INLINE bool pm__tx_null(pm__tx *f) {
    pm__tx_ws(f);
    if ((size_t)(f->end - f->p) < 4 || memcmp(f->p, "null", 4) != 0) return false;
    f->p += 4;
    return true;
}

/* A number in [lo, hi] (lo excluded when lo_open), -0 made 0. */
PM__TX_INLINE bool pm__tx_num(pm__tx *f, double lo, bool lo_open, double hi, double *out) {
    bool is_int;
    int64_t i;
    double x;
    pm__tx_ws(f);
    if (!pm_api__json_number_short(&f->p, f->end, &is_int, &i, &x)) return false;
    if (lo_open ? !(x > lo) : !(x >= lo)) return false;
    if (!(x <= hi)) return false;
    *out = x + 0.0;
    return true;
}

/* An integer token (no fraction, no exponent) in [lo, hi]. */
PM__TX_INLINE bool pm__tx_int(pm__tx *f, int64_t lo, int64_t hi, int64_t *out) {
    bool is_int;
    double x;
    pm__tx_ws(f);
    if (!pm_api__json_number_short(&f->p, f->end, &is_int, out, &x) || !is_int) return false;
    return *out >= lo && *out <= hi;
}



/* ---- a real read and its canonical text written in one step ---- */

/* Both readers keep a coordinate's canonical text as it is read, from its
 * own token, rather than printing the value again: short tokens in one
 * step (pm_api__real_short), the others from their digits
 * (pm_api__canon_real_tok). The text is the one pm_api__tx_real writes
 * for the value read. */

/* The last value of a column and its text (a flat road's heights, a
 * straight's other coordinate), copied instead of written again. */
typedef struct pm__tx_memo {
    uint64_t bits;
    size_t len;     /* 0: none */
    char text[PM_API_CANON_REAL_ROOM];
} pm__tx_memo;

/* One real token in [-bound, bound] after the cursor's blanks: its value
 * (-0 made 0) into *v, its canonical text at w (PM_API_CANON_REAL_ROOM
 * bytes). Returns the text's end, or NULL (the cursor then unspecified). */
PM__TX_INLINE char *pm__tx_real_text(pm__tx *f, double bound, pm__tx_memo *memo, double *v,
                                     char *w) {
    if (f->p < f->end && *f->p == ' ') f->p++;   /* the one space after a ',' (a blank fails below) */
    const char *p = f->p;
    if (f->end - p >= PM_API_REAL_SHORT_ROOM) {   /* the short tokens in one step */
        size_t n;
        const char *e = pm_api__real_short(p, v, w, &n);
        if (e) {
            if (!(*v >= -bound && *v <= bound)) return NULL;
            *v += 0.0;   /* -0 as 0 */
            f->p = e;
            return w + n;
        }
    }
    pm__tx_ws(f);
    p = f->p;
    /* 0 and -0 as a whole token: "0.0" */
    size_t z = (size_t)(p < f->end && *p == '-');
    if (f->end - p > (ptrdiff_t)(z + 1) && p[z] == '0') {
        char c = p[z + 1];
        if ((unsigned)(c - '0') > 9 && c != '.' && c != 'e' && c != 'E') {
            f->p = p + z + 1;
            *v = 0.0;
            memcpy(w, "0.0", 3);
            return w + 3;
        }
    }
    pm_api_numtok t;
    bool is_int;
    int64_t i;
    if (!pm_api__json_number_tok(&f->p, f->end, &is_int, &i, v, &t) ||
        !(*v >= -bound && *v <= bound))
        return NULL;
    *v += 0.0;   /* -0 as 0 */
    uint64_t bits;
    memcpy(&bits, v, sizeof bits);
    if (memo->len && memo->bits == bits) {
        memcpy(w, memo->text, PM_API_CANON_REAL_ROOM);   /* whole: fixed size */
        return w + memo->len;
    }
    size_t n = pm_api__canon_real_tok(*v, &t, w);
    if (!n) return NULL;
    memo->bits = bits;
    memo->len = n;
    memcpy(memo->text, w, PM_API_CANON_REAL_ROOM);
    return w + n;
}

/* Bytes pm__tx_point_short may read from the point's '[': two
 * coordinates of at most 18 bytes with their space and separator, then
 * the third's space and its token's room. */
#define PM__TX_POINT_ROOM (1 + 2 * 18 + 1 + PM_API_REAL_SHORT_ROOM)
/* Room a point's text takes: "[x,y,z]". */
#define PM__TX_POINT_TEXT (3 * PM_API_CANON_REAL_ROOM + 4)

/* A point "[x, z]" or "[x, y, z]" at p (PM__TX_POINT_ROOM bytes readable)
 * when its coordinates are short tokens (pm_api__real_short) in [-bound,
 * bound], with no blank but one space before each: the values into v,
 * *dim their count, the point's canonical text at w (PM__TX_POINT_TEXT
 * bytes), its end into *wend. Returns the end of the point, or NULL
 * (nothing consumed): pm__tx_real_text then takes it value by value. The
 * cursor is local, so the text's byte stores do not make the compiler
 * reload it. */
#ifdef PM_API_JSON_SWAR
/* pm__tx_point_short with its tokens' digits read by scan
 * (pm_api__real_short_with). */
PM__TX_INLINE const char *pm__tx_point_short_with(const char *p, double bound, double *v, size_t *dim,
                                                  char *w, char **wend, pm_api__short_scan scan) {
    if (*p++ != '[') return NULL;
    *w++ = '[';
    for (size_t c = 0; c < 3; c++) {
        size_t n;
        double x;
        const char *e;
        p += *p == ' ';
        if (p[0] == '0' && (p[1] == ',' || p[1] == ']')) {   /* 0 (a flat road's heights) */
            x = 0.0;
            memcpy(w, "0.0", 3);
            w += 3;
            e = p + 1;
        } else {
            e = pm_api__real_short_with(p, &x, w, &n, scan);
            if (!e || !(x >= -bound && x <= bound) || (*e != ',' && *e != ']')) return NULL;
            w += n;
        }
        v[c] = x + 0.0;   /* -0 as 0 */
        *w++ = *e;
        p = e + 1;
        if (*e == ']') {
            if (c == 0) return NULL;
            *dim = c + 1;
            *wend = w;
            return p;
        }
    }
    return NULL;   /* a fourth coordinate: the general path decides */
}

/* The same point's values alone (pm_api__real_short_value), -0 as 0, for
 * a reader that keeps no text of them (a road's points: their canonical
 * form is binary). */
PM__TX_INLINE const char *pm__tx_point_value(const char *p, double bound, double *v, size_t *dim,
                                             pm_api__short_scan scan) {
    if (*p++ != '[') return NULL;
    for (size_t c = 0; c < 3; c++) {
        double x;
        const char *e;
        p += *p == ' ';
        if (p[0] == '0' && (p[1] == ',' || p[1] == ']')) {
            x = 0.0;
            e = p + 1;
        } else {
            e = pm_api__real_short_value(p, &x, scan);
            if (!e || !(x >= -bound && x <= bound) || (*e != ',' && *e != ']')) return NULL;
        }
        v[c] = x;
        p = e + 1;
        if (*e == ']') {
            if (c == 0) return NULL;
            *dim = c + 1;
            return p;
        }
    }
    return NULL;
}
#endif

#if PM_API_SHORT_SCAN_SSSE3
/* Bytes pm__tx_point3_ssse3 may read from the point's '[': 64 for its
 * separators, and a token's 16 from as far as the 63rd. */
#define PM__TX_POINT3_ROOM (63 + 16)

/* One coordinate of pm__tx_point3_ssse3: the bytes from t to its
 * separator at end are one space at most, then a token of
 * pm_api__real_short_value's shape, its value (within bound, -0 as 0)
 * into *v. */
__attribute__((target("ssse3"))) static inline bool pm__tx_coord_ssse3(const char *t, const char *end,
                                                                       double bound, double *v) {
    t += *t == ' ';
    if (end - t == 1 && *t == '0') {   /* 0 (a flat road's heights) */
        *v = 0.0;
        return true;
    }
    bool neg = *t == '-';
    t += neg;
    int n1, n2;
    uint64_t w;
    if (!pm_api__short_scan_ssse3(t, &n1, &n2, &w) || (n1 > 1 && *t == '0') ||
        end - t != n1 + n2 + (n2 != 0))
        return false;
    /* The sign before the division: the quotient's bits negated (rounding
     * to nearest is symmetric), and -0 comes out as 0. */
    double x = (double)(neg ? -(int64_t)w : (int64_t)w) / pm_api__short_p10[n2];
    if (!(fabs(x) <= bound)) return false;
    *v = x;
    return true;
}

/* The ',' and ']' among the 32 bytes at p, a bit each. */
__attribute__((target("ssse3"))) static inline uint32_t pm__tx_seps32(const char *p) {
    const __m128i comma = _mm_set1_epi8(','), close = _mm_set1_epi8(']');
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    a = _mm_or_si128(_mm_cmpeq_epi8(a, comma), _mm_cmpeq_epi8(a, close));
    b = _mm_or_si128(_mm_cmpeq_epi8(b, comma), _mm_cmpeq_epi8(b, close));
    return (uint32_t)_mm_movemask_epi8(a) | (uint32_t)_mm_movemask_epi8(b) << 16;
}

/* pm__tx_point_value's three-coordinate points (the same points and
 * values) in SSSE3 lanes, from p (PM__TX_POINT3_ROOM bytes readable). The
 * separators come first, from a mask of the ',' and ']' in 32 bytes (64
 * for a longer point): so where each coordinate starts and where the
 * point ends are known before any digit is read, and the next point's
 * address waits on a load and a few lane steps, not on the three tokens'
 * digit scans one after another. Each token must then end at its
 * separator exactly, which leaves no byte unchecked. NULL at anything
 * else (a blank elsewhere, two coordinates or four, a point past 64
 * bytes): pm__tx_num then takes it. */
__attribute__((target("ssse3"))) static inline const char *pm__tx_point3_ssse3(const char *p, double bound,
                                                                                double *v) {
    uint64_t sep = pm__tx_seps32(p), sep1 = sep & (sep - 1), sep2 = sep1 & (sep1 - 1);
    if (!sep2) {   /* fewer than three in the first 32 bytes: the next 32 too */
        sep |= (uint64_t)pm__tx_seps32(p + 32) << 32;
        sep1 = sep & (sep - 1), sep2 = sep1 & (sep1 - 1);
    }
    if (*p != '[' || !sep2) return NULL;
    const char *a = p + __builtin_ctzll(sep), *b = p + __builtin_ctzll(sep1),
               *c = p + __builtin_ctzll(sep2);
    if (*a != ',' || *b != ',' || *c != ']' || !pm__tx_coord_ssse3(p + 1, a, bound, v) ||
        !pm__tx_coord_ssse3(a + 1, b, bound, v + 1) || !pm__tx_coord_ssse3(b + 1, c, bound, v + 2))
        return NULL;
    return c + 1;
}
#endif

PM__TX_INLINE const char *pm__tx_point_short(const char *p, double bound, double *v, size_t *dim,
                                             char *w, char **wend) {
#ifdef PM_API_JSON_SWAR
    return pm__tx_point_short_with(p, bound, v, dim, w, wend, pm_api__short_scan_swar);
#else
    (void)p, (void)bound, (void)v, (void)dim, (void)w, (void)wend;
    return NULL;
#endif
}

/* ---- the canonical text ---- */

#define PM__TX_MEMO 4

typedef struct pm__tx_out {
    char *b;
    size_t len, cap;
    bool failed;
    /* The last reals written and their text: requests repeat values (an
     * edge's width, a grid column's x, a flat road's heights), and a copy
     * is cheaper than the digits. */
    uint64_t memo_bits[PM__TX_MEMO];
    uint8_t memo_len[PM__TX_MEMO];
    char memo[PM__TX_MEMO][PM_API_CANON_REAL_ROOM];
    unsigned memo_next;
} pm__tx_out;

/* pm__tx_room when the block is full. */
char *pm_api__tx_grow(pm__tx_out *o, size_t n);

/* Room for n more bytes, or NULL (failed set; a failed text is dropped whole). */
static inline char *pm__tx_room(pm__tx_out *o, size_t n) {
    if (o->len + n <= o->cap) return o->b + o->len;
    return pm_api__tx_grow(o, n);
}

/* Inlined: most calls copy a literal, whose copy then needs no call. */
PM__TX_INLINE void pm__tx_put(pm__tx_out *o, const char *s, size_t n) {
    char *w = pm__tx_room(o, n);
    if (!w) return;
    memcpy(w, s, n);
    o->len += n;
}

#define PM__TX_LIT(o, s) pm__tx_put((o), (s), sizeof(s) - 1)

/* A real as the dump writes it (pm_api__canon_real_text). */
void pm_api__tx_real(pm__tx_out *o, double x);
/* An integer as jansson writes it. */
void pm_api__tx_integer(pm__tx_out *o, int64_t v);
#endif
