/* Encoder time on a 1M-vertex scene (a 999 x 1000 quad grid with UVs and
 * colours, about 2M triangles) and a 4M-vertex one, against the floor for
 * GLB: a memcpy of the same vertex and index bytes into a buffer of the
 * GLB's size. Like for like, two pairs: into fresh memory (pm_api_encode,
 * whose malloc'd output the kernel must fault in and zero, against a
 * memcpy into a fresh malloc'd buffer) and into memory used before (the
 * encoder with the service's page pool, pm_svc_pages_output, its block
 * given back after each run as when the cache drops an answer, against a
 * memcpy into a warm buffer, and against the same copy by non-temporal
 * stores, as the encoder copies onto resident pages). The ratio of the
 * first GLB side to the warm memcpy is printed too (the figure of earlier
 * sessions): it sets the kernel's zeroing of 72 MB against nothing. Each
 * side gets
 * pm_bench_warmup() untimed runs, then pm_bench_runs() timed runs
 * interleaved (A B, then B A), medians of this thread's CPU time;
 * bench/run.sh pins the process when it can.
 * The scene is validated once where it is made (pm_scene_validate, as the
 * generators do); "unvalidated" encodes a copy without the flag, so the
 * encoder checks every number itself. There is no JSON peer: a DOM
 * library building one node per number does a different job, and the
 * JSON mesh's text (shortest round-trip floats) has no equal elsewhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages.h"
#include "pm_bench.h"
#include "pm_api/encode.h"
#include "scene/copy.h"
#include "scene/scene.h"

static const pm_api_generator gen = {.name = "bench", .version = "1", .path = "/bench"};

static pm_scene *grid(pm_arena *a, uint32_t nx, uint32_t nz) {
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "terrain", "terrain", PM_PRIM_UV | PM_PRIM_COLOR,
                                   (nx + 1) * (nz + 1), nx * nz * 6);
    for (uint32_t j = 0; j <= nz; j++)
        for (uint32_t i = 0; i <= nx; i++) {
            float h = 0.37f * (float)((i * 7919u + j * 104729u) % 1000u) / 1000.0f;
            float pos[3] = {(float)i * 0.25f, h, (float)j * 0.25f};
            float n[3] = {0, 1, 0}, uv[2] = {(float)i / (float)nx, (float)j / (float)nz};
            float c[4] = {uv[0], uv[1], 0.5f, 1};
            pm_prim_add_vertex(s, p, pos, n, uv, c);
        }
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            uint32_t v = j * (nx + 1) + i, w = v + nx + 1;
            pm_prim_add_tri(s, p, v, w, v + 1);
            pm_prim_add_tri(s, p, v + 1, w, w + 1);
        }
    return s;
}

typedef struct side {
    const char *name;
    double (*run)(const pm_scene *s, int f, size_t *len);
    int f;
    double *t;
    size_t len;
} side;

static double encode_once(const pm_scene *s, int f, size_t *len) {
    pm_api_buf b;
    double t0 = pm_bench_thread_ms();
    if (pm_api_encode(s, &gen, "00000000000000000000000000000000", (pm_api_format)f, &b) != 0)
        exit(1);
    double t = pm_bench_thread_ms() - t0;
    *len = b.len;
    free(b.data);
    return t;
}

/* The encoder as the service runs it: its buffers from the page pool,
 * the output given back after the run (untimed, as free() above). */
static pm_svc_pages *pool;

static double encode_pool(const pm_scene *s, int f, size_t *len) {
    pm_api_buf b;
    pm_api_output o = pm_api_output_default((pm_api_format)f);
    pm_api_alloc al = pm_svc_pages_output(pool);
    double t0 = pm_bench_thread_ms();
    if (pm_api_encode_with(s, &gen, "00000000000000000000000000000000", &o, &al, &b) != 0)
        exit(1);
    double t = pm_bench_thread_ms() - t0;
    *len = b.len;
    al.free(al.ctx, b.data, b.len);
    return t;
}

/* The GLB's vertex and index bytes, copied into a buffer of the GLB's size. */
static size_t glb_len;
static unsigned char *warm;

/* The pieces one after another, by memcpy or (stream) by non-temporal
 * stores (pm_copy_stream, what the encoder uses on resident pages): glibc's
 * memcpy takes rep movsb up to its non-temporal threshold (99 MB on the
 * Intel host), the slower copy there into memory out of cache, so the
 * stream copy is the lower floor. */
static double copy_pieces(const pm_scene *s, unsigned char *dst, bool stream) {
    const pm_prim *p = &s->prims[0];
    size_t nv = p->vcount, o = 0;
    const struct { const void *src; size_t len; } piece[] = {
        {p->positions, nv * 12}, {p->normals, nv * 12}, {p->uvs, nv * 8}, {p->colors, nv * 16},
        {p->indices, (size_t)p->icount * 4}};
    for (size_t k = 0; k < sizeof piece / sizeof *piece; k++) {
        if (stream) pm_copy_stream(dst + o, piece[k].src, piece[k].len);
        else memcpy(dst + o, piece[k].src, piece[k].len);
        o += piece[k].len;
    }
    return dst[glb_len / 2];
}

