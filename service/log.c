#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"

static atomic_int pm_svc__log_level = PM_SVC_LOG_INFO;
static atomic_int pm_svc__log_fd = 2;

static const char *const pm_svc__level_names[] = {"debug", "info", "warn", "error", "off"};

int pm_svc_log_level_parse(const char *name) {
    for (int i = 0; i <= PM_SVC_LOG_OFF; i++)
        if (strcmp(name, pm_svc__level_names[i]) == 0) return i;
    return -1;
}

const char *pm_svc_log_level_name(int level) {
    return level >= 0 && level <= PM_SVC_LOG_OFF ? pm_svc__level_names[level] : "?";
}

void pm_svc_log_set_level(int level) { atomic_store(&pm_svc__log_level, level); }
int pm_svc_log_enabled(int level) {
    return level < PM_SVC_LOG_OFF && level >= atomic_load(&pm_svc__log_level);
}
void pm_svc_log_set_fd(int fd) { atomic_store(&pm_svc__log_fd, fd); }

/* A line being built in a fixed buffer; output past the end is cut. */
typedef struct pm_svc_line {
    char buf[4096];
    size_t len;
} pm_svc_line;

static void pm_svc__vput(pm_svc_line *l, const char *fmt, va_list ap) {
    size_t room = sizeof l->buf - l->len;
    if (room <= 3) return;   /* keep room for the closing "}\n" */
    int n = vsnprintf(l->buf + l->len, room - 2, fmt, ap);
    if (n > 0) l->len += (size_t)n < room - 3 ? (size_t)n : room - 3;
}

static void pm_svc__raw(pm_svc_line *l, const char *s, size_t n) {
    if (n > sizeof l->buf - 3 - l->len) n = sizeof l->buf - 3 - l->len;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void pm_svc__lit(pm_svc_line *l, const char *s) { pm_svc__raw(l, s, strlen(s)); }

/* s as the inside of a JSON string, at most max bytes of it (cut on a
 * character boundary) so the fields after it still fit the line. */
static void pm_svc__esc_max(pm_svc_line *l, const char *s, size_t max) {
    size_t room = sizeof l->buf - 3 - l->len;
    if (room > max + 1) room = max + 1;
    if (room > 1) l->len += pm_svc_json_escape(l->buf + l->len, room, s);
}


static void pm_svc__u64(pm_svc_line *l, uint64_t v, int min_digits) {
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v || n < min_digits);
    char out[24];
    for (int i = 0; i < n; i++) out[i] = d[n - 1 - i];
    pm_svc__raw(l, out, (size_t)n);
}

/* "2026-11-30T01:29:20.123Z": the date and time of the current second are
 * formatted once per second per thread (gmtime_r takes a global lock). */
static void pm_svc__timestamp(pm_svc_line *l) {
    static _Thread_local time_t sec = (time_t)-1;
    static _Thread_local char text[24];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec != sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
        sec = ts.tv_sec;
    }
    pm_svc__lit(l, text);
    pm_svc__lit(l, ".");
    pm_svc__u64(l, (uint64_t)ts.tv_nsec / 1000000u, 3);
    pm_svc__lit(l, "Z");
}

/* The common prefix: timestamp (UTC, milliseconds), level, message and
 * request id. */
static void pm_svc__log_head(pm_svc_line *l, int level, const char *request_id, const char *msg) {
    pm_svc__lit(l, "{\"ts\":\"");
    pm_svc__timestamp(l);
    pm_svc__lit(l, "\",\"level\":\"");
    pm_svc__lit(l, pm_svc_log_level_name(level));
    pm_svc__lit(l, "\",\"msg\":\"");
    pm_svc__esc_max(l, msg, 511);
    pm_svc__lit(l, "\"");
    if (request_id) {
        pm_svc__lit(l, ",\"request_id\":\"");
        pm_svc__esc_max(l, request_id, 299);
        pm_svc__lit(l, "\"");
    }
}

/* Closes the object, adds the newline and writes the line at once. */
static void pm_svc__log_emit(pm_svc_line *l) {
    l->buf[l->len++] = '}';
    l->buf[l->len++] = '\n';
    ssize_t w = write(atomic_load(&pm_svc__log_fd), l->buf, l->len);
    (void)w;   /* a log line that cannot be written has nowhere else to go */
}

static void pm_svc__vlog(int level, const char *request_id, const char *msg, const char *fields,
                         va_list ap) {
    pm_svc_line l;
    l.len = 0;
    pm_svc__log_head(&l, level, request_id, msg);
    if (fields) {
        pm_svc__lit(&l, ",");
        pm_svc__vput(&l, fields, ap);
    }
    pm_svc__log_emit(&l);
}

void pm_svc_log_lifecycle(const char *msg, const char *fields, ...) {
    if (atomic_load(&pm_svc__log_level) >= PM_SVC_LOG_OFF) return;
    va_list ap;
    va_start(ap, fields);
    pm_svc__vlog(PM_SVC_LOG_INFO, NULL, msg, fields, ap);
    va_end(ap);
}

void pm_svc_log(int level, const char *request_id, const char *msg, const char *fields, ...) {
    if (!pm_svc_log_enabled(level)) return;
    va_list ap;
    va_start(ap, fields);
    pm_svc__vlog(level, request_id, msg, fields, ap);
    va_end(ap);
}

/* Written field by field, without printf: one line per request adds up. */
void pm_svc_log_access(const pm_svc_access *a) {
    if (!pm_svc_log_enabled(PM_SVC_LOG_INFO)) return;
    pm_svc_line l;
    l.len = 0;
    pm_svc__log_head(&l, PM_SVC_LOG_INFO, a->request_id, "access");
    pm_svc__lit(&l, ",\"method\":\"");
    pm_svc__esc_max(&l, a->method ? a->method : "", 64);
    pm_svc__lit(&l, "\",\"path\":\"");
    pm_svc__esc_max(&l, a->path ? a->path : "", 1024);
    pm_svc__lit(&l, "\",\"status\":");
    pm_svc__u64(&l, a->status > 0 ? (uint64_t)a->status : 0, 1);
    pm_svc__lit(&l, ",\"bytes\":");
    pm_svc__u64(&l, a->bytes, 1);
    /* milliseconds with three decimals, rounded to the microsecond */
    double us = a->duration_ms > 0 ? a->duration_ms * 1000.0 + 0.5 : 0;
    uint64_t u = us < 1e18 ? (uint64_t)us : 0;
    pm_svc__lit(&l, ",\"duration_ms\":");
    pm_svc__u64(&l, u / 1000, 1);
    pm_svc__lit(&l, ".");
    pm_svc__u64(&l, u % 1000, 3);
    pm_svc__lit(&l, ",\"cache\":");
    if (a->cache) {
        pm_svc__lit(&l, "\"");
        pm_svc__esc_max(&l, a->cache, 15);
        pm_svc__lit(&l, "\"");
    } else {
        pm_svc__lit(&l, "null");
    }
    pm_svc__log_emit(&l);
}
