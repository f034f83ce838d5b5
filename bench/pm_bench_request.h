#ifndef PM_BENCH_REQUEST_H
#define PM_BENCH_REQUEST_H
/* One generator request timed the way the service runs it, stage by stage,
 * shared by the bench_*.c programs that report request bytes -> GLB. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scene/arena.h"
#include "scene/scene.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/multipart.h"
#include "pm_api/reader.h"
#include "pm_bench.h"

/* Milliseconds of thread CPU time per stage, and what came out. */
typedef struct pm_bench_stages {
    double body, parse, gen, enc;   /* JSON text; params + cache key; generate; GLB */
    size_t bytes;
    uint64_t verts, tris;
} pm_bench_stages;

static inline double pm_bench_stages_total(const pm_bench_stages *s) {
    return s->body + s->parse + s->gen + s->enc;
}

/* body (len bytes, of Content-Type ctype: NULL for JSON) through gen
 * under default limits into *st. Returns 0, or nonzero after printing why
 * the request failed. */
/* The same with the query's ingest options (?png_scale=, ?png_offset=). */
static inline int pm_bench_request_with(const pm_api_generator *gen, const char *ctype,
                                        const pm_api_ingest *ing, const char *body, size_t len,
                                        pm_bench_stages *st) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    double t0 = pm_bench_thread_ms();
    json_t *doc;
    if (pm_api_parse_request_with(body, len, ctype, ing, &doc, &prob) < 0) {
        fprintf(stderr, "%s body: %s\n", gen->name, prob.detail);
        pm_api_problem_free(&prob);
        return -1;
    }
    double t1 = pm_bench_thread_ms();
    pm_arena *a = pm_arena_create(0);
    void *params;
    json_t *canon = NULL;
    int rc = gen->parse(doc, &lim, a, &params, &canon, &prob);
    json_decref(doc);
    char hex[33] = "";
    if (rc == 0) pm_api_key_hex(pm_api_cache_key(gen, canon, PM_API_FMT_GLB), hex);
    double t2 = pm_bench_thread_ms();
    pm_scene *s = NULL;
    if (rc == 0) rc = gen->generate(params, &lim, a, NULL, &s, &prob);
    double t3 = pm_bench_thread_ms();
    pm_api_buf out = {NULL, 0};
    if (rc == 0) rc = pm_api_encode(s, gen, hex, PM_API_FMT_GLB, &out);
    double t4 = pm_bench_thread_ms();
    if (rc == 0) {
        *st = (pm_bench_stages){t1 - t0, t2 - t1, t3 - t2, t4 - t3, out.len,
                                pm_scene_vertex_count(s), pm_scene_triangle_count(s)};
    } else {
        fprintf(stderr, "%s request failed: %s\n", gen->name, prob.detail);
    }
    free(out.data);
    if (canon) json_decref(canon);
    pm_api_problem_free(&prob);
    pm_arena_destroy(a);
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
#endif
