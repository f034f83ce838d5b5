#include "cache.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "log.h"

/* What one entry costs besides its body: the entry, the blob header and
 * allocator overhead, so the budget bounds real memory, not just bodies. */
#define PM_SVC__ENTRY_OVERHEAD 192

/* A body in the second tier is prefixed with this magic and the lengths of
 * its forms (identity, gzip, br: the compressed forms travel with it, so no
 * replica compresses again), so a truncated or foreign value is a miss,
 * never a wrong response. */
static const unsigned char pm_svc__tier_magic[8] = {'p', 'm', 'b', 'l', 'o', 'b', '0', '2'};
#define PM_SVC__TIER_FORMS 3
#define PM_SVC__TIER_HDR (8 + 8 * PM_SVC__TIER_FORMS)

static void pm_svc__put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t pm_svc__get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

typedef struct pm_svc_entry pm_svc_entry;
struct pm_svc_entry {
    pm_api_key key;
    pm_svc_entry *hnext;            /* hash chain */
    pm_svc_entry *lprev, *lnext;    /* LRU list (ready entries only) */
    pm_svc_blob *blob;              /* ready: the body */
    pm_svc_flight *flight;          /* pending: the computation */
    size_t charge;
    uint64_t used_ns;               /* last access, for picking a shard to evict from */
};

struct pm_svc_flight {
    pm_api_key key;
    volatile int cancel;
    uint64_t deadline_ns;
    atomic_int refs;
    int settled;                    /* under the shard lock */
    pm_svc_waiter *waiters, **tail; /* under the shard lock */
    pm_svc_entry *entry;            /* under the shard lock */
    pm_svc_flight *fprev, *fnext;   /* flight list, under flights_mu */
};

typedef struct pm_svc_shard {
    pthread_mutex_t mu;
    pm_svc_entry **buckets;
    size_t nbuckets, count;
    pm_svc_entry *head, *tail;      /* most / least recently used */
    char pad[64];                   /* keeps shard locks on separate cache lines */
} pm_svc_shard;

struct pm_svc_cache {
    pm_svc_shard *shards;
    unsigned nshards;
    size_t max_bytes;
    pm_svc_tier *tier;
    atomic_size_t bytes, entries;
    atomic_uint_fast64_t hits, misses, joins, evictions, inserts, too_large, expired;
    atomic_uint_fast64_t tier_hits, tier_misses, tier_bad;
    /* Pending flights, for the watchdog. Lock order: shard, then this. */
    pthread_mutex_t flights_mu;
    pthread_cond_t flights_cv;
    pm_svc_flight *flights;
    size_t nflights;
    int wd_running, wd_stop;
    pthread_t wd;
    pm_svc_outcome wd_outcome;
};

uint64_t pm_svc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- blobs ---- */

pm_svc_blob *pm_svc_blob_wrap(void *base, unsigned char *data, size_t len) {
    pm_svc_blob *b = malloc(sizeof *b);
    if (!b) {
        free(base);
        return NULL;
    }
    atomic_init(&b->refs, 1);
    b->budget = NULL;
    atomic_init(&b->charged, 0);
    b->len = len;
    b->data = data;
    b->base = base;
    b->pages = NULL;
    b->coded[0] = b->coded[1] = NULL;
    b->coded_len[0] = b->coded_len[1] = 0;
    b->zbase = NULL;
    b->tried = 1u;   /* identity */
    return b;
}

pm_svc_blob *pm_svc_blob_copy(const void *data, size_t len) {
    unsigned char *d = malloc(len ? len : 1);
    if (!d) return NULL;
    memcpy(d, data, len);
    return pm_svc_blob_wrap(d, d, len);
}

void pm_svc_blob_ref(pm_svc_blob *b) { atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed); }

void pm_svc_blob_unref(pm_svc_blob *b) {
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
    pm_svc_blob_uncharge(b);
    if (b->pages) pm_svc_budget_pages_free(b->pages, b->base, b->len);
    else free(b->base);
    free(b->zbase);
    free(b);
}

