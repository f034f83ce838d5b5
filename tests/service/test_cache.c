/* The result cache: LRU in bytes, eviction, sharding under threads,
 * single-flight, deadlines and the second tier. */
#include <criterion/criterion.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "compress.h"

static pm_api_key key_n(uint64_t n) {
    /* Spread like real keys (hashes): every shard gets some. */
    uint64_t h = n * 0x9e3779b97f4a7c15ull;
    return (pm_api_key){h ^ (h >> 29), n + 1};
}

static pm_svc_blob *blob_of(size_t len, unsigned char fill) {
    unsigned char *d = malloc(len ? len : 1);
    memset(d, fill, len);
    return pm_svc_blob_wrap(d, d, len);
}

static void sleep_us(long us) {
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* A waiter that records what it was told. */
typedef struct rec {
    atomic_int calls;
    int status;
    size_t len;
    int tier_hit;
    pm_svc_waiter w;
} rec;

static void rec_fn(void *arg, const pm_svc_outcome *o) {
    rec *r = arg;
    r->status = o->status;
    r->len = o->blob ? o->blob->len : 0;
    r->tier_hit = o->tier_hit;
    atomic_fetch_add(&r->calls, 1);
}

static void rec_init(rec *r) {
    memset(r, 0, sizeof *r);
    r->w.fn = rec_fn;
    r->w.arg = r;
}

Test(cache, put_then_get_counts_hits_only) {
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, NULL);
    cr_assert_null(pm_svc_cache_get(c, key_n(1)));
    pm_svc_blob *b = blob_of(100, 7);
    pm_svc_cache_put(c, key_n(1), b);
    pm_svc_blob_unref(b);
    pm_svc_blob *g = pm_svc_cache_get(c, key_n(1));
    cr_assert_not_null(g);
    cr_assert_eq(g->len, 100);
    cr_assert_eq(g->data[99], 7);
    pm_svc_blob_unref(g);
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_eq(s.hits, 1);
    cr_assert_eq(s.misses, 0);   /* a get that finds nothing is not yet a miss */
    cr_assert_eq(s.entries, 1);
    cr_assert_gt(s.bytes, 100);
    pm_svc_cache_destroy(c);
}

Test(cache, bytes_stay_within_budget_and_evictions_are_counted) {
    const size_t budget = 64 * 1024;
    pm_svc_cache *c = pm_svc_cache_create(budget, 16, NULL);
    for (uint64_t i = 0; i < 200; i++) {
        pm_svc_blob *b = blob_of(1000 + (size_t)(i % 7) * 300, (unsigned char)i);
        pm_svc_cache_put(c, key_n(i), b);
        pm_svc_blob_unref(b);
        pm_svc_cache_stats s;
        pm_svc_cache_stats_get(c, &s);
        cr_assert_leq(s.bytes, budget, "over budget after insert %llu: %llu",
                      (unsigned long long)i, (unsigned long long)s.bytes);
    }
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_gt(s.evictions, 100);
    cr_assert_eq(s.inserts, 200);
    cr_assert_eq(s.entries, s.inserts - s.evictions);
    /* The newest entry is always kept. */
    pm_svc_blob *g = pm_svc_cache_get(c, key_n(199));
    cr_assert_not_null(g);
    pm_svc_blob_unref(g);
    pm_svc_cache_destroy(c);
}

Test(cache, eviction_follows_recency_across_shards) {
    /* Room for exactly 10 entries of this size (the cache charges what the
     * allocator holds, plus a fixed overhead per entry). */
    const size_t body = 4000;
    void *probe = malloc(body);
    size_t held = malloc_usable_size(probe);
    free(probe);
    pm_svc_cache *c = pm_svc_cache_create(10 * (held + 192) + 100, 16, NULL);
    for (uint64_t i = 0; i < 10; i++) {
        pm_svc_blob *b = blob_of(body, 1);
        pm_svc_cache_put(c, key_n(i), b);
        pm_svc_blob_unref(b);
        sleep_us(200);
    }
    /* Touch the three oldest: they become the most recent. */
    for (uint64_t i = 0; i < 3; i++) {
        pm_svc_blob_unref(pm_svc_cache_get(c, key_n(i)));
        sleep_us(200);
    }
    for (uint64_t i = 10; i < 15; i++) {
        pm_svc_blob *b = blob_of(body, 2);
        pm_svc_cache_put(c, key_n(i), b);
        pm_svc_blob_unref(b);
        sleep_us(200);
    }
    /* 5 evicted: keys 3..7 (the least recently used), not 0..2. */
    for (uint64_t i = 0; i < 15; i++) {
        pm_svc_blob *g = pm_svc_cache_get(c, key_n(i));
        int expect = i < 3 || i >= 8;
        cr_assert_eq(g != NULL, expect, "key %llu present=%d", (unsigned long long)i, g != NULL);
        pm_svc_blob_unref(g);
    }
    pm_svc_cache_destroy(c);
}

