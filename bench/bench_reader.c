/* Request reader cost on large numeric arrays: a road request with a
 * 512 x 512 inline heightfield (262144 numbers), split into the stages a
 * POST goes through before generation: pm_api_parse_body (the fast reader:
 * heights as one bulk array, api/json_fast.c), the generator's parse()
 * (validation and canonical form), and the cache key (canonical form into
 * XXH3; the heights as their doubles). Prints the median CPU time of each
 * stage and its cost per height in µs. bench_ingest compares the whole
 * request with jansson's json_loadb. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_bench.h"

#include "scene/arena.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"

extern const pm_api_generator pm_api_gen_road;

#define SIDE 512
#define REPS 9

/* Times are thread CPU time (pm_bench_thread_ms): the machine is shared,
 * wall time measures the neighbours. */

/* Heights with three decimals (as an upload from a GIS tool would have),
 * a mix of integers and reals, negatives included. */
static char *request(void) {
    json_t *hs = json_array();
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < SIDE * SIDE; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        long mm = (long)(s >> 40) % 40000 - 20000;
        json_array_append_new(hs, i % 7 == 0 ? json_integer(mm / 1000) : json_real((double)mm / 1000.0));
    }
    json_t *doc = json_pack("{s:[[f,f,f],[f,f,f],[f,f,f]], s:f, s:{s:[f,f], s:f, s:i, s:i, s:o}}",
                            "points", 10.0, 0.0, 10.0, 200.0, 0.0, 150.0, 400.0, 0.0, 420.0, "width",
                            8.0, "terrain", "origin", 0.0, 0.0, "cell", 1.0, "cols", SIDE, "rows",
                            SIDE, "heights", hs);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

int main(void) {
    char *body = request();
    size_t len = strlen(body);
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    double tp[REPS], tr[REPS], tk[REPS];
    pm_api_key first = {0, 0};
    for (int r = 0; r < REPS; r++) {
        pm_api_problem prob;
        pm_api_problem_init(&prob);
        double t0 = pm_bench_thread_ms();
        json_t *doc;
        if (pm_api_parse_body(body, len, &doc, &prob) != 0) return 1;
        double t1 = pm_bench_thread_ms();
        pm_arena *a = pm_arena_create(1 << 20);
        void *params;
        json_t *canon;
        if (pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &prob) != 0) {
            fprintf(stderr, "parse: %s\n", prob.detail);
            return 1;
        }
        double t2 = pm_bench_thread_ms();
        pm_api_key k = pm_api_cache_key(&pm_api_gen_road, canon, PM_API_FMT_GLB);
        double t3 = pm_bench_thread_ms();
        if (r == 0) first = k;
        if (k.hi != first.hi || k.lo != first.lo) return 1;
        tp[r] = t1 - t0, tr[r] = t2 - t1, tk[r] = t3 - t2;
        json_decref(canon);
        json_decref(doc);
        pm_arena_destroy(a);
        pm_api_problem_free(&prob);
    }
    const double n = SIDE * SIDE;
    double p = pm_bench_median(tp, REPS), rd = pm_bench_median(tr, REPS), k = pm_bench_median(tk, REPS);
    char hex[33];
    pm_api_key_hex(first, hex);
    printf("road request, %dx%d inline heights (%.0f numbers, %.1f MB of JSON), median of %d, CPU:\n",
           SIDE, SIDE, n, (double)len / 1e6, REPS);
    printf("  body read (parse_body)     %7.1f ms  %.3f us/number\n", p, p * 1e3 / n);
    printf("  reader (road parse())      %7.1f ms  %.3f us/number\n", rd, rd * 1e3 / n);
    printf("  cache key                  %7.1f ms  %.3f us/number\n", k, k * 1e3 / n);
    printf("  total                      %7.1f ms  %.3f us/number  (key %s)\n", p + rd + k,
           (p + rd + k) * 1e3 / n, hex);
    free(body);
    return 0;
}
