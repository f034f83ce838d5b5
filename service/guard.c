/* recv() is defined below: the fortified inline one must not be. */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include "guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "http.h"
#include "log.h"

typedef enum pm_svc__cstate {
    PM_SVC_C_HEAD,   /* waiting for a request head */
    PM_SVC_C_BODY,   /* head in, body arriving */
    PM_SVC_C_WAIT,   /* request in (or answer decided): the server answers */
    PM_SVC_C_RAW,    /* answered on the socket while the body still arrives */
    PM_SVC_C_CUT,    /* shut down by the guard; the library will close it */
} pm_svc__cstate;

typedef struct pm_svc__conn {
    struct pm_svc__conn *prev, *next;   /* oldest first */
    pm_svc_guard *g;
    int fd;
    pm_svc__cstate state;
    uint64_t opened_ns, deadline_ns;    /* deadline 0: none */
    uint64_t answered_ns;               /* when its last request ended */
    unsigned served;                    /* requests answered on it */
    int answered;                       /* status the guard wrote (408) */
    char id[PM_SVC_REQID_MAX + 1];
    char acao[256];
    /* The framing follower, fed by recv() on the connection's own thread
     * (as are the head calls that read and confirm it). */
    pm_svc_framing frame;
    unsigned heads;                     /* request heads the library has handed over */
    unsigned confirmed;                 /* the follower agrees on this head's length */
    unsigned decided;                   /* this request's answer came from its head */
    int draining;                       /* answered on the socket: swallow the rest */
    int head_refusal;                   /* a head refused while the last answer is out */
    uint64_t drained;
    /* a 304 head's Content-Length line still to leave out of what the
     * library sends: its offset in the next send's buffer, its length */
    size_t cut_at, cut_len;
} pm_svc__conn;

enum { PM_SVC_CUT_HEAD, PM_SVC_CUT_BODY, PM_SVC_CUT_IDLE, PM_SVC_CUT_EVICT, PM_SVC_NCUTS };
static const char *const pm_svc__cut_label[PM_SVC_NCUTS] = {"head", "body", "idle", "evicted"};

struct pm_svc_guard {
    pm_svc_guard_conf conf;
    int cors_any;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t sweeper;
    int stop;
    pm_svc__conn *head, *tail;
    size_t cut;                         /* shut down, not yet closed */
    /* The acceptor (accept.h) reads these two without the lock, so that
     * taking a connection in never waits for the HTTP threads: open
     * connections (written under the lock), and those handed to the
     * library and not yet announced (NOTIFY_STARTED); the latter also by
     * descriptor, so that a handover the library dropped unannounced (it
     * closes the descriptor, and accept gives the number out again) frees
     * its slot. */
    atomic_size_t open, handed;
    atomic_uchar *handed_fd;            /* pm_svc__nfds entries, or NULL */
    atomic_int waiting;                 /* the acceptor waits for room */
    int wake_fd;                        /* ... on this eventfd (under the lock) */
    atomic_ullong cuts[PM_SVC_NCUTS];
    atomic_ullong framing[5];           /* refused by the follower, by status (below) */
};

static int pm_svc__refuse_on_wire(pm_svc__conn *c, pm_svc__cstate from);

/* Tracked connections by descriptor, for recv(). A slot is set when the
 * library announces a connection and cleared when it closes it, both on
 * the connection's own thread, which is also the one calling recv() on it;
 * other threads never read a slot. Sized once by the descriptor limit. */
static _Atomic(pm_svc__conn *) *_Atomic pm_svc__fds;   /* set once, then read only */
static size_t pm_svc__nfds;
static pthread_once_t pm_svc__fds_once = PTHREAD_ONCE_INIT;

static void pm_svc__fds_create(void) {
    struct rlimit rl;
    size_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                   ? (size_t)rl.rlim_cur
                   : 65536;
    if (n > (1u << 20)) n = 1u << 20;
    _Atomic(pm_svc__conn *) *t = calloc(n, sizeof *t);
    if (!t) return;   /* no table: no connection is followed */
    pm_svc__nfds = n;
    atomic_store_explicit(&pm_svc__fds, t, memory_order_release);
}

