#ifndef PM_SVC_HTTP_H
#define PM_SVC_HTTP_H
#include <stddef.h>

/* Header rules of the HTTP contract (DESIGN.md section 3), kept apart from
 * the server so they can be tested on their own. */

#define PM_SVC_REQID_MAX 128

/* 1 when a client's X-Request-Id may be echoed: 1..128 characters from
 * [A-Za-z0-9._:-] (nothing that could forge a header or a log field). */
int pm_svc_request_id_ok(const char *s);
/* A new random (v4) UUID, lowercase, into out. */
void pm_svc_request_id_new(char out[37]);

/* 1 when an If-None-Match value matches the strong ETag "<key_hex>":
 * "*", or a comma-separated list of entity tags compared weakly (RFC 9110
 * 13.1.2: W/"x" matches "x"). Malformed members are ignored. */
int pm_svc_etag_match(const char *if_none_match, const char *key_hex);

/* 1 when a Content-Type names JSON: application/json or any +json type,
 * parameters (charset) ignored, case-insensitive. NULL is not JSON. */
int pm_svc_is_json_type(const char *content_type);

/* The Access-Control-Allow-Origin value for a request: "*" when allowed is
 * "*"; the request's Origin when allowed (a comma-separated list) contains
 * it; else nothing (returns 0). Writes into out (cap bytes). */
int pm_svc_cors_origin(const char *allowed, const char *origin, char *out, size_t cap);
#endif
