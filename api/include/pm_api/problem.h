#ifndef PM_API_PROBLEM_H
#define PM_API_PROBLEM_H
#include <jansson.h>
#include <stdarg.h>

/* An RFC 9457 problem being built up while a request is parsed and run. It
 * collects every validation error with its JSON pointer, so one response
 * names all the bad fields, not just the first. */
typedef struct pm_api_problem {
    int status;             /* 0 while there is no problem */
    char type[96];          /* urn:procmesh:problem:… */
    const char *title;      /* a static string */
    char detail[512];
    json_t *errors;         /* array of {pointer, message}, or NULL */
    unsigned dropped;       /* field errors past PM_API_MAX_ERRORS, not listed */
} pm_api_problem;

#define PM_API_MAX_ERRORS 50

void pm_api_problem_init(pm_api_problem *p);
void pm_api_problem_free(pm_api_problem *p);
/* Records a validation error (422, type urn:procmesh:problem:validation)
 * at a JSON pointer ("" for the whole document). The first error becomes the
 * detail, written as a path ("arms[2].width must be > 0"). Past
 * PM_API_MAX_ERRORS errors are counted in dropped, not listed. When a
 * non-422 problem is already set, the field error is ignored. */
void pm_api_problem_field(pm_api_problem *p, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets a non-field problem: status, type suffix (e.g. "malformed-json"),
 * title (a static string) and detail. Replaces an earlier problem, field
 * errors included. */
void pm_api_problem_set(pm_api_problem *p, int status, const char *type_suffix,
                        const char *title, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline int pm_api_problem_failed(const pm_api_problem *p) { return p->status != 0; }
/* The application/problem+json body (a new reference, NULL when out of
 * memory); instance is the request id, or NULL to leave it out. When errors
 * were dropped the detail says how many more there were. */
json_t *pm_api_problem_json(const pm_api_problem *p, const char *instance);

/* Appends one reference token to a JSON pointer, escaping ~ and / (RFC
 * 6901). out must hold cap bytes; truncation is reported as -1. */
int pm_api_pointer_join(char *out, size_t cap, const char *base, const char *token);
int pm_api_pointer_index(char *out, size_t cap, const char *base, size_t index);
#endif