/* ---- shards ---- */

static int pm_svc__key_eq(pm_api_key a, pm_api_key b) { return a.hi == b.hi && a.lo == b.lo; }

static pm_svc_shard *pm_svc__shard(pm_svc_cache *c, pm_api_key k) {
    return &c->shards[k.hi & (c->nshards - 1)];
}

static pm_svc_entry **pm_svc__slot(pm_svc_shard *s, pm_api_key k) {
    pm_svc_entry **p = &s->buckets[k.lo & (s->nbuckets - 1)];
    while (*p && !pm_svc__key_eq((*p)->key, k)) p = &(*p)->hnext;
    return p;
}

/* Doubles the bucket array when the chains get long; keeps the old one
 * when out of memory (lookups stay correct, only slower). */
static void pm_svc__grow(pm_svc_shard *s) {
    if (s->count < s->nbuckets) return;
    size_t n = s->nbuckets * 2;
    pm_svc_entry **b = calloc(n, sizeof *b);
    if (!b) return;
    for (size_t i = 0; i < s->nbuckets; i++)
        for (pm_svc_entry *e = s->buckets[i], *next; e; e = next) {
            next = e->hnext;
            pm_svc_entry **slot = &b[e->key.lo & (n - 1)];
            e->hnext = *slot;
            *slot = e;
        }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

static void pm_svc__lru_unlink(pm_svc_shard *s, pm_svc_entry *e) {
    if (e->lprev) e->lprev->lnext = e->lnext; else s->head = e->lnext;
    if (e->lnext) e->lnext->lprev = e->lprev; else s->tail = e->lprev;
    e->lprev = e->lnext = NULL;
}

static void pm_svc__lru_push(pm_svc_shard *s, pm_svc_entry *e) {
    e->lprev = NULL;
    e->lnext = s->head;
    if (s->head) s->head->lprev = e; else s->tail = e;
    s->head = e;
}

static void pm_svc__hash_remove(pm_svc_shard *s, pm_svc_entry *e) {
    pm_svc_entry **p = pm_svc__slot(s, e->key);
    if (*p == e) *p = e->hnext;
    s->count--;
}

pm_svc_cache *pm_svc_cache_create(size_t max_bytes, unsigned nshards, pm_svc_tier *tier) {
    unsigned n = 1;
    while (n < (nshards ? nshards : 16) && n < 4096) n *= 2;
    pm_svc_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->shards = calloc(n, sizeof *c->shards);
    if (!c->shards) {
        free(c);
        return NULL;
    }
    c->nshards = n;
    c->max_bytes = max_bytes;
    for (unsigned i = 0; i < n; i++) {
        pthread_mutex_init(&c->shards[i].mu, NULL);
        c->shards[i].nbuckets = 64;
        c->shards[i].buckets = calloc(64, sizeof(pm_svc_entry *));
        if (!c->shards[i].buckets) {
            c->nshards = i + 1;
            pm_svc_cache_destroy(c);
            return NULL;
        }
    }
    pthread_mutex_init(&c->flights_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->flights_cv, &ca);
    pthread_condattr_destroy(&ca);
    c->tier = tier;
    return c;
}

/* ---- eviction ---- */

/* Evicts least recently used entries until the budget holds. Each shard
 * keeps its own LRU list; the victim is the oldest of the shards' tails. */
static void pm_svc__evict(pm_svc_cache *c) {
    while (atomic_load(&c->bytes) > c->max_bytes) {
        unsigned best = c->nshards;
        uint64_t oldest = UINT64_MAX;
        for (unsigned i = 0; i < c->nshards; i++) {
            pm_svc_shard *s = &c->shards[i];
            pthread_mutex_lock(&s->mu);
            if (s->tail && s->tail->used_ns < oldest) {
                oldest = s->tail->used_ns;
                best = i;
            }
            pthread_mutex_unlock(&s->mu);
        }
        if (best == c->nshards) return;
        pm_svc_shard *s = &c->shards[best];
        pthread_mutex_lock(&s->mu);
        pm_svc_entry *e = s->tail;
        if (e) {
            pm_svc__lru_unlink(s, e);
            pm_svc__hash_remove(s, e);
            atomic_fetch_sub(&c->bytes, e->charge);
            atomic_fetch_sub(&c->entries, 1);
            atomic_fetch_add_explicit(&c->evictions, 1, memory_order_relaxed);
        }
        pthread_mutex_unlock(&s->mu);
        if (e) {
            pm_svc_blob_evicted(e->blob);   /* still being sent: in flight again */
            pm_svc_blob_unref(e->blob);
            free(e);
        }
    }
}

/* Makes e a ready entry holding blob (shard locked). Returns 0, or -1 when
 * the body is bigger than the whole budget (then nothing changes). */
static size_t pm_svc__charge(const pm_svc_blob *blob) {
    /* What the allocator really holds for the body, not just its length. */
    size_t held = blob->pages ? pm_svc_pages_block(blob->len)
                  : blob->base ? malloc_usable_size(blob->base) : 0;
    size_t forms = blob->len + blob->coded_len[0] + blob->coded_len[1];
    if (blob->zbase) held += malloc_usable_size(blob->zbase);
    return (held > forms ? held : forms) + PM_SVC__ENTRY_OVERHEAD;
}

static int pm_svc__make_ready(pm_svc_cache *c, pm_svc_shard *s, pm_svc_entry *e,
                              pm_svc_blob *blob) {
    size_t charge = pm_svc__charge(blob);
    if (charge > c->max_bytes) {
        atomic_fetch_add_explicit(&c->too_large, 1, memory_order_relaxed);
        return -1;
    }
    pm_svc_blob_ref(blob);
    pm_svc_blob_uncharge(blob);   /* the cache's budget counts it from now on */
    e->blob = blob;
    e->flight = NULL;
    e->charge = charge;
    e->used_ns = pm_svc_now_ns();
    pm_svc__lru_push(s, e);
    atomic_fetch_add(&c->bytes, charge);
    atomic_fetch_add(&c->entries, 1);
    atomic_fetch_add_explicit(&c->inserts, 1, memory_order_relaxed);
    return 0;
}

/* ---- flights ---- */

static void pm_svc__flight_unref(pm_svc_flight *f) {
    if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1) free(f);
}