/* The slot of fd, or NULL (no table, or fd past it). */
static _Atomic(pm_svc__conn *) *pm_svc__fd_slot(int fd) {
    _Atomic(pm_svc__conn *) *t = atomic_load_explicit(&pm_svc__fds, memory_order_acquire);
    return t && fd >= 0 && (size_t)fd < pm_svc__nfds ? &t[fd] : NULL;
}

static void pm_svc__fd_set(int fd, pm_svc__conn *c) {
    _Atomic(pm_svc__conn *) *slot = pm_svc__fd_slot(fd);
    if (slot) atomic_store_explicit(slot, c, memory_order_release);
}

/* Sweeps this often: a tenth of the shortest deadline, within 5..250 ms. */
static unsigned pm_svc__period_ms(const pm_svc_guard_conf *c) {
    unsigned m = 250;
    if (c->header_ms && c->header_ms / 10 < m) m = c->header_ms / 10;
    if (c->body_ms && c->body_ms / 10 < m) m = c->body_ms / 10;
    return m < 5 ? 5 : m;
}

/* Writes a problem+json answer on c's socket without blocking: it is
 * small and the socket's send buffer is empty while a request is read. */
static void pm_svc__write_problem(const pm_svc__conn *c, int status, const char *type,
                                  const char *title, const char *detail) {
    char id[37], date[64], body[640], head[1024];
    const char *rid = c->id;
    if (!rid[0]) {
        pm_svc_request_id_new(id);
        rid = id;
    }
    int bl = snprintf(body, sizeof body,
                      "{\"type\":\"urn:procmesh:problem:%s\",\"title\":\"%s\",\"status\":%d,"
                      "\"detail\":\"%s\",\"instance\":\"%s\"}",
                      type, title, status, detail, rid);
    const char *acao = c->acao[0] ? c->acao : c->g->cors_any ? "*" : "";
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nDate: %s\r\nConnection: close\r\n"
                      "X-Request-Id: %s\r\nContent-Type: application/problem+json\r\n"
                      "Cache-Control: no-store\r\nContent-Length: %d\r\n%s%s%s\r\n",
                      status, title, date, rid, bl,
                      acao[0] ? "Access-Control-Allow-Origin: " : "", acao,
                      acao[0] ? "\r\nAccess-Control-Expose-Headers: X-Request-Id\r\n" : "");
    if (hl <= 0 || bl <= 0 || (size_t)hl >= sizeof head || (size_t)bl >= sizeof body) return;
    struct iovec v[2] = {{head, (size_t)hl}, {body, (size_t)bl}};
    struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
    ssize_t w = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)w;   /* a full buffer or a gone client: the close says enough */
    pm_svc_log(PM_SVC_LOG_INFO, rid, "request refused", "\"status\":%d,\"detail\":\"%s\"",
               status, detail);
}

static void pm_svc__write_408(const pm_svc__conn *c, const char *phase) {
    char detail[160];
    int head = strcmp(phase, "head") == 0;
    snprintf(detail, sizeof detail, "the request %s was not complete within %u ms (--%s-timeout-ms)",
             phase, head ? c->g->conf.header_ms : c->g->conf.body_ms, head ? "header" : "body");
    pm_svc__write_problem(c, 408, "request-timeout", "Request Timeout", detail);
}

/* Shuts c's socket down (g->mu held); the library sees the end of the
 * stream and closes the connection on its own thread. */
static void pm_svc__cut(pm_svc_guard *g, pm_svc__conn *c, int why) {
    shutdown(c->fd, SHUT_RDWR);
    c->state = PM_SVC_C_CUT;
    g->cut++;
    atomic_fetch_add_explicit(&g->cuts[why], 1, memory_order_relaxed);
}

static void pm_svc__sweep(pm_svc_guard *g, uint64_t now) {
    for (pm_svc__conn *c = g->head; c; c = c->next) {
        if (!c->deadline_ns || now < c->deadline_ns) continue;
        switch (c->state) {
        case PM_SVC_C_HEAD:
            if (c->served) {
                pm_svc__cut(g, c, PM_SVC_CUT_IDLE);   /* a kept-alive connection: close quietly */
            } else {
                pm_svc__write_408(c, "head");
                c->answered = 408;
                pm_svc__cut(g, c, PM_SVC_CUT_HEAD);
            }
            break;
        case PM_SVC_C_BODY:
            pm_svc__write_408(c, "body");
            c->answered = 408;
            pm_svc__cut(g, c, PM_SVC_CUT_BODY);
            break;
        case PM_SVC_C_RAW: pm_svc__cut(g, c, PM_SVC_CUT_BODY); break;
        default: break;
        }
    }
}

