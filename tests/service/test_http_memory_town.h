/* The town the memory tests run (test_http_memory.c, test_http_memory_caps.c,
 * test_http_memory_retain.c), and their reading of RSS. The town:
 * n x n nodes 100 m apart, every street with 2 m sidewalks, sampled every
 * seg metres; shift moves one node by shift millimetres (another cache
 * key, the same size). */
#ifndef PM_TEST_HTTP_MEMORY_TOWN_H
#define PM_TEST_HTTP_MEMORY_TOWN_H
#include <jansson.h>
#include <stdio.h>
#include <sys/types.h>

/* A process's resident set (VmRSS) in MiB, -1 / 1024 when unreadable. */
static inline double pm_test_rss_mib(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lf", &kb) == 1) break;
    if (f) fclose(f);
    return kb / 1024.0;
}

static inline json_t *pm_test_town(int n, double seg, int shift) {
    json_t *nodes = json_array(), *edges = json_array();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            char id[32], to[32];
            snprintf(id, sizeof id, "n%d_%d", i, j);
            double x = i * 100.0 + (i == 0 && j == 0 ? shift * 0.001 : 0);
            json_array_append_new(nodes, json_pack("{s:s,s:[f,f]}", "id", id, "position", x,
                                                   j * 100.0));
            if (i + 1 < n) {
                snprintf(to, sizeof to, "n%d_%d", i + 1, j);
                json_array_append_new(edges, json_pack("{s:s,s:s}", "from", id, "to", to));
            }
            if (j + 1 < n) {
                snprintf(to, sizeof to, "n%d_%d", i, j + 1);
                json_array_append_new(edges, json_pack("{s:s,s:s}", "from", id, "to", to));
            }
        }
    return json_pack("{s:o,s:o,s:{s:i},s:f}", "nodes", nodes, "edges", edges, "sidewalk",
                     "width", 2, "max_segment", seg);
}
#endif
