/* `procmesh generate`: the offline CLI gives the same bytes as the HTTP
 * route for the same request, and its exit codes and problem+json. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pm_test_multipart.h"
#include "pm_test_server.h"
#include "procs.h"
#include "scene/rng.h"
#include "svc_fixtures.h"
#include "svc_random.h"

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

/* Runs PM_BINARY generate args… with in_len bytes of in on standard input;
 * fsize > 0: files it writes stop at fsize bytes (RLIMIT_FSIZE, SIGXFSZ
 * ignored, so a write past it fails with EFBIG). */
static cli_result cli_limited(const void *in_data, size_t in_len, const char *const *args,
                              rlim_t fsize) {
    char *dir = pm_tp_tmpdir("cli");
    char in[512], out[512], err[512];
    snprintf(in, sizeof in, "%s/in", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    FILE *f = fopen(in, "wb");
    if (in_len) fwrite(in_data, 1, in_len, f);
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
        if (fsize) {
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &(struct rlimit){fsize, fsize});
        }
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

static cli_result cli_bytes(const void *in_data, size_t in_len, const char *const *args) {
    return cli_limited(in_data, in_len, args, 0);
}

/* ... with the text stdin_text on standard input. */
static cli_result cli(const char *stdin_text, const char *const *args) {
    return cli_bytes(stdin_text, stdin_text ? strlen(stdin_text) : 0, args);
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

/* Posts len bytes of type ctype to path; the answer must be a 200. */
static pm_http_response post_typed(const char *path, const char *ctype, const void *data,
                                   size_t len) {
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
    const char *h[] = {ct, NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = h, .body = data,
                           .body_len = len};
    pm_http_response r;
    cr_assert_eq(pm_http(&srv, &req, &r), 0, "no response from %s", path);
    cr_assert_eq(r.status, 200, "%s: %s", path, r.body);
    return r;
}

static void expect_same(const cli_result *c, const pm_http_response *h, const char *what) {
    cr_assert_eq(c->code, 0, "%s: exit %d: %s", what, c->code, c->err);
    cr_assert_eq(c->out_len, h->body_len, "%s: %zu bytes offline, %zu over HTTP", what,
                 c->out_len, h->body_len);
    cr_assert(memcmp(c->out, h->body, h->body_len) == 0, "%s: the bytes differ", what);
}

/* A GeoJSON network, as application/geo+json over HTTP and on standard
 * input (with and without --content-type): the same bytes. */
Test(cli, geojson_networks_give_the_http_bytes, .init = start, .fini = stop) {
    const char *gj =
        "{\"type\": \"FeatureCollection\", \"features\": ["
        "{\"type\": \"Feature\", \"properties\": {\"width\": 8}, \"geometry\": {\"type\": "
        "\"LineString\", \"coordinates\": [[10, 50], [10.0006, 50], [10.0012, 50]]}},"
        "{\"type\": \"Feature\", \"properties\": {}, \"geometry\": {\"type\": \"LineString\","
        " \"coordinates\": [[10.0006, 50], [10.0006, 50.0006]]}}]}";
    pm_http_response h = post_typed("/v1/networks?format=glb", "application/geo+json", gj,
                                    strlen(gj));
    cli_result a = cli(gj, (const char *const[]){"networks", "--format", "glb", NULL});
    expect_same(&a, &h, "geojson");
    cli_result b = cli(gj, (const char *const[]){"networks", "--format", "glb", "--content-type",
                                                 "application/geo+json", NULL});
    expect_same(&b, &h, "geojson with --content-type");
    cli_free(&a);
    cli_free(&b);
    pm_http_response_free(&h);
}

#define CLI_COLS 24
#define CLI_ROWS 20
#define CLI_ROAD "{\"points\": [[2,0,2],[30,0,15],[44,0,18]], \"terrain\": {\"cell\": 2, " \
                 "\"cols\": 24, \"rows\": 20}}"

/* Binary heights: a multipart body saved as it was posted
 * (--content-type), and the JSON document with the float32 file
 * (--part): the bytes of the multipart route. */
Test(cli, binary_heights_give_the_http_bytes, .init = start, .fini = stop) {
    static float hts[CLI_COLS * CLI_ROWS];
    static char body[CLI_COLS * CLI_ROWS * 4 + 1024];
    for (int i = 0; i < CLI_COLS * CLI_ROWS; i++) hts[i] = (float)((i * 37) % 300) / 32.0f - 4.0f;
    size_t blen = pm_test_multipart(body, sizeof body, CLI_ROAD, hts, CLI_COLS * CLI_ROWS,
                                    "/terrain/heights");
    pm_http_response h = post_typed("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, body, blen);
    cli_result a = cli_bytes(body, blen, (const char *const[]){"roads", "--format", "glb",
                                                               "--content-type",
                                                               PM_TEST_MULTIPART_TYPE, NULL});
    expect_same(&a, &h, "multipart on standard input");
    char *dir = pm_tp_tmpdir("cli-part");
    char file[512], part[600];
    snprintf(file, sizeof file, "%s/h.f32", dir);
    FILE *f = fopen(file, "wb");
    fwrite(hts, sizeof *hts, CLI_COLS * CLI_ROWS, f);
    fclose(f);
    snprintf(part, sizeof part, "/terrain/heights=%s", file);
    cli_result b = cli(CLI_ROAD, (const char *const[]){"roads", "--format", "glb", "--part", part,
                                                       NULL});
    expect_same(&b, &h, "--part");
    /* one height short: the route's 422 at the part's pointer, exit 3 */
    f = fopen(file, "wb");
    fwrite(hts, sizeof *hts, CLI_COLS * CLI_ROWS - 1, f);
    fclose(f);
    cli_result c = cli(CLI_ROAD, (const char *const[]){"roads", "--part", part, NULL});
    cr_assert_eq(c.code, 3, "%s", c.err);
    json_t *j = problem_of(&c);
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), 422);
    cr_assert(strstr(c.err, "/terrain/heights"), "%s", c.err);
    json_decref(j);
    /* a file that is not there, a media type the route does not take: exit 2 */
    snprintf(part, sizeof part, "/terrain/heights=%s/none.f32", dir);
    cli_result d = cli(CLI_ROAD, (const char *const[]){"roads", "--part", part, NULL});
    cr_assert_eq(d.code, 2, "%s", d.err);
    cli_result e = cli(CLI_ROAD, (const char *const[]){"roads", "--content-type", "text/plain", NULL});
    cr_assert_eq(e.code, 2, "%s", e.err);
    cli_result g = cli(NULL, (const char *const[]){"grids", "seed=1", "--part", part, NULL});
    cr_assert_eq(g.code, 2, "%s", g.err);
    cli_free(&a);
    cli_free(&b);
    cli_free(&c);
    cli_free(&d);
    cli_free(&e);
    cli_free(&g);
    pm_tp_rmrf(dir);
    free(dir);
    pm_http_response_free(&h);
}

/* The output goes to -o as it is encoded (a GLB never assembled in
 * memory): the file appears only for an answer, whole. */
Test(cli, the_output_file_appears_only_for_an_answer) {
    char *dir = pm_tp_tmpdir("cli-out");
    char file[512];
    snprintf(file, sizeof file, "%s/town.glb", dir);
    const char *args[] = {"grids", "-o", file, NULL};
    cli_result c = cli("{\"seed\": 1, \"size\": -3}", args);
    cr_assert_eq(c.code, 3, "%s", c.err);
    cr_assert_eq(access(file, F_OK), -1, "a refused request leaves no file");
    cli_free(&c);
    c = cli("{\"seed\": 1, \"size\": 6}", args);
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_eq(c.out_len, 0, "nothing on standard output");
    size_t n;
    unsigned char *b = slurp(file, &n);
    cr_assert_gt(n, 20u);
    cr_assert(memcmp(b, "glTF", 4) == 0);
    uint32_t total = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    cr_assert_eq(total, n, "the header's length is the file's");
    free(b);
    cli_free(&c);
    pm_tp_rmrf(dir);
    free(dir);
}

Test(cli, an_output_that_cannot_be_written_exits_5) {
    const char *full[] = {"grids", "--format", "glb", "-o", "/dev/full", NULL};
    cli_result c = cli("{\"seed\": 1, \"size\": 6}", full);
    cr_assert_eq(c.code, 5, "exit %d: %s", c.code, c.err);
    cr_assert(strstr(c.err, "/dev/full"), "%s", c.err);
    cli_free(&c);
    const char *nodir[] = {"grids", "-o", "/nonexistent-dir/x.glb", NULL};
    c = cli("{\"seed\": 1, \"size\": 6}", nodir);
    cr_assert_eq(c.code, 5, "exit %d: %s", c.code, c.err);
    cr_assert(strstr(c.err, "/nonexistent-dir/x.glb"), "%s", c.err);
    cli_free(&c);
}

/* The dynamic loader's log of the files a run of `procmesh generate args`
 * on body opens (LD_DEBUG=files), after checking that it answered. */
static char *loader_log(const char *body, const char *const *args) {
    char *dir = pm_tp_tmpdir("cli-ld");
    char log[512];
    snprintf(log, sizeof log, "%s/ld", dir);
    setenv("LD_DEBUG", "files", 1);
    setenv("LD_DEBUG_OUTPUT", log, 1);
    cli_result c = cli(body, args);
    unsetenv("LD_DEBUG");
    unsetenv("LD_DEBUG_OUTPUT");
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_gt(c.out_len, 20u);
    cli_free(&c);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int logs = 0;
    char *text = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "ld.", 3) != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        free(text);
        text = (char *)slurp(path, NULL);
        logs++;
    }
    closedir(d);
    cr_assert_eq(logs, 1, "one loader log (the run's), not %d", logs);
    cr_assert(strstr(text, "libc.so"), "the loader's log lists the libraries it loads");
    pm_tp_rmrf(dir);
    free(dir);
    return text;
}

