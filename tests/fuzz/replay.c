/* Replays fuzz inputs without libFuzzer: `make test` runs it under ASan
 * and UBSan on every seed corpus and every crash file kept in the tree.
 *
 *   fuzz_replay ROUTE PATH...   (a PATH is a file or a directory of them)
 *
 * Exit status 0 when every input ran; a crash aborts (non-zero), and so
 * does a path that cannot be read. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_one.h"
#include "golden_list.h"
#include "pipeline.h"

static int pm__cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int pm__file(const pm_api_generator *gen, const char *path) {
    size_t n;
    char *buf = pm_golden_read_file(path, &n);
    if (!buf) return -1;
    fprintf(stderr, "%s\n", path);   /* the last one named is the culprit */
    pm_fuzz_one(gen, (const uint8_t *)buf, n);
    free(buf);
    return 0;
}

/* Runs path (a file, or every file of a directory in name order); returns
 * the number of inputs, or -1. */
static long pm__path(const pm_api_generator *gen, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) return pm__file(gen, path) == 0 ? 1 : -1;
    DIR *d = opendir(path);
    if (!d) return -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
        if (!names) { closedir(d); return -1; }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, pm__cmp);
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        long c = count >= 0 ? pm__path(gen, full) : 0;
        count = c < 0 ? -1 : count + c;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv) {
    const pm_api_generator *gen = argc > 2 ? pm_pipeline_generator(argv[1]) : NULL;
    if (!gen) {
        fprintf(stderr, "usage: %s ROUTE PATH...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 2; i < argc; i++) {
        long c = pm__path(gen, argv[i]);
        if (c < 0) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 1;
        }
        total += c;
    }
    printf("%s: %ld inputs replayed, no crash\n", argv[1], total);
    return 0;
}
