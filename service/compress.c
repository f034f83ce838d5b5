#include "compress.h"

#include <brotli/encode.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

const pm_svc_zlevels pm_svc_zlevels_dynamic = {.gzip = 6, .br = 4, .min_len = PM_SVC_ZMIN_LEN};

/* ---- Accept-Encoding ---- */

static const char *pm_svc__skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* A qvalue (RFC 9110 12.4.2): "0" [ "." 0*3DIGIT ] / "1" [ "." 0*3("0") ],
 * in thousandths, from p to end. -1 when malformed. */
static int pm_svc__qvalue(const char *p, const char *end) {
    if (p >= end || (*p != '0' && *p != '1')) return -1;
    int whole = *p++ - '0', frac = 0, digits = 0;
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
            frac = frac * 10 + (*p - '0');
    }
    if (p != end) return -1;
    for (; digits < 3; digits++) frac *= 10;
    if (whole == 1 && frac != 0) return -1;
    return whole * 1000 + frac;
}

/* The weight of one member's parameters (";q=..."), default 1000; -1 when
 * malformed. Parameters other than q are not defined for this header. */
static int pm_svc__member_q(const char *p, const char *end) {
    int q = 1000;
    while (p < end) {
        p = pm_svc__skip_ws(p);
        if (p >= end) break;
        if (*p != ';') return -1;
        p = pm_svc__skip_ws(p + 1);
        const char *next = memchr(p, ';', (size_t)(end - p));
        if (!next) next = end;
        const char *stop = next;
        while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t')) stop--;
        if (stop - p >= 2 && (p[0] == 'q' || p[0] == 'Q')) {
            const char *v = pm_svc__skip_ws(p + 1);
            if (v >= stop || *v != '=') return -1;
            q = pm_svc__qvalue(pm_svc__skip_ws(v + 1), stop);
            if (q < 0) return -1;
        } else {
            return -1;
        }
        p = next;
    }
    return q;
}

void pm_svc_accept_enc_parse(const char *h, pm_svc_accept_enc *out) {
    memset(out, 0, sizeof *out);
    if (!h) {
        out->q[PM_SVC_CODING_IDENTITY] = 1000;
        return;
    }
    int listed[PM_SVC_CODINGS] = {0}, star = -1;
    const char *p = h;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *name = pm_svc__skip_ws(p);
        size_t n = strcspn(name, ";, \t");
        if (name + n > end) n = (size_t)(end - name);
        int q = n ? pm_svc__member_q(name + n, end) : -1;
        int c = -2;
        if (n == 1 && name[0] == '*') c = -1;
        else if ((n == 4 && strncasecmp(name, "gzip", 4) == 0) ||
                 (n == 6 && strncasecmp(name, "x-gzip", 6) == 0))
            c = PM_SVC_CODING_GZIP;
        else if (n == 2 && strncasecmp(name, "br", 2) == 0) c = PM_SVC_CODING_BR;
        else if (n == 8 && strncasecmp(name, "identity", 8) == 0) c = PM_SVC_CODING_IDENTITY;
        if (q >= 0) {
            /* The first mention of a coding counts; repeats are ignored. */
            if (c == -1 && star < 0) star = q;
            else if (c >= 0 && !listed[c]) {
                listed[c] = 1;
                out->q[c] = q;
            }
        }
        p = *end ? end + 1 : end;
    }
    for (int c = 0; c < PM_SVC_CODINGS; c++)
        if (!listed[c]) out->q[c] = star >= 0 ? star : c == PM_SVC_CODING_IDENTITY ? 1 : 0;
}

int pm_svc_accept_enc_choose(const pm_svc_accept_enc *ae, unsigned available) {
    static const int pref[PM_SVC_CODINGS] = {PM_SVC_CODING_BR, PM_SVC_CODING_GZIP,
                                             PM_SVC_CODING_IDENTITY};
    int best = -1, best_q = 0;
    for (int i = 0; i < PM_SVC_CODINGS; i++) {
        int c = pref[i];
        if (!(available & (1u << c))) continue;
        if (ae->q[c] > best_q) {
            best = c;
            best_q = ae->q[c];
        }
    }
    return best;
}

const char *pm_svc_coding_name(int coding) {
    return coding == PM_SVC_CODING_GZIP ? "gzip" : coding == PM_SVC_CODING_BR ? "br" : NULL;
}

