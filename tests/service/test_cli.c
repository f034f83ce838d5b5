/* `procmesh generate`: the offline CLI gives the same bytes as the HTTP
 * route for the same request, and its exit codes and problem+json. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pm_test_server.h"
#include "procs.h"
#include "svc_fixtures.h"

typedef struct cli_result {
    int code;
    unsigned char *out;
    size_t out_len;
    char *err;
} cli_result;

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return b;
}

/* Runs PM_BINARY generate args… with stdin_text on standard input. */
static cli_result cli(const char *stdin_text, const char *const *args) {
    char *dir = pm_tp_tmpdir("cli");
    char in[512], out[512], err[512];
    snprintf(in, sizeof in, "%s/in", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    FILE *f = fopen(in, "wb");
    fputs(stdin_text ? stdin_text : "", f);
    fclose(f);
    char *argv[32] = {PM_BINARY, "generate"};
    int n = 2;
    for (; args[n - 2]; n++) argv[n] = (char *)args[n - 2];
    argv[n] = NULL;
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600),
            fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(PM_BINARY, argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cli_result r = {.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128};
    r.out = slurp(out, &r.out_len);
    r.err = (char *)slurp(err, NULL);
    pm_tp_rmrf(dir);
    free(dir);
    return r;
}

static void cli_free(cli_result *r) {
    free(r->out);
    free(r->err);
}

static pm_test_server srv;
static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { pm_test_server_stop(&srv); }

static const struct { const char *route, *body; } examples[] = {
    {"/v1/junctions", "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": [0, 1], \"width\": 7},"
                      " {\"direction\": [-1, 0], \"width\": 7}], \"sidewalk\": {\"width\": 2}}"},
    {"/v1/roads", "{\"points\": [[0,0,0], [60,0,25], [120,0,-15]], \"width\": 8, \"lods\": [0.5]}"},
    {"/v1/networks", "{\"nodes\": [{\"id\": \"c\", \"position\": [0, 0]}, {\"id\": \"e\", \"position\": [60, 0]},"
                     " {\"id\": \"w\", \"position\": [-60, 0]}, {\"id\": \"s\", \"position\": [0, 0.5, 50]}],"
                     " \"edges\": [{\"from\": \"c\", \"to\": \"e\"}, {\"from\": \"w\", \"to\": \"c\"},"
                     " {\"from\": \"c\", \"to\": \"s\", \"width\": 6, \"points\": [[8, 25]]}], \"sidewalk\": {\"width\": 2}}"},
    {"/v1/dungeons", "{\"seed\": 42, \"generate\": {\"count\": 12, \"extent\": [64, 64], \"floors\": 2}}"},
    {"/v1/grids", "{\"seed\": 3, \"size\": 6}"},
};

Test(cli, same_bytes_as_the_http_route_in_every_format, .init = start, .fini = stop) {
    const char *formats[] = {"json", "gltf", "glb"};
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        for (int f = 0; f < 3; f++) {
            char path[64];
            snprintf(path, sizeof path, "%s?format=%s", examples[i].route, formats[f]);
            pm_http_response h = svc_post(&srv, path, examples[i].body, NULL);
            cr_assert_eq(h.status, 200, "%s: %s", path, h.body);
            const char *args[] = {examples[i].route, "--format", formats[f], NULL};
            cli_result c = cli(examples[i].body, args);
            cr_assert_eq(c.code, 0, "%s: exit %d: %s", path, c.code, c.err);
            cr_assert_eq(c.out_len, h.body_len, "%s: %zu bytes offline, %zu over HTTP", path,
                         c.out_len, h.body_len);
            cr_assert(memcmp(c.out, h.body, h.body_len) == 0, "%s: the bytes differ", path);
            cli_free(&c);
            pm_http_response_free(&h);
        }
    }
}