const volatile int *pm_svc_flight_cancel(const pm_svc_flight *f) { return &f->cancel; }
uint64_t pm_svc_flight_deadline(const pm_svc_flight *f) { return f->deadline_ns; }

static void pm_svc__raise_cancel(pm_svc_flight *f) {
    __atomic_store_n(&f->cancel, 1, __ATOMIC_RELEASE);
}

static void pm_svc__put_locked(pm_svc_cache *c, pm_svc_shard *s, pm_api_key key,
                               pm_svc_blob *blob);

/* Answers f's waiters with o, exactly once over every caller. A 200 with
 * store set is kept in memory (whether or not the flight was still
 * pending: a late result is still a good one). Returns 1 when this call
 * settled the flight. */
static int pm_svc__settle(pm_svc_cache *c, pm_svc_flight *f, const pm_svc_outcome *o, int store) {
    int ok = o->status == 200 && o->blob && store;
    pm_svc_shard *s = pm_svc__shard(c, f->key);
    pthread_mutex_lock(&s->mu);
    if (f->settled) {
        if (ok) pm_svc__put_locked(c, s, f->key, o->blob);
        pthread_mutex_unlock(&s->mu);
        if (ok) pm_svc__evict(c);
        return 0;
    }
    f->settled = 1;
    pm_svc_waiter *w = f->waiters;
    f->waiters = NULL;
    pm_svc_entry *e = f->entry;
    f->entry = NULL;
    if (!ok || pm_svc__make_ready(c, s, e, o->blob) < 0) {
        pm_svc__hash_remove(s, e);
        free(e);
    }
    pthread_mutex_unlock(&s->mu);
    if (ok) pm_svc__evict(c);

    pthread_mutex_lock(&c->flights_mu);
    if (f->fprev) f->fprev->fnext = f->fnext; else c->flights = f->fnext;
    if (f->fnext) f->fnext->fprev = f->fprev;
    c->nflights--;
    pthread_mutex_unlock(&c->flights_mu);

    while (w) {
        pm_svc_waiter *next = w->next;   /* w may be freed by its own callback */
        w->fn(w->arg, o);
        w = next;
    }
    pm_svc__flight_unref(f);   /* the registry's reference */
    return 1;
}

