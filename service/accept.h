#ifndef PM_SVC_ACCEPT_H
#define PM_SVC_ACCEPT_H
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "guard.h"

/* Our own listener in front of a libmicrohttpd daemon started with
 * MHD_USE_NO_LISTEN_SOCKET: one thread per listening socket accepts
 * connections and hands each to the daemon with MHD_add_connection.
 *
 * Why: the library's own listener is stopped with MHD_quiesce_daemon,
 * which in 0.9.75 races the library's epoll threads (both remove the
 * listening socket from a thread's epoll set; the loser gets ENOENT and
 * aborts the process with MHD_PANIC). With no listening socket in the
 * library, nothing of the kind is left to race: stopping is ours.
 *
 * Room: a connection is accepted only while the guard has room for it
 * (pm_svc_guard_room: open ones plus those handed over and not yet
 * announced stay under its max_connections). When it has none, the rest
 * wait in the kernel's listen backlog, as with the library's listener,
 * and the guard wakes the thread when a connection closes. Accept errors
 * for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM)
 * leave the backlog alone for a short while instead of spinning.
 *
 * Stopping (pm_svc_acceptor_stop): the thread is woken and joined, every
 * connection waiting in the backlog is accepted and handed over, or
 * answered 503 shutting-down when the guard has no room for it, and the
 * socket is closed: new connections are refused from then on. */

typedef struct pm_svc_acceptor pm_svc_acceptor;

/* A listening socket on addr (non-blocking, close-on-exec, SO_REUSEADDR;
 * an IPv6 one accepts IPv6 only; backlog 1024), as libmicrohttpd opened
 * its own. Returns the descriptor with the port it got in *bound (port 0
 * in addr: one the kernel picks), or -1 with errno set. */
int pm_svc_listen_socket(const struct sockaddr *addr, socklen_t alen, uint16_t *bound);

/* Starts accepting on listen_fd (which it owns from now on, also when it
 * fails) for daemon, within guard's room. NULL when out of memory or
 * threads. */
pm_svc_acceptor *pm_svc_acceptor_start(int listen_fd, struct MHD_Daemon *daemon,
                                       pm_svc_guard *guard);

/* Stops accepting, hands over or refuses what waits in the backlog, closes
 * the socket and frees a. Call before stopping the daemon. NULL is ignored. */
void pm_svc_acceptor_stop(pm_svc_acceptor *a);
#endif
