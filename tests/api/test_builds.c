/* The same bytes from every build (issue 13): the README examples run
 * through this build's core/ and api/ (golden_dump) and through a copy
 * compiled at another optimization level with ASan and UBSan
 * (golden_dump_alt, see CMakeLists.txt), and through this build again with
 * glibc's libm limited to its SSE2 code, in all three formats. All must
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
    return (unsigned char *)pm_golden_read_file(path, len);
}

static void dump(const char *exe, const char *dir, char *const env[]) {
    char log[4200];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    char *argv[] = {(char *)exe, (char *)PM_SOURCE_DIR, (char *)PM_LIST, (char *)dir, NULL};
    pid_t pid = pm_tp_spawn(argv, env, log);
    cr_assert_gt(pid, 0, "cannot start %s", exe);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    size_t n = 0;
    unsigned char *text = slurp(log, &n);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status %d): %.*s", exe, st,
              (int)n, text ? (char *)text : "");
    free(text);
}

/* e's output in dir (malloc'd); the test fails without one. */
static unsigned char *output(const char *dir, const pm_golden_entry *e, size_t *len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.%s", dir, e->file, pm_api_format_name(e->format));
    unsigned char *d = slurp(path, len);
    cr_assert(d, "%s/%s %s: no output in %s", e->route, e->file, pm_api_format_name(e->format), dir);
    return d;
}

/* Expects the output of e in dir to be the n bytes want. */
static void same_bytes(const unsigned char *want, size_t n, const char *dir, const pm_golden_entry *e,
                       const char *what) {
    size_t m = 0, at = 0;
    unsigned char *got = output(dir, e, &m);
    while (at < n && at < m && want[at] == got[at]) at++;
    cr_expect(n == m && at == n, "%s/%s %s: this build and %s differ at byte %zu (%zu vs %zu bytes)",
              e->route, e->file, pm_api_format_name(e->format), what, at, n, m);
    free(got);
}

Test(builds, readme_examples_same_bytes_in_both_builds_and_golden, .timeout = 300) {
    pm_golden_list l;
    cr_assert_eq(pm_golden_list_read(PM_LIST, &l), 0);
    /* Every generator has examples in the list, in every format. */
    for (size_t g = 0; pm_api_generators[g]; g++) {
        const char *route = strrchr(pm_api_generators[g]->path, '/') + 1;
        int formats = 0;
        for (size_t i = 0; i < l.n; i++)
            if (strcmp(l.e[i].route, route) == 0 && !l.e[i].refused) formats |= 1 << l.e[i].format;
        cr_assert_eq(formats, 7, "%s: readme.golden lacks a format of its examples", route);
    }
    /* c: this build again, with glibc's libm on its SSE2 code (no FMA or
     * AVX2 variants of sin, cos, atan2, pow …), as on an older CPU. */
    char *a = pm_tp_tmpdir("builds-main"), *b = pm_tp_tmpdir("builds-alt"),
         *c = pm_tp_tmpdir("builds-nofma");
    char *nofma[] = {"GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA", NULL};
    dump(PM_GOLDEN_DUMP, a, NULL);
    dump(PM_GOLDEN_DUMP_ALT, b, NULL);
    dump(PM_GOLDEN_DUMP, c, nofma);
    bool print = getenv("PM_GOLDEN") && strcmp(getenv("PM_GOLDEN"), "print") == 0;
    for (size_t i = 0; i < l.n; i++) {
        const pm_golden_entry *e = &l.e[i];
        if (e->refused) continue;   /* the dumps checked the status */
        const char *fmt = pm_api_format_name(e->format);
        size_t na = 0;
        unsigned char *da = output(a, e, &na);
        same_bytes(da, na, b, e, "the " PM_ALT_OPT " ASan+UBSan build");
        same_bytes(da, na, c, e, "this build without libm's FMA and AVX2 code");
        uint64_t h = XXH3_64bits(da, na);
        if (print)
            printf("%s/%s %s 0x%016" PRIx64 "\n", e->route, e->file, fmt, h);
        else
            cr_expect_eq(h, e->hash, "%s/%s %s: hash 0x%016" PRIx64 ", golden 0x%016" PRIx64
                         " (PM_GOLDEN=print prints the list with this build's hashes)",
                         e->route, e->file, fmt, h, e->hash);
        free(da);
    }
    pm_golden_list_free(&l);
    char *dirs[] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        pm_tp_rmrf(dirs[k]);
        free(dirs[k]);
    }
}
