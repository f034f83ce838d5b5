#ifndef PM_SVC_BUDGET_H
#define PM_SVC_BUDGET_H
/* The memory budget (docs/svc.md, "Memory"): every byte a generation job
 * holds (its arena, the encoder's buffers, its result until the cache takes
 * it or the last response lets it go, copies made from it) is charged twice:
 * against the job's own limit (--max-job-mb) and against one process-wide
 * cap on bytes in flight (--max-inflight-mb). A charge past either is
 * refused before the memory is taken, so the job stops early: past its own
 * limit it is a 422 naming max_job_mb, past the shared cap a 503 naming
 * max_inflight_mb. With the cache's own budget this bounds the process:
 * RSS <= --cache-mb + --max-inflight-mb + 64 MiB (the process itself,
 * connections, request bodies and parsed JSON). */
#include <stdatomic.h>
#include <stddef.h>

#include "buf.h"
#include "cache.h"
#include "pm_api/encode.h"
#include "pages.h"
#include "pm_api/problem.h"
#include "scene/arena.h"

typedef struct pm_svc_budget pm_svc_budget;

/* What jansson's document of a JSON text takes, per byte of the text (a
 * 1 MiB network request measured 21 MiB at its peak). */
#define PM_SVC_JSON_FACTOR 24

/* cap: bytes that may be in flight at once (0 = no cap; still counted). */
pm_svc_budget *pm_svc_budget_create(size_t cap);
void pm_svc_budget_destroy(pm_svc_budget *b);
size_t pm_svc_budget_inflight(const pm_svc_budget *b);
size_t pm_svc_budget_cap(const pm_svc_budget *b);

/* Counts n bytes the process holds already (a body read back from the
 * second tier, a result evicted while a response still sends it): never
 * refused, it only makes later charges fail sooner. */
void pm_svc_budget_add(pm_svc_budget *b, size_t n);
void pm_svc_budget_sub(pm_svc_budget *b, size_t n);

typedef enum pm_svc_refusal {
    PM_SVC_REFUSED_NONE = 0,
    PM_SVC_REFUSED_JOB = 1,        /* past the job's limit (--max-job-mb) */
    PM_SVC_REFUSED_INFLIGHT = 2,   /* past the shared cap (--max-inflight-mb) */
} pm_svc_refusal;

/* One job's memory. Used by one thread at a time (the job moves from the
 * HTTP thread to a worker through the queue). */
typedef struct pm_svc_meter {
    pm_svc_budget *budget;
    size_t limit;              /* the job's limit in bytes (0 = none) */
    int capped;                /* limit is the budget's cap, below the job's own */
    size_t held, peak;         /* charged now, and at most */
    size_t pooled;             /* of held: blocks from the budget's page pool */
    size_t heap_peak;          /* the most held outside the pool */
    int used_pages;            /* took a block from the pool */
    pm_svc_refusal refused;    /* the last refusal, if any */
    pm_arena_allocator arena;  /* the job's arena blocks, charged */
    pm_api_alloc enc;          /* the encoder's buffers, charged */
} pm_svc_meter;

/* Starts m for a job limited to limit bytes, or to the budget's cap when
 * that is less (a job that could never fit is a 422, not a 503 to retry);
 * m must not move afterwards (the allocators point at it). */
void pm_svc_meter_init(pm_svc_meter *m, pm_svc_budget *b, size_t limit);

/* Charges n bytes to m's job and to the budget before the caller takes
 * them. Returns 0, or the refusal (also kept in m->refused); then nothing
 * is charged. The hook for every buffer a job makes (e.g. a compressed
 * copy of its result): charge, allocate, and release when it is freed or
 * hand it to the blob that keeps it (pm_svc_meter_give). */
pm_svc_refusal pm_svc_budget_charge(pm_svc_meter *m, size_t n);
void pm_svc_budget_release(pm_svc_meter *m, size_t n);

/* Moves n bytes of m's charge to blob: they stay in flight until the cache
 * takes the blob (its own budget counts it then) or its last reference
 * goes. */
