/* Metrics: counters, histograms and the Prometheus text. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"

static const char *routes[] = {"/v1/xs", "/healthz", "unmatched"};
static const char *gens[] = {"x"};

Test(metrics, requests_by_route_and_status) {
    pm_svc_metrics *m = pm_svc_metrics_create(routes, 3, gens, 1);
    pm_svc_metrics_request(m, 0, 200, 0.002);
    pm_svc_metrics_request(m, 0, 200, 0.2);
    pm_svc_metrics_request(m, 0, 422, 0.001);
    pm_svc_metrics_request(m, 2, 404, 0.0001);
    pm_svc_metrics_request(m, 1, 0, 0.0001);
    pm_svc_metrics_request(m, 7, 200, 1);   /* no such route: ignored */
    cr_assert_eq(pm_svc_metrics_requests(m, 0, 200), 2);
    cr_assert_eq(pm_svc_metrics_requests(m, 0, 422), 1);
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_metrics_render(m, &b);
    cr_assert_not_null(strstr(b.data, "procmesh_http_requests_total{route=\"/v1/xs\",status=\"200\"} 2\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_requests_total{route=\"unmatched\",status=\"404\"} 1\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_requests_total{route=\"/healthz\",status=\"0\"} 1\n"));
    cr_assert_null(strstr(b.data, "status=\"500\""), "zero series are left out");
    /* Cumulative buckets: 0.001 holds the 422 (1 ms), 0.0025 adds the 2 ms,
     * 0.25 adds the 200 ms. */
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_bucket{route=\"/v1/xs\",le=\"0.001\"} 1\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_bucket{route=\"/v1/xs\",le=\"0.0025\"} 2\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_bucket{route=\"/v1/xs\",le=\"0.1\"} 2\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_bucket{route=\"/v1/xs\",le=\"0.25\"} 3\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_bucket{route=\"/v1/xs\",le=\"+Inf\"} 3\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_count{route=\"/v1/xs\"} 3\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_request_duration_seconds_sum{route=\"/v1/xs\"} 0.203"));
    pm_svc_buf_free(&b);
    pm_svc_metrics_destroy(m);
}

Test(metrics, generations_gauges_and_counters) {
    pm_svc_metrics *m = pm_svc_metrics_create(routes, 3, gens, 1);
    pm_svc_metrics_generation(m, 0, PM_SVC_GEN_OK, 0.01);
    pm_svc_metrics_generation(m, 0, PM_SVC_GEN_OK, 0.01);
    pm_svc_metrics_generation(m, 0, PM_SVC_GEN_CANCELLED, 2);
    pm_svc_metrics_inflight_add(m, 3);
    pm_svc_metrics_inflight_add(m, -1);
    pm_svc_metrics_queue_rejected(m);
    pm_svc_metrics_deadline_exceeded(m);
    pm_svc_metrics_deadline_exceeded(m);
    cr_assert_eq(pm_svc_metrics_generations(m, 0, PM_SVC_GEN_OK), 2);
    cr_assert_eq(pm_svc_metrics_inflight(m), 2);
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_metrics_render(m, &b);
    cr_assert_not_null(strstr(b.data, "procmesh_generations_total{generator=\"x\",result=\"ok\"} 2\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_generations_total{generator=\"x\",result=\"error\"} 0\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_generations_total{generator=\"x\",result=\"cancelled\"} 1\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_http_requests_in_flight 2\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_queue_rejections_total 1\n"));
    cr_assert_not_null(strstr(b.data, "procmesh_deadline_exceeded_total 2\n"));
    /* Every sample line belongs to a family with HELP and TYPE. */
    for (char *line = b.data; *line;) {
        char *eol = strchr(line, '\n');
        cr_assert_not_null(eol);
        if (*line != '#') {
            char family[128];
            size_t n = strcspn(line, "{ ");
            snprintf(family, sizeof family, "# TYPE %.*s", (int)n, line);
            char *suffix = strstr(family, "_bucket");
            if (!suffix) suffix = strstr(family, "_sum");
            if (!suffix) suffix = strstr(family, "_count");
            if (suffix) *suffix = '\0';
            cr_assert_not_null(strstr(b.data, family), "no TYPE for %.*s", (int)n, line);
        }
        line = eol + 1;
    }
    pm_svc_buf_free(&b);
    pm_svc_metrics_destroy(m);
}
