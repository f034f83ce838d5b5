#ifndef PM_SVC_CONFIG_H
#define PM_SVC_CONFIG_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pm_api/generator.h"

/* Everything the service can be told. Each field has one line in the
 * option table in config.c (flag, PROCMESH_* variable, type, default, help),
 * so adding a setting is: a field here, a line there. */
typedef struct pm_svc_config {
    char bind[64];             /* listen address (IPv4 or IPv6 literal) */
    uint32_t port;             /* 0 = an ephemeral port (logged at start) */
    uint32_t threads;          /* libmicrohttpd thread pool */
    uint32_t workers;          /* generation worker pool */
    uint32_t queue;            /* jobs that may wait for a worker */
    size_t cache_bytes;        /* in-memory cache budget */
    size_t inflight_bytes;     /* cap on bytes held by jobs and uncached results */
    size_t retain_bytes;       /* page-pool memory kept between jobs (0: malloc) */
    size_t body_limit;         /* request body cap in bytes */
    size_t binary_body_limit;  /* cap of a multipart body (binary heights) */
    uint32_t deadline_ms;      /* per request, queue wait included */
    uint32_t drain_ms;         /* shutdown: time given to in-flight requests */
    uint32_t idle_timeout_s;   /* idle keep-alive connections are closed */
    uint32_t max_connections;  /* open connections at once, over all threads */
    uint32_t reserve_connections;    /* kept free: new ones close the oldest incomplete */
    uint32_t max_connections_per_ip; /* 0 = no per-address limit */
    uint32_t header_timeout_ms;      /* total time for a request head (0 = none) */
    uint32_t body_timeout_ms;        /* total time for a request body (0 = none) */
    uint32_t admin_port;             /* health and metrics only; 0 = none */
    char cors_origin[512];     /* "*", a comma-separated list, or "" (no CORS) */
    char cache_control[256];   /* Cache-Control of results at unversioned URLs */
    char cache_control_versioned[256]; /* ... at URLs whose ?v= names the generator version */
    uint32_t gzip_level;       /* zlib level of cached results' gzip form */
    uint32_t br_quality;       /* brotli quality of their br form */
    int log_level;             /* pm_svc_log_level */
    char redis_url[512];       /* shared second tier; "" = memory only */
    uint32_t redis_ttl_s;      /* expiry of Redis entries; 0 = none */
    uint32_t redis_timeout_ms; /* bound on a Redis connect or socket wait */
    pm_api_limits limits;      /* every generator limit */
} pm_svc_config;

/* Fills every default (threads and workers: the number of online cores). */
void pm_svc_config_default(pm_svc_config *c);

/* Reads the PROCMESH_* variables from env (NULL-terminated "NAME=value"
 * strings; NULL means the process environment), then the flags in argv
 * (flags win). Both --flag value and --flag=value are accepted.
 * Returns 0 to run; 1 when --help or --version was printed to out (exit 0);
 * 2 on a bad value or unknown flag, with a one-line message in err
 * (exit 2). */
int pm_svc_config_load(pm_svc_config *c, int argc, char *const *argv, char *const *env,
                       FILE *out, char *err, size_t errcap);

/* Prints every flag with its variable, default and meaning. */
void pm_svc_config_usage(FILE *out);
#endif
