#ifndef PM_SVC_CACHE_H
#define PM_SVC_CACHE_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "pm_api/key.h"
#include "pm_api/problem.h"
#include "tier.h"

/* The result cache: an in-memory LRU bounded in bytes, split in shards
 * (each with its own mutex) so threads do not queue on one lock, with
 * single-flight: concurrent identical misses run one generation, the others
 * wait on its in-flight entry through callbacks (nothing blocks). Every
 * in-flight entry has a deadline; a watchdog answers its waiters with a 503
 * when it passes and raises the job's cancel flag. An optional second tier
 * (tier.h, e.g. Redis) sits behind the memory: the job asks it on a memory
 * miss, and a generated result is stored in both. */

/* An immutable, reference-counted response body: its identity bytes and
 * the compressed forms worth keeping (compress.h), all built before the
 * blob is shared. A form is made when a request first negotiates it; the
 * cache then swaps in a new blob holding one form more (tried). */
typedef struct pm_svc_blob {
    atomic_int refs;
    size_t len;
    unsigned char *data;
    void *base;               /* what free() takes; data points into it */
    struct pm_svc_budget *pages;    /* not NULL: base is a block of len bytes of
                                       its page pool instead (budget.h) */
    struct pm_svc_budget *budget;   /* bytes in flight it is charged to (budget.h) */
    atomic_size_t charged;          /* ... and how many: 0 while the cache holds it */
    const unsigned char *coded[2];   /* gzip, br (compress.h); NULL: not kept */
    size_t coded_len[2];
    void *zbase;              /* freed with the blob when not NULL */
    unsigned tried;           /* forms made (kept or not worth it), bit 1 << coding */
} pm_svc_blob;

/* Wraps malloc'd memory (data..data+len inside base) with one reference.
 * On failure frees base and returns NULL. (pm_svc_meter_blob wraps a
 * block of the page pool.) */
pm_svc_blob *pm_svc_blob_wrap(void *base, unsigned char *data, size_t len);
pm_svc_blob *pm_svc_blob_copy(const void *data, size_t len);
void pm_svc_blob_ref(pm_svc_blob *b);
void pm_svc_blob_unref(pm_svc_blob *b);

/* How one computation ended, as its waiters see it. */
typedef struct pm_svc_outcome {
    int status;                  /* 200, or the error status */
    pm_svc_blob *blob;           /* 200: the body; borrowed (take a ref to keep it) */
    const pm_api_problem *prob;  /* errors: borrowed, valid during the call */
    double gen_ms, enc_ms, zip_ms; /* time spent generating, encoding, compressing */
    int tier_hit;                /* the body came from the second tier */
} pm_svc_outcome;

/* A request waiting on a computation; storage belongs to the caller. fn is
 * called exactly once, from whichever thread settles the computation, with
 * no cache lock held. */
typedef struct pm_svc_waiter pm_svc_waiter;
struct pm_svc_waiter {
    void (*fn)(void *arg, const pm_svc_outcome *o);
    void *arg;
    pm_svc_waiter *next;
};

typedef struct pm_svc_cache pm_svc_cache;
typedef struct pm_svc_flight pm_svc_flight;

/* max_bytes: memory budget (0 = keep nothing in memory; single-flight
 * still works). nshards: rounded up to a power of two (0 = 16). tier may
 * be NULL; the cache takes ownership and destroys it. Returns NULL when out
 * of memory. */
pm_svc_cache *pm_svc_cache_create(size_t max_bytes, unsigned nshards, pm_svc_tier *tier);
/* Stops the watchdog, answers any flight still pending with the expiry
 * outcome, frees everything (blobs live on while responses hold them). */
void pm_svc_cache_destroy(pm_svc_cache *c);

typedef enum pm_svc_lookup {
    PM_SVC_LOOKUP_HIT = 0,     /* *blob set, with a reference for the caller */
    PM_SVC_LOOKUP_JOINED = 1,  /* w waits on a computation in flight */
    PM_SVC_LOOKUP_OWNER = 2,   /* *flight is new, w is its first waiter: run it */
    PM_SVC_LOOKUP_NOMEM = -1,
} pm_svc_lookup;

/* Looks key up in memory. On a miss the caller becomes the owner of a new
 * flight (deadline_ns on the CLOCK_MONOTONIC scale) and must end it with
 * pm_svc_flight_finish, whatever happens. */