/* Inserts a ready entry for key unless one exists (shard locked). A pending
 * flight for key is left alone here; pm_svc_cache_put settles it. */
static void pm_svc__put_locked(pm_svc_cache *c, pm_svc_shard *s, pm_api_key key,
                               pm_svc_blob *blob) {
    pm_svc_entry **slot = pm_svc__slot(s, key);
    if (*slot) return;
    pm_svc_entry *e = calloc(1, sizeof *e);
    if (!e) return;
    e->key = key;
    if (pm_svc__make_ready(c, s, e, blob) < 0) {
        free(e);
        return;
    }
    e->hnext = NULL;
    *slot = e;
    s->count++;
    pm_svc__grow(s);
}

void pm_svc_cache_tier_put(pm_svc_cache *c, pm_api_key key, const pm_svc_blob *b) {
    if (!c->tier) return;
    const unsigned char *form[PM_SVC__TIER_FORMS] = {b->data, b->coded[0], b->coded[1]};
    size_t flen[PM_SVC__TIER_FORMS] = {b->len, b->coded[0] ? b->coded_len[0] : 0,
                                       b->coded[1] ? b->coded_len[1] : 0};
    size_t n = PM_SVC__TIER_HDR + flen[0] + flen[1] + flen[2];
    /* This copy and the client's command buffer are in flight too. */
    pm_svc_budget *bud = b->budget;
    if (bud) pm_svc_budget_add(bud, 2 * n);
    unsigned char *v = malloc(n);
    if (v) {
        memcpy(v, pm_svc__tier_magic, 8);
        size_t at = PM_SVC__TIER_HDR;
        for (int i = 0; i < PM_SVC__TIER_FORMS; i++) {
            pm_svc__put_u64(v + 8 + 8 * i, flen[i]);
            if (flen[i]) memcpy(v + at, form[i], flen[i]);
            at += flen[i];
        }
        uint8_t k[16];
        for (int i = 0; i < 8; i++) {
            k[i] = (uint8_t)(key.hi >> (56 - 8 * i));
            k[8 + i] = (uint8_t)(key.lo >> (56 - 8 * i));
        }
        c->tier->put(c->tier, k, v, n);
        free(v);
    }
    if (bud) pm_svc_budget_sub(bud, 2 * n);
}

void pm_svc_flight_finish(pm_svc_cache *c, pm_svc_flight *f, const pm_svc_outcome *o) {
    pm_svc__settle(c, f, o, 1);
    /* After the waiters were answered: the tier's latency is no one's. */
    if (o->status == 200 && o->blob && !o->tier_hit) pm_svc_cache_tier_put(c, f->key, o->blob);
    pm_svc__flight_unref(f);   /* the owner's reference */
}

void pm_svc_flight_settle(pm_svc_cache *c, pm_svc_flight *f, const pm_svc_outcome *o) {
    pm_svc__settle(c, f, o, 0);
    pm_svc__flight_unref(f);   /* the owner's reference */
}

/* ---- lookups ---- */

