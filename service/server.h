#ifndef PM_SVC_SERVER_H
#define PM_SVC_SERVER_H
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "tier.h"

/* The HTTP server: libmicrohttpd's thread pool (epoll) answers health,
 * metrics and cache hits itself; generation runs on the worker pool while
 * the connection is suspended. */
typedef struct pm_svc_server pm_svc_server;

/* Starts listening with a copy of cfg; tier (may be NULL) is owned by the
 * server from here on, also on failure. Returns NULL after logging why. */
pm_svc_server *pm_svc_server_start(const pm_svc_config *cfg, pm_svc_tier *tier);

/* The port actually bound (useful with --port 0). */
uint16_t pm_svc_server_port(const pm_svc_server *s);

/* Graceful stop: refuse new connections (readyz turns 503), give in-flight
 * requests up to cfg.drain_ms, then answer what is left with 503, stop
 * every thread and free. Returns how many requests had to be cut short. */
size_t pm_svc_server_shutdown(pm_svc_server *s);
#endif
