#ifndef PM_SVC_TIER_H
#define PM_SVC_TIER_H
#include <stddef.h>
#include <stdint.h>

/* A second cache tier behind the in-memory LRU (the shared Redis cache).
 * Entries are opaque blobs under a 16-byte key (the request's cache key);
 * the cache layer decides what a blob holds. Every call is thread-safe and
 * bounded in time by the tier's own timeout: a slow or dead tier costs a
 * miss, never a failed request. */
typedef struct pm_svc_tier pm_svc_tier;
struct pm_svc_tier {
    /* 1 on a hit with *data (malloc'd, caller frees) and *len set; 0 on a
     * miss; -1 on an error (which callers treat as a miss). */
    int (*get)(pm_svc_tier *t, const uint8_t key[16], unsigned char **data, size_t *len);
    /* Stores a blob; failures are counted, never reported to the request. */
    void (*put)(pm_svc_tier *t, const uint8_t key[16], const unsigned char *data, size_t len);
    /* 1 when the tier answered its last call (readiness), 0 when degraded. */
    int (*healthy)(pm_svc_tier *t);
    /* Appends Prometheus text lines (hits, errors, latency) to buf; returns
     * the bytes written (at most cap). */
    size_t (*metrics)(pm_svc_tier *t, char *buf, size_t cap);
    void (*destroy)(pm_svc_tier *t);
    /* 1 when the tier accepts writes, 0 when it answers but refuses them
     * (Redis over maxmemory with noeviction, a read-only replica, a failed
     * save with stop-writes-on-bgsave-error). May be NULL: writable. */
    int (*writable)(pm_svc_tier *t);
};
#endif
