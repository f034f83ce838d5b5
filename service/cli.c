#include <stdio.h>

#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "pm_api/encode.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"

enum { CLI_OK = 0, CLI_USAGE = 2, CLI_REFUSED = 3, CLI_FAILED = 4, CLI_WRITE = 5 };
#define CLI_MAX_PAIRS 64

void pm_svc_cli_usage(FILE *out) {
    fprintf(out,
            "usage: procmesh generate ROUTE [--format glb|gltf|json] [-o FILE] [--compress meshopt]\n"
            "                         [--quantize true] [--metadata full|summary|none]\n"
            "                         [--flag value]... [NAME=VALUE]... [< request.json]\n"
            "Runs one request with no server: the same validation, cache key, generator and\n"
            "encoder as POST (or GET) ROUTE, the same bytes.\n"
            "  ROUTE       junctions, roads, networks, dungeons, grids (or /v1/junctions, ...)\n"
            "  NAME=VALUE  query parameters of a GET route (e.g. seed=42 size=10); without\n"
            "              them the request body is read from standard input\n"
            "  --format    glb, gltf or json; default: from -o's extension, else json\n"
            "  -o FILE     write there instead of standard output\n"
            "  --compress, --quantize, --metadata   as the ?compress=, ?quantize=, ?metadata= options\n"
            "  --flag      any server flag that sets a limit (--max-points, --max-vertices, ...)\n"
            "Exit: 0 written; 2 bad command line; 3 request refused (problem+json on stderr);\n"
            "4 generation failed; 5 output not written.\n");
}

static const pm_api_generator *cli_route(const char *name) {
    char path[64];
    if (name[0] == '/') snprintf(path, sizeof path, "%s", name);
    else snprintf(path, sizeof path, "/v1/%s", name);
    return pm_api_find_generator(path);
}

static int cli_format_from_name(const char *file, const char **fmt) {
    const char *dot = file ? strrchr(file, '.') : NULL;
    if (!dot) return 0;
    if (strcmp(dot, ".glb") == 0) *fmt = "glb";
    else if (strcmp(dot, ".gltf") == 0) *fmt = "gltf";
    else if (strcmp(dot, ".json") == 0) *fmt = "json";
    return 0;
}

static char *cli_read_all(FILE *in, size_t limit, size_t *len, int *too_big) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    *too_big = 0;
    while (buf) {
        if (n == cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) break;
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        if (n > limit) {
            *too_big = 1;
            break;
        }
        if (got == 0) {
            *len = n;
            return buf;
        }
    }
    free(buf);
    return NULL;
}

/* The problem as the HTTP route would send it, on stderr. */
static int cli_problem(const pm_api_problem *p, int code) {
    json_t *j = pm_api_problem_json(p, NULL);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    fprintf(stderr, "%s\n", text ? text : p->detail);
    free(text);
    json_decref(j);
    return code;
}

static int cli_write(const char *file, const pm_api_buf *out) {
    FILE *f = file ? fopen(file, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "procmesh: cannot write %s: %s\n", file, strerror(errno));
        return CLI_WRITE;
    }
    int ok = fwrite(out->data, 1, out->len, f) == out->len;
    if (file ? fclose(f) != 0 : fflush(f) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "procmesh: writing %s failed\n", file ? file : "standard output");
        return CLI_WRITE;
    }
    return CLI_OK;
}

/* Reads the request document: query pairs, or the body on stdin. */
static json_t *cli_document(const pm_api_generator *gen, const pm_svc_config *cfg,
                            const pm_api_query_pair *q, size_t nq, pm_api_problem *prob) {
    if (nq) {
        if (!gen->from_query) {
            pm_api_problem_set(prob, 405, "method-not-allowed", "Method Not Allowed",
                               "%s takes a JSON body on standard input, not NAME=VALUE", gen->path);
            return NULL;
        }
        return gen->from_query(q, nq, prob);
    }
    size_t len = 0;
    int too_big = 0;
    char *body = cli_read_all(stdin, cfg->body_limit, &len, &too_big);
    if (!body) {
        if (too_big)
            pm_api_problem_set(prob, 413, "payload-too-large", "Content Too Large",
                               "the request body is over the limit of %zu bytes (--body-limit)",
                               cfg->body_limit);
        else
            pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable", "out of memory");
        return NULL;
    }
    json_t *doc = NULL;
    pm_api_parse_body(body, len, &doc, prob);
    free(body);
    return doc;
}

/* The encoder's buffers from malloc, as the server's (counted) ones are:
 * one run of the command is one request. */
static void *cli_realloc(void *ctx, void *p, size_t old_size, size_t new_size) {
    (void)ctx, (void)old_size;
    return realloc(p, new_size ? new_size : 1);
}

static void cli_free(void *ctx, void *p, size_t size) {
    (void)ctx, (void)size;
    free(p);
}

static const pm_api_alloc cli_alloc = {cli_realloc, cli_free, NULL};

