/* The request memo: digests that tell requests apart, a bounded table that
 * keeps what fits and forgets the rest, safe under concurrent use. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "memo.h"

static pm_api_key key_n(uint64_t n) { return (pm_api_key){n * 0x9e3779b97f4a7c15ull, n}; }
static int key_eq(pm_api_key a, pm_api_key b) { return a.hi == b.hi && a.lo == b.lo; }

Test(memo, digests_tell_requests_apart) {
    pm_api_query_pair q1[] = {{"seed", "42"}, {"count", "12"}};
    pm_api_query_pair q2[] = {{"count", "12"}, {"seed", "42"}};
    pm_api_query_pair q3[] = {{"seed4", "2"}, {"count", "12"}};   /* same bytes, other split */
    pm_api_key d = pm_svc_memo_digest_query(1, 0, q1, 2);
    cr_assert(key_eq(d, pm_svc_memo_digest_query(1, 0, q1, 2)), "deterministic");
    cr_assert_not(key_eq(d, pm_svc_memo_digest_query(1, 0, q2, 2)), "order");
    cr_assert_not(key_eq(d, pm_svc_memo_digest_query(1, 0, q3, 2)), "framing");
    cr_assert_not(key_eq(d, pm_svc_memo_digest_query(2, 0, q1, 2)), "route");
    cr_assert_not(key_eq(d, pm_svc_memo_digest_query(1, 1, q1, 2)), "format");
    cr_assert_not(key_eq(d, pm_svc_memo_digest_query(1, 0, q1, 1)), "count");
    const char *body = "{\"seed\":42}";
    pm_api_key b = pm_svc_memo_digest_body(1, 0, body, strlen(body));
    cr_assert(key_eq(b, pm_svc_memo_digest_body(1, 0, body, strlen(body))));
    cr_assert_not(key_eq(b, pm_svc_memo_digest_body(1, 0, body, strlen(body) - 1)));
    cr_assert_not(key_eq(b, pm_svc_memo_digest_body(1, 2, body, strlen(body))), "format");
    pm_api_key e = pm_svc_memo_digest_body(1, 0, "", 0);
    pm_api_query_pair none[1] = {{"", ""}};
    cr_assert_not(key_eq(e, pm_svc_memo_digest_query(1, 0, none, 0)), "GET vs POST");
    cr_assert(e.hi || e.lo, "never the empty mark");
}

Test(memo, remembers_and_counts) {
    pm_svc_memo *m = pm_svc_memo_create(64);
    pm_api_key k;
    cr_assert_not(pm_svc_memo_get(m, key_n(1), &k));
    pm_svc_memo_put(m, key_n(1), key_n(1001));
    cr_assert(pm_svc_memo_get(m, key_n(1), &k));
    cr_assert(key_eq(k, key_n(1001)));
    pm_svc_memo_put(m, key_n(1), key_n(1002));   /* a put replaces, never duplicates */
    cr_assert(pm_svc_memo_get(m, key_n(1), &k));
    cr_assert(key_eq(k, key_n(1002)));
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_memo_render(m, &b);
    cr_assert_not_null(strstr(b.data, "procmesh_request_memo_hits_total 2\n"), "%s", b.data);
    cr_assert_not_null(strstr(b.data, "procmesh_request_memo_misses_total 1\n"), "%s", b.data);
    cr_assert_not_null(strstr(b.data, "procmesh_request_memo_capacity 64\n"), "%s", b.data);
    pm_svc_buf_free(&b);
    pm_svc_memo_destroy(m);
}

/* Bounded: 10 times the capacity goes in; what comes back is always the
 * key that was put (never another digest's), and the most recent entries
 * of each set survive. */
Test(memo, stays_bounded_and_never_confuses_digests) {
    pm_svc_memo *m = pm_svc_memo_create(256);
    const uint64_t n = 2560;
    for (uint64_t i = 1; i <= n; i++) pm_svc_memo_put(m, key_n(i), key_n(i + 100000));
    size_t kept = 0;
    for (uint64_t i = 1; i <= n; i++) {
        pm_api_key k;
        if (pm_svc_memo_get(m, key_n(i), &k)) {
            cr_assert(key_eq(k, key_n(i + 100000)), "digest %llu", (unsigned long long)i);
            kept++;
        }
    }
    cr_assert_leq(kept, 256);
    cr_assert_geq(kept, 128, "a full table keeps most of its ways (%zu)", kept);
    pm_api_key k;
    cr_assert(pm_svc_memo_get(m, key_n(n), &k), "the last put is there");
    pm_svc_memo_destroy(m);
}

typedef struct worker_arg { pm_svc_memo *m; uint64_t base; int bad; } worker_arg;

static void *hammer(void *p) {
    worker_arg *a = p;
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t d = a->base + i % 500;
        pm_svc_memo_put(a->m, key_n(d), key_n(d * 3));
        pm_api_key k;
        if (pm_svc_memo_get(a->m, key_n(d), &k) && !key_eq(k, key_n(d * 3))) a->bad++;
    }
    return NULL;
}

Test(memo, concurrent_use_never_tears_an_entry) {
    pm_svc_memo *m = pm_svc_memo_create(512);
    pthread_t t[4];
    worker_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (worker_arg){m, 1 + (uint64_t)i * 250, 0};   /* overlapping ranges */
        cr_assert_eq(pthread_create(&t[i], NULL, hammer, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(a[i].bad, 0);
    }
    pm_svc_memo_destroy(m);
}
