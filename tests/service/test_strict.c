/* Request targets: control bytes in the path (raw or %-encoded) and the
 * query-parameter cap, judged on the raw target before it is decoded. */
#include <criterion/criterion.h>
#include <string.h>

#include "strict.h"

Test(strict, control_bytes_in_the_path) {
    static const char *const bad[] = {
        "/v1/dungeons%00", "/v1/dungeons%00?seed=1", "/a%0a", "/a%0D%0Ab", "/a%1f", "/a%1F",
        "/a%7f", "/a%7F", "/a\tb", "/a\x01", "/a\x7f", "%00",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(pm_svc_strict_uri(bad[i], 128), PM_SVC_URI_CONTROL, "%s", bad[i]);
    static const char *const good[] = {
        "/v1/dungeons", "/a%20b", "/a%2f", "/a%20", "/a%", "/a%0", "/a%g0", "/a%80",
        "/a%ff", "/\xc3\xa9", "/healthz?x=%00", "/healthz?x=%0a&y=\t", "",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        cr_assert_eq(pm_svc_strict_uri(good[i], 128), PM_SVC_URI_OK, "%s", good[i]);
}

Test(strict, too_many_query_parameters) {
    char q[4096] = "/v1/grids?a=1";
    for (int i = 0; i < 9; i++) strcat(q, "&a=1");   /* 10 parameters, 9 '&' */
    cr_assert_eq(pm_svc_strict_uri(q, 10), PM_SVC_URI_OK);
    strcat(q, "&a=1");
    cr_assert_eq(pm_svc_strict_uri(q, 10), PM_SVC_URI_TOO_MANY_ARGS);
    /* '&' in the path is no parameter separator. */
    cr_assert_eq(pm_svc_strict_uri("/a&b&c&d", 2), PM_SVC_URI_OK);
    /* A control byte is reported first, whatever the query. */
    cr_assert_eq(pm_svc_strict_uri("/a%00?b&c&d", 2), PM_SVC_URI_CONTROL);
}