Test(cache, a_body_larger_than_the_budget_is_not_kept) {
    pm_svc_cache *c = pm_svc_cache_create(10000, 16, NULL);
    pm_svc_blob *b = blob_of(20000, 3);
    pm_svc_cache_put(c, key_n(1), b);
    cr_assert_null(pm_svc_cache_get(c, key_n(1)));
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_eq(s.too_large, 1);
    cr_assert_eq(s.bytes, 0);
    /* Still alive for its holder. */
    cr_assert_eq(b->data[19999], 3);
    pm_svc_blob_unref(b);
    pm_svc_cache_destroy(c);
}

Test(cache, evicted_bodies_live_on_while_referenced) {
    pm_svc_cache *c = pm_svc_cache_create(3000, 1, NULL);
    pm_svc_blob *b = blob_of(2000, 9);
    pm_svc_cache_put(c, key_n(1), b);
    pm_svc_blob_unref(b);
    pm_svc_blob *held = pm_svc_cache_get(c, key_n(1));   /* a response in flight */
    pm_svc_blob *b2 = blob_of(2000, 8);
    pm_svc_cache_put(c, key_n(2), b2);                    /* evicts key 1 */
    pm_svc_blob_unref(b2);
    cr_assert_null(pm_svc_cache_get(c, key_n(1)));
    cr_assert_eq(held->data[1999], 9);
    pm_svc_blob_unref(held);
    pm_svc_cache_destroy(c);
}

Test(cache, single_flight_one_owner_every_waiter_answered_once) {
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, NULL);
    rec r[6];
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL, *f2 = NULL;
    for (int i = 0; i < 6; i++) rec_init(&r[i]);
    uint64_t far = pm_svc_now_ns() + 60ull * 1000000000ull;
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(5), far, &r[0].w, &blob, &f), PM_SVC_LOOKUP_OWNER);
    for (int i = 1; i < 6; i++)
        cr_assert_eq(pm_svc_cache_lookup(c, key_n(5), far, &r[i].w, &blob, &f2),
                     PM_SVC_LOOKUP_JOINED);
    for (int i = 0; i < 6; i++) cr_assert_eq(atomic_load(&r[i].calls), 0);
    pm_svc_blob *b = blob_of(321, 4);
    pm_svc_outcome o = {.status = 200, .blob = b, .gen_ms = 1};
    pm_svc_flight_finish(c, f, &o);
    pm_svc_blob_unref(b);
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(atomic_load(&r[i].calls), 1);
        cr_assert_eq(r[i].status, 200);
        cr_assert_eq(r[i].len, 321);
    }
    rec late;
    rec_init(&late);
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(5), far, &late.w, &blob, &f2), PM_SVC_LOOKUP_HIT);
    cr_assert_eq(blob->len, 321);
    pm_svc_blob_unref(blob);
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_eq(s.misses, 1);
    cr_assert_eq(s.joins, 5);
    cr_assert_eq(s.hits, 1);
    cr_assert_eq(s.flights, 0);
    pm_svc_cache_destroy(c);
}

Test(cache, errors_are_not_cached) {
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, NULL);
    rec a, b;
    rec_init(&a);
    rec_init(&b);
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL, *g = NULL;
    uint64_t far = pm_svc_now_ns() + 60ull * 1000000000ull;
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(1), far, &a.w, &blob, &f), PM_SVC_LOOKUP_OWNER);
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(1), far, &b.w, &blob, &g), PM_SVC_LOOKUP_JOINED);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_problem_field(&p, "/arms", "too close");
    pm_svc_outcome o = {.status = 422, .prob = &p};
    pm_svc_flight_finish(c, f, &o);
    pm_api_problem_free(&p);
    cr_assert_eq(a.status, 422);
    cr_assert_eq(b.status, 422);
    rec again;
    rec_init(&again);
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(1), far, &again.w, &blob, &f),
                 PM_SVC_LOOKUP_OWNER);
    pm_svc_outcome bye = {.status = 503};
    pm_svc_flight_finish(c, f, &bye);
    pm_svc_cache_destroy(c);
}

