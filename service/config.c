#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

extern char **environ;

typedef enum pm_svc_opt_type {
    PM_SVC_OPT_U32,     /* uint32_t in [min, max]; "auto" = cores when allowed */
    PM_SVC_OPT_U64,     /* uint64_t in [min, max] */
    PM_SVC_OPT_MIB,     /* size_t bytes, given in MiB in [min, max] */
    PM_SVC_OPT_BYTES,   /* size_t bytes, with an optional K/M/G suffix */
    PM_SVC_OPT_STR,     /* char[cap] */
    PM_SVC_OPT_LEVEL,   /* log level name */
} pm_svc_opt_type;

typedef struct pm_svc_opt {
    const char *flag;       /* without the leading "--" */
    const char *env;
    pm_svc_opt_type type;
    size_t offset, cap;     /* field offset; cap for strings */
    uint64_t min, max;
    int auto_ok;            /* U32: "auto" means the number of cores */
    const char *def;        /* default, in the syntax the flag takes */
    const char *help;
} pm_svc_opt;

#define PM_SVC__F(field) offsetof(pm_svc_config, field)
#define PM_SVC__S(field) offsetof(pm_svc_config, field), sizeof(((pm_svc_config *)0)->field)

/* The option table. Defaults of generator limits mirror
 * pm_api_limits_default (a unit test checks they agree). */
