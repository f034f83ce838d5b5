#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <xxhash.h>

#include "accept.h"
#include "budget.h"
#include "buf.h"
#include "cache.h"
#include "compress.h"
#include "guard.h"
#include "http.h"
#include "log.h"
#include "memo.h"
#include "meshopt.h"
#include "mhd.h"
#include "pm_api/multipart.h"
#include "pm_api/request.h"
#include "metrics.h"
#include "pm_api/encode.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "router.h"
#include "strict.h"
#include "workers.h"

extern const unsigned char pm_api_openapi_yaml[];
extern const size_t pm_api_openapi_yaml_len;

/* Bodies up to this size are parsed on the HTTP thread, so a repeated
 * request is answered from the cache without touching the worker pool;
 * larger ones are parsed by a worker so they cannot stall the listener. */
#define PM_SVC_INLINE_PARSE_MAX (64 * 1024)
/* A body that keeps coming after it was refused is read (and dropped) up
 * to this many times the limit, then the connection is closed. */
#define PM_SVC_DISCARD_FACTOR 4
#define PM_SVC_MAX_QUERY_PAIRS 64
/* A query with more parameters is refused (414) before libmicrohttpd parses
 * it: the library stores every parameter in the connection's 32 KiB memory
 * pool, and when that runs out (some 500 parameters) 0.9.75 queues its 431
 * but never sends it, leaving the client hanging until the idle timeout.
 * Far above what any route accepts (PM_SVC_MAX_QUERY_PAIRS). (strict.c) */
#define PM_SVC_MAX_URI_ARGS 128
#define PM_SVC_RETRY_AFTER "1"
#define PM_SVC_EXPOSE "ETag, X-Cache, X-Request-Id, Server-Timing"
#define PM_SVC_ALLOW_HEADERS "Content-Type, Accept, If-None-Match, X-Request-Id"
#define PM_SVC_PREFLIGHT_MAX_AGE "86400"

struct pm_svc_server {
    pm_svc_config cfg;
    struct MHD_Daemon *daemon;
    pm_svc_acceptor *acceptor;     /* our listener in front of daemon (accept.h) */
    pm_svc_router router;
    pm_svc_metrics *metrics;
    pm_svc_cache *cache;
    pm_svc_budget *budget;         /* bytes in flight (--max-inflight-mb) */
    pm_svc_memo *memo;
    pm_svc_pool *pool;
    pm_svc_blob **constants;       /* per route: a compiled-in file in every coding */
    char (*constant_tags)[33];     /* ... and its strong tag (XXH3-128 of the file) */
    pm_svc_zlevels zlevels;        /* for results (--gzip-level, --br-quality) */
    pm_svc_guard *guard;           /* connection deadlines and room (guard.h) */
    struct MHD_Daemon *admin;      /* --admin-port: health and metrics only */
    pm_svc_acceptor *admin_acceptor;
    pm_svc_guard *admin_guard;
    uint16_t admin_port;
    atomic_int draining, stopping;
    uint16_t port;
    int cors_list;                 /* origins are a list: responses vary by Origin */
    pm_api_problem expired;        /* 503: past the deadline */
    pm_api_problem shutdown;       /* 503: the server is stopping */
};

typedef enum pm_svc_phase {
    PM_SVC_PH_BODY,   /* headers read, body (if any) arriving */
    PM_SVC_PH_WAIT,   /* suspended until a worker or a flight answers */
    PM_SVC_PH_SENT,   /* response queued */
} pm_svc_phase;

enum { PM_SVC_SYNC_NONE = 0, PM_SVC_SYNC_DONE = 1, PM_SVC_SYNC_SUSPENDED = 2 };
enum { PM_SVC_CACHE_NA = 0, PM_SVC_CACHE_HIT, PM_SVC_CACHE_MISS };

/* One request, from its headers to the access line. */
typedef struct pm_svc_req {
    pm_svc_server *srv;
    struct MHD_Connection *conn;
    char method[16];
    char *path;
    unsigned mbit;
    const pm_svc_route *route;
    char id[PM_SVC_REQID_MAX + 1];
    uint64_t t0, deadline;
    pm_svc_phase phase;
    /* body */
    char *body;
    size_t len, cap, discarded;
    size_t limit;         /* the body's cap: --body-limit, or --binary-body-limit */
    size_t declared;      /* Content-Length, when given and within limit */
    pm_svc_meter upload;  /* a binary (multipart) body's buffer, charged as it grows */
    pm_api_ingest ingest; /* ?png_scale=, ?png_offset= */
    int too_large;
    int decided;      /* answered from the headers; the body is only drained */
    int raw_sent;     /* a 413 was written on the socket while the body arrived */
    int uri_refused;  /* pm_svc_uri_verdict of the raw target (strict.h) */
    int admin;        /* arrived on the admin listener */
    /* negotiation and conditions */
    pm_api_format fmt;
    pm_api_output out;   /* fmt and the ?compress=, ?quantize=, ?metadata= options */
    char body_type[256];   /* a multipart/form-data Content-Type (boundary), else "" */
    char *inm;
    pm_svc_accept_enc ae;
    int coding;           /* the content coding sent (compress.h) */
    int vary_ae;          /* the body could have been coded otherwise */
    int versioned;        /* ?v= named the generator's version: immutable */
    char etag[40];        /* key_hex plus the coding's suffix */
    char acao[256];
    /* the answer, written by whichever thread produces it; sync says whether
     * it is there and whether the connection waits suspended */
    atomic_int sync;
    pm_svc_waiter waiter;
    int status, cache;
    pm_svc_blob *blob;
    char *text;
    size_t text_len;
    const char *ctype;
    const char *allow;
    int retry_after;
    int has_key;
    int constant_tag;     /* a compiled-in file: ETag, revalidated (no-cache) */
    char key_hex[33];
    pm_api_key key;       /* when has_key */
    int zcoding;          /* the form being made for r (pm_svc__make_form) */
    pm_svc_meter parse;   /* a big body's parsed document, until the job has it */
    int has_digest;       /* the request's memo digest (small bodies and GET) */
    pm_api_key digest;
    int timing;
    double gen_ms, enc_ms, zip_ms;
    /* the access line */
    int sent_status;
    uint64_t sent_bytes;
} pm_svc_req;

/* A generation job: everything a worker needs, owned by the job. */
typedef struct pm_svc_job {
    pm_svc_server *srv;
    const pm_svc_route *route;
    pm_arena *arena;
    pm_svc_meter meter;   /* every byte the job holds (budget.h) */
    void *params;
    pm_api_output out;
    pm_api_key key;
    char key_hex[33];
    pm_svc_flight *flight;
    unsigned want;        /* the form its requester gets (bit 1 << coding) */
} pm_svc_job;

/* Making one form of a cached result, for the requests that negotiated it. */
typedef struct pm_svc_zjob {
    pm_svc_server *srv;
    pm_api_key key;
    pm_svc_blob *blob;    /* the result as the first requester had it */
    int coding;
    pm_svc_flight *flight;
} pm_svc_zjob;

static double pm_svc__ms(uint64_t a, uint64_t b) { return (double)(b - a) / 1e6; }

/* ---- building answers ---- */

static void pm_svc__set_problem(pm_svc_req *r, const pm_api_problem *p) {
    r->status = p->status ? p->status : 500;
    free(r->text);
    r->text = NULL;
    json_t *j = pm_api_problem_json(p, r->id);
    if (j) {
        r->text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
    }
    r->text_len = r->text ? strlen(r->text) : 0;
    r->ctype = "application/problem+json";
    if (r->status == 503) r->retry_after = 1;
}

