/* The Redis tier against a real redis-server on a loopback port. */
#include <criterion/criterion.h>
#include <hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"
#include "redis_tier.h"

static pm_tp_redis srv;
static pm_svc_tier *tier;

static void start(void) {
    memset(&srv, 0, sizeof srv);
    cr_assert_eq(pm_tp_redis_start(&srv), 0, "redis-server did not start");
}

static void stop(void) {
    if (tier) tier->destroy(tier);
    tier = NULL;
    pm_tp_redis_cleanup(&srv);
}

static char *url_of(const pm_tp_redis *r) {
    static char u[64];
    snprintf(u, sizeof u, "redis://127.0.0.1:%d", r->port);
    return u;
}

static void key_of(uint8_t k[16], unsigned i) {
    for (int b = 0; b < 16; b++) k[b] = (uint8_t)(i * 31u + (unsigned)b * 7u + 1u);
}

/* A direct connection for looking at what the tier stored. */
static redisContext *direct(void) {
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    cr_assert(c && !c->err, "direct connection failed");
    return c;
}

/* Polls healthy() until it equals want or timeout_ms passes. */
static int wait_health(int want, int timeout_ms) {
    double end = pm_tp_now_ms() + timeout_ms;
    while (pm_tp_now_ms() < end) {
        if (tier->healthy(tier) == want) return 1;
        pm_tp_sleep_ms(10);
    }
    return tier->healthy(tier) == want;
}

static unsigned long long metric(const char *name) {
    static char buf[16384];
    size_t n = tier->metrics(tier, buf, sizeof buf - 1);
    buf[n] = '\0';
    char pat[160];
    snprintf(pat, sizeof pat, "\n%s ", name);
    const char *p = strstr(buf, pat);
    cr_assert(p, "metric %s missing", name);
    return strtoull(p + strlen(pat), NULL, 10);
}

/* ---- URL parsing ------------------------------------------------------- */

