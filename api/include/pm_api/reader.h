#ifndef PM_API_READER_H
#define PM_API_READER_H
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pm_api/generator.h"
#include "pm_api/problem.h"

/* Reading a request document: typed fields, every error with its JSON
 * pointer, and the canonical form (the input of the cache key), all in one
 * pass. Every generator's parse() is written with these calls.
 *
 * A pm_api_node is a cursor on one object or array of the input. Readers
 * take (node, key, flags, constraints, default, out). On an object node, key
 * names the member; on an array node, key is NULL and each call reads the
 * NEXT element (elements are always required). A reader that fails records
 * a 422 error at the field's pointer, stores the default in *out, returns -1
 * and lets the caller go on: one response lists ALL bad fields (up to
 * PM_API_MAX_ERRORS). So read everything, then check the problem once.
 *
 * The canonical form is built as fields are read: every field explicit
 * (defaults filled), reals as JSON reals (-0 as 0), integers as integers,
 * enums and strings as strings, seeds as integers (or decimal strings above
 * 2^63-1), objects that are off as null. Key order, number spelling (1, 1.0,
 * 1e0) and explicitly stated defaults do not change it. pm_api_end reports
 * every member of an input object that was never read as "unknown field",
 * so a typo never passes silently.
 *
 * Example (a parse() of a generator):
 *
 *   static const char *const kinds[] = {"cross", "tee", NULL};
 *   pm_api_node root, arms, arm, sw;
 *   pm_api_begin(&root, body, prob);
 *   pm_api_u64(&root, "seed", 0, 0, &p->seed);
 *   pm_api_enum(&root, "kind", 0, kinds, 0, &p->kind);
 *   pm_api_num(&root, "radius", 0, PM_API_GT(0), 6.0, &p->radius);
 *   size_t n = pm_api_array(&root, "arms", PM_API_REQUIRED,
 *                           PM_API_ILIMIT(3, lim->max_arms, "max_arms"), &arms);
 *   for (size_t i = 0; i < n; i++) {
 *       pm_api_object(&arms, NULL, PM_API_REQUIRED, &arm);     // "/arms/<i>"
 *       pm_api_vec(&arm, "dir", PM_API_REQUIRED, 2, 2, PM_API_ANY, NULL, p->arm[i].dir, NULL);
 *       pm_api_int(&arm, "lanes", 0, PM_API_IRANGE(1, 8), 2, &p->arm[i].lanes);
 *       if (pm_api_object(&arm, "sidewalk", PM_API_NULLABLE, &sw) == 1) {
 *           pm_api_num(&sw, "width", 0, PM_API_GT(0), 2.0, &p->arm[i].sidewalk);
 *           pm_api_end(&sw);
 *       }
 *       pm_api_end(&arm);                                      // unknown keys
 *   }
 *   pm_api_end(&arms);
 *   *canonical = pm_api_finish(&root);    // NULL when anything failed
 *   return *canonical ? 0 : -1;
 */

/* ---- parsing the body ---- */

/* Parses a request body with duplicate keys rejected. Returns 0 with *out a
 * new reference to an object. Otherwise -1 with p set: 400
 * urn:procmesh:problem:malformed-json (detail names line and column, and the
 * key for a duplicate), or 422 at pointer "" when the top level is valid
 * JSON but not an object. Integers beyond int64 and reals beyond double are
 * malformed (400): send big seeds as decimal strings. */
int pm_api_parse_body(const char *buf, size_t len, json_t **out, pm_api_problem *p);
/* The same with arrays of equally long short numeric arrays read as row
 * blocks (pm_api/rows.h), for a generator whose parse takes them
 * (pm_api_generator.row_arrays): the same document for its readers. */
int pm_api_parse_body_rows(const char *buf, size_t len, json_t **out, pm_api_problem *p);

/* ---- constraints ---- */

/* A range for real numbers; infinite bounds mean none. limit, when set,
 * names the configured limit behind the upper bound in the message. */
typedef struct pm_api_range {
    double lo, hi;
    bool lo_open, hi_open;     /* exclusive bounds */
    const char *limit;
} pm_api_range;
#define PM_API_ANY ((pm_api_range){-HUGE_VAL, HUGE_VAL, false, false, NULL})
#define PM_API_RANGE(a, b) ((pm_api_range){(a), (b), false, false, NULL}) /* [a,b] */
#define PM_API_GT(a) ((pm_api_range){(a), HUGE_VAL, true, false, NULL})   /* > a */
#define PM_API_GE(a) ((pm_api_range){(a), HUGE_VAL, false, false, NULL})  /* >= a */
#define PM_API_LT(b) ((pm_api_range){-HUGE_VAL, (b), false, true, NULL})  /* < b */
#define PM_API_LE(b) ((pm_api_range){-HUGE_VAL, (b), false, false, NULL}) /* <= b */

