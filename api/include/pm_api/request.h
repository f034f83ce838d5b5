#ifndef PM_API_REQUEST_H
#define PM_API_REQUEST_H
/* One request from its bytes to its output, with no sockets: read the
 * document, validate it (parameters, canonical form, cache key), generate,
 * encode. `procmesh generate` (service/cli.c), the fuzz harnesses
 * (tests/fuzz/pipeline.c) and the benchmarks (bench/pm_bench_request.h)
 * run all of it with pm_api_request_run; the service runs the same stages
 * one by one on its threads, with its cache in between. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/multipart.h"
#include "pm_api/problem.h"
#include "scene/arena.h"

/* What a route receives. */
typedef struct pm_api_request {
    const pm_api_generator *gen;
    bool get;                         /* GET: query; POST: body */
    /* POST: the body and its Content-Type: NULL or a JSON type for JSON
     * (GeoJSON included), multipart/form-data with its boundary for
     * binary arrays (pm_api/multipart.h). A multipart document refers to
     * its float32 parts in body: keep body until pm_api_job_parse is done
     * with the document. */
    const char *body;
    size_t body_len;
    const char *content_type;
    /* POST: how image parts become numbers (?png_scale=, ?png_offset=);
     * NULL: PM_API_INGEST_DEFAULT. */
    const pm_api_ingest *ingest;
    /* GET: the query pairs, percent-decoded, without the service's own
     * ?v= (the output options are skipped by from_query). */
    const pm_api_query_pair *query;
    size_t nquery;
} pm_api_request;

/* The request document of rq, as the route's parse reads it. Returns 0
 * with *doc (a new reference), or -1 with p set: 400 malformed JSON or
 * multipart, 422 (a query value, a binary part), 405 for a query on a
 * POST-only route. */
int pm_api_request_document(const pm_api_request *rq, json_t **doc, pm_api_problem *p);

/* A validated request: the generator's parameters (in the caller's arena)
 * and the canonical form, the input of every output's cache key. */
typedef struct pm_api_job {
    const pm_api_generator *gen;
    const pm_api_limits *lim;
    pm_arena *arena;
    void *params;
    json_t *canonical;                /* owned: pm_api_job_end */
} pm_api_job;

/* Validates doc with gen under lim into *job. Returns 0, or -1 with p set
 * (the generator's 422; a refusal that gives no reason becomes a 422
 * saying so; a parse with no canonical form a 500). */
int pm_api_job_parse(pm_api_job *job, const pm_api_generator *gen, const pm_api_limits *lim,
                     pm_arena *arena, const json_t *doc, pm_api_problem *p);
/* The route's fast path (pm_api_generator.parse_text) on a JSON body:
 * returns 1 when it does not take the body (no fast path, or anything
 * unusual: read the document and call pm_api_job_parse), else what
 * pm_api_job_parse returns for the document of the same body, with the
 * same parameters, keys and problem. */
int pm_api_job_parse_text(pm_api_job *job, const pm_api_generator *gen, const pm_api_limits *lim,
                          pm_arena *arena, const char *body, size_t len, pm_api_problem *p);
/* The cache key of output o of job, and its hex form in hex (may be
 * NULL); {0, 0} when out of memory. */
pm_api_key pm_api_job_key(const pm_api_job *job, const pm_api_output *o, char hex[33]);
/* Runs the generator (cancel may be NULL). Returns 0 with *scene, or -1
 * with p set (a failure that gives no reason becomes a 500). */
int pm_api_job_generate(const pm_api_job *job, const volatile int *cancel, pm_scene **scene,
                        pm_api_problem *p);
/* Encodes scene as output o under key_hex, big buffers from al (NULL:
 * malloc). Returns 0 with *out, or -1 with p set: 503 out of memory (or
 * al refused), 500 a scene that breaks the encoder's contract. */
int pm_api_job_encode(const pm_api_job *job, const pm_scene *scene, const pm_api_output *o,
                      const char *key_hex, const pm_api_alloc *al, pm_api_buf *out,
                      pm_api_problem *p);
/* pm_api_job_encode with the bytes given to sink (pm_api_encode_to), not
 * kept: -1 with p set as there, or a 500 when the sink stopped. */
int pm_api_job_stream(const pm_api_job *job, const pm_scene *scene, const pm_api_output *o,
                      const char *key_hex, const pm_api_alloc *al, const pm_api_sink *sink,
                      pm_api_problem *p);
void pm_api_job_end(pm_api_job *job);

typedef enum pm_api_stage {
    PM_API_STAGE_DOCUMENT,            /* the body or query read */
    PM_API_STAGE_PARSE,               /* validated, every output's key made */
    PM_API_STAGE_GENERATE,            /* the scene made */
    PM_API_STAGE_ENCODE,              /* every output encoded */
} pm_api_stage;

/* How pm_api_request_run runs a request. */
typedef struct pm_api_run {
    const pm_api_limits *lim;         /* its max_arena_bytes caps the one arena */
    const pm_api_output *outputs;     /* noutputs encodings of one scene */
    size_t noutputs;
    /* Optional: called as each stage ends (scene set from GENERATE on). */
    void (*stage_done)(void *cls, pm_api_stage stage, const pm_scene *scene);
    void *cls;
    /* Optional: where the encoder's big buffers come from (NULL: its own,
     * pm_api_job_encode). */
    const pm_api_alloc *alloc;
    /* Optional: where the job arena's blocks come from (NULL: malloc;
     * with its grow set it stands in for malloc, and the arena's
     * accounting is malloc's: pm_arena_allocator). */
    const pm_arena_allocator *arena_alloc;
    /* Optional: outputs[0] goes to sink as it is encoded (out[0] stays
     * empty), e.g. a GLB straight to a file, never assembled in memory. */
    const pm_api_sink *sink;
} pm_api_run;

/* rq through every stage in one arena: out[i] gets run->outputs[i] (the
 * caller frees each data) and, when keys is not NULL, keys[i] its cache
 * key. Returns 0, or -1 with p set to what the HTTP route answers (4xx
 * refused, 503 out of memory or past the job's memory, 500 a broken
 * contract) and every out empty. */
int pm_api_request_run(const pm_api_request *rq, const pm_api_run *run, pm_api_buf *out,
                       pm_api_key *keys, pm_api_problem *p);
#endif