Test(redis_url, accepts_the_documented_forms) {
    pm_svc_redis_url u;
    char err[200];
    cr_assert_eq(pm_svc_redis_url_parse("redis://cache", &u, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(u.host, "cache");
    cr_expect_eq(u.port, 6379);
    cr_expect_eq(u.db, 0);
    cr_expect_str_eq(u.password, "");
    cr_assert_eq(pm_svc_redis_url_parse("redis://:s%40cret@10.0.0.5:6380/3", &u, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(u.host, "10.0.0.5");
    cr_expect_eq(u.port, 6380);
    cr_expect_eq(u.db, 3);
    cr_expect_str_eq(u.user, "");
    cr_expect_str_eq(u.password, "s@cret");
    cr_assert_eq(pm_svc_redis_url_parse("redis://app:pw@[::1]:7000/", &u, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(u.host, "::1");
    cr_expect_eq(u.port, 7000);
    cr_expect_str_eq(u.user, "app");
    cr_expect_str_eq(u.password, "pw");
}

Test(redis_url, rejects_bad_urls_with_a_reason) {
    struct { const char *url, *needle; } bad[] = {
        {"", "empty"},
        {"http://x", "redis://"},
        {"rediss://x", "TLS"},
        {"redis://", "missing host"},
        {"redis://:6379", "missing host"},
        {"redis://h:0", "port"},
        {"redis://h:70000", "port"},
        {"redis://h:12ab", "port"},
        {"redis://h/x", "database"},
        {"redis://h/99999999", "database"},
        {"redis://h?timeout=1", "query"},
        {"redis://pw@h", "credentials"},
        {"redis://:@h", "empty password"},
        {"redis://:p%zz@h", "password"},
        {"redis://[::1", "']'"},
        {"redis://[::1]x", "':port'"},
        {"redis://h st", "invalid character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pm_svc_redis_url u;
        char err[200] = "";
        cr_expect_eq(pm_svc_redis_url_parse(bad[i].url, &u, err, sizeof err), -1, "accepted %s", bad[i].url);
        cr_expect(strstr(err, bad[i].needle), "%s: reason '%s' lacks '%s'", bad[i].url, err, bad[i].needle);
    }
    char err[200] = "";
    pm_svc_redis_url u;
    pm_svc_redis_url_parse("redis://:topsecret@h:99999", &u, err, sizeof err);
    cr_expect_null(strstr(err, "topsecret"), "the reason must not leak the password");
    cr_expect_null(pm_svc_redis_tier_create("redis://h:0", 60, NULL, 100));
}

/* ---- against a live server --------------------------------------------- */

TestSuite(redis_tier, .init = start, .fini = stop, .timeout = 30);

Test(redis_tier, stores_and_fetches_bytes) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 500);
    cr_assert_not_null(tier);
    cr_assert_eq(tier->healthy(tier), 1);
    uint8_t k[16], other[16];
    key_of(k, 1);
    key_of(other, 2);
    unsigned char blob[3000];
    for (size_t i = 0; i < sizeof blob; i++) blob[i] = (unsigned char)(i * 13u); /* has NULs */
    unsigned char *got = NULL;
    size_t len = 0;
    cr_expect_eq(tier->get(tier, k, &got, &len), 0, "empty Redis must miss");
    tier->put(tier, k, blob, sizeof blob);
    cr_assert_eq(tier->get(tier, k, &got, &len), 1);
    cr_assert_eq(len, sizeof blob);
    cr_expect_eq(memcmp(got, blob, len), 0);
    free(got);
    cr_expect_eq(tier->get(tier, other, &got, &len), 0);
    tier->put(tier, other, (const unsigned char *)"", 0); /* empty blobs round-trip too */
    cr_assert_eq(tier->get(tier, other, &got, &len), 1);
    cr_expect_eq(len, 0);
    free(got);
    cr_expect_eq(metric("procmesh_redis_hits_total"), 2);
    cr_expect_eq(metric("procmesh_redis_misses_total"), 2);
    cr_expect_eq(metric("procmesh_redis_stores_total"), 2);
    cr_expect_eq(metric("procmesh_redis_up"), 1);
}

Test(redis_tier, keys_carry_prefix_and_version) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "pfx", 500);
    cr_assert_not_null(tier);
    uint8_t k[16];
    key_of(k, 3);
    tier->put(tier, k, (const unsigned char *)"v", 1);
    char name[256];
    size_t n = pm_svc_redis_tier_key(tier, k, name, sizeof name);
    cr_assert_gt(n, 0);
    char want[256];
    snprintf(want, sizeof want, "pfx:%s:", PM_VERSION);
    cr_expect_eq(strncmp(name, want, strlen(want)), 0, "key %s lacks %s", name, want);
    cr_expect_eq(strlen(name), strlen(want) + 32);
    redisContext *c = direct();
    redisReply *rep = redisCommand(c, "KEYS *");
    cr_assert_eq(rep->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(rep->elements, 1);
    cr_expect_str_eq(rep->element[0]->str, name);
    freeReplyObject(rep);
    /* An entry of another version under the same hex key is not read. */
    char old[256];
    snprintf(old, sizeof old, "pfx:0.0.0-old:%s", name + strlen(want));
    freeReplyObject(redisCommand(c, "SET %s stale", old));
    uint8_t k2[16];
    key_of(k2, 4);
    n = pm_svc_redis_tier_key(tier, k2, name, sizeof name);
    snprintf(old, sizeof old, "pfx:0.0.0-old:%s", name + strlen(want));
    freeReplyObject(redisCommand(c, "SET %s stale", old));
    unsigned char *got = NULL;
    size_t len = 0;
    cr_expect_eq(tier->get(tier, k2, &got, &len), 0, "read another version's entry");
    redisFree(c);
    /* Another prefix is another namespace. */
    pm_svc_tier *t2 = pm_svc_redis_tier_create(url_of(&srv), 60, "other", 500);
    cr_expect_eq(t2->get(t2, k, &got, &len), 0);
    t2->destroy(t2);
}

Test(redis_tier, ttl_is_applied) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 100, "t", 500);
    uint8_t k[16];
    key_of(k, 5);
    tier->put(tier, k, (const unsigned char *)"abc", 3);
    char name[256];
    pm_svc_redis_tier_key(tier, k, name, sizeof name);
    redisContext *c = direct();
    redisReply *rep = redisCommand(c, "TTL %s", name);
    cr_assert_eq(rep->type, REDIS_REPLY_INTEGER);
    cr_expect(rep->integer > 90 && rep->integer <= 100, "TTL %lld", rep->integer);
    freeReplyObject(rep);
    tier->destroy(tier);

    /* ttl 0 stores without expiry; ttl 1 is gone after a second. */
    tier = pm_svc_redis_tier_create(url_of(&srv), 0, "t0", 500);
    tier->put(tier, k, (const unsigned char *)"abc", 3);
    pm_svc_redis_tier_key(tier, k, name, sizeof name);
    rep = redisCommand(c, "TTL %s", name);
    cr_expect_eq(rep->integer, -1, "ttl 0 must mean no expiry");
    freeReplyObject(rep);
    tier->destroy(tier);

    tier = pm_svc_redis_tier_create(url_of(&srv), 1, "t1", 500);
    tier->put(tier, k, (const unsigned char *)"abc", 3);
    unsigned char *got = NULL;
    size_t len = 0;
    cr_assert_eq(tier->get(tier, k, &got, &len), 1);
    free(got);
    int gone = 0;
    for (int i = 0; i < 40 && !gone; i++) { /* expiry has 1 s resolution: <= 2.1 s */
        pm_tp_sleep_ms(100);
        gone = tier->get(tier, k, &got, &len) == 0;
        if (!gone) free(got);
    }
    cr_expect(gone, "entry with ttl 1 still there after 4 s");
    redisFree(c);
}

Test(redis_tier, killed_server_fails_fast_then_reconnects) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 300);
    uint8_t k[16];
    key_of(k, 6);
    tier->put(tier, k, (const unsigned char *)"x", 1);
    pm_tp_redis_kill(&srv);

    unsigned char *got = NULL;
    size_t len = 0;
    double t0 = pm_tp_now_ms();
    int rc = tier->get(tier, k, &got, &len); /* the call that finds out */
    cr_expect_eq(rc, -1);
    cr_expect_lt(pm_tp_now_ms() - t0, 300 + 100, "first failure must cost at most the timeout");
    cr_assert(wait_health(0, 2000), "healthy() still 1 with Redis dead");
    t0 = pm_tp_now_ms();
    for (int i = 0; i < 200; i++) {
        cr_expect_eq(tier->get(tier, k, &got, &len), -1);
        tier->put(tier, k, (const unsigned char *)"x", 1);
    }
    double per = (pm_tp_now_ms() - t0) / 400.0;
    cr_expect_lt(per, 1.0, "calls while down must not block (%.3f ms each)", per);
    cr_expect_geq(metric("procmesh_redis_skipped_total"), 400);
    cr_expect_eq(metric("procmesh_redis_up"), 0);

    pm_tp_sleep_ms(700); /* a few failed reconnects: the backoff grows */
    cr_assert_eq(pm_tp_redis_start(&srv), 0, "restart failed");
    cr_assert(wait_health(1, 8000), "no reconnect within 8 s");
    cr_expect_geq(metric("procmesh_redis_reconnects_total"), 1);
    cr_expect_geq(metric("procmesh_redis_errors_total{op=\"connect\"}"), 1);
    tier->put(tier, k, (const unsigned char *)"y", 1);
    cr_assert_eq(tier->get(tier, k, &got, &len), 1, "no service after reconnect");
    cr_expect(len == 1 && got[0] == 'y');
    free(got);
}