static const pm_svc_opt pm_svc__opts[] = {
    {"bind", "PROCMESH_BIND", PM_SVC_OPT_STR, PM_SVC__S(bind), 0, 0, 0, "0.0.0.0",
     "address to listen on (IPv4 or IPv6 literal)"},
    {"port", "PROCMESH_PORT", PM_SVC_OPT_U32, PM_SVC__F(port), 0, 0, 65535, 0, "8080",
     "TCP port; 0 picks a free one (logged as \"listening\")"},
    {"threads", "PROCMESH_THREADS", PM_SVC_OPT_U32, PM_SVC__F(threads), 0, 1, 256, 1, "auto",
     "HTTP threads (libmicrohttpd pool); auto = number of cores"},
    {"workers", "PROCMESH_WORKERS", PM_SVC_OPT_U32, PM_SVC__F(workers), 0, 1, 1024, 1, "auto",
     "generation workers; auto = number of cores"},
    {"queue", "PROCMESH_QUEUE", PM_SVC_OPT_U32, PM_SVC__F(queue), 0, 1, 1000000, 0, "64",
     "jobs that may wait for a worker; past it: 503 + Retry-After"},
    {"cache-mb", "PROCMESH_CACHE_MB", PM_SVC_OPT_MIB, PM_SVC__F(cache_bytes), 0, 0, 1048576, 0,
     "256", "in-memory cache budget in MiB (0 = no memory cache)"},
    {"max-inflight-mb", "PROCMESH_MAX_INFLIGHT_MB", PM_SVC_OPT_MIB, PM_SVC__F(inflight_bytes), 0,
     1, 1048576, 0, "512",
     "memory all jobs and uncached results may hold at once, in MiB; past it: 503"},
    {"retain-mb", "PROCMESH_RETAIN_MB", PM_SVC_OPT_MIB, PM_SVC__F(retain_bytes), 0, 0, 1048576, 0,
     "64", "freed job memory kept for the next jobs, in MiB (at most a quarter of "
     "--max-inflight-mb, counted in it; given back after 3 s idle; 0 = none)"},
    {"body-limit", "PROCMESH_BODY_LIMIT", PM_SVC_OPT_BYTES, PM_SVC__F(body_limit), 0, 1,
     (uint64_t)1 << 32, 0, "1M", "request body cap in bytes (suffix K, M, G); past it: 413"},
    {"binary-body-limit", "PROCMESH_BINARY_BODY_LIMIT", PM_SVC_OPT_BYTES,
     PM_SVC__F(binary_body_limit), 0, 1, (uint64_t)1 << 32, 0, "17M",
     "cap of a multipart/form-data body with binary heights (its JSON part stays within "
     "--body-limit); charged to --max-inflight-mb while it arrives; past it: 413"},
    {"deadline-ms", "PROCMESH_DEADLINE_MS", PM_SVC_OPT_U32, PM_SVC__F(deadline_ms), 0, 1,
     3600000, 0, "10000", "per-request deadline in ms, queueing included; past it: 503"},
    {"drain-ms", "PROCMESH_DRAIN_MS", PM_SVC_OPT_U32, PM_SVC__F(drain_ms), 0, 0, 3600000, 0,
     "10000", "on SIGTERM/SIGINT, time in ms given to in-flight requests"},
    {"idle-timeout-s", "PROCMESH_IDLE_TIMEOUT_S", PM_SVC_OPT_U32, PM_SVC__F(idle_timeout_s), 0,
     1, 86400, 0, "30", "idle keep-alive connections are closed after this many seconds"},
    {"max-connections", "PROCMESH_MAX_CONNECTIONS", PM_SVC_OPT_U32, PM_SVC__F(max_connections),
     0, 1, 1000000, 0, "4096",
     "open connections at once (the open-files limit is raised to fit when allowed)"},
    {"reserve-connections", "PROCMESH_RESERVE_CONNECTIONS", PM_SVC_OPT_U32,
     PM_SVC__F(reserve_connections), 0, 0, 1000000, 0, "64",
     "kept free for new connections (health probes): past max-connections less this, a new "
     "connection closes the oldest one whose request is incomplete"},
    {"max-connections-per-ip", "PROCMESH_MAX_CONNECTIONS_PER_IP", PM_SVC_OPT_U32,
     PM_SVC__F(max_connections_per_ip), 0, 0, 1000000, 0, "0",
     "open connections from one client address (0 = no limit; behind a proxy every client "
     "has the proxy's address)"},
    {"header-timeout-ms", "PROCMESH_HEADER_TIMEOUT_MS", PM_SVC_OPT_U32,
     PM_SVC__F(header_timeout_ms), 0, 0, 3600000, 0, "10000",
     "total time for a request head from accept (or from idle-timeout-s after the previous "
     "answer); past it: 408 and close (0 = none)"},
    {"body-timeout-ms", "PROCMESH_BODY_TIMEOUT_MS", PM_SVC_OPT_U32, PM_SVC__F(body_timeout_ms),
     0, 0, 3600000, 0, "10000",
     "total time for a request body once the head is in; past it: 408 and close (0 = none)"},
    {"admin-port", "PROCMESH_ADMIN_PORT", PM_SVC_OPT_U32, PM_SVC__F(admin_port), 0, 0, 65535, 0,
     "0", "a second port serving only /healthz, /readyz and /metrics on its own thread, out "
     "of reach of clients holding the main port's connections (0 = none)"},
    {"cors-origin", "PROCMESH_CORS_ORIGIN", PM_SVC_OPT_STR, PM_SVC__S(cors_origin), 0, 0, 0,
     "*", "allowed CORS origin: *, a comma-separated list of origins, or empty for none"},
    {"cache-control", "PROCMESH_CACHE_CONTROL", PM_SVC_OPT_STR, PM_SVC__S(cache_control), 0, 0,
     0, "public, max-age=3600",
     "Cache-Control of generated results (its bytes change when a generator version does)"},
    {"cache-control-versioned", "PROCMESH_CACHE_CONTROL_VERSIONED", PM_SVC_OPT_STR,
     PM_SVC__S(cache_control_versioned), 0, 0, 0, "public, max-age=31536000, immutable",
     "Cache-Control of results asked with ?v=<generator version> (bytes fixed for good)"},
    {"gzip-level", "PROCMESH_GZIP_LEVEL", PM_SVC_OPT_U32, PM_SVC__F(gzip_level), 0, 1, 9, 0, "6",
     "zlib level of a result's gzip form, made once when it enters the cache"},
    {"br-quality", "PROCMESH_BR_QUALITY", PM_SVC_OPT_U32, PM_SVC__F(br_quality), 0, 0, 11, 0,
     "9", "brotli quality of a result's br form (10 and 11 take seconds on a large mesh)"},
    {"log-level", "PROCMESH_LOG_LEVEL", PM_SVC_OPT_LEVEL, PM_SVC__F(log_level), 0, 0, 0, 0,
     "info", "debug, info (access lines), warn, error or off"},
    {"redis", "PROCMESH_REDIS_URL", PM_SVC_OPT_STR, PM_SVC__S(redis_url), 0, 0, 0, "",
     "shared cache redis://[[user]:password@]host[:port][/db]; empty = memory only"},
    {"redis-ttl", "PROCMESH_REDIS_TTL", PM_SVC_OPT_U32, PM_SVC__F(redis_ttl_s), 0, 0,
     UINT32_MAX, 0, "86400", "seconds an entry lives in Redis (0 = no expiry)"},
    {"redis-timeout-ms", "PROCMESH_REDIS_TIMEOUT_MS", PM_SVC_OPT_U32,
     PM_SVC__F(redis_timeout_ms), 0, 1, 60000, 0, "50",
     "bound on connecting to Redis and on each wait for it; a slow Redis is a miss"},
    {"max-arms", "PROCMESH_MAX_ARMS", PM_SVC_OPT_U32, PM_SVC__F(limits.max_arms), 0, 1,
     1000000, 0, "16", "most arms of one junction"},
    {"max-points", "PROCMESH_MAX_POINTS", PM_SVC_OPT_U32, PM_SVC__F(limits.max_points), 0, 1,
     100000000, 0, "10000", "most points of one request (road control points, grid points)"},
    {"max-rooms", "PROCMESH_MAX_ROOMS", PM_SVC_OPT_U32, PM_SVC__F(limits.max_rooms), 0, 1,
     1000000, 0, "500", "most rooms of one dungeon"},
    {"max-grid-size", "PROCMESH_MAX_GRID_SIZE", PM_SVC_OPT_U32, PM_SVC__F(limits.max_grid_size),
     0, 1, 100000, 0, "64", "largest organic grid size"},
    {"max-vertices", "PROCMESH_MAX_VERTICES", PM_SVC_OPT_U64, PM_SVC__F(limits.max_vertices), 0,
     1, (uint64_t)1 << 32, 0, "4000000", "most output vertices of one response"},
    {"max-job-mb", "PROCMESH_MAX_JOB_MB", PM_SVC_OPT_MIB, PM_SVC__F(limits.max_arena_bytes), 0,
     1, 1048576, 0, "256", "memory one generation job may take (arena, output), in MiB; past it: 422"},
};
#define PM_SVC__NOPTS (sizeof pm_svc__opts / sizeof pm_svc__opts[0])

