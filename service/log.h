#ifndef PM_SVC_LOG_H
#define PM_SVC_LOG_H
#include <stdint.h>

/* Structured logs: one JSON object per line on stderr (or the fd set by
 * pm_svc_log_set_fd), each written with a single write(2) so lines from
 * different threads never interleave. Every line about a request carries
 * its "request_id". */
typedef enum pm_svc_log_level {
    PM_SVC_LOG_DEBUG = 0,
    PM_SVC_LOG_INFO = 1,   /* access lines are info */
    PM_SVC_LOG_WARN = 2,
    PM_SVC_LOG_ERROR = 3,
    PM_SVC_LOG_OFF = 4,
} pm_svc_log_level;

/* "debug", "info", "warn", "error", "off" <-> level. Parse returns -1 for an
 * unknown name. */
int pm_svc_log_level_parse(const char *name);
const char *pm_svc_log_level_name(int level);

void pm_svc_log_set_level(int level);
int pm_svc_log_enabled(int level);
void pm_svc_log_set_fd(int fd);

/* Logs msg at level. request_id may be NULL (not about a request). fields,
 * when not NULL, is a printf format for extra members written verbatim
 * after the standard ones: `"port":%d` (the caller escapes strings with
 * pm_svc_json_escape). Lines longer than 4 KiB are cut. */
void pm_svc_log(int level, const char *request_id, const char *msg, const char *fields, ...)
    __attribute__((format(printf, 4, 5)));

/* Lifecycle lines (listening, signal, draining, stopped): level "info",
 * yet written at every level but "off", so operators and tools always see
 * the port and the shutdown. */
void pm_svc_log_lifecycle(const char *msg, const char *fields, ...)
    __attribute__((format(printf, 2, 3)));

/* The access line for one finished request. cache is "HIT", "MISS" or NULL
 * (not a cacheable route); status 0 means the client left before a
 * response was queued. */
typedef struct pm_svc_access {
    const char *method, *path, *request_id, *cache;
    int status;
    uint64_t bytes;
    double duration_ms;
} pm_svc_access;
void pm_svc_log_access(const pm_svc_access *a);
#endif
