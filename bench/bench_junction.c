/* Junction speed and robustness.
 *   bench_junction             the report: a four-arm junction with sidewalks
 *                              end to end (request bytes -> GLB bytes) with
 *                              its stages, a few other shapes, and a sweep of
 *                              random arm sets checked against every
 *                              invariant of tests/support/pm_test_junction.h
 *   bench_junction sweep=N [seed=S]  only the sweep, over N arm sets
 *   bench_junction sloped      only the four-arm junction with sidewalks,
 *                              flat and sloped, and a sloped T
 *   bench_junction polygons    prints junction contours in the polygon-file
 *                              format of bench_earclip (one polygon a line,
 *                              x y pairs counter-clockwise); it made
 *                              bench/polygons/junction.poly
 * Timing rule: after a warm-up, the median over >= 1 s (and >= 200) of
 * requests each timed on its own (thread CPU time), stages likewise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/support/pm_test_junction.h"
#include "junction/junction.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_bench_request.h"

extern const pm_api_generator pm_api_gen_junction;

static const char *const four_arm_sidewalks =
    "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": [0, 1], \"width\": 7},"
    " {\"direction\": [-1, 0], \"width\": 7}, {\"direction\": [0, -1], \"width\": 7}],"
    " \"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}}";

/* Medians over >= 1 s of requests (at least 200), each request timed on its
 * own: on a shared machine the median is the figure that repeats. */
static void end_to_end(const char *name, const char *body) {
    size_t len = strlen(body);
    pm_bench_stages warm;
    if (pm_bench_request(&pm_api_gen_junction, body, len, &warm) != 0) {
        printf("%-30s refused\n", name);
        return;
    }
    enum { MAXR = 200000 };
    static double tot[MAXR], body_t[MAXR], parse_t[MAXR], gen_t[MAXR], enc_t[MAXR];
    int n = 0;
    double t0 = pm_bench_wall_ms();
    while (n < MAXR && (n < 200 || pm_bench_wall_ms() - t0 < 1000.0)) {
        pm_bench_stages st;
        pm_bench_request(&pm_api_gen_junction, body, len, &st);
        tot[n] = pm_bench_stages_total(&st);
        body_t[n] = st.body;
        parse_t[n] = st.parse;
        gen_t[n] = st.gen;
        enc_t[n] = st.enc;
        n++;
    }
    double m = pm_bench_median(tot, n);
    printf("%-30s %8.1f us/request (%6.0f/s)  body %.1f  params+key %.1f  generate %.1f  "
           "GLB %.1f us  [%llu vertices, %llu triangles, %zu bytes; median of %d]\n", name,
           m * 1e3, 1e3 / m, pm_bench_median(body_t, n) * 1e3, pm_bench_median(parse_t, n) * 1e3,
           pm_bench_median(gen_t, n) * 1e3, pm_bench_median(enc_t, n) * 1e3,
           (unsigned long long)warm.verts, (unsigned long long)warm.tris, warm.bytes, n);
}

/* N random arm sets of the property tests: every junction checked against
 * every invariant (seams on every tenth), every refusal checked for cause. */
static int sweep(long n, uint64_t seed) {
    pm_rng g;
    pm_rng_seed(&g, seed);
    long ok = 0, refused = 0, bad = 0, kinds[8] = {0};
    double gen_s = 0;
    for (long it = 0; it < n; it++) {
        jcase c;
        random_case(&g, &c);
        double t0 = pm_bench_wall_ms();
        jrun r = run(&c);
        gen_s += (pm_bench_wall_ms() - t0) / 1e3;
        if (r.rc == PM_ERR_GEOMETRY) {
            refused++;
            kinds[r.d.error]++;
            if (!refusal_justified(&c, &r.d)) {
                bad++;
                fprintf(stderr, "case %ld refused without cause: %s\n", it, r.d.message);
                dump_case(&c);
            }
        } else {
            const char *w = check_all(&r, &c, it % 10 == 0);
            if (w) {
                bad++;
                fprintf(stderr, "case %ld: %s\n", it, w);
                dump_case(&c);
            } else {
                ok++;
            }
        }
        pm_arena_destroy(r.a);
    }
    printf("sweep: %ld random arm sets, %ld junctions valid, %ld refused with cause (short %ld, "
           "sidewalk %ld, ring %ld), %ld FAILED; %.1f us per generation\n", n, ok, refused - bad,
           kinds[PM_JUNCTION_ARM_TOO_SHORT], kinds[PM_JUNCTION_SIDEWALK_NO_FIT],
           kinds[PM_JUNCTION_RING_NO_FIT], bad, gen_s / n * 1e6);
    return bad ? 1 : 0;
}

