/* Configuration: defaults, PROCMESH_* variables, flags, errors, --help. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

static char *const no_env[] = {NULL};

static int load(pm_svc_config *c, char *const *argv, char *const *env, char *err) {
    int argc = 0;
    while (argv[argc]) argc++;
    pm_svc_config_default(c);
    FILE *out = fopen("/dev/null", "w");
    int rc = pm_svc_config_load(c, argc, argv, env, out, err, 256);
    fclose(out);
    return rc;
}

Test(config, defaults_match_the_contract_and_the_api_limits) {
    pm_svc_config c;
    pm_svc_config_default(&c);
    pm_api_limits l;
    pm_api_limits_default(&l);
    cr_assert_eq(c.limits.max_arms, l.max_arms);
    cr_assert_eq(c.limits.max_points, l.max_points);
    cr_assert_eq(c.limits.max_rooms, l.max_rooms);
    cr_assert_eq(c.limits.max_grid_size, l.max_grid_size);
    cr_assert_eq(c.limits.max_vertices, l.max_vertices);
    cr_assert_eq(c.limits.max_arena_bytes, l.max_arena_bytes);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert_eq(c.port, 8080);
    cr_assert_eq(c.workers, (uint32_t)cores);
    cr_assert_eq(c.threads, (uint32_t)cores);
    cr_assert_eq(c.cache_bytes, (size_t)256 << 20);
    cr_assert_eq(c.body_limit, (size_t)1 << 20);
    /* 512 x 512 float32 heights (1 MiB) beside a request part, and the
     * largest heightfield max_vertices allows (4M x 4 bytes): with room. */
    cr_assert_eq(c.binary_body_limit, (size_t)17 << 20);
    cr_assert_geq(c.binary_body_limit, c.limits.max_vertices * 4 + c.body_limit);
    cr_assert_eq(c.queue, 64);
    cr_assert_str_eq(c.cors_origin, "*");
    cr_assert_eq(c.log_level, PM_SVC_LOG_INFO);
}

Test(config, environment_then_flags_which_win) {
    char *env[] = {"PROCMESH_PORT=9000", "PROCMESH_WORKERS=3", "PROCMESH_MAX_ARMS=5",
                   "OTHER_PORT=1", "PROCMESH_CORS_ORIGIN=", NULL};
    char *argv[] = {"procmesh", "--port", "9100", "--max-rooms=7", NULL};
    pm_svc_config c;
    char err[256];
    cr_assert_eq(load(&c, argv, env, err), 0, "%s", err);
    cr_assert_eq(c.port, 9100);
    cr_assert_eq(c.workers, 3);
    cr_assert_eq(c.limits.max_arms, 5);
    cr_assert_eq(c.limits.max_rooms, 7);
    cr_assert_str_eq(c.cors_origin, "");
}

