#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "pm_api/key.h"
#include "pm_api/problem.h"
#include "pm_api/reader.h"
#include "scene/arena.h"

const pm_api_generator *pm_pipeline_generator(const char *route) {
    for (size_t i = 0; pm_api_generators[i]; i++) {
        const char *p = pm_api_generators[i]->path, *slash = strrchr(p, '/');
        if (strcmp(slash ? slash + 1 : p, route) == 0) return pm_api_generators[i];
    }
    return NULL;
}

/* A query string (no '?') as the request document from_query makes of it,
 * or NULL with prob set. */
static json_t *pm__query_doc(const pm_api_generator *gen, const char *q, size_t len,
                             pm_api_problem *prob) {
    if (!gen->from_query) {
        pm_api_problem_set(prob, 405, "method-not-allowed", "Method Not Allowed",
                           "%s takes POST only", gen->path);
        return NULL;
    }
    char *copy = malloc(len + 1);
    size_t cap = 1;
    for (size_t i = 0; i < len; i++) cap += q[i] == '&';
    pm_api_query_pair *pairs = malloc(cap * sizeof *pairs);
    json_t *doc = NULL;
    if (!copy || !pairs) {
        pm_api_problem_set(prob, 503, "overloaded", "Service Unavailable", "out of memory");
        goto done;
    }
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
    doc = gen->from_query(pairs, n, prob);
done:
    free(pairs);
    free(copy);
    return doc;
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
    json_t *doc = NULL, *canon = NULL;
    void *params = NULL;
    pm_scene *scene = NULL;
    int rc = -1;
    pm_arena *arena = pm_arena_create(0);
    if (!arena) goto done;
    pm_arena_set_limit(arena, lim->max_arena_bytes);
    if (len > 0 && in[0] == '?') doc = pm__query_doc(gen, in + 1, len - 1, &prob);
    else if (pm_api_parse_body(in, len, &doc, &prob) != 0) doc = NULL;
    if (!doc) goto refused;
    if (gen->parse(doc, lim, arena, &params, &canon, &prob) != 0) goto refused;
    if (!canon) goto done;
    volatile int cancel = 0;
    if (gen->generate(params, lim, arena, &cancel, &scene, &prob) != 0) goto refused;
    if (!scene) goto done;
    for (size_t i = 0; i < nf; i++) {
        /* A query's ?compress=, ?quantize=, ?metadata= as the service reads them. */
        pm_api_output o = pm_api_output_default(fmt[i]);
        if (len > 0 && in[0] == '?' &&
            pm_api_output_parse(pm__query_value(in, len, "compress"), pm__query_value(in, len, "quantize"),
                                pm__query_value(in, len, "metadata"), &o, &prob) != 0) {
            for (size_t j = 0; j < i; j++) free(out[j].data), out[j] = (pm_api_buf){0};
            goto refused;
        }
        pm_api_key k = pm_api_cache_key_output(gen, canon, &o);
        char hex[33];
        pm_api_key_hex(k, hex);
        if ((k.hi == 0 && k.lo == 0) || pm_api_encode_output(scene, gen, hex, &o, &out[i]) != 0) {
            for (size_t j = 0; j < i; j++) free(out[j].data), out[j] = (pm_api_buf){0};
            goto done;
        }
    }
    rc = 0;
    goto done;
refused:
    /* A refusal must say why, and never be the server's own fault. */
    *status = prob.status;
    if ((prob.status >= 400 && prob.status < 500) || prob.status == 503) rc = 1;
done:
    json_decref(canon);
    json_decref(doc);
    pm_api_problem_free(&prob);
    pm_arena_destroy(arena);
    return rc;
}
