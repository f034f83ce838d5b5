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

/* ---- the framing follower (strict.h) ---- */

enum {
    PM_SVC__FR_START,     /* before a request line: empty lines are skipped */
    PM_SVC__FR_HEAD,      /* in a head, after its request line */
    PM_SVC__FR_BODY,      /* Content-Length bytes */
    PM_SVC__FR_SIZE,      /* a chunk size's hex digits */
    PM_SVC__FR_SIZE_CR,   /* a CR after them: LF must follow */
    PM_SVC__FR_EXT,       /* a chunk extension, up to LF */
    PM_SVC__FR_DATA,      /* a chunk's data */
    PM_SVC__FR_DATA_END,  /* CRLF (or LF) after a chunk's data */
    PM_SVC__FR_DATA_CR,   /* its CR seen: LF must follow */
    PM_SVC__FR_TRAILER,   /* trailer lines after the last chunk, up to an empty one */
    PM_SVC__FR_OFF,       /* not judging this connection any more */
    PM_SVC__FR_JUDGED,    /* a verdict is out */
};

void pm_svc_framing_init(pm_svc_framing *f, uint64_t limit, uint64_t multipart_limit) {
    memset(f, 0, sizeof *f);
    f->state = PM_SVC__FR_START;
    f->limit = f->limit_json = limit;
    f->limit_multipart = multipart_limit;
}

void pm_svc_framing_off(pm_svc_framing *f) {
    f->state = PM_SVC__FR_OFF;
    f->status = 0;
}

int pm_svc_framing_on(const pm_svc_framing *f) {
    return f->state != PM_SVC__FR_OFF && f->state != PM_SVC__FR_JUDGED;
}

void pm_svc_framing_verdict(const pm_svc_framing *f, pm_svc_strict_verdict *v) {
    static const struct { int status; const char *type, *title; } kinds[] = {
        {400, "bad-request", "Bad Request"},
        {413, "payload-too-large", "Content Too Large"},
        {414, "uri-too-long", "URI Too Long"},
        {431, "request-header-fields-too-large", "Request Header Fields Too Large"},
        {505, "http-version-not-supported", "HTTP Version Not Supported"},
    };
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].status == f->status)
            pm_svc__refuse(v, f->status, kinds[i].type, kinds[i].title, f->detail);
}

static void pm_svc__judge(pm_svc_framing *f, int status, const char *detail) {
    f->status = status;
    f->verdict_in_head = f->state == PM_SVC__FR_START || f->state == PM_SVC__FR_HEAD;
    f->verdict_on_head = 0;
    f->verdict_request = f->requests + (unsigned)f->verdict_in_head;
    f->verdict_head_len = f->last_head_len;
    snprintf(f->detail, sizeof f->detail, "%s", detail);
    f->state = PM_SVC__FR_JUDGED;
}

/* A line's bytes are kept up to its first NUL (the library reads lines as
 * C strings) and as many as fit; line_len counts them all. */
static void pm_svc__line_byte(pm_svc_framing *f, char c) {
    if (!f->line_len) f->kept = 0;
    if (f->kept == f->line_len && f->kept < sizeof f->line - 1 && c != '\0') f->line[f->kept++] = c;
    f->line_len++;
}

/* The line ends at this LF; a CR just before it is no part of it (the
 * library's CRLF). Returns 1 when the kept bytes are the whole C string. */
static int pm_svc__line_end(pm_svc_framing *f) {
    if (!f->line_len) f->kept = 0;
    int whole = f->kept == f->line_len || f->kept < sizeof f->line - 1;
    if (f->kept == f->line_len && f->kept && f->line[f->kept - 1] == '\r') f->kept--;
    f->line[f->kept] = '\0';
    f->line_len = 0;
    return whole;
}