/* parse -> key -> generate -> encode: the HTTP route's own steps. */
static int cli_run(const pm_api_generator *gen, const pm_svc_config *cfg, json_t *doc,
                   const pm_api_output *o, pm_api_buf *out, pm_api_problem *prob) {
    pm_arena *arena = pm_arena_create(0);
    json_t *canonical = NULL;
    void *params = NULL;
    pm_scene *scene = NULL;
    int code = CLI_FAILED;
    if (!arena) {
        pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable", "out of memory");
        goto done;
    }
    pm_arena_set_limit(arena, cfg->limits.max_arena_bytes);
    if (gen->parse(doc, &cfg->limits, arena, &params, &canonical, prob) != 0 || !canonical) {
        code = CLI_REFUSED;
        goto done;
    }
    pm_api_key key = pm_api_cache_key_output(gen, canonical, o);
    char key_hex[33];
    pm_api_key_hex(key, key_hex);
    static const volatile int never = 0;
    if (gen->generate(params, &cfg->limits, arena, &never, &scene, prob) != 0 || !scene) {
        if (prob->status == 422) code = CLI_REFUSED;
        goto done;
    }
    int rc = pm_api_encode_with(scene, gen, key_hex, o, &cli_alloc, out);
    if (rc != 0) {
        pm_api_problem_set(prob, rc == -1 ? 503 : 500, rc == -1 ? "overloaded" : "internal",
                           rc == -1 ? "Service Unavailable" : "Internal Server Error",
                           rc == -1 ? "out of memory while encoding" : "the scene broke its contract");
        goto done;
    }
    code = CLI_OK;
done:
    if (code != CLI_OK && !pm_api_problem_failed(prob))
        pm_api_problem_set(prob, 500, "internal", "Internal Server Error",
                           "the %s generator failed without saying why", gen->name);
    json_decref(canonical);
    pm_arena_destroy(arena);
    return code;
}

int pm_svc_cli_generate(int argc, char **argv) {
    const char *route = NULL, *file = NULL, *fmt_name = NULL;
    const char *compress = NULL, *quantize = NULL, *metadata = NULL;
    pm_api_query_pair q[CLI_MAX_PAIRS];
    size_t nq = 0;
    char **flags = calloc((size_t)argc + 1, sizeof *flags);
    int nflags = 0;
    if (!flags) return CLI_FAILED;
    flags[nflags++] = "procmesh";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            pm_svc_cli_usage(stdout);
            free(flags);
            return CLI_OK;
        }
        const char **option = strcmp(a, "--compress") == 0   ? &compress
                              : strcmp(a, "--quantize") == 0 ? &quantize
                              : strcmp(a, "--metadata") == 0 ? &metadata
                                                             : NULL;
        int takes = option || strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 ||
                    strcmp(a, "--format") == 0;
        if (takes && i + 1 >= argc) {
            fprintf(stderr, "procmesh generate: %s needs a value\n", a);
            free(flags);
            return CLI_USAGE;
        }
        if (option) *option = argv[++i];
        else if (strcmp(a, "--format") == 0) fmt_name = argv[++i];
        else if (strncmp(a, "--format=", 9) == 0) fmt_name = a + 9;
        else if (takes) file = argv[++i];
        else if (strncmp(a, "--output=", 9) == 0) file = a + 9;
        else if (strncmp(a, "--", 2) == 0) {
            flags[nflags++] = argv[i];   /* a server flag: its value may follow */
            if (!strchr(a, '=') && i + 1 < argc) flags[nflags++] = argv[++i];
        } else if (!route) route = a;
        else if (strchr(a, '=') && nq < CLI_MAX_PAIRS) {
            char *eq = strchr(argv[i], '=');
            *eq = '\0';
            q[nq++] = (pm_api_query_pair){argv[i], eq + 1};
        } else {
            fprintf(stderr, "procmesh generate: unexpected argument '%s' (see --help)\n", a);
            free(flags);
            return CLI_USAGE;
        }
    }
    const pm_api_generator *gen = route ? cli_route(route) : NULL;
    if (!gen) {
        fprintf(stderr, "procmesh generate: %s (see --help)\n",
                route ? "no such route" : "which route? e.g. procmesh generate grids seed=1 size=10");
        free(flags);
        return CLI_USAGE;
    }
    pm_svc_config cfg;
    char err[512];
    pm_svc_config_default(&cfg);
    int rc = pm_svc_config_load(&cfg, nflags, flags, NULL, stderr, err, sizeof err);
    free(flags);
    if (rc != 0) {
        if (rc != 1) fprintf(stderr, "procmesh generate: %s\n", err);
        return rc == 1 ? CLI_OK : CLI_USAGE;
    }
    if (!fmt_name) cli_format_from_name(file, &fmt_name);
    pm_api_format fmt;
    if (pm_api_negotiate(fmt_name, NULL, &fmt) != 0) {
        fprintf(stderr, "procmesh generate: --format must be glb, gltf or json\n");
        return CLI_USAGE;
    }
    if (!file && fmt == PM_API_FMT_GLB && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "procmesh generate: a GLB is binary; give -o FILE or redirect the output\n");
        return CLI_USAGE;
    }
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    pm_api_output out_opts = pm_api_output_default(fmt);
    if (pm_api_output_parse(compress, quantize, metadata, &out_opts, &prob) != 0) {
        int code = cli_problem(&prob, CLI_USAGE);
        pm_api_problem_free(&prob);
        return code;
    }
    json_t *doc = cli_document(gen, &cfg, q, nq, &prob);
    int code;
    if (!doc) {
        if (!pm_api_problem_failed(&prob))
            pm_api_problem_set(&prob, 400, "malformed-json", "Malformed request",
                               "the request could not be read");
        code = cli_problem(&prob, prob.status == 503   ? CLI_FAILED
                                  : prob.status == 405 ? CLI_USAGE
                                                       : CLI_REFUSED);
    } else {
        pm_api_buf out = {0};
        code = cli_run(gen, &cfg, doc, &out_opts, &out, &prob);
        code = code == CLI_OK ? cli_write(file, &out) : cli_problem(&prob, code);
        free(out.data);
        json_decref(doc);
    }
    pm_api_problem_free(&prob);
    return code;
}