static void *pm_svc__sweeper(void *arg) {
    pm_svc_guard *g = arg;
    unsigned ms = pm_svc__period_ms(&g->conf);
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        if (!g->stop) pm_svc__sweep(g, pm_svc_now_ns());
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

pm_svc_guard *pm_svc_guard_create(const pm_svc_guard_conf *conf) {
    pm_svc_guard *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->conf = *conf;
    g->cors_any = conf->cors_origin && strcmp(conf->cors_origin, "*") == 0;
    g->wake_fd = -1;
    pthread_once(&pm_svc__fds_once, pm_svc__fds_create);
    g->handed_fd = pm_svc__nfds ? calloc(pm_svc__nfds, sizeof *g->handed_fd) : NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&g->sweeper, NULL, pm_svc__sweeper, g) != 0) {
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        free(g->handed_fd);
        free(g);
        return NULL;
    }
    return g;
}

void pm_svc_guard_destroy(pm_svc_guard *g) {
    if (!g) return;
    pthread_mutex_lock(&g->mu);
    g->stop = 1;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->sweeper, NULL);
    while (g->head) {   /* the daemon has stopped: only leftovers of a failed start */
        pm_svc__conn *c = g->head;
        g->head = c->next;
        pm_svc__fd_set(c->fd, NULL);
        free(c);
    }
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g->handed_fd);
    free(g);
}

static uint64_t pm_svc__ms_ns(unsigned ms) { return (uint64_t)ms * 1000000ull; }

/* Keeps reserve connections free: closes the oldest incomplete one
 * (g->mu held) when the live ones reach the limit less the reserve. */
static void pm_svc__make_room(pm_svc_guard *g, const pm_svc__conn *fresh) {
    size_t live = g->open - g->cut;
    size_t room = g->conf.max_connections > g->conf.reserve
                      ? g->conf.max_connections - g->conf.reserve
                      : 1;
    for (pm_svc__conn *c = g->head; c && live > room; c = c->next) {
        if (c == fresh || (c->state != PM_SVC_C_HEAD && c->state != PM_SVC_C_BODY)) continue;
        pm_svc__cut(g, c, PM_SVC_CUT_EVICT);
        live--;
    }
}

static atomic_uchar *pm_svc__handed_mark(pm_svc_guard *g, int fd) {
    return g->handed_fd && fd >= 0 && (size_t)fd < pm_svc__nfds ? &g->handed_fd[fd] : NULL;
}

/* The library announced fd: every connection of the daemon came from the
 * acceptor, so one handed over is now open instead. */
static void pm_svc__announced(pm_svc_guard *g, int fd) {
    atomic_fetch_sub(&g->handed, 1);
    atomic_uchar *m = pm_svc__handed_mark(g, fd);
    if (m) atomic_store(m, 0);
}

int pm_svc_guard_room(pm_svc_guard *g) {
    return atomic_load(&g->open) + atomic_load(&g->handed) < g->conf.max_connections;
}

int pm_svc_guard_wait_room(pm_svc_guard *g) {
    atomic_store(&g->waiting, 1);
    if (!pm_svc_guard_room(g)) return 0;   /* a close after this writes the eventfd */
    atomic_store(&g->waiting, 0);
    return 1;
}

void pm_svc_guard_handed(pm_svc_guard *g, int fd) {
    atomic_fetch_add(&g->handed, 1);
    /* Still marked: the library closed an earlier connection with this
     * number without announcing it, so that one's slot is free again. */
    atomic_uchar *m = pm_svc__handed_mark(g, fd);
    if (m && atomic_exchange(m, 1)) atomic_fetch_sub(&g->handed, 1);
}

void pm_svc_guard_refused(pm_svc_guard *g, int fd) {
    atomic_fetch_sub(&g->handed, 1);
    atomic_uchar *m = pm_svc__handed_mark(g, fd);
    if (m) atomic_store(m, 0);
}

void pm_svc_guard_set_waker(pm_svc_guard *g, int fd) {
    pthread_mutex_lock(&g->mu);
    g->wake_fd = fd;
    atomic_store(&g->waiting, 0);
    pthread_mutex_unlock(&g->mu);
}

