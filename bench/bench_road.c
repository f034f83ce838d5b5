/* Road benchmark (issue 4): a 2 km road, 20 control points, width 8,
 * max_error 0.05, one guardrail prop line, draped on a 512 x 512
 * heightfield, end to end from request bytes to GLB bytes by the service's
 * own path (the cache key included) and stage by stage, and how the time
 * grows from 1 km to 16 km. Also LODs by re-sampling vs meshopt_simplify.
 * Prints one line per measurement; PM_WARMUP untimed runs, then medians
 * over repeated runs. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <meshoptimizer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_bench.h"
#include "pm_bench_request.h"

#include "scene/arena.h"
#include "scene/rng.h"
#include "road/road.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"

extern const pm_api_generator pm_api_gen_road;

/* Times are thread CPU time (pm_bench_thread_ms): the machine is shared
 * (2 cores, many jobs), so wall time mostly measures the neighbours; wall
 * time is printed too. */

/* A wandering road of `km` kilometres with 10 control points per km
 * (20 for the 2 km case), inside a square terrain of 512 x 512 nodes. */
typedef struct layout {
    double pts[3 * 400];
    int n;
    double origin[2], cell;
} layout;

/* wander: the heading's random walk is unbounded (the road may come back
 * on itself, which the generator refuses), else held within 1.3 rad of
 * its start, so a long road never meets itself. */
static void make_layout_with(layout *L, double km, uint64_t seed, int wander) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    L->n = (int)(10 * km) + 1;
    double step = km * 1000.0 / (L->n - 1), x = 0, z = 0, h = 0.3, lo[2] = {0, 0}, hi[2] = {0, 0};
    for (int i = 0; i < L->n; i++) {
        L->pts[3 * i] = x;
        L->pts[3 * i + 1] = 0;
        L->pts[3 * i + 2] = z;
        lo[0] = fmin(lo[0], x), lo[1] = fmin(lo[1], z), hi[0] = fmax(hi[0], x), hi[1] = fmax(hi[1], z);
        h += pm_rng_range(&r, -0.6, 0.6);
        if (!wander && fabs(h - 0.3) > 1.3) h = 0.3 + copysign(2.6, h - 0.3) - (h - 0.3);
        x += step * cos(h);
        z += step * sin(h);
    }
    double ext = fmax(hi[0] - lo[0], hi[1] - lo[1]) + 200.0;
    L->origin[0] = lo[0] - 100.0;
    L->origin[1] = lo[1] - 100.0;
    L->cell = ext / 511.0;
}
static void make_layout(layout *L, double km, uint64_t seed) { make_layout_with(L, km, seed, 1); }