/* The head ends: where its body ends follows from its framing headers. */
static void pm_svc__head_end(pm_svc_framing *f) {
    if (!f->te_n && f->cl_n && f->cl_first && !f->folded) {   /* the library's own 400/413 */
        pm_svc__judge(f, f->cl_first == 2 ? 413 : 400,
                      f->cl_first == 2 ? "Content-Length is past 64 bits"
                                       : "Content-Length must be one decimal number");
        return;
    }
    f->requests++;
    f->last_head_len = f->head_len;
    f->last_chunked = f->te_n > 0;
    if (f->nul) {   /* the library takes the head (cut at the NUL): refused at its head call */
        pm_svc__judge(f, 400, "a NUL byte in the request head");
        f->verdict_in_head = 0;
        f->verdict_on_head = 1;
        f->verdict_request = f->requests;
        return;
    }
    f->head_len = f->declared = f->size = 0;
    f->limit = f->multipart ? f->limit_multipart : f->limit_json;
    if (f->folded) {
        f->state = PM_SVC__FR_OFF;
    } else if (f->te_n) {
        f->state = f->te_n == 1 && !f->cl_n && f->te_chunked ? PM_SVC__FR_SIZE : PM_SVC__FR_OFF;
    } else if (f->cl_n) {
        f->left = f->cl;
        f->state = f->cl_n > 1 || !f->cl_ok ? PM_SVC__FR_OFF
                   : f->cl                  ? PM_SVC__FR_BODY
                                            : PM_SVC__FR_START;
    } else {
        f->state = PM_SVC__FR_START;
    }
    f->cl_n = f->te_n = f->te_chunked = f->cl_ok = f->folded = f->framing_prev = 0;
    f->cl_first = 0;
    f->head_lines = 0;
    f->nul = 0;
    f->multipart = 0;
}

/* A header line of a head: only Content-Length and Transfer-Encoding
 * matter, named exactly (the library compares the whole name), and
 * whether Content-Type is multipart (its body has the larger limit). */
static void pm_svc__header_line(pm_svc_framing *f, int whole) {
    const char *l = f->line;
    if (l[0] == ' ' || l[0] == '\t') {   /* continues the previous value */
        if (f->framing_prev) f->folded = 1;
        return;
    }
    const char *colon = strchr(l, ':');
    f->framing_prev = 0;
    if (!colon) return;   /* the library refuses it (400), or the name is long */
    size_t name = (size_t)(colon - l);
    int cl = name == 14 && strncasecmp(l, "content-length", 14) == 0;
    int te = name == 17 && strncasecmp(l, "transfer-encoding", 17) == 0;
    if (name == 12 && strncasecmp(l, "content-type", 12) == 0) {
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        f->multipart = strncasecmp(v, "multipart/", 10) == 0;
    }
    if (!cl && !te) return;
    f->framing_prev = 1;
    if (!whole) {   /* a framing value longer than what is kept: unsure */
        f->folded = 1;
        return;
    }
    const char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    if (te) {
        f->te_n++;
        f->te_chunked = strcasecmp(v, "chunked") == 0;
        return;
    }
    f->cl_n++;
    f->cl_ok = *v != '\0';
    f->cl = 0;
    int past = 0;
    for (; *v && f->cl_ok; v++) {
        unsigned d = (unsigned)(*v - '0');
        past = d <= 9 && f->cl > (UINT64_MAX - d) / 10;
        if (d > 9 || past) f->cl_ok = 0;
        else f->cl = f->cl * 10 + d;
    }
    if (f->cl_n == 1 && !f->cl_ok) f->cl_first = past ? 2 : 1;
}

/* The request line ends (CR stripped; len bytes): what the library would
 * refuse, judged as it would (connection.c parse_initial_message_line,
 * parse_http_version). Returns 0 when it passes. */
static int pm_svc__request_line(pm_svc_framing *f, size_t len) {
    if (f->sp_first == SIZE_MAX || f->target >= len || f->sp_last < f->target ||
        f->sp_last == len - 1) {
        pm_svc__judge(f, 400, "the request line must be METHOD SP target SP HTTP-version");
        return 1;
    }
    size_t vlen = len - f->sp_last - 1;
    char v[16];
    if (vlen != 8) {
        pm_svc__judge(f, 400, "the request line must end with an HTTP version (HTTP/1.1)");
        return 1;
    }
    for (size_t i = 0; i < 8; i++) v[i] = f->tail[(f->sp_last + 1 + i) % sizeof f->tail];
    if (memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[5] < '0' || v[5] > '9' || v[7] < '0' ||
        v[7] > '9') {
        pm_svc__judge(f, 400, "the request line must end with an HTTP version (HTTP/1.1)");
        return 1;
    }
    if (v[5] != '1') {
        pm_svc__judge(f, 505, "only HTTP/1.x is served");
        return 1;
    }
    return 0;
}

/* A byte of the request line (not its LF): where its spaces are, and its
 * last bytes. */
static void pm_svc__request_byte(pm_svc_framing *f, char c) {
    size_t i = f->line_len;   /* its index; line_len counts it already */
    if (i == 0) {
        f->sp_first = f->sp_last = f->target = SIZE_MAX;
    }
    if (c == ' ') {
        if (f->sp_first == SIZE_MAX) f->sp_first = i;
        f->sp_last = i;
    } else if (f->sp_first != SIZE_MAX && f->target == SIZE_MAX) {
        f->target = i;
    }
    f->tail[i % sizeof f->tail] = c;
}