static pm_svc_lookup pm_svc__lookup(pm_svc_cache *c, pm_api_key key, uint64_t deadline_ns,
                                    pm_svc_waiter *w, pm_svc_blob **blob,
                                    pm_svc_flight **flight, int count) {
    pm_svc_shard *s = pm_svc__shard(c, key);
    w->next = NULL;
    pthread_mutex_lock(&s->mu);
    pm_svc_entry **slot = pm_svc__slot(s, key);
    pm_svc_entry *e = *slot;
    if (e && e->blob) {
        pm_svc__lru_unlink(s, e);
        pm_svc__lru_push(s, e);
        e->used_ns = pm_svc_now_ns();
        pm_svc_blob_ref(e->blob);
        *blob = e->blob;
        pthread_mutex_unlock(&s->mu);
        if (count) atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
        return PM_SVC_LOOKUP_HIT;
    }
    if (e) {
        *e->flight->tail = w;
        e->flight->tail = &w->next;
        pthread_mutex_unlock(&s->mu);
        if (count) atomic_fetch_add_explicit(&c->joins, 1, memory_order_relaxed);
        return PM_SVC_LOOKUP_JOINED;
    }
    pm_svc_flight *f = calloc(1, sizeof *f);
    e = calloc(1, sizeof *e);
    if (!f || !e) {
        pthread_mutex_unlock(&s->mu);
        free(f);
        free(e);
        return PM_SVC_LOOKUP_NOMEM;
    }
    f->key = e->key = key;
    f->deadline_ns = deadline_ns;
    atomic_init(&f->refs, 2);   /* the registry (table + flight list) and the owner */
    f->waiters = w;
    f->tail = &w->next;
    f->entry = e;
    e->flight = f;
    *slot = e;
    s->count++;
    pm_svc__grow(s);
    pthread_mutex_lock(&c->flights_mu);
    f->fnext = c->flights;
    if (c->flights) c->flights->fprev = f;
    c->flights = f;
    if (c->nflights++ == 0) pthread_cond_signal(&c->flights_cv);
    pthread_mutex_unlock(&c->flights_mu);
    pthread_mutex_unlock(&s->mu);
    if (count) atomic_fetch_add_explicit(&c->misses, 1, memory_order_relaxed);
    *flight = f;
    return PM_SVC_LOOKUP_OWNER;
}

pm_svc_lookup pm_svc_cache_lookup(pm_svc_cache *c, pm_api_key key, uint64_t deadline_ns,
                                  pm_svc_waiter *w, pm_svc_blob **blob, pm_svc_flight **flight) {
    return pm_svc__lookup(c, key, deadline_ns, w, blob, flight, 1);
}

pm_svc_lookup pm_svc_cache_join(pm_svc_cache *c, pm_api_key key, uint64_t deadline_ns,
                                pm_svc_waiter *w, pm_svc_flight **flight) {
    pm_svc_blob *blob = NULL;
    pm_svc_lookup l = pm_svc__lookup(c, key, deadline_ns, w, &blob, flight, 0);
    if (l != PM_SVC_LOOKUP_HIT) return l;
    pm_svc_blob_unref(blob);   /* a key that is also a result's: 2^-128, refuse */
    return PM_SVC_LOOKUP_NOMEM;
}

pm_svc_blob *pm_svc_cache_peek(pm_svc_cache *c, pm_api_key key) {
    pm_svc_shard *s = pm_svc__shard(c, key);
    pthread_mutex_lock(&s->mu);
    pm_svc_entry *e = *pm_svc__slot(s, key);
    pm_svc_blob *b = e ? e->blob : NULL;
    if (b) pm_svc_blob_ref(b);
    pthread_mutex_unlock(&s->mu);
    return b;
}

