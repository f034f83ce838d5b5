/* Compression levels for a cached result: size and time of gzip (zlib)
 * and br at each level, on the file given (a GLB or JSON body fetched by
 * bench/compress.sh). A result is compressed once when it enters the cache
 * and served many times, so the level to pick is the smallest body whose
 * time a miss can afford. Times are the median of 3 runs (thread CPU time,
 * so a loaded machine disturbs them less than wall time). */
#include <stdio.h>
#include <stdlib.h>

#include "compress.h"
#include "pm_bench.h"

static int one(const unsigned char *src, size_t len, int br, int level) {
    double t[3];
    size_t out_len = 0;
    for (int r = 0; r < 3; r++) {
        unsigned char *out = NULL;
        double t0 = pm_bench_thread_ms();
        int rc = br ? pm_svc_brotli(src, len, level, &out, &out_len)
                    : pm_svc_gzip(src, len, level, &out, &out_len);
        t[r] = pm_bench_thread_ms() - t0;
        free(out);
        if (rc < 0) return -1;
    }
    printf("%-5s %2d  %9zu bytes  %5.1f %%  %8.1f ms\n", br ? "br" : "gzip", level, out_len,
           100.0 * (double)out_len / (double)len, pm_bench_median(t, 3));
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {   /* bench/run.sh runs every bench_* bare */
        printf("bench_compress FILE: bench/service.sh gives it the 10 x 10 town GLB\n");
        return 0;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return perror(argv[1]), 1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *src = malloc((size_t)n);
    if (!src || fread(src, 1, (size_t)n, f) != (size_t)n) return 1;
    fclose(f);
    printf("%s: %ld bytes\n", argv[1], n);
    static const int gz[] = {1, 6, 9}, brq[] = {4, 5, 6, 7, 8, 9, 10, 11};
    for (size_t i = 0; i < sizeof gz / sizeof gz[0]; i++)
        if (one(src, (size_t)n, 0, gz[i]) < 0) return 1;
    for (size_t i = 0; i < sizeof brq / sizeof brq[0]; i++)
        if (one(src, (size_t)n, 1, brq[i]) < 0) return 1;
    free(src);
    return 0;
}