/* The request text; heights inline (a real heightfield upload) or noise. */
static char *request(const layout *L, int inline_heights, int terrain_mesh) {
    json_t *doc = json_object(), *pts = json_array();
    for (int i = 0; i < L->n; i++)
        json_array_append_new(pts, json_pack("[f,f,f]", L->pts[3 * i], L->pts[3 * i + 1], L->pts[3 * i + 2]));
    json_object_set_new(doc, "points", pts);
    json_object_set_new(doc, "width", json_real(8));
    json_object_set_new(doc, "max_error", json_real(0.05));
    json_object_set_new(doc, "conform", json_string("drape"));
    json_t *t = json_pack("{s:[f,f], s:f, s:i, s:i, s:b}", "origin", L->origin[0], L->origin[1], "cell",
                          L->cell, "cols", 512, "rows", 512, "mesh", terrain_mesh);
    pm_noise nz = {.seed = 42, .amplitude = 20, .wavelength = 300, .octaves = 4};
    if (inline_heights) {
        json_t *hs = json_array();
        for (int r = 0; r < 512; r++)
            for (int c = 0; c < 512; c++) {
                double h = pm_noise_height(&nz, L->origin[0] + c * L->cell, L->origin[1] + r * L->cell);
                json_array_append_new(hs, json_real(round(h * 1000.0) / 1000.0));
            }
        json_object_set_new(t, "heights", hs);
    } else {
        json_object_set_new(t, "noise", json_pack("{s:i, s:f, s:f, s:i}", "seed", 42, "amplitude", 20.0,
                                                  "wavelength", 300.0, "octaves", 4));
    }
    json_object_set_new(doc, "terrain", t);
    json_object_set_new(doc, "props", json_pack("[{s:s, s:f, s:f, s:s}]", "name", "guardrail", "spacing",
                                                4.0, "offset", 5.0, "side", "right"));
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

/* One request by the service's own path (pm_bench_request: document,
 * params and cache key, generation, GLB), each stage in thread CPU time. */
static void measure(const char *label, const char *body, double km, int reps) {
    double tot[64], js[64], pk[64], g[64], e[64], ge[64], w[64];
    pm_bench_stages st = {0};
    size_t len = strlen(body);
    if (reps > 64) reps = 64;
    for (int i = 0; i < pm_bench_warmup(); i++)
        if (pm_bench_request(&pm_api_gen_road, body, len, &st) != 0) {
            printf("%s: failed\n", label);
            return;
        }
    for (int i = 0; i < reps; i++) {
        double w0 = pm_bench_wall_ms();
        if (pm_bench_request(&pm_api_gen_road, body, len, &st) != 0) {
            printf("%s: failed\n", label);
            return;
        }
        w[i] = pm_bench_wall_ms() - w0;
        tot[i] = pm_bench_stages_total(&st);
        js[i] = st.body, pk[i] = st.parse, g[i] = st.gen, e[i] = st.enc, ge[i] = st.gen + st.enc;
    }
    double mt = pm_bench_median(tot, reps), mge = pm_bench_median(ge, reps);
    printf("%-34s %5.2f km  bytes->GLB %8.3f ms (%6.3f ms/km) [JSON %7.3f params+key %7.3f generate %7.3f"
           " GLB %6.3f] generate+GLB %7.3f ms (%6.3f ms/km) wall %8.3f | %llu verts, %llu tris, GLB %zu KiB,"
           " body %zu KiB\n",
           label, km, mt, mt / km, pm_bench_median(js, reps), pm_bench_median(pk, reps),
           pm_bench_median(g, reps), pm_bench_median(e, reps), mge, mge / km, pm_bench_median(w, reps),
           (unsigned long long)st.verts, (unsigned long long)st.tris, st.bytes / 1024, len / 1024);
}

/* ---- LODs: re-sampling at the coarser error vs meshopt_simplify ---- */

static void sub3(const float *a, const float *b, double o[3]) {
    for (int k = 0; k < 3; k++) o[k] = (double)a[k] - (double)b[k];
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Distance from p to triangle abc (closest point by region, Ericson 5.1.5). */
static double point_triangle(const float *p, const float *a, const float *b, const float *c) {
    double ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    double v = 0, w = 0;
    if (d1 <= 0 && d2 <= 0) goto done;
    sub3(p, b, bp);
    double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0 && d4 <= d3) { v = 1; goto done; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { v = d1 / (d1 - d3); goto done; }
    sub3(p, c, cp);
    double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0 && d5 <= d6) { w = 1; goto done; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { w = d2 / (d2 - d6); goto done; }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        v = 1 - w;
        goto done;
    }
    double den = 1 / (va + vb + vc);
    v = vb * den, w = vc * den;
done:
    for (int k = 0; k < 3; k++) q[k] = a[k] + ab[k] * v + ac[k] * w - p[k];
    return sqrt(dot3(q, q));
}

/* Hausdorff-style deviation: the largest distance from a full-detail
 * vertex to the simplified surface. */
static double max_dev(const pm_prim *ref, const float *pos, const uint32_t *idx, size_t icount) {
    double worst = 0;
    for (uint32_t v = 0; v < ref->vcount; v++) {
        double best = INFINITY;
        const float *q = ref->positions + 3 * v;
        for (size_t i = 0; i < icount; i += 3) {
            double d = point_triangle(q, pos + 3 * idx[i], pos + 3 * idx[i + 1], pos + 3 * idx[i + 2]);
            if (d < best) best = d;
        }
        worst = fmax(worst, best);
    }
    return worst;
}

static void lod_comparison(void) {
    layout L;
    make_layout(&L, 2.0, 7);
    pm_road_params p;
    pm_road_params_default(&p);
    p.points = L.pts;
    p.npoints = (size_t)L.n;
    p.width = 8;
    p.shoulder = 0;
    double lods[] = {0.5, 2.0};
    p.lods = lods;
    p.nlods = 2;
    pm_arena *a = pm_arena_create(0);
    pm_scene *s;
    double t0 = pm_bench_thread_ms();
    if (pm_road_generate(a, &p, &s, NULL) != 0) return;
    double t1 = pm_bench_thread_ms();
    const pm_prim *base = &s->prims[0];
    printf("LOD 2 km, no terrain: base %u tris; whole generation with 2 LODs %.3f ms\n", base->icount / 3,
           t1 - t0);
    for (int l = 0; l < 2; l++) {
        const pm_prim *lp = &s->prims[1 + l];
        /* meshopt_simplify (0.18: positions only) down to the same
         * triangle count, then both compared against the full mesh. */
        uint32_t *dst = malloc(base->icount * sizeof(uint32_t));
        float err = 0;
        double m0 = pm_bench_thread_ms();
        size_t n = meshopt_simplify(dst, base->indices, base->icount, base->positions, base->vcount, 12,
                                    lp->icount, 1.0f, 0, &err);
        double m1 = pm_bench_thread_ms();
        int flipped = 0;
        for (size_t i = 0; i < n; i += 3) {
            const float *A = base->positions + 3 * dst[i], *B = base->positions + 3 * dst[i + 1],
                        *C = base->positions + 3 * dst[i + 2];
            double ny = (double)(B[2] - A[2]) * (C[0] - A[0]) - (double)(B[0] - A[0]) * (C[2] - A[2]);
            flipped += !(ny > 0);
        }
        printf("  lod%d error %.1f m: re-sampled %u tris (dev %.3f m); meshopt_simplify to %zu tris in "
               "%.3f ms (dev %.3f m, %d faces not up, UVs of merged vertices no longer per-side lengths)\n",
               l + 1, lods[l], lp->icount / 3, max_dev(base, lp->positions, lp->indices, lp->icount), n / 3,
               m1 - m0, max_dev(base, base->positions, dst, n), flipped);
        free(dst);
    }
    pm_arena_destroy(a);
}

int main(int argc, char **argv) {
    if (pm_bench_service_malloc(argc, argv)) return 0;
    printf("bench_road: each request by the service's path from its bytes (no cache), PM_WARMUP untimed,\n"
           "then medians of thread CPU time (wall time after): bytes->GLB = everything, by stage: JSON =\n"
           "the body's document, params+key = validation, defaults and the cache key, generate = core\n"
           "road (+ noise terrain), GLB = encoding; generate+GLB = the two core stages alone.\n");
    layout L;
    make_layout(&L, 1.9, 1);   /* the case: 20 points, 1.9 km of polygon, ~2 km of curve */
    char *b1 = request(&L, 1, 0), *b2 = request(&L, 0, 0), *b3 = request(&L, 1, 1), *b4 = request(&L, 0, 1);
    measure("2 km, heights inline, no mesh", b1, 2.0, 15);
    measure("2 km, noise terrain, no mesh", b2, 2.0, 31);
    measure("2 km, heights inline, terrain mesh", b3, 2.0, 9);
    measure("2 km, noise terrain, terrain mesh", b4, 2.0, 9);
    free(b1), free(b2), free(b3), free(b4);
    printf("growth (heights inline, 512x512 stretched over the road, no terrain mesh; the heading kept\n"
           "within 1.3 rad of its start, so no road meets itself):\n");
    for (double km = 1; km <= 16; km *= 2) {
        make_layout_with(&L, km, 3, 0);
        char *b = request(&L, 1, 0);
        char label[64];
        snprintf(label, sizeof label, "  %g km", km);
        measure(label, b, km, 9);
        free(b);
    }
    lod_comparison();
    return 0;
}