/* A run of `procmesh generate` never loads the HTTP stack: libmicrohttpd
 * (with gnutls and its chain) is opened by the server only (service/mhd.h),
 * so the loader's own log of the files it opens names none of them, while
 * the run still answers. Nor, unless the run compresses, meshoptimizer and
 * the libstdc++ it brings (service/meshopt.h), opened on first use. The
 * server's side is every test of tests/service. */
Test(cli, a_run_loads_no_http_library_and_meshoptimizer_only_when_used) {
    char *text = loader_log("{\"seed\": 1, \"size\": 6}", (const char *const[]){"grids", "--format", "glb", NULL});
    cr_assert_null(strstr(text, "libmicrohttpd"), "the run loads libmicrohttpd");
    cr_assert_null(strstr(text, "libgnutls"), "the run loads gnutls");
    cr_assert_null(strstr(text, "libmeshoptimizer"), "a run without compression loads meshoptimizer");
    cr_assert_null(strstr(text, "libstdc++"), "a run without compression loads libstdc++");
    free(text);
    text = loader_log("{\"seed\": 1, \"size\": 6}",
                      (const char *const[]){"grids", "--format", "glb", "--compress", "meshopt", NULL});
    cr_assert(strstr(text, "libmeshoptimizer"), "a compressed run opens meshoptimizer");
    cr_assert_null(strstr(text, "libmicrohttpd"), "the run loads libmicrohttpd");
    free(text);
}