/* A chunk size digit: refused as soon as the size passes what is left of
 * the limit (more digits only make it larger). */
static void pm_svc__size_digit(pm_svc_framing *f, int d) {
    uint64_t room = f->limit - f->declared;
    if ((uint64_t)d > room || f->size > (room - (uint64_t)d) / 16) {
        char detail[200];
        snprintf(detail, sizeof detail,
                 "a chunk declares more than the %llu bytes left of the limit of %llu "
                 "bytes (%s)", (unsigned long long)room, (unsigned long long)f->limit,
                 f->limit == f->limit_json ? "--body-limit" : "--binary-body-limit");
        pm_svc__judge(f, 413, detail);
        return;
    }
    f->size = f->size * 16 + (uint64_t)d;
}

/* The chunk size line ends: its data follows, or the trailers. */
static void pm_svc__size_end(pm_svc_framing *f) {
    if (f->line_len == 0 && f->state == PM_SVC__FR_SIZE) {
        pm_svc__judge(f, 400, "chunked framing: a chunk size line without a size");
        return;
    }
    f->line_len = 0;
    if (f->size == 0) {
        f->state = PM_SVC__FR_TRAILER;
        return;
    }
    f->declared += f->size;
    f->left = f->size;
    f->size = 0;
    f->state = PM_SVC__FR_DATA;
}

/* m bytes of a head or trailer line, none of them LF, taken at once: the
 * same state as byte by byte below, for the common run that holds no NUL
 * and crosses no size limit. Returns 0, having changed nothing, for any
 * other run (byte by byte then finds the exact byte of a verdict). */
static int pm_svc__line_run(pm_svc_framing *f, const char *p, size_t m) {
    int start = f->state == PM_SVC__FR_START, head = f->state != PM_SVC__FR_TRAILER;
    size_t l0 = f->line_len;
    uint64_t head_len = start && !l0 ? m : f->head_len + m;
    if (memchr(p, '\0', m) || (head && head_len > PM_SVC_HEAD_MAX) ||
        (start && l0 + m > PM_SVC_REQUEST_LINE_MAX))
        return 0;
    f->head_len = head_len;
    if (!l0) f->colon = 0;
    if (memchr(p, ':', m)) f->colon = 1;
    if (start) {
        if (!l0) f->sp_first = f->sp_last = f->target = SIZE_MAX;
        const char *sp = memchr(p, ' ', m);
        if (f->sp_first == SIZE_MAX && sp) f->sp_first = l0 + (size_t)(sp - p);
        if (f->sp_first != SIZE_MAX && f->target == SIZE_MAX) {
            size_t j = f->sp_first >= l0 ? f->sp_first - l0 + 1 : 0;
            while (j < m && p[j] == ' ') j++;
            if (j < m) f->target = l0 + j;
        }
        for (size_t j = m; sp && j-- > 0;)
            if (p[j] == ' ') {
                f->sp_last = l0 + j;
                break;
            }
        for (size_t j = m > sizeof f->tail ? m - sizeof f->tail : 0; j < m; j++)
            f->tail[(l0 + j) % sizeof f->tail] = p[j];
    }
    if (!l0) f->kept = 0;
    if (f->kept == l0 && f->kept < sizeof f->line - 1) {
        size_t c = sizeof f->line - 1 - f->kept;
        if (c > m) c = m;
        memcpy(f->line + f->kept, p, c);
        f->kept += c;
    }
    f->line_len = l0 + m;
    return 1;
}

