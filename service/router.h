#ifndef PM_SVC_ROUTER_H
#define PM_SVC_ROUTER_H
#include <stddef.h>

#include "assets.h"
#include "pm_api/generator.h"

/* The routing table: one route per generator (from pm_api_generators[],
 * nothing per generator here) plus the service's own routes. */
typedef enum pm_svc_route_kind {
    PM_SVC_ROUTE_GENERATOR,
    PM_SVC_ROUTE_HEALTHZ,
    PM_SVC_ROUTE_READYZ,
    PM_SVC_ROUTE_METRICS,
    PM_SVC_ROUTE_OPENAPI,
    PM_SVC_ROUTE_ASSET,      /* a static file compiled in (the playground) */
} pm_svc_route_kind;

enum {
    PM_SVC_M_GET = 1u << 0,
    PM_SVC_M_HEAD = 1u << 1,
    PM_SVC_M_POST = 1u << 2,
    PM_SVC_M_OPTIONS = 1u << 3,
};

typedef struct pm_svc_route {
    const char *path;
    pm_svc_route_kind kind;
    const pm_api_generator *gen;   /* generator routes */
    size_t gen_index;              /* index in the generator list (metrics) */
    const pm_svc_asset *asset;     /* asset routes */
    unsigned methods;              /* PM_SVC_M_* */
    char allow[40];                /* the Allow header: "GET, HEAD, POST, OPTIONS" */
} pm_svc_route;

typedef struct pm_svc_router {
    pm_svc_route *routes;
    size_t nroutes;
    const char **labels;           /* nroutes + 1: route paths, then "unmatched" */
    const char **gen_names;        /* ngens */
    size_t ngens;
} pm_svc_router;

/* Builds the table from gens (NULL-terminated) and nassets static files
 * (GET and HEAD). Returns 0, or -1 when out of memory or when two routes
 * share a path. */
int pm_svc_router_init(pm_svc_router *r, const pm_api_generator *const *gens,
                       const pm_svc_asset *assets, size_t nassets);
void pm_svc_router_free(pm_svc_router *r);

/* The route for an exact path, or NULL. */
const pm_svc_route *pm_svc_router_find(const pm_svc_router *r, const char *path);
/* The metrics index of a route (nroutes for "unmatched"). */
size_t pm_svc_router_index(const pm_svc_router *r, const pm_svc_route *route);

/* "GET" -> PM_SVC_M_GET ...; 0 for every other method. */
unsigned pm_svc_method_bit(const char *method);
#endif
