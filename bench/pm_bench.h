#ifndef PM_BENCH_H
#define PM_BENCH_H
/* Timers and a sort comparator shared by the bench_*.c programs. */
#include <time.h>

/* Wall-clock milliseconds from an arbitrary origin (monotonic). */
static inline double pm_bench_wall_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* CPU milliseconds of this process: steadier than wall time when other
 * work shares the cores. */
static inline double pm_bench_cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* qsort comparator for ascending doubles. */
static inline int pm_bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#endif