static void pm_svc__problem(pm_svc_req *r, int status, const char *type, const char *title,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void pm_svc__problem(pm_svc_req *r, int status, const char *type, const char *title,
                            const char *fmt, ...) {
    char detail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_problem_set(&p, status, type, title, "%s", detail);
    pm_svc__set_problem(r, &p);
    pm_api_problem_free(&p);
}

static void pm_svc__set_text(pm_svc_req *r, int status, const char *ctype, char *text,
                             size_t len) {
    free(r->text);
    r->status = status;
    r->text = text;
    r->text_len = len;
    r->ctype = ctype;
}

static int pm_svc__make_form(pm_svc_req *r, pm_svc_blob *blob, int coding);

/* The form r negotiates that blob has not been tried in yet (0: none):
 * what r would choose were every untried form there, as a hit chooses
 * among the forms the result has. */
/* The forms blob has or could have: those kept, and those not tried yet
 * on a body big enough to compress. */
static unsigned pm_svc__could(const pm_svc_req *r, const pm_svc_blob *blob) {
    unsigned forms = pm_svc_blob_codings(blob);
    if (blob->len < r->srv->zlevels.min_len) return forms;
    return forms | (~blob->tried & PM_SVC_CODINGS_ALL);
}

static int pm_svc__missing_form(const pm_svc_req *r, const pm_svc_blob *blob) {
    int c = pm_svc_accept_enc_choose(&r->ae, pm_svc__could(r, blob));
    return c > 0 && !(blob->tried & (1u << c)) ? c : 0;
}

/* A generated body for r: 304 when the client holds it already. Takes the
 * caller's reference on blob. With make set, a form r negotiates that blob
 * lacks is made first: returns 1, and r is answered through its waiter;
 * else 0, r has its answer. */
static int pm_svc__set_body(pm_svc_req *r, pm_svc_blob *blob, int make) {
    int missing = make ? pm_svc__missing_form(r, blob) : 0;
    if (missing) return pm_svc__make_form(r, blob, missing);
    unsigned forms = pm_svc_blob_codings(blob);
    int coding = pm_svc_accept_enc_choose(&r->ae, forms);
    r->vary_ae = 1;
    if (coding < 0) {
        forms = pm_svc__could(r, blob);   /* what a request could have: no form made for this */
        pm_svc_blob_unref(blob);
        pm_svc__problem(r, 406, "not-acceptable", "Not Acceptable",
                        "Accept-Encoding allows none of the forms of this result: identity%s%s",
                        forms & (1u << PM_SVC_CODING_GZIP) ? ", gzip" : "",
                        forms & (1u << PM_SVC_CODING_BR) ? ", br" : "");
        return 0;
    }
    r->coding = coding;
    snprintf(r->etag, sizeof r->etag, "%s%s", r->key_hex, pm_svc_coding_tag_suffix(coding));
    /* A 304 keeps the blob: libmicrohttpd (0.9.75) writes a Content-Length
     * on every 304 from the response's size, which RFC 9110 8.6 allows
     * only as the 200's length, and the guard (guard.c, send) leaves that
     * line out on the wire. No body is sent. */
    r->status = r->inm && pm_svc_etag_match(r->inm, r->etag) ? 304 : 200;
    r->blob = blob;
    r->ctype = pm_api_format_mime(r->fmt);
    return 0;
}

/* ---- sending ---- */

static void pm_svc__blob_release(void *cls) { pm_svc_blob_unref(cls); }

/* A text body made for this response (metrics, problems) in the coding the
 * request prefers, compressed now at cheap levels: it is not kept. */
static void pm_svc__code_text(pm_svc_req *r) {
    const pm_svc_zlevels *lv = &pm_svc_zlevels_dynamic;
    if (!r->text || r->text_len < lv->min_len) return;
    r->vary_ae = 1;
    int want = pm_svc_accept_enc_choose(&r->ae, ~0u);
    if (want <= PM_SVC_CODING_IDENTITY) return;
    pm_svc_blob *b = pm_svc_blob_wrap(r->text, (unsigned char *)r->text, r->text_len);
    r->text = NULL;   /* the blob owns it (or freed it) */
    if (!b) return;
    pm_svc_blob_compress(b, lv, 1, 1u << want);
    r->coding = pm_svc_accept_enc_choose(&r->ae, pm_svc_blob_codings(b));
    if (r->coding < 0) r->coding = PM_SVC_CODING_IDENTITY;   /* an error goes out anyway */
    r->blob = b;
}

static struct MHD_Response *pm_svc__response(pm_svc_req *r, size_t *len) {
    struct MHD_Response *resp = NULL;
    *len = 0;
    pm_svc__code_text(r);
    if (r->blob) {
        const unsigned char *data = pm_svc_blob_form(r->blob, r->coding, len);
        resp = MHD_create_response_from_buffer_with_free_callback_cls(
            *len, (void *)data, pm_svc__blob_release, r->blob);
        if (resp) r->blob = NULL;   /* the response owns the reference now */
    } else if (r->text) {
        *len = r->text_len;
        resp = MHD_create_response_from_buffer(r->text_len, r->text, MHD_RESPMEM_MUST_FREE);
        if (resp) r->text = NULL;
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    return resp;
}

static void pm_svc__headers(pm_svc_req *r, struct MHD_Response *resp) {
    pm_svc_server *srv = r->srv;
    MHD_add_response_header(resp, "X-Request-Id", r->id);
    if (r->ctype && r->status != 304 && r->status != 204)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
    if (r->acao[0]) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->acao);
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", PM_SVC_EXPOSE);
        if (r->mbit == PM_SVC_M_OPTIONS && r->status == 204) {
            MHD_add_response_header(resp, "Access-Control-Allow-Methods", r->route->allow);
            MHD_add_response_header(resp, "Access-Control-Allow-Headers", PM_SVC_ALLOW_HEADERS);
            MHD_add_response_header(resp, "Access-Control-Max-Age", PM_SVC_PREFLIGHT_MAX_AGE);
        }
    }
    int generated = r->has_key && (r->status == 200 || r->status == 304);
    const char *coding = pm_svc_coding_name(r->coding);
    if (coding && r->status != 304)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, coding);
    char vary[48] = "";
    if (generated) strcat(vary, "Accept, ");
    if (generated || r->vary_ae) strcat(vary, "Accept-Encoding, ");
    if (srv->cors_list) strcat(vary, "Origin, ");
    if (vary[0]) vary[strlen(vary) - 2] = '\0';
    if (vary[0]) MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, vary);
    if (generated) {
        char etag[48];
        snprintf(etag, sizeof etag, "\"%s\"", r->etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
        const char *cc = r->versioned ? srv->cfg.cache_control_versioned : srv->cfg.cache_control;
        if (cc[0]) MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, cc);
        MHD_add_response_header(resp, "X-Cache", r->cache == PM_SVC_CACHE_HIT ? "HIT" : "MISS");
        if (r->timing) {
            char st[128];
            snprintf(st, sizeof st, "gen;dur=%.3f, enc;dur=%.3f, zip;dur=%.3f", r->gen_ms,
                     r->enc_ms, r->zip_ms);
            MHD_add_response_header(resp, "Server-Timing", st);
        }
    }
    if (r->status >= 400) MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    /* The compiled-in files change with the binary: caches keep them but
     * revalidate every use (a 304 while the binary stands). */
    if (r->constant_tag && (r->status == 200 || r->status == 304)) {
        char etag[48];
        snprintf(etag, sizeof etag, "\"%s\"", r->etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "public, no-cache");
    }
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->retry_after) MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, PM_SVC_RETRY_AFTER);
    if (atomic_load(&srv->draining))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
}

