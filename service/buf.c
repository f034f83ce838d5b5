#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pm_svc_buf_init(pm_svc_buf *b) { memset(b, 0, sizeof *b); }

void pm_svc_buf_free(pm_svc_buf *b) {
    free(b->data);
    pm_svc_buf_init(b);
}

static int pm_svc__buf_reserve(pm_svc_buf *b, size_t extra) {
    if (b->failed) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void pm_svc_buf_append(pm_svc_buf *b, const char *s, size_t n) {
    if (pm_svc__buf_reserve(b, n) < 0) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void pm_svc_buf_puts(pm_svc_buf *b, const char *s) { pm_svc_buf_append(b, s, strlen(s)); }

void pm_svc_buf_printf(pm_svc_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || pm_svc__buf_reserve(b, (size_t)n) < 0) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there
 * are not valid UTF-8 (overlong forms, surrogates and truncation included). */
static size_t pm_svc__utf8_len(const unsigned char *s) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && s[1] < 0xa0) return 0;   /* overlong */
    if (c == 0xed && s[1] >= 0xa0) return 0;  /* surrogate */
    if (c == 0xf0 && s[1] < 0x90) return 0;   /* overlong */
    if (c == 0xf4 && s[1] >= 0x90) return 0;  /* past U+10FFFF */
    return n;
}

/* The text one input sequence becomes: an escape, the bytes themselves, or
 * U+FFFD for invalid UTF-8 (so every log line stays valid JSON). */
static const char *pm_svc__escape(const unsigned char *s, size_t *in_len, size_t *out_len,
                                  char tmp[8]) {
    const char *e = NULL;
    *in_len = 1;
    switch (*s) {
    case '"': e = "\\\""; break;
    case '\\': e = "\\\\"; break;
    case '\n': e = "\\n"; break;
    case '\r': e = "\\r"; break;
    case '\t': e = "\\t"; break;
    default: break;
    }
    if (!e && (*s < 0x20 || *s == 0x7f)) {
        snprintf(tmp, 8, "\\u%04x", *s);
        e = tmp;
    }
    if (e) {
        *out_len = strlen(e);
        return e;
    }
    size_t n = pm_svc__utf8_len(s);
    if (n == 0) {
        *out_len = 3;
        return "\xef\xbf\xbd";
    }
    *in_len = *out_len = n;
    return (const char *)s;
}

void pm_svc_buf_json_str(pm_svc_buf *b, const char *s) {
    char tmp[8];
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t in_len, out_len;
        const char *e = pm_svc__escape(p, &in_len, &out_len, tmp);
        pm_svc_buf_append(b, e, out_len);
        p += in_len;
    }
}

size_t pm_svc_json_escape(char *out, size_t cap, const char *s) {
    char tmp[8];
    size_t n = 0;
    if (cap == 0) return 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t in_len, out_len;
        const char *e = pm_svc__escape(p, &in_len, &out_len, tmp);
        if (n + out_len + 1 > cap) break;
        memcpy(out + n, e, out_len);
        n += out_len;
        p += in_len;
    }
    out[n] = '\0';
    return n;
}