void pm_svc_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                         enum MHD_ConnectionNotificationCode code) {
    pm_svc_guard *g = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        pm_svc__conn *c = ci ? calloc(1, sizeof *c) : NULL;
        *socket_context = c;
        if (!c) {   /* untracked: the library's idle timeout still applies */
            pm_svc__announced(g, ci ? ci->connect_fd : -1);
            return;
        }
        c->g = g;
        c->fd = ci->connect_fd;
        c->state = PM_SVC_C_HEAD;
        c->opened_ns = pm_svc_now_ns();
        c->deadline_ns = g->conf.header_ms ? c->opened_ns + pm_svc__ms_ns(g->conf.header_ms) : 0;
        pm_svc_framing_init(&c->frame, g->conf.body_limit, g->conf.binary_body_limit);
        pm_svc__fd_set(c->fd, c);
        pthread_mutex_lock(&g->mu);
        c->prev = g->tail;
        if (g->tail) g->tail->next = c;
        else g->head = c;
        g->tail = c;
        g->open++;
        /* open first, then handed: the acceptor may count it twice for a
         * moment, never not at all. */
        pm_svc__announced(g, c->fd);
        pm_svc__make_room(g, c);
        pthread_mutex_unlock(&g->mu);
        return;
    }
    pm_svc__conn *c = *socket_context;
    *socket_context = NULL;
    if (!c) return;
    pm_svc__fd_set(c->fd, NULL);
    pthread_mutex_lock(&g->mu);
    if (c->prev) c->prev->next = c->next;
    else g->head = c->next;
    if (c->next) c->next->prev = c->prev;
    else g->tail = c->prev;
    g->open--;
    if (c->state == PM_SVC_C_CUT) g->cut--;
    /* The acceptor waits for a free slot: this is one (after open--: it
     * sets waiting before it looks at the room again). */
    if (atomic_exchange(&g->waiting, 0) && g->wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t w = write(g->wake_fd, &one, sizeof one);
        (void)w;   /* the counter is already set: it wakes anyway */
    }
    pthread_mutex_unlock(&g->mu);
    free(c);
}

static pm_svc__conn *pm_svc__of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Moves c from one of the states in mask to state to; 0 when the guard
 * has cut it. */
static int pm_svc__move(pm_svc__conn *c, pm_svc__cstate to, uint64_t deadline_ns) {
    pm_svc_guard *g = c->g;
    pthread_mutex_lock(&g->mu);
    int ok = c->state != PM_SVC_C_CUT;
    if (ok) {
        c->state = to;
        c->deadline_ns = deadline_ns;
    }
    pthread_mutex_unlock(&g->mu);
    return ok;
}

int pm_svc_guard_request_head(struct MHD_Connection *conn, const char *id, const char *acao) {
    pm_svc__conn *c = pm_svc__of(conn);
    if (!c) return 1;
    /* Written by this (the connection's) thread only, read by the sweeper
     * under the lock once the state says BODY. */
    c->heads++;
    pthread_mutex_lock(&c->g->mu);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->acao, sizeof c->acao, "%s", acao);
    pthread_mutex_unlock(&c->g->mu);
    unsigned ms = c->g->conf.body_ms;
    return pm_svc__move(c, PM_SVC_C_BODY, ms ? pm_svc_now_ns() + pm_svc__ms_ns(ms) : 0);
}

static const int pm_svc__refusal_status[5] = {400, 413, 414, 431, 505};

static void pm_svc__count_refusal(pm_svc_guard *g, int status) {
    for (int i = 0; i < 5; i++)
        if (pm_svc__refusal_status[i] == status)
            atomic_fetch_add_explicit(&g->framing[i], 1, memory_order_relaxed);
}

int pm_svc_guard_framing(struct MHD_Connection *conn, int decided, pm_svc_strict_verdict *v) {
    memset(v, 0, sizeof *v);
    pm_svc__conn *c = pm_svc__of(conn);
    if (!c) return 0;
    if (decided) c->decided = c->heads;
    pm_svc_framing *f = &c->frame;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    uint64_t head = ci ? ci->header_size : 0;
    int chunked = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                              MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
    if (f->status) {
        if (f->verdict_in_head || f->verdict_request != c->heads) return 0;   /* a later one's */
        if (f->verdict_head_len == head && (chunked || f->verdict_on_head)) {
            pm_svc_framing_verdict(f, v);
            pm_svc__count_refusal(c->g, f->status);
            return f->status;
        }
        pm_svc_framing_off(f);   /* the library saw another head: forget it (all bytes went on) */
        return 0;
    }
    if (!pm_svc_framing_on(f) || f->requests < c->heads) {
        pm_svc_framing_off(f);
    } else if (f->requests == c->heads) {
        if (f->last_head_len == head && f->last_chunked == chunked) c->confirmed = c->heads;
        else pm_svc_framing_off(f);
    }
    return 0;
}