pm_svc_lookup pm_svc_cache_lookup(pm_svc_cache *c, pm_api_key key, uint64_t deadline_ns,
                                  pm_svc_waiter *w, pm_svc_blob **blob, pm_svc_flight **flight);
/* A plain memory lookup: a new reference, or NULL. Counts a hit; a miss is
 * left to the pm_svc_cache_lookup that decides what happens next. */
pm_svc_blob *pm_svc_cache_get(pm_svc_cache *c, pm_api_key key);
/* Stores blob in memory when key is absent (takes its own reference). When
 * a flight for key is pending, it is settled with blob. */
void pm_svc_cache_put(pm_svc_cache *c, pm_api_key key, pm_svc_blob *blob);

/* A computation under key that never stores its result (pm_svc_flight_settle):
 * single-flight for work on an entry, e.g. making one form of it. Counts
 * no hit or miss. Returns JOINED or OWNER (then *flight), or NOMEM. */
pm_svc_lookup pm_svc_cache_join(pm_svc_cache *c, pm_api_key key, uint64_t deadline_ns,
                                pm_svc_waiter *w, pm_svc_flight **flight);
/* Ends a pm_svc_cache_join flight: answers its waiters with o, stores
 * nothing. Drops the owner's reference. */
void pm_svc_flight_settle(pm_svc_cache *c, pm_svc_flight *f, const pm_svc_outcome *o);
/* A new reference to key's blob in memory, or NULL; no hit counted, the
 * LRU order unchanged. */
pm_svc_blob *pm_svc_cache_peek(pm_svc_cache *c, pm_api_key key);
/* Swaps key's blob for blob when it still holds old, charging the memory
 * budget for the difference (then evicting). Returns 1 swapped, 0 key
 * holds another blob, -1 no ready entry or blob over the whole budget. */
int pm_svc_cache_replace(pm_svc_cache *c, pm_api_key key, const pm_svc_blob *old,
                         pm_svc_blob *blob);
/* Stores blob (every form it holds) in the second tier, if any. */
void pm_svc_cache_tier_put(pm_svc_cache *c, pm_api_key key, const pm_svc_blob *blob);

/* Asks the second tier (none: 0). Returns 1 with *blob (a new reference)
 * on a hit, 0 on a miss, an error or a malformed entry. */
int pm_svc_cache_tier_get(pm_svc_cache *c, pm_api_key key, pm_svc_blob **blob);
/* -1 no tier; 1 healthy; 0 degraded (unreachable); 2 answering but
 * refusing writes (tier.h writable). */
int pm_svc_cache_tier_state(pm_svc_cache *c);

/* The cancel flag a job hands to its generator, raised when the flight
 * expires (or a result for its key arrived otherwise). */
const volatile int *pm_svc_flight_cancel(const pm_svc_flight *f);
uint64_t pm_svc_flight_deadline(const pm_svc_flight *f);
/* Ends the owner's flight: unless already settled, answers every waiter
 * with o; a 200 is stored in memory (and in the tier unless it came from
 * there), also when the flight had expired. Drops the owner's reference. */
void pm_svc_flight_finish(pm_svc_cache *c, pm_svc_flight *f, const pm_svc_outcome *o);

/* Settles every flight whose deadline is <= now_ns with *expired (and
 * raises its cancel flag). Returns how many. */
size_t pm_svc_cache_expire(pm_svc_cache *c, uint64_t now_ns, const pm_svc_outcome *expired);
/* Starts a thread that calls pm_svc_cache_expire at each deadline with a
 * copy of *expired (whose prob must outlive the cache). Returns 0 or -1. */
int pm_svc_cache_watchdog_start(pm_svc_cache *c, const pm_svc_outcome *expired);

typedef struct pm_svc_cache_stats {
    uint64_t hits, misses, joins, evictions, inserts, too_large, expired;
    uint64_t tier_hits, tier_misses, tier_bad;
    uint64_t bytes, entries, max_bytes, flights;
} pm_svc_cache_stats;
void pm_svc_cache_stats_get(pm_svc_cache *c, pm_svc_cache_stats *s);
/* Appends the cache metrics and then the tier's own lines. */
void pm_svc_cache_render(pm_svc_cache *c, pm_svc_buf *b);

/* Nanoseconds on CLOCK_MONOTONIC. */
uint64_t pm_svc_now_ns(void);
#endif
