#ifndef PM_TEST_SERVER_H
#define PM_TEST_SERVER_H
#include <stddef.h>
#include <sys/types.h>

/* Black-box testing against the real procmesh binary (PM_BINARY).
 *
 *   pm_test_server s;
 *   const char *args[] = {"--workers", "1", NULL};      // extra flags, or NULL
 *   cr_assert_eq(pm_test_server_start(&s, args), 0);
 *   pm_http_response r;
 *   pm_http_post_json(&s, "/v1/junctions", "{\"arms\": ...}", &r);
 *   cr_assert_eq(r.status, 200);
 *   char etag[128];
 *   cr_assert_not_null(pm_http_header(&r, "ETag", etag, sizeof etag));
 *   pm_http_response_free(&r);
 *   cr_assert_eq(pm_test_server_stop(&s), 0);           // SIGTERM, exit status
 *
 * Each server listens on 127.0.0.1 on a port the kernel picks (--port 0;
 * the port is read from the "listening" log line), so any number of test
 * processes can run in parallel. Its stderr (the JSON log) goes to a
 * temporary file (s.log_path), removed by stop unless PM_TEST_KEEP_LOGS is
 * set. The child gets PR_SET_PDEATHSIG, so a crashed test never leaves a
 * server behind. PROCMESH_* variables of the test's environment are not
 * passed on (use the env argument). */

typedef struct pm_test_server {
    pid_t pid;            /* 0 when not running */
    int port;
    char base[64];        /* "http://127.0.0.1:<port>" */
    char log_path[256];
    int exited;           /* set by pm_test_server_wait when the process is reaped */
    int status;           /* its exit code (128 + signal when killed) */
} pm_test_server;

/* Starts the binary with `--bind 127.0.0.1 --port 0` followed by args
 * (NULL-terminated flags; later flags win), waits for its "listening" line
 * and for GET /healthz to answer 200 (up to 20 s). Returns 0, or -1 after
 * printing the server's log to stderr. */
int pm_test_server_start(pm_test_server *s, const char *const *args);
/* The same with extra environment entries ("PROCMESH_QUEUE=1"), NULL-terminated. */
int pm_test_server_start_env(pm_test_server *s, const char *const *args, const char *const *env);

/* Sends sig to the server. */
int pm_test_server_signal(pm_test_server *s, int sig);
/* Waits up to timeout_ms for the server to exit. Returns its exit code
 * (128 + signal if killed by one), or -1 if it is still running. */
int pm_test_server_wait(pm_test_server *s, int timeout_ms);
/* SIGTERM, then waits up to 30 s (SIGKILL after that). Returns the exit
 * code (0 for a clean drain), or -1 when it had to be killed. Removes the
 * log file. Safe to call twice. */
int pm_test_server_stop(pm_test_server *s);
/* The server's log so far, NUL-terminated, malloc'd (caller frees). */
char *pm_test_server_log(const pm_test_server *s);

/* One HTTP exchange (libcurl, a fresh connection each time). */
typedef struct pm_http_request {
    const char *method;            /* NULL: POST with a body, else GET */
    const char *path;              /* "/v1/junctions?format=glb" */
    const char *const *headers;    /* "Name: value" lines, NULL-terminated, or NULL */
    const void *body;              /* or NULL */
    size_t body_len;               /* 0 with a body: strlen(body) */
    int chunked;                   /* send the body with Transfer-Encoding: chunked */
    long timeout_ms;               /* 0: 30 s */
} pm_http_request;

typedef struct pm_http_response {
    long status;                   /* 0 when no response arrived */
    char *headers;                 /* the final response's header block, CRLF lines */
    unsigned char *body;           /* NUL-terminated (not counted in body_len) */
    size_t body_len;
    double seconds;                /* total time of the exchange */
} pm_http_response;

/* Returns 0 when a response arrived (any status), -1 on a transport error
 * (out->status 0). Always call pm_http_response_free afterwards. */
int pm_http(const pm_test_server *s, const pm_http_request *req, pm_http_response *out);
int pm_http_get(const pm_test_server *s, const char *path, pm_http_response *out);
/* POST with Content-Type: application/json. */
int pm_http_post_json(const pm_test_server *s, const char *path, const char *json,
                      pm_http_response *out);
/* A header's value (case-insensitive name, surrounding blanks removed)
 * copied into buf; NULL when absent. */
const char *pm_http_header(const pm_http_response *r, const char *name, char *buf, size_t cap);
void pm_http_response_free(pm_http_response *r);

/* One sample of GET /metrics: the first line starting with series followed
 * by a space, e.g. "procmesh_cache_hits_total" or
 * "procmesh_http_requests_total{route=\"/healthz\",status=\"200\"}".
 * Returns its value, or -1 when absent. */
double pm_test_metric(const pm_test_server *s, const char *series);
#endif