/* Queues r's answer. Called on r's HTTP thread only. */
static enum MHD_Result pm_svc__send(pm_svc_req *r) {
    size_t len;
    struct MHD_Response *resp = pm_svc__response(r, &len);
    if (!resp) return MHD_NO;
    pm_svc__headers(r, resp);
    r->phase = PM_SVC_PH_SENT;
    r->sent_status = r->status;
    int bodyless = r->mbit == PM_SVC_M_HEAD || r->status == 304 || r->status == 204;
    r->sent_bytes = bodyless ? 0 : len;
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* ---- suspension: exactly one resume per suspend ---- */

/* Marks r's answer as ready (from any thread). Resumes the connection when
 * its HTTP thread already suspended it; otherwise that thread sees the
 * answer when it tries to suspend. */
static void pm_svc__complete(pm_svc_req *r) {
    struct MHD_Connection *conn = r->conn;
    if (atomic_exchange(&r->sync, PM_SVC_SYNC_DONE) == PM_SVC_SYNC_SUSPENDED)
        MHD_resume_connection(conn);
}

/* Parks r until pm_svc__complete (HTTP thread, inside the handler). */
static enum MHD_Result pm_svc__park(pm_svc_req *r) {
    r->phase = PM_SVC_PH_WAIT;
    MHD_suspend_connection(r->conn);
    if (atomic_exchange(&r->sync, PM_SVC_SYNC_SUSPENDED) == PM_SVC_SYNC_DONE)
        MHD_resume_connection(r->conn);
    return MHD_YES;
}

/* The waiter callback: a computation r waited on has ended. */
static void pm_svc__on_outcome(void *arg, const pm_svc_outcome *o) {
    pm_svc_req *r = arg;
    pm_svc_server *srv = r->srv;
    if (o->status == 200 && o->blob) {
        r->cache = o->tier_hit ? PM_SVC_CACHE_HIT : PM_SVC_CACHE_MISS;
        r->timing = !o->tier_hit;
        r->gen_ms = o->gen_ms;
        r->enc_ms = o->enc_ms;
        r->zip_ms = o->zip_ms;
        pm_svc_blob_ref(o->blob);
        if (pm_svc__set_body(r, o->blob, 1)) return;   /* a joiner wanting another form */
    } else if (o->prob) {
        pm_svc__set_problem(r, o->prob);
        if (o->prob == &srv->expired) pm_svc_metrics_deadline_exceeded(srv->metrics);
    } else {
        pm_svc__problem(r, 500, "internal", "Internal Server Error", "the computation failed");
    }
    pm_svc__complete(r);
}

/* The waiter callback of a form being made (pm_svc__make_form). */
static void pm_svc__on_form(void *arg, const pm_svc_outcome *o) {
    pm_svc_req *r = arg;
    if (o->status == 200 && o->blob) {
        pm_svc_blob_ref(o->blob);
        /* Made (kept or not worth it): the next form r would take may be
         * untried too. Not made (out of memory, no worker): what there is. */
        int made = (o->blob->tried & (1u << r->zcoding)) != 0;
        if (pm_svc__set_body(r, o->blob, made)) return;
    } else if (o->prob) {
        pm_svc__set_problem(r, o->prob);
        if (o->prob == &r->srv->expired) pm_svc_metrics_deadline_exceeded(r->srv->metrics);
    } else {
        pm_svc__problem(r, 500, "internal", "Internal Server Error", "the computation failed");
    }
    pm_svc__complete(r);
}

/* A worker's job: one form of a result, made once, swapped into the cache
 * (and the tier) with every form the entry has, then handed to the
 * requests that wait for it. */
static void pm_svc__zjob_run(void *arg, int aborted) {
    pm_svc_zjob *j = arg;
    pm_svc_server *srv = j->srv;
    pm_svc_outcome o = {.status = 200, .tier_hit = 1};
    pm_svc_blob *cur = pm_svc_cache_peek(srv->cache, j->key), *made = NULL;
    if (!cur) {   /* not kept (--cache-mb 0, evicted): the requester's copy */
        cur = j->blob;
        pm_svc_blob_ref(cur);
    }
    if (aborted || atomic_load(&srv->stopping)) {
        o.status = 503;
        o.prob = &srv->shutdown;
    } else if (!(cur->tried & (1u << j->coding))) {
        uint64_t t0 = pm_svc_now_ns();
        made = pm_svc_blob_with_form(cur, &srv->zlevels, j->coding);
        o.zip_ms = pm_svc__ms(t0, pm_svc_now_ns());
    }
    if (made) {
        pm_svc_blob_charge(made, srv->budget);   /* in flight until the cache takes it */
        /* Another form may have been swapped in meanwhile: keep it too. */
        while (pm_svc_cache_replace(srv->cache, j->key, cur, made) == 0) {
            pm_svc_blob *now = pm_svc_cache_peek(srv->cache, j->key);
            pm_svc_blob *both = now ? pm_svc_blob_merge(now, made) : NULL;
            if (!both) {
                pm_svc_blob_unref(now);
                break;
            }
            pm_svc_blob_charge(both, srv->budget);
            pm_svc_blob_unref(made);
            pm_svc_blob_unref(cur);
            made = both;
            cur = now;
        }
        pm_svc_cache_tier_put(srv->cache, j->key, made);
    }
    o.blob = made ? made : cur;
    pm_svc_flight_settle(srv->cache, j->flight, &o);
    pm_svc_blob_unref(made);
    pm_svc_blob_unref(cur);
    pm_svc_blob_unref(j->blob);
    free(j);
}

/* Makes form coding of blob for r on a worker, single-flight per key and
 * form: r waits (its waiter) with every request wanting the same. Takes
 * the reference on blob. Returns 1 (r is answered later) or, when no
 * flight can be had, 0 with r's answer from blob as it is. */
static int pm_svc__make_form(pm_svc_req *r, pm_svc_blob *blob, int coding) {
    pm_svc_server *srv = r->srv;
    pm_api_key zkey = r->key;
    zkey.lo ^= 0x9e3779b97f4a7c15ull * (uint64_t)coding;   /* this form's flights */
    r->zcoding = coding;
    r->waiter.fn = pm_svc__on_form;
    pm_svc_flight *flight = NULL;
    pm_svc_lookup l = pm_svc_cache_join(srv->cache, zkey, r->deadline, &r->waiter, &flight);
    if (l == PM_SVC_LOOKUP_NOMEM) return pm_svc__set_body(r, blob, 0);
    if (l == PM_SVC_LOOKUP_JOINED) {
        pm_svc_blob_unref(blob);
        return 1;
    }
    pm_svc_zjob *j = calloc(1, sizeof *j);
    if (j) *j = (pm_svc_zjob){srv, r->key, blob, coding, flight};
    if (!j || pm_svc_pool_submit(srv->pool, pm_svc__zjob_run, j) < 0) {
        free(j);
        pm_svc_outcome o = {.status = 200, .blob = blob, .tier_hit = 1};
        pm_svc_flight_settle(srv->cache, flight, &o);   /* r and joiners: as it is */
        pm_svc_blob_unref(blob);
    }
    return 1;
}

/* ---- generation ---- */

static void pm_svc__job_free(pm_svc_job *job) {
    if (!job) return;
    pm_arena_destroy(job->arena);
    pm_svc_meter_end(&job->meter);
    free(job);
}

/* Runs the generator and the encoder for a flight's owner; o gets the
 * result (blob holds the body's reference, prob the error). */
static void pm_svc__generate(pm_svc_job *job, pm_svc_outcome *o, pm_api_problem *prob,
                             pm_svc_blob **blob) {
    pm_svc_server *srv = job->srv;
    const pm_api_generator *gen = job->route->gen;
    pm_scene *scene = NULL;
    uint64_t t0 = pm_svc_now_ns();
    pm_api_job aj = {gen, &srv->cfg.limits, job->arena, job->params, NULL};
    int rc = pm_api_job_generate(&aj, pm_svc_flight_cancel(job->flight), &scene, prob);
    uint64_t t1 = pm_svc_now_ns();
    pm_api_buf out = {0};
    /* The output is charged as it grows (and trimmed to its length), so an
     * answer past the job's limit stops being written there. */
    if (rc == 0 && scene &&
        pm_api_encode_with(scene, gen, job->key_hex, &job->out, &job->meter.enc, &out) == 0) {
        *blob = pm_svc_meter_blob(&job->meter, out.data, out.len);
        if (*blob) pm_svc_meter_give(&job->meter, *blob, out.len);
        else pm_svc_budget_release(&job->meter, out.len);
    }
    uint64_t t2 = pm_svc_now_ns();
    /* Only the form the requester gets, before anyone sees the blob; the
     * others when a request first wants them (pm_svc__make_form). The
     * compressed forms are in flight too: charged like the output, and
     * dropped (identity only) when the budget has no room for them. */
    if (*blob && pm_svc_blob_compress(*blob, &srv->zlevels, 0, job->want) == 0) {
        size_t z = (*blob)->coded_len[0] + (*blob)->coded_len[1];
        if (z && pm_svc_budget_charge(&job->meter, z) == PM_SVC_REFUSED_NONE)
            pm_svc_meter_give(&job->meter, *blob, z);
        else if (z)
            pm_svc_blob_drop_coded(*blob);
    }
    uint64_t t3 = pm_svc_now_ns();
    pm_svc_gen_result res = PM_SVC_GEN_OK;
    if (!*blob && pm_svc_meter_problem(&job->meter, prob)) {   /* a memory limit */
        res = PM_SVC_GEN_ERROR;
        o->status = prob->status;
        o->prob = prob;
    } else if (rc != 0 || !scene) {
        if (!pm_api_problem_failed(prob))
            pm_api_problem_set(prob, 500, "internal", "Internal Server Error",
                               "the %s generator failed without saying why", gen->name);
        res = prob->status == 503 ? PM_SVC_GEN_CANCELLED : PM_SVC_GEN_ERROR;
        o->status = prob->status;
        o->prob = prob;
    } else if (!*blob) {
        pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable",
                           "out of memory while encoding the result");
        res = PM_SVC_GEN_ERROR;
        o->status = 503;
        o->prob = prob;
    } else {
        o->status = 200;
        o->blob = *blob;
        o->gen_ms = pm_svc__ms(t0, t1);
        o->enc_ms = pm_svc__ms(t1, t2);
        o->zip_ms = pm_svc__ms(t2, t3);
    }
    pm_svc_metrics_generation(srv->metrics, job->route->gen_index, res, (double)(t2 - t0) / 1e9);
}

/* A worker's job: answer a flight. Every path ends it (finish). */
static void pm_svc__job_run(void *arg, int aborted) {
    pm_svc_job *job = arg;
    pm_svc_server *srv = job->srv;
    pm_svc_outcome o = {0};
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    pm_svc_blob *blob = NULL;
    if (aborted || atomic_load(&srv->stopping)) {
        o.status = 503;
        o.prob = &srv->shutdown;
    } else if (__atomic_load_n(pm_svc_flight_cancel(job->flight), __ATOMIC_ACQUIRE) ||
               pm_svc_now_ns() >= pm_svc_flight_deadline(job->flight)) {
        o.status = 503;   /* the watchdog has answered (or is about to) */
        o.prob = &srv->expired;
    } else if (pm_svc_cache_tier_get(srv->cache, job->key, &blob)) {
        pm_svc_blob_charge(blob, srv->budget);   /* in flight until the cache takes it */
        o.status = 200;
        o.blob = blob;
        o.tier_hit = 1;
    } else {
        pm_svc__generate(job, &o, &prob, &blob);
    }
    pm_svc_flight_finish(srv->cache, job->flight, &o);
    pm_svc_blob_unref(blob);
    pm_api_problem_free(&prob);
    pm_svc__job_free(job);
}

/* A plain JSON body for a route with a fast path (pm_api_generator.
 * parse_text): pm_svc__prepare reads it from its bytes, no document first. */
static int pm_svc__fast_body(const pm_svc_req *r) {
    return r->route->gen->parse_text && !r->body_type[0] && !r->ingest.given;
}

/* Validates doc with r's generator and computes the cache key. Returns the
 * job (arena, params), or NULL with prob set. Consumes doc. doc NULL: r's
 * body (pm_svc__fast_body) through the fast path, or its document when
 * the fast path does not take it; the body is then freed. */
static pm_svc_job *pm_svc__prepare(pm_svc_req *r, json_t *doc, pm_api_problem *prob) {
    pm_svc_server *srv = r->srv;
    const pm_api_generator *gen = r->route->gen;
    pm_svc_job *job = calloc(1, sizeof *job);
    pm_arena *arena = NULL;
    if (job) {
        /* The arena's blocks are charged to the job's limit and the
         * budget (that is the job's limit: no arena limit of its own). */
        pm_svc_meter_init(&job->meter, srv->budget, srv->cfg.limits.max_arena_bytes);
        arena = pm_arena_create_with(0, &job->meter.arena);
    }
    if (!job || !arena) {
        pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable", "out of memory");
        goto fail;
    }
    job->srv = srv;
    job->route = r->route;
    job->arena = arena;
    job->out = r->out;
    pm_api_job aj;
    int rc = 1;
    if (!doc) {
        pm_api_request rq = {.gen = gen, .body = r->body, .body_len = r->len,
                             .content_type = r->body_type, .ingest = &r->ingest};
        rc = pm_api_job_parse_text(&aj, gen, &srv->cfg.limits, arena, r->body, r->len, prob);
        if (rc == 1 && pm_api_request_document(&rq, &doc, prob) != 0) goto fail;
        free(r->body);   /* read: the job or the document holds it all now */
        r->body = NULL;
        r->len = r->cap = 0;
        pm_svc_meter_end(&r->upload);
    }
    if (rc == 1) rc = pm_api_job_parse(&aj, gen, &srv->cfg.limits, arena, doc, prob);
    if (rc != 0) {
        pm_svc_meter_problem(&job->meter, prob);   /* past the job's memory: say so */
        goto fail;
    }
    job->params = aj.params;
    job->key = pm_api_job_key(&aj, &r->out, job->key_hex);
    int coding = pm_svc_accept_enc_choose(&r->ae, PM_SVC_CODINGS_ALL);
    job->want = coding > 0 ? 1u << coding : 0;
    pm_api_job_end(&aj);
    if (job->key.hi == 0 && job->key.lo == 0) {   /* no key: out of memory */
        pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable", "out of memory");
        goto fail;
    }
    json_decref(doc);
    memcpy(r->key_hex, job->key_hex, sizeof r->key_hex);
    r->key = job->key;
    r->has_key = 1;
    return job;
fail:
    json_decref(doc);
    pm_arena_destroy(arena);
    if (job) pm_svc_meter_end(&job->meter);
    free(job);
    return NULL;
}

/* Frees r's body and its charge, once nothing refers to it. */
static void pm_svc__drop_body(pm_svc_req *r) {
    free(r->body);
    r->body = NULL;
    r->len = r->cap = 0;
    pm_svc_meter_end(&r->upload);
}

/* From a request document to an answer: cache hit, join, or a new job.
 * On the HTTP thread (on_worker 0) it queues or parks; on a worker (the
 * connection is parked already) it completes r or runs the job itself. */
