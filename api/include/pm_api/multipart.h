#ifndef PM_API_MULTIPART_H
#define PM_API_MULTIPART_H
#include <jansson.h>
#include <stddef.h>
#include "pm_api/problem.h"

/* Request bodies with binary numeric arrays (docs/road.md "Binary
 * heightfields"): multipart/form-data with a part named "request" (the
 * JSON document, read by pm_api_parse_body) and parts named by a JSON
 * pointer, such as "/terrain/heights", each application/octet-stream
 * float32 little-endian, placed at that pointer as a bulk array
 * (pm_api/bulk.h). The parent object must be in the request part and the
 * member absent from it. The document is then read as any other: the
 * generator's reader checks the count, and each value at its own pointer. */

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
 * the body is malformed (pm_api_parse_multipart then says how). */
long long pm_api_multipart_request_len(const char *buf, size_t len, const char *content_type);
/* pm_api_parse_multipart for multipart/form-data, else pm_api_parse_body. */
int pm_api_parse_request(const char *buf, size_t len, const char *content_type, json_t **out,
                         pm_api_problem *p);
#endif