Test(cli, output_options_give_the_http_bytes, .init = start, .fini = stop) {
    const char *q = "?format=glb&compress=meshopt&quantize=true&metadata=summary";
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s%s", examples[i].route, q);
        pm_http_response h = svc_post(&srv, path, examples[i].body, NULL);
        cr_assert_eq(h.status, 200, "%s: %s", path, h.body);
        const char *args[] = {examples[i].route, "--format", "glb", "--compress", "meshopt",
                              "--quantize", "true", "--metadata", "summary", NULL};
        cli_result c = cli(examples[i].body, args);
        cr_assert_eq(c.code, 0, "%s: %s", path, c.err);
        cr_assert_eq(c.out_len, h.body_len, "%s", path);
        cr_assert(memcmp(c.out, h.body, h.body_len) == 0, "%s: the bytes differ", path);
        cli_free(&c);
        pm_http_response_free(&h);
    }
    const char *bad[] = {"grids", "--metadata", "most", NULL};
    cli_result c = cli("{\"seed\": 1, \"size\": 4}", bad);
    cr_assert_eq(c.code, 2, "%s", c.err);
    cr_assert(strstr(c.err, "/metadata"), "%s", c.err);
    cli_free(&c);
}

Test(cli, get_routes_take_query_arguments, .init = start, .fini = stop) {
    pm_http_response h;
    pm_http_get(&srv, "/v1/grids?seed=9&size=5&format=glb", &h);
    cr_assert_eq(h.status, 200);
    char *dir = pm_tp_tmpdir("cli-o");
    char file[512];
    snprintf(file, sizeof file, "%s/grid.glb", dir);   /* the format from the extension */
    const char *args[] = {"grids", "seed=9", "size=5", "-o", file, NULL};
    cli_result c = cli(NULL, args);
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_eq(c.out_len, 0, "nothing on stdout with -o");
    size_t len;
    unsigned char *glb = slurp(file, &len);
    cr_assert_eq(len, h.body_len);
    cr_assert(memcmp(glb, h.body, len) == 0);
    free(glb);
    cli_free(&c);
    pm_tp_rmrf(dir);
    free(dir);
    pm_http_response_free(&h);
}

static json_t *problem_of(const cli_result *c) {
    json_error_t e;
    json_t *j = json_loads(c->err, 0, &e);
    cr_assert_not_null(j, "stderr is not problem+json: %s", c->err);
    return j;
}

Test(cli, a_bad_request_exits_3_with_problem_json_naming_the_field) {
    const char *args[] = {"/v1/junctions", NULL};
    cli_result c = cli("{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": [0, 1], \"width\": -1},"
                       " {\"direction\": [-1, 0], \"width\": 7}]}", args);
    cr_assert_eq(c.code, 3);
    cr_assert_eq(c.out_len, 0);
    json_t *j = problem_of(&c);
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), 422);
    const char *ptr = json_string_value(json_object_get(json_array_get(json_object_get(j, "errors"), 0), "pointer"));
    cr_assert_str_eq(ptr, "/arms/1/width");
    json_decref(j);
    cli_free(&c);

    c = cli("{\"seed\": 1,\n \"size\": }", (const char *const[]){"grids", NULL});
    cr_assert_eq(c.code, 3);
    j = problem_of(&c);
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), 400);
    cr_assert(strstr(json_string_value(json_object_get(j, "detail")), "line 2"), "%s", c.err);
    json_decref(j);
    cli_free(&c);
}

Test(cli, limits_are_the_server_flags) {
    const char *args[] = {"grids", "--max-grid-size", "4", NULL};
    cli_result c = cli("{\"seed\": 1, \"size\": 6}", args);
    cr_assert_eq(c.code, 3);
    cr_assert(strstr(c.err, "max_grid_size") || strstr(c.err, "max-grid-size"), "%s", c.err);
    cli_free(&c);
    const char *ok[] = {"grids", "--max-grid-size=8", NULL};
    c = cli("{\"seed\": 1, \"size\": 6}", ok);
    cr_assert_eq(c.code, 0, "%s", c.err);
    cli_free(&c);
}

Test(cli, command_line_mistakes_exit_2) {
    const char *const cases[][4] = {
        {"nowhere", NULL},                     /* no such route */
        {"junctions", "seed=1", NULL},         /* a POST-only route with query arguments */
        {"grids", "--format", "obj", NULL},    /* no such format */
        {"grids", "--no-such-flag", "1", NULL},
        {"grids", "-o", NULL},
        {NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result c = cli("{\"seed\": 1, \"size\": 4}", cases[i]);
        cr_assert_eq(c.code, 2, "case %zu: exit %d: %s", i, c.code, c.err);
        cr_assert_eq(c.out_len, 0);
        cli_free(&c);
    }
    cli_result h = cli(NULL, (const char *const[]){"--help", NULL});
    cr_assert_eq(h.code, 0);
    cr_assert(strstr((char *)h.out, "usage: procmesh generate"));
    cli_free(&h);
}