Test(cache, zero_budget_keeps_nothing_but_still_single_flights) {
    pm_svc_cache *c = pm_svc_cache_create(0, 16, NULL);
    rec a, b;
    rec_init(&a);
    rec_init(&b);
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL, *g = NULL;
    uint64_t far = pm_svc_now_ns() + 60ull * 1000000000ull;
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(1), far, &a.w, &blob, &f), PM_SVC_LOOKUP_OWNER);
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(1), far, &b.w, &blob, &g), PM_SVC_LOOKUP_JOINED);
    pm_svc_blob *body = blob_of(10, 1);
    pm_svc_outcome o = {.status = 200, .blob = body};
    pm_svc_flight_finish(c, f, &o);
    pm_svc_blob_unref(body);
    cr_assert_eq(b.len, 10);
    cr_assert_null(pm_svc_cache_get(c, key_n(1)));
    pm_svc_cache_destroy(c);
}

Test(cache, expiry_answers_503_raises_cancel_and_keeps_a_late_result) {
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, NULL);
    rec a, b;
    rec_init(&a);
    rec_init(&b);
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL, *g = NULL;
    uint64_t t = pm_svc_now_ns();
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(3), t + 1000, &a.w, &blob, &f), PM_SVC_LOOKUP_OWNER);
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(3), t + 1000, &b.w, &blob, &g),
                 PM_SVC_LOOKUP_JOINED);
    pm_svc_outcome expired = {.status = 503};
    cr_assert_eq(pm_svc_cache_expire(c, t + 999, &expired), 0);
    cr_assert_eq(*pm_svc_flight_cancel(f), 0);
    cr_assert_eq(pm_svc_cache_expire(c, t + 1000, &expired), 1);
    cr_assert_eq(*pm_svc_flight_cancel(f), 1);
    cr_assert_eq(a.status, 503);
    cr_assert_eq(b.status, 503);
    /* A new identical request starts over... */
    rec n;
    rec_init(&n);
    pm_svc_flight *f3 = NULL;
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(3), t + 5000000000ull, &n.w, &blob, &f3),
                 PM_SVC_LOOKUP_OWNER);
    /* ...and the old job's late success answers it and is kept. */
    pm_svc_blob *body = blob_of(50, 5);
    pm_svc_outcome o = {.status = 200, .blob = body};
    pm_svc_flight_finish(c, f, &o);
    cr_assert_eq(a.calls, 1);
    cr_assert_eq(b.calls, 1);
    pm_svc_cache_put(c, key_n(3), body);   /* a put settles a pending flight too */
    cr_assert_eq(n.calls, 1);
    cr_assert_eq(n.status, 200);
    cr_assert_eq(*pm_svc_flight_cancel(f3), 1);
    pm_svc_flight_finish(c, f3, &o);       /* the owner's finish is then a no-op */
    cr_assert_eq(n.calls, 1);
    pm_svc_blob_unref(body);
    pm_svc_blob *hit = pm_svc_cache_get(c, key_n(3));
    cr_assert_not_null(hit);
    pm_svc_blob_unref(hit);
    pm_svc_cache_destroy(c);
}

Test(cache, watchdog_expires_at_the_deadline) {
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, NULL);
    pm_svc_outcome expired = {.status = 503};
    cr_assert_eq(pm_svc_cache_watchdog_start(c, &expired), 0);
    rec a;
    rec_init(&a);
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL;
    uint64_t t0 = pm_svc_now_ns();
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(9), t0 + 80000000ull, &a.w, &blob, &f),
                 PM_SVC_LOOKUP_OWNER);
    while (atomic_load(&a.calls) == 0 && pm_svc_now_ns() - t0 < 2000000000ull) sleep_us(1000);
    uint64_t waited = pm_svc_now_ns() - t0;
    cr_assert_eq(a.status, 503);
    cr_assert_geq(waited, 80000000ull);
    cr_assert_lt(waited, 400000000ull, "expired after %llu ms", (unsigned long long)(waited / 1000000));
    pm_svc_outcome late = {.status = 503};
    pm_svc_flight_finish(c, f, &late);
    pm_svc_cache_destroy(c);
}