static enum MHD_Result pm_svc__resolve(pm_svc_req *r, json_t *doc, int on_worker) {
    pm_svc_server *srv = r->srv;
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    pm_svc_job *job = pm_svc__prepare(r, doc, &prob);
    pm_svc_meter_end(&r->parse);   /* the document is gone */
    if (on_worker) pm_svc__drop_body(r);   /* pm_svc__parse_run kept it for the document */
    if (job && r->has_digest) pm_svc_memo_put(srv->memo, r->digest, job->key);
    if (!job) {
        pm_svc__set_problem(r, &prob);
        pm_api_problem_free(&prob);
        if (on_worker) {
            pm_svc__complete(r);
            return MHD_YES;
        }
        return pm_svc__send(r);
    }
    pm_svc_blob *blob = NULL;
    pm_svc_flight *flight = NULL;
    pm_svc_lookup l = pm_svc_cache_lookup(srv->cache, job->key, r->deadline, &r->waiter, &blob,
                                          &flight);
    if (l != PM_SVC_LOOKUP_OWNER) {
        pm_svc__job_free(job);
        if (l == PM_SVC_LOOKUP_HIT) {
            r->cache = PM_SVC_CACHE_HIT;
            if (pm_svc__set_body(r, blob, 1)) l = PM_SVC_LOOKUP_JOINED;   /* a form to make */
        } else if (l == PM_SVC_LOOKUP_NOMEM) {
            pm_svc__problem(r, 503, "overloaded", "Service Unavailable", "out of memory");
        }
        if (l == PM_SVC_LOOKUP_JOINED) return on_worker ? MHD_YES : pm_svc__park(r);
        if (on_worker) {
            pm_svc__complete(r);
            return MHD_YES;
        }
        return pm_svc__send(r);
    }
    job->flight = flight;
    if (on_worker) {
        pm_svc__job_run(job, 0);
        return MHD_YES;
    }
    enum MHD_Result ret = pm_svc__park(r);
    if (pm_svc_pool_submit(srv->pool, pm_svc__job_run, job) < 0) {
        pm_svc_metrics_queue_rejected(srv->metrics);
        pm_api_problem_set(&prob, 503, "overloaded", "Service Unavailable",
                           atomic_load(&srv->stopping) ? "the server is shutting down"
                                                       : "every worker is busy and the queue "
                                                         "is full; retry later");
        pm_svc_outcome o = {.status = 503, .prob = &prob};
        pm_svc_flight_finish(srv->cache, flight, &o);   /* answers r and any joiner */
        job->flight = NULL;
        pm_svc__job_free(job);
        pm_api_problem_free(&prob);
    }
    return ret;
}

/* Answers r from the memo and the cache when both know it: no parse, no
 * canonical form. Returns 1 when r has its answer, 2 when r waits for a
 * form of it to be made (answered through its waiter). */
static int pm_svc__memo_hit(pm_svc_req *r) {
    pm_svc_server *srv = r->srv;
    pm_api_key key;
    if (!r->has_digest || !pm_svc_memo_get(srv->memo, r->digest, &key)) return 0;
    pm_svc_blob *blob = pm_svc_cache_get(srv->cache, key);
    if (!blob) return 0;   /* evicted: the full path counts the miss */
    pm_api_key_hex(key, r->key_hex);
    r->key = key;
    r->has_key = 1;
    r->cache = PM_SVC_CACHE_HIT;
    return pm_svc__set_body(r, blob, 1) ? 2 : 1;
}

/* The memo digest of r's body (the route and format included). */
static void pm_svc__digest_body(pm_svc_req *r) {
    if (r->ingest.given) return;   /* the query changes what the body means: no memo */
    size_t route = pm_svc_router_index(&r->srv->router, r->route);
    r->digest = pm_svc_memo_digest_body(route, (int)pm_api_output_code(&r->out), r->body,
                                        r->len);
    r->has_digest = 1;
}

/* The memory the document of r's multipart body takes, into *cost: its
 * JSON part as any JSON text, its binary parts as doubles (float32 parts:
 * 4 times their bytes; PNG images: by their pixel count). Returns 1 when r has its answer: a JSON part
 * over --body-limit is a 413 as a JSON body would be. */
static int pm_svc__binary_cost(pm_svc_req *r, size_t *cost) {
    size_t decoded = 0;
    long long json = pm_api_multipart_request_len(r->body, r->len, r->body_type, &decoded);
    if (json < 0) return 0;   /* malformed: the parse says how, at once */
    if ((size_t)json > r->srv->cfg.body_limit) {
        pm_svc__problem(r, 413, "payload-too-large", "Content Too Large",
                        "the request part of the multipart body (%lld bytes) is over the limit "
                        "of %zu bytes (--body-limit); only the binary parts may go up to "
                        "--binary-body-limit", json, r->srv->cfg.body_limit);
        return 1;
    }
    *cost = (size_t)json * PM_SVC_JSON_FACTOR + decoded;
    return 0;
}

/* A worker's job for a body too big to parse on the HTTP thread. */
static void pm_svc__parse_run(void *arg, int aborted) {
    pm_svc_req *r = arg;
    pm_svc_server *srv = r->srv;
    if (aborted || atomic_load(&srv->stopping)) {
        pm_svc__set_problem(r, &srv->shutdown);
        pm_svc__complete(r);
        return;
    }
    if (pm_svc_now_ns() >= r->deadline) {
        pm_svc__set_problem(r, &srv->expired);
        pm_svc_metrics_deadline_exceeded(srv->metrics);
        pm_svc__complete(r);
        return;
    }
    pm_svc__digest_body(r);
    int memo = pm_svc__memo_hit(r);
    if (memo) {   /* a big body seen before: no parse at all */
        if (memo == 1) pm_svc__complete(r);
        return;
    }
    json_t *doc = NULL;
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    /* A parsed document is many times its text (PM_SVC_JSON_FACTOR): in
     * flight too, and refused like a job when the budget is spent. */
    pm_svc_meter_init(&r->parse, srv->budget, 0);
    size_t cost = r->len * PM_SVC_JSON_FACTOR;
    if (r->body_type[0] && pm_svc__binary_cost(r, &cost)) {
        pm_svc__complete(r);
        return;
    }
    if (pm_svc_budget_charge(&r->parse, cost) != PM_SVC_REFUSED_NONE) {
        pm_svc_meter_problem(&r->parse, &prob);
        pm_svc_meter_end(&r->parse);
        pm_svc__set_problem(r, &prob);
        pm_api_problem_free(&prob);
        pm_svc__complete(r);
        return;
    }
    if (pm_svc__fast_body(r)) {
        pm_api_problem_free(&prob);
        pm_svc__resolve(r, NULL, 1);
        return;
    }
    pm_api_request rq = {.gen = r->route->gen, .body = r->body, .body_len = r->len,
                         .content_type = r->body_type, .ingest = &r->ingest};
    int rc = pm_api_request_document(&rq, &doc, &prob);
    /* The document holds it all now, but for a multipart body's float32
     * parts, which it refers to: that body goes once the job is read
     * (pm_svc__resolve). */
    if (rc != 0 || !doc || !pm_api_is_multipart(r->body_type)) pm_svc__drop_body(r);
    if (rc != 0 || !doc) {
        pm_svc_meter_end(&r->parse);
        pm_svc__set_problem(r, &prob);
        pm_api_problem_free(&prob);
        pm_svc__complete(r);
        return;
    }
    pm_api_problem_free(&prob);
    pm_svc__resolve(r, doc, 1);
}

/* ---- routes ---- */

typedef struct pm_svc_pairs {
    pm_api_query_pair q[PM_SVC_MAX_QUERY_PAIRS];
    size_t n;
    int overflow;
} pm_svc_pairs;

static enum MHD_Result pm_svc__collect(void *cls, enum MHD_ValueKind kind, const char *key,
                                       const char *value) {
    (void)kind;
    pm_svc_pairs *p = cls;
    if (p->n == PM_SVC_MAX_QUERY_PAIRS) {
        p->overflow = 1;
        return MHD_NO;
    }
    if (strcmp(key, "v") == 0) return MHD_YES;   /* the service's own (pm_svc__version) */
    p->q[p->n++] = (pm_api_query_pair){key, value ? value : ""};
    return MHD_YES;
}

static enum MHD_Result pm_svc__generator_route(pm_svc_req *r) {
    pm_svc_server *srv = r->srv;
    const pm_api_generator *gen = r->route->gen;
    size_t route = pm_svc_router_index(&srv->router, r->route);
    if (atomic_load(&srv->stopping)) {
        pm_svc__set_problem(r, &srv->shutdown);
        return pm_svc__send(r);
    }
    json_t *doc = NULL;
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    if (r->mbit != PM_SVC_M_POST) {
        pm_svc_pairs pairs = {.n = 0};
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, pm_svc__collect, &pairs);
        if (pairs.overflow) {
            pm_api_problem_field(&prob, "", "has more than %d query parameters",
                                 PM_SVC_MAX_QUERY_PAIRS);
        } else {
            r->digest = pm_svc_memo_digest_query(route, (int)pm_api_output_code(&r->out),
                                                 pairs.q, pairs.n);
            r->has_digest = 1;
            int memo = pm_svc__memo_hit(r);
            if (memo) return memo == 1 ? pm_svc__send(r) : pm_svc__park(r);
            pm_api_request rq = {.gen = gen, .get = true, .query = pairs.q, .nquery = pairs.n};
            pm_api_request_document(&rq, &doc, &prob);
        }
    } else if (r->len > PM_SVC_INLINE_PARSE_MAX) {
        enum MHD_Result ret = pm_svc__park(r);
        if (pm_svc_pool_submit(srv->pool, pm_svc__parse_run, r) < 0) {
            pm_svc_metrics_queue_rejected(srv->metrics);
            pm_svc__problem(r, 503, "overloaded", "Service Unavailable",
                            "every worker is busy and the queue is full; retry later");
            pm_svc__complete(r);
        }
        return ret;
    } else {
        pm_svc__digest_body(r);
        int memo = pm_svc__memo_hit(r);
        if (memo) return memo == 1 ? pm_svc__send(r) : pm_svc__park(r);
        size_t cost;
        if (r->body_type[0] && pm_svc__binary_cost(r, &cost)) {
            pm_api_problem_free(&prob);
            return pm_svc__send(r);
        }
        if (pm_svc__fast_body(r)) {
            pm_api_problem_free(&prob);
            return pm_svc__resolve(r, NULL, 0);
        }
        pm_api_request rq = {.gen = gen, .body = r->body, .body_len = r->len,
                             .content_type = r->body_type, .ingest = &r->ingest};
        pm_api_request_document(&rq, &doc, &prob);
    }
    if (!doc) {   /* the problem says why (pm_api_request_document) */
        pm_svc__set_problem(r, &prob);
        pm_api_problem_free(&prob);
        return pm_svc__send(r);
    }
    pm_api_problem_free(&prob);
    return pm_svc__resolve(r, doc, 0);
}

