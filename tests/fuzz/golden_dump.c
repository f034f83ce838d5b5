/* The README examples' outputs from one build of core/ and api/. CMake
 * links this file twice: with the build's own pm_api and with a copy of
 * core/ and api/ compiled at another optimization level (pm_api_alt);
 * tests/api/test_builds.c runs both and compares what they write.
 *
 *   golden_dump SRC_DIR LIST OUT_DIR
 *
 * LIST (tests/fuzz/readme.golden) has one example a line, "<route>/<seed
 * file> <format> <hash>"; each output is written to OUT_DIR/<seed
 * file>.<format>; a "refused" example must be refused with its status.
 * Exit status 0 when every example did as listed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_list.h"
#include "pipeline.h"

static int pm__write(const char *path, const pm_api_buf *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = fwrite(b->data, 1, b->len, f);
    return fclose(f) == 0 && n == b->len ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SRC_DIR LIST OUT_DIR\n", argv[0]);
        return 2;
    }
    pm_golden_list l;
    if (pm_golden_list_read(argv[2], &l) != 0) return 2;
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    int bad = 0;
    for (size_t i = 0; i < l.n; i++) {
        const pm_golden_entry *e = &l.e[i];
        size_t len;
        char *in = pm_golden_read_seed(argv[1], e, &len);
        const pm_api_generator *gen = pm_pipeline_generator(e->route);
        pm_api_buf out;
        int status, rc = in && gen ? pm_pipeline_run(gen, in, len, &lim, 1, &e->format, &out, &status) : -1;
        free(in);
        if (e->refused) {   /* the example shows an error: it must stay one */
            if (rc != 1 || status != e->refused) {
                fprintf(stderr, "%s/%s: want refused with %d, got %s %d\n", e->route, e->file,
                        e->refused, rc == 0 ? "an output," : "status", status);
                bad = 1;
            }
            if (rc == 0) free(out.data);
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%s", argv[3], e->file, pm_api_format_name(e->format));
        if (rc != 0 || pm__write(path, &out) != 0) {
            fprintf(stderr, "%s/%s %s: %s (status %d)\n", e->route, e->file,
                    pm_api_format_name(e->format), rc == 0 ? "cannot write" : "no output",
                    rc == 0 ? 0 : status);
            bad = 1;
        }
        if (rc == 0) free(out.data);
    }
    pm_golden_list_free(&l);
    return bad;
}
