/* The routing table built from a generator list. */
#include <criterion/criterion.h>
#include <string.h>

#include "router.h"

static json_t *no_query(const pm_api_query_pair *q, size_t n, pm_api_problem *p) {
    (void)q;
    (void)n;
    (void)p;
    return NULL;
}

/* Route entries only: the router never calls parse or generate. */
static const pm_api_generator post_only = {.name = "a", .version = "1", .path = "/v1/as"};
static const pm_api_generator with_get = {.name = "b", .version = "1", .path = "/v1/bs",
                                          .from_query = no_query};

Test(router, generator_routes_then_service_routes) {
    const pm_api_generator *gens[] = {&post_only, &with_get, NULL};
    pm_svc_router r;
    cr_assert_eq(pm_svc_router_init(&r, gens, NULL, 0), 0);
    cr_assert_eq(r.ngens, 2);
    cr_assert_eq(r.nroutes, 6);
    const pm_svc_route *a = pm_svc_router_find(&r, "/v1/as");
    const pm_svc_route *b = pm_svc_router_find(&r, "/v1/bs");
    cr_assert_eq(a->gen, &post_only);
    cr_assert_str_eq(a->allow, "POST, OPTIONS");
    cr_assert_str_eq(b->allow, "GET, HEAD, POST, OPTIONS");
    cr_assert_eq(b->gen_index, 1);
    const char *own[] = {"/healthz", "/readyz", "/metrics", "/openapi.yaml"};
    for (int i = 0; i < 4; i++) {
        const pm_svc_route *rt = pm_svc_router_find(&r, own[i]);
        cr_assert_not_null(rt, "%s", own[i]);
        cr_assert_str_eq(rt->allow, "GET, HEAD, OPTIONS");
    }
    cr_assert_null(pm_svc_router_find(&r, "/v1/as/"));
    cr_assert_null(pm_svc_router_find(&r, "/V1/AS"));
    cr_assert_null(pm_svc_router_find(&r, ""));
    cr_assert_eq(pm_svc_router_index(&r, NULL), r.nroutes);
    cr_assert_str_eq(r.labels[r.nroutes], "unmatched");
    cr_assert_str_eq(r.labels[pm_svc_router_index(&r, b)], "/v1/bs");
    pm_svc_router_free(&r);
}

Test(router, two_routes_on_one_path_are_refused) {
    const pm_api_generator *gens[] = {&post_only, &post_only, NULL};
    pm_svc_router r;
    cr_assert_eq(pm_svc_router_init(&r, gens, NULL, 0), -1);
}

Test(router, the_product_table_builds) {
    pm_svc_router r;
    cr_assert_eq(pm_svc_router_init(&r, pm_api_generators, pm_svc_assets, pm_svc_nassets), 0);
    for (size_t i = 0; pm_api_generators[i]; i++)
        cr_assert_eq(pm_svc_router_find(&r, pm_api_generators[i]->path)->gen, pm_api_generators[i]);
    /* The playground page is at / and every asset has its own exact route. */
    const pm_svc_route *root = pm_svc_router_find(&r, "/");
    cr_assert_not_null(root);
    cr_assert_eq(root->kind, PM_SVC_ROUTE_ASSET);
    cr_assert_str_eq(root->allow, "GET, HEAD, OPTIONS");
    for (size_t i = 0; i < pm_svc_nassets; i++)
        cr_assert_eq(pm_svc_router_find(&r, pm_svc_assets[i].path)->asset, &pm_svc_assets[i]);
    pm_svc_router_free(&r);
}

Test(router, assets_share_no_path) {
    const pm_api_generator *gens[] = {&post_only, NULL};
    static const unsigned char bytes[] = "x";
    const pm_svc_asset dup[] = {{"/", "text/plain", bytes, bytes + 1}, {"/", "text/plain", bytes, bytes + 1}};
    pm_svc_router r;
    cr_assert_eq(pm_svc_router_init(&r, gens, dup, 1), 0);
    cr_assert_eq(r.nroutes, 6);
    cr_assert_eq(pm_svc_asset_len(pm_svc_router_find(&r, "/")->asset), 1);
    pm_svc_router_free(&r);
    cr_assert_eq(pm_svc_router_init(&r, gens, dup, 2), -1);
}

Test(router, methods) {
    cr_assert_eq(pm_svc_method_bit("GET"), PM_SVC_M_GET);
    cr_assert_eq(pm_svc_method_bit("HEAD"), PM_SVC_M_HEAD);
    cr_assert_eq(pm_svc_method_bit("POST"), PM_SVC_M_POST);
    cr_assert_eq(pm_svc_method_bit("OPTIONS"), PM_SVC_M_OPTIONS);
    cr_assert_eq(pm_svc_method_bit("get"), 0);
    cr_assert_eq(pm_svc_method_bit("PUT"), 0);
    cr_assert_eq(pm_svc_method_bit("DELETE"), 0);
}