size_t pm_svc_framing_feed(pm_svc_framing *f, const char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        switch (f->state) {
        case PM_SVC__FR_OFF:
        case PM_SVC__FR_JUDGED: return n;
        case PM_SVC__FR_BODY:
        case PM_SVC__FR_DATA: {
            uint64_t take = n - i < f->left ? n - i : f->left;
            i += (size_t)take;
            f->left -= take;
            if (!f->left) f->state = f->state == PM_SVC__FR_BODY ? PM_SVC__FR_START : PM_SVC__FR_DATA_END;
            continue;
        }
        case PM_SVC__FR_START:
        case PM_SVC__FR_HEAD:
        case PM_SVC__FR_TRAILER: {
            if (c != '\n') {
                const char *lf = memchr(p + i, '\n', n - i);
                size_t m = (lf ? (size_t)(lf - p) : n) - i;
                if (m > 1 && pm_svc__line_run(f, p + i, m)) {
                    i += m;
                    continue;
                }
            }
            int head = f->state != PM_SVC__FR_TRAILER;
            if (f->state != PM_SVC__FR_START || f->line_len) f->head_len++;
            if (head && f->head_len > PM_SVC_HEAD_MAX) {
                pm_svc__judge(f, 431, "the request head is longer than 12288 bytes");
                return i;
            }
            if (c != '\n') {
                if (f->state == PM_SVC__FR_START && !f->line_len) f->head_len = 1;
                if (!f->line_len) f->colon = 0;
                if (c == ':') f->colon = 1;
                /* A NUL first in a line before the request line makes it an
                 * empty line to the library; anywhere else it cuts the line. */
                if (c == '\0' && head && (f->state == PM_SVC__FR_HEAD || f->line_len)) f->nul = 1;
                if (f->state == PM_SVC__FR_START) pm_svc__request_byte(f, c);
                pm_svc__line_byte(f, c);
                if (f->state == PM_SVC__FR_START && f->line_len > PM_SVC_REQUEST_LINE_MAX &&
                    (c != '\r' || f->line_len > PM_SVC_REQUEST_LINE_MAX + 1)) {   /* CR: its end */
                    pm_svc__judge(f, 414, "the request line is longer than 8192 bytes");
                    return i;
                }
                break;
            }
            size_t len = f->line_len;
            int whole = pm_svc__line_end(f);
            if (f->state == PM_SVC__FR_START) {
                if (f->kept) {   /* the request line */
                    if (pm_svc__request_line(f, len && f->tail[(len - 1) % sizeof f->tail] == '\r' ? len - 1 : len)) return i;
                    f->state = PM_SVC__FR_HEAD;
                } else {
                    f->head_len = 0;   /* an empty line before it */
                }
            } else if (f->state == PM_SVC__FR_HEAD) {
                if (!f->kept) {
                    pm_svc__head_end(f);
                    if (f->state == PM_SVC__FR_JUDGED) return i;
                } else if (++f->head_lines > PM_SVC_HEAD_LINES_MAX) {
                    pm_svc__judge(f, 431, "the request head has more than 100 header lines");
                    return i;
                } else if (!f->colon && (f->head_lines == 1 || (f->line[0] != ' ' && f->line[0] != '\t'))) {
                    pm_svc__judge(f, 400, "a header line without a colon");
                    return i;
                } else {
                    pm_svc__header_line(f, whole);
                }
            } else {
                if (!f->kept) {
                    f->head_len = 0;
                    f->state = PM_SVC__FR_START;
                } else if (whole && !strchr(f->line, ':') && f->line[0] != ' ' &&
                           f->line[0] != '\t') {
                    pm_svc__judge(f, 400, "chunked framing: a trailer line that is no field");
                    return i;
                }
            }
            break;
        }
        case PM_SVC__FR_SIZE:
        case PM_SVC__FR_EXT:
            if (c == '\n') {
                pm_svc__size_end(f);
                if (f->state == PM_SVC__FR_JUDGED) return i;
                break;
            }
            if (++f->line_len > PM_SVC_CHUNK_LINE_MAX) {
                pm_svc__judge(f, 400, "chunked framing: a chunk size line (with its extensions) "
                                      "over 1024 bytes");
                return i;
            }
            if (f->state == PM_SVC__FR_EXT) break;
            if (c == ';' && f->line_len > 1) {
                f->state = PM_SVC__FR_EXT;
            } else if (c == '\r' && f->line_len > 1) {
                f->state = PM_SVC__FR_SIZE_CR;
            } else if (pm_svc__hexval(c) >= 0) {
                pm_svc__size_digit(f, pm_svc__hexval(c));
                if (f->state == PM_SVC__FR_JUDGED) return i;
            } else {
                pm_svc__judge(f, 400, "chunked framing: a chunk size that is no hexadecimal "
                                      "number");
                return i;
            }
            break;
        case PM_SVC__FR_SIZE_CR:
            if (c != '\n') {
                pm_svc__judge(f, 400, "chunked framing: a CR without LF after a chunk size");
                return i;
            }
            pm_svc__size_end(f);
            break;
        case PM_SVC__FR_DATA_END:
        case PM_SVC__FR_DATA_CR:
            if (c == '\n') {
                f->state = PM_SVC__FR_SIZE;
                f->line_len = 0;
            } else if (c == '\r' && f->state == PM_SVC__FR_DATA_END) {
                f->state = PM_SVC__FR_DATA_CR;
            } else {
                pm_svc__judge(f, 400, "chunked framing: a chunk's data is longer than its size "
                                      "(no CRLF after it)");
                return i;
            }
            break;
        }
        i++;
    }
    return n;
}
