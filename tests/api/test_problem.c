/* api/problem.c: problem documents stay valid JSON whatever bytes the
 * client sent, however the texts are cut. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/problem.h"

static json_t *dumped_and_reloaded(const pm_api_problem *p) {
    json_t *j = pm_api_problem_json(p, "rid");
    cr_assert_not_null(j, "problem_json refused the texts");
    char *s = json_dumps(j, JSON_COMPACT);
    cr_assert_not_null(s);
    json_decref(j);
    json_error_t e;
    json_t *back = json_loads(s, 0, &e);
    cr_assert_not_null(back, "%s: %s", e.text, s);
    free(s);
    return back;
}

static const char *detail(const json_t *j) {
    return json_string_value(json_object_get(j, "detail"));
}

Test(problem, invalid_utf8_in_a_detail_becomes_question_marks) {
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_problem_set(&p, 404, "not-found", "Not Found", "no route /v1/%s", "a\xff\xc3(\xed\xa0\x80z");
    json_t *j = dumped_and_reloaded(&p);
    cr_assert_str_eq(detail(j), "no route /v1/a?" "?(?" "??z");
    json_decref(j);
    pm_api_problem_free(&p);
}

Test(problem, valid_utf8_is_kept) {
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_problem_set(&p, 422, "validation", "Invalid", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    json_t *j = dumped_and_reloaded(&p);
    cr_assert_str_eq(detail(j), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    json_decref(j);
    pm_api_problem_free(&p);
}

Test(problem, a_cut_through_a_character_keeps_the_document) {
    char key[2001];
    for (int i = 0; i < 1000; i++) memcpy(key + 2 * i, "\xc3\xa9", 2);
    key[2000] = '\0';
    for (int shift = 0; shift < 2; shift++) {   /* the cut lands on both bytes */
        pm_api_problem p;
        pm_api_problem_init(&p);
        char ptr[2010];
        snprintf(ptr, sizeof ptr, "/%s%s", shift ? "x" : "", key);
        pm_api_problem_field(&p, ptr, "unknown field \"%s\"", key);
        pm_api_problem_set(&p, 404, "not-found", "Not Found", "no route /%s%s", shift ? "x" : "", key);
        json_t *j = dumped_and_reloaded(&p);
        cr_assert_gt(strlen(detail(j)), 100);
        json_decref(j);
        pm_api_problem_free(&p);
    }
}

Test(problem, field_pointers_and_messages_are_cleaned) {
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_problem_field(&p, "/k\xff", "unknown value \"\xfe\"");
    json_t *j = dumped_and_reloaded(&p);
    json_t *e = json_array_get(json_object_get(j, "errors"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(e, "pointer")), "/k?");
    cr_assert_str_eq(json_string_value(json_object_get(e, "message")), "unknown value \"?\"");
    cr_assert_str_eq(detail(j), "k? unknown value \"?\"");
    json_decref(j);
    pm_api_problem_free(&p);
}
