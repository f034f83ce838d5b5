#ifndef PM_SVC_MEMO_H
#define PM_SVC_MEMO_H
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "pm_api/key.h"
#include "pm_api/generator.h"

/* The request memo: which cache key a request, exactly as received, has
 * been given. The cache key needs the request parsed, validated and
 * canonicalized (pm_api_cache_key); a repeated request can skip all of it:
 * its digest (route, format, and the query parameters or the body bytes)
 * names the key directly. The map from raw request to key is a pure
 * function of the request (limits are fixed for the life of the process),
 * so an entry never goes stale; only requests that parsed and validated are
 * entered. A fixed-size, 4-way set-associative table, overwritten when a
 * set is full: a forgotten request is parsed again, nothing worse. */
typedef struct pm_svc_memo pm_svc_memo;

/* entries: rounded up to a power of two, at least 64 (0 = 65536). */
pm_svc_memo *pm_svc_memo_create(size_t entries);
void pm_svc_memo_destroy(pm_svc_memo *m);

/* The digest of a GET request: route index, format and the query
 * parameters in the order received. Never {0, 0}. */
pm_api_key pm_svc_memo_digest_query(size_t route, int format, const pm_api_query_pair *q,
                                    size_t n);
/* The digest of a POST request: route index, format and the body bytes. */
pm_api_key pm_svc_memo_digest_body(size_t route, int format, const char *body, size_t len);

/* 1 with *key when digest is known, else 0. Counts a hit or a miss. */
int pm_svc_memo_get(pm_svc_memo *m, pm_api_key digest, pm_api_key *key);
void pm_svc_memo_put(pm_svc_memo *m, pm_api_key digest, pm_api_key key);

/* Appends the memo's Prometheus lines (hits, misses, entries capacity). */
void pm_svc_memo_render(pm_svc_memo *m, pm_svc_buf *b);
#endif
