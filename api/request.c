/* One request through every stage with no sockets (pm_api/request.h). */
#include "pm_api/request.h"

#include <stdlib.h>
#include <string.h>

#include "pm_api/multipart.h"
#include "pm_api/reader.h"

static void pm_api__out_of_memory(pm_api_problem *p, const char *what) {
    pm_api_problem_set(p, 503, "overloaded", "Service Unavailable", "out of memory %s", what);
}

int pm_api_request_document(const pm_api_request *rq, json_t **doc, pm_api_problem *p) {
    const pm_api_ingest ingest = PM_API_INGEST_DEFAULT;
    *doc = NULL;
    if (rq->get) {
        if (!rq->gen->from_query) {
            pm_api_problem_set(p, 405, "method-not-allowed", "Method Not Allowed",
                               "%s takes POST only (a JSON body)", rq->gen->path);
            return -1;
        }
        *doc = rq->gen->from_query(rq->query, rq->nquery, p);
    } else if (rq->gen->row_arrays && !pm_api_is_multipart(rq->content_type) &&
               !(rq->ingest && rq->ingest->given)) {
        /* JSON text for a parse that takes row blocks (pm_api/rows.h). */
        if (pm_api_parse_body_rows(rq->body ? rq->body : "", rq->body_len, doc, p) != 0) {
            json_decref(*doc);
            *doc = NULL;
        }
    } else if (pm_api_parse_request_with(rq->body ? rq->body : "", rq->body_len, rq->content_type,
                                         rq->ingest ? rq->ingest : &ingest, doc, p) != 0) {
        json_decref(*doc);
        *doc = NULL;
    }
    if (*doc) return 0;
    if (!pm_api_problem_failed(p))
        pm_api_problem_set(p, 400, "malformed-json", "Malformed request",
                           "the request could not be read");
    return -1;
}

/* The end of a parse that returned rc: 0, or -1 with p saying why. */
static int pm_api__job_parsed(pm_api_job *job, int rc, pm_api_problem *p) {
    if (rc != 0) {
        json_decref(job->canonical);
        job->canonical = NULL;
        if (!pm_api_problem_failed(p))
            pm_api_problem_set(p, 422, "validation", "Invalid request",
                               "the request was refused without a reason");
        return -1;
    }
    if (!job->canonical) {
        pm_api_problem_set(p, 500, "internal", "Internal Server Error",
                           "the %s reader gave no canonical form", job->gen->name);
        return -1;
    }
    return 0;
}

int pm_api_job_parse(pm_api_job *job, const pm_api_generator *gen, const pm_api_limits *lim,
                     pm_arena *arena, const json_t *doc, pm_api_problem *p) {
    *job = (pm_api_job){gen, lim, arena, NULL, NULL};
    return pm_api__job_parsed(job, gen->parse(doc, lim, arena, &job->params, &job->canonical, p), p);
}

int pm_api_job_parse_text(pm_api_job *job, const pm_api_generator *gen, const pm_api_limits *lim,
                          pm_arena *arena, const char *body, size_t len, pm_api_problem *p) {
    *job = (pm_api_job){gen, lim, arena, NULL, NULL};
    if (!gen->parse_text || !body) return 1;
    int rc = gen->parse_text(body, len, lim, arena, &job->params, &job->canonical, p);
    if (rc == 1) {
        json_decref(job->canonical);
        *job = (pm_api_job){gen, lim, arena, NULL, NULL};
        return 1;
    }
    return pm_api__job_parsed(job, rc, p);
}

pm_api_key pm_api_job_key(const pm_api_job *job, const pm_api_output *o, char hex[33]) {
    pm_api_key k = pm_api_cache_key_output(job->gen, job->canonical, o);
    if (hex) pm_api_key_hex(k, hex);
    return k;
}

int pm_api_job_generate(const pm_api_job *job, const volatile int *cancel, pm_scene **scene,
                        pm_api_problem *p) {
    static const volatile int never = 0;
    *scene = NULL;
    if (job->gen->generate(job->params, job->lim, job->arena, cancel ? cancel : &never, scene,
                           p) == 0 &&
        *scene) {
        /* The generator's big scratch given back (a network's overlap
         * check: 5 to 14 MB) goes to the allocator, for the encoder. */
        pm_arena_trim(job->arena);
        return 0;
    }
    *scene = NULL;
    if (!pm_api_problem_failed(p))
        pm_api_problem_set(p, 500, "internal", "Internal Server Error",
                           "the %s generator failed without saying why", job->gen->name);
    return -1;
}