/* ---- threads ---- */

typedef struct race {
    pm_svc_cache *c;
    atomic_int *owners;
    atomic_int *answered;
    pthread_barrier_t *go;
    pm_svc_flight **flight;
} race;

static void race_fn(void *arg, const pm_svc_outcome *o) {
    (void)o;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void *race_thread(void *arg) {
    race *r = arg;
    pm_svc_waiter *w = calloc(1, sizeof *w);
    w->fn = race_fn;
    w->arg = r->answered;
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL;
    pthread_barrier_wait(r->go);
    pm_svc_lookup l = pm_svc_cache_lookup(r->c, key_n(77), pm_svc_now_ns() + 60000000000ull, w,
                                          &blob, &f);
    if (l == PM_SVC_LOOKUP_OWNER) {
        atomic_fetch_add(r->owners, 1);
        *r->flight = f;
    }
    return w;
}

Test(cache, concurrent_identical_misses_make_one_owner) {
    enum { N = 16 };
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, NULL);
    atomic_int owners = 0, answered = 0;
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, N);
    pm_svc_flight *flight = NULL;
    race r = {c, &owners, &answered, &go, &flight};
    pthread_t t[N];
    void *w[N];
    for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, race_thread, &r);
    for (int i = 0; i < N; i++) pthread_join(t[i], &w[i]);
    cr_assert_eq(atomic_load(&owners), 1);
    cr_assert_eq(atomic_load(&answered), 0);
    pm_svc_blob *b = blob_of(10, 1);
    pm_svc_outcome o = {.status = 200, .blob = b};
    pm_svc_flight_finish(c, flight, &o);
    pm_svc_blob_unref(b);
    cr_assert_eq(atomic_load(&answered), N);
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_eq(s.joins, N - 1);
    for (int i = 0; i < N; i++) free(w[i]);
    pthread_barrier_destroy(&go);
    pm_svc_cache_destroy(c);
}

typedef struct stress {
    pm_svc_cache *c;
    unsigned seed;
} stress;

