/* Poisson-disk sampling speed on an 800 x 800 square at radius 2, 30 tries
 * (the settings bench/poisson.sh gives fast-2d-poisson-disk-sampling).
 *   bench_poisson   PM_WARMUP untimed runs, then PM_RUNS timed ones;
 *                   prints "median_ms min_ms points" */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "geom/poisson.h"
#include "pm_bench.h"

static long sample(uint64_t seed, double *ms) {
    pm_arena *a = pm_arena_create(1 << 20);
    pm_rng r;
    pm_rng_seed(&r, seed);
    pm_poisson_params p = {.shape = PM_POISSON_RECT, .center = {400, 400}, .half = {400, 400},
                           .radius = 2, .tries = 30};
    double *out, t0 = pm_bench_wall_ms();
    long points = pm_poisson(a, &p, &r, &out);
    *ms = pm_bench_wall_ms() - t0;
    pm_arena_destroy(a);
    return points;
}

int main(void) {
    int warmup = pm_bench_warmup(), runs = pm_bench_runs();
    double *t = malloc(sizeof(double) * (size_t)runs), ms;
    long points = 0;
    for (int i = 0; i < warmup; i++)
        if (sample((uint64_t)i + 1, &ms) < 0) return 1;
    for (int i = 0; i < runs; i++)
        if ((points = sample((uint64_t)i + 1, &t[i])) < 0) return 1;
    printf("%.2f %.2f %ld\n", pm_bench_median(t, runs), t[0], points);
    free(t);
    return 0;
}