int pm_svc_cache_replace(pm_svc_cache *c, pm_api_key key, const pm_svc_blob *old,
                         pm_svc_blob *blob) {
    size_t charge = pm_svc__charge(blob);
    if (charge > c->max_bytes) return -1;
    pm_svc_shard *s = pm_svc__shard(c, key);
    pthread_mutex_lock(&s->mu);
    pm_svc_entry *e = *pm_svc__slot(s, key);
    if (!e || !e->blob || e->blob != old) {
        pthread_mutex_unlock(&s->mu);
        return e && e->blob ? 0 : -1;
    }
    pm_svc_blob *was = e->blob;
    pm_svc_blob_ref(blob);
    pm_svc_blob_uncharge(blob);   /* the cache's budget counts it from now on */
    e->blob = blob;
    atomic_fetch_add(&c->bytes, charge);
    atomic_fetch_sub(&c->bytes, e->charge);
    e->charge = charge;
    pthread_mutex_unlock(&s->mu);
    pm_svc_blob_evicted(was);   /* still being sent: in flight again */
    pm_svc_blob_unref(was);
    pm_svc__evict(c);
    return 1;
}

pm_svc_blob *pm_svc_cache_get(pm_svc_cache *c, pm_api_key key) {
    pm_svc_shard *s = pm_svc__shard(c, key);
    pm_svc_blob *b = NULL;
    pthread_mutex_lock(&s->mu);
    pm_svc_entry *e = *pm_svc__slot(s, key);
    if (e && e->blob) {
        pm_svc__lru_unlink(s, e);
        pm_svc__lru_push(s, e);
        e->used_ns = pm_svc_now_ns();
        b = e->blob;
        pm_svc_blob_ref(b);
    }
    pthread_mutex_unlock(&s->mu);
    if (b) atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
    return b;
}

void pm_svc_cache_put(pm_svc_cache *c, pm_api_key key, pm_svc_blob *blob) {
    pm_svc_shard *s = pm_svc__shard(c, key);
    pthread_mutex_lock(&s->mu);
    pm_svc_entry *e = *pm_svc__slot(s, key);
    pm_svc_flight *f = e ? e->flight : NULL;
    if (f) {
        atomic_fetch_add(&f->refs, 1);
        pm_svc__raise_cancel(f);   /* its job would only compute the same bytes */
    } else {
        pm_svc__put_locked(c, s, key, blob);
    }
    pthread_mutex_unlock(&s->mu);
    if (f) {
        pm_svc_outcome o = {.status = 200, .blob = blob};
        pm_svc__settle(c, f, &o, 1);
        pm_svc__flight_unref(f);
    } else {
        pm_svc__evict(c);
    }
}

/* ---- the second tier ---- */

int pm_svc_cache_tier_get(pm_svc_cache *c, pm_api_key key, pm_svc_blob **blob) {
    if (!c->tier) return 0;
    uint8_t k[16];
    for (int i = 0; i < 8; i++) {
        k[i] = (uint8_t)(key.hi >> (56 - 8 * i));
        k[8 + i] = (uint8_t)(key.lo >> (56 - 8 * i));
    }
    unsigned char *data = NULL;
    size_t len = 0;
    if (c->tier->get(c->tier, k, &data, &len) != 1) {
        atomic_fetch_add_explicit(&c->tier_misses, 1, memory_order_relaxed);
        return 0;
    }
    uint64_t flen[PM_SVC__TIER_FORMS] = {0}, sum = 0;
    int ok = data && len >= PM_SVC__TIER_HDR && memcmp(data, pm_svc__tier_magic, 8) == 0;
    for (int i = 0; ok && i < PM_SVC__TIER_FORMS; i++) {
        flen[i] = pm_svc__get_u64(data + 8 + 8 * i);
        ok = flen[i] <= len && sum + flen[i] <= len;
        sum += flen[i];
    }
    if (!ok || sum != len - PM_SVC__TIER_HDR) {
        free(data);
        atomic_fetch_add_explicit(&c->tier_bad, 1, memory_order_relaxed);
        pm_svc_log(PM_SVC_LOG_WARN, NULL, "tier entry malformed, ignored", NULL);
        return 0;
    }
    unsigned char *at = data + PM_SVC__TIER_HDR;
    *blob = pm_svc_blob_wrap(data, at, flen[0]);
    if (!*blob) return 0;
    at += flen[0];
    for (int i = 0; i < 2; i++) {
        (*blob)->coded[i] = flen[1 + i] ? at : NULL;
        (*blob)->coded_len[i] = flen[1 + i];
        if (flen[1 + i]) (*blob)->tried |= 2u << i;
        at += flen[1 + i];
    }
    atomic_fetch_add_explicit(&c->tier_hits, 1, memory_order_relaxed);
    return 1;
}

