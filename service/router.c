#include "router.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *path;
    pm_svc_route_kind kind;
} pm_svc__own_routes[] = {
    {"/healthz", PM_SVC_ROUTE_HEALTHZ},
    {"/readyz", PM_SVC_ROUTE_READYZ},
    {"/metrics", PM_SVC_ROUTE_METRICS},
    {"/openapi.yaml", PM_SVC_ROUTE_OPENAPI},
};
#define PM_SVC__NOWN (sizeof pm_svc__own_routes / sizeof pm_svc__own_routes[0])

unsigned pm_svc_method_bit(const char *m) {
    if (strcmp(m, "GET") == 0) return PM_SVC_M_GET;
    if (strcmp(m, "HEAD") == 0) return PM_SVC_M_HEAD;
    if (strcmp(m, "POST") == 0) return PM_SVC_M_POST;
    if (strcmp(m, "OPTIONS") == 0) return PM_SVC_M_OPTIONS;
    return 0;
}

static void pm_svc__allow(pm_svc_route *rt) {
    static const char *const names[] = {"GET", "HEAD", "POST", "OPTIONS"};
    size_t n = 0;
    rt->allow[0] = '\0';
    for (unsigned i = 0; i < 4; i++) {
        if (!(rt->methods & (1u << i))) continue;
        size_t len = strlen(names[i]);
        if (n) {
            memcpy(rt->allow + n, ", ", 2);
            n += 2;
        }
        memcpy(rt->allow + n, names[i], len + 1);
        n += len;
    }
}

int pm_svc_router_init(pm_svc_router *r, const pm_api_generator *const *gens,
                       const pm_svc_asset *assets, size_t nassets) {
    memset(r, 0, sizeof *r);
    size_t ngens = 0;
    while (gens[ngens]) ngens++;
    size_t n = ngens + PM_SVC__NOWN + nassets;
    r->routes = calloc(n, sizeof *r->routes);
    r->labels = calloc(n + 1, sizeof *r->labels);
    r->gen_names = calloc(ngens + 1, sizeof *r->gen_names);
    if (!r->routes || !r->labels || !r->gen_names) goto fail;
    for (size_t i = 0; i < ngens; i++) {
        pm_svc_route *rt = &r->routes[i];
        rt->path = gens[i]->path;
        rt->kind = PM_SVC_ROUTE_GENERATOR;
        rt->gen = gens[i];
        rt->gen_index = i;
        rt->methods = PM_SVC_M_POST | PM_SVC_M_OPTIONS;
        if (gens[i]->from_query) rt->methods |= PM_SVC_M_GET | PM_SVC_M_HEAD;
        r->gen_names[i] = gens[i]->name;
    }
    for (size_t i = 0; i < PM_SVC__NOWN; i++) {
        pm_svc_route *rt = &r->routes[ngens + i];
        rt->path = pm_svc__own_routes[i].path;
        rt->kind = pm_svc__own_routes[i].kind;
        rt->methods = PM_SVC_M_GET | PM_SVC_M_HEAD | PM_SVC_M_OPTIONS;
    }
    for (size_t i = 0; i < nassets; i++) {
        pm_svc_route *rt = &r->routes[ngens + PM_SVC__NOWN + i];
        rt->path = assets[i].path;
        rt->kind = PM_SVC_ROUTE_ASSET;
        rt->asset = &assets[i];
        rt->methods = PM_SVC_M_GET | PM_SVC_M_HEAD | PM_SVC_M_OPTIONS;
    }
    r->nroutes = n;
    r->ngens = ngens;
    for (size_t i = 0; i < n; i++) {
        pm_svc__allow(&r->routes[i]);
        r->labels[i] = r->routes[i].path;
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->routes[i].path, r->routes[j].path) == 0) goto fail;
    }
    r->labels[n] = "unmatched";
    return 0;
fail:
    pm_svc_router_free(r);
    return -1;
}

void pm_svc_router_free(pm_svc_router *r) {
    free(r->routes);
    free(r->labels);
    free(r->gen_names);
    memset(r, 0, sizeof *r);
}

const pm_svc_route *pm_svc_router_find(const pm_svc_router *r, const char *path) {
    for (size_t i = 0; i < r->nroutes; i++)
        if (strcmp(r->routes[i].path, path) == 0) return &r->routes[i];
    return NULL;
}

size_t pm_svc_router_index(const pm_svc_router *r, const pm_svc_route *route) {
    return route ? (size_t)(route - r->routes) : r->nroutes;
}
