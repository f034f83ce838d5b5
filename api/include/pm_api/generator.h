#ifndef PM_API_GENERATOR_H
#define PM_API_GENERATOR_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/scene.h"
#include "pm_api/problem.h"

/* The limits every generator honours; the service fills them from its
 * configuration (flags / PROCMESH_* variables). */
typedef struct pm_api_limits {
    uint32_t max_arms;          /* junction arms */
    uint32_t max_points;        /* road control points, grid points */
    uint32_t max_rooms;         /* dungeon rooms */
    uint32_t max_grid_size;     /* organic grid size */
    uint64_t max_vertices;      /* output vertices over all primitives */
    size_t max_arena_bytes;     /* memory one job may take */
} pm_api_limits;

void pm_api_limits_default(pm_api_limits *l);

/* One query-string pair of a GET request, already percent-decoded. */
typedef struct pm_api_query_pair { const char *key, *value; } pm_api_query_pair;

/* A generator as the service sees it: parse + validate, then generate.
 * Everything it allocates for one request lives in that request's arena. */
typedef struct pm_api_generator {
    const char *name;      /* "junction": the JSON mesh's "generator" field */
    const char *version;   /* bumped whenever output changes; in the cache key */
    const char *path;      /* "/v1/junctions" */

    /* Validates body, fills defaults. On success returns 0, sets *params
     * (in arena) and *canonical (a new reference: the request with every
     * field explicit and normalized, the input of the cache key). On
     * failure returns -1 with prob set (422 with pointers). */
    int (*parse)(const json_t *body, const pm_api_limits *lim, pm_arena *arena,
                 void **params, json_t **canonical, pm_api_problem *prob);

    /* Optional fast path (NULL: none): parse straight from a JSON body's
     * bytes, with no document. Returns 1 when it does not take the body
     * (anything outside its common case: the caller then reads the
     * document and calls parse, which gives every error as ever);
     * otherwise what parse returns for the same body, with the same
     * params, and a canonical form with the same dump (and so the same
     * cache key). */
    int (*parse_text)(const char *body, size_t len, const pm_api_limits *lim, pm_arena *arena,
                      void **params, json_t **canonical, pm_api_problem *prob);

    /* GET support (NULL when the route is POST-only): turns query pairs into
     * a request document for parse, or returns NULL with prob set (422 with
     * pointers naming the query parameter, e.g. "/seed"). */
    json_t *(*from_query)(const pm_api_query_pair *q, size_t n, pm_api_problem *prob);

    /* Runs the generator on parsed params. *cancel, when raised by another
     * thread, asks the job to stop (the deadline passed). Returns 0 with
     * *scene set, or -1 with prob set: 422 for input that has no valid
     * geometry (naming the fields involved), 503 for a cancelled job. The
     * scene's metadata carries the generator's own fields. */
    int (*generate)(const void *params, const pm_api_limits *lim, pm_arena *arena,
                    const volatile int *cancel, pm_scene **scene, pm_api_problem *prob);

    /* What ?metadata=summary leaves out: NULL-terminated metadata paths
     * ("quads", "terrain.heights", "nodes[].mouths": members joined by
     * ".", "[]" for every element of an array), at most 16; NULL keeps all. */
    const char *const *summary_omit;

    /* parse takes row blocks (pm_api/rows.h) from JSON bodies: every input
     * array is read with the reader.h calls, which accept them. */
    bool row_arrays;
} pm_api_generator;

/* Every generator, NULL-terminated, in route order. */
extern const pm_api_generator *const pm_api_generators[];
const pm_api_generator *pm_api_find_generator(const char *path);
#endif
