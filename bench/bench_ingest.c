/* Request ingest end to end (issue 14, item 1): a 2 km road on a 512 x 512
 * heightfield, from request bytes to GLB bytes (body read, road parse and
 * validation, cache key, generation, GLB encoding; no cache), with the
 * heights sent three ways:
 *   json-short   JSON, heights as short decimals ("12.345", what
 *                JSON.stringify or Python's json write for such values)
 *   json-17      JSON, heights with 17 significant digits (jansson's dump)
 *   multipart    multipart/form-data: the JSON request + float32 heights
 *   png16        multipart/form-data: the JSON request + a 16-bit grayscale
 *                PNG heightmap (millimetre steps, ?png_scale=0.001), as
 *                terrain tools export them (zlib level 6)
 * and the peer: the same json-short body through json_loadb (jansson's
 * tree, a node per number), then the same reader, key and generator.
 * Runs are interleaved (one of each per round) and medians of thread CPU
 * time are reported, since the machine is shared. Throughput is request
 * bytes over the end-to-end time. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <jansson.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "pm_bench.h"
#include "pm_bench_request.h"

extern const pm_api_generator pm_api_gen_road;

#define SIDE 512
#define ROUNDS 11

/* A gently curving 2 km road of 21 points over a 2.1 km square terrain. */
static size_t head(char *out, size_t cap, int mesh) {
    size_t n = (size_t)snprintf(out, cap, "{\"points\": [");
    for (int i = 0; i <= 20; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s[%.3f, 0, %.3f]", i ? ", " : "", 50.0 + i * 100.0,
                              1050.0 + 150.0 * sin(i * 0.6));
    n += (size_t)snprintf(out + n, cap - n,
                          "], \"width\": 8, \"max_error\": 0.05, \"props\": [{\"name\": \"guardrail\","
                          " \"spacing\": 4, \"offset\": 5, \"side\": \"right\"}],"
                          " \"terrain\": {\"origin\": [0, 0], \"cell\": %.6f, \"cols\": %d,"
                          " \"rows\": %d, \"mesh\": %s",
                          2100.0 / (SIDE - 1), SIDE, SIDE, mesh ? "true" : "false");
    return n;
}

/* Heights in millimetres (as a GIS export has them), exact in float32. */
static double height(int i) {
    int r = i / SIDE, c = i % SIDE;
    double h = 20.0 * sin(r * 0.013) * cos(c * 0.011) + 3.0 * sin(r * 0.21 + c * 0.17);
    return (double)(float)(round(h * 1000.0) / 1000.0);
}

static char *json_body(int mesh, int digits17, size_t *len) {
    size_t cap = (size_t)SIDE * SIDE * 26 + 4096, n;
    char *b = malloc(cap);
    n = head(b, cap, mesh);
    n += (size_t)snprintf(b + n, cap - n, ", \"heights\": [");
    for (int i = 0; i < SIDE * SIDE; i++) {
        double h = height(i);
        n += (size_t)snprintf(b + n, cap - n, digits17 ? "%s%.17g" : "%s%.9g", i ? "," : "", h);
    }
    n += (size_t)snprintf(b + n, cap - n, "]}}");
    *len = n;
    return b;
}

/* The multipart envelope up to the heights part's bytes (of type ctype). */
static size_t part_head(char *b, size_t cap, int mesh, const char *ctype) {
    size_t n = (size_t)snprintf(b, cap, "--bench\r\nContent-Disposition: form-data; name=\"request\"\r\n"
                                        "Content-Type: application/json\r\n\r\n");
    n += head(b + n, cap - n, mesh);
    n += (size_t)snprintf(b + n, cap - n,
                          "}}\r\n--bench\r\nContent-Disposition: form-data; name=\"/terrain/heights\";"
                          " filename=\"h\"\r\nContent-Type: %s\r\n\r\n", ctype);
    return n;
}

static char *multipart_body(int mesh, size_t *len) {
    size_t cap = (size_t)SIDE * SIDE * 4 + 8192;
    char *b = malloc(cap);
    size_t n = part_head(b, cap, mesh, "application/octet-stream");
    for (int i = 0; i < SIDE * SIDE; i++) {
        float f = (float)height(i);
        memcpy(b + n, &f, 4);   /* little-endian host */
        n += 4;
    }
    n += (size_t)snprintf(b + n, cap - n, "\r\n--bench--\r\n");
    *len = n;
    return b;
}

typedef struct png_out { char *b; size_t n, cap; } png_out;
static void png_put(png_structp png, png_bytep d, size_t n) {
    png_out *o = png_get_io_ptr(png);
    if (o->n + n <= o->cap) memcpy(o->b + o->n, d, n);
    o->n += n;
}
static void png_flush(png_structp png) { (void)png; }

