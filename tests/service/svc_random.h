/* Random request bodies of every route, for tests that compare two ways
 * of answering the same requests (test_cli.c, test_http_memory_retain.c). */
#ifndef PM_TEST_SVC_RANDOM_H
#define PM_TEST_SVC_RANDOM_H
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "scene/rng.h"

/* A random request body for route r (0 junctions ... 4 grids) from g:
 * mostly valid, now and then refused (the same refusal both ways). */
static inline void random_body(pm_rng *g, int r, char *b, size_t cap) {
    size_t at = 0;
#define PUT(...) (at += (size_t)snprintf(b + at, cap - at, __VA_ARGS__))
    if (r == 0) {
        int arms = 3 + (int)pm_rng_below(g, 3);
        PUT("{\"arms\": [");
        for (int i = 0; i < arms; i++) {
            double a = 6.283185307179586 * (i + pm_rng_range(g, -0.15, 0.15)) / arms;
            PUT("%s{\"direction\": [%.4f, %.4f], \"width\": %.2f}", i ? ", " : "", cos(a), sin(a),
                pm_rng_range(g, 4, 12));
        }
        PUT("]%s}", pm_rng_chance(g, 0.5) ? ", \"sidewalk\": {\"width\": 2}" : "");
    } else if (r == 1) {
        int n = 2 + (int)pm_rng_below(g, 5);
        PUT("{\"points\": [");
        for (int i = 0; i < n; i++)
            PUT("%s[%.2f, %.2f, %.2f]", i ? ", " : "", 50.0 * i, pm_rng_range(g, -3, 3),
                pm_rng_range(g, -30, 30));
        PUT("], \"width\": %.2f}", pm_rng_range(g, -1, 14));
    } else if (r == 2) {
        int w = 2 + (int)pm_rng_below(g, 5), h = 2 + (int)pm_rng_below(g, 4);
        double step = pm_rng_range(g, 50, 120);
        PUT("{\"nodes\": [");
        for (int i = 0; i < w * h; i++)
            PUT("%s{\"id\": \"n%d\", \"position\": [%.2f, %.2f]}", i ? ", " : "", i,
                step * (i % w) + pm_rng_range(g, -5, 5), step * (i / w) + pm_rng_range(g, -5, 5));
        PUT("], \"edges\": [");
        int e = 0;
        for (int i = 0; i < w * h; i++) {
            if (i % w + 1 < w) PUT("%s{\"from\": \"n%d\", \"to\": \"n%d\"}", e++ ? ", " : "", i, i + 1);
            if (i / w + 1 < h) PUT("%s{\"from\": \"n%d\", \"to\": \"n%d\"}", e++ ? ", " : "", i, i + w);
        }
        PUT("]%s}", pm_rng_chance(g, 0.5) ? ", \"sidewalk\": {\"width\": 2}" : "");
    } else if (r == 3) {
        PUT("{\"seed\": %d, \"generate\": {\"count\": %d, \"extent\": [64, 64], \"floors\": %d}}",
            (int)pm_rng_below(g, 100000), 4 + (int)pm_rng_below(g, 16), 1 + (int)pm_rng_below(g, 2));
    } else {
        PUT("{\"seed\": %d, \"size\": %d}", (int)pm_rng_below(g, 100000),
            2 + (int)pm_rng_below(g, 9));
    }
#undef PUT
    cr_assert_lt(at, cap);
}
#endif
