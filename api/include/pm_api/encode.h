#ifndef PM_API_ENCODE_H
#define PM_API_ENCODE_H
#include <stddef.h>
#include "scene/scene.h"
#include "pm_api/generator.h"

typedef enum pm_api_format {
    PM_API_FMT_JSON = 0,   /* application/json: the JSON mesh (DESIGN.md 3) */
    PM_API_FMT_GLTF = 1,   /* model/gltf+json, buffer as a base64 data URI */
    PM_API_FMT_GLB = 2,    /* model/gltf-binary */
} pm_api_format;

const char *pm_api_format_name(pm_api_format f);   /* "json", "gltf", "glb" */
const char *pm_api_format_mime(pm_api_format f);

/* Chooses the output format: ?format= wins (query_format may be NULL),
 * else the Accept header (may be NULL: JSON), honouring q-values and
 * wildcards. Returns 0 with *out set; -1 when ?format= names no format
 * (a 422 on /format); -2 when Accept allows none of the three (406). */
int pm_api_negotiate(const char *query_format, const char *accept, pm_api_format *out);

/* A malloc'd byte buffer; the caller frees data. */
typedef struct pm_api_buf { unsigned char *data; size_t len; } pm_api_buf;

/* Encodes a scene in format f (docs/api.md describes each). key_hex (32 hex
 * digits, or NULL for "") is written into the JSON mesh's "key" and the
 * glTF's scene.extras. Returns 0 with out set; -1 when out of memory; -2
 * when the scene breaks its contract (a non-finite number, an index past
 * its primitive's vertices, an index count not a multiple of 3): a
 * generator bug, a 500. Output is byte-identical for identical input. */
int pm_api_encode(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                  pm_api_format f, pm_api_buf *out);
#endif
