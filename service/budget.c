#include "budget.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Jobs that held at least this much outside the page pool trim the heap
 * when they end, if it holds at least as much free: freed small blocks
 * (jansson's, a body's) sit in malloc's heaps otherwise, counted by RSS
 * though no one uses them. */
#define PM_SVC__TRIM_AFTER ((size_t)8 << 20)

struct pm_svc_budget {
    size_t cap;
    atomic_size_t inflight;
    atomic_uint_fast64_t refused_job, refused_inflight, trims;
    /* The page pool jobs' arena blocks come from (NULL: malloc), and what
     * it keeps between jobs. retained counts against the cap with
     * inflight; it is at least what the pool may hold resident and free:
     * set from the pool when a job ends or its pages are given back, and
     * raised by every block freed in between. */
    pm_svc_pages *pages;
    size_t keep;
    atomic_size_t retained;
    atomic_uint_fast64_t released;
    pthread_mutex_t mu;        /* the pool, and the fields below */
    pthread_cond_t cv;
    pthread_t releaser;
    int has_releaser, stopping;
    uint64_t ended_ms;         /* when the last job that used the pool ended */
};

pm_svc_budget *pm_svc_budget_create(size_t cap) {
    pm_svc_budget *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->cap = cap;
    pthread_mutex_init(&b->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
    return b;
}

void pm_svc_budget_destroy(pm_svc_budget *b) {
    if (!b) return;
    if (b->has_releaser) {
        pthread_mutex_lock(&b->mu);
        b->stopping = 1;
        pthread_cond_signal(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->releaser, NULL);
    }
    pm_svc_pages_destroy(b->pages);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
}
size_t pm_svc_budget_inflight(const pm_svc_budget *b) { return atomic_load(&b->inflight); }
size_t pm_svc_budget_cap(const pm_svc_budget *b) { return b->cap; }

void pm_svc_budget_add(pm_svc_budget *b, size_t n) { atomic_fetch_add(&b->inflight, n); }
void pm_svc_budget_sub(pm_svc_budget *b, size_t n) { atomic_fetch_sub(&b->inflight, n); }

/* Takes n bytes of the cap (what the pool retains counts too), or none. */
static int pm_svc__budget_try(pm_svc_budget *b, size_t n) {
    size_t cur = atomic_load(&b->inflight);
    do {
        size_t held = cur + atomic_load(&b->retained);
        if (b->cap && (held > b->cap || n > b->cap - held)) return -1;
    } while (!atomic_compare_exchange_weak(&b->inflight, &cur, cur + n));
    return 0;
}

/* Trims the pool to keep bytes retained and sets retained from it. With
 * b->mu held. */
static void pm_svc__retain(pm_svc_budget *b, size_t keep) {
    size_t was = pm_svc_pages_retained(b->pages);
    size_t now = pm_svc_pages_trim(b->pages, keep);
    if (now < was) atomic_fetch_add(&b->released, was - now);
    atomic_store(&b->retained, now);
}

/* Gives the pool's free pages back so that a refused charge can be tried
 * again. Returns 1 if there was anything to give. */
static int pm_svc__reclaim(pm_svc_budget *b) {
    if (!b->pages || !atomic_load(&b->retained)) return 0;
    pthread_mutex_lock(&b->mu);
    pm_svc__retain(b, 0);
    pthread_mutex_unlock(&b->mu);
    return 1;
}

pm_svc_refusal pm_svc_budget_charge(pm_svc_meter *m, size_t n) {
    pm_svc_refusal r = PM_SVC_REFUSED_NONE;
    if (m->limit && (m->held > m->limit || n > m->limit - m->held)) r = PM_SVC_REFUSED_JOB;
    else if (pm_svc__budget_try(m->budget, n) < 0 &&
             (!pm_svc__reclaim(m->budget) || pm_svc__budget_try(m->budget, n) < 0))
        r = PM_SVC_REFUSED_INFLIGHT;
    if (r != PM_SVC_REFUSED_NONE) {
        m->refused = r;   /* the last one: earlier ones may have been retried smaller */
        return r;
    }
    m->held += n;
    if (m->held > m->peak) m->peak = m->held;
    size_t heap = m->held > m->pooled ? m->held - m->pooled : 0;
    if (heap > m->heap_peak) m->heap_peak = heap;
    return PM_SVC_REFUSED_NONE;
}

void pm_svc_budget_release(pm_svc_meter *m, size_t n) {
    if (n > m->held) n = m->held;
    m->held -= n;
    pm_svc_budget_sub(m->budget, n);
}

/* ---- the allocators a job's arena and encoder use ---- */

static void *pm_svc__arena_alloc(void *ctx, size_t size) {
    pm_svc_meter *m = ctx;
    pm_svc_budget *b = m->budget;
    if (b->pages) {
        /* The space first (nothing is touched yet), then the charge. */
        pthread_mutex_lock(&b->mu);
        void *p = pm_svc_pages_alloc(b->pages, size);
        pthread_mutex_unlock(&b->mu);
        if (p) {
            m->pooled += size;
            if (pm_svc_budget_charge(m, size) == PM_SVC_REFUSED_NONE) {
                m->used_pages = 1;
                return p;
            }
            m->pooled -= size;
            pthread_mutex_lock(&b->mu);
            pm_svc_pages_free(b->pages, p, size);
            pthread_mutex_unlock(&b->mu);
            return NULL;
        }
    }
    if (pm_svc_budget_charge(m, size) != PM_SVC_REFUSED_NONE) return NULL;
    void *p = malloc(size);
    if (!p) pm_svc_budget_release(m, size);
    return p;
}

static void pm_svc__to_retained(pm_svc_meter *m, size_t n);

/* The arena's blocks and the encoder's buffers. */
static void pm_svc__any_free(void *ctx, void *p, size_t size) {
    pm_svc_meter *m = ctx;
    pm_svc_budget *b = m->budget;
    if (p && b->pages && pm_svc_pages_owns(b->pages, p)) {
        /* Its pages stay resident, counted as retained until the job ends
         * (pm_svc_meter_end trims and counts again). */
        pthread_mutex_lock(&b->mu);
        pm_svc_pages_free(b->pages, p, size);
        pthread_mutex_unlock(&b->mu);
        pm_svc__to_retained(m, size);
        return;
    }
    free(p);
    pm_svc_budget_release(m, size);
}

/* Moves n bytes of m's charge to the pool's retained count: a block given
 * back to the pool stays resident, counted against the cap until trimmed. */
static void pm_svc__to_retained(pm_svc_meter *m, size_t n) {
    if (n > m->held) n = m->held;
    m->held -= n;
    m->pooled -= n < m->pooled ? n : m->pooled;
    atomic_fetch_add(&m->budget->retained, n);
    atomic_fetch_sub(&m->budget->inflight, n);
}

static void *pm_svc__enc_realloc(void *ctx, void *p, size_t old_size, size_t new_size) {
    pm_svc_meter *m = ctx;
    pm_svc_budget *b = m->budget;
    int pooled = b->pages && (!p || pm_svc_pages_owns(b->pages, p));
    size_t more = new_size > old_size ? new_size - old_size : 0;
    if (pooled) m->pooled += more;   /* not malloc's (heap_peak) */
    if (more && pm_svc_budget_charge(m, more) != PM_SVC_REFUSED_NONE) {
        if (pooled) m->pooled -= more;
        return NULL;
    }
    if (!pooled) {
        void *q = realloc(p, new_size ? new_size : 1);
        if (!q) {
            if (more) pm_svc_budget_release(m, more);
            return NULL;
        }
        if (new_size < old_size) pm_svc_budget_release(m, old_size - new_size);
        return q;
    }
    pthread_mutex_lock(&b->mu);
    void *q = pm_svc_pages_realloc(b->pages, p, old_size, new_size);
    pthread_mutex_unlock(&b->mu);
    if (q) {
        m->used_pages = 1;
        if (new_size < old_size) pm_svc__to_retained(m, old_size - new_size);   /* in place */
        else if (p && q != p) atomic_fetch_add(&b->retained, old_size);   /* moved */
        return q;
    }
    /* The pool is full: malloc, as without it. */
    m->pooled -= more + (p ? old_size : 0) < m->pooled ? more + (p ? old_size : 0) : m->pooled;
    q = malloc(new_size ? new_size : 1);
    if (!q) {
        if (more) pm_svc_budget_release(m, more);
        return NULL;
    }
    if (p) {
        memcpy(q, p, old_size < new_size ? old_size : new_size);
        pm_svc_budget_pages_free(b, p, old_size);
    }
    if (new_size < old_size) pm_svc_budget_release(m, old_size - new_size);
    return q;
}

void pm_svc_budget_pages_free(pm_svc_budget *b, void *p, size_t size) {
    pthread_mutex_lock(&b->mu);
    pm_svc_pages_free(b->pages, p, size);
    pthread_mutex_unlock(&b->mu);
    atomic_fetch_add(&b->retained, size);
}

pm_svc_blob *pm_svc_meter_blob(pm_svc_meter *m, void *data, size_t len) {
    pm_svc_budget *b = m->budget;
    if (!b || !b->pages || !pm_svc_pages_owns(b->pages, data)) return pm_svc_blob_wrap(data, data, len);
    pm_svc_blob *blob = pm_svc_blob_wrap(NULL, data, len);
    if (!blob) {
        pm_svc_budget_pages_free(b, data, len);
        return NULL;
    }
    blob->base = data;
    blob->pages = b;
    return blob;
}

void pm_svc_meter_init(pm_svc_meter *m, pm_svc_budget *b, size_t limit) {
    *m = (pm_svc_meter){.budget = b, .limit = limit};
    if (b && b->cap && (!limit || b->cap < limit)) {
        m->limit = b->cap;
        m->capped = 1;
    }
    m->arena = (pm_arena_allocator){pm_svc__arena_alloc, pm_svc__any_free, m, NULL};
    m->enc = (pm_api_alloc){pm_svc__enc_realloc, pm_svc__any_free, m, NULL};
}

static uint64_t pm_svc__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void pm_svc_meter_end(pm_svc_meter *m) {
    pm_svc_budget *b = m->budget;
    if (!b) return;
    pm_svc_budget_release(m, m->held);
    if (m->used_pages) {
        /* Keep what the cap has room for, up to keep; the releaser gives
         * it back once no job has ended for PM_SVC_RETAIN_IDLE_MS. */
        pthread_mutex_lock(&b->mu);
        size_t keep = b->keep, cur = atomic_load(&b->inflight);
        if (b->cap) keep = cur >= b->cap ? 0 : keep < b->cap - cur ? keep : b->cap - cur;
        pm_svc__retain(b, keep);
        b->ended_ms = pm_svc__now_ms();
        pthread_cond_signal(&b->cv);
        pthread_mutex_unlock(&b->mu);
    }
    /* malloc's heaps: after a job that held much outside the pool, when
     * they hold much free (counted whether resident or not, so never too
     * little): a trim costs the next request its pages again. */
    if (m->heap_peak >= PM_SVC__TRIM_AFTER && mallinfo2().fordblks >= PM_SVC__TRIM_AFTER) {
        malloc_trim(0);
        atomic_fetch_add(&b->trims, 1);
    }
    m->budget = NULL;
}

/* ---- the page pool between jobs ---- */

static void *pm_svc__releaser(void *arg) {
    pm_svc_budget *b = arg;
    pthread_mutex_lock(&b->mu);
    while (!b->stopping) {
        if (!atomic_load(&b->retained)) {
            pthread_cond_wait(&b->cv, &b->mu);
            continue;
        }
        uint64_t due = b->ended_ms + PM_SVC_RETAIN_IDLE_MS, now = pm_svc__now_ms();
        if (now >= due) {
            pm_svc__retain(b, 0);
            if (atomic_load(&b->retained)) {   /* shared with blocks held: later */
                b->ended_ms = now;
            }
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + (due - now) * 1000000u;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

int pm_svc_budget_use_pages(pm_svc_budget *b, pm_svc_pages *pg, size_t keep) {
    if (!pg) return 0;
    pm_svc_pages_small(pg);   /* retained must count every resident free page */
    b->pages = pg;
    b->keep = keep;
    if (pthread_create(&b->releaser, NULL, pm_svc__releaser, b) != 0) {
        b->pages = NULL;
        pm_svc_pages_destroy(pg);
        return -1;
    }
    b->has_releaser = 1;
    return 0;
}

size_t pm_svc_budget_retained(const pm_svc_budget *b) { return atomic_load(&b->retained); }

/* ---- results ---- */

void pm_svc_meter_give(pm_svc_meter *m, pm_svc_blob *blob, size_t n) {
    if (n > m->held) n = m->held;
    m->held -= n;   /* still in flight: the blob's now */
    blob->budget = m->budget;
    atomic_fetch_add(&blob->charged, n);
}

void pm_svc_blob_charge(pm_svc_blob *blob, pm_svc_budget *b) {
    size_t n = blob->len + blob->coded_len[0] + blob->coded_len[1];   /* every form */
    pm_svc_budget_add(b, n);
    blob->budget = b;
    atomic_fetch_add(&blob->charged, n);
}

void pm_svc_blob_uncharge(pm_svc_blob *blob) {
    size_t n = atomic_exchange(&blob->charged, 0);
    if (n && blob->budget) pm_svc_budget_sub(blob->budget, n);
}

void pm_svc_blob_evicted(pm_svc_blob *blob) {
    /* Called while the cache still holds its reference: more than one
     * means a response is sending it, and it stays in memory past the
     * cache's budget. */
    if (!blob->budget || atomic_load(&blob->refs) <= 1) return;
    pm_svc_budget_add(blob->budget, blob->len);
    atomic_fetch_add(&blob->charged, blob->len);
}

/* ---- answers ---- */

int pm_svc_meter_problem(const pm_svc_meter *m, pm_api_problem *prob) {
    if (!m->refused) return 0;
    if (m->budget)
        atomic_fetch_add(m->refused == PM_SVC_REFUSED_JOB ? &m->budget->refused_job
                                                          : &m->budget->refused_inflight, 1);
    pm_api_problem_free(prob);
    pm_api_problem_init(prob);
    if (m->refused == PM_SVC_REFUSED_JOB)
        pm_api_problem_field(prob, "",
                             "the job needs more memory than the limit max_job_mb (%zu MiB, "
                             "--max-job-mb%s): ask for a smaller output (fewer or coarser "
                             "parts, or format=glb)",
                             m->limit >> 20, m->capped ? ", capped by --max-inflight-mb" : "");
    else
        pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable",
                           "the server holds its limit of memory in flight, max_inflight_mb "
                           "(%zu MiB, --max-inflight-mb); retry later",
                           m->budget ? pm_svc_budget_cap(m->budget) >> 20 : 0);
    return 1;
}

/* ---- the allocator policy ---- */

void pm_svc_budget_malloc_policy(unsigned threads) {
    /* A fixed threshold: glibc raises its own after every big free, and
     * then keeps big blocks in heaps that only malloc_trim gives back. */
    mallopt(M_MMAP_THRESHOLD, (int)PM_SVC_MALLOC_MMAP_AT);
    mallopt(M_TRIM_THRESHOLD, (int)PM_SVC_MALLOC_TRIM_AT);
    /* One heap per thread by default (8 x cores), each holding its own
     * free pages; HTTP threads and workers share a few. */
    unsigned arenas = threads < 2 ? 2 : threads;
    if (arenas > 16) arenas = 16;
    mallopt(M_ARENA_MAX, (int)arenas);
}

void pm_svc_budget_render(const pm_svc_budget *b, pm_svc_buf *out) {
    pm_svc_buf_printf(
        out,
        "# HELP procmesh_memory_inflight_bytes Bytes held by jobs and by results not in the "
        "cache.\n# TYPE procmesh_memory_inflight_bytes gauge\nprocmesh_memory_inflight_bytes "
        "%zu\n"
        "# HELP procmesh_memory_inflight_max_bytes The cap on bytes in flight "
        "(--max-inflight-mb).\n# TYPE procmesh_memory_inflight_max_bytes gauge\n"
        "procmesh_memory_inflight_max_bytes %zu\n"
        "# HELP procmesh_memory_refused_total Jobs stopped by a memory limit.\n"
        "# TYPE procmesh_memory_refused_total counter\n"
        "procmesh_memory_refused_total{limit=\"max_job_mb\"} %llu\n"
        "procmesh_memory_refused_total{limit=\"max_inflight_mb\"} %llu\n"
        "# HELP procmesh_memory_trims_total Heap trims after big jobs.\n"
        "# TYPE procmesh_memory_trims_total counter\nprocmesh_memory_trims_total %llu\n"
        "# HELP procmesh_memory_retained_bytes Free page-pool memory kept for the next jobs "
        "(--retain-mb), counted against --max-inflight-mb.\n"
        "# TYPE procmesh_memory_retained_bytes gauge\nprocmesh_memory_retained_bytes %zu\n"
        "# HELP procmesh_memory_released_bytes_total Page-pool memory given back to the "
        "system.\n# TYPE procmesh_memory_released_bytes_total counter\n"
        "procmesh_memory_released_bytes_total %llu\n",
        pm_svc_budget_inflight(b), b->cap, (unsigned long long)atomic_load(&b->refused_job),
        (unsigned long long)atomic_load(&b->refused_inflight),
        (unsigned long long)atomic_load(&b->trims), atomic_load(&b->retained),
        (unsigned long long)atomic_load(&b->released));
}
