/* The Redis cache tier (service/tier.h over hiredis).
 *
 * Concurrency: MHD handler threads and generation workers call get/put at
 * the same time. A hiredis context is not thread-safe, so calls share a
 * small pool of connections (PM__POOL) checked out under a mutex:
 *  - one mutex-guarded connection would serialise every lookup, so one
 *    slow reply would stall all requests behind it;
 *  - one connection per thread would open a connection per MHD thread
 *    (hundreds with thread-per-connection) on every replica;
 *  - a pool bounds Redis connections per replica while letting PM__POOL
 *    lookups run in parallel; a caller that finds every slot busy for the
 *    whole timeout takes a miss rather than waiting longer.
 *
 * Failure handling: every connection belongs to an "epoch". The first I/O
 * failure or timeout on a current-epoch connection marks the tier down and
 * starts a new epoch; from then on get/put return at once (a miss) without
 * touching the network. A monitor thread reconnects with exponential
 * backoff (PM__BACKOFF_MIN_MS doubling to PM__BACKOFF_MAX_MS, "equal
 * jitter" so that replicas do not reconnect in lockstep) and, while up,
 * PINGs every PM__PING_MS so that /readyz notices a dead Redis even without
 * traffic. It also writes a small probe key ("<prefix>-write-probe",
 * expiring in 10 s, outside the result keys' "<prefix>:" space), so
 * that a Redis that answers but refuses writes (maxmemory with noeviction,
 * a read-only replica, MISCONF) shows as "read-only" without traffic; a
 * refused SET of a result says the same at once. Pool connections from an old epoch are reopened lazily. The
 * monitor also resolves the host name, so request threads only ever
 * connect to a numeric address (a DNS lookup has no timeout). */
#include "redis_tier.h"

#include "buf.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <hiredis.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define PM__POOL 8
#define PM__BACKOFF_MIN_MS 100u
#define PM__BACKOFF_MAX_MS 5000u
#define PM__PING_MS 1000u
#define PM__NBUCKETS 13

/* Histogram bucket bounds, in microseconds and as Prometheus prints them. */
static const uint64_t pm__bucket_us[PM__NBUCKETS] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000};
static const char *const pm__bucket_le[PM__NBUCKETS] = {
    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
    "0.025", "0.05", "0.1", "0.25", "0.5", "1"};

typedef struct pm__hist {
    atomic_ullong bucket[PM__NBUCKETS]; /* non-cumulative; summed on output */
    atomic_ullong count;
    atomic_ullong sum_us;
} pm__hist;

typedef struct pm__slot {
    redisContext *c;
    unsigned epoch;
    int busy;
} pm__slot;

typedef struct pm__redis {
    pm_svc_tier base; /* first: the tier pointer is the object pointer */
    pm_svc_redis_url url;
    char prefix[192];
    char probe_key[192];     /* written by the monitor; outside prefix's key space */
    unsigned ttl;
    unsigned timeout_ms;
    struct timeval tv;

    atomic_int healthy;
    atomic_int writable;     /* the last write (a result or the probe) was accepted */
    atomic_uint epoch;

    pthread_mutex_t addr_mu; /* guards addr (written by the monitor) */
    char addr[INET6_ADDRSTRLEN];

    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    pm__slot slot[PM__POOL];

    pthread_mutex_t mon_mu;
    pthread_cond_t mon_cv;
    pthread_t mon;
    int mon_started;
    int stop;
    redisContext *mon_c;
    unsigned mon_epoch;
    unsigned backoff_ms;
    uint64_t jitter;

    atomic_ullong hits, misses, stores, skipped, reconnects;
    atomic_ullong err_get, err_set, err_connect;
    pm__hist h_get, h_set;
} pm__redis;

/* ---- small helpers ---------------------------------------------------- */

static uint64_t pm__now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static struct timespec pm__deadline(unsigned ms) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000u;
    ts.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* One structured log line (log.h) with the reason as a JSON string. */
