#include "memo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#define PM_SVC_MEMO_WAYS 4
#define PM_SVC_MEMO_LOCKS 64

typedef struct pm_svc_memo_slot { pm_api_key digest, key; } pm_svc_memo_slot;

struct pm_svc_memo {
    pm_svc_memo_slot *slots;          /* nsets * WAYS; digest {0, 0} = empty */
    size_t nsets;
    pthread_mutex_t locks[PM_SVC_MEMO_LOCKS];   /* set s is guarded by s % LOCKS */
    atomic_uint_fast64_t hits, misses;
};

pm_svc_memo *pm_svc_memo_create(size_t entries) {
    if (entries == 0) entries = 65536;
    size_t nsets = 16;
    while (nsets * PM_SVC_MEMO_WAYS < entries) nsets *= 2;
    pm_svc_memo *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->slots = calloc(nsets * PM_SVC_MEMO_WAYS, sizeof *m->slots);
    if (!m->slots) {
        free(m);
        return NULL;
    }
    m->nsets = nsets;
    for (int i = 0; i < PM_SVC_MEMO_LOCKS; i++) pthread_mutex_init(&m->locks[i], NULL);
    return m;
}

void pm_svc_memo_destroy(pm_svc_memo *m) {
    if (!m) return;
    for (int i = 0; i < PM_SVC_MEMO_LOCKS; i++) pthread_mutex_destroy(&m->locks[i]);
    free(m->slots);
    free(m);
}

/* Parts are framed as (length, bytes) so no two different requests give
 * one byte stream. */
static void pm_svc__memo_part(XXH3_state_t *st, const void *p, size_t n) {
    uint64_t len = n;
    XXH3_128bits_update(st, &len, sizeof len);
    XXH3_128bits_update(st, p, n);
}

static void pm_svc__memo_begin(XXH3_state_t *st, char kind, size_t route, int format) {
    XXH3_INITSTATE(st);
    XXH3_128bits_reset(st);
    uint64_t head[3] = {(uint64_t)(unsigned char)kind, route, (uint64_t)(unsigned)format};
    XXH3_128bits_update(st, head, sizeof head);
}

static pm_api_key pm_svc__memo_end(XXH3_state_t *st) {
    XXH128_hash_t h = XXH3_128bits_digest(st);
    pm_api_key k = {h.high64, h.low64};
    if (k.hi == 0 && k.lo == 0) k.lo = 1;   /* {0, 0} marks an empty slot */
    return k;
}

pm_api_key pm_svc_memo_digest_query(size_t route, int format, const pm_api_query_pair *q,
                                    size_t n) {
    XXH3_state_t st;
    pm_svc__memo_begin(&st, 'q', route, format);
    for (size_t i = 0; i < n; i++) {
        pm_svc__memo_part(&st, q[i].key, strlen(q[i].key));
        pm_svc__memo_part(&st, q[i].value, strlen(q[i].value));
    }
    return pm_svc__memo_end(&st);
}

pm_api_key pm_svc_memo_digest_body(size_t route, int format, const char *body, size_t len) {
    XXH3_state_t st;
    pm_svc__memo_begin(&st, 'b', route, format);
    pm_svc__memo_part(&st, body ? body : "", body ? len : 0);
    return pm_svc__memo_end(&st);
}

static int pm_svc__memo_eq(pm_api_key a, pm_api_key b) { return a.hi == b.hi && a.lo == b.lo; }

int pm_svc_memo_get(pm_svc_memo *m, pm_api_key digest, pm_api_key *key) {
    size_t set = (size_t)digest.lo & (m->nsets - 1);
    pm_svc_memo_slot *s = m->slots + set * PM_SVC_MEMO_WAYS;
    pthread_mutex_t *mu = &m->locks[set % PM_SVC_MEMO_LOCKS];
    int found = 0;
    pthread_mutex_lock(mu);
    for (int w = 0; w < PM_SVC_MEMO_WAYS; w++) {
        if (pm_svc__memo_eq(s[w].digest, digest)) {
            *key = s[w].key;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(mu);
    atomic_fetch_add_explicit(found ? &m->hits : &m->misses, 1, memory_order_relaxed);
    return found;
}

void pm_svc_memo_put(pm_svc_memo *m, pm_api_key digest, pm_api_key key) {
    size_t set = (size_t)digest.lo & (m->nsets - 1);
    pm_svc_memo_slot *s = m->slots + set * PM_SVC_MEMO_WAYS;
    pthread_mutex_t *mu = &m->locks[set % PM_SVC_MEMO_LOCKS];
    pm_api_key empty = {0, 0};
    pthread_mutex_lock(mu);
    int w = 0;
    while (w < PM_SVC_MEMO_WAYS && !pm_svc__memo_eq(s[w].digest, digest) &&
           !pm_svc__memo_eq(s[w].digest, empty))
        w++;
    /* A full set loses a way picked by the digest's own bits (the low bits
     * chose the set, the high ones are independent of them). */
    if (w == PM_SVC_MEMO_WAYS) w = (int)(digest.hi >> 62);
    s[w].digest = digest;
    s[w].key = key;
    pthread_mutex_unlock(mu);
}

void pm_svc_memo_render(pm_svc_memo *m, pm_svc_buf *b) {
    pm_svc_buf_printf(b,
                      "# HELP procmesh_request_memo_hits_total Requests whose cache key was "
                      "known from an identical earlier request (no parse).\n"
                      "# TYPE procmesh_request_memo_hits_total counter\n"
                      "procmesh_request_memo_hits_total %llu\n"
                      "# HELP procmesh_request_memo_misses_total Requests parsed to find "
                      "their cache key.\n"
                      "# TYPE procmesh_request_memo_misses_total counter\n"
                      "procmesh_request_memo_misses_total %llu\n"
                      "# HELP procmesh_request_memo_capacity Requests the memo can hold.\n"
                      "# TYPE procmesh_request_memo_capacity gauge\n"
                      "procmesh_request_memo_capacity %zu\n",
                      (unsigned long long)atomic_load(&m->hits),
                      (unsigned long long)atomic_load(&m->misses),
                      m->nsets * PM_SVC_MEMO_WAYS);
}
