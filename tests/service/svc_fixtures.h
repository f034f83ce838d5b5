/* Requests and helpers shared by the black-box service tests
 * (tests/service/test_http_*.c). The route under test is the first real
 * generator, POST /v1/junctions; everything generator-specific is here. */
#ifndef SVC_FIXTURES_H
#define SVC_FIXTURES_H
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_test_server.h"

#define SVC_ROUTE "/v1/junctions"

/* A valid three-arm junction. */
#define SVC_BODY                                                                               \
    "{\"arms\":[{\"direction\":[1,0],\"width\":8},{\"direction\":[0,1],\"width\":8},"          \
    "{\"direction\":[-1,0],\"width\":8}]}"
/* The same request: other key order, other number spellings. */
#define SVC_BODY_REORDERED                                                                     \
    "{ \"arms\" : [ {\"width\":8.0,\"direction\":[1.0,0]}, {\"width\":8e0,\"direction\":[0,1]},\n" \
    "  {\"direction\":[-1,0.0],\"width\":80e-1} ] }"
/* The same request with a default stated explicitly. */
#define SVC_BODY_EXPLICIT_DEFAULT                                                              \
    "{\"arms\":[{\"direction\":[1,0],\"width\":8},{\"direction\":[0,1],\"width\":8},"          \
    "{\"direction\":[-1,0],\"width\":8}],\"corner_segments\":8}"
/* Valid JSON the generator refuses (422 with a pointer into /arms). */
#define SVC_BODY_INVALID "{\"arms\":[{\"direction\":[1,0],\"width\":-1}],\"colour\":\"red\"}"

/* A request that keeps a worker busy for about `ms` milliseconds; variant
 * makes distinct requests (distinct cache keys). */
static inline void svc_slow_body(char *buf, size_t cap, int ms, int variant) {
    snprintf(buf, cap,
             "{\"arms\":[{\"direction\":[1,0],\"width\":%d},{\"direction\":[0,1],\"width\":8},"
             "{\"direction\":[-1,0],\"width\":8}],\"spin_ms\":%d}",
             8 + variant, ms);
}

static inline void svc_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline double svc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls a /metrics series until it reaches at least want (or 10 s pass). */
static inline double svc_wait_metric(const pm_test_server *s, const char *series, double want) {
    double v = -1, give_up = svc_now() + 10;
    while ((v = pm_test_metric(s, series)) < want && svc_now() < give_up) svc_sleep_ms(5);
    return v;
}

/* A request run on its own thread (for concurrency tests). */
typedef struct svc_call {
    const pm_test_server *s;
    const char *path;
    char body[512];
    const char *const *headers;
    pm_http_response r;
    pthread_t t;
} svc_call;

static inline void *svc__call_run(void *arg) {
    svc_call *c = arg;
    const char *json[] = {"Content-Type: application/json", NULL};
    pm_http_request req = {.method = "POST", .path = c->path, .headers = c->headers ? c->headers : json,
                           .body = c->body, .timeout_ms = 60000};
    pm_http(c->s, &req, &c->r);
    return NULL;
}

static inline void svc_call_start(svc_call *c, const pm_test_server *s, const char *path,
                                  const char *body) {
    memset(c, 0, sizeof *c);
    c->s = s;
    c->path = path;
    snprintf(c->body, sizeof c->body, "%s", body);
    pthread_create(&c->t, NULL, svc__call_run, c);
}

static inline void svc_call_join(svc_call *c) { pthread_join(c->t, NULL); }

/* The value of header name, or "" (a static buffer per call site is
 * avoided: the caller passes buf). */
static inline const char *svc_header(const pm_http_response *r, const char *name, char *buf,
                                     size_t cap) {
    const char *v = pm_http_header(r, name, buf, cap);
    return v ? v : "";
}
#endif
