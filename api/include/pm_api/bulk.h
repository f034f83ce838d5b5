#ifndef PM_API_BULK_H
#define PM_API_BULK_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Bulk arrays: a long array of numbers (a heightfield, a point list) held
 * as one block of doubles instead of one jansson node per number.
 *
 * A bulk array is a jansson string whose bytes are an 8-byte tag followed
 * by the doubles in host (little-endian) order. The request readers store
 * -0 as 0 (every reader makes it 0), so that pm_api_vec's canonical array
 * can share the input's block instead of copying it. The tag starts with byte
 * 0xFF, which never occurs in UTF-8, and every string read from a request
 * is checked UTF-8: no request text can forge one. Only the request
 * readers (pm_api_parse_body, pm_api_parse_request) create them in input
 * documents, and only pm_api_vec in canonical forms; the readers (reader.h)
 * accept a bulk array wherever a JSON array of numbers is accepted, with
 * the same messages and pointers. The cache key hashes a canonical bulk
 * array as its doubles (docs/road.md "Binary heightfields"), not as text. */

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
 * reads either kind as doubles; the canonical form hashes both as the
 * doubles they are, under pm_api_bulk_tag. */
extern const char pm_api_bulk_tag_f32[PM_API_BULK_TAG_LEN];

/* A new bulk array of the n doubles at v, or NULL (out of memory). */
json_t *pm_api_bulk_new(const double *v, size_t n);
/* A new bulk array from buf, whose first PM_API_BULK_TAG_LEN bytes are
 * scratch (the tag is written there) followed by n doubles. */
json_t *pm_api_bulk_adopt(char *buf, size_t n);
/* The same for n float32 values after the scratch tag bytes; they must
 * hold no -0 (as the readers make -0 0). */
json_t *pm_api_bulk_adopt_f32(char *buf, size_t n);
bool pm_api_bulk_is(const json_t *j);
/* true for a bulk array of float32 values. */
bool pm_api_bulk_is_f32(const json_t *j);
/* Number of values in bulk array j (0 when j is not one). */
size_t pm_api_bulk_len(const json_t *j);
/* Values [first, first + n) of bulk array j as doubles into out. */
void pm_api_bulk_get(const json_t *j, size_t first, size_t n, double *out);
/* The values' bytes: doubles, or floats for a float32 bulk array
 * (unaligned: read them with pm_api_bulk_get or pm_api_bulk_at). */
const unsigned char *pm_api_bulk_data(const json_t *j);
double pm_api_bulk_at(const json_t *j, size_t i);
/* A JSON array of reals with the same values (for readers that walk an
 * array element by element), or NULL. */
json_t *pm_api_bulk_expand(const json_t *j);
#endif
