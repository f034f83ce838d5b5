#ifndef PM_SVC_METRICS_H
#define PM_SVC_METRICS_H
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Request and generation metrics, updated lock-free (relaxed atomics) from
 * any thread, rendered in the Prometheus text format. Routes and
 * generators are small indices fixed at creation. The cache, the worker
 * pool and the tier render their own lines next to these. */
typedef struct pm_svc_metrics pm_svc_metrics;

typedef enum pm_svc_gen_result {
    PM_SVC_GEN_OK = 0,
    PM_SVC_GEN_ERROR = 1,      /* the generator refused (422) or failed */
    PM_SVC_GEN_CANCELLED = 2,  /* deadline or shutdown */
    PM_SVC_GEN_NRESULTS
} pm_svc_gen_result;

/* route_labels / gen_names are borrowed and must outlive the metrics.
 * Returns NULL when out of memory. */
pm_svc_metrics *pm_svc_metrics_create(const char *const *route_labels, size_t nroutes,
                                      const char *const *gen_names, size_t ngens);
void pm_svc_metrics_destroy(pm_svc_metrics *m);

/* One finished request: its route index, HTTP status (100..599; anything
 * else counts as 0, "client gone") and wall time. */
void pm_svc_metrics_request(pm_svc_metrics *m, size_t route, int status, double seconds);
/* One generation job that ran (not a cache hit). */
void pm_svc_metrics_generation(pm_svc_metrics *m, size_t gen, pm_svc_gen_result r,
                               double seconds);
void pm_svc_metrics_inflight_add(pm_svc_metrics *m, int delta);
int64_t pm_svc_metrics_inflight(const pm_svc_metrics *m);
void pm_svc_metrics_queue_rejected(pm_svc_metrics *m);
void pm_svc_metrics_deadline_exceeded(pm_svc_metrics *m);

/* Reads back one request counter (tests). */
uint64_t pm_svc_metrics_requests(const pm_svc_metrics *m, size_t route, int status);
uint64_t pm_svc_metrics_generations(const pm_svc_metrics *m, size_t gen, pm_svc_gen_result r);

/* Appends every metric above, with HELP and TYPE lines. */
void pm_svc_metrics_render(const pm_svc_metrics *m, pm_svc_buf *b);

/* Shared by every renderer: the latency buckets (seconds) and a helper that
 * appends one histogram from per-bucket counts (not cumulative). */
#define PM_SVC_NBUCKETS 15
extern const double pm_svc_latency_buckets[PM_SVC_NBUCKETS];
#endif
