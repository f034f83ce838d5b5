#include "pm_api/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_API__URN "urn:procmesh:problem:"

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF), or 0 when it is not one. */
static size_t pm_api__utf8_seq(const unsigned char *s) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    unsigned lo = 0x80, hi = 0xbf;   /* bounds of the second byte */
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

/* Replaces each byte that is not part of valid UTF-8 with '?', in place.
 * Problem texts quote what clients sent (paths, keys, values) and are cut
 * to fixed sizes; jansson refuses a string that is not UTF-8, and the
 * answer would lose its body. */
static void pm_api__utf8_fix(char *text) {
    unsigned char *s = (unsigned char *)text;
    while (*s) {
        size_t n = pm_api__utf8_seq(s);
        if (n) {
            s += n;
        } else {
            *s++ = '?';
        }
    }
}

void pm_api_problem_init(pm_api_problem *p) {
    memset(p, 0, sizeof *p);
}

void pm_api_problem_free(pm_api_problem *p) {
    json_decref(p->errors);
    pm_api_problem_init(p);
}

/* Writes pointer as the dotted path people read ("arms[2].width"); the
 * whole document is "body". Numeric tokens are shown as indices. */
static void pm_api__pointer_path(char *out, size_t cap, const char *pointer) {
    size_t n = 0;
    if (!*pointer) {
        snprintf(out, cap, "body");
        return;
    }
    out[0] = '\0';
    for (const char *t = pointer; *t == '/' && n + 1 < cap;) {
        const char *end = strchr(t + 1, '/');
        size_t len = end ? (size_t)(end - t - 1) : strlen(t + 1);
        int numeric = len > 0 && strspn(t + 1, "0123456789") >= len;
        if (numeric)
            n += (size_t)snprintf(out + n, cap - n, "[%.*s]", (int)len, t + 1);
        else {
            if (n > 0 && n + 1 < cap) out[n++] = '.';
            for (size_t i = 0; i < len && n + 1 < cap; i++) {
                char c = t[1 + i];
                if (c == '~' && i + 1 < len && (t[2 + i] == '0' || t[2 + i] == '1')) {
                    c = t[2 + i] == '0' ? '~' : '/';
                    i++;
                }
                out[n++] = c;
            }
            out[n] = '\0';
        }
        if (n >= cap) n = cap - 1;
        t += len + 1;
    }
}

void pm_api_problem_field(pm_api_problem *p, const char *pointer, const char *fmt, ...) {
    if (p->status != 0 && p->status != 422) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->status == 0) {
        p->status = 422;
        snprintf(p->type, sizeof p->type, PM_API__URN "validation");
        p->title = "Invalid request";
        char path[250];
        pm_api__pointer_path(path, sizeof path, pointer);
        snprintf(p->detail, sizeof p->detail, "%s %s", path, msg);
        pm_api__utf8_fix(p->detail);
    }
    if (!p->errors) p->errors = json_array();
    if (!p->errors || json_array_size(p->errors) >= PM_API_MAX_ERRORS) {
        p->dropped++;
        return;
    }
    char *ptr = strdup(pointer);
    if (ptr) pm_api__utf8_fix(ptr);
    pm_api__utf8_fix(msg);
    json_t *e = ptr ? json_pack("{s:s, s:s}", "pointer", ptr, "message", msg) : NULL;
    free(ptr);
    if (!e || json_array_append_new(p->errors, e) < 0) p->dropped++;
}

void pm_api_problem_set(pm_api_problem *p, int status, const char *type_suffix,
                        const char *title, const char *fmt, ...) {
    json_decref(p->errors);
    p->errors = NULL;
    p->dropped = 0;
    p->status = status;
    snprintf(p->type, sizeof p->type, PM_API__URN "%s", type_suffix);
    p->title = title;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    pm_api__utf8_fix(p->detail);
}

json_t *pm_api_problem_json(const pm_api_problem *p, const char *instance) {
    size_t listed = p->errors ? json_array_size(p->errors) : 0;
    size_t more = listed + p->dropped > 0 ? listed + p->dropped - 1 : 0;
    char detail[sizeof p->detail + 48];
    if (more > 0)
        snprintf(detail, sizeof detail, "%s (and %zu more error%s)", p->detail, more,
                 more == 1 ? "" : "s");
    else
        snprintf(detail, sizeof detail, "%s", p->detail);
    json_t *j = json_pack("{s:s, s:s, s:i, s:s}", "type",
                          p->type[0] ? p->type : "about:blank", "title",
                          p->title ? p->title : "Error", "status", p->status, "detail", detail);
    if (!j) return NULL;
    if (instance && json_object_set_new(j, "instance", json_string(instance)) < 0) goto fail;
    if (p->errors && json_object_set(j, "errors", p->errors) < 0) goto fail;
    return j;
fail:
    json_decref(j);
    return NULL;
}

int pm_api_pointer_join(char *out, size_t cap, const char *base, const char *token) {
    size_t n = strlen(base);
    if (n + 1 >= cap) {
        if (out != base && cap > 0) out[0] = '\0';
        return -1;
    }
    if (out != base) memmove(out, base, n);
    out[n++] = '/';
    for (const char *c = token; *c; c++) {
        const char *esc = *c == '~' ? "~0" : *c == '/' ? "~1" : NULL;
        size_t need = esc ? 2 : 1;
        if (n + need >= cap) {
            out[n] = '\0';
            return -1;
        }
        if (esc) {
            out[n++] = esc[0];
            out[n++] = esc[1];
        } else {
            out[n++] = *c;
        }
    }
    out[n] = '\0';
    return 0;
}

int pm_api_pointer_index(char *out, size_t cap, const char *base, size_t index) {
    char tok[24], *t = tok + sizeof tok - 1;   /* "%zu", without printf */
    *t = '\0';
    do *--t = (char)('0' + index % 10);
    while ((index /= 10) != 0);
    return pm_api_pointer_join(out, cap, base, t);
}
