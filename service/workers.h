#ifndef PM_SVC_WORKERS_H
#define PM_SVC_WORKERS_H
#include <stddef.h>

/* A fixed pool of worker threads behind a bounded FIFO queue. submit never
 * blocks: when every worker is busy and queue_len jobs already wait, it
 * refuses (the caller answers 503). */
typedef struct pm_svc_pool pm_svc_pool;

/* A job. aborted is 1 when the pool is shutting down and the job never got
 * a worker: it must then only release what it holds and answer its
 * client quickly. */
typedef void (*pm_svc_job_fn)(void *arg, int aborted);

/* Starts workers threads. Returns NULL when out of memory or threads. */
pm_svc_pool *pm_svc_pool_create(unsigned workers, unsigned queue_len);

/* Queues fn(arg). Returns 0, or -1 when the queue is full or the pool is
 * stopping (fn is then not called). */
int pm_svc_pool_submit(pm_svc_pool *p, pm_svc_job_fn fn, void *arg);

/* Jobs waiting for a worker, and workers running a job. */
size_t pm_svc_pool_depth(pm_svc_pool *p);
size_t pm_svc_pool_busy(pm_svc_pool *p);
unsigned pm_svc_pool_workers(const pm_svc_pool *p);
unsigned pm_svc_pool_queue_len(const pm_svc_pool *p);

/* Stops taking jobs (submit fails from now on), runs every queued job with
 * aborted = 1 in the calling thread, waits for the running ones and joins
 * the threads. The pool stays valid (submit, depth) until destroyed. */
void pm_svc_pool_stop(pm_svc_pool *p);
/* Stops the pool if needed, then frees it. */
void pm_svc_pool_destroy(pm_svc_pool *p);
#endif
