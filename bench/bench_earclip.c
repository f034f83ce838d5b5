/* Times pm_earclip on polygon sets and writes each set, with its time, to
 * $PM_BUILD_DIR/earclip/ so that bench/earcut.sh runs earcut (npm) on the
 * very same polygons in the same `make bench` run and prints the ratio.
 *
 * Sets: random star polygons of 100, 1k and 10k vertices (fixed seeds),
 * random combs of the same sizes (simple, not star-shaped), plus every
 * bench/polygons/<name>.poly file (e.g. junction contours).
 * `bench_earclip --time FILE` times one such file again (see earcut.sh);
 * `bench_earclip --once FILE [REPS]` only runs it, for callgrind.
 * File format, one polygon per line, counter-clockwise in x/y:
 *     # comment lines start with '#'
 *     x0 y0 x1 y1 x2 y2 ...
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "scene/arena.h"
#include "geom/earclip.h"
#include "scene/rng.h"
#include "pm_bench.h"

typedef struct polyset {
    char name[64];
    size_t count;
    double **pts;
    size_t *n;
} polyset;

static void die(const char *what) {
    fprintf(stderr, "bench_earclip: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("malloc");
    return p;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One vertex per angle step at a random radius in [0.2, 1): the classic
 * star-shaped stress test, about half the vertices reflex. */
static polyset make_stars(size_t n, size_t count, uint64_t seed) {
    polyset s = {.count = count};
    snprintf(s.name, sizeof s.name, "star-%zu", n);
    s.pts = xmalloc(count * sizeof *s.pts);
    s.n = xmalloc(count * sizeof *s.n);
    pm_rng r;
    pm_rng_seed(&r, seed);
    for (size_t k = 0; k < count; k++) {
        s.n[k] = n;
        s.pts[k] = xmalloc(2 * n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double a = 6.283185307179586 * (double)i / (double)n, rad = pm_rng_range(&r, 0.2, 1.0);
            s.pts[k][2 * i] = rad * cos(a);
            s.pts[k][2 * i + 1] = rad * sin(a);
        }
    }
    return s;
}

static void set_alloc(polyset *s, const char *name, size_t count) {
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->count = count;
    s->pts = xmalloc(count * sizeof *s->pts);
    s->n = xmalloc(count * sizeof *s->n);
}

/* Rotates a polygon by a random angle, so no edge is axis-aligned. */
static void rotate(pm_rng *r, double *p, size_t n) {
    double a = pm_rng_range(r, 0, 6.283185307179586), c = cos(a), s = sin(a);
    for (size_t i = 0; i < n; i++) {
        double x = p[2 * i], y = p[2 * i + 1];
        p[2 * i] = c * x - s * y, p[2 * i + 1] = s * x + c * y;
    }
}

/* A comb with (n - 2) / 4 teeth of random heights over random floors:
 * simple by construction, far from star-shaped (empty kernel), half its
 * vertices reflex. Exercises the general path: sweep line + grid. */
static polyset make_combs(size_t n, size_t count, uint64_t seed) {
    polyset s;
    char name[64];
    snprintf(name, sizeof name, "comb-%zu", n);
    set_alloc(&s, name, count);
    pm_rng r;
    pm_rng_seed(&r, seed);
    size_t teeth = (n - 2) / 4;
    for (size_t k = 0; k < count; k++) {
        double *p = s.pts[k] = xmalloc(2 * n * sizeof(double));
        size_t m = 0;
        p[m++] = 0, p[m++] = 0;
        p[m++] = (double)teeth, p[m++] = 0;
        for (size_t i = teeth; i-- > 0;) {
            double h = pm_rng_range(&r, 0.5, 10.0), g = pm_rng_range(&r, 0.05, 0.4);
            p[m++] = (double)i + 1, p[m++] = h;
            p[m++] = (double)i + 0.5, p[m++] = h;
            p[m++] = (double)i + 0.5, p[m++] = g;
            p[m++] = (double)i, p[m++] = g;
        }
        s.n[k] = m / 2;
        rotate(&r, p, s.n[k]);
    }
    return s;
}

/* Junction-like contours (a stand-in until the junction generator's real
 * contours land in bench/polygons/): 3 to 8 arms of random widths, each
 * corner between neighbouring arms rounded by a circular arc of 4 segments.
 * About 8 to 11 vertices per arm, reflex along the fillets. Contours whose
 * corners do not fit are drawn again. */