Test(redis_tier, idle_tier_notices_death_without_traffic) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 300);
    cr_assert_eq(tier->healthy(tier), 1);
    pm_tp_redis_kill(&srv);
    cr_expect(wait_health(0, 3000), "monitor PING did not notice the dead Redis");
    cr_assert_eq(pm_tp_redis_start(&srv), 0);
    cr_expect(wait_health(1, 8000));
}

Test(redis_tier, hung_server_costs_at_most_the_timeout) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 200);
    uint8_t k[16];
    key_of(k, 7);
    tier->put(tier, k, (const unsigned char *)"x", 1);
    kill(srv.pid, SIGSTOP); /* accepts nothing, answers nothing: a hung Redis */
    unsigned char *got = NULL;
    size_t len = 0;
    double t0 = pm_tp_now_ms();
    int rc = tier->get(tier, k, &got, &len);
    double first = pm_tp_now_ms() - t0;
    cr_expect_eq(rc, -1);
    cr_expect_lt(first, 200 + 150, "a hung Redis cost %.0f ms", first);
    cr_expect_eq(tier->healthy(tier), 0);
    t0 = pm_tp_now_ms();
    for (int i = 0; i < 100; i++) cr_expect_eq(tier->get(tier, k, &got, &len), -1);
    cr_expect_lt(pm_tp_now_ms() - t0, 50, "calls while hung must fail fast");
    kill(srv.pid, SIGCONT);
    cr_assert(wait_health(1, 8000), "no recovery after SIGCONT");
    cr_assert_eq(tier->get(tier, k, &got, &len), 1);
    free(got);
}

Test(redis_tier, unreachable_at_start_is_not_fatal) {
    int port = srv.port;
    pm_tp_redis_kill(&srv);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    tier = pm_svc_redis_tier_create(url, 60, "t", 200);
    cr_assert_not_null(tier, "a down Redis must not stop the service");
    cr_expect_eq(tier->healthy(tier), 0);
    uint8_t k[16];
    key_of(k, 8);
    unsigned char *got = NULL;
    size_t len = 0;
    cr_expect_eq(tier->get(tier, k, &got, &len), -1);
    cr_assert_eq(pm_tp_redis_start(&srv), 0);
    cr_expect(wait_health(1, 8000), "never connected after Redis came up");
}

