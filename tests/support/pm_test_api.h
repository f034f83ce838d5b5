#ifndef PM_TEST_API_H
#define PM_TEST_API_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "scene/arena.h"
#include "scene/scene.h"
#include "pm_api/generator.h"
#include "pm_api/problem.h"

/* One request run through a generator the way the service runs it, for the
 * api tests: JSON text -> parse -> (optionally) generate. Everything lives
 * in the run's own arena; pm_test_api_done frees it all. */
typedef struct pm_test_api_run {
    const pm_api_generator *gen;
    pm_arena *arena;
    pm_api_problem prob;
    void *params;         /* parse's output, in arena */
    json_t *canon;        /* canonical form (owned), NULL unless parsed */
    char *canon_text;     /* canon dumped compact with sorted keys, or NULL */
    pm_scene *scene;      /* generate's output, in arena */
    int rc;               /* the last stage's result: parse's, then generate's */
    bool parsed, generated;
} pm_test_api_run;

/* Starts a run and parses text (which must be valid JSON: the test fails
 * otherwise) with gen under lim (NULL: pm_api_limits_default). A parse
 * refusal is not a test failure: look at rc / parsed / prob. */
void pm_test_api_parse(pm_test_api_run *r, const pm_api_generator *gen, const char *text,
                       const pm_api_limits *lim);

/* Generates from a parsed run (not cancelled) under lim (NULL: defaults);
 * sets rc, generated, scene, prob. */
void pm_test_api_generate(pm_test_api_run *r, const pm_api_limits *lim);

/* pm_test_api_parse, then pm_test_api_generate when the request parsed. */
void pm_test_api_build(pm_test_api_run *r, const pm_api_generator *gen, const char *text,
                       const pm_api_limits *lim);

/* The golden-hash value of a request: text built with gen under default
 * limits (the test fails unless it parses and generates), encoded as GLB
 * with its own cache key, hashed with XXH3-64. */
uint64_t pm_test_api_glb_hash(const pm_api_generator *gen, const char *text);

/* A golden GLB hash: a request and the hash its output must have. */
typedef struct pm_test_golden { const char *name, *body; uint64_t hash; } pm_test_golden;

/* Checks every golden (built twice: the runs must agree). With the
 * environment variable print_env set to "print" it prints the hashes to
 * paste instead of checking them. */
void pm_test_api_check_goldens(const pm_api_generator *gen, const pm_test_golden *g, size_t n,
                               const char *print_env);

/* Frees everything the run holds. */
void pm_test_api_done(pm_test_api_run *r);

/* The bytes pm_api_canonical_dump writes for canon (what the cache key
 * hashes: bulk arrays in binary), in a new buffer of *len bytes. */
char *pm_test_api_canonical_bytes(const json_t *canon, size_t *len);

/* The message of the first error recorded at pointer, or NULL. */
const char *pm_test_api_msg_at(const pm_api_problem *p, const char *pointer);

/* Whether p lists an error at pointer whose message contains word (any
 * message when word is NULL). */
bool pm_test_api_has_error(const pm_api_problem *p, const char *pointer, const char *word);

/* Asserts r's problem is a 422 with an error at pointer containing word
 * (NULL: any); what names the request in failure messages. */
void pm_test_api_assert_422(const pm_test_api_run *r, const char *what, const char *pointer,
                            const char *word);

/* Asserts body is refused with -1 and a 422 naming pointer (message
 * containing word, NULL: any): by parse alone, or, when generate is true,
 * by parse or generate. */
void pm_test_api_expect_422(const pm_api_generator *gen, const char *body, const pm_api_limits *lim,
                            bool generate, const char *pointer, const char *word);
#endif
