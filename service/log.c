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

static void pm_svc__put(pm_svc_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pm_svc__put(pm_svc_line *l, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pm_svc__vput(l, fmt, ap);
    va_end(ap);
}

/* The common prefix: timestamp (UTC, milliseconds), level, message and
 * request id. */
static void pm_svc__log_head(pm_svc_line *l, int level, const char *request_id, const char *msg) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char emsg[512], erid[300];
    pm_svc_json_escape(emsg, sizeof emsg, msg);
    pm_svc__put(l, "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\",\"msg\":\"%s\"",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                ts.tv_nsec / 1000000L, pm_svc_log_level_name(level), emsg);
    if (request_id) {
        pm_svc_json_escape(erid, sizeof erid, request_id);
        pm_svc__put(l, ",\"request_id\":\"%s\"", erid);
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
        pm_svc__put(&l, ",");
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

void pm_svc_log_access(const pm_svc_access *a) {
    if (!pm_svc_log_enabled(PM_SVC_LOG_INFO)) return;
    char method[64], path[1024], cache[16];
    pm_svc_json_escape(method, sizeof method, a->method ? a->method : "");
    pm_svc_json_escape(path, sizeof path, a->path ? a->path : "");
    if (a->cache)
        snprintf(cache, sizeof cache, "\"%s\"", a->cache);
    else
        snprintf(cache, sizeof cache, "null");
    pm_svc_log(PM_SVC_LOG_INFO, a->request_id, "access",
               "\"method\":\"%s\",\"path\":\"%s\",\"status\":%d,\"bytes\":%llu,"
               "\"duration_ms\":%.3f,\"cache\":%s",
               method, path, a->status, (unsigned long long)a->bytes, a->duration_ms, cache);
}