/* 0, or -1 with p set for the encoder's result rc. */
static int pm_api__encoded(const pm_api_job *job, int rc, pm_api_problem *p) {
    if (rc == 0) return 0;
    if (rc == -1) pm_api__out_of_memory(p, "while encoding the result");
    else
        pm_api_problem_set(p, 500, "internal", "Internal Server Error",
                           rc == -3 ? "the %s result could not be written"
                                    : "the %s scene broke the encoder's contract",
                           job->gen->name);
    return -1;
}

int pm_api_job_encode(const pm_api_job *job, const pm_scene *scene, const pm_api_output *o,
                      const char *key_hex, const pm_api_alloc *al, pm_api_buf *out,
                      pm_api_problem *p) {
    return pm_api__encoded(job, pm_api_encode_with(scene, job->gen, key_hex, o, al, out), p);
}

int pm_api_job_stream(const pm_api_job *job, const pm_scene *scene, const pm_api_output *o,
                      const char *key_hex, const pm_api_alloc *al, const pm_api_sink *sink,
                      pm_api_problem *p) {
    return pm_api__encoded(job, pm_api_encode_to(scene, job->gen, key_hex, o, al, sink), p);
}

void pm_api_job_end(pm_api_job *job) {
    json_decref(job->canonical);
    job->canonical = NULL;
}

static void pm_api__stage(const pm_api_run *run, pm_api_stage st, const pm_scene *scene) {
    if (run->stage_done) run->stage_done(run->cls, st, scene);
}

int pm_api_request_run(const pm_api_request *rq, const pm_api_run *run, pm_api_buf *out,
                       pm_api_key *keys, pm_api_problem *p) {
    size_t n = run->noutputs, done = 0;
    for (size_t i = 0; i < n; i++) out[i] = (pm_api_buf){0};
    char (*hex)[33] = calloc(n ? n : 1, sizeof *hex);
    pm_arena *arena = pm_arena_create_with(0, run->arena_alloc);
    json_t *doc = NULL;
    pm_api_job job = {0};
    pm_scene *scene = NULL;
    int rc = -1;
    if (!hex || !arena) {
        pm_api__out_of_memory(p, "");
        goto done;
    }
    pm_arena_set_limit(arena, run->lim->max_arena_bytes);
    /* A plain JSON body goes to the route's fast path first (no document
     * at all); what it does not take is read as ever. */
    bool json = !rq->content_type || !rq->content_type[0] || strstr(rq->content_type, "json");
    int fast = rq->get || !json || pm_api_is_multipart(rq->content_type) ||
                       (rq->ingest && rq->ingest->given)
                   ? 1
                   : pm_api_job_parse_text(&job, rq->gen, run->lim, arena, rq->body, rq->body_len, p);
    if (fast < 0) goto done;
    if (fast == 1) {
        if (pm_api_request_document(rq, &doc, p) != 0) goto done;
        pm_api__stage(run, PM_API_STAGE_DOCUMENT, NULL);
        if (pm_api_job_parse(&job, rq->gen, run->lim, arena, doc, p) != 0) goto done;
    } else {
        pm_api__stage(run, PM_API_STAGE_DOCUMENT, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        pm_api_key k = pm_api_job_key(&job, &run->outputs[i], hex[i]);
        if (k.hi == 0 && k.lo == 0) {
            pm_api__out_of_memory(p, "for the cache key");
            goto done;
        }
        if (keys) keys[i] = k;
    }
    pm_api__stage(run, PM_API_STAGE_PARSE, NULL);
    if (pm_api_job_generate(&job, NULL, &scene, p) != 0) goto done;
    pm_api__stage(run, PM_API_STAGE_GENERATE, scene);
    for (; done < n; done++)
        if (done == 0 && run->sink
                ? pm_api_job_stream(&job, scene, &run->outputs[0], hex[0], run->alloc, run->sink, p) != 0
                : pm_api_job_encode(&job, scene, &run->outputs[done], hex[done], run->alloc, &out[done], p) != 0)
            goto done;
    pm_api__stage(run, PM_API_STAGE_ENCODE, scene);
    rc = 0;
done:
    if (rc != 0)
        for (size_t i = 0; i < done; i++) free(out[i].data), out[i] = (pm_api_buf){0};
    pm_api_job_end(&job);
    json_decref(doc);
    pm_arena_destroy(arena);
    free(hex);
    return rc;
}
