#ifndef PM_API_MULTIPART_H
#define PM_API_MULTIPART_H
#include <jansson.h>
#include <stddef.h>
#include "pm_api/problem.h"

/* Request bodies with binary numeric arrays (docs/road.md "Binary
 * heightfields"): multipart/form-data with a part named "request" (the
 * JSON document, read by pm_api_parse_body) and parts named by a JSON
 * pointer, such as "/terrain/heights", each application/octet-stream
 * float32 little-endian (or image/png, pm_api_parse_request_with), placed
 * at that pointer as a bulk array
 * (pm_api/bulk.h). The parent object must be in the request part and the
 * member absent from it. The document is then read as any other: the
 * generator's reader checks the count, and each value at its own pointer.
 * A float32 part is not copied: its bulk array refers to the body's bytes
 * (pm_api_bulk_f32_ref), so the body must outlive the reading of the
 * document (pm_api_job_parse; the canonical form holds no reference to
 * it). */

/* How image parts become numbers: height = offset + scale * sample, the
 * sample as the PNG stores it (0..255 or 0..65535). Given in the query
 * (?png_scale=, ?png_offset=), so only with an image/png part. */
typedef struct pm_api_ingest {
    double png_scale, png_offset;
    unsigned given;   /* in the query: 1 png_scale, 2 png_offset */
} pm_api_ingest;
#define PM_API_INGEST_DEFAULT ((pm_api_ingest){1.0, 0.0, 0})

/* Reads ?png_scale= and ?png_offset= (NULL when absent) into *o: finite
 * numbers, the scale not 0. Returns 0, or -1 with a 422 at /png_scale or
 * /png_offset. */
int pm_api_ingest_query(const char *png_scale, const char *png_offset, pm_api_ingest *o,
                        pm_api_problem *p);

/* 1 when Content-Type ct is multipart/form-data. */
int pm_api_is_multipart(const char *ct);
/* As pm_api_parse_body. Errors: 400 urn:procmesh:problem:malformed-multipart
 * (no boundary, no "request" part, a truncated body), the request part's
 * own 400/422, and 422 at a binary part's pointer (no parent object, given
 * twice, length not a multiple of 4, not application/octet-stream). */
int pm_api_parse_multipart(const char *buf, size_t len, const char *content_type, json_t **out,
                           pm_api_problem *p);
/* The length of the "request" part of a multipart body, found without
 * parsing it (for limits and memory charges before the parse), or -1 when
 * the body is malformed (pm_api_parse_multipart then says how). With
 * decoded non-NULL: the most bytes its binary parts take once read (a
 * float32 part 4 times its length, a PNG by its pixel count). */
long long pm_api_multipart_request_len(const char *buf, size_t len, const char *content_type,
                                       size_t *decoded);
/* pm_api_parse_multipart for multipart/form-data, else pm_api_parse_body. */
int pm_api_parse_request(const char *buf, size_t len, const char *content_type, json_t **out,
                         pm_api_problem *p);
/* The same with the query's ingest options: a part of type image/png (a
 * grayscale PNG, 8 or 16 bits per sample, width x height = the cols x rows
 * beside it in the request part) becomes offset + scale * sample. Options
 * given without such a part are a 422 at /png_scale (or /png_offset). */
int pm_api_parse_request_with(const char *buf, size_t len, const char *content_type,
                              const pm_api_ingest *o, json_t **out, pm_api_problem *p);
#endif