/* A grid town of n x n nodes 100 m apart as a network request, with 2 m
 * sidewalks or not. */
static void town_body(char *town, size_t cap, int n, int sidewalk) {
    size_t at = (size_t)snprintf(town, cap, "{\"nodes\": [");
    for (int i = 0; i < n * n; i++)
        at += (size_t)snprintf(town + at, cap - at, "%s{\"id\": \"n%d\", \"position\": [%d, %d]}",
                               i ? ", " : "", i, 100 * (i % n), 100 * (i / n));
    at += (size_t)snprintf(town + at, cap - at, "], \"edges\": [");
    for (int i = 0, e = 0; i < n * n; i++) {
        if (i % n < n - 1)
            at += (size_t)snprintf(town + at, cap - at, "%s{\"from\": \"n%d\", \"to\": \"n%d\"}",
                                   e++ ? ", " : "", i, i + 1);
        if (i / n < n - 1)
            at += (size_t)snprintf(town + at, cap - at, "%s{\"from\": \"n%d\", \"to\": \"n%d\"}",
                                   e++ ? ", " : "", i, i + n);
    }
    cr_assert_lt(at + 40, cap);
    snprintf(town + at, cap - at, "]%s}", sidewalk ? ", \"sidewalk\": {\"width\": 2}" : "");
}