static enum MHD_Result pm_svc__metrics_route(pm_svc_req *r) {
    pm_svc_server *srv = r->srv;
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_metrics_render(srv->metrics, &b);
    pm_svc_cache_render(srv->cache, &b);
    pm_svc_memo_render(srv->memo, &b);
    pm_svc_budget_render(srv->budget, &b);
    pm_svc_compress_render(&b);
    pm_svc_guard_render(srv->guard, &b);
    pm_svc_buf_printf(&b,
                      "# HELP procmesh_queue_depth Jobs waiting for a worker.\n"
                      "# TYPE procmesh_queue_depth gauge\nprocmesh_queue_depth %zu\n"
                      "# HELP procmesh_queue_capacity Jobs that may wait.\n"
                      "# TYPE procmesh_queue_capacity gauge\nprocmesh_queue_capacity %u\n"
                      "# HELP procmesh_workers Generation workers.\n"
                      "# TYPE procmesh_workers gauge\nprocmesh_workers %u\n"
                      "# HELP procmesh_workers_busy Workers running a job.\n"
                      "# TYPE procmesh_workers_busy gauge\nprocmesh_workers_busy %zu\n",
                      pm_svc_pool_depth(srv->pool), pm_svc_pool_queue_len(srv->pool),
                      pm_svc_pool_workers(srv->pool), pm_svc_pool_busy(srv->pool));
    if (b.failed) {
        pm_svc_buf_free(&b);
        pm_svc__problem(r, 503, "overloaded", "Service Unavailable", "out of memory");
    } else {
        pm_svc__set_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len);
    }
    return pm_svc__send(r);
}

static enum MHD_Result pm_svc__static(pm_svc_req *r, int status, const char *ctype,
                                      const char *text) {
    char *copy = strdup(text);
    if (!copy) return MHD_NO;
    pm_svc__set_text(r, status, ctype, copy, strlen(copy));
    return pm_svc__send(r);
}

static enum MHD_Result pm_svc__readyz_route(pm_svc_req *r) {
    pm_svc_server *srv = r->srv;
    if (atomic_load(&srv->draining))
        return pm_svc__static(r, 503, "application/json", "{\"status\":\"draining\"}");
    int t = pm_svc_cache_tier_state(srv->cache);
    /* A degraded tier costs hit rate, not correctness: still ready. */
    const char *body = t < 0    ? "{\"status\":\"ready\",\"tier\":\"none\"}"
                       : t == 0 ? "{\"status\":\"ready\",\"tier\":\"degraded\"}"
                       : t == 2 ? "{\"status\":\"ready\",\"tier\":\"read-only\"}"
                                : "{\"status\":\"ready\",\"tier\":\"ok\"}";
    return pm_svc__static(r, 200, "application/json", body);
}

/* A file compiled into the binary (the contract, the playground), in the
 * coding the request prefers: its forms were made once at start. Each form
 * has its strong tag (the file's hash, the coding's suffix), so a browser
 * revalidates with If-None-Match and gets a 304 until the binary changes. */
static enum MHD_Result pm_svc__constant_route(pm_svc_req *r, const char *ctype) {
    size_t i = pm_svc_router_index(&r->srv->router, r->route);
    pm_svc_blob *b = r->srv->constants[i];
    r->coding = pm_svc_accept_enc_choose(&r->ae, pm_svc_blob_codings(b));
    if (r->coding < 0) r->coding = PM_SVC_CODING_IDENTITY;   /* it goes out anyway */
    r->vary_ae = 1;
    snprintf(r->etag, sizeof r->etag, "%s%s", r->srv->constant_tags[i],
             pm_svc_coding_tag_suffix(r->coding));
    r->constant_tag = 1;
    pm_svc_blob_ref(b);
    r->blob = b;
    r->status = r->inm && pm_svc_etag_match(r->inm, r->etag) ? 304 : 200;
    r->ctype = ctype;
    return pm_svc__send(r);
}

/* The whole request is in: answer or start the work. */
static enum MHD_Result pm_svc__dispatch(pm_svc_req *r) {
    if (r->too_large) return pm_svc__send(r);   /* the 413 prepared while reading */
    switch (r->route->kind) {
    case PM_SVC_ROUTE_HEALTHZ:
        return pm_svc__static(r, 200, "application/json", "{\"status\":\"ok\"}");
    case PM_SVC_ROUTE_READYZ: return pm_svc__readyz_route(r);
    case PM_SVC_ROUTE_METRICS: return pm_svc__metrics_route(r);
    case PM_SVC_ROUTE_OPENAPI:
        return pm_svc__constant_route(r, "application/yaml");
    case PM_SVC_ROUTE_ASSET:
        return pm_svc__constant_route(r, r->route->asset->ctype);
    case PM_SVC_ROUTE_GENERATOR: break;
    }
    return pm_svc__generator_route(r);
}

/* ---- reading the request ---- */

static const char *pm_svc__header(pm_svc_req *r, const char *name) {
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* The cap on r's body: a multipart body (binary heights) has its own. */
static size_t pm_svc__limit(const pm_svc_req *r) {
    return r->limit ? r->limit : r->srv->cfg.body_limit;
}

static void pm_svc__too_large(pm_svc_req *r, const char *how) {
    r->too_large = 1;
    pm_svc__problem(r, 413, "payload-too-large", "Content Too Large",
                    "the request body %s the limit of %zu bytes (%s)", how, pm_svc__limit(r),
                    r->body_type[0] ? "--binary-body-limit, for a multipart/form-data body"
                                    : "--body-limit");
}

/* Charges a binary body's buffer growing to cap bytes to the memory budget
 * (it can be many MiB: the process bound counts it). Returns 0, or -1 with
 * r's answer set: 503 naming max_inflight_mb while others hold the memory,
 * 413 when the body is more than the whole cap. */
static int pm_svc__upload_charge(pm_svc_req *r, size_t cap) {
    if (!r->body_type[0]) return 0;   /* JSON bodies: within the 64 MiB of the bound */
    if (!r->upload.budget) pm_svc_meter_init(&r->upload, r->srv->budget, 0);
    if (cap <= r->upload.held) return 0;
    pm_svc_refusal why = pm_svc_budget_charge(&r->upload, cap - r->upload.held);
    if (why == PM_SVC_REFUSED_NONE) return 0;
    if (why == PM_SVC_REFUSED_JOB) {   /* more than the whole cap: it never fits */
        pm_svc__problem(r, 413, "payload-too-large", "Content Too Large",
                        "the request body (%zu bytes) is more than the memory the server may "
                        "hold in flight, max_inflight_mb (%zu MiB, --max-inflight-mb)",
                        cap, pm_svc_budget_cap(r->srv->budget) >> 20);
    } else {
        pm_api_problem p;
        pm_api_problem_init(&p);
        pm_svc_meter_problem(&r->upload, &p);   /* 503 naming max_inflight_mb */
        pm_svc__set_problem(r, &p);
        pm_api_problem_free(&p);
    }
    pm_svc_meter_end(&r->upload);
    r->too_large = 1;   /* answered at once, the body unread, as a body over the limit is */
    return -1;
}

static void pm_svc__preflight(pm_svc_req *r) {
    r->status = 204;
    r->allow = r->route->allow;
}

typedef struct pm_svc_count { const char *name; int n; } pm_svc_count;

static enum MHD_Result pm_svc__count_param_cb(void *cls, enum MHD_ValueKind kind,
                                               const char *key, const char *value) {
    (void)kind;
    (void)value;
    pm_svc_count *c = cls;
    if (strcmp(key, c->name) == 0) c->n++;
    return MHD_YES;
}

/* How many times the query names a parameter: the lookup sees only the
 * first, and a repeated parameter is refused everywhere else
 * (pm_api_query_doc). */
static int pm_svc__count_param(pm_svc_req *r, const char *name) {
    pm_svc_count c = {name, 0};
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, pm_svc__count_param_cb, &c);
    return c.n;
}

/* The values of the n query parameters names into v (NULL when absent);
 * one given more than once is a 422 at its name in p. */
static void pm_svc__query_values(pm_svc_req *r, const char *const *names, int n, const char **v,
                                 pm_api_problem *p) {
    for (int i = 0; i < n; i++) {
        v[i] = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, names[i]);
        if (v[i] && pm_svc__count_param(r, names[i]) > 1) {
            char ptr[32];
            snprintf(ptr, sizeof ptr, "/%s", names[i]);
            pm_api_problem_field(p, ptr, "is given more than once");
        }
    }
}

/* The output options beside the format (?compress=, ?quantize=,
 * ?metadata=) into r->out. Returns 1 when r has its answer (a 422). */
static int pm_svc__output_options(pm_svc_req *r) {
    static const char *const names[] = {"format", "compress", "quantize", "metadata"};
    const char *v[4];
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_svc__query_values(r, names, 4, v, &p);
    r->out = pm_api_output_default(r->fmt);
    if (!pm_api_problem_failed(&p)) pm_api_output_parse(v[1], v[2], v[3], &r->out, &p);
    int failed = pm_api_problem_failed(&p);
    if (failed) pm_svc__set_problem(r, &p);
    pm_api_problem_free(&p);
    return failed;
}

/* ?v=<generator version> pins a URL to one version of the bytes: such an
 * answer may be cached for good (--cache-control-versioned). Another
 * version is refused with 422 rather than answered with bytes it never
 * made. Returns 1 when r has its answer. */