int pm_svc_cache_tier_state(pm_svc_cache *c) {
    if (!c->tier) return -1;
    if (!c->tier->healthy(c->tier)) return 0;
    return c->tier->writable && !c->tier->writable(c->tier) ? 2 : 1;
}

/* ---- deadlines ---- */

size_t pm_svc_cache_expire(pm_svc_cache *c, uint64_t now_ns, const pm_svc_outcome *expired) {
    size_t n = 0;
    for (;;) {
        /* One at a time: settling takes the shard lock, which ranks above
         * flights_mu, so the list lock is dropped first. */
        pm_svc_flight *due = NULL;
        pthread_mutex_lock(&c->flights_mu);
        for (pm_svc_flight *f = c->flights; f; f = f->fnext)
            if (f->deadline_ns <= now_ns) {
                due = f;
                atomic_fetch_add(&f->refs, 1);
                break;
            }
        pthread_mutex_unlock(&c->flights_mu);
        if (!due) return n;
        pm_svc__raise_cancel(due);
        if (pm_svc__settle(c, due, expired, 0)) {
            atomic_fetch_add_explicit(&c->expired, 1, memory_order_relaxed);
            n++;
        }
        pm_svc__flight_unref(due);
    }
}

static void *pm_svc__watchdog(void *arg) {
    pm_svc_cache *c = arg;
    pthread_mutex_lock(&c->flights_mu);
    while (!c->wd_stop) {
        uint64_t next = UINT64_MAX;
        for (pm_svc_flight *f = c->flights; f; f = f->fnext)
            if (f->deadline_ns < next) next = f->deadline_ns;
        uint64_t now = pm_svc_now_ns();
        if (next <= now) {
            pthread_mutex_unlock(&c->flights_mu);
            pm_svc_cache_expire(c, now, &c->wd_outcome);
            pthread_mutex_lock(&c->flights_mu);
            continue;
        }
        if (next == UINT64_MAX) {
            pthread_cond_wait(&c->flights_cv, &c->flights_mu);
            continue;
        }
        /* New flights only have later deadlines than the ones listed (the
         * deadline is a fixed span), except the first, which signals. Wake
         * at least every 100 ms anyway. */
        if (next - now > 100000000ull) next = now + 100000000ull;
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        pthread_cond_timedwait(&c->flights_cv, &c->flights_mu, &ts);
    }
    pthread_mutex_unlock(&c->flights_mu);
    return NULL;
}

int pm_svc_cache_watchdog_start(pm_svc_cache *c, const pm_svc_outcome *expired) {
    c->wd_outcome = *expired;
    if (pthread_create(&c->wd, NULL, pm_svc__watchdog, c) != 0) return -1;
    c->wd_running = 1;
    return 0;
}

/* ---- stats and teardown ---- */

void pm_svc_cache_stats_get(pm_svc_cache *c, pm_svc_cache_stats *s) {
    s->hits = atomic_load(&c->hits);
    s->misses = atomic_load(&c->misses);
    s->joins = atomic_load(&c->joins);
    s->evictions = atomic_load(&c->evictions);
    s->inserts = atomic_load(&c->inserts);
    s->too_large = atomic_load(&c->too_large);
    s->expired = atomic_load(&c->expired);
    s->tier_hits = atomic_load(&c->tier_hits);
    s->tier_misses = atomic_load(&c->tier_misses);
    s->tier_bad = atomic_load(&c->tier_bad);
    s->bytes = atomic_load(&c->bytes);
    s->entries = atomic_load(&c->entries);
    s->max_bytes = c->max_bytes;
    pthread_mutex_lock(&c->flights_mu);
    s->flights = c->nflights;
    pthread_mutex_unlock(&c->flights_mu);
}

