#ifndef PM_BENCH_REQUEST_H
#define PM_BENCH_REQUEST_H
/* One generator request timed the way the service runs it, stage by stage,
 * shared by the bench_*.c programs that report request bytes -> GLB. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "scene/scene.h"
#include "pm_api/request.h"
#include "pm_bench.h"

/* The service's allocator policy (service/budget.h), which procmesh serve
 * sets at start: call first thing in main, so requests timed here reuse
 * freed memory the way the server's do instead of faulting fresh pages in
 * every run. `--malloc-policy` prints its two thresholds, for a peer timed
 * beside procmesh to run under the same ones (bench/opendrive.sh). Returns
 * 1 if argv asked for them (printed), 0 otherwise. */
static inline int pm_bench_service_malloc(int argc, char **argv) {
    pm_svc_budget_malloc_policy(1);
    if (argc == 2 && !strcmp(argv[1], "--malloc-policy")) {
        printf("%zu %zu\n", (size_t)PM_SVC_MALLOC_MMAP_AT, (size_t)PM_SVC_MALLOC_TRIM_AT);
        return 1;
    }
    return 0;
}

/* Milliseconds of thread CPU time per stage, and what came out. */
typedef struct pm_bench_stages {
    double body, parse, gen, enc;   /* JSON text; params + cache key; generate; GLB */
    size_t bytes;
    uint64_t verts, tris;
} pm_bench_stages;

static inline double pm_bench_stages_total(const pm_bench_stages *s) {
    return s->body + s->parse + s->gen + s->enc;
}

typedef struct pm_bench__clock {
    pm_bench_stages *st;
    double t;
} pm_bench__clock;

/* pm_api_request_run's stage hook: each stage's thread CPU time. */
static inline void pm_bench__stage(void *cls, pm_api_stage stage, const pm_scene *scene) {
    pm_bench__clock *c = cls;
    double now = pm_bench_thread_ms(), ms = now - c->t;
    c->t = now;
    switch (stage) {
    case PM_API_STAGE_DOCUMENT: c->st->body = ms; break;
    case PM_API_STAGE_PARSE: c->st->parse = ms; break;
    case PM_API_STAGE_GENERATE:
        c->st->gen = ms;
        c->st->verts = pm_scene_vertex_count(scene);
        c->st->tris = pm_scene_triangle_count(scene);
        break;
    case PM_API_STAGE_ENCODE: c->st->enc = ms; break;
    }
}

/* body (len bytes, of Content-Type ctype: NULL for JSON) through gen
 * under default limits, as a GLB, by the service's own stages
 * (pm_api_request_run), with the query's ingest options (?png_scale=,
 * ?png_offset=), hook called with cls after each stage (the GLB's size
 * then goes into *bytes). When ms is not NULL, *ms is the request's
 * thread CPU time, read once before and once after. Returns 0, or
 * nonzero after printing why the request failed. */
static inline int pm_bench__run(const pm_api_generator *gen, const char *ctype, const pm_api_ingest *ing,
                                const char *body, size_t len, void (*hook)(void *, pm_api_stage, const pm_scene *),
                                void *cls, size_t *bytes, double *ms) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    pm_api_output glb = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_request rq = {.gen = gen, .body = body, .body_len = len, .content_type = ctype,
                          .ingest = ing};
    pm_api_run run = {.lim = &lim, .outputs = &glb, .noutputs = 1, .stage_done = hook, .cls = cls};
    pm_api_buf out = {NULL, 0};
    double t0 = ms ? pm_bench_thread_ms() : 0;
    int rc = pm_api_request_run(&rq, &run, &out, NULL, &prob);
    if (ms) *ms = pm_bench_thread_ms() - t0;
    *bytes = out.len;
    if (rc != 0) fprintf(stderr, "%s request failed: %s\n", gen->name, prob.detail);
    free(out.data);
    pm_api_problem_free(&prob);
    return rc;
}

/* pm_bench__run into *st with each stage's time (zeros from the stage
 * that failed on). */
static inline int pm_bench_request_with(const pm_api_generator *gen, const char *ctype,
                                        const pm_api_ingest *ing, const char *body, size_t len,
                                        pm_bench_stages *st) {
    pm_bench_stages got = {0};
    pm_bench__clock clock = {&got, pm_bench_thread_ms()};
    int rc = pm_bench__run(gen, ctype, ing, body, len, pm_bench__stage, &clock, &got.bytes, NULL);
    *st = got;
    return rc;
}

static inline int pm_bench_request_typed(const pm_api_generator *gen, const char *ctype,
                                         const char *body, size_t len, pm_bench_stages *st) {
    pm_api_ingest ing = PM_API_INGEST_DEFAULT;
    return pm_bench_request_with(gen, ctype, &ing, body, len, st);
}
static inline int pm_bench_request(const pm_api_generator *gen, const char *body, size_t len,
                                   pm_bench_stages *st) {
    return pm_bench_request_typed(gen, NULL, body, len, st);
}

/* pm_api_request_run's stage hook for pm_bench_request_whole: the scene's
 * counts only, no clock. */
static inline void pm_bench__counts(void *cls, pm_api_stage stage, const pm_scene *scene) {
    pm_bench_stages *st = cls;
    if (stage != PM_API_STAGE_GENERATE) return;
    st->verts = pm_scene_vertex_count(scene);
    st->tris = pm_scene_triangle_count(scene);
}

/* pm_bench_request timed whole: one clock read before the request and
 * one after, as a peer times its run, without the four per-stage reads
 * (each a system call, about 0.7 us of thread CPU time on the bench's
 * VM, some 4 % of a 0.07 ms road). *ms the thread CPU time (ms NULL:
 * not timed, for a caller timing a batch); st's stage times stay zero. */
static inline int pm_bench_request_whole(const pm_api_generator *gen, const char *body, size_t len,
                                         double *ms, pm_bench_stages *st) {
    pm_bench_stages got = {0};
    int rc = pm_bench__run(gen, NULL, NULL, body, len, pm_bench__counts, &got, &got.bytes, ms);
    *st = got;
    return rc;
}
#endif
