/* The same bytes from every build (issue 13): the README examples run
 * through this build's core/ and api/ (golden_dump) and through a copy
 * compiled at another optimization level with ASan and UBSan
 * (golden_dump_alt, see CMakeLists.txt), in all three formats. Both must
 * write the same bytes, and those must hash to tests/fuzz/readme.golden.
 * PM_GOLDEN=print prints the list with this build's hashes instead. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <xxhash.h>

#include "golden_list.h"
#include "procs.h"

#define PM_LIST PM_SOURCE_DIR "/tests/fuzz/readme.golden"

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

static void dump(const char *exe, const char *dir) {
    char log[4200];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    char *argv[] = {(char *)exe, (char *)PM_SOURCE_DIR, (char *)PM_LIST, (char *)dir, NULL};
    pid_t pid = pm_tp_spawn(argv, NULL, log);
    cr_assert_gt(pid, 0, "cannot start %s", exe);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    size_t n = 0;
    unsigned char *text = slurp(log, &n);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status %d): %.*s", exe, st,
              (int)n, text ? (char *)text : "");
    free(text);
}

Test(builds, readme_examples_same_bytes_in_both_builds_and_golden, .timeout = 300) {
    pm_golden_list l;
    cr_assert_eq(pm_golden_list_read(PM_LIST, &l), 0);
    /* Every generator has examples in the list, in every format. */
    for (size_t g = 0; pm_api_generators[g]; g++) {
        const char *route = strrchr(pm_api_generators[g]->path, '/') + 1;
        int formats = 0;
        for (size_t i = 0; i < l.n; i++)
            if (strcmp(l.e[i].route, route) == 0) formats |= 1 << l.e[i].format;
        cr_assert_eq(formats, 7, "%s: readme.golden lacks a format of its examples", route);
    }
    char *a = pm_tp_tmpdir("builds-main"), *b = pm_tp_tmpdir("builds-alt");
    dump(PM_GOLDEN_DUMP, a);
    dump(PM_GOLDEN_DUMP_ALT, b);
    bool print = getenv("PM_GOLDEN") && strcmp(getenv("PM_GOLDEN"), "print") == 0;
    for (size_t i = 0; i < l.n; i++) {
        const pm_golden_entry *e = &l.e[i];
        const char *fmt = pm_api_format_name(e->format);
        char pa[4200], pb[4200];
        snprintf(pa, sizeof pa, "%s/%s.%s", a, e->file, fmt);
        snprintf(pb, sizeof pb, "%s/%s.%s", b, e->file, fmt);
        size_t na = 0, nb = 0;
        unsigned char *da = slurp(pa, &na), *db = slurp(pb, &nb);
        cr_assert(da && db, "%s/%s %s: no output", e->route, e->file, fmt);
        size_t at = 0;
        while (at < na && at < nb && da[at] == db[at]) at++;
        cr_expect(na == nb && at == na,
                  "%s/%s %s: this build and the %s build differ at byte %zu (%zu vs %zu bytes)",
                  e->route, e->file, fmt, PM_ALT_OPT, at, na, nb);
        uint64_t h = XXH3_64bits(da, na);
        if (print)
            printf("%s/%s %s 0x%016" PRIx64 "\n", e->route, e->file, fmt, h);
        else
            cr_expect_eq(h, e->hash, "%s/%s %s: hash 0x%016" PRIx64 ", golden 0x%016" PRIx64
                         " (PM_GOLDEN=print prints the list with this build's hashes)",
                         e->route, e->file, fmt, h, e->hash);
        free(da);
        free(db);
    }
    pm_golden_list_free(&l);
    pm_tp_rmrf(a);
    pm_tp_rmrf(b);
    free(a);
    free(b);
}
