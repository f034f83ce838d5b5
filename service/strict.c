#include "strict.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int pm_svc__hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int pm_svc__is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

pm_svc_uri_verdict pm_svc_strict_uri(const char *uri, size_t max_args) {
    const char *p = uri;
    for (; *p && *p != '?'; p++) {
        if (pm_svc__is_control((unsigned char)*p)) return PM_SVC_URI_CONTROL;
        if (*p == '%') {
            int hi = pm_svc__hexval(p[1]), lo = hi < 0 ? -1 : pm_svc__hexval(p[2]);
            if (hi >= 0 && lo >= 0 && pm_svc__is_control((unsigned char)(hi * 16 + lo)))
                return PM_SVC_URI_CONTROL;
        }
    }
    size_t args = 0;
    if (*p == '?')
        for (const char *q = p; (q = strchr(q + 1, '&'));) args++;
    return args >= max_args ? PM_SVC_URI_TOO_MANY_ARGS : PM_SVC_URI_OK;
}

/* Counts the headers named like cls->name and keeps the first value. */
typedef struct pm_svc__count {
    const char *name;
    unsigned n;
    const char *first;
} pm_svc__count;

static enum MHD_Result pm_svc__count_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                        const char *value) {
    (void)kind;
    pm_svc__count *c = cls;
    if (strcasecmp(key, c->name) != 0) return MHD_YES;
    if (c->n++ == 0) c->first = value ? value : "";
    return MHD_YES;
}

static pm_svc__count pm_svc__header_count(struct MHD_Connection *conn, const char *name) {
    pm_svc__count c = {name, 0, NULL};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, pm_svc__count_cb, &c);
    return c;
}

static void pm_svc__refuse(pm_svc_strict_verdict *v, int status, const char *type,
                           const char *title, const char *detail) {
    v->status = status;
    v->type = type;
    v->title = title;
    snprintf(v->detail, sizeof v->detail, "%s", detail);
}

static int pm_svc__digits_only(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

void pm_svc_strict_head(struct MHD_Connection *conn, const char *version,
                        pm_svc_strict_verdict *v) {
    memset(v, 0, sizeof *v);
    pm_svc__count cl = pm_svc__header_count(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    pm_svc__count te = pm_svc__header_count(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (cl.n > 1) {
        pm_svc__refuse(v, 400, "bad-request", "Bad Request",
                       "more than one Content-Length header");
    } else if (cl.n == 1 && !pm_svc__digits_only(cl.first)) {
        pm_svc__refuse(v, 400, "bad-request", "Bad Request",
                       "Content-Length must be one decimal number");
    } else if (te.n > 1 || (te.n == 1 && strcasecmp(te.first, "chunked") != 0)) {
        pm_svc__refuse(v, 501, "not-implemented", "Not Implemented",
                       "Transfer-Encoding must be exactly \"chunked\" (no other coding is "
                       "supported)");
    } else if (te.n == 1 && cl.n == 1) {
        pm_svc__refuse(v, 400, "bad-request", "Bad Request",
                       "Transfer-Encoding and Content-Length together");
    } else if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0) {
        pm_svc__count host = pm_svc__header_count(conn, MHD_HTTP_HEADER_HOST);
        if (host.n != 1)
            pm_svc__refuse(v, 400, "bad-request", "Bad Request",
                           host.n ? "more than one Host header" : "HTTP/1.1 without Host");
    }
}