const char *pm_svc_coding_tag_suffix(int coding) {
    return coding == PM_SVC_CODING_GZIP ? ".gz" : coding == PM_SVC_CODING_BR ? ".br" : "";
}

unsigned pm_svc_blob_codings(const pm_svc_blob *b) {
    unsigned m = 1u << PM_SVC_CODING_IDENTITY;
    if (b->coded[0]) m |= 1u << PM_SVC_CODING_GZIP;
    if (b->coded[1]) m |= 1u << PM_SVC_CODING_BR;
    return m;
}

const unsigned char *pm_svc_blob_form(const pm_svc_blob *b, int coding, size_t *len) {
    if ((coding == PM_SVC_CODING_GZIP || coding == PM_SVC_CODING_BR) && b->coded[coding - 1]) {
        *len = b->coded_len[coding - 1];
        return b->coded[coding - 1];
    }
    *len = b->len;
    return b->data;
}

/* ---- compression ---- */

/* Per [kind][coding - 1]: compressions, their time (ns), bytes in and out. */
static atomic_uint_fast64_t pm_svc__zcount[2][2], pm_svc__zns[2][2];
static atomic_uint_fast64_t pm_svc__zin[2][2], pm_svc__zout[2][2];

int pm_svc_gzip(const void *src, size_t len, int level, unsigned char **out, size_t *out_len) {
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip wrapper; its header has no name and mtime 0, so the
     * bytes depend on the input only. */
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t cap = deflateBound(&z, (uLong)len) + 32;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t n = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

int pm_svc_brotli(const void *src, size_t len, int quality, unsigned char **out,
                  size_t *out_len) {
    size_t cap = BrotliEncoderMaxCompressedSize(len);
    if (cap == 0) cap = len + 1024;
    unsigned char *buf = malloc(cap);
    if (!buf) return -1;
    size_t n = cap;
    /* A window no larger than the body: the encoder sizes its tables by the
     * window, and clearing 4 MiB of them costs more than a small body. */
    int lgwin = BROTLI_MIN_WINDOW_BITS;
    while (lgwin < BROTLI_DEFAULT_WINDOW && ((size_t)1 << lgwin) - 16 < len) lgwin++;
    if (!BrotliEncoderCompress(quality, lgwin, BROTLI_MODE_GENERIC, len, src, &n, buf)) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

static uint64_t pm_svc__mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Effort falls with size, so that compressing a miss stays in proportion
 * to generating it: brotli 9 runs at about 8 MB/s and 5 at 17 MB/s, gzip 6
 * at 34 MB/s and 1 at 90 MB/s (bench_compress, one core), and a 20 MB
 * dungeon GLB took 30 s of br 9 + gzip 6 on a loaded host. */
#define PM_SVC__ZBIG ((size_t)2 << 20)
#define PM_SVC__ZHUGE ((size_t)8 << 20)

static int pm_svc__at_most(int level, int cap) { return level < cap ? level : cap; }

/* Copies the gzip and br forms (NULL: none) into b, which has none yet:
 * both in one allocation, sized to fit, since the cache keeps it long.
 * Returns 0, or -1 when out of memory (b unchanged). */
static int pm_svc__set_forms(pm_svc_blob *b, const unsigned char *const form[2],
                             const size_t len[2]) {
    size_t total = (form[0] ? len[0] : 0) + (form[1] ? len[1] : 0);
    if (!total) return 0;
    unsigned char *both = malloc(total);
    if (!both) return -1;
    size_t at = 0;
    for (int i = 0; i < 2; i++) {
        if (!form[i]) continue;
        memcpy(both + at, form[i], len[i]);
        b->coded[i] = both + at;
        b->coded_len[i] = len[i];
        at += len[i];
    }
    b->zbase = both;
    return 0;
}

int pm_svc_blob_compress(pm_svc_blob *b, const pm_svc_zlevels *lv, int kind, unsigned want) {
    if (b->len < lv->min_len) b->tried = PM_SVC_CODINGS_ALL;   /* nothing to gain */
    if (b->len < lv->min_len || b->zbase) return 0;
    int level[2] = {lv->gzip, lv->br};
    if (b->len > PM_SVC__ZHUGE) {
        level[0] = pm_svc__at_most(level[0], 1);
        level[1] = pm_svc__at_most(level[1], 4);
    } else if (b->len > PM_SVC__ZBIG) {
        level[1] = pm_svc__at_most(level[1], 5);
    }
    unsigned char *z[2] = {NULL, NULL};
    size_t zlen[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        if (!(want & (1u << (i + 1)))) continue;
        uint64_t t0 = pm_svc__mono_ns();
        int rc = i == 0 ? pm_svc_gzip(b->data, b->len, level[0], &z[i], &zlen[i])
                        : pm_svc_brotli(b->data, b->len, level[1], &z[i], &zlen[i]);
        if (rc < 0) {
            free(z[0]);
            return -1;
        }
        atomic_fetch_add_explicit(&pm_svc__zcount[kind][i], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&pm_svc__zns[kind][i], pm_svc__mono_ns() - t0,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&pm_svc__zin[kind][i], b->len, memory_order_relaxed);
        atomic_fetch_add_explicit(&pm_svc__zout[kind][i], zlen[i], memory_order_relaxed);
        if (zlen[i] > b->len - b->len / 16) {   /* does not pay */
            free(z[i]);
            z[i] = NULL;
            zlen[i] = 0;
        }
    }
    int rc = pm_svc__set_forms(b, (const unsigned char *const *)z, zlen);
    free(z[0]);
    free(z[1]);
    if (rc == 0) b->tried |= want & PM_SVC_CODINGS_ALL;
    return rc;
}

pm_svc_blob *pm_svc_blob_merge(const pm_svc_blob *a, const pm_svc_blob *b) {
    pm_svc_blob *m = pm_svc_blob_copy(a->data, a->len);
    if (!m) return NULL;
    const unsigned char *form[2];
    size_t flen[2];
    for (int i = 0; i < 2; i++) {
        const pm_svc_blob *from = a->coded[i] ? a : b;
        form[i] = from->coded[i];
        flen[i] = form[i] ? from->coded_len[i] : 0;
    }
    if (pm_svc__set_forms(m, form, flen) < 0) {
        pm_svc_blob_unref(m);
        return NULL;
    }
    m->tried = a->tried | b->tried;
    return m;
}

pm_svc_blob *pm_svc_blob_with_form(const pm_svc_blob *b, const pm_svc_zlevels *lv, int coding) {
    pm_svc_blob *one = pm_svc_blob_copy(b->data, b->len);
    if (!one) return NULL;
    if (pm_svc_blob_compress(one, lv, 0, 1u << coding) < 0) {
        pm_svc_blob_unref(one);
        return NULL;
    }
    pm_svc_blob *m = pm_svc_blob_merge(b, one);
    pm_svc_blob_unref(one);
    return m;
}

void pm_svc_compress_render(pm_svc_buf *b) {
    static const char *const kinds[2] = {"result", "dynamic"};
    static const char *const names[2] = {"gzip", "br"};
    static const struct { const char *name, *help; } m[] = {
        {"procmesh_compressions_total",
         "Bodies compressed, by coding and kind (result: each form of a cached result at most "
         "once, when a request first asks for it; dynamic: per response)."},
        {"procmesh_compress_seconds_total", "Time spent compressing."},
        {"procmesh_compress_in_bytes_total", "Bytes given to the compressor."},
        {"procmesh_compress_out_bytes_total", "Bytes the compressor produced."},
    };
    for (int s = 0; s < 4; s++) {
        pm_svc_buf_printf(b, "# HELP %s %s\n# TYPE %s counter\n", m[s].name, m[s].help,
                          m[s].name);
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 2; i++) {
                atomic_uint_fast64_t *src = s == 0   ? &pm_svc__zcount[k][i]
                                            : s == 1 ? &pm_svc__zns[k][i]
                                            : s == 2 ? &pm_svc__zin[k][i]
                                                     : &pm_svc__zout[k][i];
                uint64_t v = atomic_load_explicit(src, memory_order_relaxed);
                pm_svc_buf_printf(b, "%s{coding=\"%s\",kind=\"%s\"} ", m[s].name, names[i],
                                  kinds[k]);
                if (s == 1) pm_svc_buf_printf(b, "%.6f\n", (double)v / 1e9);
                else pm_svc_buf_printf(b, "%llu\n", (unsigned long long)v);
            }
    }
}

void pm_svc_blob_drop_coded(pm_svc_blob *b) {
    free(b->zbase);
    b->zbase = NULL;
    for (int i = 0; i < 2; i++) {
        b->coded[i] = NULL;
        b->coded_len[i] = 0;
    }
}