void pm_svc_cache_render(pm_svc_cache *c, pm_svc_buf *b) {
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    static const struct { const char *name, *type, *help; } m[] = {
        {"procmesh_cache_hits_total", "counter", "Memory cache hits."},
        {"procmesh_cache_misses_total", "counter", "Memory cache misses that started a computation."},
        {"procmesh_cache_singleflight_joins_total", "counter",
         "Requests that joined an identical computation in flight."},
        {"procmesh_cache_evictions_total", "counter", "Entries evicted to stay in budget."},
        {"procmesh_cache_inserts_total", "counter", "Entries stored."},
        {"procmesh_cache_too_large_total", "counter", "Results larger than the whole budget, not kept."},
        {"procmesh_cache_expired_total", "counter", "Computations answered 503 at their deadline."},
        {"procmesh_cache_tier_hits_total", "counter", "Second-tier hits after a memory miss."},
        {"procmesh_cache_tier_misses_total", "counter", "Second-tier misses and errors."},
        {"procmesh_cache_tier_malformed_total", "counter", "Second-tier entries ignored as malformed."},
        {"procmesh_cache_bytes", "gauge", "Bytes charged to the memory cache."},
        {"procmesh_cache_entries", "gauge", "Entries in the memory cache."},
        {"procmesh_cache_max_bytes", "gauge", "Memory cache budget."},
        {"procmesh_cache_inflight", "gauge", "Computations in flight (single-flight entries)."},
    };
    const uint64_t v[] = {s.hits, s.misses, s.joins, s.evictions, s.inserts, s.too_large,
                          s.expired, s.tier_hits, s.tier_misses, s.tier_bad, s.bytes, s.entries,
                          s.max_bytes, s.flights};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        pm_svc_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", m[i].name, m[i].help,
                          m[i].name, m[i].type, m[i].name, (unsigned long long)v[i]);
    if (c->tier) {
        pm_svc_buf_printf(b,
                          "# HELP procmesh_cache_tier_up 1 when the second tier answered its last "
                          "call.\n# TYPE procmesh_cache_tier_up gauge\nprocmesh_cache_tier_up %d\n",
                          c->tier->healthy(c->tier) ? 1 : 0);
        char tmp[8192];
        size_t n = c->tier->metrics(c->tier, tmp, sizeof tmp);
        pm_svc_buf_append(b, tmp, n < sizeof tmp ? n : sizeof tmp);
    }
}

void pm_svc_cache_destroy(pm_svc_cache *c) {
    if (!c) return;
    if (c->wd_running) {
        pthread_mutex_lock(&c->flights_mu);
        c->wd_stop = 1;
        pthread_cond_signal(&c->flights_cv);
        pthread_mutex_unlock(&c->flights_mu);
        pthread_join(c->wd, NULL);
    }
    if (c->wd_outcome.status) pm_svc_cache_expire(c, UINT64_MAX, &c->wd_outcome);
    for (unsigned i = 0; i < c->nshards; i++) {
        pm_svc_shard *s = &c->shards[i];
        for (size_t j = 0; s->buckets && j < s->nbuckets; j++)
            for (pm_svc_entry *e = s->buckets[j], *next; e; e = next) {
                next = e->hnext;
                pm_svc_blob_unref(e->blob);
                free(e);
            }
        free(s->buckets);
        pthread_mutex_destroy(&s->mu);
    }
    free(c->shards);
    pthread_mutex_destroy(&c->flights_mu);
    pthread_cond_destroy(&c->flights_cv);
    if (c->tier) c->tier->destroy(c->tier);
    free(c);
}