static size_t junction_contour(pm_rng *r, double *p) {
    for (;;) {
        int arms = 3 + (int)pm_rng_below(r, 6);
        double step = 6.283185307179586 / arms, base = pm_rng_range(r, 0, 6.283185307179586);
        double ang[8], w[8], len[8];
        for (int i = 0; i < arms; i++) {
            ang[i] = base + step * (i + pm_rng_range(r, -0.15, 0.15));
            w[i] = pm_rng_range(r, 3, 7), len[i] = pm_rng_range(r, 25, 40);
        }
        size_t m = 0;
        bool ok = true;
        for (int i = 0; i < arms && ok; i++) {
            int j = (i + 1) % arms;
            double di[2] = {cos(ang[i]), sin(ang[i])}, dj[2] = {cos(ang[j]), sin(ang[j])};
            double ni[2] = {-di[1], di[0]}, nj[2] = {-dj[1], dj[0]};
            /* The fillet circle touches arm i's left curb and arm j's right one. */
            double half = 0.5 * acos(di[0] * dj[0] + di[1] * dj[1]), rad = 3.0;
            double bis[2] = {di[0] + dj[0], di[1] + dj[1]}, bl = hypot(bis[0], bis[1]);
            double pi[2] = {w[i] * ni[0], w[i] * ni[1]}, pj[2] = {-w[j] * nj[0], -w[j] * nj[1]};
            double den = di[0] * dj[1] - di[1] * dj[0];
            double t = ((pj[0] - pi[0]) * dj[1] - (pj[1] - pi[1]) * dj[0]) / den;
            double corner[2] = {pi[0] + t * di[0], pi[1] + t * di[1]};
            double tang = rad / tan(half);
            ok = t > 0 && t + tang < len[i] - 1 && tang < 20;
            double cc[2] = {corner[0] + bis[0] / bl * rad / sin(half), corner[1] + bis[1] / bl * rad / sin(half)};
            p[m++] = len[i] * di[0] - w[i] * ni[0], p[m++] = len[i] * di[1] - w[i] * ni[1];
            p[m++] = len[i] * di[0] + w[i] * ni[0], p[m++] = len[i] * di[1] + w[i] * ni[1];
            double a0 = atan2(corner[1] + tang * di[1] - cc[1], corner[0] + tang * di[0] - cc[0]);
            double a1 = atan2(corner[1] + tang * dj[1] - cc[1], corner[0] + tang * dj[0] - cc[0]);
            if (a1 > a0) a1 -= 6.283185307179586; /* the arc runs clockwise around its centre */
            for (int k = 0; k <= 4; k++) {
                double a = a0 + (a1 - a0) * k / 4;
                p[m++] = cc[0] + rad * cos(a), p[m++] = cc[1] + rad * sin(a);
            }
        }
        if (ok) return m / 2;
    }
}

static polyset make_junctions(size_t count, uint64_t seed) {
    polyset s;
    set_alloc(&s, "junction-like", count);
    pm_rng r;
    pm_rng_seed(&r, seed);
    for (size_t k = 0; k < count; k++) {
        s.pts[k] = xmalloc(2 * 8 * 7 * sizeof(double));
        s.n[k] = junction_contour(&r, s.pts[k]);
    }
    return s;
}

/* Parses one line of x y pairs; returns the point count (0 for none). */
static size_t parse_line(char *line, double **out) {
    size_t cap = 64, len = 0;
    double *v = xmalloc(cap * sizeof *v);
    char *p = line, *end;
    for (double x = strtod(p, &end); end != p; x = strtod(p, &end)) {
        if (len == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            if (!v) die("realloc");
        }
        v[len++] = x;
        p = end;
    }
    *out = v;
    return len / 2;
}

static int load_set(const char *path, const char *name, polyset *s) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    char *line = NULL;
    size_t lcap = 0, cap = 0;
    while (getline(&line, &lcap, f) >= 0) {
        if (line[0] == '#') continue;
        double *pts;
        size_t n = parse_line(line, &pts);
        if (n < 3) {
            free(pts);
            continue;
        }
        if (s->count == cap) {
            cap = cap ? 2 * cap : 16;
            s->pts = realloc(s->pts, cap * sizeof *s->pts);
            s->n = realloc(s->n, cap * sizeof *s->n);
            if (!s->pts || !s->n) die("realloc");
        }
        s->pts[s->count] = pts;
        s->n[s->count++] = n;
    }
    free(line);
    fclose(f);
    return s->count ? 0 : -1;
}

static void write_set(const char *dir, const polyset *s) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.poly", dir, s->name);
    FILE *f = fopen(path, "w");
    if (!f) die(path);
    fprintf(f, "# %s: %zu polygons, CCW x y pairs (written by bench_earclip)\n", s->name, s->count);
    for (size_t k = 0; k < s->count; k++) {
        for (size_t i = 0; i < 2 * s->n[k]; i++) fprintf(f, i ? " %.17g" : "%.17g", s->pts[k][i]);
        fputc('\n', f);
    }
    fclose(f);
}

/* Triangulates every polygon of the set once; returns failures. */
static int run_once(const polyset *s, uint32_t *out) {
    int bad = 0;
    for (size_t k = 0; k < s->count; k++) {
        pm_arena *a = pm_arena_create(0);
        long r = pm_earclip(a, s->pts[k], s->n[k], out);
        bad += r != (long)s->n[k] - 2;
        pm_arena_destroy(a);
    }
    return bad;
}

/* Milliseconds per polygon: PM_WARMUP untimed passes over the set, then
 * the median of PM_RUNS rounds, each the mean over at least 0.1 s of
 * repetitions (earcut.sh times earcut by the same rule). */
