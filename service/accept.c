#define _GNU_SOURCE
#include "accept.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"

/* The listen backlog, as libmicrohttpd's was (MHD_OPTION_LISTEN_BACKLOG_SIZE). */
#define PM_SVC_BACKLOG 1024
/* Accepted in one go before the thread looks at its wake-up again. */
#define PM_SVC_ACCEPT_BATCH 64
/* Out of descriptors or memory: the backlog is left alone this long (a
 * closing connection ends the wait sooner). */
#define PM_SVC_ACCEPT_BACKOFF_MS 20
/* A shutdown answers at most this many queued connections: the backlog
 * holds about PM_SVC_BACKLOG; more are clients still arriving, and the
 * shutdown must end under any flood. */
#define PM_SVC_DRAIN_MAX (2 * PM_SVC_BACKLOG)

struct pm_svc_acceptor {
    int fd;      /* the listening socket */
    int wake;    /* eventfd: stop, or room again (the guard) */
    struct MHD_Daemon *daemon;
    pm_svc_guard *guard;
    pthread_t thread;
    atomic_int stop;
    int short_of;   /* the last accept ran out of descriptors or memory (logged once) */
};

int pm_svc_listen_socket(const struct sockaddr *addr, socklen_t alen, uint16_t *bound) {
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int on = 1;
    /* As libmicrohttpd: a restarted server binds at once while the last
     * one's connections sit in TIME_WAIT; an IPv6 address takes IPv6 only
     * (its MHD_USE_IPv6 without MHD_USE_DUAL_STACK). Neither is fatal. */
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (addr->sa_family == AF_INET6) (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    struct sockaddr_storage got;
    socklen_t glen = sizeof got;
    if (bind(fd, addr, alen) != 0 || listen(fd, PM_SVC_BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&got, &glen) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *bound = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                             : ((struct sockaddr_in *)&got)->sin_port);
    return fd;
}

/* Answers a queued connection the daemon has no room for at shutdown:
 * 503, close. What the client sent is read first, so that the close does
 * not turn into a reset that discards the answer. */
static void pm_svc__refuse(int fd) {
    char sink[4096];
    while (recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
    }
    static const char body[] =
        "{\"type\":\"urn:procmesh:problem:shutting-down\",\"title\":\"Service Unavailable\","
        "\"status\":503,\"detail\":\"the server is shutting down\"}";
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
                     "Content-Type: application/problem+json\r\nCache-Control: no-store\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     sizeof body - 1, body);
    if (n > 0) {
        ssize_t w = send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)w;
    }
    shutdown(fd, SHUT_WR);
    close(fd);
}

static int pm_svc__retry(int e) {
    /* Interrupted, or a connection that failed before it was accepted
     * (Linux reports the pending network errors of TCP this way, accept(2)). */
    return e == EINTR || e == ECONNABORTED || e == EPROTO || e == ENETDOWN || e == ENOPROTOOPT ||
           e == EHOSTDOWN || e == ENONET || e == EHOSTUNREACH || e == EOPNOTSUPP ||
           e == ENETUNREACH;
}

enum { PM_SVC_TAKE_FULL = -1 };

/* Accepts what waits in the backlog and hands it to the daemon, each
 * within the guard's room. Running: stops where the guard is full (the
 * rest stays queued until a connection closes: PM_SVC_TAKE_FULL) or after
 * a batch (0). Draining (at shutdown): takes everything queued, and a
 * connection the guard has no room for is answered 503. Returns 0, or how
 * long to leave the backlog alone (ms) after running out of descriptors
 * or memory, or PM_SVC_TAKE_FULL. */
static int pm_svc__take(pm_svc_acceptor *a, int draining) {
    unsigned most = draining ? PM_SVC_DRAIN_MAX : PM_SVC_ACCEPT_BATCH;
    for (unsigned n = 0; n < most; n++) {
        /* Only this thread adds connections: room seen here is still there
         * after the accept. */
        if (!draining && !pm_svc_guard_room(a->guard)) return PM_SVC_TAKE_FULL;
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(a->fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (pm_svc__retry(e)) continue;
            if (e == EAGAIN || e == EWOULDBLOCK) return 0;
            if (!a->short_of) {
                pm_svc_log(PM_SVC_LOG_WARN, NULL, "cannot accept connections: waiting",
                           "\"error\":\"%s\",\"retry_ms\":%d", strerror(e),
                           PM_SVC_ACCEPT_BACKOFF_MS);
                a->short_of = 1;
            }
            return PM_SVC_ACCEPT_BACKOFF_MS;
        }
        a->short_of = 0;
        if (draining && !pm_svc_guard_room(a->guard)) {
            pm_svc__refuse(fd);
            continue;
        }
        pm_svc_guard_handed(a->guard, fd);
        /* The library closes fd when it refuses it (per-address limit, out
         * of memory): the client sees the close, as with its own listener. */
        if (MHD_add_connection(a->daemon, fd, (struct sockaddr *)&sa, sl) != MHD_YES)
            pm_svc_guard_refused(a->guard, fd);
    }
    return 0;
}

static void *pm_svc__accept_run(void *arg) {
    pm_svc_acceptor *a = arg;
    int wait = 0;   /* pm_svc__take's last answer */
    while (!atomic_load(&a->stop)) {
        /* The listening socket is watched only while there is room and no
         * back-off: a full guard or a full descriptor table would
         * otherwise wake this thread at once, again and again. */
        struct pollfd p[2] = {{a->wake, POLLIN, 0}, {a->fd, POLLIN, 0}};
        int r = poll(p, wait ? 1 : 2, wait > 0 ? wait : -1);
        if (r < 0 && errno != EINTR) break;   /* cannot happen with valid descriptors */
        if (p[0].revents) {
            uint64_t v;
            ssize_t got = read(a->wake, &v, sizeof v);
            (void)got;
        }
        if (atomic_load(&a->stop)) break;
        wait = pm_svc__take(a, 0);
        if (wait == PM_SVC_TAKE_FULL && pm_svc_guard_wait_room(a->guard)) wait = 0;
    }
    return NULL;
}

pm_svc_acceptor *pm_svc_acceptor_start(int listen_fd, struct MHD_Daemon *daemon,
                                       pm_svc_guard *guard) {
    pm_svc_acceptor *a = calloc(1, sizeof *a);
    if (!a) {
        close(listen_fd);
        return NULL;
    }
    a->fd = listen_fd;
    a->daemon = daemon;
    a->guard = guard;
    a->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (a->wake < 0) goto fail;
    pm_svc_guard_set_waker(guard, a->wake);
    if (pthread_create(&a->thread, NULL, pm_svc__accept_run, a) != 0) {
        pm_svc_guard_set_waker(guard, -1);
        close(a->wake);
        goto fail;
    }
    return a;
fail:
    close(listen_fd);
    free(a);
    return NULL;
}

void pm_svc_acceptor_stop(pm_svc_acceptor *a) {
    if (!a) return;
    atomic_store(&a->stop, 1);
    uint64_t one = 1;
    ssize_t w = write(a->wake, &one, sizeof one);
    (void)w;
    pthread_join(a->thread, NULL);
    pm_svc_guard_set_waker(a->guard, -1);
    close(a->wake);
    /* Connections queued in the backlog are taken in and answered, not reset. */
    pm_svc__take(a, 1);
    close(a->fd);
    free(a);
}