/* The output goes out as it is encoded, in pieces (a GLB's header and
 * JSON chunk gathered, the scene's arrays written straight): a town's
 * GLB of megabytes is the route's bytes, to a file and to standard
 * output alike. */
Test(cli, a_large_glb_to_a_file_or_standard_output_is_the_routes_bytes, .init = start,
     .fini = stop) {
    static char town[65536];
    town_body(town, sizeof town, 12, 1);
    pm_http_response h = svc_post(&srv, "/v1/networks?format=glb", town, NULL);
    cr_assert_eq(h.status, 200, "%s", h.body);
    cr_assert_gt(h.body_len, (size_t)2 << 20, "a GLB of megabytes, not %zu bytes", h.body_len);
    cli_result c = cli(town, (const char *const[]){"networks", "--format", "glb", NULL});
    expect_same(&c, &h, "standard output");
    cli_free(&c);
    char *dir = pm_tp_tmpdir("cli-big");
    char file[512];
    snprintf(file, sizeof file, "%s/town.glb", dir);
    FILE *old = fopen(file, "wb");   /* an older, longer file is replaced whole */
    for (size_t i = 0; i < h.body_len + 4096; i += 4096) fwrite(town, 1, 4096, old);
    fclose(old);
    /* Written over in place: an older file longer than the answer, then
     * one shorter, then the answer itself again. */
    for (int k = 0; k < 3; k++) {
        if (k == 1) {
            old = fopen(file, "wb");
            fputs("glTF, shorter", old);
            fclose(old);
        }
        c = cli(town, (const char *const[]){"networks", "-o", file, NULL});
        cr_assert_eq(c.code, 0, "%s", c.err);
        cr_assert_eq(c.out_len, 0);
        cli_free(&c);
        size_t n;
        unsigned char *b = slurp(file, &n);
        cr_assert_eq(n, h.body_len, "%zu bytes in the file, %zu over HTTP (%d)", n, h.body_len, k);
        cr_assert(memcmp(b, h.body, n) == 0, "the file's bytes differ (%d)", k);
        free(b);
    }
    pm_tp_rmrf(dir);
    free(dir);
    pm_http_response_free(&h);
}

/* A write that fails mid-way (the file size limit reached after the
 * first megabyte): exit 5 naming the file, and no half-written file under
 * the name, whether it was new or replaced an older one. A refused
 * request still leaves an existing file as it was (nothing is opened). */
Test(cli, a_write_failing_midway_exits_5_and_leaves_no_file) {
    static char town[65536];
    town_body(town, sizeof town, 12, 1);
    char *dir = pm_tp_tmpdir("cli-midway");
    char file[512];
    snprintf(file, sizeof file, "%s/town.glb", dir);
    for (int existed = 0; existed < 2; existed++) {
        if (existed) {
            FILE *old = fopen(file, "wb");
            fputs("an older answer", old);
            fclose(old);
        }
        cli_result c = cli_limited(town, strlen(town), (const char *const[]){"networks", "-o", file, NULL},
                                   1 << 20);
        cr_assert_eq(c.code, 5, "exit %d: %s", c.code, c.err);
        cr_assert(strstr(c.err, file) && strstr(c.err, "failed"), "%s", c.err);
        cr_assert_eq(access(file, F_OK), -1, "the partial file is removed (existed: %d)", existed);
        cli_free(&c);
    }
    FILE *old = fopen(file, "wb");
    fputs("an older answer", old);
    fclose(old);
    cli_result c = cli("{\"nodes\": 3}", (const char *const[]){"networks", "-o", file, NULL});
    cr_assert_eq(c.code, 3, "%s", c.err);
    size_t n;
    char *kept = (char *)slurp(file, &n);
    cr_assert_str_eq(kept, "an older answer");
    free(kept);
    cli_free(&c);
    pm_tp_rmrf(dir);
    free(dir);
}

/* A run that stops while writing, through a symbolic link (whose target
 * it leaves alone), leaves no file that reads as a GLB: a file is written
 * over in place with its first 16 bytes last, zeros until then, so the
 * target of an older, whole GLB has lost its magic, and is no old header
 * in front of new bytes. */