static int pm_svc__version(pm_svc_req *r) {
    const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "v");
    if (!v) return 0;
    const pm_api_generator *gen = r->route->gen;
    pm_api_problem p;
    pm_api_problem_init(&p);
    if (pm_svc__count_param(r, "v") > 1)
        pm_api_problem_field(&p, "/v", "is given more than once");
    else if (strcmp(v, gen->version) != 0)
        pm_api_problem_field(&p, "/v",
                             "must be %s, the %s generator's version (this server no longer "
                             "makes the bytes of other versions)",
                             gen->version, gen->name);
    if (!pm_api_problem_failed(&p)) {
        r->versioned = 1;
        pm_api_problem_free(&p);
        return 0;
    }
    pm_svc__set_problem(r, &p);
    pm_api_problem_free(&p);
    return 1;
}

/* Framing the library lets through (strict.h): a control byte in the path,
 * duplicate Content-Length, an unsupported Transfer-Encoding, HTTP/1.1
 * without Host. Returns 1 when r has its answer. */
static int pm_svc__strict(pm_svc_req *r, const char *version) {
    if (r->uri_refused == PM_SVC_URI_CONTROL) {
        pm_svc__problem(r, 400, "bad-request", "Bad Request",
                        "the path holds a control character (raw or %%-encoded)");
        return 1;
    }
    pm_svc_strict_verdict v;
    pm_svc_strict_head(r->conn, version, &v);
    if (!v.status) return 0;
    pm_svc__problem(r, v.status, v.type, v.title, "%s", v.detail);
    return 1;
}

/* A chunked body the guard refused from its framing before this head call
 * (guard.h): malformed (400) is answered whatever the head decided; a
 * chunk past the limit (413) unless the head decided another answer,
 * which then goes out at once. Returns 1 when r's answer goes now. */
static int pm_svc__framing(pm_svc_req *r, int decided) {
    pm_svc_strict_verdict v;
    int status = pm_svc_guard_framing(r->conn, decided, &v);
    if (!status) return 0;
    if (status == 400 || !decided) {
        r->allow = NULL;
        pm_svc__problem(r, v.status, v.type, v.title, "%s", v.detail);
    }
    return 1;
}

/* ?png_scale= and ?png_offset= (PNG heightmaps, api/multipart.h) into
 * r->ingest. Returns 1 when r has its answer (a 422). */
static int pm_svc__ingest_options(pm_svc_req *r) {
    static const char *const names[] = {"png_scale", "png_offset"};
    const char *v[2];
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_svc__query_values(r, names, 2, v, &p);
    if (!pm_api_problem_failed(&p)) pm_api_ingest_query(v[0], v[1], &r->ingest, &p);
    int failed = pm_api_problem_failed(&p);
    if (failed) pm_svc__set_problem(r, &p);
    pm_api_problem_free(&p);
    return failed;
}

/* Decides what the headers alone decide: 404, 405, preflight, 413 from
 * Content-Length, 415, 406. Returns 1 when r has its answer. */
static int pm_svc__early(pm_svc_req *r) {
    pm_svc_server *srv = r->srv;
    if (r->uri_refused == PM_SVC_URI_TOO_MANY_ARGS) {
        pm_svc__problem(r, 414, "uri-too-long", "URI Too Long",
                        "the query string has more than %d parameters", PM_SVC_MAX_URI_ARGS);
        return 1;
    }
    if (!r->route || (r->admin && r->route->kind != PM_SVC_ROUTE_HEALTHZ &&
                      r->route->kind != PM_SVC_ROUTE_READYZ &&
                      r->route->kind != PM_SVC_ROUTE_METRICS)) {
        pm_svc__problem(r, 404, "not-found", "Not Found", "no route %s%s", r->path,
                        r->admin ? " on the admin port (health and metrics only)" : "");
        return 1;
    }
    if (!(r->route->methods & r->mbit)) {
        pm_svc__problem(r, 405, "method-not-allowed", "Method Not Allowed",
                        "%s does not allow %s (allowed: %s)", r->path, r->method,
                        r->route->allow);
        r->allow = r->route->allow;
        return 1;
    }
    if (r->mbit == PM_SVC_M_OPTIONS) {
        pm_svc__preflight(r);
        return 1;
    }
    if (r->route->kind != PM_SVC_ROUTE_GENERATOR) return 0;
    if (r->mbit == PM_SVC_M_POST) {
        if (pm_svc__ingest_options(r)) return 1;
        const char *cl = pm_svc__header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char *ct = pm_svc__header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (pm_api_is_multipart(ct)) {   /* binary arrays (api/multipart.c) */
            snprintf(r->body_type, sizeof r->body_type, "%s", ct);
            r->limit = srv->cfg.binary_body_limit > srv->cfg.body_limit
                           ? srv->cfg.binary_body_limit : srv->cfg.body_limit;
        }
        unsigned long long declared = cl ? strtoull(cl, NULL, 10) : 0;
        if (declared > pm_svc__limit(r)) {
            pm_svc__too_large(r, "declares a size over");
            return 1;
        }
        r->declared = (size_t)declared;
        /* A binary body's memory is taken before a byte of it is read. */
        if (r->body_type[0] && declared && pm_svc__upload_charge(r, r->declared) < 0) return 1;
        if (!r->body_type[0] && !pm_svc_is_json_type(ct)) {
            pm_svc__problem(r, 415, "unsupported-media-type", "Unsupported Media Type",
                            "the body must be application/json or multipart/form-data, not %s",
                            ct ? ct : "untyped");
            return 1;
        }
    }
    const char *qf = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "format");
    if (qf && pm_svc__count_param(r, "format") > 1) return pm_svc__output_options(r);
    int n = pm_api_negotiate(qf, pm_svc__header(r, MHD_HTTP_HEADER_ACCEPT), &r->fmt);
    if (n == -1) {
        pm_api_problem p;
        pm_api_problem_init(&p);
        pm_api_problem_field(&p, "/format", "must be one of glb, gltf, json");
        pm_svc__set_problem(r, &p);
        pm_api_problem_free(&p);
        return 1;
    }
    if (n < 0) {
        pm_svc__problem(r, 406, "not-acceptable", "Not Acceptable",
                        "Accept allows none of application/json, model/gltf+json, "
                        "model/gltf-binary (or use ?format=json|gltf|glb)");
        return 1;
    }
    if (pm_svc__output_options(r)) return 1;
    return pm_svc__version(r);
}

/* Appends a body chunk; past the limit, prepares the 413 and drops the
 * rest. Returns 1 when the body just went past the limit, 0 to go on, -1
 * when the connection should be closed. */
static int pm_svc__body(pm_svc_req *r, const char *data, size_t n) {
    size_t limit = pm_svc__limit(r);
    if (r->too_large || n > limit - r->len) {
        int first = !r->too_large;
        if (first) pm_svc__too_large(r, "grew past");
        r->discarded += n;
        if (r->discarded / PM_SVC_DISCARD_FACTOR > limit) return -1;
        return first;
    }
    if (r->len + n > r->cap) {
        /* The declared length at once (one allocation, no copies), else
         * doubling. */
        size_t cap = r->cap ? r->cap : r->declared >= r->len + n ? r->declared : 4096;
        while (cap < r->len + n) cap *= 2;
        if (cap > limit) cap = limit;
        if (pm_svc__upload_charge(r, cap) < 0) {
            r->discarded += n;
            return 1;
        }
        char *b = realloc(r->body, cap + 1);
        if (!b) return -1;
        r->body = b;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return 0;
}

/* Writes r's (error) answer straight on the socket and half-closes it.
 * libmicrohttpd (0.9.75) cannot queue a response while a body is being
 * received, and a chunked body has no declared size to refuse up front;
 * without this, a client streaming an endless body would get no answer at
 * all. The rest of the body is drained (up to PM_SVC_DISCARD_FACTOR times
 * the limit) so the client reads the answer before the connection closes. */
static void pm_svc__send_raw(pm_svc_req *r) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return;
    int fd = ci->connect_fd;
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_buf_printf(&b,
                      "HTTP/1.1 %d %s\r\nDate: %s\r\nConnection: close\r\n"
                      "X-Request-Id: %s\r\nContent-Type: application/problem+json\r\n"
                      "Cache-Control: no-store\r\nContent-Length: %zu\r\n",
                      r->status, MHD_get_reason_phrase_for((unsigned)r->status), date, r->id,
                      r->text_len);
    if (r->acao[0])
        pm_svc_buf_printf(&b, "Access-Control-Allow-Origin: %s\r\n"
                              "Access-Control-Expose-Headers: " PM_SVC_EXPOSE "\r\n", r->acao);
    if (r->srv->cors_list) pm_svc_buf_puts(&b, "Vary: Origin\r\n");
    if (r->allow) pm_svc_buf_printf(&b, "Allow: %s\r\n", r->allow);
    pm_svc_buf_puts(&b, "\r\n");
    if (r->text) pm_svc_buf_append(&b, r->text, r->text_len);
    size_t off = 0;
    uint64_t give_up = pm_svc_now_ns() + 1000000000ull;
    while (!b.failed && off < b.len && pm_svc_now_ns() < give_up) {
        ssize_t w = send(fd, b.data + off, b.len - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, 50);
        } else {
            break;
        }
    }
    shutdown(fd, SHUT_WR);
    pm_svc_buf_free(&b);
    pm_svc_guard_request_raw(r->conn);
    r->raw_sent = 1;
    r->phase = PM_SVC_PH_SENT;
    r->sent_status = r->status;
    r->sent_bytes = r->text_len;
}

/* Drops body bytes of a request that has its answer already; the answer
 * goes out as soon as the body passes the limit, and the connection closes
 * when it passes PM_SVC_DISCARD_FACTOR times the limit. */
static enum MHD_Result pm_svc__drain(pm_svc_req *r, size_t n) {
    size_t limit = pm_svc__limit(r);
    r->discarded += n;
    if (!r->raw_sent && r->discarded > limit) pm_svc__send_raw(r);
    return r->discarded / PM_SVC_DISCARD_FACTOR > limit ? MHD_NO : MHD_YES;
}