static double time_set(const polyset *s, int *bad) {
    size_t maxn = 0;
    for (size_t k = 0; k < s->count; k++) maxn = s->n[k] > maxn ? s->n[k] : maxn;
    uint32_t *out = xmalloc(pm_earclip_bound(maxn) * sizeof *out);
    *bad = run_once(s, out); /* validation */
    for (int w = 1; w < pm_bench_warmup(); w++) run_once(s, out);
    int runs = pm_bench_runs();
    double *ms = xmalloc((size_t)runs * sizeof *ms);
    for (int round = 0; round < runs; round++) {
        size_t reps = 0;
        double t0 = now_s(), t;
        do {
            run_once(s, out);
            reps++;
            t = now_s() - t0;
        } while (t < 0.1);
        ms[round] = 1e3 * t / (double)(reps * s->count);
    }
    double med = pm_bench_median(ms, runs);
    free(ms);
    free(out);
    return med;
}

static void bench_set(const char *dir, const polyset *s) {
    int bad;
    double ms = time_set(s, &bad);
    write_set(dir, s);
    printf("%-24s %6zu polygons  pm_earclip %10.4f ms/polygon%s\n", s->name, s->count, ms,
           bad ? "  (SOME FAILED)" : "");
}

static void free_set(polyset *s) {
    for (size_t k = 0; k < s->count; k++) free(s->pts[k]);
    free(s->pts);
    free(s->n);
}

static void bench_extra_sets(const char *src, const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/bench/polygons", src);
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || len > 60 || strcmp(e->d_name + len - 5, ".poly") != 0) continue;
        char name[64], file[1024];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        polyset s;
        if (load_set(file, name, &s) < 0) {
            fprintf(stderr, "bench_earclip: no polygons in %s\n", file);
            continue;
        }
        bench_set(dir, &s);
        free_set(&s);
    }
    closedir(d);
}

/* Removes the previous run's sets, so earcut.sh never compares stale ones. */
static void clear_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || strcmp(dot, ".poly") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
}

/* `bench_earclip --time FILE`: prints the median milliseconds per polygon
 * for one written set, so earcut.sh can interleave the two implementations
 * (bench/compare.sh). */
static int time_file(const char *file) {
    polyset s;
    if (load_set(file, "set", &s) < 0) {
        fprintf(stderr, "bench_earclip: no polygons in %s\n", file);
        return 1;
    }
    int bad;
    printf("%.6f\n", time_set(&s, &bad));
    free_set(&s);
    return bad ? 1 : 0;
}

/* `bench_earclip --once FILE [REPS]`: triangulates every polygon of FILE
 * REPS times (default 1) without timing, for instruction counts under
 * `valgrind --tool=callgrind` (stable whatever the machine's load). */
static int once_file(const char *file, long reps) {
    polyset s;
    if (load_set(file, "set", &s) < 0) {
        fprintf(stderr, "bench_earclip: no polygons in %s\n", file);
        return 1;
    }
    size_t maxn = 0;
    for (size_t k = 0; k < s.count; k++) maxn = s.n[k] > maxn ? s.n[k] : maxn;
    uint32_t *out = xmalloc(pm_earclip_bound(maxn) * sizeof *out);
    int bad = 0;
    for (long r = 0; r < reps; r++) bad += run_once(&s, out);
    /* A hash of every triangle, to compare the output of two builds. */
    uint64_t h = 14695981039346656037ull;
    for (size_t k = 0; k < s.count; k++) {
        pm_arena *a = pm_arena_create(0);
        long t = pm_earclip(a, s.pts[k], s.n[k], out);
        for (long i = 0; i < 3 * t; i++) h = (h ^ out[i]) * 1099511628211ull;
        h = (h ^ (uint64_t)t) * 1099511628211ull;
        pm_arena_destroy(a);
    }
    printf("%zu polygons x %ld, %d failed, triangles hash %016llx\n", s.count, reps, bad,
           (unsigned long long)h);
    free(out);
    free_set(&s);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--time") == 0) return time_file(argv[2]);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--once") == 0)
        return once_file(argv[2], argc == 4 ? atol(argv[3]) : 1);
    const char *build = getenv("PM_BUILD_DIR"), *src = getenv("PM_SOURCE_DIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/earclip", build ? build : "build");
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) die(dir);
    clear_dir(dir);
    static const struct { size_t n, count; } sizes[] = {{100, 200}, {1000, 40}, {10000, 8}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        polyset s = make_stars(sizes[i].n, sizes[i].count, 1000 + i);
        bench_set(dir, &s);
        free_set(&s);
    }
    polyset j = make_junctions(500, 3000);
    bench_set(dir, &j);
    free_set(&j);
    /* Not star-shaped: what every polygon without a kernel point pays. */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        polyset s = make_combs(sizes[i].n + 2, sizes[i].count, 2000 + i);
        bench_set(dir, &s);
        free_set(&s);
    }
    bench_extra_sets(src ? src : ".", dir);
    return 0;
}
