#ifndef PM_API_KEY_H
#define PM_API_KEY_H
#include <jansson.h>
#include <stdint.h>
#include "pm_api/encode.h"
#include "pm_api/generator.h"

/* The cache key: a 128-bit XXH3 hash of (service version, generator name and
 * version, route, canonical parameters serialized with sorted keys, format).
 * Two requests that differ only in key order, number spelling or defaults
 * they state explicitly have equal canonical forms, hence equal keys. */
typedef struct pm_api_key { uint64_t hi, lo; } pm_api_key;

/* The key of one request. Returns {0, 0} only when out of memory (the
 * canonical form could not be serialized): such a result must not be cached
 * (a real digest of zero is remapped, so {0, 0} never names an entry). */
pm_api_key pm_api_cache_key(const pm_api_generator *gen, const json_t *canonical,
                            pm_api_format f);
/* The key of one request with output options: equal to pm_api_cache_key
 * for the default options (so existing keys and ETags stay), another key
 * for any other compress / quantize / metadata choice. */
pm_api_key pm_api_cache_key_output(const pm_api_generator *gen, const json_t *canonical,
                                   const pm_api_output *o);
/* Writes a canonical form to cb as the key hashes it: byte for byte what
 * json_dump_callback writes with JSON_SORT_KEYS | JSON_COMPACT |
 * JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY, except that -0 is written as
 * 0. Reals take an exact integer path instead of printf (about 10 times
 * faster; large inline arrays are mostly reals). Returns 0, or -1 when cb
 * fails, on out of memory, or on a cycle. */
int pm_api_canonical_dump(const json_t *canonical, json_dump_callback_t cb, void *data);
/* 32 lowercase hex digits and a NUL. */
void pm_api_key_hex(pm_api_key k, char out[33]);
#endif
