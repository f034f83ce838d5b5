#include "metrics.h"

#include <stdatomic.h>
#include <stdlib.h>

#define PM_SVC__STATUS_MIN 100
#define PM_SVC__NSTATUS 501   /* 100..599, and slot 500 for "no response" */

const double pm_svc_latency_buckets[PM_SVC_NBUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

/* Counts per bucket (the last slot is +Inf) plus the sum in nanoseconds. */
typedef struct pm_svc_hist {
    atomic_uint_fast64_t bucket[PM_SVC_NBUCKETS + 1];
    atomic_uint_fast64_t sum_ns;
} pm_svc_hist;

struct pm_svc_metrics {
    const char *const *routes;
    size_t nroutes;
    const char *const *gens;
    size_t ngens;
    atomic_uint_fast64_t *status;        /* nroutes * PM_SVC__NSTATUS */
    pm_svc_hist *latency;                /* per route */
    atomic_uint_fast64_t *generations;   /* ngens * PM_SVC_GEN_NRESULTS */
    pm_svc_hist *gen_latency;            /* per generator */
    atomic_int_fast64_t inflight;
    atomic_uint_fast64_t queue_rejected, deadline_exceeded;
};

pm_svc_metrics *pm_svc_metrics_create(const char *const *route_labels, size_t nroutes,
                                      const char *const *gen_names, size_t ngens) {
    pm_svc_metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->routes = route_labels;
    m->nroutes = nroutes;
    m->gens = gen_names;
    m->ngens = ngens;
    /* calloc'd zero bytes are valid zero-initialized atomics on every
     * platform we build for (lock-free 64-bit atomics). */
    m->status = calloc(nroutes * PM_SVC__NSTATUS + 1, sizeof *m->status);
    m->latency = calloc(nroutes + 1, sizeof *m->latency);
    m->generations = calloc(ngens * PM_SVC_GEN_NRESULTS + 1, sizeof *m->generations);
    m->gen_latency = calloc(ngens + 1, sizeof *m->gen_latency);
    if (!m->status || !m->latency || !m->generations || !m->gen_latency) {
        pm_svc_metrics_destroy(m);
        return NULL;
    }
    return m;
}

void pm_svc_metrics_destroy(pm_svc_metrics *m) {
    if (!m) return;
    free(m->status);
    free(m->latency);
    free(m->generations);
    free(m->gen_latency);
    free(m);
}

static size_t pm_svc__status_slot(int status) {
    if (status < PM_SVC__STATUS_MIN || status > 599) return PM_SVC__NSTATUS - 1;
    return (size_t)(status - PM_SVC__STATUS_MIN);
}

static void pm_svc__hist_observe(pm_svc_hist *h, double seconds) {
    size_t b = 0;
    while (b < PM_SVC_NBUCKETS && seconds > pm_svc_latency_buckets[b]) b++;
    atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
    if (seconds < 0) seconds = 0;
    atomic_fetch_add_explicit(&h->sum_ns, (uint_fast64_t)(seconds * 1e9), memory_order_relaxed);
}

void pm_svc_metrics_request(pm_svc_metrics *m, size_t route, int status, double seconds) {
    if (route >= m->nroutes) return;
    atomic_fetch_add_explicit(&m->status[route * PM_SVC__NSTATUS + pm_svc__status_slot(status)],
                              1, memory_order_relaxed);
    pm_svc__hist_observe(&m->latency[route], seconds);
}

void pm_svc_metrics_generation(pm_svc_metrics *m, size_t gen, pm_svc_gen_result r,
                               double seconds) {
    if (gen >= m->ngens || r >= PM_SVC_GEN_NRESULTS) return;
    atomic_fetch_add_explicit(&m->generations[gen * PM_SVC_GEN_NRESULTS + r], 1,
                              memory_order_relaxed);
    pm_svc__hist_observe(&m->gen_latency[gen], seconds);
}

void pm_svc_metrics_inflight_add(pm_svc_metrics *m, int delta) {
    atomic_fetch_add_explicit(&m->inflight, delta, memory_order_relaxed);
}
int64_t pm_svc_metrics_inflight(const pm_svc_metrics *m) {
    return atomic_load_explicit(&m->inflight, memory_order_relaxed);
}
void pm_svc_metrics_queue_rejected(pm_svc_metrics *m) {
    atomic_fetch_add_explicit(&m->queue_rejected, 1, memory_order_relaxed);
}
void pm_svc_metrics_deadline_exceeded(pm_svc_metrics *m) {
    atomic_fetch_add_explicit(&m->deadline_exceeded, 1, memory_order_relaxed);
}

uint64_t pm_svc_metrics_requests(const pm_svc_metrics *m, size_t route, int status) {
    if (route >= m->nroutes) return 0;
    return atomic_load(&m->status[route * PM_SVC__NSTATUS + pm_svc__status_slot(status)]);
}
uint64_t pm_svc_metrics_generations(const pm_svc_metrics *m, size_t gen, pm_svc_gen_result r) {
    if (gen >= m->ngens || r >= PM_SVC_GEN_NRESULTS) return 0;
    return atomic_load(&m->generations[gen * PM_SVC_GEN_NRESULTS + r]);
}

static void pm_svc__hist_render(pm_svc_buf *b, const char *name, const char *label,
                                const char *value, const pm_svc_hist *h) {
    uint64_t cum = 0;
    for (size_t i = 0; i <= PM_SVC_NBUCKETS; i++) {
        cum += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
        if (i < PM_SVC_NBUCKETS)
            pm_svc_buf_printf(b, "%s_bucket{%s=\"%s\",le=\"%g\"} %llu\n", name, label, value,
                              pm_svc_latency_buckets[i], (unsigned long long)cum);
        else
            pm_svc_buf_printf(b, "%s_bucket{%s=\"%s\",le=\"+Inf\"} %llu\n", name, label, value,
                              (unsigned long long)cum);
    }
    double sum = (double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / 1e9;
    pm_svc_buf_printf(b, "%s_sum{%s=\"%s\"} %.9f\n%s_count{%s=\"%s\"} %llu\n", name, label, value,
                      sum, name, label, value, (unsigned long long)cum);
}

static void pm_svc__render_requests(const pm_svc_metrics *m, pm_svc_buf *b) {
    pm_svc_buf_puts(b, "# HELP procmesh_http_requests_total Finished HTTP requests by route and "
                       "status (status 0: the client left first).\n"
                       "# TYPE procmesh_http_requests_total counter\n");
    for (size_t r = 0; r < m->nroutes; r++)
        for (size_t s = 0; s < PM_SVC__NSTATUS; s++) {
            uint64_t v = atomic_load_explicit(&m->status[r * PM_SVC__NSTATUS + s],
                                              memory_order_relaxed);
            if (!v) continue;
            int code = s == PM_SVC__NSTATUS - 1 ? 0 : (int)s + PM_SVC__STATUS_MIN;
            pm_svc_buf_printf(b, "procmesh_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                              m->routes[r], code, (unsigned long long)v);
        }
    pm_svc_buf_puts(b, "# HELP procmesh_http_request_duration_seconds Request latency, first "
                       "byte in to response queued.\n"
                       "# TYPE procmesh_http_request_duration_seconds histogram\n");
    for (size_t r = 0; r < m->nroutes; r++)
        pm_svc__hist_render(b, "procmesh_http_request_duration_seconds", "route", m->routes[r],
                            &m->latency[r]);
    pm_svc_buf_printf(b,
                      "# HELP procmesh_http_requests_in_flight Requests being served now.\n"
                      "# TYPE procmesh_http_requests_in_flight gauge\n"
                      "procmesh_http_requests_in_flight %lld\n",
                      (long long)pm_svc_metrics_inflight(m));
}

static void pm_svc__render_generations(const pm_svc_metrics *m, pm_svc_buf *b) {
    static const char *const results[] = {"ok", "error", "cancelled"};
    pm_svc_buf_puts(b, "# HELP procmesh_generations_total Generation jobs run, by generator and "
                       "result.\n# TYPE procmesh_generations_total counter\n");
    for (size_t g = 0; g < m->ngens; g++)
        for (int r = 0; r < PM_SVC_GEN_NRESULTS; r++)
            pm_svc_buf_printf(
                b, "procmesh_generations_total{generator=\"%s\",result=\"%s\"} %llu\n", m->gens[g],
                results[r],
                (unsigned long long)atomic_load_explicit(
                    &m->generations[g * PM_SVC_GEN_NRESULTS + (size_t)r], memory_order_relaxed));
    pm_svc_buf_puts(b, "# HELP procmesh_generation_duration_seconds Time in generate + encode.\n"
                       "# TYPE procmesh_generation_duration_seconds histogram\n");
    for (size_t g = 0; g < m->ngens; g++)
        pm_svc__hist_render(b, "procmesh_generation_duration_seconds", "generator", m->gens[g],
                            &m->gen_latency[g]);
}

void pm_svc_metrics_render(const pm_svc_metrics *m, pm_svc_buf *b) {
    pm_svc__render_requests(m, b);
    pm_svc__render_generations(m, b);
    pm_svc_buf_printf(
        b,
        "# HELP procmesh_queue_rejections_total Requests answered 503 because the queue was full.\n"
        "# TYPE procmesh_queue_rejections_total counter\nprocmesh_queue_rejections_total %llu\n"
        "# HELP procmesh_deadline_exceeded_total Requests answered 503 past their deadline.\n"
        "# TYPE procmesh_deadline_exceeded_total counter\nprocmesh_deadline_exceeded_total %llu\n",
        (unsigned long long)atomic_load(&m->queue_rejected),
        (unsigned long long)atomic_load(&m->deadline_exceeded));
}
