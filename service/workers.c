/* gettid() and per-thread setpriority() are Linux extensions. */
#define _GNU_SOURCE
#include "workers.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* Generation is CPU-bound batch work: workers run at a lower priority so
 * that on a saturated machine the HTTP threads (health checks, cache hits)
 * still get a core at once. Linux applies nice values per thread. */
#define PM_SVC_WORKER_NICE 10

typedef struct pm_svc_job {
    pm_svc_job_fn fn;
    void *arg;
} pm_svc_job;

struct pm_svc_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pm_svc_job *ring;     /* capacity queue_len + workers */
    size_t cap, head, count;
    size_t busy;
    unsigned workers, queue_len;
    int stopping;
    pthread_t *threads;
    unsigned started;
};

/* Takes the next job, or returns 0 when the pool stops. */
static int pm_svc__next(pm_svc_pool *p, pm_svc_job *out) {
    pthread_mutex_lock(&p->mu);
    while (p->count == 0 && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
    if (p->count == 0) {
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    *out = p->ring[p->head];
    p->head = (p->head + 1) % p->cap;
    p->count--;
    p->busy++;
    pthread_mutex_unlock(&p->mu);
    return 1;
}

static void *pm_svc__worker(void *arg) {
    pm_svc_pool *p = arg;
    pm_svc_job job;
    /* Best effort: without permission the worker just keeps its priority. */
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), PM_SVC_WORKER_NICE) != 0) {
    }
    while (pm_svc__next(p, &job)) {
        job.fn(job.arg, 0);
        pthread_mutex_lock(&p->mu);
        p->busy--;
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

pm_svc_pool *pm_svc_pool_create(unsigned workers, unsigned queue_len) {
    if (workers == 0) return NULL;
    pm_svc_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->workers = workers;
    p->queue_len = queue_len;
    p->cap = (size_t)queue_len + workers;
    p->ring = calloc(p->cap, sizeof *p->ring);
    p->threads = calloc(workers, sizeof *p->threads);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (!p->ring || !p->threads) {
        pm_svc_pool_destroy(p);
        return NULL;
    }
    for (; p->started < workers; p->started++)
        if (pthread_create(&p->threads[p->started], NULL, pm_svc__worker, p) != 0) {
            pm_svc_pool_destroy(p);
            return NULL;
        }
    return p;
}

int pm_svc_pool_submit(pm_svc_pool *p, pm_svc_job_fn fn, void *arg) {
    pthread_mutex_lock(&p->mu);
    /* Jobs up to the number of workers not running one start at once (even
     * before those threads wake up); beyond them at most queue_len wait. */
    if (p->stopping || p->count >= p->queue_len + (p->workers - p->busy) || p->count >= p->cap) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    p->ring[(p->head + p->count) % p->cap] = (pm_svc_job){fn, arg};
    p->count++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

size_t pm_svc_pool_depth(pm_svc_pool *p) {
    pthread_mutex_lock(&p->mu);
    size_t free_workers = p->workers - p->busy;
    size_t n = p->count > free_workers ? p->count - free_workers : 0;
    pthread_mutex_unlock(&p->mu);
    return n;
}

size_t pm_svc_pool_busy(pm_svc_pool *p) {
    pthread_mutex_lock(&p->mu);
    size_t n = p->busy;
    pthread_mutex_unlock(&p->mu);
    return n;
}

unsigned pm_svc_pool_workers(const pm_svc_pool *p) { return p->workers; }
unsigned pm_svc_pool_queue_len(const pm_svc_pool *p) { return p->queue_len; }

void pm_svc_pool_stop(pm_svc_pool *p) {
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        pthread_mutex_unlock(&p->mu);
        return;
    }
    p->stopping = 1;
    /* Queued jobs are taken out before waking the workers, so they exit
     * after their current job instead of starting a new one. Without memory
     * for the list, the workers run the queue (unaborted) before exiting. */
    size_t n = p->count;
    pm_svc_job *left = n ? malloc(n * sizeof *left) : NULL;
    for (size_t i = 0; i < n && left; i++) left[i] = p->ring[(p->head + i) % p->cap];
    if (left) p->count = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < n && left; i++) left[i].fn(left[i].arg, 1);
    free(left);
    for (unsigned i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
    p->started = 0;
}

void pm_svc_pool_destroy(pm_svc_pool *p) {
    if (!p) return;
    pm_svc_pool_stop(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->ring);
    free(p->threads);
    free(p);
}