static double copy_into(const pm_scene *s, unsigned char *dst) { return copy_pieces(s, dst, false); }
static double copy_stream_into(const pm_scene *s, unsigned char *dst) { return copy_pieces(s, dst, true); }

static double stream_warm(const pm_scene *s, int f, size_t *len) {
    (void)f;
    double t0 = pm_bench_thread_ms();
    volatile double sink = copy_stream_into(s, warm);
    (void)sink;
    *len = glb_len;
    return pm_bench_thread_ms() - t0;
}

static double memcpy_fresh(const pm_scene *s, int f, size_t *len) {
    (void)f;
    double t0 = pm_bench_thread_ms();
    unsigned char *dst = malloc(glb_len);
    if (!dst) exit(1);
    volatile double sink = copy_into(s, dst);
    (void)sink;
    double t = pm_bench_thread_ms() - t0;   /* free() untimed, as for the encoder */
    free(dst);
    *len = glb_len;
    return t;
}

static double memcpy_warm(const pm_scene *s, int f, size_t *len) {
    (void)f;
    double t0 = pm_bench_thread_ms();
    volatile double sink = copy_into(s, warm);
    (void)sink;
    *len = glb_len;
    return pm_bench_thread_ms() - t0;
}

/* Every side warm-up times, then runs rounds in alternating order. */
static void measure(side *sd, int n, const pm_scene *const *scenes, int runs) {
    for (int w = 0; w < pm_bench_warmup(); w++)
        for (int k = 0; k < n; k++) sd[k].run(scenes[k], sd[k].f, &sd[k].len);
    for (int r = 0; r < runs; r++)
        for (int j = 0; j < n; j++) {
            int k = r % 2 ? n - 1 - j : j;
            sd[k].t[r] = sd[k].run(scenes[k], sd[k].f, &sd[k].len);
        }
}

int main(void) {
    int runs = pm_bench_runs();
    uint32_t sizes[][2] = {{999, 1000}, {1999, 2000}};
    for (int k = 0; k < 2; k++) {
        pm_arena *a = pm_arena_create(1 << 24), *b = pm_arena_create(1 << 24);
        pm_scene *s = grid(a, sizes[k][0], sizes[k][1]);
        pm_scene *raw = grid(b, sizes[k][0], sizes[k][1]);   /* never validated */
        if (!s || !raw || pm_scene_validate(s) != 0) return 1;
        printf("scene: %llu vertices, %llu triangles (warm-up %d, median of %d interleaved runs, "
               "thread CPU time)\n",
               (unsigned long long)pm_scene_vertex_count(s),
               (unsigned long long)pm_scene_triangle_count(s), pm_bench_warmup(), runs);
        encode_once(s, PM_API_FMT_GLB, &glb_len);
        warm = malloc(glb_len);
        if (!warm) return 1;
        memset(warm, 0, glb_len);
        pool = pm_svc_pages_create(2 * glb_len);
        if (!pool) return 1;
        double t[8][64];
        if (runs > 64) runs = 64;
        side sd[] = {
            {"glb (validated scene)", encode_once, PM_API_FMT_GLB, t[0], 0},
            {"memcpy, fresh buffer", memcpy_fresh, 0, t[1], 0},
            {"glb (unvalidated scene)", encode_once, PM_API_FMT_GLB, t[2], 0},
            {"memcpy, warm buffer", memcpy_warm, 0, t[3], 0},
            {"glb, reused pages (pool)", encode_pool, PM_API_FMT_GLB, t[4], 0},
            {"non-temporal copy, warm", stream_warm, 0, t[5], 0},
            {"gltf (validated scene)", encode_once, PM_API_FMT_GLTF, t[6], 0},
            {"json (validated scene)", encode_once, PM_API_FMT_JSON, t[7], 0},
        };
        const pm_scene *sc[] = {s, s, raw, s, s, s, s, s};
        int n = k == 0 ? 8 : 6;   /* the text formats once: they take seconds at 4M */
        measure(sd, n, sc, runs);
        double med[8];
        for (int i = 0; i < n; i++) {
            med[i] = pm_bench_median(sd[i].t, runs);
            printf("  %-26s %8.2f ms  %7.1f MB  %7.1f MB/s\n", sd[i].name, med[i],
                   (double)sd[i].len / 1e6, (double)sd[i].len / 1e3 / med[i]);
        }
        printf("  like for like: glb (reused pages) / memcpy (warm buffer): %.2fx, "
               "/ non-temporal copy (warm buffer): %.2fx; "
               "glb / memcpy (fresh buffer): %.2fx validated, %.2fx unvalidated\n",
               med[4] / med[3], med[4] / med[5], med[0] / med[1], med[2] / med[1]);
        printf("  fresh against used: glb (fresh buffer) / memcpy (warm buffer): %.2fx\n",
               med[0] / med[3]);
        pm_svc_pages_destroy(pool);
        free(warm);
        pm_arena_destroy(a);
        pm_arena_destroy(b);
    }
    return 0;
}