static unsigned pm_svc__cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static void pm_svc__err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pm_svc__err(char *err, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* Strict unsigned decimal: digits only, no sign, no spaces, no overflow. */
static int pm_svc__parse_u64(const char *s, uint64_t *out) {
    if (!*s) return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* A byte count with an optional binary suffix (K, M, G; KiB etc. too). */
static int pm_svc__parse_bytes(const char *s, uint64_t *out) {
    char digits[32];
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n >= sizeof digits) return -1;
    memcpy(digits, s, n);
    digits[n] = '\0';
    uint64_t v, mul = 1;
    if (pm_svc__parse_u64(digits, &v) < 0) return -1;
    const char *suf = s + n;
    static const char *const sufs[][3] = {{"K", "k", "KiB"}, {"M", "m", "MiB"}, {"G", "g", "GiB"}};
    if (*suf) {
        int found = 0;
        for (int i = 0; i < 3 && !found; i++)
            for (int j = 0; j < 3; j++)
                if (strcmp(suf, sufs[i][j]) == 0) {
                    mul = (uint64_t)1 << (10 * (i + 1));
                    found = 1;
                    break;
                }
        if (!found) return -1;
    }
    if (v > UINT64_MAX / mul) return -1;
    *out = v * mul;
    return 0;
}

/* Sets one option from text; src names the source in errors ("--port" or
 * "PROCMESH_PORT"). */
static int pm_svc__set(pm_svc_config *c, const pm_svc_opt *o, const char *val, const char *src,
                       char *err, size_t errcap) {
    char *field = (char *)c + o->offset;
    uint64_t v = 0;
    switch (o->type) {
    case PM_SVC_OPT_STR:
        if (strlen(val) >= o->cap) {
            pm_svc__err(err, errcap, "%s: value is longer than %zu bytes", src, o->cap - 1);
            return -1;
        }
        for (const char *p = val; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) {   /* some end up in headers */
                pm_svc__err(err, errcap, "%s: value has a control character", src);
                return -1;
            }
        memcpy(field, val, strlen(val) + 1);
        return 0;
    case PM_SVC_OPT_LEVEL: {
        int l = pm_svc_log_level_parse(val);
        if (l < 0) {
            pm_svc__err(err, errcap, "%s: '%s' is not a log level (debug, info, warn, error, off)",
                        src, val);
            return -1;
        }
        *(int *)field = l;
        return 0;
    }
    case PM_SVC_OPT_BYTES:
        if (pm_svc__parse_bytes(val, &v) < 0) {
            pm_svc__err(err, errcap, "%s: '%s' is not a byte count (like 1048576, 512K or 4M)",
                        src, val);
            return -1;
        }
        break;
    default:
        if (o->auto_ok && strcmp(val, "auto") == 0) {
            v = pm_svc__cores();
            if (v > o->max) v = o->max;
        } else if (pm_svc__parse_u64(val, &v) < 0) {
            pm_svc__err(err, errcap, "%s: '%s' is not a non-negative integer%s", src, val,
                        o->auto_ok ? " or auto" : "");
            return -1;
        }
        break;
    }
    if (v < o->min || v > o->max) {
        pm_svc__err(err, errcap, "%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")", src, val,
                    o->min, o->max);
        return -1;
    }
    switch (o->type) {
    case PM_SVC_OPT_U32: *(uint32_t *)field = (uint32_t)v; break;
    case PM_SVC_OPT_U64: *(uint64_t *)field = v; break;
    case PM_SVC_OPT_MIB: *(size_t *)field = (size_t)(v << 20); break;
    case PM_SVC_OPT_BYTES: *(size_t *)field = (size_t)v; break;
    default: break;
    }
    return 0;
}