int pm_svc_guard_request_in(struct MHD_Connection *conn) {
    pm_svc__conn *c = pm_svc__of(conn);
    return c ? pm_svc__move(c, PM_SVC_C_WAIT, 0) : 1;
}

void pm_svc_guard_request_raw(struct MHD_Connection *conn) {
    pm_svc__conn *c = pm_svc__of(conn);
    if (!c) return;
    pthread_mutex_lock(&c->g->mu);
    if (c->state == PM_SVC_C_BODY) c->state = PM_SVC_C_RAW;   /* keeps the body deadline */
    pthread_mutex_unlock(&c->g->mu);
}

int pm_svc_guard_request_end(struct MHD_Connection *conn) {
    pm_svc__conn *c = pm_svc__of(conn);
    if (!c) return 0;
    pm_svc_guard *g = c->g;
    /* A kept-alive connection may idle as long as the library allows, then
     * has the head deadline for its next request. */
    uint64_t wait = pm_svc__ms_ns(g->conf.header_ms) + (uint64_t)g->conf.idle_s * 1000000000ull;
    pthread_mutex_lock(&g->mu);
    int answered = c->answered;
    if (c->state != PM_SVC_C_CUT) {
        c->state = PM_SVC_C_HEAD;
        c->served++;
        c->id[0] = c->acao[0] = '\0';
        c->answered_ns = pm_svc_now_ns();
        c->deadline_ns = g->conf.header_ms ? c->answered_ns + wait : 0;
    }
    pthread_mutex_unlock(&g->mu);
    if (c->head_refusal) {   /* the next head was refused while this answer went out */
        c->head_refusal = 0;
        pm_svc__refuse_on_wire(c, PM_SVC_C_HEAD);
    }
    return answered;
}

/* A kept-alive connection answered this recently counts as busy during a
 * drain: its client sends the next request as soon as it has read the
 * answer (microseconds, or milliseconds on a loaded host), and that
 * request is then answered (with Connection: close) instead of meeting the
 * connection's close. */
#define PM_SVC_NEXT_REQUEST_GRACE_NS (100ull * 1000000ull)

size_t pm_svc_guard_busy(pm_svc_guard *g) {
    uint64_t now = pm_svc_now_ns();
    /* A fresh connection gets this long to show its head during a drain. */
    uint64_t grace = pm_svc__ms_ns(g->conf.header_ms && g->conf.header_ms < 1000 ? g->conf.header_ms
                                                                                 : 1000);
    size_t n = 0;
    pthread_mutex_lock(&g->mu);
    n += atomic_load(&g->handed);   /* handed over, about to be announced: may carry a request */
    for (pm_svc__conn *c = g->head; c; c = c->next) {
        int unread = 0;
        switch (c->state) {
        case PM_SVC_C_BODY:
        case PM_SVC_C_WAIT: n++; break;
        case PM_SVC_C_HEAD:
            if (!c->served && now < c->opened_ns + grace) {
                n++;
            } else if (c->served && now < c->answered_ns + PM_SVC_NEXT_REQUEST_GRACE_NS) {
                n++;
            } else if (ioctl(c->fd, FIONREAD, &unread) == 0 && unread > 0) {
                n++;
            }
            break;
        default: break;
        }
    }
    pthread_mutex_unlock(&g->mu);
    return n;
}

