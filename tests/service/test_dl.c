/* service/dl.c: a library opened on first need, its functions found by
 * name into a table, and every way that fails said by name. libm stands
 * in for libmicrohttpd and meshoptimizer (always present, C functions
 * with known answers). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "dl.h"

static const char libm_marked[] = PM_SVC_DL_MARK "libm.so.6";
static const char nope_marked[] = PM_SVC_DL_MARK "libpm-no-such-library.so.9";

typedef struct {
    double (*cos)(double);
    double (*hypot)(double, double);
} two_fns;
static const char *const two_names[] = {"cos", "hypot"};
static const char *const bad_names[] = {"cos", "pm_no_such_function"};

Test(dl, finds_every_function_in_order) {
    two_fns t = {0};
    pm_svc_dl lib = PM_SVC_DL_INIT(libm_marked, two_names, &t);
    cr_assert_eq(lib.count, 2);
    char err[320] = "untouched";
    cr_assert_eq(pm_svc_dl_load(&lib, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(err, "untouched", "no message on success");
    cr_assert(t.cos && t.hypot);
    cr_expect_eq(t.cos(0.0), 1.0);
    cr_expect_eq(t.hypot(3.0, 4.0), 5.0);
    cr_expect_eq(t.hypot(5.0, 12.0), hypot(5.0, 12.0));
    pm_svc_dl_need(&lib); /* loaded: returns */
    cr_expect_eq(pm_svc_dl_load(&lib, err, sizeof err), 0, "a second call gives the first answer");
}

Test(dl, missing_library_is_named) {
    two_fns t = {0};
    pm_svc_dl lib = PM_SVC_DL_INIT(nope_marked, two_names, &t);
    char err[320];
    cr_assert_eq(pm_svc_dl_load(&lib, err, sizeof err), -1);
    cr_expect(strstr(err, "cannot load libpm-no-such-library.so.9: ") == err, "%s", err);
    cr_expect(strstr(err, "libpm-no-such-library.so.9: cannot open") != NULL, "dlerror kept: %s", err);
    cr_expect(t.cos == NULL && t.hypot == NULL);
    char again[320];
    cr_expect_eq(pm_svc_dl_load(&lib, again, sizeof again), -1);
    cr_expect_str_eq(again, err, "the first answer, not a second attempt");
}

Test(dl, missing_function_is_named) {
    two_fns t = {0};
    pm_svc_dl lib = PM_SVC_DL_INIT(libm_marked, bad_names, &t);
    char err[320];
    cr_assert_eq(pm_svc_dl_load(&lib, err, sizeof err), -1);
    cr_expect_str_eq(err, "cannot load libm.so.6: no pm_no_such_function in it");
}

Test(dl, short_error_buffer_is_cut_not_overrun) {
    two_fns t = {0};
    pm_svc_dl lib = PM_SVC_DL_INIT(nope_marked, two_names, &t);
    char err[16];
    memset(err, 'x', sizeof err);
    cr_assert_eq(pm_svc_dl_load(&lib, err, 12), -1);
    cr_expect_eq(strlen(err), 11);
    cr_expect_eq(err[12], 'x', "nothing written past errcap");
}

Test(dl, need_aborts_naming_the_library, .signal = SIGABRT) {
    two_fns t = {0};
    pm_svc_dl lib = PM_SVC_DL_INIT(nope_marked, two_names, &t);
    pm_svc_dl_need(&lib);
}

static two_fns race_table;
static pm_svc_dl race_lib = PM_SVC_DL_INIT(libm_marked, two_names, &race_table);

static void *race_load(void *arg) {
    char err[320];
    *(int *)arg = pm_svc_dl_load(&race_lib, err, sizeof err);
    return NULL;
}

Test(dl, threads_loading_at_once_all_see_the_table) {
    pthread_t th[8];
    int rc[8];
    for (int i = 0; i < 8; i++) cr_assert_eq(pthread_create(&th[i], NULL, race_load, &rc[i]), 0);
    for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 8; i++) cr_expect_eq(rc[i], 0, "thread %d", i);
    cr_expect_eq(race_table.cos(0.0), 1.0);
}
