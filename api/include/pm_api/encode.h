#ifndef PM_API_ENCODE_H
#define PM_API_ENCODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---- the representation options beside the format (docs/api.md) ---- */

typedef enum pm_api_compress {
    PM_API_COMPRESS_NONE = 0,
    PM_API_COMPRESS_MESHOPT = 1,  /* glTF buffer views with EXT_meshopt_compression */
} pm_api_compress;

typedef enum pm_api_metadata {
    PM_API_META_FULL = 0,         /* every metadata field */
    PM_API_META_SUMMARY = 1,      /* counts, warnings, seams, ids: bulk arrays left out */
    PM_API_META_NONE = 2,         /* no metadata object at all */
} pm_api_metadata;

/* Everything that decides a response's bytes besides the request body: the
 * format and the ?compress=, ?quantize=, ?metadata= options. Part of the
 * cache key and of the service's request memo. */
/* The compact glTF encoder's version (?compress=, ?quantize=): part of
 * the cache key of those outputs, bumped when their bytes change. */
#define PM_API_COMPACT_VERSION "2"

typedef struct pm_api_output {
    pm_api_format format;
    pm_api_compress compress;
    bool quantize;                /* KHR_mesh_quantization */
    pm_api_metadata metadata;
} pm_api_output;

/* The defaults: the given format, no compression, float vertices, full
 * metadata. */
pm_api_output pm_api_output_default(pm_api_format f);

/* Whether a query parameter name is one the service reads itself (format,
 * compress, quantize, metadata), so generators' from_query skip it. */
bool pm_api_output_param(const char *name);

/* Reads the option values (each may be NULL: its default) into o, whose
 * format is already set. Values are exact lowercase enum words. Returns 0,
 * or -1 with p holding a 422 naming /compress, /quantize or /metadata (a
 * bad value, or compress/quantize asked of the JSON mesh). */
int pm_api_output_parse(const char *compress, const char *quantize, const char *metadata,
                        pm_api_output *o, pm_api_problem *p);

/* A small integer that differs for any two different outputs (the
 * service's request memo digests it with the route). */
uint32_t pm_api_output_code(const pm_api_output *o);

/* pm_api_encode with every option. */
int pm_api_encode_output(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                         const pm_api_output *o, pm_api_buf *out);

/* Where the encoder's big buffers come from: the output as it grows, the
 * binary buffer, the GLB assembly. By default realloc and free. A caller
 * that accounts memory supplies its own; realloc may refuse (NULL, the
 * old block untouched), which ends the encoding early as out of memory,
 * so an output past the caller's limit is never built. realloc with p NULL
 * is a new block (old_size 0); sizes are the blocks' exact sizes. room,
 * when set, tells how far block p of size bytes can grow without moving (at
 * least size; 0: not known): a growing output then takes that room before
 * it asks for a block elsewhere (a page pool's free space reused, not
 * fresh pages at its top). */
typedef struct pm_api_alloc {
    void *(*realloc)(void *ctx, void *p, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *p, size_t size);
    void *ctx;
    size_t (*room)(void *ctx, const void *p, size_t size);
} pm_api_alloc;

/* pm_api_encode_output with its big buffers from *al (NULL: malloc). On
 * success out->data is a block of al's of exactly out->len (> 0) bytes, for
 * al->free(ctx, out->data, out->len). -1 also when al refused. */
int pm_api_encode_with(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                       const pm_api_output *o, const pm_api_alloc *al, pm_api_buf *out);

/* Where an output can go instead of a buffer: write gets its bytes in
 * order, in pieces valid only during the call, and returns 0, or -1 to
 * stop (it failed to pass them on). total (may be NULL) is told the
 * output's whole length once, before the first write: a file can be
 * given its size in one allocation instead of page by page as it grows. */
typedef struct pm_api_sink {
    int (*write)(void *ctx, const void *data, size_t len);
    void *ctx;
    void (*total)(void *ctx, size_t len);
} pm_api_sink;

/* pm_api_encode_with, the same bytes given to sink: a GLB goes out piece
 * by piece (header, JSON chunk, then each array straight from the scene),
 * never assembled in one buffer, so a big one costs no copy and no fresh
 * pages; the other formats are built, then written. Nothing is written
 * unless the encoding succeeds up to the writing. Returns 0, -1 (out of
 * memory), -2 (the scene's contract), -3 (sink stopped). */
int pm_api_encode_to(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                     const pm_api_output *o, const pm_api_alloc *al, const pm_api_sink *sink);
#endif