void pm_svc_config_default(pm_svc_config *c) {
    char err[256];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < PM_SVC__NOPTS; i++) {
        int r = pm_svc__set(c, &pm_svc__opts[i], pm_svc__opts[i].def, pm_svc__opts[i].flag, err,
                            sizeof err);
        (void)r;   /* the table's defaults are valid (checked by test_config) */
    }
}

static const pm_svc_opt *pm_svc__find_flag(const char *name, size_t len) {
    for (size_t i = 0; i < PM_SVC__NOPTS; i++)
        if (strlen(pm_svc__opts[i].flag) == len && strncmp(pm_svc__opts[i].flag, name, len) == 0)
            return &pm_svc__opts[i];
    return NULL;
}

static int pm_svc__load_env(pm_svc_config *c, char *const *env, char *err, size_t errcap) {
    if (!env) env = environ;
    for (size_t i = 0; i < PM_SVC__NOPTS; i++) {
        const pm_svc_opt *o = &pm_svc__opts[i];
        size_t n = strlen(o->env);
        for (char *const *e = env; *e; e++) {
            if (strncmp(*e, o->env, n) != 0 || (*e)[n] != '=') continue;
            if (pm_svc__set(c, o, *e + n + 1, o->env, err, errcap) < 0) return -1;
        }
    }
    return 0;
}

static int pm_svc__load_args(pm_svc_config *c, int argc, char *const *argv, FILE *out, char *err,
                             size_t errcap) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            pm_svc_config_usage(out);
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            fprintf(out, "procmesh %s\n", PM_VERSION);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            pm_svc__err(err, errcap, "unexpected argument '%s' (see --help)", a);
            return 2;
        }
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        const pm_svc_opt *o = pm_svc__find_flag(a + 2, len);
        if (!o) {
            pm_svc__err(err, errcap, "unknown option '%.*s' (see --help)", (int)(len + 2), a);
            return 2;
        }
        const char *val = eq ? eq + 1 : NULL;
        if (!val) {
            if (i + 1 >= argc) {
                pm_svc__err(err, errcap, "--%s needs a value", o->flag);
                return 2;
            }
            val = argv[++i];
        }
        char src[64];
        snprintf(src, sizeof src, "--%s", o->flag);
        if (pm_svc__set(c, o, val, src, err, errcap) < 0) return 2;
    }
    return 0;
}

int pm_svc_config_load(pm_svc_config *c, int argc, char *const *argv, char *const *env,
                       FILE *out, char *err, size_t errcap) {
    if (errcap) err[0] = '\0';
    if (pm_svc__load_env(c, env, err, errcap) < 0) return 2;
    return pm_svc__load_args(c, argc, argv, out, err, errcap);
}

void pm_svc_config_usage(FILE *out) {
    fprintf(out,
            "usage: procmesh [--flag value | --flag=value]...\n"
            "       procmesh generate ROUTE [options] < request.json   (no server; generate --help)\n"
            "procmesh %s: procedural meshes (glTF, GLB, JSON) over HTTP.\n"
            "Every flag also reads its PROCMESH_* environment variable; flags win.\n\n",
            PM_VERSION);
    for (size_t i = 0; i < PM_SVC__NOPTS; i++) {
        const pm_svc_opt *o = &pm_svc__opts[i];
        char flag[48];
        snprintf(flag, sizeof flag, "--%s", o->flag);
        fprintf(out, "  %-18s %-26s default %s%s%s\n      %s\n", flag, o->env,
                o->def[0] ? "" : "\"", o->def, o->def[0] ? "" : "\"", o->help);
        if (o->auto_ok) fprintf(out, "      (auto is %u on this machine)\n", pm_svc__cores());
    }
    fprintf(out, "  %-18s %-26s\n      %s\n  %-18s %-26s\n      %s\n", "--help", "",
            "print this and exit", "--version", "", "print the version and exit");
}
