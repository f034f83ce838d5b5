#ifndef PM_API_BULK_H
#define PM_API_BULK_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Bulk arrays: a long array of numbers (a heightfield, a point list) held
 * as one block of doubles instead of one jansson node per number.
 *
 * A bulk array is a jansson string whose bytes are an 8-byte tag followed
 * by the doubles in host (little-endian) order. pm_api_vec's canonical
 * array shares the input's block instead of copying it when the block
 * holds no -0 (the canonical zero is 0). The tag starts with byte
 * 0xFF, which never occurs in UTF-8, and every string read from a request
 * is checked UTF-8: no request text can forge one. Only the request
 * readers (pm_api_parse_body, pm_api_parse_request) create them in input
 * documents, and only pm_api_vec in canonical forms; the readers (reader.h)
 * accept a bulk array wherever a JSON array of numbers is accepted, with
 * the same messages and pointers. The cache key hashes a canonical bulk
 * array as its binary values (docs/road.md "Binary heightfields"), not as
 * text: as float32 when every value is one, else as doubles. */

/* Arrays of at least this many numbers are read into bulk form. */
#define PM_API_BULK_PARSE_MIN 64
/* pm_api_vec writes a canonical array of at least this many numbers in
 * bulk form (hashed in binary); shorter ones stay JSON reals, so keys of
 * requests without large arrays are unchanged. */
#define PM_API_BULK_CANON_MIN 1024

#define PM_API_BULK_TAG_LEN 8
extern const char pm_api_bulk_tag[PM_API_BULK_TAG_LEN];
/* The tag of a bulk array of float32 values (binary uploads: half the
 * bytes to hold, and no conversion until they are read). Everything below
 * reads either kind as doubles. The canonical form hashes a bulk array
 * whose values are all float32 (of either kind) as float32 under this
 * tag, any other as doubles under pm_api_bulk_tag: the same values, the
 * same key, and no double that is not a float32 can meet its rounding. */
extern const char pm_api_bulk_tag_f32[PM_API_BULK_TAG_LEN];

/* A new bulk array of the n doubles at v, or NULL (out of memory). */
json_t *pm_api_bulk_new(const double *v, size_t n);
/* A new bulk array from buf, whose first PM_API_BULK_TAG_LEN bytes are
 * scratch (the tag is written there) followed by n doubles. */
json_t *pm_api_bulk_adopt(char *buf, size_t n);
/* The same for n float32 values after the scratch tag bytes. */
json_t *pm_api_bulk_adopt_f32(char *buf, size_t n);
/* A float32 bulk array that refers to the n values at data (unaligned,
 * little-endian) instead of holding them: nothing is copied. data must
 * stay valid and unchanged while the array is read (a multipart body's
 * float32 part: docs/road.md "Binary heightfields"); nothing writes
 * through the array. NULL when out of memory. */
json_t *pm_api_bulk_f32_ref(const void *data, size_t n);
/* true for a bulk array made by pm_api_bulk_f32_ref: share it with
 * nothing that outlives data. */
bool pm_api_bulk_is_ref(const json_t *j);
bool pm_api_bulk_is(const json_t *j);
/* true for a bulk array of float32 values (held or referred to). */
bool pm_api_bulk_is_f32(const json_t *j);
/* Number of values in bulk array j (0 when j is not one). */
size_t pm_api_bulk_len(const json_t *j);
/* Values [first, first + n) of bulk array j as doubles into out. */
void pm_api_bulk_get(const json_t *j, size_t first, size_t n, double *out);
/* pm_api_bulk_get_checked's answer: every value is within [lo, hi] (so
 * finite, as the bounds are), and some value was -0. */
#define PM_API_BULK_IN_RANGE 1u
#define PM_API_BULK_NEG_ZERO 2u
/* pm_api_bulk_get with -0 made 0 and every value checked against the
 * finite bounds [lo, hi] in the same pass (one read of the block):
 * returns PM_API_BULK_IN_RANGE when all are within them (NaN never is),
 * or'ed with PM_API_BULK_NEG_ZERO when any was -0. */
unsigned pm_api_bulk_get_checked(const json_t *j, size_t first, size_t n, double lo, double hi,
                                 double *out);
/* The same for a float32 bulk array j, whose values are copied into out
 * as float32 (the same values: no rounding) with -0 made 0 there, in one
 * pass; j itself is only read. */
unsigned pm_api_bulk_f32_checked(const json_t *j, double lo, double hi, float *out);
/* true when every value of bulk array j is exactly a float32 (always so
 * for a float32 array): the cache key then hashes the values as float32,
 * whichever way they came (pm_api_canonical_dump). */
bool pm_api_bulk_f32_exact(const json_t *j);
/* Values [first, first + n) of bulk array j, which pm_api_bulk_f32_exact
 * says is exact, as float32 into out. */
void pm_api_bulk_get_f32(const json_t *j, size_t first, size_t n, float *out);
/* Writes every -0 of bulk array j (not a reference) as 0, in place: no
 * reader tells them apart (all read -0 as 0), so an input bulk array so
 * made canonical can be shared by the canonical form. */
void pm_api_bulk_zero_neg0(const json_t *j);
/* The values' bytes: doubles, or floats for a float32 bulk array
 * (unaligned: read them with pm_api_bulk_get or pm_api_bulk_at). */
const unsigned char *pm_api_bulk_data(const json_t *j);
double pm_api_bulk_at(const json_t *j, size_t i);
/* A JSON array of reals with the same values (for readers that walk an
 * array element by element), or NULL. */
json_t *pm_api_bulk_expand(const json_t *j);
#endif