/* Contours of named shapes and of random arm sets (no roundabouts: their
 * ring is ear-clipped in sectors), as x y pairs counter-clockwise in x/y. */
static void polygons(void) {
    printf("# junction contours from bench_junction polygons: counter-clockwise x/y (x, -z)\n");
    pm_rng g;
    pm_rng_seed(&g, 99);
    int written = 0;
    while (written < 200) {
        jcase c;
        random_case(&g, &c);
        if (c.p.has_roundabout) continue;
        c.p.corner_segments = 8;
        jrun r = run(&c);
        if (r.rc == 0) {
            const pm_prim *as = &r.s->prims[0];
            size_t nc = pm_meta_get(r.s->meta, "contour")->u.kids.count;
            for (size_t i = 0; i < nc; i++)
                printf("%s%.9g %.9g", i ? " " : "", as->positions[3 * i], -as->positions[3 * i + 2]);
            printf("\n");
            written++;
        }
        pm_arena_destroy(r.a);
    }
}

/* Sloped junctions: what following the height field costs (the refined
 * asphalt, the densified curb runs, the closed slabs), request to GLB. */
static void sloped_cases(void) {
    end_to_end("four arms sloped + sidewalks",
               "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": [0, 1], "
               "\"width\": 7, \"elevation\": 3}, {\"direction\": [-1, 0], \"width\": 8, "
               "\"elevation\": 0.5}, {\"direction\": [0, -1], \"width\": 7, \"elevation\": -2}], "
               "\"sidewalk\": {\"width\": 2.5, \"curb_height\": 0.15}, \"corner_radius\": 5}");
    end_to_end("tee sloped + sidewalks",
               "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": [0, 1], "
               "\"width\": 7, \"elevation\": 2.5}, {\"direction\": [-1, 0], \"width\": 8, "
               "\"elevation\": -1}], \"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}, "
               "\"corner_radius\": 6}");
}

int main(int argc, char **argv) {
    if (pm_bench_service_malloc(argc, argv)) return 0;
    if (argc > 1 && strcmp(argv[1], "polygons") == 0) {
        polygons();
        return 0;
    }
    if (argc > 1 && strncmp(argv[1], "sweep=", 6) == 0)
        return sweep(atol(argv[1] + 6),
                     argc > 2 && strncmp(argv[2], "seed=", 5) == 0 ? strtoull(argv[2] + 5, NULL, 10) : 424242);
    printf("junction, end to end (request bytes -> GLB bytes), medians:\n");
    if (argc > 1 && strcmp(argv[1], "sloped") == 0) {
        /* Only these: the same source builds against older trees for a
         * before/after comparison (bench/junction_heights.sh). */
        end_to_end("four arms + sidewalks", four_arm_sidewalks);
        sloped_cases();
        return 0;
    }
    end_to_end("four arms + sidewalks", four_arm_sidewalks);
    sloped_cases();
    end_to_end("tee", "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": "
                      "[0, 1], \"width\": 9}, {\"direction\": [-1, 0], \"width\": 7}]}");
    end_to_end("five-way sloped + sidewalks",
               "{\"arms\": [{\"direction\": [1, 0.2], \"width\": 8, \"elevation\": 1}, "
               "{\"direction\": [0.3, 1], \"width\": 6}, {\"direction\": [-1, 0.5], \"width\": 7, "
               "\"elevation\": -0.5}, {\"direction\": [-0.6, -1], \"width\": 9}, "
               "{\"direction\": [0.7, -0.8], \"width\": 5, \"elevation\": 2}], "
               "\"corner_radius\": 4, \"corner_segments\": 8, \"sidewalk\": {\"width\": 2.5}}");
    end_to_end("roundabout 4 arms + sidewalks",
               "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": [0, 1], "
               "\"width\": 8}, {\"direction\": [-1, 0], \"width\": 8}, {\"direction\": [0, -1], "
               "\"width\": 8}], \"roundabout\": {\"radius\": 16, \"island_radius\": 8, "
               "\"segments\": 64}, \"corner_radius\": 5, \"sidewalk\": {\"width\": 2.5}}");
    char big[4096];
    size_t off = (size_t)snprintf(big, sizeof big, "{\"arms\": [");
    for (int i = 0; i < 16; i++)
        off += (size_t)snprintf(big + off, sizeof big - off, "%s{\"direction\": [%.6f, %.6f], "
                                "\"width\": 6}", i ? ", " : "", cos(i * 0.3926990817),
                                sin(i * 0.3926990817));
    snprintf(big + off, sizeof big - off, "], \"corner_radius\": 2, \"corner_segments\": 16, "
             "\"sidewalk\": {\"width\": 1.5}}");
    end_to_end("16 arms + sidewalks", big);
    return sweep(100000, 424242);
}
