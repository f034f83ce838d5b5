#include <criterion/criterion.h>

#include "pm_api/encode.h"

static void expect_fmt(const char *q, const char *accept, int rc, pm_api_format want) {
    pm_api_format f = (pm_api_format)99;
    int r = pm_api_negotiate(q, accept, &f);
    cr_expect_eq(r, rc, "format=%s Accept: %s gave %d", q ? q : "(none)",
                 accept ? accept : "(none)", r);
    if (rc == 0)
        cr_expect_eq(f, want, "format=%s Accept: %s chose %s", q ? q : "(none)",
                     accept ? accept : "(none)", pm_api_format_name(f));
}

Test(negotiate, query_format_beats_accept) {
    expect_fmt("glb", "application/json", 0, PM_API_FMT_GLB);
    expect_fmt("gltf", NULL, 0, PM_API_FMT_GLTF);
    expect_fmt("json", "model/gltf-binary", 0, PM_API_FMT_JSON);
    /* The enum is lowercase, and ?format= is as strict as every other
     * query enum (issue 12): another spelling is a 422 at /format. */
    expect_fmt("GLB", NULL, -1, PM_API_FMT_JSON);
    expect_fmt("Json", "model/gltf-binary", -1, PM_API_FMT_JSON);
    expect_fmt("obj", NULL, -1, PM_API_FMT_JSON);
    expect_fmt("", "model/gltf-binary", -1, PM_API_FMT_JSON);
    /* Even an Accept nothing satisfies loses to an explicit format. */
    expect_fmt("glb", "text/html", 0, PM_API_FMT_GLB);
}

Test(negotiate, accept_defaults_and_exact_types) {
    expect_fmt(NULL, NULL, 0, PM_API_FMT_JSON);
    expect_fmt(NULL, "", 0, PM_API_FMT_JSON);
    expect_fmt(NULL, "  ", 0, PM_API_FMT_JSON);
    expect_fmt(NULL, "model/gltf-binary", 0, PM_API_FMT_GLB);
    expect_fmt(NULL, "model/gltf+json", 0, PM_API_FMT_GLTF);
    expect_fmt(NULL, "application/json", 0, PM_API_FMT_JSON);
    expect_fmt(NULL, "MODEL/GLTF-BINARY", 0, PM_API_FMT_GLB);
}

Test(negotiate, wildcards) {
    expect_fmt(NULL, "*/*", 0, PM_API_FMT_JSON);
    expect_fmt(NULL, "model/*", 0, PM_API_FMT_GLB);
    expect_fmt(NULL, "application/*", 0, PM_API_FMT_JSON);
    expect_fmt(NULL, "text/html, model/*;q=0.1", 0, PM_API_FMT_GLB);
}

Test(negotiate, q_values) {
    expect_fmt(NULL, "application/json;q=0.5, model/gltf+json", 0, PM_API_FMT_GLTF);
    expect_fmt(NULL, "application/json; q=0.9, model/gltf-binary ; q=0.95", 0, PM_API_FMT_GLB);
    expect_fmt(NULL, "model/gltf+json;q=0.8, model/gltf-binary;q=0.8", 0, PM_API_FMT_GLB);
    /* q=0 excludes, and the specific range beats the wildcard. */
    expect_fmt(NULL, "application/json;q=0, */*", 0, PM_API_FMT_GLB);
    expect_fmt(NULL, "*/*;q=0.1, model/gltf-binary;q=0, application/json;q=0", 0,
               PM_API_FMT_GLTF);
    expect_fmt(NULL, "application/json;q=0", -2, PM_API_FMT_JSON);
    expect_fmt(NULL, "*/*;q=0", -2, PM_API_FMT_JSON);
    expect_fmt(NULL, "application/json;charset=utf-8;q=1.000", 0, PM_API_FMT_JSON);
}

Test(negotiate, nothing_acceptable_is_406) {
    expect_fmt(NULL, "text/html", -2, PM_API_FMT_JSON);
    expect_fmt(NULL, "image/*, text/plain;q=0.5", -2, PM_API_FMT_JSON);
    expect_fmt(NULL, "application/xml", -2, PM_API_FMT_JSON);
    /* Malformed q-values make the element count for nothing. */
    expect_fmt(NULL, "application/json;q=2", -2, PM_API_FMT_JSON);
    expect_fmt(NULL, "application/json;q=abc", -2, PM_API_FMT_JSON);
    expect_fmt(NULL, ",,, ;", -2, PM_API_FMT_JSON);
}

Test(negotiate, names_and_mimes) {
    cr_expect_str_eq(pm_api_format_name(PM_API_FMT_GLB), "glb");
    cr_expect_str_eq(pm_api_format_mime(PM_API_FMT_GLB), "model/gltf-binary");
    cr_expect_str_eq(pm_api_format_mime(PM_API_FMT_GLTF), "model/gltf+json");
    cr_expect_str_eq(pm_api_format_mime(PM_API_FMT_JSON), "application/json");
}
