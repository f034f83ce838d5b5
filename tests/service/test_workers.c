/* The worker pool: bounded queue, every job run once, abort on stop. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "workers.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    atomic_int ran, aborted, started;
} gate;

static void gate_init(gate *g) {
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 0;
    atomic_init(&g->ran, 0);
    atomic_init(&g->aborted, 0);
    atomic_init(&g->started, 0);
}

static void gate_open(gate *g) {
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* A job that blocks until the gate opens. */
static void blocked_job(void *arg, int aborted) {
    gate *g = arg;
    if (aborted) {
        atomic_fetch_add(&g->aborted, 1);
        return;
    }
    atomic_fetch_add(&g->started, 1);
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    atomic_fetch_add(&g->ran, 1);
}

static void count_job(void *arg, int aborted) {
    if (!aborted) atomic_fetch_add((atomic_int *)arg, 1);
}

Test(workers, every_job_runs_exactly_once) {
    pm_svc_pool *p = pm_svc_pool_create(4, 1000);
    atomic_int n = 0;
    for (int i = 0; i < 1000; i++) cr_assert_eq(pm_svc_pool_submit(p, count_job, &n), 0);
    while (atomic_load(&n) < 1000) sleep_ms(1);
    pm_svc_pool_destroy(p);
    cr_assert_eq(atomic_load(&n), 1000);
}

Test(workers, one_worker_one_slot_takes_two_jobs_and_refuses_the_third) {
    gate g;
    gate_init(&g);
    pm_svc_pool *p = pm_svc_pool_create(1, 1);
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), 0);   /* runs */
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), 0);   /* waits */
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), -1);  /* full */
    while (atomic_load(&g.started) < 1) sleep_ms(1);
    cr_assert_eq(pm_svc_pool_busy(p), 1);
    cr_assert_eq(pm_svc_pool_depth(p), 1);
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), -1);
    gate_open(&g);
    while (atomic_load(&g.ran) < 2) sleep_ms(1);
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), 0, "room again once drained");
    while (atomic_load(&g.ran) < 3) sleep_ms(1);
    pm_svc_pool_destroy(p);
    cr_assert_eq(atomic_load(&g.aborted), 0);
}

Test(workers, queue_bound_is_exact_with_idle_workers) {
    /* Two free workers and a queue of 3: five jobs are accepted even when
     * submitted before the workers even wake up, the sixth is not. */
    gate g;
    gate_init(&g);
    pm_svc_pool *p = pm_svc_pool_create(2, 3);
    for (int i = 0; i < 5; i++) cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), 0, "job %d", i);
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), -1);
    gate_open(&g);
    while (atomic_load(&g.ran) < 5) sleep_ms(1);
    pm_svc_pool_destroy(p);
}

static void *open_later(void *arg) {
    sleep_ms(50);
    gate_open(arg);
    return NULL;
}

Test(workers, stop_aborts_queued_jobs_and_waits_for_running_ones) {
    gate g;
    gate_init(&g);
    pm_svc_pool *p = pm_svc_pool_create(1, 4);
    for (int i = 0; i < 5; i++) cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), 0);
    while (atomic_load(&g.started) < 1) sleep_ms(1);
    pthread_t opener;
    pthread_create(&opener, NULL, open_later, &g);
    pm_svc_pool_stop(p);   /* aborts the 4 queued, then waits for the running one */
    pthread_join(opener, NULL);
    cr_assert_eq(atomic_load(&g.aborted), 4);
    cr_assert_eq(atomic_load(&g.ran), 1);
    cr_assert_eq(pm_svc_pool_submit(p, blocked_job, &g), -1, "a stopped pool takes nothing");
    pm_svc_pool_destroy(p);
}
