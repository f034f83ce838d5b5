#ifndef PM_TEST_RAW_H
#define PM_TEST_RAW_H
#include <stddef.h>

/* Raw HTTP/1.1 on loopback sockets, for what libcurl will not send (two
 * Content-Length headers, a body that stops short, a head sent one line at
 * a time) and for holding many connections open at once.
 *
 *   int fd = pm_raw_connect(srv.port);
 *   pm_raw_send_str(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
 *   pm_raw_reply r;
 *   pm_raw_read(fd, 2000, &r);           // until the server closes, or 2 s
 *   cr_assert_eq(r.status, 200);
 *   close(fd);
 */

/* A blocking TCP connection to 127.0.0.1:port (from src_ip when not NULL,
 * e.g. "127.0.0.2"). Returns the descriptor, or -1. */
int pm_raw_connect(int port);
int pm_raw_connect_from(const char *src_ip, int port);

/* Sends every byte (MSG_NOSIGNAL). 0, or -1 when the peer is gone. */
int pm_raw_send(int fd, const void *data, size_t len);
int pm_raw_send_str(int fd, const char *s);

typedef struct pm_raw_reply {
    long status;         /* from the status line; 0 when none arrived */
    char text[16384];    /* what arrived (head and body), NUL-terminated */
    size_t len;
    int closed;          /* the server closed (FIN) */
    int reset;           /* the connection was reset (ECONNRESET) */
    double seconds;      /* from the call until the first byte (or the end) */
} pm_raw_reply;

/* Reads until the server closes the connection or timeout_ms pass. Returns
 * 0 when a status line arrived, -1 otherwise. */
int pm_raw_read(int fd, int timeout_ms, pm_raw_reply *out);

/* One request on a fresh connection: connect, send, read (timeout_ms),
 * close. Returns what pm_raw_read returns. */
int pm_raw_exchange(int port, const void *req, size_t len, int timeout_ms, pm_raw_reply *out);

/* A header's value from a reply (case-insensitive name) into buf; NULL when
 * absent. The body starts after the blank line: pm_raw_body. */
const char *pm_raw_header(const pm_raw_reply *r, const char *name, char *buf, size_t cap);
const char *pm_raw_body(const pm_raw_reply *r);
#endif
