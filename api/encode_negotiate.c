#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_api/encode.h"

#define PM_API__NFMT 3

static const char *const pm_api__names[PM_API__NFMT] = {"json", "gltf", "glb"};
static const char *const pm_api__mimes[PM_API__NFMT] = {
    "application/json", "model/gltf+json", "model/gltf-binary"};

/* On a tie in q the server prefers the JSON mesh (the documented default),
 * then the compact binary glTF, then .gltf. */
static const pm_api_format pm_api__preference[PM_API__NFMT] = {
    PM_API_FMT_JSON, PM_API_FMT_GLB, PM_API_FMT_GLTF};

const char *pm_api_format_name(pm_api_format f) {
    return (unsigned)f < PM_API__NFMT ? pm_api__names[f] : "json";
}

const char *pm_api_format_mime(pm_api_format f) {
    return (unsigned)f < PM_API__NFMT ? pm_api__mimes[f] : pm_api__mimes[0];
}

/* A qvalue (RFC 9110 12.4.2): "0", "1", "0.5", at most three decimals. */
static bool pm_api__parse_q(const char *s, size_t n, double *q) {
    if (n == 0 || n > 5 || (s[0] != '0' && s[0] != '1')) return false;
    if (n > 1 && (s[1] != '.' || n == 2)) return false;
    for (size_t i = 2; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return false;
    char buf[8];
    memcpy(buf, s, n);
    buf[n] = '\0';
    *q = strtod(buf, NULL);
    return *q <= 1.0;
}

static void pm_api__trim(const char **s, size_t *n) {
    while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) (*n)--;
}

/* How specifically media range r (length n) matches mime: 3 exact, 2
 * type/star, 1 star/star, 0 no match. */
static int pm_api__match(const char *r, size_t n, const char *mime) {
    if (n == 3 && memcmp(r, "*/*", 3) == 0) return 1;
    const char *slash = strchr(mime, '/');
    size_t tlen = (size_t)(slash - mime);
    if (n == tlen + 2 && strncasecmp(r, mime, tlen) == 0 && memcmp(r + tlen, "/*", 2) == 0)
        return 2;
    if (n == strlen(mime) && strncasecmp(r, mime, n) == 0) return 3;
    return 0;
}

/* Applies one Accept element (range and parameters) to each format: the
 * most specific matching range decides that format's q. */
static void pm_api__apply(const char *item, size_t n, int spec[], double q[]) {
    const char *semi = memchr(item, ';', n);
    const char *range = item;
    size_t rlen = semi ? (size_t)(semi - item) : n;
    pm_api__trim(&range, &rlen);
    double qv = 1.0;
    for (const char *p = semi; p && p < item + n;) {
        const char *next = memchr(p + 1, ';', (size_t)(item + n - p - 1));
        const char *par = p + 1;
        size_t plen = (size_t)((next ? next : item + n) - par);
        pm_api__trim(&par, &plen);
        if (plen >= 2 && (par[0] == 'q' || par[0] == 'Q') && par[1] == '=') {
            if (!pm_api__parse_q(par + 2, plen - 2, &qv)) return; /* malformed: ignore */
        }
        p = next;
    }
    for (int f = 0; f < PM_API__NFMT; f++) {
        int s = pm_api__match(range, rlen, pm_api__mimes[f]);
        if (s > spec[f]) {
            spec[f] = s;
            q[f] = qv;
        }
    }
}

int pm_api_negotiate(const char *query_format, const char *accept, pm_api_format *out) {
    *out = PM_API_FMT_JSON;
    if (query_format) {
        for (int f = 0; f < PM_API__NFMT; f++) {
            if (strcmp(query_format, pm_api__names[f]) == 0) {   /* exact: the enum is lowercase */
                *out = (pm_api_format)f;
                return 0;
            }
        }
        return -1;
    }
    size_t alen = accept ? strlen(accept) : 0;
    const char *a = accept;
    pm_api__trim(&a, &alen);
    if (alen == 0) return 0;
    int spec[PM_API__NFMT] = {0};
    double q[PM_API__NFMT] = {0};
    for (const char *p = a; p < a + alen;) {
        const char *comma = memchr(p, ',', (size_t)(a + alen - p));
        size_t n = (size_t)((comma ? comma : a + alen) - p);
        pm_api__apply(p, n, spec, q);
        p += n + 1;
    }
    double best = 0;
    for (int i = 0; i < PM_API__NFMT; i++) {
        pm_api_format f = pm_api__preference[i];
        if (q[f] > best) {
            best = q[f];
            *out = f;
        }
    }
    return best > 0 ? 0 : -2;
}