static void pm__log(int level, const char *msg, const char *reason) {
    char esc[600];
    pm_svc_json_escape(esc, sizeof esc, reason);
    pm_svc_log(level, NULL, msg, "\"reason\":\"%s\"", esc);
}

/* Timing-only randomness (backoff jitter): it never reaches output, so a
 * clock-seeded splitmix64 is enough. Called with mon_mu held. */
static uint64_t pm__jitter_next(pm__redis *r) {
    uint64_t z = (r->jitter += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void pm__observe(pm__hist *h, uint64_t us) {
    int i = 0;
    while (i < PM__NBUCKETS && us > pm__bucket_us[i]) i++;
    if (i < PM__NBUCKETS) atomic_fetch_add(&h->bucket[i], 1);
    atomic_fetch_add(&h->count, 1);
    atomic_fetch_add(&h->sum_us, us);
}

/* ---- URL parsing -------------------------------------------------------- */

static int pm__fail(char *err, size_t cap, const char *fmt, ...) {
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int pm__hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Copies [s, s+n) percent-decoded into out; -1 on bad escape or overflow. */
static int pm__decode(const char *s, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return -1;
            int hi = pm__hexval(s[i + 1]), lo = pm__hexval(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (o + 1 >= cap) return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* Parses a decimal integer in [lo, hi] spanning exactly [s, s+n). */
static int pm__parse_int(const char *s, size_t n, long lo, long hi, int *out) {
    if (n == 0 || n > 6) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int pm__parse_userinfo(const char *s, size_t n, pm_svc_redis_url *u, char *err, size_t cap) {
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return pm__fail(err, cap, "redis URL: credentials must be ':password@' or 'user:password@'");
    size_t ulen = (size_t)(colon - s);
    if (pm__decode(s, ulen, u->user, sizeof u->user) != 0)
        return pm__fail(err, cap, "redis URL: user name too long or badly %%-encoded");
    if (pm__decode(colon + 1, n - ulen - 1, u->password, sizeof u->password) != 0)
        return pm__fail(err, cap, "redis URL: password too long or badly %%-encoded");
    if (u->password[0] == '\0')
        return pm__fail(err, cap, "redis URL: empty password after ':'");
    return 0;
}

static int pm__parse_hostport(const char *s, size_t n, pm_svc_redis_url *u, char *err, size_t cap) {
    const char *port = NULL;
    size_t hlen;
    const char *h = s;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close) return pm__fail(err, cap, "redis URL: IPv6 address lacks its closing ']'");
        h = s + 1;
        hlen = (size_t)(close - h);
        const char *after = close + 1;
        if (after < s + n) {
            if (*after != ':') return pm__fail(err, cap, "redis URL: expected ':port' after ']'");
            port = after + 1;
        }
    } else {
        const char *colon = memchr(s, ':', n);
        hlen = colon ? (size_t)(colon - s) : n;
        if (colon) port = colon + 1;
    }
    if (hlen == 0) return pm__fail(err, cap, "redis URL: missing host");
    if (hlen >= sizeof u->host) return pm__fail(err, cap, "redis URL: host name too long");
    for (size_t i = 0; i < hlen; i++) {
        unsigned char c = (unsigned char)h[i];
        if (c <= ' ' || c == '@' || c == '/' || c == '?' || c == '#' || c == '%' || c >= 0x7f)
            return pm__fail(err, cap, "redis URL: invalid character in host");
    }
    memcpy(u->host, h, hlen);
    u->host[hlen] = '\0';
    if (port && pm__parse_int(port, (size_t)(s + n - port), 1, 65535, &u->port) != 0)
        return pm__fail(err, cap, "redis URL: port must be a number in 1..65535");
    return 0;
}

int pm_svc_redis_url_parse(const char *url, pm_svc_redis_url *out, char *err, size_t errcap) {
    static const char scheme[] = "redis://";
    memset(out, 0, sizeof *out);
    out->port = 6379;
    if (!url || !*url) return pm__fail(err, errcap, "redis URL: empty");
    if (strncmp(url, "rediss://", 9) == 0)
        return pm__fail(err, errcap, "redis URL: rediss:// (TLS) is not supported; use redis://");
    if (strncmp(url, scheme, sizeof scheme - 1) != 0)
        return pm__fail(err, errcap, "redis URL: must start with redis://");
    const char *p = url + sizeof scheme - 1;
    if (strpbrk(p, "?#"))
        return pm__fail(err, errcap, "redis URL: query strings and fragments are not supported");
    const char *slash = strchr(p, '/');
    const char *end = slash ? slash : p + strlen(p);
    const char *at = NULL;
    for (const char *q = p; q < end; q++)
        if (*q == '@') at = q; /* the last '@': a password may not hold one unencoded anyway */
    if (at) {
        if (pm__parse_userinfo(p, (size_t)(at - p), out, err, errcap) != 0) return -1;
        p = at + 1;
    }
    if (pm__parse_hostport(p, (size_t)(end - p), out, err, errcap) != 0) return -1;
    if (slash && slash[1] != '\0' &&
        pm__parse_int(slash + 1, strlen(slash + 1), 0, 65535, &out->db) != 0)
        return pm__fail(err, errcap, "redis URL: database after '/' must be a number in 0..65535");
    return 0;
}

/* ---- connections ------------------------------------------------------- */

/* Sends one command and checks for a status/OK-like reply; 0 on success. */
static int pm__simple(redisContext *c, char *err, size_t cap, int argc, const char **argv) {
    redisReply *rep = redisCommandArgv(c, argc, argv, NULL);
    if (!rep) return pm__fail(err, cap, "%s: %s", argv[0], c->errstr);
    int ok = rep->type != REDIS_REPLY_ERROR;
    if (!ok) pm__fail(err, cap, "%s: %.*s", argv[0], (int)rep->len, rep->str ? rep->str : "");
    freeReplyObject(rep);
    return ok ? 0 : -1;
}

/* Opens an authenticated connection to addr with both timeouts set. */
static redisContext *pm__open(pm__redis *r, const char *addr, char *err, size_t cap) {
    redisContext *c = redisConnectWithTimeout(addr, r->url.port, r->tv);
    if (!c) {
        pm__fail(err, cap, "connect: out of memory");
        return NULL;
    }
    if (c->err || redisSetTimeout(c, r->tv) != REDIS_OK) {
        pm__fail(err, cap, "connect %s:%d: %s", addr, r->url.port, c->errstr);
        redisFree(c);
        return NULL;
    }
    redisEnableKeepAlive(c);
    int rc = 0;
    if (r->url.password[0]) {
        const char *a2[] = {"AUTH", r->url.password};
        const char *a3[] = {"AUTH", r->url.user, r->url.password};
        rc = r->url.user[0] ? pm__simple(c, err, cap, 3, a3) : pm__simple(c, err, cap, 2, a2);
    }
    if (rc == 0 && r->url.db != 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", r->url.db);
        const char *sel[] = {"SELECT", db};
        rc = pm__simple(c, err, cap, 2, sel);
    }
    if (rc != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* Resolves the host to a numeric address (first result). */
static int pm__resolve(const char *host, char *out, size_t cap, char *err, size_t ecap) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) return pm__fail(err, ecap, "resolve %s: %s", host, gai_strerror(rc));
    const void *a = res->ai_family == AF_INET6
                        ? (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr;
    const char *ok = inet_ntop(res->ai_family, a, out, (socklen_t)cap);
    freeaddrinfo(res);
    return ok ? 0 : pm__fail(err, ecap, "resolve %s: %s", host, strerror(errno));
}

/* Marks the tier down if the failing connection belongs to the current
 * epoch; failures of older connections say nothing about the present. */
static void pm__mark_down(pm__redis *r, unsigned conn_epoch, const char *why) {
    unsigned e = conn_epoch;
    if (!atomic_compare_exchange_strong(&r->epoch, &e, conn_epoch + 1)) return;
    if (atomic_exchange(&r->healthy, 0))
        pm__log(PM_SVC_LOG_WARN, "redis down; lookups are misses until it reconnects", why);
    pthread_mutex_lock(&r->mon_mu);
    pthread_cond_signal(&r->mon_cv);
    pthread_mutex_unlock(&r->mon_mu);
}

/* ---- the pool ---------------------------------------------------------- */

/* Takes a free slot, preferring one already connected in this epoch; waits
 * at most the timeout for one to come free. NULL when none did. */
static pm__slot *pm__checkout(pm__redis *r) {
    struct timespec until = pm__deadline(r->timeout_ms);
    unsigned e = atomic_load(&r->epoch);
    pm__slot *got = NULL;
    pthread_mutex_lock(&r->pool_mu);
    for (;;) {
        for (int i = 0; i < PM__POOL; i++) {
            pm__slot *s = &r->slot[i];
            if (s->busy) continue;
            if (!got || (s->c && s->epoch == e && !(got->c && got->epoch == e))) got = s;
        }
        if (got || pthread_cond_timedwait(&r->pool_cv, &r->pool_mu, &until) == ETIMEDOUT) break;
    }
    if (got) got->busy = 1;
    pthread_mutex_unlock(&r->pool_mu);
    return got;
}

static void pm__release(pm__redis *r, pm__slot *s) {
    pthread_mutex_lock(&r->pool_mu);
    s->busy = 0;
    pthread_cond_signal(&r->pool_cv);
    pthread_mutex_unlock(&r->pool_mu);
}

/* Makes sure the slot holds a connection of the current epoch. */
static int pm__ensure(pm__redis *r, pm__slot *s) {
    unsigned e = atomic_load(&r->epoch);
    if (s->c && s->epoch == e) return 0;
    if (s->c) redisFree(s->c);
    s->c = NULL;
    char addr[INET6_ADDRSTRLEN], err[256];
    pthread_mutex_lock(&r->addr_mu);
    memcpy(addr, r->addr, sizeof addr);
    pthread_mutex_unlock(&r->addr_mu);
    s->c = pm__open(r, addr, err, sizeof err);
    if (!s->c) {
        atomic_fetch_add(&r->err_connect, 1);
        pm__mark_down(r, e, err);
        return -1;
    }
    s->epoch = e;
    return 0;
}

/* Checks a slot out for a command, or NULL (counted) when the tier is down,
 * the pool stays busy for the timeout, or connecting fails. */
static pm__slot *pm__begin(pm__redis *r, atomic_ullong *errs) {
    if (!atomic_load(&r->healthy)) {
        atomic_fetch_add(&r->skipped, 1);
        return NULL;
    }
    pm__slot *s = pm__checkout(r);
    if (!s) {
        atomic_fetch_add(&r->skipped, 1);
        return NULL;
    }
    if (pm__ensure(r, s) != 0) {
        atomic_fetch_add(errs, 1);
        pm__release(r, s);
        return NULL;
    }
    return s;
}

/* After a NULL reply (I/O error or timeout) a hiredis context is unusable:
 * drop it and mark the tier down. */
static void pm__broken(pm__redis *r, pm__slot *s) {
    char why[160];
    snprintf(why, sizeof why, "%s", s->c->errstr[0] ? s->c->errstr : "I/O error");
    unsigned e = s->epoch;
    redisFree(s->c);
    s->c = NULL;
    pm__mark_down(r, e, why);
}

/* Records whether Redis took the last write; logs each change. why is the
 * error reply when it refused. */
static void pm__wrote(pm__redis *r, int ok, const char *why) {
    if (atomic_exchange(&r->writable, ok) == ok) return;
    if (ok)
        pm__log(PM_SVC_LOG_INFO, "redis accepts writes again", "");
    else
        pm__log(PM_SVC_LOG_WARN, "redis refuses writes; results are not shared", why);
}

/* ---- the tier operations ----------------------------------------------- */

static size_t pm__key(const pm__redis *r, const uint8_t key[16], char *out, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    size_t pl = strlen(r->prefix);
    if (pl + 33 > cap) return 0;
    memcpy(out, r->prefix, pl);
    for (int i = 0; i < 16; i++) {
        out[pl + 2 * i] = hex[key[i] >> 4];
        out[pl + 2 * i + 1] = hex[key[i] & 15];
    }
    out[pl + 32] = '\0';
    return pl + 32;
}

static int pm__get(pm_svc_tier *t, const uint8_t key[16], unsigned char **data, size_t *len) {
    pm__redis *r = (pm__redis *)t;
    char k[256];
    size_t kl = pm__key(r, key, k, sizeof k);
    pm__slot *s = pm__begin(r, &r->err_get);
    if (!s) return -1;
    uint64_t t0 = pm__now_us();
    redisReply *rep = redisCommand(s->c, "GET %b", k, kl);
    pm__observe(&r->h_get, pm__now_us() - t0);
    int rc = -1;
    if (!rep) {
        atomic_fetch_add(&r->err_get, 1);
        pm__broken(r, s);
    } else if (rep->type == REDIS_REPLY_NIL) {
        atomic_fetch_add(&r->misses, 1);
        rc = 0;
    } else if (rep->type == REDIS_REPLY_STRING) {
        unsigned char *buf = malloc(rep->len + 1);
        if (buf) {
            memcpy(buf, rep->str, rep->len);
            *data = buf;
            *len = rep->len;
            atomic_fetch_add(&r->hits, 1);
            rc = 1;
        } else {
            atomic_fetch_add(&r->err_get, 1);
        }
    } else {
        atomic_fetch_add(&r->err_get, 1);
    }
    if (rep) freeReplyObject(rep);
    pm__release(r, s);
    return rc;
}

static void pm__put(pm_svc_tier *t, const uint8_t key[16], const unsigned char *data, size_t len) {
    pm__redis *r = (pm__redis *)t;
    char k[256];
    size_t kl = pm__key(r, key, k, sizeof k);
    pm__slot *s = pm__begin(r, &r->err_set);
    if (!s) return;
    uint64_t t0 = pm__now_us();
    redisReply *rep = r->ttl ? redisCommand(s->c, "SET %b %b EX %u", k, kl, data, len, r->ttl)
                             : redisCommand(s->c, "SET %b %b", k, kl, data, len);
    pm__observe(&r->h_set, pm__now_us() - t0);
    if (!rep) {
        atomic_fetch_add(&r->err_set, 1);
        pm__broken(r, s);
    } else {
        int refused = rep->type == REDIS_REPLY_ERROR;
        atomic_fetch_add(refused ? &r->err_set : &r->stores, 1);
        pm__wrote(r, !refused, refused && rep->str ? rep->str : "");
        freeReplyObject(rep);
    }
    pm__release(r, s);
}

static int pm__writable(pm_svc_tier *t) { return atomic_load(&((pm__redis *)t)->writable); }

static int pm__healthy(pm_svc_tier *t) {
    return atomic_load(&((pm__redis *)t)->healthy);
}

/* ---- metrics ----------------------------------------------------------- */

typedef struct pm__out {
    char *buf;
    size_t cap, len;
    int full;
} pm__out;

/* Appends one whole line or nothing, so a short buffer never ends mid-line. */
static void pm__line(pm__out *o, const char *fmt, ...) {
    if (o->full) return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line || o->len + (size_t)n > o->cap) {
        o->full = 1;
        return;
    }
    memcpy(o->buf + o->len, line, (size_t)n);
    o->len += (size_t)n;
}

static void pm__counter(pm__out *o, const char *name, const char *help, unsigned long long v) {
    pm__line(o, "# HELP %s %s\n", name, help);
    pm__line(o, "# TYPE %s counter\n", name);
    pm__line(o, "%s %llu\n", name, v);
}

static void pm__hist_out(pm__out *o, const char *op, pm__hist *h) {
    const char *n = "procmesh_redis_command_duration_seconds";
    unsigned long long cum = 0;
    for (int i = 0; i < PM__NBUCKETS; i++) {
        cum += atomic_load(&h->bucket[i]);
        pm__line(o, "%s_bucket{op=\"%s\",le=\"%s\"} %llu\n", n, op, pm__bucket_le[i], cum);
    }
    unsigned long long count = atomic_load(&h->count);
    unsigned long long sum = atomic_load(&h->sum_us);
    pm__line(o, "%s_bucket{op=\"%s\",le=\"+Inf\"} %llu\n", n, op, count);
    pm__line(o, "%s_sum{op=\"%s\"} %llu.%06llu\n", n, op, sum / 1000000u, sum % 1000000u);
    pm__line(o, "%s_count{op=\"%s\"} %llu\n", n, op, count);
}

static size_t pm__metrics(pm_svc_tier *t, char *buf, size_t cap) {
    pm__redis *r = (pm__redis *)t;
    pm__out o = {buf, cap, 0, 0};
    pm__line(&o, "# HELP procmesh_redis_up 1 when the Redis tier answers, 0 when degraded.\n");
    pm__line(&o, "# TYPE procmesh_redis_up gauge\n");
    pm__line(&o, "procmesh_redis_up %d\n", atomic_load(&r->healthy));
    pm__line(&o, "# HELP procmesh_redis_writable 1 when Redis took the last write, 0 when it "
                 "refuses writes.\n");
    pm__line(&o, "# TYPE procmesh_redis_writable gauge\n");
    pm__line(&o, "procmesh_redis_writable %d\n", atomic_load(&r->writable));
    pm__counter(&o, "procmesh_redis_hits_total", "Redis lookups that found an entry.",
                atomic_load(&r->hits));
    pm__counter(&o, "procmesh_redis_misses_total", "Redis lookups that found no entry.",
                atomic_load(&r->misses));
    pm__counter(&o, "procmesh_redis_stores_total", "Entries stored in Redis.",
                atomic_load(&r->stores));
    pm__counter(&o, "procmesh_redis_skipped_total",
                "Redis calls answered as misses without contacting Redis (down or pool busy).",
                atomic_load(&r->skipped));
    pm__counter(&o, "procmesh_redis_reconnects_total", "Recoveries after Redis was down.",
                atomic_load(&r->reconnects));
    pm__line(&o, "# HELP procmesh_redis_errors_total Failed Redis operations by kind.\n");
    pm__line(&o, "# TYPE procmesh_redis_errors_total counter\n");
    pm__line(&o, "procmesh_redis_errors_total{op=\"get\"} %llu\n", atomic_load(&r->err_get));
    pm__line(&o, "procmesh_redis_errors_total{op=\"set\"} %llu\n", atomic_load(&r->err_set));
    pm__line(&o, "procmesh_redis_errors_total{op=\"connect\"} %llu\n",
             atomic_load(&r->err_connect));
    pm__line(&o, "# HELP procmesh_redis_command_duration_seconds Redis GET/SET latency.\n");
    pm__line(&o, "# TYPE procmesh_redis_command_duration_seconds histogram\n");
    pm__hist_out(&o, "get", &r->h_get);
    pm__hist_out(&o, "set", &r->h_set);
    return o.len;
}

/* ---- the monitor ------------------------------------------------------- */

/* One reconnection attempt: resolve, connect, PING. 0 on success. */
static int pm__probe(pm__redis *r, unsigned e, char *err, size_t cap) {
    char addr[INET6_ADDRSTRLEN];
    if (pm__resolve(r->url.host, addr, sizeof addr, err, cap) != 0) return -1;
    redisContext *c = pm__open(r, addr, err, cap);
    if (!c) return -1;
    const char *ping[] = {"PING"};
    if (pm__simple(c, err, cap, 1, ping) != 0) {
        redisFree(c);
        return -1;
    }
    pthread_mutex_lock(&r->addr_mu);
    memcpy(r->addr, addr, sizeof addr);
    pthread_mutex_unlock(&r->addr_mu);
    if (r->mon_c) redisFree(r->mon_c);
    r->mon_c = c;
    r->mon_epoch = e;
    return 0;
}

/* While up: PING on the monitor's own connection. */
static void pm__ping(pm__redis *r) {
    char err[256];
    if (!r->mon_c) { /* cannot happen while up; if it did, reconnect */
        pm__mark_down(r, atomic_load(&r->epoch), "no health-check connection");
        return;
    }
    const char *ping[] = {"PING"};
    if (pm__simple(r->mon_c, err, sizeof err, 1, ping) == 0) {
        const char *set[] = {"SET", r->probe_key, "1", "PX", "10000"};
        if (pm__simple(r->mon_c, err, sizeof err, 5, set) == 0) {
            pm__wrote(r, 1, "");
            return;
        }
        if (!r->mon_c->err) { /* an error reply: up, but refusing writes */
            pm__wrote(r, 0, err);
            return;
        }
    }
    if (r->mon_c->err) { /* I/O failure, not an error reply */
        redisFree(r->mon_c);
        r->mon_c = NULL;
    }
    pm__mark_down(r, r->mon_epoch, err);
}

/* While down: one attempt; success makes the tier healthy unless another
 * failure started a newer epoch meanwhile. Called without mon_mu held. */
static int pm__recover(pm__redis *r) {
    char err[256];
    unsigned e = atomic_load(&r->epoch);
    if (pm__probe(r, e, err, sizeof err) != 0) {
        atomic_fetch_add(&r->err_connect, 1);
        return -1;
    }
    if (atomic_load(&r->epoch) != e) return -1;
    atomic_store(&r->healthy, 1);
    atomic_fetch_add(&r->reconnects, 1);
    char where[300];
    snprintf(where, sizeof where, "%s:%d", r->url.host, r->url.port);
    pm__log(PM_SVC_LOG_INFO, "redis up", where);
    return 0;
}

static void *pm__monitor(void *arg) {
    pm__redis *r = arg;
    pthread_mutex_lock(&r->mon_mu);
    while (!r->stop) {
        int up = atomic_load(&r->healthy);
        unsigned wait = PM__PING_MS;
        if (!up) /* equal jitter: half fixed, half random */
            wait = r->backoff_ms / 2 + (unsigned)(pm__jitter_next(r) % (r->backoff_ms / 2 + 1));
        struct timespec until = pm__deadline(wait);
        int rc = 0;
        while (!r->stop && rc != ETIMEDOUT && atomic_load(&r->healthy) == up)
            rc = pthread_cond_timedwait(&r->mon_cv, &r->mon_mu, &until);
        if (r->stop) break;
        if (atomic_load(&r->healthy) != up) continue; /* went down: start backing off */
        pthread_mutex_unlock(&r->mon_mu);
        if (up) {
            pm__ping(r);
        } else {
            int ok = pm__recover(r) == 0;
            unsigned next = r->backoff_ms * 2;
            r->backoff_ms = ok ? PM__BACKOFF_MIN_MS : (next > PM__BACKOFF_MAX_MS ? PM__BACKOFF_MAX_MS : next);
        }
        pthread_mutex_lock(&r->mon_mu);
    }
    pthread_mutex_unlock(&r->mon_mu);
    return NULL;
}

/* ---- life cycle -------------------------------------------------------- */

static void pm__destroy(pm_svc_tier *t) {
    pm__redis *r = (pm__redis *)t;
    if (!r) return;
    if (r->mon_started) {
        pthread_mutex_lock(&r->mon_mu);
        r->stop = 1;
        pthread_cond_signal(&r->mon_cv);
        pthread_mutex_unlock(&r->mon_mu);
        pthread_join(r->mon, NULL);
    }
    for (int i = 0; i < PM__POOL; i++)
        if (r->slot[i].c) redisFree(r->slot[i].c);
    if (r->mon_c) redisFree(r->mon_c);
    pthread_cond_destroy(&r->pool_cv);
    pthread_cond_destroy(&r->mon_cv);
    pthread_mutex_destroy(&r->pool_mu);
    pthread_mutex_destroy(&r->mon_mu);
    pthread_mutex_destroy(&r->addr_mu);
    free(r);
}

static int pm__init_sync(pm__redis *r) {
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return -1;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&r->addr_mu, NULL) | pthread_mutex_init(&r->pool_mu, NULL) |
             pthread_mutex_init(&r->mon_mu, NULL) | pthread_cond_init(&r->pool_cv, &ca) |
             pthread_cond_init(&r->mon_cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc ? -1 : 0;
}

/* hiredis writes with write(2): a Redis that closes the connection would
 * raise SIGPIPE and kill the process. Ignore it unless someone installed a
 * handler (the HTTP server needs it ignored as well). */
static void pm__ignore_sigpipe(void) {
    struct sigaction old;
    if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction ign;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ign, NULL);
    }
}

/* The monitor thread blocks every signal: the server takes SIGTERM with
 * sigwait in its main thread, which only works if no other thread can
 * receive it (a thread with it unblocked would get the default action and
 * kill the process without a drain), whenever the tier is created. */
static int pm__start_monitor(pm__redis *r) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&r->mon, NULL, pm__monitor, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

pm_svc_tier *pm_svc_redis_tier_create(const char *url, unsigned ttl_seconds,
                                      const char *key_prefix, unsigned timeout_ms) {
    char err[256];
    pm_svc_redis_url u;
    if (pm_svc_redis_url_parse(url, &u, err, sizeof err) != 0) {
        pm__log(PM_SVC_LOG_ERROR, "redis tier not created", err);
        return NULL;
    }
    if (!key_prefix) key_prefix = "procmesh";
    pm__redis *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (pm__init_sync(r) != 0) {
        free(r);
        return NULL;
    }
    r->url = u;
    snprintf(r->prefix, sizeof r->prefix, "%.150s:%s:", key_prefix, PM_VERSION);
    snprintf(r->probe_key, sizeof r->probe_key, "%.150s-write-probe", key_prefix);
    r->ttl = ttl_seconds;
    r->timeout_ms = timeout_ms ? timeout_ms : 1;
    r->tv.tv_sec = r->timeout_ms / 1000u;
    r->tv.tv_usec = (long)(r->timeout_ms % 1000u) * 1000L;
    r->backoff_ms = PM__BACKOFF_MIN_MS;
    r->jitter = pm__now_us() ^ (uint64_t)(uintptr_t)r;
    r->base.get = pm__get;
    r->base.put = pm__put;
    r->base.healthy = pm__healthy;
    r->base.writable = pm__writable;
    atomic_init(&r->writable, 1);
    r->base.metrics = pm__metrics;
    r->base.destroy = pm__destroy;
    pm__ignore_sigpipe();
    /* One synchronous attempt, so a replica that starts next to a live
     * Redis is healthy (and ready) from its first request. */
    if (pm__probe(r, 0, err, sizeof err) == 0) {
        atomic_store(&r->healthy, 1);
    } else {
        atomic_fetch_add(&r->err_connect, 1);
        pm__log(PM_SVC_LOG_WARN, "redis not reachable yet; retrying in the background", err);
    }
    if (pm__start_monitor(r) != 0) {
        pm__destroy(&r->base);
        return NULL;
    }
    r->mon_started = 1;
    return &r->base;
}

size_t pm_svc_redis_tier_key(const pm_svc_tier *t, const uint8_t key[16], char *out, size_t cap) {
    return pm__key((const pm__redis *)t, key, out, cap);
}