/* An inclusive integer range (also used for array lengths); limit as above. */
typedef struct pm_api_irange {
    int64_t lo, hi;
    const char *limit;
} pm_api_irange;
#define PM_API_IRANGE(a, b) ((pm_api_irange){(a), (b), NULL})
#define PM_API_ILIMIT(a, b, name) ((pm_api_irange){(a), (b), (name)})
#define PM_API_IANY PM_API_IRANGE(INT64_MIN, INT64_MAX)

/* flags */
enum {
    PM_API_REQUIRED = 1u << 0,  /* absent is an error ("is required") */
    PM_API_NULLABLE = 1u << 1,  /* objects: null means off */
    PM_API_ABSENT_OFF = 1u << 2, /* objects with PM_API_NULLABLE: absent is off too
                                    (without it, absent means "on with defaults") */
};

/* ---- the cursor ---- */

#define PM_API_POINTER_MAX 256

typedef struct pm_api_node {
    const json_t *in;          /* input object/array; NULL: absent, read defaults */
    json_t *canon;             /* canonical object/array being built (borrowed) */
    pm_api_problem *prob;
    size_t len, next;          /* arrays: element count, next element to read */
    bool is_array;
    bool dead;                 /* after an error on the node itself: reads give defaults */
    const char *peek_key;      /* pm_api_peek's key and value, for the next read of it */
    const json_t *peek_v;
    bool read_present;         /* objects: the last read found its member in the input */
    size_t known;              /* objects: input members read into the canonical form */
    char ptr[PM_API_POINTER_MAX];
} pm_api_node;

/* The input value of member key of object node n (NULL: absent, or n is
 * no live object), without reading it. The next read of that key (the
 * same pointer) then takes it without a second lookup. */
const json_t *pm_api_peek(pm_api_node *n, const char *key);

/* Starts reading document doc (an object; anything else is a 422 at "").
 * Always pair with pm_api_finish, which owns the canonical form. */
void pm_api_begin(pm_api_node *root, const json_t *doc, pm_api_problem *p);
/* Ends the root (reports its unknown keys). Returns the canonical form as a
 * new reference, or NULL when any error was recorded (then p says why). */
json_t *pm_api_finish(pm_api_node *root);

/* Opens a nested object as child. Returns 1 when it is to be read (present,
 * or absent and optional: then every read gives its default), 0 when it is
 * off (PM_API_NULLABLE: null, or absent with PM_API_ABSENT_OFF; canonical
 * null; do not read child), -1 on error (child reads then do nothing).
 * Call pm_api_end(child) after reading it (when the result was 1). */
int pm_api_object(pm_api_node *n, const char *key, unsigned flags, pm_api_node *child);
/* Opens an array as child and returns its element count (0 when absent
 * and optional, or when it is not an array). The length must be in len;
 * an error names the bound ("must have at most 16 items (limit
 * max_arms)"), and the count returned is then still the elements there,
 * at most len.hi (never more than a buffer sized by the bound holds), so
 * their errors are reported too. Read every element in order, then
 * pm_api_end(child). */
size_t pm_api_array(pm_api_node *n, const char *key, unsigned flags, pm_api_irange len,
                    pm_api_node *child);
/* Objects: records every input member that was not read as "unknown field".
 * Arrays: asserts that every element was read. */
void pm_api_end(pm_api_node *child);

/* Records a 422 error at member key of n (key NULL: at n itself), for
 * checks that involve several fields ("must be less than max_width").
 * Nothing is recorded on a node that already failed. */
