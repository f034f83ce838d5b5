/* Delaunay triangulation speed.
 *   bench_delaunay                   growth from 10k to 1M uniform points
 *   bench_delaunay gen N FILE [SEED] write N uniform points in [0, 1000)^2 to FILE
 *                                    (2N little-endian doubles x, y), the input
 *                                    bench/delaunator.sh gives both sides
 *   bench_delaunay time FILE         triangulate FILE's points PM_WARMUP times untimed,
 *                                    then PM_RUNS times (bench/compare.sh); prints
 *                                    "median_ms min_ms triangles hull cpu_ms"
 * Wall-clock figures are medians and minima; cpu_ms is the median process
 * CPU time per run, steadier than wall time on a shared machine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geom/delaunay.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_bench.h"

static double *uniform(uint32_t n, uint64_t seed) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    double *p = malloc(2 * sizeof(double) * n);
    for (uint32_t i = 0; i < 2 * n; i++) p[i] = pm_rng_range(&r, 0, 1000);
    return p;
}

/* Median and minimum of runs triangulations; the result's sizes. */
static int time_runs(const double *p, uint32_t n, int runs, double *median, double *best,
                     double *cpu, pm_delaunay *info) {
    double *t = malloc(sizeof(double) * (size_t)runs), *c = malloc(sizeof(double) * (size_t)runs);
    for (int i = 0; i < runs; i++) {
        pm_arena *a = pm_arena_create(1 << 20);
        pm_delaunay d;
        double t0 = pm_bench_wall_ms(), c0 = pm_bench_cpu_ms();
        int rc = pm_delaunay_build(a, p, n, &d);
        t[i] = pm_bench_wall_ms() - t0;
        c[i] = pm_bench_cpu_ms() - c0;
        if (rc < 0) {
            pm_arena_destroy(a);
            free(t);
            free(c);
            return rc;
        }
        *info = d;
        info->triangles = NULL, info->halfedges = NULL, info->hull = NULL, info->duplicates = NULL;
        pm_arena_destroy(a);
    }
    qsort(t, (size_t)runs, sizeof *t, pm_bench_cmp_double);
    qsort(c, (size_t)runs, sizeof *c, pm_bench_cmp_double);
    *median = t[runs / 2];
    *best = t[0];
    *cpu = c[runs / 2];
    free(t);
    free(c);
    return 0;
}

static int gen(uint32_t n, const char *file, uint64_t seed) {
    double *p = uniform(n, seed);
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(p, sizeof(double), 2 * (size_t)n, f) != 2 * (size_t)n) {
        fprintf(stderr, "bench_delaunay: cannot write %s\n", file);
        return 1;
    }
    fclose(f);
    free(p);
    return 0;
}

static int time_file(const char *file, int runs) {
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "bench_delaunay: cannot read %s\n", file);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t n = (uint32_t)(bytes / 16);
    double *p = malloc((size_t)bytes);
    if (fread(p, 16, n, f) != n) return 1;
    fclose(f);
    double med, best, cpu;
    pm_delaunay d;
    if (pm_bench_warmup() > 0 && time_runs(p, n, pm_bench_warmup(), &med, &best, &cpu, &d) < 0)
        return 1;
    if (time_runs(p, n, runs, &med, &best, &cpu, &d) < 0) return 1;
    printf("%.2f %.2f %u %u %.2f\n", med, best, d.ntriangles, d.nhull, cpu);
    free(p);
    return 0;
}

static int growth(void) {
    static const uint32_t sizes[] = {10000, 30000, 100000, 300000, 1000000};
    printf("Delaunay growth, uniform points, median of 5 runs (process CPU time; wall in brackets):\n");
    printf("%10s %10s %12s %16s %12s\n", "points", "cpu ms", "ns/point", "ns/(n log2 n)", "[wall ms]");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t n = sizes[i];
        double *p = uniform(n, 7);
        double med, best, cpu;
        pm_delaunay d;
        if (time_runs(p, n, 5, &med, &best, &cpu, &d) < 0) return 1;
        if (d.ntriangles != 2 * n - d.nhull - 2) {
            printf("wrong triangle count at %u\n", n);
            return 1;
        }
        printf("%10u %10.2f %12.1f %16.2f %12.2f\n", n, cpu, cpu * 1e6 / n,
               cpu * 1e6 / (n * log2((double)n)), med);
        free(p);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "gen") == 0)
        return gen((uint32_t)strtoul(argv[2], NULL, 10), argv[3], argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
    if (argc >= 3 && strcmp(argv[1], "time") == 0)
        return time_file(argv[2], pm_bench_runs());
    if (argc == 1) return growth();
    fprintf(stderr, "usage: bench_delaunay [gen N FILE [SEED] | time FILE]\n");
    return 2;
}
