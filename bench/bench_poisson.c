/* Poisson-disk sampling speed on an 800 x 800 square at radius 2, 30 tries
 * (the settings bench/poisson.sh gives fast-2d-poisson-disk-sampling).
 *   bench_poisson [RUNS]   prints "median_ms min_ms points" (median of RUNS, default 9) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "geom/poisson.h"
#include "pm_bench.h"

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 9;
    if (runs < 1) runs = 1;
    double *t = malloc(sizeof(double) * (size_t)runs);
    long points = 0;
    for (int i = 0; i < runs; i++) {
        pm_arena *a = pm_arena_create(1 << 20);
        pm_rng r;
        pm_rng_seed(&r, (uint64_t)i + 1);
        pm_poisson_params p = {.shape = PM_POISSON_RECT, .center = {400, 400}, .half = {400, 400},
                               .radius = 2, .tries = 30};
        double *out, t0 = pm_bench_wall_ms();
        points = pm_poisson(a, &p, &r, &out);
        t[i] = pm_bench_wall_ms() - t0;
        pm_arena_destroy(a);
        if (points < 0) return 1;
    }
    qsort(t, (size_t)runs, sizeof *t, pm_bench_cmp_double);
    printf("%.2f %.2f %ld\n", t[runs / 2], t[0], points);
    free(t);
    return 0;
}