Test(config, sizes_units_auto_and_levels) {
    char *argv[] = {"procmesh", "--body-limit", "512K", "--cache-mb", "3", "--max-job-mb", "2",
                    "--workers", "auto", "--log-level", "warn", "--max-vertices", "123456789",
                    NULL};
    pm_svc_config c;
    char err[256];
    cr_assert_eq(load(&c, argv, no_env, err), 0, "%s", err);
    cr_assert_eq(c.body_limit, 512 * 1024);
    cr_assert_eq(c.cache_bytes, 3u << 20);
    cr_assert_eq(c.limits.max_arena_bytes, 2u << 20);
    cr_assert_eq(c.workers, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    cr_assert_eq(c.log_level, PM_SVC_LOG_WARN);
    cr_assert_eq(c.limits.max_vertices, 123456789u);
    char *argv2[] = {"procmesh", "--body-limit=2M", "--body-limit", "100", NULL};
    cr_assert_eq(load(&c, argv2, no_env, err), 0, "%s", err);
    cr_assert_eq(c.body_limit, 100, "the last flag wins");
}

Test(config, bad_values_are_errors_that_name_the_source) {
    struct {
        char *argv[4];
        char *env[2];
        const char *needle;
    } cases[] = {
        {{"procmesh", "--port", "70000", NULL}, {NULL}, "--port"},
        {{"procmesh", "--port", "-1", NULL}, {NULL}, "--port"},
        {{"procmesh", "--workers", "0", NULL}, {NULL}, "out of range"},
        {{"procmesh", "--workers", "two", NULL}, {NULL}, "--workers"},
        {{"procmesh", "--queue", "", NULL}, {NULL}, "--queue"},
        {{"procmesh", "--body-limit", "1T", NULL}, {NULL}, "--body-limit"},
        {{"procmesh", "--log-level", "loud", NULL}, {NULL}, "log level"},
        {{"procmesh", "--nope", "1", NULL}, {NULL}, "unknown option '--nope'"},
        {{"procmesh", "--deadline-ms", NULL}, {NULL}, "needs a value"},
        {{"procmesh", "stray", NULL}, {NULL}, "unexpected argument"},
        {{"procmesh", "--port", "18446744073709551616", NULL}, {NULL}, "--port"},
        {{"procmesh", NULL}, {"PROCMESH_DEADLINE_MS=soon", NULL}, "PROCMESH_DEADLINE_MS"},
        {{"procmesh", NULL}, {"PROCMESH_MAX_ARMS=0", NULL}, "PROCMESH_MAX_ARMS"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pm_svc_config c;
        char err[256] = "";
        cr_assert_eq(load(&c, cases[i].argv, cases[i].env, err), 2, "case %zu", i);
        cr_assert_not_null(strstr(err, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err,
                           cases[i].needle);
    }
}

Test(config, a_bad_environment_value_fails_even_when_a_flag_overrides_it) {
    /* An operator's broken variable should not hide behind a flag. */
    char *env[] = {"PROCMESH_PORT=x", NULL};
    char *argv[] = {"procmesh", "--port", "1", NULL};
    pm_svc_config c;
    char err[256];
    cr_assert_eq(load(&c, argv, env, err), 2);
}

Test(config, help_lists_every_flag_with_default_and_variable) {
    char path[] = "/tmp/pm-help-XXXXXX";
    int fd = mkstemp(path);
    FILE *out = fdopen(fd, "w+");
    pm_svc_config c;
    pm_svc_config_default(&c);
    char err[256];
    char *argv[] = {"procmesh", "--help", NULL};
    cr_assert_eq(pm_svc_config_load(&c, 2, argv, no_env, out, err, sizeof err), 1);
    fflush(out);
    rewind(out);
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, out);
    text[n] = '\0';
    fclose(out);
    unlink(path);
    const char *expect[][3] = {
        {"--port", "PROCMESH_PORT", "8080"},
        {"--threads", "PROCMESH_THREADS", "auto"},
        {"--workers", "PROCMESH_WORKERS", "auto"},
        {"--queue", "PROCMESH_QUEUE", "64"},
        {"--cache-mb", "PROCMESH_CACHE_MB", "256"},
        {"--body-limit", "PROCMESH_BODY_LIMIT", "1M"},
        {"--binary-body-limit", "PROCMESH_BINARY_BODY_LIMIT", "17M"},
        {"--deadline-ms", "PROCMESH_DEADLINE_MS", "10000"},
        {"--drain-ms", "PROCMESH_DRAIN_MS", "10000"},
        {"--max-connections", "PROCMESH_MAX_CONNECTIONS", "4096"},
        {"--cors-origin", "PROCMESH_CORS_ORIGIN", "*"},
        {"--log-level", "PROCMESH_LOG_LEVEL", "info"},
        {"--max-arms", "PROCMESH_MAX_ARMS", "16"},
        {"--max-points", "PROCMESH_MAX_POINTS", "10000"},
        {"--max-rooms", "PROCMESH_MAX_ROOMS", "500"},
        {"--max-grid-size", "PROCMESH_MAX_GRID_SIZE", "64"},
        {"--max-vertices", "PROCMESH_MAX_VERTICES", "4000000"},
        {"--max-job-mb", "PROCMESH_MAX_JOB_MB", "256"},
        {"--max-inflight-mb", "PROCMESH_MAX_INFLIGHT_MB", "512"},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        const char *line = strstr(text, expect[i][0]);
        cr_assert_not_null(line, "no %s in --help", expect[i][0]);
        const char *eol = strchr(line, '\n');
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)(eol - line), line);
        cr_assert_not_null(strstr(buf, expect[i][1]), "%s: %s", expect[i][0], buf);
        char def[64];
        snprintf(def, sizeof def, "default %s", expect[i][2]);
        cr_assert_not_null(strstr(buf, def), "%s: %s", expect[i][0], buf);
    }
}
