/* One procmesh with the Redis tier, black box: flags, degraded readiness,
 * TTL on stored entries, a hung Redis, metrics. */
#include <criterion/criterion.h>
#include <hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pm_test_server.h"
#include "procs.h"

static pm_tp_redis rd;
static pm_test_server srv;

static void setup(void) {
    memset(&rd, 0, sizeof rd);
    memset(&srv, 0, sizeof srv);
    cr_assert_eq(pm_tp_redis_start(&rd), 0, "redis-server did not start");
}

static void teardown(void) {
    if (srv.pid) pm_test_server_stop(&srv);
    pm_tp_redis_cleanup(&rd);
}

TestSuite(redis_http, .init = setup, .fini = teardown, .timeout = 60);

static void start_with(const char *ttl, const char *timeout_ms) {
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", rd.port);
    const char *args[] = {"--redis", url, "--redis-ttl", ttl, "--redis-timeout-ms", timeout_ms,
                          "--log-level", "warn", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}

static char *readyz(void) {
    pm_http_response r;
    pm_http_get(&srv, "/readyz", &r);
    cr_assert_eq(r.status, 200, "/readyz must stay 200 (a replica without Redis still serves)");
    char *body = strdup((const char *)r.body);
    pm_http_response_free(&r);
    return body;
}

static int wait_ready_state(const char *word, int timeout_ms) {
    double end = pm_tp_now_ms() + timeout_ms;
    for (;;) {
        char *b = readyz();
        int ok = strstr(b, word) != NULL;
        free(b);
        if (ok) return 1;
        if (pm_tp_now_ms() > end) return 0;
        pm_tp_sleep_ms(50);
    }
}

static long get_status(const char *path, char *xcache, size_t cap) {
    pm_http_response r;
    pm_http_get(&srv, path, &r);
    if (xcache && !pm_http_header(&r, "X-Cache", xcache, cap)) xcache[0] = '\0';
    long st = r.status;
    pm_http_response_free(&r);
    return st;
}

Test(redis_http, stores_with_the_configured_ttl_and_version_prefix) {
    start_with("123", "200");
    cr_expect(wait_ready_state("\"ok\"", 2000), "tier not ok with Redis up");
    char xc[16];
    cr_assert_eq(get_status("/v1/dungeons?seed=11", xc, sizeof xc), 200);
    cr_expect_str_eq(xc, "MISS");
    redisContext *c = redisConnect("127.0.0.1", rd.port);
    cr_assert(c && !c->err);
    redisReply *keys = NULL;
    for (int i = 0; i < 100; i++) { /* stored after the answer: poll */
        keys = redisCommand(c, "KEYS procmesh:%s:*", PM_VERSION);
        if (keys->elements > 0) break;
        freeReplyObject(keys);
        keys = NULL;
        pm_tp_sleep_ms(20);
    }
    cr_assert_not_null(keys, "nothing stored under procmesh:%s:*", PM_VERSION);
    cr_expect_eq(keys->elements, 1);
    redisReply *ttl = redisCommand(c, "TTL %s", keys->element[0]->str);
    cr_expect(ttl->integer > 100 && ttl->integer <= 123, "TTL %lld, want about 123", ttl->integer);
    freeReplyObject(ttl);
    freeReplyObject(keys);
    redisFree(c);
    double stores = 0;
    for (int i = 0; i < 100 && stores < 1; i++) { /* counted when the reply arrives */
        stores = pm_test_metric(&srv, "procmesh_redis_stores_total");
        if (stores < 1) pm_tp_sleep_ms(20);
    }
    cr_expect_eq(stores, 1);
    cr_expect_eq(pm_test_metric(&srv, "procmesh_redis_up"), 1);
    cr_expect_geq(pm_test_metric(&srv, "procmesh_redis_command_duration_seconds_count{op=\"get\"}"), 1);
}

Test(redis_http, starts_and_serves_without_redis_then_recovers) {
    int port = rd.port;
    pm_tp_redis_kill(&rd);
    start_with("60", "100");
    cr_expect(wait_ready_state("degraded", 2000), "readiness must say degraded without Redis");
    char xc[16];
    cr_expect_eq(get_status("/v1/dungeons?seed=12", xc, sizeof xc), 200);
    cr_expect_str_eq(xc, "MISS");
    cr_expect_eq(get_status("/v1/dungeons?seed=12", xc, sizeof xc), 200);
    cr_expect_str_eq(xc, "HIT", "the memory cache must work without Redis");
    cr_expect_eq(pm_test_metric(&srv, "procmesh_redis_up"), 0);
    rd.port = port;
    cr_assert_eq(pm_tp_redis_start(&rd), 0);
    cr_expect(wait_ready_state("\"ok\"", 10000), "no reconnect after Redis came up");
    cr_expect_geq(pm_test_metric(&srv, "procmesh_redis_reconnects_total"), 1);
}

Test(redis_http, a_hung_redis_costs_one_timeout_then_nothing) {
    start_with("60", "150");
    char xc[16];
    cr_assert_eq(get_status("/v1/dungeons?seed=13", xc, sizeof xc), 200);
    kill(rd.pid, SIGSTOP);
    double t0 = pm_tp_now_ms();
    cr_expect_eq(get_status("/v1/dungeons?seed=14", xc, sizeof xc), 200);
    double first = pm_tp_now_ms() - t0;
    /* the lookup times out (150 ms); the SET after the answer costs no one */
    cr_expect_lt(first, 150 + 600, "first request with a hung Redis took %.0f ms", first);
    t0 = pm_tp_now_ms();
    for (unsigned s = 15; s < 25; s++) {
        char p[64];
        snprintf(p, sizeof p, "/v1/dungeons?seed=%u", s);
        cr_expect_eq(get_status(p, xc, sizeof xc), 200);
    }
    double rest = (pm_tp_now_ms() - t0) / 10;
    cr_expect_lt(rest, 120, "requests while Redis hangs took %.0f ms each: not failing fast", rest);
    cr_expect(wait_ready_state("degraded", 3000));
    kill(rd.pid, SIGCONT);
    cr_expect(wait_ready_state("\"ok\"", 10000), "no recovery after SIGCONT");
}

static void redis_config(const char *name, const char *value) {
    redisContext *c = redisConnect("127.0.0.1", rd.port);
    cr_assert(c && !c->err);
    redisReply *r = redisCommand(c, "CONFIG SET %s %s", name, value);
    cr_assert(r && r->type == REDIS_REPLY_STATUS, "CONFIG SET %s %s failed", name, value);
    freeReplyObject(r);
    redisFree(c);
}

Test(redis_http, a_redis_that_refuses_writes_is_reported_read_only) {
    start_with("60", "200");
    cr_assert(wait_ready_state("\"ok\"", 2000));
    /* A real Redis over its memory limit with no eviction: reads work, every
     * write is refused with an OOM error. No traffic is needed to notice. */
    redis_config("maxmemory-policy", "noeviction");
    redis_config("maxmemory", "1");
    cr_expect(wait_ready_state("\"tier\":\"read-only\"", 4000),
              "readiness must report a tier that refuses writes");
    cr_expect_eq(pm_test_metric(&srv, "procmesh_redis_writable"), 0);
    cr_expect_eq(pm_test_metric(&srv, "procmesh_redis_up"), 1);
    char xc[16];
    cr_expect_eq(get_status("/v1/dungeons?seed=31", xc, sizeof xc), 200, "requests still served");
    char *log = pm_test_server_log(&srv);
    cr_expect(strstr(log, "redis refuses writes") && strstr(log, "OOM"), "no warning naming the refusal");
    free(log);
    redis_config("maxmemory", "0");
    cr_expect(wait_ready_state("\"tier\":\"ok\"", 4000), "writable again once Redis takes writes");
    cr_expect_eq(pm_test_metric(&srv, "procmesh_redis_writable"), 1);
}

static int run_exit(const char *const *argv, const char *env, char *out, size_t cap) {
    char log[] = "/tmp/procmesh-cfg-XXXXXX";
    int fd = mkstemp(log);
    cr_assert_geq(fd, 0);
    close(fd);
    char *envs[] = {(char *)env, NULL};
    pid_t pid = pm_tp_spawn((char *const *)argv, env ? envs : NULL, log);
    cr_assert_gt(pid, 0);
    int st = pm_tp_stop(pid, 0, 5000); /* signal 0: just wait */
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f) fclose(f);
    unlink(log);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(redis_http, bad_settings_are_configuration_errors) {
    char out[8192];
    const char *bad_url[] = {PM_BINARY, "--port", "0", "--redis", "redis://cache:99999", NULL};
    cr_expect_eq(run_exit(bad_url, NULL, out, sizeof out), 2);
    cr_expect(strstr(out, "--redis") && strstr(out, "port"), "message: %s", out);
    const char *env_only[] = {PM_BINARY, "--port", "0", NULL};
    cr_expect_eq(run_exit(env_only, "PROCMESH_REDIS_URL=memcached://x", out, sizeof out), 2);
    cr_expect(strstr(out, "redis://"), "message: %s", out);
    const char *bad_timeout[] = {PM_BINARY, "--redis-timeout-ms", "0", NULL};
    cr_expect_eq(run_exit(bad_timeout, NULL, out, sizeof out), 2);
    const char *bad_ttl[] = {PM_BINARY, "--redis-ttl", "-1", NULL};
    cr_expect_eq(run_exit(bad_ttl, NULL, out, sizeof out), 2);
    const char *help[] = {PM_BINARY, "--help", NULL};
    cr_expect_eq(run_exit(help, NULL, out, sizeof out), 0);
    cr_expect(strstr(out, "PROCMESH_REDIS_URL") && strstr(out, "PROCMESH_REDIS_TTL") &&
              strstr(out, "PROCMESH_REDIS_TIMEOUT_MS"), "--help lacks the Redis variables");
}
