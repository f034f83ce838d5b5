/* Black box, raw sockets: connection defence. Slow or idle clients holding
 * every connection cannot lock out /healthz (the oldest incomplete ones
 * make room), one address cannot take more than its share, and on SIGTERM
 * connections already queued are answered rather than reset. */
#include <signal.h>
#include <unistd.h>

#include "pm_test_raw.h"
#include "procs.h"
#include "svc_fixtures.h"

static pm_test_server srv;

static void stop(void) {
    if (srv.pid) pm_test_server_stop(&srv);
}

/* n connections that send an incomplete head and then nothing. */
static int hold_slow(int *fds, int n, const char *src) {
    int held = 0;
    for (int i = 0; i < n; i++) {
        fds[i] = pm_raw_connect_from(src, srv.port);
        if (fds[i] < 0) continue;
        pm_raw_send_str(fds[i], "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ");
        held++;
    }
    return held;
}

static void close_all(int *fds, int n) {
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
}

Test(http_guard, slow_clients_holding_every_connection_do_not_lock_out_health, .fini = stop,
     .timeout = 60) {
    /* Deadlines far away: only the room kept for new connections helps. */
    const char *args[] = {"--max-connections", "48", "--reserve-connections", "8",
                          "--header-timeout-ms", "60000", "--idle-timeout-s", "60", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    enum { N = 100 };
    int fds[N];
    cr_assert_eq(hold_slow(fds, N, NULL), N, "the kernel queues what the server does not take");
    double worst = 0;
    for (int i = 0; i < 20; i++) {
        pm_http_request req = {.method = "GET", .path = i % 2 ? "/healthz" : "/readyz",
                               .timeout_ms = 2000};
        pm_http_response r;
        pm_http(&srv, &req, &r);
        cr_assert_eq(r.status, 200, "probe %d: %ld after %.2f s", i, r.status, r.seconds);
        if (r.seconds > worst) worst = r.seconds;
        pm_http_response_free(&r);
        /* The attacker keeps opening. */
        int more = pm_raw_connect(srv.port);
        if (more >= 0) {
            pm_raw_send_str(more, "GET / HTTP/1.1\r\n");
            close(fds[i]);
            fds[i] = more;
        }
    }
    cr_assert_lt(worst, 1.0, "slowest probe %.3f s", worst);
    cr_assert_geq(pm_test_metric(&srv, "procmesh_connections_cut_total{reason=\"evicted\"}"), 1);
    cr_assert_leq(pm_test_metric(&srv, "procmesh_connections_open"), 48);
    close_all(fds, N);
}

Test(http_guard, one_address_is_limited_others_are_not, .fini = stop, .timeout = 60) {
    const char *args[] = {"--max-connections-per-ip", "4", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    int fds[4];
    for (int i = 0; i < 4; i++) {
        fds[i] = pm_raw_connect_from("127.0.0.2", srv.port);
        cr_assert_geq(fds[i], 0);
    }
    /* Wait until the server took all four in (accepting is asynchronous). */
    svc_wait_metric(&srv, "procmesh_connections_open", 4);
    int fifth = pm_raw_connect_from("127.0.0.2", srv.port);
    cr_assert_geq(fifth, 0);
    pm_raw_send_str(fifth, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    pm_raw_reply r;
    pm_raw_read(fifth, 2000, &r);
    close(fifth);
    cr_assert(r.status == 0 && (r.closed || r.reset), "the fifth from one address is closed: %.200s",
              r.text);
    /* Another address is served meanwhile... */
    int other = pm_raw_connect_from("127.0.0.3", srv.port);
    pm_raw_send_str(other, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    pm_raw_read(other, 2000, &r);
    close(other);
    cr_assert_eq(r.status, 200);
    /* ...and the first one is again once it closes one. */
    close(fds[0]);
    svc_wait_metric_below(&srv, "procmesh_connections_open", 4);   /* 3 and the probe's own */
    int again = pm_raw_connect_from("127.0.0.2", srv.port);
    pm_raw_send_str(again, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    pm_raw_read(again, 2000, &r);
    close(again);
    cr_assert_eq(r.status, 200);
    close_all(fds + 1, 3);
}

Test(http_guard, sigterm_answers_connections_queued_in_the_backlog, .fini = stop, .timeout = 60) {
    /* Every connection slot but one is taken by a request waiting for the
     * one worker; the last goes to the first queued connection (it stays
     * open, kept alive), so the next ones wait in the listen backlog. */
    const char *args[] = {"--max-connections", "4", "--reserve-connections", "0", "--threads", "1",
                          "--workers", "1", "--drain-ms", "1", "--deadline-ms", "60000",
                          SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    svc_call slow[3];
    for (int i = 0; i < 3; i++) {
        char body[512];
        svc_slow_body(body, sizeof body, 40 + i);
        svc_call_start(&slow[i], &srv, SVC_SLOW_PATH, body);
    }
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_cache_inflight", 3), 3);
    enum { Q = 8 };
    int q[Q];
    for (int i = 0; i < Q; i++) {
        q[i] = pm_raw_connect(srv.port);
        cr_assert_geq(q[i], 0);
        pm_raw_send_str(q[i], "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    svc_sleep_ms(100);
    cr_assert_eq(pm_test_server_signal(&srv, SIGTERM), 0);
    for (int i = 0; i < Q; i++) {
        pm_raw_reply r;
        pm_raw_read(q[i], 5000, &r);
        close(q[i]);
        cr_assert(r.status == 200 || r.status == 503, "queued connection %d: %s%s%.200s", i,
                  r.reset ? "reset " : "", r.closed ? "closed " : "", r.text);
    }
    for (int i = 0; i < 3; i++) {
        svc_call_join(&slow[i]);
        cr_assert(slow[i].r.status == 200 || slow[i].r.status == 503, "in flight: %ld",
                  slow[i].r.status);
        pm_http_response_free(&slow[i].r);
    }
    cr_assert_eq(pm_test_server_wait(&srv, 10000), 0);
}

Test(http_guard, sigterm_answers_a_burst_of_fresh_connections, .fini = stop, .timeout = 60) {
    const char *args[] = {"--threads", "1", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    enum { B = 200 };
    static int fds[B];
    for (int i = 0; i < B; i++) {
        fds[i] = pm_raw_connect(srv.port);
        cr_assert(fds[i] >= 0 || i > B / 2, "connection %d refused before SIGTERM", i);
        if (fds[i] >= 0) pm_raw_send_str(fds[i], "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        if (i == B / 2) pm_test_server_signal(&srv, SIGTERM);
    }
    int answered = 0, refused = 0;
    for (int i = 0; i < B; i++) {
        pm_raw_reply r = {0};
        if (fds[i] >= 0) {
            pm_raw_read(fds[i], 5000, &r);
            close(fds[i]);
        }
        if (r.status == 200 || r.status == 503) answered++;
        else refused++;
        cr_assert(r.status || i > B / 2, "connection %d, opened before SIGTERM: %s%s%.200s", i,
                  r.reset ? "reset " : "", r.closed ? "closed " : "", r.text);
    }
    cr_assert_gt(answered, B / 2);
    cr_assert_eq(pm_test_server_wait(&srv, 10000), 0);
}

Test(http_guard, the_admin_port_answers_health_while_the_main_port_is_full, .fini = stop,
     .timeout = 60) {
    /* No reserve: slow clients can take every connection of the main port. */
    int admin = pm_tp_free_port();
    char admin_s[16];
    snprintf(admin_s, sizeof admin_s, "%d", admin);
    const char *args[] = {"--max-connections", "16", "--reserve-connections", "0",
                          "--header-timeout-ms", "60000", "--admin-port", admin_s, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    enum { N = 24 };
    int fds[N];
    cr_assert_eq(hold_slow(fds, N, NULL), N);
    pm_raw_reply r;
    const char *health = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    pm_raw_exchange(srv.port, health, strlen(health), 500, &r);
    cr_assert_eq(r.status, 0, "the main port is full (no reserve): %.100s", r.text);
    for (int i = 0; i < 10; i++) {
        pm_raw_exchange(admin, health, strlen(health), 2000, &r);
        cr_assert_eq(r.status, 200, "admin /healthz: %.200s", r.text);
        cr_assert_lt(r.seconds, 1.0);
    }
    const char *metrics = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    pm_raw_exchange(admin, metrics, strlen(metrics), 2000, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_not_null(strstr(r.text, "# TYPE procmesh_http_requests_total counter"));
    const char *gen = "GET " SVC_QUERY " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    pm_raw_exchange(admin, gen, strlen(gen), 2000, &r);
    cr_assert_eq(r.status, 404, "generators are not served on the admin port");
    close_all(fds, N);
}