Test(cli, a_file_cut_short_while_written_over_has_no_glb_magic) {
    static char town[65536];
    town_body(town, sizeof town, 12, 1);
    char *dir = pm_tp_tmpdir("cli-head");
    char file[512], link[512];
    snprintf(file, sizeof file, "%s/town.glb", dir);
    snprintf(link, sizeof link, "%s/link.glb", dir);
    cli_result c = cli(town, (const char *const[]){"networks", "-o", file, NULL});
    cr_assert_eq(c.code, 0, "%s", c.err);
    cli_free(&c);
    size_t n;
    unsigned char *b = slurp(file, &n);
    cr_assert(n > (2u << 20) && memcmp(b, "glTF", 4) == 0, "a whole GLB of megabytes first");
    free(b);
    cr_assert_eq(symlink(file, link), 0);
    c = cli_limited(town, strlen(town), (const char *const[]){"networks", "-o", link, NULL}, 1 << 20);
    cr_assert_eq(c.code, 5, "exit %d: %s", c.code, c.err);
    cli_free(&c);
    b = slurp(file, &n);
    cr_assert_not_null(b, "the link's target is left in place");
    cr_assert_geq(n, (size_t)16);
    static const unsigned char zeros[16];
    cr_assert(memcmp(b, zeros, 16) == 0, "the first 16 bytes are zeros, not a header");
    free(b);
    pm_tp_rmrf(dir);
    free(dir);
}

/* The page pool (service/pages.c) changes where memory comes from, never
 * what is written: random requests of every route in every format, and
 * jobs past --max-job-mb, give the same exit code, output and problem
 * with the pool as with malloc (--no-page-pool). */
Test(cli, the_page_pool_gives_the_bytes_malloc_gives) {
    static const char *routes[] = {"junctions", "roads", "networks", "dungeons", "grids"};
    static const char *formats[] = {"json", "gltf", "glb"};
    pm_rng g;
    pm_rng_seed(&g, 2026);
    char body[16384];
    for (int r = 0; r < 5; r++) {
        int ok = 0;
        for (int k = 0; k < 8; k++) {
            random_body(&g, r, body, sizeof body);
            const char *f = formats[pm_rng_below(&g, 3)];
            const char *tight = k == 7 ? "--max-job-mb=1" : "--max-job-mb=256";
            cli_result a = cli(body, (const char *const[]){routes[r], "--format", f, tight, NULL});
            cli_result b = cli(body, (const char *const[]){routes[r], "--format", f, tight,
                                                          "--no-page-pool", NULL});
            cr_assert_eq(a.code, b.code, "%s %s: exit %d with the pool, %d without: %s", routes[r],
                         body, a.code, b.code, a.err);
            cr_assert_eq(a.out_len, b.out_len, "%s %s", routes[r], body);
            cr_assert(memcmp(a.out, b.out, a.out_len) == 0, "%s %s: the bytes differ", routes[r], body);
            cr_assert_str_eq(a.err, b.err, "%s", routes[r]);
            ok += a.code == 0;
            cli_free(&a);
            cli_free(&b);
        }
        cr_assert_geq(ok, 4, "%s: only %d of 8 random requests answered", routes[r], ok);
    }
    /* A town under caps around its need: refused (422 naming the limit) or
     * answered alike at each cap. */
    char town[65536];
    town_body(town, sizeof town, 20, 1);
    int fits = 0;
    for (int mb = 1; mb <= 64; mb *= 2) {
        char cap[32];
        snprintf(cap, sizeof cap, "--max-job-mb=%d", mb);
        cli_result a = cli(town, (const char *const[]){"networks", "--format", "glb", cap, NULL});
        cli_result b = cli(town, (const char *const[]){"networks", "--format", "glb", cap,
                                                      "--no-page-pool", NULL});
        cr_assert_eq(a.code, b.code, "%d MiB: exit %d with the pool, %d without: %s", mb, a.code,
                     b.code, a.err);
        cr_assert_str_eq(a.err, b.err);
        cr_assert_eq(a.out_len, b.out_len);
        cr_assert(memcmp(a.out, b.out, a.out_len) == 0);
        if (mb == 1) cr_assert_eq(a.code, 3, "a 20x20 town does not fit in 1 MiB: %s", a.err);
        fits += a.code == 0;
        cli_free(&a);
        cli_free(&b);
    }
    cr_assert(fits > 0 && fits < 7, "the caps tried cross the town's need (%d of 7 fit)", fits);
}
