#ifndef PM_SVC_GUARD_H
#define PM_SVC_GUARD_H
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "buf.h"
#include "strict.h"

/* Connection defence: every connection libmicrohttpd serves is tracked
 * (MHD_OPTION_NOTIFY_CONNECTION) from accept to close, so that
 *  - a request head has a TOTAL deadline (header_ms from accept, or from
 *    the previous answer plus the idle time on a kept-alive connection),
 *    and a body one (body_ms from the end of the head), however slowly
 *    the bytes trickle in; the library's own idle timer restarts on every
 *    byte and cannot do this;
 *  - capacity is kept for new connections (health probes among them):
 *    when the open connections reach max_connections - reserve, each new
 *    one closes the oldest connection whose request is incomplete (no
 *    complete head, or a body still arriving); a connection waiting for
 *    its answer is never taken;
 *  - the acceptor (accept.h) takes connections in only while there is
 *    room for them (pm_svc_guard_room), and a shutdown, once it has
 *    answered what waits in the listen backlog, waits until no connection
 *    has a request in progress, so queued requests get answers, not
 *    resets.
 * A sweeper thread enforces the deadlines: it writes a 408 problem+json on
 * the socket (the library cannot queue a response while it reads a head or
 * a body) and shuts the socket down; the library then sees the end of the
 * stream and closes the connection in its own thread. The sweeper holds
 * the table's lock while it touches a socket, and a connection leaves the
 * table (NOTIFY_CLOSED) before the library closes its descriptor, so a
 * reused descriptor is never touched.
 *
 * The guard also reads each tracked connection's bytes as the library
 * receives them: this file defines recv(), which the library calls (it
 * has no hook of its own for a request body's chunk framing), and passes
 * them through a pm_svc_framing follower (strict.h). A chunk declared past
 * the body limit (413) or malformed chunked framing (400) is answered at
 * once with problem+json: on the socket when the library has the
 * request's head already (the rest of the body is then swallowed, not
 * given to the library), else by the handler at the head call
 * (pm_svc_guard_framing). Descriptors the guard does not track, and calls
 * with flags, pass through untouched. docs/svc.md says why. */

typedef struct pm_svc_guard pm_svc_guard;

typedef struct pm_svc_guard_conf {
    unsigned header_ms;        /* request head deadline (0: none) */
    unsigned body_ms;          /* request body deadline (0: none) */
    unsigned idle_s;           /* keep-alive idle time before a next head */
    unsigned max_connections;  /* open at once (the acceptor's limit) */
    unsigned reserve;          /* kept free for new connections */
    const char *cors_origin;   /* "*" adds Access-Control-Allow-Origin to 408s */
    uint64_t body_limit;       /* --body-limit: chunks declared past it are refused */
    uint64_t binary_body_limit; /* --binary-body-limit: the same for multipart bodies */
} pm_svc_guard_conf;

/* Starts the sweeper. NULL when out of memory or threads. */
pm_svc_guard *pm_svc_guard_create(const pm_svc_guard_conf *conf);
/* Stops the sweeper; call after MHD_stop_daemon. NULL is ignored. */
void pm_svc_guard_destroy(pm_svc_guard *g);

/* The MHD_OPTION_NOTIFY_CONNECTION callback (cls: the guard). */
void pm_svc_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                         enum MHD_ConnectionNotificationCode code);

/* A request's head is in (first handler call): the body deadline starts.
 * id and acao (may be "") label a 408. Returns 0 when the sweeper has cut
 * the connection already: the handler must return MHD_NO. */
int pm_svc_guard_request_head(struct MHD_Connection *conn, const char *id, const char *acao);
/* After the head checks (strict.h and the route's own; decided: they
 * gave the answer): returns 400 or 413, with the refusal in v, when the
 * framing follower refused this request's body already (its head and body
 * arrived together), else 0. It also confirms the follower's view of the
 * head (its length against the library's) so that later verdicts on this
 * body are answered on the socket at once, or turns the follower off for
 * the connection when the two differ. A request decided from its head
 * gets no 413 from the follower: its own answer goes out as before. */
int pm_svc_guard_framing(struct MHD_Connection *conn, int decided, pm_svc_strict_verdict *v);
/* The body is complete or the answer is decided: no 408 from now on.
 * Returns 0 when the sweeper cut the connection first. */
int pm_svc_guard_request_in(struct MHD_Connection *conn);
/* An answer was written on the socket while the body still arrives (a
 * 413): at the body deadline the connection is closed without a 408. */
void pm_svc_guard_request_raw(struct MHD_Connection *conn);
/* The request is over (completed callback): the next head's deadline
 * starts. Returns the status the sweeper answered (408), or 0. */
int pm_svc_guard_request_end(struct MHD_Connection *conn);

/* Connections with a request in progress: a head started on a fresh
 * connection (not past its deadline), unread bytes waiting, a body
 * arriving, or an answer being prepared; a connection handed over and not
 * yet announced, or kept alive and answered less than 100 ms ago (its
 * next request may be on its way). Shutdown waits for 0. */
size_t pm_svc_guard_busy(pm_svc_guard *g);

/* The acceptor's side (accept.h), none of it waiting for the guard's lock.
 * The room is max_connections, counting the open connections and those
 * handed to the library and not yet announced, as the library counted its
 * own. */
/* 1 when one more connection may be taken in. */
int pm_svc_guard_room(pm_svc_guard *g);
/* When there is no room: asks to be woken (the eventfd of
 * pm_svc_guard_set_waker) when a connection closes. Returns 1 when room
 * appeared meanwhile (no wake-up asked), else 0. */
int pm_svc_guard_wait_room(pm_svc_guard *g);
/* fd is about to be handed to the library: it counts until the library
 * announces it. */
void pm_svc_guard_handed(pm_svc_guard *g, int fd);
/* The library refused fd (and closed it): it no longer counts. */
void pm_svc_guard_refused(pm_svc_guard *g, int fd);
/* The eventfd written when room appears for a waiting acceptor; -1: none
 * (before the acceptor closes it). */
void pm_svc_guard_set_waker(pm_svc_guard *g, int fd);

/* Appends procmesh_connections_* series. */
void pm_svc_guard_render(pm_svc_guard *g, pm_svc_buf *b);
#endif