Test(redis_tier, password_and_db_from_the_url) {
    redisContext *c = direct();
    freeReplyObject(redisCommand(c, "CONFIG SET requirepass hunter2"));
    redisFree(c);
    char url[96];
    snprintf(url, sizeof url, "redis://:hunter2@127.0.0.1:%d/5", srv.port);
    tier = pm_svc_redis_tier_create(url, 60, "t", 500);
    cr_assert_eq(tier->healthy(tier), 1);
    uint8_t k[16];
    key_of(k, 9);
    tier->put(tier, k, (const unsigned char *)"z", 1);
    c = direct();
    freeReplyObject(redisCommand(c, "AUTH hunter2"));
    freeReplyObject(redisCommand(c, "SELECT 5"));
    redisReply *rep = redisCommand(c, "DBSIZE");
    cr_expect_eq(rep->integer, 1, "entry not in db 5");
    freeReplyObject(rep);
    redisFree(c);
    tier->destroy(tier);
    snprintf(url, sizeof url, "redis://:wrong@127.0.0.1:%d", srv.port);
    tier = pm_svc_redis_tier_create(url, 60, "t", 500);
    cr_assert_not_null(tier);
    cr_expect_eq(tier->healthy(tier), 0, "a wrong password must leave the tier degraded");
}

typedef struct {
    unsigned base;
    int bad;
} worker_arg;

static void *hammer(void *p) {
    worker_arg *a = p;
    for (unsigned i = 0; i < 200; i++) {
        uint8_t k[16];
        key_of(k, a->base + i % 20);
        unsigned char v[64];
        memset(v, (int)(a->base + i % 20), sizeof v);
        tier->put(tier, k, v, sizeof v);
        unsigned char *got = NULL;
        size_t len = 0;
        if (tier->get(tier, k, &got, &len) != 1 || len != sizeof v || memcmp(got, v, len)) a->bad++;
        free(got);
    }
    return NULL;
}

Test(redis_tier, concurrent_callers_share_the_pool) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 1000);
    pthread_t th[16];
    worker_arg args[16];
    for (unsigned i = 0; i < 16; i++) {
        args[i] = (worker_arg){100 + i * 20, 0};
        pthread_create(&th[i], NULL, hammer, &args[i]);
    }
    for (int i = 0; i < 16; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 16; i++) cr_expect_eq(args[i].bad, 0, "thread %d saw wrong data", i);
    cr_expect_eq(metric("procmesh_redis_hits_total"), 16 * 200);
    redisContext *c = direct();
    redisReply *rep = redisCommand(c, "CLIENT LIST");
    int conns = 0;
    for (const char *p = rep->str; (p = strstr(p, "cmd=")) != NULL; p++) conns++;
    freeReplyObject(rep);
    redisFree(c);
    cr_expect_leq(conns, 8 + 1 + 1, "%d connections: the pool must bound them", conns);
}

Test(redis_tier, metrics_are_prometheus_text) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 500);
    uint8_t k[16];
    key_of(k, 10);
    unsigned char *got = NULL;
    size_t len = 0;
    for (int i = 0; i < 5; i++) tier->get(tier, k, &got, &len);
    tier->put(tier, k, (const unsigned char *)"q", 1);
    char buf[16384];
    size_t n = tier->metrics(tier, buf, sizeof buf - 1);
    buf[n] = '\0';
    cr_assert_gt(n, 0);
    cr_expect(strstr(buf, "# TYPE procmesh_redis_command_duration_seconds histogram\n"));
    cr_expect(strstr(buf, "procmesh_redis_command_duration_seconds_bucket{op=\"get\",le=\"+Inf\"} 5\n"), "%s", buf);
    cr_expect(strstr(buf, "procmesh_redis_command_duration_seconds_count{op=\"get\"} 5\n"));
    cr_expect(strstr(buf, "procmesh_redis_command_duration_seconds_count{op=\"set\"} 1\n"));
    /* buckets are cumulative: non-decreasing */
    unsigned long long prev = 0;
    for (const char *p = buf; (p = strstr(p, "_bucket{op=\"get\"")) != NULL; p++) {
        unsigned long long v = strtoull(strchr(p, '}') + 2, NULL, 10);
        cr_expect_geq(v, prev);
        prev = v;
    }
    /* every line ends in a newline; a short buffer gets whole lines only */
    cr_expect_eq(buf[n - 1], '\n');
    char small[300];
    size_t m = tier->metrics(tier, small, sizeof small);
    cr_expect_leq(m, sizeof small);
    cr_assert_gt(m, 0);
    cr_expect_eq(small[m - 1], '\n');
    cr_expect_eq(memcmp(small, buf, m), 0);
}

/* main.c creates the tier before it blocks SIGTERM for sigwait: the
 * tier's thread must not be a thread that can take the signal. */
Test(redis_tier, background_thread_never_takes_sigterm) {
    tier = pm_svc_redis_tier_create(url_of(&srv), 60, "t", 200);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    for (int i = 0; i < 20; i++) {
        kill(getpid(), SIGTERM);
        struct timespec ts = {1, 0};
        cr_assert_eq(sigtimedwait(&term, NULL, &ts), SIGTERM, "SIGTERM went elsewhere");
    }
}
