/* Black box: start-up configuration, and shutdown on SIGTERM / SIGINT. */
#include <jansson.h>
#include <signal.h>

#include "svc_fixtures.h"

static pm_test_server srv;

Test(http_lifecycle, sigterm_drains_in_flight_requests_and_exits_0) {
    const char *args[] = {"--workers", "1", "--deadline-ms", "300000", "--drain-ms", "300000",
                          SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char body[512];
    svc_slow_body(body, sizeof body, 1);
    svc_call c;
    svc_call_start(&c, &srv, SVC_SLOW_PATH, body);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_workers_busy", 1), 1);
    cr_assert_eq(pm_test_server_signal(&srv, SIGTERM), 0);
    svc_sleep_ms(100);
    /* Stopped accepting: a new connection is refused. */
    pm_http_response r;
    cr_assert_eq(pm_http_get(&srv, "/healthz", &r), -1);
    pm_http_response_free(&r);
    svc_call_join(&c);
    cr_assert_eq(c.r.status, 200, "the in-flight request completes: %ld %s", c.r.status, c.r.body);
    pm_http_response_free(&c.r);
    cr_assert_eq(pm_test_server_wait(&srv, 10000), 0);
    char *log = pm_test_server_log(&srv);
    cr_assert_not_null(strstr(log, "\"msg\":\"draining\""));
    cr_assert_not_null(strstr(log, "\"msg\":\"stopped\",\"cut_short\":0"));
    free(log);
    cr_assert_eq(pm_test_server_stop(&srv), 0);
}

Test(http_lifecycle, a_request_longer_than_the_drain_is_cut_with_503) {
    /* A drain of 1 ms: the heavy job cannot finish within it. */
    const char *args[] = {"--workers", "1", "--drain-ms", "1", "--deadline-ms", "60000",
                          SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char body[512];
    svc_slow_body(body, sizeof body, 2);
    svc_call c;
    svc_call_start(&c, &srv, SVC_SLOW_PATH, body);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_workers_busy", 1), 1);
    double t0 = svc_now();
    cr_assert_eq(pm_test_server_signal(&srv, SIGINT), 0);
    svc_call_join(&c);
    cr_assert_eq(c.r.status, 503);
    pm_http_response_free(&c.r);
    cr_assert_eq(pm_test_server_wait(&srv, 10000), 0, "exit 0 after a bounded drain");
    cr_assert_lt(svc_now() - t0, 5.0);
    cr_assert_eq(pm_test_server_stop(&srv), 0);
}

Test(http_lifecycle, bad_configuration_exits_2) {
    const char *bad[][3] = {{"--workers", "0", NULL}, {"--no-such-flag", "1", NULL},
                            {"--bind", "not-an-address", NULL}};
    int expect[] = {2, 2, 1};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(pm_test_server_start(&srv, bad[i]), -1);
        cr_assert(srv.exited);
        cr_assert_eq(srv.status, expect[i], "case %d: exit %d", i, srv.status);
    }
    const char *env[] = {"PROCMESH_QUEUE=lots", NULL};
    cr_assert_eq(pm_test_server_start_env(&srv, NULL, env), -1);
    cr_assert_eq(srv.status, 2);
}

Test(http_lifecycle, environment_configures_and_flags_win) {
    const char *env[] = {"PROCMESH_WORKERS=3", "PROCMESH_QUEUE=7", "PROCMESH_CACHE_MB=5", NULL};
    const char *args[] = {"--queue", "9", NULL};
    cr_assert_eq(pm_test_server_start_env(&srv, args, env), 0);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_workers"), 3);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_queue_capacity"), 9);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_max_bytes"), 5 << 20);
    cr_assert_eq(pm_test_server_stop(&srv), 0);
}

Test(http_lifecycle, help_exits_0) {
    const char *args[] = {"--help", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), -1, "prints and exits instead of listening");
    cr_assert(srv.exited);
    cr_assert_eq(srv.status, 0);
}
