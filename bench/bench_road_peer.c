/* procmesh's side of bench/opendrive.sh: one road request file through the
 * whole request path (request bytes -> params and cache key -> road ->
 * GLB): PM_WARMUP untimed samples, then PM_RUNS timed ones, each a batch
 * of runs of PM_SAMPLE_MS (pm_bench_batch) timed whole, then
 * PM_STAGE_RUNS (default PM_RUNS) single runs timed stage by stage
 * (pm_bench_request).
 *   bench_road_peer FILE
 * prints "median_ms us_per_vertex vertices triangles" (thread CPU time,
 * of the whole runs), then the stages on a second line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_bench_request.h"

extern const pm_api_generator pm_api_gen_road;

int main(int argc, char **argv) {
    if (pm_bench_service_malloc(argc, argv)) return 0;
    if (argc == 1) {   /* bench/run.sh runs every bench_* bare */
        printf("bench_road_peer REQUEST.json: bench/opendrive.sh gives it its road requests\n");
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: bench_road_peer REQUEST.json\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *body = malloc((size_t)n + 1);
    if (!body || fread(body, 1, (size_t)n, f) != (size_t)n) return 1;
    fclose(f);
    int runs = pm_bench_runs();
    double *tot = malloc((size_t)runs * sizeof *tot), *gen = malloc((size_t)runs * sizeof *gen);
    pm_bench_stages st;
    /* A first run sizes the samples (pm_bench_batch: k runs each, the
     * peer's rule too); the warm-up and timed samples follow, each timed
     * whole (one clock read either side of its k runs, as the peer's);
     * the stages from as many single runs again, each stage read on its
     * own. */
    int k = 1;
    if (pm_bench_sample_ms() > 0) {
        double first;
        if (pm_bench_request_whole(&pm_api_gen_road, body, (size_t)n, &first, &st)) return 1;
        k = pm_bench_batch(first);
    }
    for (int w = 0; w < pm_bench_warmup() * k; w++)
        if (pm_bench_request(&pm_api_gen_road, body, (size_t)n, &st)) return 1;
    for (int r = 0; r < runs; r++) {
        double t0 = pm_bench_thread_ms();
        for (int j = 0; j < k; j++)
            if (pm_bench_request_whole(&pm_api_gen_road, body, (size_t)n, NULL, &st)) return 1;
        tot[r] = (pm_bench_thread_ms() - t0) / k;
    }
    double med = pm_bench_median(tot, runs);
    printf("%.3f %.4f %llu %llu\n", med, 1e3 * med / (double)st.verts, (unsigned long long)st.verts,
           (unsigned long long)st.tris);
    /* PM_STAGE_RUNS=0 (bench/opendrive.sh's callgrind run, which counts
     * one request): no stage line. */
    const char *sr = getenv("PM_STAGE_RUNS");
    int sruns = sr ? atoi(sr) : runs;
    if (sruns > runs) sruns = runs;
    double body_ms = 0, parse_ms = 0, enc_ms = 0;
    for (int r = 0; r < sruns; r++) {
        if (pm_bench_request(&pm_api_gen_road, body, (size_t)n, &st)) return 1;
        gen[r] = st.gen;
        body_ms += st.body / sruns, parse_ms += st.parse / sruns, enc_ms += st.enc / sruns;
    }
    if (sruns > 0)
        printf("stages (mean ms): JSON %.3f, params+key %.3f, generate (median) %.3f, GLB %.3f; %zu bytes\n",
               body_ms, parse_ms, pm_bench_median(gen, sruns), enc_ms, st.bytes);
    free(tot);
    free(gen);
    free(body);
    return 0;
}
