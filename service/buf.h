#ifndef PM_SVC_BUF_H
#define PM_SVC_BUF_H
#include <stdarg.h>
#include <stddef.h>

/* A growable text buffer for building responses (metrics, JSON bodies).
 * After an allocation failure the buffer is marked failed and further
 * appends do nothing, so callers check once at the end. */
typedef struct pm_svc_buf {
    char *data;       /* NUL-terminated while not failed */
    size_t len, cap;
    int failed;
} pm_svc_buf;

void pm_svc_buf_init(pm_svc_buf *b);
void pm_svc_buf_free(pm_svc_buf *b);
void pm_svc_buf_append(pm_svc_buf *b, const char *s, size_t n);
void pm_svc_buf_puts(pm_svc_buf *b, const char *s);
void pm_svc_buf_printf(pm_svc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as the inside of a JSON string (quotes not included): escapes
 * quotes, backslashes and control characters; bytes >= 0x80 pass through. */
void pm_svc_buf_json_str(pm_svc_buf *b, const char *s);

/* Writes s escaped as a JSON string body into out (cap bytes, always
 * NUL-terminated, truncated on a character boundary). Returns the length. */
size_t pm_svc_json_escape(char *out, size_t cap, const char *s);
#endif
