#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "pm_api/problem.h"
#include "pm_api/request.h"

const pm_api_generator *pm_pipeline_generator(const char *route) {
    for (size_t i = 0; pm_api_generators[i]; i++) {
        const char *p = pm_api_generators[i]->path, *slash = strrchr(p, '/');
        if (strcmp(slash ? slash + 1 : p, route) == 0) return pm_api_generators[i];
    }
    return NULL;
}

/* Splits a query string (no '?') into pairs at '&' and '=' (not
 * percent-decoded), dropping the service's own ?v= as it does. copy
 * (len + 1 bytes) holds the text the pairs point into. Returns the count. */
static size_t pm__query_pairs(const char *q, size_t len, char *copy, pm_api_query_pair *pairs) {
    memcpy(copy, q, len);
    copy[len] = 0;
    size_t n = 0;
    for (char *tok = copy, *next; tok; tok = next) {
        next = strchr(tok, '&');
        if (next) *next++ = 0;
        if (!*tok) continue;
        char *eq = strchr(tok, '=');
        if (eq) *eq++ = 0;
        if (strcmp(tok, "v") == 0) continue;   /* the service's own (?v=, the version pin) */
        pairs[n++] = (pm_api_query_pair){tok, eq ? eq : ""};
    }
    return n;
}

/* The value of one query parameter (a static copy, cut at 31 bytes), or NULL. */
static const char *pm__query_value(const char *in, size_t len, const char *name) {
    static _Thread_local char v[3][32];
    static _Thread_local int slot;
    size_t nl = strlen(name);
    for (size_t i = 1; i + nl < len; i++) {
        if ((in[i - 1] != '?' && in[i - 1] != '&') || strncmp(in + i, name, nl) != 0 || in[i + nl] != '=')
            continue;
        size_t a = i + nl + 1, b = a;
        while (b < len && in[b] != '&') b++;
        char *out = v[slot++ % 3];
        size_t n = b - a < 31 ? b - a : 31;
        memcpy(out, in + a, n);
        out[n] = 0;
        return out;
    }
    return NULL;
}

int pm_pipeline_run(const pm_api_generator *gen, const char *in, size_t len,
                    const pm_api_limits *lim, size_t nf, const pm_api_format *fmt,
                    pm_api_buf *out, int *status) {
    for (size_t i = 0; i < nf; i++) out[i] = (pm_api_buf){0};
    *status = 0;
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    bool get = len > 0 && in[0] == '?';
    pm_api_request rq = {.gen = gen, .get = get, .body = in, .body_len = len};
    size_t cap = 1;
    for (size_t i = 0; get && i < len; i++) cap += in[i] == '&';
    char *copy = get ? malloc(len) : NULL;
    pm_api_query_pair *pairs = get ? malloc(cap * sizeof *pairs) : NULL;
    pm_api_output *o = malloc((nf ? nf : 1) * sizeof *o);
    int rc = -1;
    if (!o || (get && (!copy || !pairs))) goto done;
    if (get) rq.nquery = pm__query_pairs(in + 1, len - 1, copy, pairs), rq.query = pairs;
    for (size_t i = 0; i < nf; i++) {
        /* A query's ?compress=, ?quantize=, ?metadata= as the service reads them. */
        o[i] = pm_api_output_default(fmt[i]);
        if (get && pm_api_output_parse(pm__query_value(in, len, "compress"),
                                       pm__query_value(in, len, "quantize"),
                                       pm__query_value(in, len, "metadata"), &o[i], &prob) != 0)
            break;
    }
    pm_api_run run = {.lim = lim, .outputs = o, .noutputs = nf};
    if (!pm_api_problem_failed(&prob) && pm_api_request_run(&rq, &run, out, NULL, &prob) == 0) {
        rc = 0;
    } else {
        /* A refusal must say why, and never be the server's own fault. */
        *status = prob.status;
        if ((prob.status >= 400 && prob.status < 500) || prob.status == 503) rc = 1;
    }
done:
    free(o);
    free(pairs);
    free(copy);
    pm_api_problem_free(&prob);
    return rc;
}
