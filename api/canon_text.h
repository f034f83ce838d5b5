#ifndef PM_API_CANON_TEXT_H
#define PM_API_CANON_TEXT_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "json_fast.h"

/* For readers that write the canonical text themselves, straight from the
 * request's bytes (api/req_network_fast.c), instead of building a tree. */

/* Room a real's canonical text may take (pm_api__canon_real_text). */
#define PM_API_CANON_REAL_ROOM 40

/* Writes x as pm_api_canonical_dump writes a real (jansson's "%.17g" with
 * its touch-ups, -0 as 0) into out (PM_API_CANON_REAL_ROOM bytes, not
 * terminated). Returns the length, 0 when out of memory. */
size_t pm_api__canon_real_text(double x, char *out);

/* The same text for x read from token t (pm_api__json_number_tok): for a
 * short token, from its own digits and the few that the exact binary value
 * adds (no general 17-digit print); anything else as above. */
size_t pm_api__canon_real_tok(double x, const pm_api_numtok *t, char *out);

/* A canonical form given as its own dump: a string of this 8-byte tag
 * (its first byte, 0xFF, never occurs in JSON text) and the dump's bytes,
 * which pm_api_canonical_dump writes as they are, so the cache key is the
 * one the tree would give. */
#define PM_API_CANON_TEXT_TAG_LEN 8
extern const char pm_api__canon_text_tag[PM_API_CANON_TEXT_TAG_LEN];
bool pm_api__canon_text_is(const json_t *j);
#endif