static pm_svc_req *pm_svc__req_new(pm_svc_server *srv, struct MHD_Connection *conn,
                                   const char *url, const char *method) {
    pm_svc_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->path = strdup(url);
    if (!r->path) {
        free(r);
        return NULL;
    }
    r->srv = srv;
    r->conn = conn;
    r->ingest = PM_API_INGEST_DEFAULT;
    r->t0 = pm_svc_now_ns();
    r->deadline = r->t0 + (uint64_t)srv->cfg.deadline_ms * 1000000ull;
    snprintf(r->method, sizeof r->method, "%s", method);
    r->mbit = pm_svc_method_bit(method);
    r->route = pm_svc_router_find(&srv->router, url);
    if (srv->admin) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);
        r->admin = ci && ci->daemon == srv->admin;
    }
    const char *rid = pm_svc__header(r, "X-Request-Id");
    if (rid && pm_svc_request_id_ok(rid))
        snprintf(r->id, sizeof r->id, "%s", rid);
    else
        pm_svc_request_id_new(r->id);
    pm_svc_cors_origin(srv->cfg.cors_origin, pm_svc__header(r, "Origin"), r->acao,
                       sizeof r->acao);
    const char *inm = pm_svc__header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (inm) r->inm = strdup(inm);
    pm_svc_accept_enc_parse(pm_svc__header(r, MHD_HTTP_HEADER_ACCEPT_ENCODING), &r->ae);
    atomic_init(&r->sync, PM_SVC_SYNC_NONE);
    r->waiter.fn = pm_svc__on_outcome;
    r->waiter.arg = r;
    pm_svc_metrics_inflight_add(srv->metrics, 1);
    return r;
}

static void pm_svc__req_free(pm_svc_req *r) {
    free(r->path);
    free(r->body);
    pm_svc_meter_end(&r->upload);
    free(r->inm);
    free(r->text);
    pm_svc_blob_unref(r->blob);
    free(r);
}

/* Marks, as the connection's context, a request whose query was dropped
 * and one with a control byte in its path. */
static char pm_svc__uri_refused, pm_svc__uri_control;

/* libmicrohttpd's URI callback, run when the request line is in and just
 * before the query is parsed. A query with too many parameters (see
 * PM_SVC_MAX_URI_ARGS) is emptied in place, so the library never parses
 * it, and the request is marked for a 414. Returns NULL or the mark. */
static void *pm_svc__uri(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)cls;
    (void)conn;
    pm_svc_uri_verdict v = pm_svc_strict_uri(uri, PM_SVC_MAX_URI_ARGS);
    if (v == PM_SVC_URI_CONTROL) return &pm_svc__uri_control;
    if (v == PM_SVC_URI_OK) return NULL;
    strchr(uri, '?')[1] = '\0';   /* the library's own (writable) read buffer */
    return &pm_svc__uri_refused;
}

static enum MHD_Result pm_svc__handler(void *cls, struct MHD_Connection *conn, const char *url,
                                       const char *method, const char *version,
                                       const char *upload, size_t *upload_size, void **con_cls) {
    pm_svc_req *r = *con_cls;
    if (!r || r == (void *)&pm_svc__uri_refused || r == (void *)&pm_svc__uri_control) {
        int refused = !r ? PM_SVC_URI_OK
                      : r == (void *)&pm_svc__uri_control ? PM_SVC_URI_CONTROL
                                                           : PM_SVC_URI_TOO_MANY_ARGS;
        r = pm_svc__req_new(cls, conn, url, method);
        if (!r) return MHD_NO;
        *con_cls = r;
        r->phase = PM_SVC_PH_BODY;
        r->uri_refused = refused;
        if (!pm_svc_guard_request_head(conn, r->id, r->acao)) return MHD_NO;   /* timed out */
        if (pm_svc__strict(r, version)) {
            /* Framing that cannot be trusted: answer before any body byte. */
            pm_svc_guard_request_in(conn);
            return pm_svc__send(r);
        }
        int early = pm_svc__early(r);
        if (pm_svc__framing(r, early)) {
            pm_svc_guard_request_in(conn);
            return pm_svc__send(r);
        }
        if (early) {
            /* A body declared over the limit is not read at all: answer
             * now (the connection closes). Other early answers wait for
             * the end of a small body so the connection can be kept. */
            const char *cl = pm_svc__header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (r->too_large || (cl && strtoull(cl, NULL, 10) > pm_svc__limit(r))) {
                pm_svc_guard_request_in(conn);
                return pm_svc__send(r);
            }
            r->decided = 1;
        }
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->decided || r->raw_sent) return pm_svc__drain(r, n);
        if (r->phase == PM_SVC_PH_SENT) return MHD_YES;   /* answered early: drop it */
        int b = pm_svc__body(r, upload, n);
        if (b > 0) pm_svc__send_raw(r);   /* grew past the limit just now */
        return b < 0 ? MHD_NO : MHD_YES;
    }
    if (r->raw_sent) return MHD_NO;   /* the 413 went out already: close */
    if (r->phase == PM_SVC_PH_SENT) return MHD_YES;
    if (r->phase == PM_SVC_PH_BODY && !pm_svc_guard_request_in(conn))
        return MHD_NO;   /* the body deadline passed: a 408 went out */
    if (r->decided) return pm_svc__send(r);
    if (r->phase == PM_SVC_PH_WAIT) return pm_svc__send(r);   /* resumed with the answer */
    return pm_svc__dispatch(r);
}

static void pm_svc__completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe) {
    (void)toe;
    pm_svc_server *srv = cls;
    pm_svc_req *r = *con_cls;
    *con_cls = NULL;
    int cut = pm_svc_guard_request_end(conn);
    if (!r || r == (void *)&pm_svc__uri_refused || r == (void *)&pm_svc__uri_control) return;
    uint64_t now = pm_svc_now_ns();
    int status = r->phase == PM_SVC_PH_SENT ? r->sent_status : cut;
    pm_svc_metrics_request(srv->metrics, pm_svc_router_index(&srv->router, r->route), status,
                           (double)(now - r->t0) / 1e9);
    pm_svc_access a = {
        .method = r->method,
        .path = r->path,
        .request_id = r->id,
        .cache = r->cache == PM_SVC_CACHE_HIT    ? "HIT"
                 : r->cache == PM_SVC_CACHE_MISS ? "MISS"
                                                 : NULL,
        .status = status,
        .bytes = r->sent_bytes,
        .duration_ms = pm_svc__ms(r->t0, now),
    };
    pm_svc_log_access(&a);
    pm_svc_metrics_inflight_add(srv->metrics, -1);
    pm_svc__req_free(r);
}

/* ---- the daemon ---- */

static void pm_svc__mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) msg[--n] = '\0';
    /* libmicrohttpd reports mostly what clients do (closed sockets, bad
     * requests, our own deliberate closes); failures that matter to an
     * operator are logged by us where they happen. */
    pm_svc_log(PM_SVC_LOG_DEBUG, NULL, msg,
               "\"source\":\"libmicrohttpd\"");
}

/* Fills addr from cfg.bind and cfg.port. Returns its length, or 0. */
static socklen_t pm_svc__addr(const pm_svc_config *cfg, uint32_t port,
                              struct sockaddr_storage *addr) {
    memset(addr, 0, sizeof *addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET, cfg->bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        return sizeof *v4;
    }
    if (inet_pton(AF_INET6, cfg->bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        return sizeof *v6;
    }
    return 0;
}

static void pm_svc__free(pm_svc_server *s) {
    if (s->pool) pm_svc_pool_destroy(s->pool);
    pm_svc_guard_destroy(s->guard);
    pm_svc_guard_destroy(s->admin_guard);
    pm_svc_cache_destroy(s->cache);
    pm_svc_budget_destroy(s->budget);
    pm_svc_memo_destroy(s->memo);
    pm_svc_metrics_destroy(s->metrics);
    for (size_t i = 0; s->constants && i < s->router.nroutes; i++)
        pm_svc_blob_unref(s->constants[i]);
    free(s->constants);
    free(s->constant_tags);
    pm_svc_router_free(&s->router);
    pm_api_problem_free(&s->expired);
    pm_api_problem_free(&s->shutdown);
    free(s);
}

/* The forms of every compiled-in file (the contract, the playground's
 * assets), compressed once at start. Returns 0 or -1 (out of memory). */
static int pm_svc__constants_init(pm_svc_server *s) {
    s->constants = calloc(s->router.nroutes ? s->router.nroutes : 1, sizeof *s->constants);
    s->constant_tags = calloc(s->router.nroutes ? s->router.nroutes : 1, sizeof *s->constant_tags);
    if (!s->constants || !s->constant_tags) return -1;
    for (size_t i = 0; i < s->router.nroutes; i++) {
        const pm_svc_route *rt = &s->router.routes[i];
        const void *data = NULL;
        size_t len = 0;
        if (rt->kind == PM_SVC_ROUTE_OPENAPI) {
            data = pm_api_openapi_yaml;
            len = pm_api_openapi_yaml_len;
        } else if (rt->kind == PM_SVC_ROUTE_ASSET) {
            data = rt->asset->data;
            len = pm_svc_asset_len(rt->asset);
        } else {
            continue;
        }
        XXH128_hash_t h = XXH3_128bits(data, len);
        snprintf(s->constant_tags[i], sizeof s->constant_tags[i], "%016llx%016llx",
                 (unsigned long long)h.high64, (unsigned long long)h.low64);
        s->constants[i] = pm_svc_blob_wrap(NULL, (unsigned char *)data, len);
        if (!s->constants[i]) return -1;
        pm_svc_blob_compress(s->constants[i], &s->zlevels, 0, PM_SVC_CODINGS_ALL);
    }
    return 0;
}

/* One listener on port: the public one, or the admin one (one thread, a
 * few connections, its own guard): our listening socket and acceptor in
 * front of a daemon that has none (accept.h says why). Returns the daemon
 * (bound port in *bound, the acceptor in *acceptor), or NULL after logging
 * why. */
static struct MHD_Daemon *pm_svc__listen(pm_svc_server *s, uint32_t port, unsigned threads,
                                         unsigned max_connections, unsigned per_ip,
                                         pm_svc_guard *guard, uint16_t *bound,
                                         pm_svc_acceptor **acceptor) {
    struct sockaddr_storage addr;
    socklen_t alen = pm_svc__addr(&s->cfg, port, &addr);
    if (!alen) {
        char e[128];
        pm_svc_json_escape(e, sizeof e, s->cfg.bind);
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "--bind is not an IPv4 or IPv6 address",
                   "\"bind\":\"%s\"", e);
        return NULL;
    }
    char why[384], e[448];
    if (pm_svc_mhd_load(why, sizeof why) != 0) {
        pm_svc_json_escape(e, sizeof e, why);
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "cannot load the HTTP library", "\"error\":\"%s\"", e);
        return NULL;
    }
    if (pm_svc_meshopt_load(why, sizeof why) != 0) {   /* before any request needs it */
        pm_svc_json_escape(e, sizeof e, why);
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "cannot load meshoptimizer", "\"error\":\"%s\"", e);
        return NULL;
    }
    int fd = pm_svc_listen_socket((struct sockaddr *)&addr, alen, bound);
    if (fd < 0) {
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "cannot listen", "\"port\":%u,\"error\":\"%s\"", port,
                   strerror(errno));
        return NULL;
    }
    /* MHD_add_connection from the acceptor's thread needs the library's
     * inter-thread channel (MHD_USE_ITC) to wake the thread it picks. The
     * library's own connection limit is set so that it never refuses a
     * connection the guard made room for: it splits its limit among its
     * threads, counts a connection on its thread only later, and still
     * counts a closed one until its thread has cleaned it up (after the
     * guard has seen the close), so at its own limit it would close
     * connections the acceptor already took: with every slot taken and one
     * freed, it refused all 8 queued connections of
     * http_guard::sigterm_answers_connections_queued_in_the_backlog, one
     * after another (1 run in 6). Twice ours per thread leaves the closed
     * ones room. */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
    unsigned library_limit = max_connections > UINT_MAX / 2 / threads ? UINT_MAX : 2 * max_connections * threads;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, pm_svc__handler, s,
        MHD_OPTION_EXTERNAL_LOGGER, pm_svc__mhd_log, s,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_NOTIFY_COMPLETED, pm_svc__completed, s,
        MHD_OPTION_URI_LOG_CALLBACK, pm_svc__uri, s,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.idle_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, library_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_NOTIFY_CONNECTION, pm_svc_guard_notify, guard,
        MHD_OPTION_END);
    if (!d) {
        close(fd);
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "cannot listen", "\"port\":%u", port);
        return NULL;
    }
    *acceptor = pm_svc_acceptor_start(fd, d, guard);
    if (!*acceptor) {
        MHD_stop_daemon(d);
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "cannot start: out of memory or threads", NULL);
        return NULL;
    }
    return d;
}