static void noop_fn(void *arg, const pm_svc_outcome *o) {
    (void)o;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void *stress_thread(void *arg) {
    stress *st = arg;
    atomic_int answered = 0;
    int waiting = 0;
    pm_svc_waiter *ws = calloc(4000, sizeof *ws);
    for (int i = 0; i < 4000; i++) {
        uint64_t k = (uint64_t)(rand_r(&st->seed) % 300);
        pm_svc_blob *blob = NULL;
        pm_svc_flight *f = NULL;
        ws[i].fn = noop_fn;
        ws[i].arg = &answered;
        pm_svc_lookup l = pm_svc_cache_lookup(st->c, key_n(k), pm_svc_now_ns() + 60000000000ull,
                                              &ws[i], &blob, &f);
        if (l == PM_SVC_LOOKUP_HIT) {
            cr_assert_eq(blob->data[0], (unsigned char)k);
            pm_svc_blob_unref(blob);
        } else if (l == PM_SVC_LOOKUP_OWNER) {
            waiting++;
            pm_svc_blob *b = blob_of(500 + (size_t)k * 10, (unsigned char)k);
            pm_svc_outcome o = {.status = 200, .blob = b};
            pm_svc_flight_finish(st->c, f, &o);
            pm_svc_blob_unref(b);
        } else {
            waiting++;
        }
    }
    /* Every owner finished; joiners of other threads' flights get answered
     * when those finish. Wait for all of this thread's waiters. */
    while (atomic_load(&answered) < waiting) sleep_us(100);
    free(ws);
    return NULL;
}

Test(cache, shards_under_eight_threads_keep_every_invariant) {
    const size_t budget = 256 * 1024;
    pm_svc_cache *c = pm_svc_cache_create(budget, 16, NULL);
    pthread_t t[8];
    stress st[8];
    for (int i = 0; i < 8; i++) {
        st[i] = (stress){c, (unsigned)i * 7919u + 1};
        pthread_create(&t[i], NULL, stress_thread, &st[i]);
    }
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_leq(s.bytes, budget);
    cr_assert_eq(s.entries, s.inserts - s.evictions);
    cr_assert_eq(s.flights, 0);
    cr_assert_eq(s.hits + s.misses + s.joins, 8 * 4000);
    cr_assert_gt(s.evictions, 0);
    pm_svc_cache_destroy(c);
}

/* ---- the second tier ---- */

typedef struct fake_tier {
    pm_svc_tier t;
    uint8_t key[16];
    unsigned char *val;
    size_t len;
    int puts, gets, healthy;
} fake_tier;

static int ft_get(pm_svc_tier *t, const uint8_t key[16], unsigned char **data, size_t *len) {
    fake_tier *f = (fake_tier *)t;
    f->gets++;
    if (!f->val || memcmp(key, f->key, 16) != 0) return 0;
    *data = malloc(f->len);
    memcpy(*data, f->val, f->len);
    *len = f->len;
    return 1;
}
static void ft_put(pm_svc_tier *t, const uint8_t key[16], const unsigned char *d, size_t len) {
    fake_tier *f = (fake_tier *)t;
    f->puts++;
    free(f->val);
    f->val = malloc(len);
    memcpy(f->val, d, len);
    f->len = len;
    memcpy(f->key, key, 16);
}
static int ft_healthy(pm_svc_tier *t) { return ((fake_tier *)t)->healthy; }
static size_t ft_metrics(pm_svc_tier *t, char *buf, size_t cap) {
    (void)t;
    return (size_t)snprintf(buf, cap, "fake_tier_calls_total 3\n");
}
static int ft_destroyed;
static void ft_destroy(pm_svc_tier *t) {
    fake_tier *f = (fake_tier *)t;
    free(f->val);
    free(f);
    ft_destroyed++;
}

static fake_tier *fake_new(void) {
    fake_tier *f = calloc(1, sizeof *f);
    f->t = (pm_svc_tier){ft_get, ft_put, ft_healthy, ft_metrics, ft_destroy, NULL};
    f->healthy = 1;
    return f;
}

/* Makes the caller the owner of a new flight for key, a (fresh) its waiter. */
static pm_svc_flight *own_flight(pm_svc_cache *c, pm_api_key key, rec *a) {
    rec_init(a);
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL;
    cr_assert_eq(pm_svc_cache_lookup(c, key, pm_svc_now_ns() + 1000000000ull, &a->w, &blob, &f),
                 PM_SVC_LOOKUP_OWNER);
    return f;
}

Test(cache, generated_results_go_to_the_tier_and_come_back) {
    fake_tier *ft = fake_new();
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, &ft->t);
    rec a;
    rec_init(&a);
    pm_svc_blob *blob = NULL;
    pm_svc_flight *f = NULL;
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(1), &blob), 0);
    cr_assert_eq(pm_svc_cache_lookup(c, key_n(1), pm_svc_now_ns() + 1000000000ull, &a.w, &blob, &f),
                 PM_SVC_LOOKUP_OWNER);
    pm_svc_blob *b = blob_of(77, 6);
    pm_svc_outcome o = {.status = 200, .blob = b};
    pm_svc_flight_finish(c, f, &o);
    pm_svc_blob_unref(b);
    cr_assert_eq(ft->puts, 1);
    cr_assert_eq(ft->len, 77 + 32);   /* magic and three form lengths */
    /* A second process (a fresh memory cache) finds it in the tier. */
    pm_svc_cache *c2 = pm_svc_cache_create(1 << 20, 16, NULL);
    pm_svc_cache_destroy(c2);
    pm_svc_blob *t = NULL;
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(1), &t), 1);
    cr_assert_eq(t->len, 77);
    cr_assert_eq(t->data[76], 6);
    pm_svc_blob_unref(t);
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(2), &t), 0);
    /* A truncated or foreign value is a miss, never a wrong body. */
    ft->len -= 1;
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(1), &t), 0);
    ft->val[0] = 'X';
    ft->len += 1;
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(1), &t), 0);
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_eq(s.tier_hits, 1);
    cr_assert_eq(s.tier_bad, 2);
    cr_assert_eq(pm_svc_cache_tier_state(c), 1);
    ft->healthy = 0;
    cr_assert_eq(pm_svc_cache_tier_state(c), 0);
    pm_svc_buf mb;
    pm_svc_buf_init(&mb);
    pm_svc_cache_render(c, &mb);
    cr_assert_not_null(strstr(mb.data, "procmesh_cache_tier_up 0\n"));
    cr_assert_not_null(strstr(mb.data, "fake_tier_calls_total 3\n"));
    pm_svc_buf_free(&mb);
    int before = ft_destroyed;
    pm_svc_cache_destroy(c);
    cr_assert_eq(ft_destroyed, before + 1);
}