/* The same heights as 16-bit samples of 1 mm from -32.768 m. */
#define PNG_SCALE 0.001
#define PNG_OFFSET (-32.768)
static char *png_body(int mesh, size_t *len) {
    size_t cap = (size_t)SIDE * SIDE * 3 + 8192;
    char *b = malloc(cap);
    size_t n = part_head(b, cap, mesh, "image/png");
    png_out o = {b + n, 0, cap - n - 64};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_set_write_fn(png, &o, png_put, png_flush);
    png_set_IHDR(png, info, SIDE, SIDE, 16, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    unsigned char row[SIDE * 2];
    for (int r = 0; r < SIDE; r++) {
        for (int c = 0; c < SIDE; c++) {
            long v = lround((height(r * SIDE + c) - PNG_OFFSET) / PNG_SCALE);
            row[2 * c] = (unsigned char)(v >> 8);
            row[2 * c + 1] = (unsigned char)v;
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (o.n > o.cap) exit(1);
    n += o.n;
    n += (size_t)snprintf(b + n, cap - n, "\r\n--bench--\r\n");
    *len = n;
    return b;
}

/* The peer path: jansson's json_loadb, then the same stages. */
static int jansson_request(const char *body, size_t len, pm_bench_stages *st) {
    double t0 = pm_bench_thread_ms();
    json_error_t e;
    json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
    if (!doc) return -1;
    double t1 = pm_bench_thread_ms();
    json_decref(doc);   /* its parse and free, then the rest as the service runs it */
    double t2 = pm_bench_thread_ms();
    int r = pm_bench_request(&pm_api_gen_road, body, len, st);
    st->body = t2 - t0;   /* jansson instead of the fast reader */
    (void)t1;
    return r;
}

enum { JSHORT, J17, MPART, PNG16, PEER, NKIND };

/* One request end to end; not inlined, so that
 *   valgrind --tool=callgrind --toggle-collect=one_request bench_ingest once K
 * counts the instructions of exactly one request of kind K (0..3);
 * bench_ingest loop K N runs N of them. */
__attribute__((noinline)) int one_request(int kind, const char *body, size_t len,
                                          pm_bench_stages *st);
__attribute__((noinline)) int one_request(int kind, const char *body, size_t len,
                                          pm_bench_stages *st) {
    pm_api_ingest ing = PM_API_INGEST_DEFAULT;
    if (kind == PNG16) ing = (pm_api_ingest){PNG_SCALE, PNG_OFFSET, 3};
    return pm_bench_request_with(&pm_api_gen_road,
                                 kind == MPART || kind == PNG16
                                     ? "multipart/form-data; boundary=bench" : NULL,
                                 &ing, body, len, st);
}
/* Page faults this thread has taken so far (each a fresh page: about
 * 0.25 us on bare metal, several on a loaded VM). */
static long minor_faults(void) {
    struct rusage u;
    return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_minflt : 0;
}

static const char *const names[NKIND] = {"json-short", "json-17", "multipart", "png16",
                                         "jansson (peer)"};

static char *body_of(int kind, int mesh, size_t *len) {
    return kind == MPART ? multipart_body(mesh, len)
           : kind == PNG16 ? png_body(mesh, len) : json_body(mesh, kind == J17, len);
}

int main(int argc, char **argv) {
    if (pm_bench_service_malloc(argc, argv)) return 0;
    /* bench_ingest loop K N: N requests of kind K, for a profiler
     * (perf record -e cpu-clock, perf stat -e page-faults). */
    if (argc == 4 && strcmp(argv[1], "loop") == 0) {
        int k = atoi(argv[2]), n = atoi(argv[3]);
        size_t len;
        char *b = body_of(k, 0, &len);
        pm_bench_stages st;
        for (int i = 0; i < n; i++)
            if (one_request(k, b, len, &st) != 0) return 1;
        free(b);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "once") == 0) {
        int k = atoi(argv[2]);
        size_t len;
        char *b = body_of(k, 0, &len);
        pm_bench_stages st;
        int rc = one_request(k, b, len, &st);
        printf("%s: %zu bytes -> GLB %zu bytes\n", names[k], len, st.bytes);
        free(b);
        return rc;
    }
    for (int mesh = 0; mesh <= 1; mesh++) {
        size_t len[NKIND];
        char *body[NKIND];
        for (int k = 0; k < PEER; k++) body[k] = body_of(k, mesh, &len[k]);
        body[PEER] = body[JSHORT], len[PEER] = len[JSHORT];
        double tot[NKIND][ROUNDS], parse[NKIND][ROUNDS], ge[NKIND][ROUNDS], flt[NKIND][ROUNDS];
        pm_bench_stages st[NKIND];
        for (int r = 0; r < ROUNDS; r++) {
            for (int k = 0; k < NKIND; k++) {
                long f0 = minor_faults();
                int rc = k == PEER ? jansson_request(body[k], len[k], &st[k])
                                   : one_request(k, body[k], len[k], &st[k]);
                if (rc != 0) return 1;
                tot[k][r] = pm_bench_stages_total(&st[k]);
                parse[k][r] = st[k].body + st[k].parse;
                ge[k][r] = st[k].gen + st[k].enc;
                flt[k][r] = (double)(minor_faults() - f0);
            }
        }
        printf("2 km road, 512x512 heights, terrain mesh %s: request bytes -> GLB (%zu KiB), "
               "median of %d interleaved, thread CPU\n", mesh ? "on" : "off", st[0].bytes / 1024, ROUNDS);
        for (int k = 0; k < NKIND; k++) {
            double t = pm_bench_median(tot[k], ROUNDS), best = tot[k][0];
            for (int r = 1; r < ROUNDS; r++) best = tot[k][r] < best ? tot[k][r] : best;
            printf("  %-15s %5.2f MB  median %7.2f ms %6.1f MB/s (best %7.2f ms %6.1f MB/s)"
                   "  [read+validate+key %6.2f ms, generate+encode %6.2f ms, %5.0f page faults]\n", names[k],
                   (double)len[k] / 1e6, t, (double)len[k] / 1e3 / t, best,
                   (double)len[k] / 1e3 / best, pm_bench_median(parse[k], ROUNDS),
                   pm_bench_median(ge[k], ROUNDS), pm_bench_median(flt[k], ROUNDS));
        }
        for (int k = 0; k < PEER; k++) free(body[k]);
    }
    return 0;
}