void pm_svc_guard_render(pm_svc_guard *g, pm_svc_buf *b) {
    pthread_mutex_lock(&g->mu);
    size_t open = g->open, cut = g->cut;
    pthread_mutex_unlock(&g->mu);
    pm_svc_buf_printf(b,
                      "# HELP procmesh_connections_open Connections open (accepted, not closed).\n"
                      "# TYPE procmesh_connections_open gauge\nprocmesh_connections_open %zu\n"
                      "# HELP procmesh_connections_limit Connections the server takes at once.\n"
                      "# TYPE procmesh_connections_limit gauge\nprocmesh_connections_limit %u\n"
                      "# HELP procmesh_connections_closing Connections shut down by the guard, "
                      "not yet closed.\n"
                      "# TYPE procmesh_connections_closing gauge\nprocmesh_connections_closing %zu\n"
                      "# HELP procmesh_connections_cut_total Connections closed by the guard: "
                      "head or body deadline (408), idle keep-alive past its next head's "
                      "deadline, evicted to keep room.\n"
                      "# TYPE procmesh_connections_cut_total counter\n",
                      open, g->conf.max_connections, cut);
    for (int i = 0; i < PM_SVC_NCUTS; i++)
        pm_svc_buf_printf(b, "procmesh_connections_cut_total{reason=\"%s\"} %llu\n",
                          pm_svc__cut_label[i],
                          (unsigned long long)atomic_load_explicit(&g->cuts[i],
                                                                   memory_order_relaxed));
    pm_svc_buf_printf(
        b,
        "# HELP procmesh_framing_refused_total Requests refused from their framing as the bytes "
        "arrived, before libmicrohttpd judged them: malformed heads or chunks (400), a chunk "
        "declared past --body-limit (413), request lines (414) or heads (431) too long, HTTP "
        "versions other than 1.x (505).\n"
        "# TYPE procmesh_framing_refused_total counter\n");
    for (int i = 0; i < 5; i++)
        pm_svc_buf_printf(b, "procmesh_framing_refused_total{status=\"%d\"} %llu\n",
                          pm_svc__refusal_status[i],
                          (unsigned long long)atomic_load_explicit(&g->framing[i],
                                                                   memory_order_relaxed));
}

/* ---- the bytes the library receives ---- */

/* Answers the follower's verdict on the socket, when c is in state from
 * (g->mu taken here), and shuts its sending side: the answer is all.
 * Returns 0 when c is not (answered otherwise, or cut; or, for a head, an
 * earlier request on the connection is still being answered: then
 * pm_svc_guard_request_end answers it, so answers keep their order).
 *  - PM_SVC_C_BODY: a chunk's verdict (the library cannot queue an answer
 *    while it reads a body);
 *  - PM_SVC_C_HEAD: a head's (the library never hands it over): a new
 *    request id, CORS as for a 408.
 * The connection is then closed at its deadline at the latest. */
static int pm_svc__refuse_on_wire(pm_svc__conn *c, pm_svc__cstate from) {
    pm_svc_guard *g = c->g;
    pm_svc_strict_verdict v;
    pm_svc_framing_verdict(&c->frame, &v);
    pthread_mutex_lock(&g->mu);
    int now = c->state == from;
    if (now) {
        if (from == PM_SVC_C_HEAD) c->id[0] = c->acao[0] = '\0';
        /* Counted before the answer leaves: a client that reads the answer
         * and then asks /metrics sees it counted. */
        pm_svc__count_refusal(g, v.status);
        pm_svc__write_problem(c, v.status, v.type, v.title, v.detail);
        shutdown(c->fd, SHUT_WR);
        c->answered = v.status;
        c->state = PM_SVC_C_RAW;
    }
    pthread_mutex_unlock(&g->mu);
    return now;
}

/* Swallows what the client still sends after an answer written on the
 * socket, so that it reads the answer rather than a reset, up to four
 * times the body limit; then reports the end of the stream, and the
 * library closes the connection. n is what the last read returned. */
static ssize_t pm_svc__swallow(pm_svc__conn *c, int fd, void *buf, size_t cap, ssize_t n) {
    for (;;) {
        if (n <= 0) return n;   /* the client closed, or nothing waits (EAGAIN) */
        c->drained += (uint64_t)n;
        if (c->drained / 4 > c->frame.limit) return 0;
        n = recvfrom(fd, buf, cap, 0, NULL, NULL);
    }
}

/* libmicrohttpd reads every request byte through this (0.9.75 calls
 * recv() with no flags); the definition in the executable comes before
 * libc's. Bytes of tracked connections go through the framing follower. */
