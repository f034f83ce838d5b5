#define _GNU_SOURCE /* memmem */
#include <stdio.h>

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#ifdef __linux__
#include <linux/magic.h>
#endif
#include <unistd.h>

#include "config.h"
#include "http.h"
#include "pages.h"
#include "pm_api/encode.h"
#include "pm_api/multipart.h"
#include "pm_api/request.h"
#include "scene/copy.h"

enum { CLI_OK = 0, CLI_USAGE = 2, CLI_REFUSED = 3, CLI_FAILED = 4, CLI_WRITE = 5 };
#define CLI_MAX_PAIRS 64
#define CLI_MAX_PARTS 15   /* the multipart reader takes 16 parts, the request one of them */

void pm_svc_cli_usage(FILE *out) {
    fprintf(out,
            "usage: procmesh generate ROUTE [--format glb|gltf|json] [-o FILE] [--compress meshopt]\n"
            "                         [--quantize true] [--metadata full|summary|none]\n"
            "                         [--content-type TYPE] [--part /POINTER=FILE]...\n"
            "                         [--flag value]... [NAME=VALUE]... [< request]\n"
            "Runs one request with no server: the same reader, validation, cache key,\n"
            "generator and encoder as POST (or GET) ROUTE, the same bytes.\n"
            "  ROUTE       junctions, roads, networks, dungeons, grids (or /v1/junctions, ...)\n"
            "  NAME=VALUE  query parameters of a GET route (e.g. seed=42 size=10); without\n"
            "              them the request body is read from standard input\n"
            "  --format    glb, gltf or json; default: from -o's extension, else json\n"
            "  -o FILE     write there instead of standard output (an existing file is written\n"
            "              over in place, its first 16 bytes last, and cut to length)\n"
            "  --content-type TYPE  the body's media type as HTTP would send it: JSON by\n"
            "              default (GeoJSON too), or multipart/form-data; boundary=B for a\n"
            "              body saved from a browser's FormData or curl -F\n"
            "  --part /POINTER=FILE a binary array (float32 little-endian; .png: image/png)\n"
            "              for that JSON pointer, e.g. --part /terrain/heights=h.f32: the\n"
            "              JSON on standard input and the files go as one multipart body\n"
            "  --compress, --quantize, --metadata   as the ?compress=, ?quantize=, ?metadata= options\n"
            "  --flag      any server flag that sets a limit (--max-points, --max-vertices, ...)\n"
            "  --no-page-pool  memory from malloc, not from one pool advised for huge pages\n"
            "              (the same output; fewer page faults with the pool)\n"
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

/* Buffers from malloc (--no-page-pool, or no pool mapped). */
static void *cli_realloc(void *ctx, void *p, size_t old_size, size_t new_size) {
    (void)ctx, (void)old_size;
    return realloc(p, new_size ? new_size : 1);
}

static void cli_free(void *ctx, void *p, size_t size) {
    (void)ctx, (void)size;
    free(p);
}

static const pm_api_alloc cli_alloc = {cli_realloc, cli_free, NULL, NULL};

/* The whole of in (up to limit bytes, else *too_big) in a block of al's of
 * *cap bytes, or NULL. */
static char *cli_read_all(FILE *in, size_t limit, const pm_api_alloc *al, size_t *len,
                          size_t *cap_out, int *too_big) {
    size_t cap = 1 << 16, n = 0;
    /* A file's size is known: one buffer for all of it (and the byte that
     * shows the end), not copies of a growing one. */
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
        (uint64_t)st.st_size < limit && (size_t)st.st_size + 1 > cap)
        cap = (size_t)st.st_size + 1;
    char *buf = al->realloc(al->ctx, NULL, 0, cap);
    *too_big = 0;
    while (buf) {
        if (n == cap) {
            char *grown = al->realloc(al->ctx, buf, cap, cap * 2);
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
            *cap_out = cap;
            return buf;
        }
    }
    if (buf) al->free(al->ctx, buf, cap);
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

/* Where the output goes: the file (created at the first byte, so a refused
 * request leaves none, and removed again when the run fails after it, so
 * a half-written file never stands under the name) or standard output.
 * Small pieces are gathered, big ones (a GLB's arrays, straight from the
 * scene) written as they are: the output is never assembled in memory.
 *
 * A regular file is written over in place and cut to the output's length
 * at the end, not truncated when opened: regenerating a file (an asset
 * pipeline, a map editor's export) reuses its blocks and page cache,
 * where O_TRUNC frees them and the writes allocate them again page by
 * page (a 13 MB GLB written over the last one: 4.2 ms of system time with
 * O_TRUNC, 0.7 ms in place). Told the whole length first (cli_out_total),
 * a file that grows is given its blocks in one call. Its first 16 bytes
 * are zeros until the end, when they are written last: a run killed
 * while writing leaves a file no loader takes for the format (no glTF
 * magic, no JSON), never old bytes behind a new header or a whole-length
 * file with a tail of zeros. */
typedef struct cli_out {
    const char *file;   /* NULL: standard output */
    int fd;             /* -1 until opened */
    int err;            /* errno of a failed open or write */
    int in_place;       /* a regular file: head written last, cut at the end */
    size_t given;       /* bytes of output so far */
    size_t held;        /* of them in head (the first sizeof head) */
    unsigned char head[16];
    size_t len;
    unsigned char buf[1 << 16];
} cli_out;

static int cli_out_raw(cli_out *o, const void *data, size_t n) {
    const unsigned char *c = data;
    o->given += n;
    if (o->in_place && o->held < sizeof o->head) {   /* kept back; the rest goes after */
        size_t k = n < sizeof o->head - o->held ? n : sizeof o->head - o->held;
        memcpy(o->head + o->held, c, k);
        o->held += k;
        c += k;
        n -= k;
        if (o->held == sizeof o->head && lseek(o->fd, (off_t)sizeof o->head, SEEK_SET) < 0) {
            o->err = errno;
            return -1;
        }
    }
    while (n) {
        ssize_t w = write(o->fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            o->err = w < 0 ? errno : EIO;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int cli_out_open(cli_out *o) {
    if (o->fd >= 0) return 0;
    if (!o->file) {
        o->fd = STDOUT_FILENO;
        return 0;
    }
    o->fd = open(o->file, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (o->fd < 0) {
        o->err = errno;
        return -1;
    }
    struct stat st;
    o->in_place = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
    if (o->in_place && st.st_size > 0) {   /* the old head gone first */
        static const unsigned char zeros[sizeof o->head];
        size_t k = (uintmax_t)st.st_size < sizeof zeros ? (size_t)st.st_size : sizeof zeros;
        ssize_t w = pwrite(o->fd, zeros, k, 0);
        if (w != (ssize_t)k) {
            o->err = w < 0 ? errno : EIO;
            return -1;
        }
    }
    return 0;
}

static int cli_out_flush(cli_out *o) {
    int r = o->len ? cli_out_raw(o, o->buf, o->len) : 0;
    o->len = 0;
    return r;
}

/* The whole output's length, before its first byte: a file gets the
 * blocks it lacks in one call, not page by page as the writes come (ext4
 * also starts writing back, at close, in this process, a file it saw
 * grow from empty). Not on tmpfs, where it zeroes pages the writes then
 * fill. Only advice: refused (a file system without it) or short of
 * space, the writes go on and report. */
static void cli_out_total(void *ctx, size_t n) {
    cli_out *o = ctx;
    if (o->err || cli_out_open(o) != 0 || !o->in_place || n == 0 || n > (size_t)INT64_MAX) return;
#ifdef __linux__
    struct statfs fs;
    if (fstatfs(o->fd, &fs) == 0 && fs.f_type != TMPFS_MAGIC) (void)fallocate(o->fd, 0, 0, (off_t)n);
#endif
}

/* A big block whose bytes would land 1 to 63 bytes past where they sit,
 * modulo 4096, in the file's pages: the kernel's copy into the page cache
 * (rep movsb) is then 2.5-3 times slower on Zen 3 (scene/copy.h; 20 MB
 * written in 8 ms instead of 3). Such a block goes through buf, placed at
 * the file position's offset in a page (pm_copy steps around the same
 * window in this process's own copy); any other is written as it is. */
static int cli_out_big(cli_out *o, const unsigned char *c, size_t n) {
    if (!pm_copy_slow((uintptr_t)o->given, (uintptr_t)c)) return cli_out_raw(o, c, n);
    while (n) {
        size_t off = ((uintptr_t)o->given - (uintptr_t)o->buf) & 4095u;
        size_t k = n < sizeof o->buf - 4096 ? n : sizeof o->buf - 4096;
        pm_copy(o->buf + off, c, k);
        if (cli_out_raw(o, o->buf + off, k) != 0) return -1;
        c += k;
        n -= k;
    }
    return 0;
}

static int cli_out_write(void *ctx, const void *data, size_t n) {
    cli_out *o = ctx;
    if (o->err || cli_out_open(o) != 0) return -1;
    if (n <= sizeof o->buf - o->len) {
        memcpy(o->buf + o->len, data, n);
        o->len += n;
        return 0;
    }
    if (cli_out_flush(o) != 0) return -1;
    if (n >= sizeof o->buf / 2) return cli_out_big(o, data, n);
    memcpy(o->buf, data, n);
    o->len = n;
    return 0;
}

/* Whether o's output is a regular file it opened by name, that name
 * still being that file: the one kind it removes after a failed run (it
 * holds part of an answer or, written over, no longer what it held). A
 * device such as /dev/full, a pipe, standard output or a symbolic link's
 * target is left alone. */
static int cli_out_regular(const cli_out *o) {
    struct stat fd_st, name_st;
    return o->file && o->fd >= 0 && fstat(o->fd, &fd_st) == 0 && S_ISREG(fd_st.st_mode) &&
           lstat(o->file, &name_st) == 0 && S_ISREG(name_st.st_mode) &&
           name_st.st_dev == fd_st.st_dev && name_st.st_ino == fd_st.st_ino;
}

/* Flushes and closes; CLI_OK or CLI_WRITE (said on stderr, the partial
 * file removed). */
static int cli_out_end(cli_out *o) {
    if (!o->err && cli_out_open(o) == 0) cli_out_flush(o);
    if (!o->err && o->in_place) {
        ssize_t w = o->held ? pwrite(o->fd, o->head, o->held, 0) : 0;
        if (w != (ssize_t)o->held) o->err = w < 0 ? errno : EIO;
        else if (ftruncate(o->fd, (off_t)o->given) != 0) o->err = errno;
    }
    int regular = cli_out_regular(o);
    if (o->file && o->fd >= 0 && close(o->fd) != 0 && !o->err) o->err = errno;
    o->fd = -1;
    if (!o->err) return CLI_OK;
    if (regular) unlink(o->file);
    fprintf(stderr, "procmesh: writing %s failed: %s\n", o->file ? o->file : "standard output",
            strerror(o->err));
    return CLI_WRITE;
}

/* One --part: a binary array for the JSON pointer name, from a file. */
typedef struct cli_part { const char *pointer, *file; } cli_part;

static char *cli_read_file(const char *file, size_t limit, size_t *len, int *too_big) {
    FILE *f = fopen(file, "rb");
    if (!f) return NULL;
    size_t cap;
    char *b = cli_read_all(f, limit, &cli_alloc, len, &cap, too_big);
    fclose(f);
    return b;
}

/* A boundary that occurs in none of the n blobs. */
static void cli_boundary(char *out, size_t cap, const char *const *blob, const size_t *len,
                         size_t n) {
    for (unsigned k = 0;; k++) {
        snprintf(out, cap, "procmesh-cli-%u", k);
        size_t bl = strlen(out), i = 0;
        for (; i < n; i++)
            if (memmem(blob[i], len[i], out, bl)) break;
        if (i == n) return;
    }
}

/* The multipart/form-data body a browser's FormData would send for the
 * JSON document json and the parts (the same reader then places them):
 * *ctype gets its Content-Type. NULL when out of memory or a part's file
 * cannot be read (then *bad names it). */
static char *cli_multipart(const char *json, size_t json_len, const cli_part *parts,
                           size_t nparts, size_t limit, size_t *len, char *ctype, size_t cap,
                           const char **bad, int *too_big) {
    const char *blob[CLI_MAX_PARTS + 1] = {json};
    size_t blen[CLI_MAX_PARTS + 1] = {json_len}, total = json_len + 256;
    char *out = NULL;
    size_t i;
    for (i = 0; i < nparts; i++) {
        char *b = cli_read_file(parts[i].file, limit, &blen[i + 1], too_big);
        if (!b) {
            *bad = parts[i].file;
            goto done;
        }
        blob[i + 1] = b;
        total += blen[i + 1] + 256 + strlen(parts[i].pointer);
    }
    char boundary[48];
    cli_boundary(boundary, sizeof boundary, blob, blen, nparts + 1);
    snprintf(ctype, cap, "multipart/form-data; boundary=%s", boundary);
    out = malloc(total);
    if (!out) goto done;
    size_t at = 0;
    for (size_t k = 0; k <= nparts; k++) {
        const char *dot = k ? strrchr(parts[k - 1].file, '.') : NULL;
        at += (size_t)sprintf(out + at,
                              "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n"
                              "Content-Type: %s\r\n\r\n",
                              boundary, k ? parts[k - 1].pointer : "request",
                              !k                                 ? "application/json"
                              : dot && strcmp(dot, ".png") == 0 ? "image/png"
                                                                 : "application/octet-stream");
        memcpy(out + at, blob[k], blen[k]);
        at += blen[k];
        at += (size_t)sprintf(out + at, "\r\n");
    }
    at += (size_t)sprintf(out + at, "--%s--\r\n", boundary);
    *len = at;
done:
    for (size_t k = 1; k <= i && k <= nparts; k++) free((char *)blob[k]);
    return out;
}

/* The exit code of a refusal with problem p. */
static int cli_code(const pm_api_problem *p) {
    if (p->status == 405) return CLI_USAGE;
    if (p->status >= 500) return CLI_FAILED;
    return CLI_REFUSED;
}

/* The route's own stages (pm_api_request_run) on the body from standard
 * input (with the parts) or on the query pairs; out gets the bytes. */
static int cli_run(const pm_api_generator *gen, const pm_svc_config *cfg, const char *ctype,
                   const cli_part *parts, size_t nparts, const pm_api_query_pair *q, size_t nq,
                   const pm_api_output *o, int pool, cli_out *out, pm_api_problem *prob) {
    pm_api_request rq = {.gen = gen, .get = nq > 0, .query = q, .nquery = nq,
                         .content_type = ctype};
    char *body = NULL, *json = NULL, mp_type[96];
    size_t len = 0, json_cap = 0;
    int too_big = 0;
    const char *bad = NULL;
    const pm_api_sink sink = {.write = cli_out_write, .ctx = out, .total = cli_out_total};
    pm_api_run run = {.lim = &cfg->limits, .outputs = o, .noutputs = 1, .alloc = &cli_alloc,
                      .sink = &sink};
    /* The body, the job's arena and the encoder's buffers from one page
     * pool: a network's ~28 MB touched in 2 MiB pages, not 4 KiB ones
     * (service/pages.h). The arena's accounting, and so --max-job-mb, is
     * malloc's. */
    pm_svc_pages *pg = pool ? pm_svc_pages_create_for_process() : NULL;
    pm_arena_allocator arena_al;
    pm_api_alloc out_al;
    if (pg) {
        arena_al = pm_svc_pages_arena(pg);
        out_al = pm_svc_pages_output(pg);
        run.arena_alloc = &arena_al;
        run.alloc = &out_al;
    }
    int rc = -1;
    if (!rq.get) {
        body = json = cli_read_all(stdin, cfg->body_limit, run.alloc, &len, &json_cap, &too_big);
        if (json && nparts) {
            body = cli_multipart(json, len, parts, nparts, cfg->body_limit, &len, mp_type,
                                 sizeof mp_type, &bad, &too_big);
            rq.content_type = mp_type;
        }
        if (body && len > cfg->body_limit) too_big = 1;
        if (!body || too_big) {
            if (too_big)
                pm_api_problem_set(prob, 413, "payload-too-large", "Content Too Large",
                                   "the request body is over the limit of %zu bytes (--body-limit)",
                                   cfg->body_limit);
            else if (bad)
                pm_api_problem_set(prob, 400, "bad-request", "Bad Request",
                                   "cannot read --part file %s: %s", bad, strerror(errno));
            else pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable", "out of memory");
            goto done;
        }
        rq.body = body;
        rq.body_len = len;
    }
    pm_api_buf none;
    rc = pm_api_request_run(&rq, &run, &none, NULL, prob);
done:
    if (body != json) free(body);
    if (json) run.alloc->free(run.alloc->ctx, json, json_cap);
    pm_svc_pages_destroy(pg);
    if (rc == 0) return CLI_OK;
    return bad && !too_big ? CLI_USAGE : cli_code(prob);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define PM_SVC_CLI_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PM_SVC_CLI_SANITIZED 1
#endif

_Noreturn void pm_svc_cli_exit(int code) {
#ifdef PM_SVC_CLI_SANITIZED
    exit(code);
#else
    fflush(NULL);
    _exit(code);
#endif
}

int pm_svc_cli_generate(int argc, char **argv) {
    const char *route = NULL, *file = NULL, *fmt_name = NULL;
    const char *compress = NULL, *quantize = NULL, *metadata = NULL, *ctype = NULL;
    pm_api_query_pair q[CLI_MAX_PAIRS];
    cli_part parts[CLI_MAX_PARTS];
    size_t nq = 0, nparts = 0;
    int pool = 1;
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
                    strcmp(a, "--format") == 0 || strcmp(a, "--content-type") == 0 ||
                    strcmp(a, "--part") == 0;
        if (takes && i + 1 >= argc) {
            fprintf(stderr, "procmesh generate: %s needs a value\n", a);
            free(flags);
            return CLI_USAGE;
        }
        if (option) *option = argv[++i];
        else if (strcmp(a, "--content-type") == 0) ctype = argv[++i];
        else if (strcmp(a, "--part") == 0) {
            char *eq = strchr(argv[++i], '=');
            if (!eq || argv[i][0] != '/' || nparts == CLI_MAX_PARTS) {
                fprintf(stderr, "procmesh generate: --part takes /JSON/POINTER=FILE (at most %d)\n",
                        CLI_MAX_PARTS);
                free(flags);
                return CLI_USAGE;
            }
            *eq = '\0';
            parts[nparts++] = (cli_part){argv[i], eq + 1};
        } else if (strcmp(a, "--format") == 0) fmt_name = argv[++i];
        else if (strncmp(a, "--format=", 9) == 0) fmt_name = a + 9;
        else if (takes) file = argv[++i];
        else if (strncmp(a, "--output=", 9) == 0) file = a + 9;
        else if (strcmp(a, "--no-page-pool") == 0) pool = 0;
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
    if (ctype && !pm_svc_is_json_type(ctype) && !pm_api_is_multipart(ctype)) {
        fprintf(stderr, "procmesh generate: --content-type must be a JSON type or "
                        "multipart/form-data; boundary=..., as the route takes (not %s)\n", ctype);
        return CLI_USAGE;
    }
    if ((nq && (ctype || nparts)) || (nparts && ctype && pm_api_is_multipart(ctype))) {
        fprintf(stderr, "procmesh generate: %s\n",
                nq ? "NAME=VALUE arguments make a GET request: no body, --content-type or --part"
                   : "--part builds the multipart body itself: give the JSON document on "
                     "standard input, not a multipart --content-type");
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
    cli_out *out = malloc(sizeof *out);
    if (!out) return CLI_FAILED;
    out->file = file;   /* not the whole struct: its 64 KiB buffer needs no zeros */
    out->fd = -1;
    out->err = 0;
    out->in_place = 0;
    out->given = out->held = 0;
    out->len = 0;
    int code = cli_run(gen, &cfg, ctype, parts, nparts, q, nq, &out_opts, pool, out, &prob);
    if (out->err) code = cli_out_end(out);   /* the output failed, not the request */
    else if (code == CLI_OK) code = cli_out_end(out);
    else {   /* failed after the first byte (e.g. out of memory mid-way) */
        if (cli_out_regular(out)) unlink(out->file);
        code = cli_problem(&prob, code);
    }
    if (out->file && out->fd >= 0) close(out->fd);
    free(out);
    pm_api_problem_free(&prob);
    return code;
}
