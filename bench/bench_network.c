/* Network speed: an N x N grid town (40 m blocks, sidewalks at every
 * junction, gentle slopes), end to end from request bytes to GLB bytes,
 * with its stages, for N = 3, 5, 10 and 20.
 *   bench_network          the report
 *   bench_network N        only the N x N grid
 * Timing rule: after a warm-up, the median over >= 1 s (and >= 10) of
 * requests each timed on its own; stages likewise (thread CPU time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_bench_request.h"

extern const pm_api_generator pm_api_gen_network;
#define GEN pm_api_gen_network

/* An n x n grid request: corners and edges of alternating widths, so some
 * degree-2 nodes are junctions (width transitions) and some pass through. */
static char *grid(int n) {
    size_t cap = 512 + (size_t)n * n * 200;
    char *s = malloc(cap);
    size_t k = (size_t)snprintf(s, cap, "{\"sidewalk\": {\"width\": 2}, \"corner_radius\": 4, \"nodes\": [");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            k += (size_t)snprintf(s + k, cap - k, "%s{\"id\": %d, \"position\": [%d, %g, %d]}", i + j ? ", " : "",
                                  i * n + j, 40 * i, 0.2 * ((i * 7 + j * 3) % 5), 40 * j);
    k += (size_t)snprintf(s + k, cap - k, "], \"edges\": [");
    const char *sep = "";
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i + 1 < n) {
                k += (size_t)snprintf(s + k, cap - k, "%s{\"from\": %d, \"to\": %d}", sep, i * n + j, (i + 1) * n + j);
                sep = ", ";
            }
            if (j + 1 < n) {
                k += (size_t)snprintf(s + k, cap - k, "%s{\"from\": %d, \"to\": %d, \"width\": %d, \"points\": [[%g, %g]]}",
                                      sep, i * n + j, i * n + j + 1, j % 2 ? 6 : 8, 40.0 * i + 3, 40.0 * j + 20);
                sep = ", ";
            }
        }
    snprintf(s + k, cap - k, "]}");
    return s;
}

static int run(int n) {
    char *body = grid(n);
    size_t len = strlen(body);
    pm_bench_stages st;
    if (pm_bench_request(&GEN, body, len, &st)) return 1;
    enum { MAXR = 4000 };
    static double tot[MAXR], b[MAXR], p[MAXR], g[MAXR], e[MAXR];
    int r = 0;
    double start = pm_bench_wall_ms();
    while (r < MAXR && (r < 10 || pm_bench_wall_ms() - start < 1000.0)) {
        if (pm_bench_request(&GEN, body, len, &st)) return 1;
        b[r] = st.body; p[r] = st.parse; g[r] = st.gen; e[r] = st.enc;
        tot[r] = pm_bench_stages_total(&st);
        r++;
    }
    printf("network %2dx%-2d (%3d nodes, %3d edges): request bytes -> GLB %8.3f ms median of %d "
           "(body %.3f, params + key %.3f, generate %.3f, GLB %.3f ms); %llu vertices, %llu triangles, "
           "%zu bytes\n", n, n, n * n, 2 * n * (n - 1), pm_bench_median(tot, r), r,
           pm_bench_median(b, r), pm_bench_median(p, r), pm_bench_median(g, r), pm_bench_median(e, r),
           (unsigned long long)st.verts, (unsigned long long)st.tris, st.bytes);
    free(body);
    return 0;
}

int main(int argc, char **argv) {
    if (pm_bench_service_malloc(argc, argv)) return 0;
    if (argc > 1) return run(atoi(argv[1]));
    int sizes[] = {3, 5, 10, 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (run(sizes[i])) return 1;
    return 0;
}
