#ifndef PM_BENCH_H
#define PM_BENCH_H
/* Timers and a sort comparator shared by the bench_*.c programs. */
#include <stdlib.h>
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

/* CPU milliseconds of the calling thread: what one request costs, whatever
 * the other threads and processes do. */
static inline double pm_bench_thread_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* qsort comparator for ascending doubles. */
static inline int pm_bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* PM_WARMUP and PM_RUNS (bench/compare.sh): the untimed runs before the
 * timed ones, and the timed runs a median is taken of; the same numbers
 * are given to the peer, so both sides are measured alike. */
static inline int pm_bench_env_int(const char *name, int def) {
    const char *v = getenv(name);
    int n = v ? atoi(v) : def;
    return n < 0 ? def : n;
}
static inline int pm_bench_warmup(void) { return pm_bench_env_int("PM_WARMUP", 2); }
static inline int pm_bench_runs(void) {
    int n = pm_bench_env_int("PM_RUNS", 5);
    return n < 1 ? 1 : n;
}

/* PM_SAMPLE_MS (default 1; 0: off): a timed sample is a batch of runs
 * read by one pair of clock reads, as many as take PM_SAMPLE_MS of
 * thread CPU time by a first run's measure, so that a run of 50 us is not
 * timed with a 0.6 us pair of clock reads (system calls on the bench's
 * VM) and warmed up by two runs while a peer's 3 ms runs warm up for
 * 6 ms. PM_WARMUP and PM_RUNS then count samples. A side-by-side pair
 * uses it on both sides (bench_road_peer.c, opendrive_peer.cpp); a run
 * longer than PM_SAMPLE_MS is a sample of one run, as before. With
 * PM_SAMPLE_MS=0 (pm_bench_sample_ms 0) no first run is made: the rule
 * before, exactly (and one request under callgrind). */
static inline double pm_bench_sample_ms(void) {
    const char *v = getenv("PM_SAMPLE_MS");
    double want = v ? atof(v) : 1.0;
    return want > 0 ? want : 0;
}
static inline int pm_bench_batch(double first_run_ms) {
    double want = pm_bench_sample_ms();
    if (!(want > 0) || !(first_run_ms > 0)) return 1;
    double k = want / first_run_ms;
    return k <= 1 ? 1 : k >= 100000 ? 100000 : (int)k + (k > (int)k);
}

/* The median of v[0..n) (sorts v in place); n > 0. */
static inline double pm_bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, pm_bench_cmp_double);
    return v[n / 2];
}
#endif