/* Connections of the admin listener (--admin-port), and how many of them
 * are kept free for new ones. */
#define PM_SVC_ADMIN_CONNECTIONS 64
#define PM_SVC_ADMIN_RESERVE 16

static int pm_svc__start_daemon(pm_svc_server *s) {
    const pm_svc_config *c = &s->cfg;
    s->daemon = pm_svc__listen(s, c->port, c->threads, c->max_connections,
                               c->max_connections_per_ip, s->guard, &s->port, &s->acceptor);
    if (!s->daemon) return -1;
    if (!c->admin_port) return 0;
    s->admin = pm_svc__listen(s, c->admin_port, 1, PM_SVC_ADMIN_CONNECTIONS, 0, s->admin_guard,
                              &s->admin_port, &s->admin_acceptor);
    if (s->admin) return 0;
    pm_svc_acceptor_stop(s->acceptor);
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    return -1;
}

static pm_svc_guard *pm_svc__guard_create(const pm_svc_config *cfg, unsigned max_connections,
                                          unsigned reserve) {
    pm_svc_guard_conf gc = {
        .header_ms = cfg->header_timeout_ms,
        .body_ms = cfg->body_timeout_ms,
        .idle_s = cfg->idle_timeout_s,
        .max_connections = max_connections,
        .reserve = reserve,
        .cors_origin = cfg->cors_origin,
        .body_limit = cfg->body_limit,
        .binary_body_limit = cfg->binary_body_limit,
    };
    return pm_svc_guard_create(&gc);
}

pm_svc_server *pm_svc_server_start(const pm_svc_config *cfg, pm_svc_tier *tier) {
    pm_svc_server *s = calloc(1, sizeof *s);
    if (!s) {
        if (tier) tier->destroy(tier);
        return NULL;
    }
    s->cfg = *cfg;
    s->cors_list = cfg->cors_origin[0] && strcmp(cfg->cors_origin, "*") != 0;
    pm_api_problem_init(&s->expired);
    pm_api_problem_init(&s->shutdown);
    pm_api_problem_set(&s->expired, 503, "deadline", "Service Unavailable",
                       "the request took longer than its deadline of %u ms (--deadline-ms)",
                       cfg->deadline_ms);
    pm_api_problem_set(&s->shutdown, 503, "shutting-down", "Service Unavailable",
                       "the server is shutting down");
    s->cache = pm_svc_cache_create(cfg->cache_bytes, 16, tier);
    if (!s->cache && tier) tier->destroy(tier);
    s->budget = pm_svc_budget_create(cfg->inflight_bytes);
    if (s->budget && cfg->retain_bytes) {   /* jobs' arenas on the page pool (budget.h) */
        size_t keep = cfg->retain_bytes < cfg->inflight_bytes / 4 ? cfg->retain_bytes
                                                                  : cfg->inflight_bytes / 4;
        pm_svc_budget_use_pages(s->budget, pm_svc_pages_create_for_process(), keep);
    }
    pm_svc_outcome expired = {.status = 503, .prob = &s->expired};
    s->memo = pm_svc_memo_create(0);
    s->zlevels = (pm_svc_zlevels){(int)cfg->gzip_level, (int)cfg->br_quality, PM_SVC_ZMIN_LEN};
    if (!s->cache || !s->memo || !s->budget || pm_svc_router_init(&s->router, pm_api_generators, pm_svc_assets, pm_svc_nassets) < 0 ||
        pm_svc__constants_init(s) < 0 ||
        !(s->metrics = pm_svc_metrics_create(s->router.labels, s->router.nroutes + 1,
                                             s->router.gen_names, s->router.ngens)) ||
        pm_svc_cache_watchdog_start(s->cache, &expired) < 0 ||
        !(s->guard = pm_svc__guard_create(cfg, cfg->max_connections, cfg->reserve_connections)) ||
        (cfg->admin_port && !(s->admin_guard = pm_svc__guard_create(
                                  cfg, PM_SVC_ADMIN_CONNECTIONS, PM_SVC_ADMIN_RESERVE))) ||
        !(s->pool = pm_svc_pool_create(cfg->workers, cfg->queue))) {
        pm_svc_log(PM_SVC_LOG_ERROR, NULL, "cannot start: out of memory or threads", NULL);
        pm_svc__free(s);
        return NULL;
    }
    if (pm_svc__start_daemon(s) < 0) {
        pm_svc__free(s);
        return NULL;
    }
    char bind[128];
    pm_svc_json_escape(bind, sizeof bind, cfg->bind);
    pm_svc_log_lifecycle("listening",
               "\"port\":%u,\"bind\":\"%s\",\"threads\":%u,\"workers\":%u,\"queue\":%u,"
               "\"cache_bytes\":%zu,\"admin_port\":%u,\"version\":\"%s\"",
               s->port, bind, cfg->threads, cfg->workers, cfg->queue, cfg->cache_bytes,
               s->admin_port, PM_VERSION);
    return s;
}

uint16_t pm_svc_server_port(const pm_svc_server *s) { return s->port; }

static void pm_svc__sleep_ms(unsigned ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits until no request is in flight (with admin: on the admin port
 * too) or until deadline_ns. */
static int64_t pm_svc__wait_idle(pm_svc_server *s, uint64_t deadline_ns, int admin) {
    int64_t n;
    while ((n = pm_svc_metrics_inflight(s->metrics) + (int64_t)pm_svc_guard_busy(s->guard) +
                (admin && s->admin_guard ? (int64_t)pm_svc_guard_busy(s->admin_guard) : 0)) > 0 &&
           pm_svc_now_ns() < deadline_ns)
        pm_svc__sleep_ms(5);
    return n;
}

size_t pm_svc_server_shutdown(pm_svc_server *s) {
    atomic_store(&s->draining, 1);
    /* New connections are refused from here on; those queued are answered. */
    pm_svc_acceptor_stop(s->acceptor);
    s->acceptor = NULL;
    pm_svc_log_lifecycle("draining", "\"in_flight\":%lld,\"drain_ms\":%u",
               (long long)pm_svc_metrics_inflight(s->metrics), s->cfg.drain_ms);
    uint64_t end = pm_svc_now_ns() + (uint64_t)s->cfg.drain_ms * 1000000ull;
    int64_t left = pm_svc__wait_idle(s, end, 0);
    /* Whatever is still running is answered 503 now: flights first (their
     * cancel flags stop the generators), then the queue, then flights that
     * parse jobs opened meanwhile. */
    atomic_store(&s->stopping, 1);
    pm_svc_outcome bye = {.status = 503, .prob = &s->shutdown};
    pm_svc_cache_expire(s->cache, UINT64_MAX, &bye);
    pm_svc_pool_stop(s->pool);
    pm_svc_cache_expire(s->cache, UINT64_MAX, &bye);
    /* The admin port served probes (/readyz: draining) until now; those
     * queued on it are answered too. Resumed connections still need their
     * HTTP thread to send the 503. */
    pm_svc_acceptor_stop(s->admin_acceptor);
    s->admin_acceptor = NULL;
    pm_svc__wait_idle(s, pm_svc_now_ns() + 1000000000ull, 1);
    MHD_stop_daemon(s->daemon);
    if (s->admin) MHD_stop_daemon(s->admin);
    if (left > 0)
        pm_svc_log(PM_SVC_LOG_WARN, NULL, "drain time over: requests answered 503",
                   "\"cut_short\":%lld", (long long)left);
    pm_svc_log_lifecycle("stopped", "\"cut_short\":%lld",
               (long long)(left > 0 ? left : 0));
    pm_svc__free(s);
    return left > 0 ? (size_t)left : 0;
}