void pm_api_fail(pm_api_node *n, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- scalar readers: 0 on success, -1 (error recorded, *out = def) ---- */

/* A finite number in r. Integers and reals are both accepted; canonical is
 * a real. */
int pm_api_num(pm_api_node *n, const char *key, unsigned flags, pm_api_range r, double def,
               double *out);
/* An integer in r. A real with an integral value (3.0, 3e0) is accepted as
 * that integer, up to 2^53 in magnitude; 2.5 is "must be an integer".
 * Canonical is an integer. */
int pm_api_int(pm_api_node *n, const char *key, unsigned flags, pm_api_irange r, int64_t def,
               int64_t *out);
/* A 64-bit seed: a JSON integer >= 0, an integral real up to 2^53, or a
 * decimal string of digits (needed above 2^63-1, accepted for any value).
 * Canonical: an integer up to 2^63-1, else the decimal string. */
int pm_api_u64(pm_api_node *n, const char *key, unsigned flags, uint64_t def, uint64_t *out);
int pm_api_bool(pm_api_node *n, const char *key, unsigned flags, bool def, bool *out);
/* A string from names (NULL-terminated); *out is its index. def is an index. */
int pm_api_enum(pm_api_node *n, const char *key, unsigned flags, const char *const *names,
                int def, int *out);
/* A string of at most max_len bytes (UTF-8), copied to out (cap > max_len).
 * def may be NULL only with PM_API_REQUIRED. */
int pm_api_str(pm_api_node *n, const char *key, unsigned flags, size_t max_len,
               const char *def, char *out, size_t cap);
/* A numeric vector of min_n..max_n finite numbers, each in r, such as
 * [x, z] (2, 2) or a polyline's [x, y, z] (3, 3); out holds max_n. def
 * (min_n values) may be NULL only with PM_API_REQUIRED. *count (may be
 * NULL) gets the length read. Canonical: an array of reals. Every bad
 * element is reported at its own pointer (also when the length is wrong).
 * Fit for large arrays (a heightfield of 10^6 numbers): a pointer is only
 * formatted for an element in error and input reals are shared with the
 * canonical form, about 30 ns per number. */
int pm_api_vec(pm_api_node *n, const char *key, unsigned flags, size_t min_n, size_t max_n,
               pm_api_range r, const double *def, double *out, size_t *count);
/* pm_api_vec for a float32 bulk array (a binary upload, pm_api/bulk.h),
 * which must be the value at key: its count values, checked as pm_api_vec
 * checks them (with the same messages and pointers), are copied into out
 * as float32 (the same values at half the bytes), with the same canonical
 * form as pm_api_vec gives them (the same key). A canonical bulk array
 * refers to out (pm_api_bulk_f32_ref): out must outlive the canonical
 * form's use (an arena freed after pm_api_job_end). Returns 0, or -1 with
 * the errors set. */
int pm_api_vec_f32(pm_api_node *n, const char *key, size_t count, pm_api_range r, float *out);

/* An array of len.lo..len.hi vectors of cols numbers each, in r (a road's
 * [[x, y, z], ...]), read as pm_api_array and pm_api_vec per element read
 * it, with the same errors and pointers. Returns the vectors (count x
 * cols doubles, in arena; room for one vector when count is 0), *count
 * the vectors read; NULL when out of memory (a 503 is then in the
 * problem). The canonical form is a row block of the values (pm_api/
 * rows.h: hashed in binary): a row block read with every value good is
 * taken in one pass and shared, JSON arrays give a new one. */
double *pm_api_rows(pm_api_node *n, const char *key, unsigned flags, pm_api_irange len,
                    size_t cols, pm_api_range r, pm_arena *arena, size_t *count);

/* ---- GET query strings ---- */

typedef enum pm_api_qtype {
    PM_API_Q_INT,      /* "12" -> 12 (an integer literal) */
    PM_API_Q_U64,      /* "18446744073709551615" -> integer, or decimal string above 2^63-1 */
    PM_API_Q_NUM,      /* "2.5" -> 2.5 */
    PM_API_Q_STR,      /* "organic" -> "organic" */
    PM_API_Q_PAIR,     /* "10x20" -> [10, 20] (each side a number; "WxD") */
} pm_api_qtype;

/* One accepted query parameter; it becomes the member of the same name. */
typedef struct pm_api_qparam {
    const char *name;
    pm_api_qtype type;
} pm_api_qparam;

/* Builds a request document from query pairs by table (nt entries), for a
 * generator's from_query. Returns a new object, or NULL with p set: 422 at
 * "/<name>" for a value of the wrong shape ("must be an integer"), for a
 * parameter given twice, and for a parameter not in the table ("unknown
 * query parameter"). format, compress, quantize and metadata are skipped
 * (the service reads them: pm_api_output_param). Ranges are
 * left to parse(), whose pointers "/<name>" then name the parameter too. */
json_t *pm_api_query_doc(const pm_api_qparam *table, size_t nt, const pm_api_query_pair *q,
                         size_t n, pm_api_problem *p);
#endif
