/* Black box: a warm server keeps freed job memory for the next jobs
 * (--retain-mb, docs/svc.md "Memory"): its jobs stop faulting their pages
 * in afresh, what it keeps is shown and counted within --max-inflight-mb,
 * it is given back once the server is idle (RSS comes back), and the
 * answers are the bytes a server without it gives. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "svc_fixtures.h"
#include "svc_random.h"
#include "test_http_memory_town.h"

static pm_test_server srv, plain;

static void stop_both(void) {
    cr_expect_eq(pm_test_server_stop(&srv), 0, "clean exit");
    cr_expect_eq(pm_test_server_stop(&plain), 0, "clean exit");
}

static void stop_one(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

static long minflt(pid_t pid) {
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    long v = -1;
    /* After the name: state ppid pgrp session tty tpgid flags minflt. */
    cr_assert_eq(sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %ld", &v), 1);
    return v;
}

static int by_value(const void *x, const void *y) {
    long a = *(const long *)x, b = *(const long *)y;
    return a < b ? -1 : a > b;
}

/* The median of the page faults a server takes per job over jobs 3 to 7 of
 * seven distinct towns (8 x 8, sidewalks, a 2.6 MB GLB each): one job that
 * follows a pause (the host is shared) does not move it. */
static long faults_per_job(const pm_test_server *s, int salt) {
    long d[5];
    for (int i = 0; i < 7; i++) {
        long before = minflt(s->pid);
        json_t *doc = pm_test_town(8, 2.0, salt + i);
        char *body = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        pm_http_response r;
        pm_http_post_json(s, "/v1/networks?format=glb", body, &r);
        cr_assert_eq(r.status, 200, "%ld %.300s", r.status, r.body);
        pm_http_response_free(&r);
        free(body);
        /* The job's end (its trim) may follow its answer. */
        svc_wait_metric_below(s, "procmesh_memory_inflight_bytes", 0);
        if (i >= 2) d[i - 2] = minflt(s->pid) - before;
    }
    qsort(d, 5, sizeof d[0], by_value);
    return d[2];
}

Test(http_memory_retain, warm_jobs_reuse_memory_and_it_goes_back_when_idle, .fini = stop_one,
     .timeout = 60) {
    const char *plain_args[] = {"--cache-mb", "0", "--workers", "1", "--retain-mb", "0", NULL};
    cr_assert_eq(pm_test_server_start(&srv, plain_args), 0);
    long without = faults_per_job(&srv, 0);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_memory_retained_bytes"), 0, "--retain-mb 0 keeps nothing");
    cr_assert_eq(pm_test_server_stop(&srv), 0);

    const char *args[] = {"--cache-mb", "0", "--workers", "1", "--max-inflight-mb", "128", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    double idle = pm_test_rss_mib(srv.pid);
    long with = faults_per_job(&srv, 100);
    cr_assert_lt(with * 4, without, "a warm job takes %ld page faults, %ld without --retain-mb", with,
                 without);
    double kept = pm_test_metric(&srv, "procmesh_memory_retained_bytes");
    cr_assert_gt(kept, 1 << 20, "kept for the next job: %.0f", kept);
    cr_assert_leq(kept, 32 << 20, "at most a quarter of --max-inflight-mb: %.0f", kept);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_memory_inflight_bytes"), 0, "kept is not in flight");
    /* Idle: given back after PM_SVC_RETAIN_IDLE_MS (3 s), and RSS comes back (the allowance
     * of test_http_memory.c). */
    cr_assert_eq(svc_wait_metric_below(&srv, "procmesh_memory_retained_bytes", 0), 0);
    cr_assert_geq(pm_test_metric(&srv, "procmesh_memory_released_bytes_total"), kept);
    double after = pm_test_rss_mib(srv.pid), give_up = svc_now() + 10;
    while (after > idle + 24 && svc_now() < give_up) {
        svc_sleep_ms(20);
        after = pm_test_rss_mib(srv.pid);
    }
    cr_assert_leq(after, idle + 24, "RSS stays at %.1f MiB (idle %.1f)", after, idle);
}

/* Random requests of every route and format, and towns past the job
 * limit: the same status and bytes from a server that keeps memory
 * between jobs (with the cache off, every job runs on pages the one
 * before wrote) as from one that gives everything back. */
Test(http_memory_retain, answers_are_the_bytes_of_a_server_without_it, .fini = stop_both,
     .timeout = 120) {
    const char *args[] = {"--cache-mb", "0", "--workers", "2", "--max-job-mb", "24", NULL};
    const char *plain_args[] = {"--cache-mb", "0", "--workers", "2", "--max-job-mb", "24",
                                "--retain-mb", "0", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    cr_assert_eq(pm_test_server_start(&plain, plain_args), 0);
    static const char *routes[] = {"/v1/junctions", "/v1/roads", "/v1/networks", "/v1/dungeons",
                                   "/v1/grids"};
    static const char *formats[] = {"json", "gltf", "glb"};
    pm_rng g;
    pm_rng_seed(&g, 914);
    char body[16384], path[64];
    int ok = 0, refused = 0;
    for (int k = 0; k < 60; k++) {
        int r = (int)pm_rng_below(&g, 5);
        char *big = NULL;
        if (k % 10 == 9) {   /* a town, some past --max-job-mb */
            json_t *doc = pm_test_town(6, k % 20 == 9 ? 0.38 : 2.0, k);
            big = json_dumps(doc, JSON_COMPACT);
            json_decref(doc);
            r = 2;
        } else {
            random_body(&g, r, body, sizeof body);
        }
        snprintf(path, sizeof path, "%s?format=%s", routes[r], formats[pm_rng_below(&g, 3)]);
        pm_http_response a, b;
        pm_http_post_json(&srv, path, big ? big : body, &a);
        pm_http_post_json(&plain, path, big ? big : body, &b);
        cr_assert_eq(a.status, b.status, "%s: %ld, without it %ld", path, a.status, b.status);
        cr_assert_eq(a.body_len, b.body_len, "%s", path);
        if (a.status == 200) {
            cr_assert(memcmp(a.body, b.body, a.body_len) == 0, "%s: the bytes differ", path);
            char ea[80], eb[80];
            cr_assert_str_eq(svc_header(&a, "ETag", ea, sizeof ea), svc_header(&b, "ETag", eb, sizeof eb));
            ok++;
        } else {
            refused++;
        }
        pm_http_response_free(&a);
        pm_http_response_free(&b);
        free(big);
    }
    cr_assert_geq(ok, 40, "only %d answered", ok);
    cr_assert_geq(refused, 1, "no job went past its limit");
}
