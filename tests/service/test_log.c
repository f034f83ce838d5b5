/* Logs: one valid JSON object per line, escaping, levels, access lines. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

/* Runs fn with the log going into a pipe and returns what it wrote. */
static char *capture(void (*fn)(void)) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pm_svc_log_set_fd(p[1]);
    fn();
    pm_svc_log_set_fd(2);
    close(p[1]);
    static char buf[65536];
    size_t n = 0;
    ssize_t r;
    while ((r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
    buf[n] = '\0';
    close(p[0]);
    return buf;
}

static void write_lines(void) {
    pm_svc_log_set_level(PM_SVC_LOG_INFO);
    pm_svc_log(PM_SVC_LOG_DEBUG, NULL, "hidden", NULL);
    pm_svc_log(PM_SVC_LOG_INFO, "rid-1", "hello \"world\"\n", "\"n\":%d", 42);
    pm_svc_access a = {.method = "POST", .path = "/v1/x\"\x01\xff\xc3\xa9", .request_id = "rid-2",
                       .cache = "HIT", .status = 200, .bytes = 1234, .duration_ms = 1.5};
    pm_svc_log_access(&a);
    pm_svc_access b = {.method = "GET", .path = "/healthz", .request_id = "rid-3", .status = 0};
    pm_svc_log_access(&b);
}

Test(log, lines_are_json_with_request_ids) {
    char *out = capture(write_lines);
    cr_assert_null(strstr(out, "hidden"));
    int lines = 0;
    for (char *line = out; *line; lines++) {
        char *eol = strchr(line, '\n');
        cr_assert_not_null(eol);
        json_error_t err;
        json_t *j = json_loadb(line, (size_t)(eol - line), 0, &err);
        cr_assert_not_null(j, "not JSON: %.*s (%s)", (int)(eol - line), line, err.text);
        cr_assert(json_is_string(json_object_get(j, "ts")));
        cr_assert(json_is_string(json_object_get(j, "request_id")));
        if (lines == 0) {
            cr_assert_str_eq(json_string_value(json_object_get(j, "msg")), "hello \"world\"\n");
            cr_assert_eq(json_integer_value(json_object_get(j, "n")), 42);
        } else if (lines == 1) {
            cr_assert_str_eq(json_string_value(json_object_get(j, "msg")), "access");
            cr_assert_str_eq(json_string_value(json_object_get(j, "method")), "POST");
            cr_assert_str_eq(json_string_value(json_object_get(j, "path")),
                             "/v1/x\"\x01\xef\xbf\xbd\xc3\xa9", "invalid UTF-8 becomes U+FFFD");
            cr_assert_eq(json_integer_value(json_object_get(j, "status")), 200);
            cr_assert_eq(json_integer_value(json_object_get(j, "bytes")), 1234);
            cr_assert_str_eq(json_string_value(json_object_get(j, "cache")), "HIT");
            cr_assert_float_eq(json_real_value(json_object_get(j, "duration_ms")), 1.5, 1e-9);
        } else {
            cr_assert(json_is_null(json_object_get(j, "cache")));
        }
        json_decref(j);
        line = eol + 1;
    }
    cr_assert_eq(lines, 3);
}

static void write_off(void) {
    pm_svc_log_set_level(PM_SVC_LOG_OFF);
    pm_svc_log(PM_SVC_LOG_ERROR, NULL, "nothing", NULL);
    pm_svc_log_set_level(PM_SVC_LOG_WARN);
    pm_svc_access a = {.method = "GET", .path = "/", .request_id = "r", .status = 200};
    pm_svc_log_access(&a);
    pm_svc_log(PM_SVC_LOG_WARN, NULL, "kept", NULL);
    pm_svc_log_set_level(PM_SVC_LOG_INFO);
}

Test(log, levels_filter) {
    char *out = capture(write_off);
    cr_assert_null(strstr(out, "nothing"));
    cr_assert_null(strstr(out, "access"), "access lines are info");
    cr_assert_not_null(strstr(out, "\"msg\":\"kept\""));
    cr_assert_eq(pm_svc_log_level_parse("debug"), PM_SVC_LOG_DEBUG);
    cr_assert_eq(pm_svc_log_level_parse("off"), PM_SVC_LOG_OFF);
    cr_assert_eq(pm_svc_log_level_parse("INFO"), -1);
}

static void write_long(void) {
    char path[10000];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    pm_svc_access a = {.method = "GET", .path = path, .request_id = "r", .status = 404};
    pm_svc_log_access(&a);
}

Test(log, a_huge_path_still_gives_one_valid_line) {
    char *out = capture(write_long);
    char *eol = strchr(out, '\n');
    cr_assert_not_null(eol);
    cr_assert_eq(eol[1], '\0');
    json_t *j = json_loadb(out, (size_t)(eol - out), 0, NULL);
    cr_assert_not_null(j);
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), 404);
    json_decref(j);
}

Test(log, json_escape_cuts_on_character_boundaries) {
    char out[7];
    /* "é" is two bytes; an escape is never split either. */
    cr_assert_eq(pm_svc_json_escape(out, sizeof out, "abcde\xc3\xa9"), 5);
    cr_assert_str_eq(out, "abcde");
    cr_assert_eq(pm_svc_json_escape(out, sizeof out, "abcd\n"), 6);
    cr_assert_str_eq(out, "abcd\\n");
    cr_assert_eq(pm_svc_json_escape(out, sizeof out, "abcde\n"), 5);
    pm_svc_buf b;
    pm_svc_buf_init(&b);
    pm_svc_buf_json_str(&b, "\xe0\x80\x80|\xed\xa0\x80|\xf0\x9f\x98\x80|\t");
    cr_assert_str_eq(b.data, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xf0\x9f\x98\x80|\\t");
    pm_svc_buf_free(&b);
}