ssize_t recv(int fd, void *buf, size_t len, int flags) {
    ssize_t n = recvfrom(fd, buf, len, flags, NULL, NULL);
    _Atomic(pm_svc__conn *) *slot = flags ? NULL : pm_svc__fd_slot(fd);
    pm_svc__conn *c = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
    if (!c) return n;
    if (c->draining) return pm_svc__swallow(c, fd, buf, len, n);
    if (n <= 0 || !pm_svc_framing_on(&c->frame)) return n;
    size_t keep = pm_svc_framing_feed(&c->frame, buf, (size_t)n);
    /* A verdict on a request whose head the library has not handed over
     * yet waits for that head call; every byte goes on meanwhile. */
    pm_svc_framing *f = &c->frame;
    if (!f->status) return n;
    if (f->verdict_in_head) {
        /* Acted on only where the follower agreed with the library on
         * every head so far; else the library answers as it would. */
        if (f->requests != c->confirmed || c->heads != f->requests) {
            pm_svc_framing_off(f);
            return n;
        }
        if (!pm_svc__refuse_on_wire(c, PM_SVC_C_HEAD)) c->head_refusal = 1;
    } else if (f->verdict_request != c->confirmed ||
               (f->status == 413 && c->decided == f->verdict_request) ||
               !pm_svc__refuse_on_wire(c, PM_SVC_C_BODY)) {
        return n;   /* a request refused from its head goes on as before (server.c) */
    }
    c->draining = 1;
    c->drained = (uint64_t)n - keep;
    return keep ? (ssize_t)keep : pm_svc__swallow(c, fd, buf, len, recvfrom(fd, buf, len, 0, NULL, NULL));
}

/* The Content-Length line of the head at the start of b (n bytes), as
 * [*at, *at + *len), or 0 when it has none before the blank line. */
static int pm_svc__head_cl(const char *b, size_t n, size_t *at, size_t *len) {
    static const char name[] = "content-length:";
    const char *p = memchr(b, '\n', n);   /* past the status line */
    while (p && (size_t)(p + 1 - b) < n) {
        const char *line = p + 1;
        size_t left = n - (size_t)(line - b);
        const char *eol = memchr(line, '\n', left);
        if (!eol || eol == line || (eol == line + 1 && line[0] == '\r')) return 0;
        if ((size_t)(eol - line) > sizeof name - 1 && strncasecmp(line, name, sizeof name - 1) == 0) {
            *at = (size_t)(line - b);
            *len = (size_t)(eol + 1 - line);
            return 1;
        }
        p = eol;
    }
    return 0;
}

/* libmicrohttpd (0.9.75 and 1.0) writes a Content-Length on every 304
 * (connection.c leaves it out for 1xx and 204 only), with no option to
 * drop it; RFC 9110 8.6 lets a 304 carry one only with the 200's length,
 * and caches do better without. So the head of a 304 on a tracked
 * connection goes out without that line, and the library is told that
 * every byte it gave was sent (offsets stay its own across partial
 * sends). The library writes a head with send(); any other byte passes
 * untouched. */
ssize_t send(int fd, const void *buf, size_t n, int flags) {
    static const char s304[] = "HTTP/1.1 304 ";
    _Atomic(pm_svc__conn *) *slot = pm_svc__fd_slot(fd);
    pm_svc__conn *c = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
    const char *b = buf;
    if (!c) return sendto(fd, buf, n, flags, NULL, 0);
    if (!c->cut_len && (n < sizeof s304 - 1 || memcmp(b, s304, sizeof s304 - 1) != 0 ||
                        !pm_svc__head_cl(b, n, &c->cut_at, &c->cut_len)))
        return sendto(fd, buf, n, flags, NULL, 0);
    if (c->cut_at >= n) {   /* the line comes in a later call */
        ssize_t k = sendto(fd, buf, n, flags, NULL, 0);
        if (k > 0) c->cut_at -= (size_t)k;
        return k;
    }
    size_t skip = c->cut_len < n - c->cut_at ? c->cut_len : n - c->cut_at;
    struct iovec v[2] = {{(void *)b, c->cut_at}, {(void *)(b + c->cut_at + skip), n - c->cut_at - skip}};
    struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
    ssize_t k = sendmsg(fd, &m, flags);
    if (k < 0) return k;
    if ((size_t)k < c->cut_at) {
        c->cut_at -= (size_t)k;
        return k;
    }
    c->cut_len -= skip;   /* 0 unless the line goes on in the next buffer */
    c->cut_at = 0;
    return k + (ssize_t)skip;
}