/* A result's compressed forms travel through the tier with it (no replica
 * compresses again), and each one is charged to the memory budget. */
Test(cache, compressed_forms_go_through_the_tier_and_count_in_the_budget) {
    fake_tier *ft = fake_new();
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, &ft->t);
    rec a;
    pm_svc_flight *f = own_flight(c, key_n(7), &a);
    pm_svc_blob *b = blob_of(3000, 9);
    pm_svc_zlevels lv = {.gzip = 6, .br = 5, .min_len = 512};
    cr_assert_eq(pm_svc_blob_compress(b, &lv, 0, PM_SVC_CODINGS_ALL), 0);
    cr_assert_eq(pm_svc_blob_codings(b), 7u);
    size_t gl = b->coded_len[0], bl = b->coded_len[1];
    pm_svc_outcome o = {.status = 200, .blob = b};
    pm_svc_flight_finish(c, f, &o);
    cr_assert_eq(ft->len, 32 + 3000 + gl + bl);
    pm_svc_cache_stats s;
    pm_svc_cache_stats_get(c, &s);
    cr_assert_geq(s.bytes, 3000 + gl + bl + 192, "the compressed forms count in the budget");
    pm_svc_blob *t = NULL;
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(7), &t), 1);
    cr_assert_eq(t->len, 3000);
    cr_assert_eq(memcmp(t->data, b->data, 3000), 0);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(t->coded_len[i], b->coded_len[i]);
        cr_assert_eq(memcmp(t->coded[i], b->coded[i], b->coded_len[i]), 0);
    }
    pm_svc_blob_unref(t);
    /* Lengths that do not add up to the value: malformed, a miss. */
    ft->val[8 + 8] ^= 1;   /* the gzip length */
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(7), &t), 0);
    ft->val[8 + 8] ^= 1;
    memset(ft->val + 8 + 16, 0xff, 8);   /* a br length past the value */
    cr_assert_eq(pm_svc_cache_tier_get(c, key_n(7), &t), 0);
    pm_svc_cache_stats_get(c, &s);
    cr_assert_eq(s.tier_bad, 2);
    pm_svc_blob_unref(b);
    pm_svc_cache_destroy(c);
}

Test(cache, a_tier_hit_is_not_written_back) {
    fake_tier *ft = fake_new();
    pm_svc_cache *c = pm_svc_cache_create(1 << 20, 16, &ft->t);
    rec a;
    pm_svc_flight *f = own_flight(c, key_n(4), &a);
    pm_svc_blob *b = blob_of(12, 2);
    pm_svc_outcome o = {.status = 200, .blob = b, .tier_hit = 1};
    pm_svc_flight_finish(c, f, &o);
    pm_svc_blob_unref(b);
    cr_assert_eq(ft->puts, 0);
    cr_assert_eq(a.tier_hit, 1);
    pm_svc_blob *m = pm_svc_cache_get(c, key_n(4));   /* but memory keeps it */
    cr_assert_not_null(m);
    pm_svc_blob_unref(m);
    pm_svc_cache_destroy(c);
}

Test(cache, render_lists_every_cache_metric) {
    pm_svc_cache *c = pm_svc_cache_create(1000, 16, NULL);
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_cache_render(c, &b);
    const char *names[] = {"procmesh_cache_hits_total 0", "procmesh_cache_misses_total 0",
                           "procmesh_cache_evictions_total 0", "procmesh_cache_bytes 0",
                           "procmesh_cache_entries 0", "procmesh_cache_max_bytes 1000",
                           "procmesh_cache_singleflight_joins_total 0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_assert_not_null(strstr(b.data, names[i]), "missing %s", names[i]);
    cr_assert_null(strstr(b.data, "tier_up"));
    pm_svc_buf_free(&b);
    pm_svc_cache_destroy(c);
}
