#ifndef PM_SVC_STRICT_H
#define PM_SVC_STRICT_H
#include <stddef.h>

#include <microhttpd.h>

/* Strict HTTP/1.1 framing checks that libmicrohttpd 0.9.75 does not make
 * itself (it takes the first of two Content-Length headers, reads a body
 * of unknown Transfer-Encoding until the connection closes, decodes %00 in
 * the path and serves HTTP/1.1 without Host). Each check runs once the
 * request head is in, before any body byte is read, so the answer goes
 * out at once and the connection closes. docs/svc.md lists what the
 * library still answers on its own. */

/* What the raw request target says (from the URI log callback, before the
 * library decodes it). */
typedef enum pm_svc_uri_verdict {
    PM_SVC_URI_OK = 0,
    PM_SVC_URI_CONTROL,      /* a control byte in the path, raw or %-encoded */
    PM_SVC_URI_TOO_MANY_ARGS /* more than max_args query parameters */
} pm_svc_uri_verdict;

/* Judges a raw request target; "/v1/dungeons%00" and "/a%0d%0a" are
 * PM_SVC_URI_CONTROL (bytes 0x00-0x1f and 0x7f, in the path only: query
 * values are judged by the route that reads them). */
pm_svc_uri_verdict pm_svc_strict_uri(const char *uri, size_t max_args);

/* A refusal found in a request head: status 0 when it is acceptable. */
typedef struct pm_svc_strict_verdict {
    int status;          /* 400 or 501 */
    const char *type;    /* problem type after urn:procmesh:problem: */
    const char *title;
    char detail[200];
} pm_svc_strict_verdict;

/* Checks the framing headers of conn's request (version is the request's
 * "HTTP/1.x"): more than one Content-Length or a malformed one (400), a
 * Transfer-Encoding other than exactly "chunked" (501), both
 * Transfer-Encoding and Content-Length (400: the smuggling pattern),
 * HTTP/1.1 without exactly one Host (400). */
void pm_svc_strict_head(struct MHD_Connection *conn, const char *version,
                        pm_svc_strict_verdict *v);
#endif