void pm_svc_meter_give(pm_svc_meter *m, pm_svc_blob *blob, size_t n);
/* The blob's charge: set (counted, never refused) for a body the job did
 * not make (a second-tier hit), dropped when the cache takes the blob,
 * restored when the cache evicts it while a response still holds it. */
void pm_svc_blob_charge(pm_svc_blob *blob, pm_svc_budget *b);
void pm_svc_blob_uncharge(pm_svc_blob *blob);
void pm_svc_blob_evicted(pm_svc_blob *blob);

/* Replaces prob with the answer a refusal gets (422 naming max_job_mb, or
 * 503 naming max_inflight_mb) when m was refused, and counts it. Call once,
 * for a job that failed. Returns 1 if it did. */
int pm_svc_meter_problem(const pm_svc_meter *m, pm_api_problem *prob);

/* Ends m: releases what is still charged; when the job used the page pool,
 * trims it to what the budget keeps (pm_svc_budget_use_pages); after a job
 * that held more than a few MiB outside the pool, when malloc's heaps hold
 * as much free, gives freed heap pages back to the system (malloc_trim),
 * so RSS comes back after big jobs. */
void pm_svc_meter_end(pm_svc_meter *m);

/* Jobs' arena blocks from then on come from pg (the budget owns it; NULL:
 * malloc, as before), and up to keep bytes of the pool's free pages stay
 * resident between jobs instead of being faulted in afresh by the next
 * one (docs/svc.md, "Memory"). What stays counts against the cap with the
 * bytes in flight, so the bound holds: a charge the cap refuses gives the
 * pool's free pages back and is tried again, a job that ends keeps only
 * what the cap has room for, and a thread gives everything back once no
 * job has ended for PM_SVC_RETAIN_IDLE_MS. Call before any job starts.
 * Returns -1 (pg destroyed, malloc kept) when that thread cannot start. */
int pm_svc_budget_use_pages(pm_svc_budget *b, pm_svc_pages *pg, size_t keep);
#define PM_SVC_RETAIN_IDLE_MS 3000
/* Bytes the pool keeps free and resident, as counted against the cap. */
size_t pm_svc_budget_retained(const pm_svc_budget *b);

/* The encoder's output, a block of m->enc's of len bytes, as a blob that
 * gives it back where it came from: to malloc, or to the page pool (the
 * blob's pages), where it stays resident for the next jobs, retained, once
 * the last reference goes. NULL when out of memory: the block is freed
 * then, and the caller releases its charge. */
pm_svc_blob *pm_svc_meter_blob(pm_svc_meter *m, void *data, size_t len);
/* Gives p, a block of size bytes of b's page pool, back to it. */
void pm_svc_budget_pages_free(pm_svc_budget *b, void *p, size_t size);

/* Blocks from this size up are mmap'd on their own and unmapped on free.
 * Smaller ones are used again by the next request: a 512 x 512 float32
 * upload (1 MiB) and its checked copy, which mapped afresh would fault 257
 * pages per request (docs/svc.md). Free memory above the heap's top beyond
 * PM_SVC_MALLOC_TRIM_AT goes back to the system at once. */
#define PM_SVC_MALLOC_MMAP_AT ((size_t)2 << 20)
#define PM_SVC_MALLOC_TRIM_AT (4 * PM_SVC_MALLOC_MMAP_AT)

/* The allocator policy that lets freed memory go back to the system:
 * blocks of PM_SVC_MALLOC_MMAP_AT and more are mapped on their own (a
 * fixed threshold, not glibc's self-raising one), a small trim threshold,
 * a bounded number of malloc arenas. Call once, before any thread starts.
 * The benches that time requests run under it too (bench/pm_bench_request.h),
 * and hand its two thresholds to a peer they time beside procmesh. */
void pm_svc_budget_malloc_policy(unsigned threads);

/* Appends the memory metrics (Prometheus text). */
void pm_svc_budget_render(const pm_svc_budget *b, pm_svc_buf *out);
#endif
