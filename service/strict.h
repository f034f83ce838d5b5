#ifndef PM_SVC_STRICT_H
#define PM_SVC_STRICT_H
#include <stddef.h>
#include <stdint.h>

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

/* The framing of the requests on one connection, followed byte by byte as
 * they come off the socket, before libmicrohttpd reads them (guard.c feeds
 * it from recv()). The library parses chunked bodies itself and tells the
 * application neither a chunk's declared size nor a framing error (it
 * answers those with its own HTML); the follower sees both at once:
 *  - a chunk that declares more than is left of the body limit: 413, as
 *    soon as its size digits pass the limit (no data awaited);
 *  - malformed chunked framing: 400 (a size that is no hex number, an
 *    empty size, no CRLF after a chunk's data, a size line over
 *    PM_SVC_CHUNK_LINE_MAX bytes with its extensions).
 * It mirrors the library's own rules (libmicrohttpd 0.9.75 connection.c:
 * lines end at LF with an optional CR, empty lines before a request line
 * are skipped, a line whose first byte is NUL counts as empty, the body is
 * chunked when the one Transfer-Encoding is "chunked", else Content-Length
 * bytes) and never judges what it is unsure of: a head with continuation
 * lines on framing headers, two Content-Length or Transfer-Encoding headers,
 * both, any other coding or an unreadable Content-Length turns it off for
 * the rest of the connection (the head checks above or the library answer
 * those). The caller confirms its view at each request head
 * (pm_svc_framing_head_len) before acting on a verdict. */
#define PM_SVC_CHUNK_LINE_MAX 1024
/* Heads the library would refuse itself with an HTML body (or not at all)
 * are judged here first, so the answer is problem+json:
 *  - a request line over PM_SVC_REQUEST_LINE_MAX bytes: 414;
 *  - a head over PM_SVC_HEAD_MAX bytes or PM_SVC_HEAD_LINES_MAX header
 *    lines: 431 (the library's own limit, its 32 KiB connection memory
 *    pool, comes later: some 32 KiB of head, fewer with many lines);
 *  - a request line that is not METHOD SP target SP HTTP/d.d: 400; a
 *    major version other than 1: 505;
 *  - a header line without a colon: 400;
 *  - a NUL byte in the request line or a header line: 400 (the library
 *    reads lines as C strings and would serve "/v1/dungeons\0x" as
 *    "/v1/dungeons");
 *  - the one Content-Length the library reads that is no decimal number:
 *    400; one past 64 bits: 413.
 * All but the NUL are answered on the wire (guard.c), as the head arrives:
 * the library would refuse them before it hands the head over. */
#define PM_SVC_REQUEST_LINE_MAX 8192
#define PM_SVC_HEAD_MAX 12288
#define PM_SVC_HEAD_LINES_MAX 100

typedef struct pm_svc_framing {
    int state;                /* PM_SVC__FR_* (strict.c) */
    uint64_t limit;           /* the body limit of the body being read */
    uint64_t limit_json;      /* --body-limit */
    uint64_t limit_multipart; /* --binary-body-limit, for multipart/form-data */
    int multipart;            /* the head being read has a multipart Content-Type */
    uint64_t left;            /* bytes left of a Content-Length body or a chunk */
    uint64_t declared;        /* chunk bytes declared so far in this body */
    uint64_t size;            /* the chunk size being read */
    uint64_t head_len;        /* bytes of the head being read */
    uint64_t last_head_len;   /* bytes of the last complete head */
    int last_chunked;         /* whether its body is chunked */
    unsigned requests;        /* complete heads */
    size_t line_len;          /* bytes of the current line so far */
    char line[96];            /* its first bytes, up to a NUL */
    size_t kept;
    int cl_n, te_n, te_chunked, cl_ok;
    int cl_first;             /* the first Content-Length: 0 a number, 1 not, 2 past 64 bits */
    unsigned head_lines;      /* header lines of the head being read */
    int colon;                /* the current line has a colon */
    /* the request line: first space, start of the target, last space, and
     * its last bytes (the version) */
    size_t sp_first, target, sp_last;
    char tail[16];
    int folded;               /* a framing header continued on the next line */
    int framing_prev;         /* the previous header line was a framing one */
    uint64_t cl;
    /* the verdict: status 0 while none */
    int status;
    unsigned verdict_request; /* the request (1 = the first) it refuses */
    int verdict_in_head;      /* on that request's head, not yet complete: answer on the wire */
    int verdict_on_head;      /* on a complete head (a NUL in it): answer at its head call */
    int nul;                  /* a NUL byte in the head being read */
    uint64_t verdict_head_len;
    char detail[200];
} pm_svc_framing;

/* Starts following a connection's bytes; limit is the body limit,
 * multipart_limit that of a multipart/form-data body. */
void pm_svc_framing_init(pm_svc_framing *f, uint64_t limit, uint64_t multipart_limit);
/* Follows n more bytes. Returns how many of them come before the point
 * of a verdict (n when there is none); after a verdict (f->status set) or
 * once off, it consumes everything and judges nothing. */
size_t pm_svc_framing_feed(pm_svc_framing *f, const char *p, size_t n);
/* Stops judging this connection (the caller's view disagrees); a
 * verdict not acted on is dropped. */
void pm_svc_framing_off(pm_svc_framing *f);
/* Whether it still follows (no verdict, not off). */
int pm_svc_framing_on(const pm_svc_framing *f);
/* The verdict as a refusal (problem type, title, detail). */
void pm_svc_framing_verdict(const pm_svc_framing *f, pm_svc_strict_verdict *v);
#endif
