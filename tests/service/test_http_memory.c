/* Black box: the memory budget. A job's output counts against its limit
 * (422 naming max_job_mb), results held by slow clients count against the
 * shared cap (503 naming max_inflight_mb), the process stays under the
 * documented bound (--cache-mb + --max-inflight-mb + 64 MiB), and RSS comes
 * back after big jobs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "svc_fixtures.h"
#include "test_http_memory_town.h"

static pm_test_server srv;

static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

/* A town grid of n x n nodes 100 m apart, every street with sidewalks,
 * sampled every seg metres: 6 x 6 at 0.5 m is a 14.6 MB JSON answer (a
 * 9.8 MB GLB) from a 3.4 KB request. Its job needs 41 MiB with the JSON
 * answer, 35 MiB as a 7.9 MB quantized GLB without metadata (measured by
 * trying each --max-job-mb from 32 to 44 on network 1.3.1; on
 * network 1.4.0, whose junction reuse alone took the JSON job from 48 to
 * 44 MiB before the scratch arena, the JSON answer is still refused at 38,
 * below; every higher
 * cap fits too, tests/service/test_http_memory_caps.c. Before the stitch's
 * working arrays went to a scratch arena: 45 and 39 MiB; before the
 * arena's block sizes stopped following the room left, the GLB fitted at
 * 38, not at 40, and from 42 on; 66 with the JSON answer before the arena
 * reused memory given back).
 * shift moves one node by a millimetre: another cache key, the same size.
 * Since network 1.5.0 (a street in the fewest chords, not a power of two)
 * the same answer sizes come at 0.38 m (14.8 MB JSON, 7.8 MB quantized
 * GLB; 0.5 m now gives 9.9 MB JSON). Since the stitch sizes the curb and
 * sidewalk primitives once instead of doubling them (issue 14, session 8,
 * the same bytes) the job needs 36 MiB with the JSON answer (41 before)
 * and 28 MiB as the quantized GLB without metadata (34 before), tried at
 * each cap from 24 to 46: the caps below sit between the two again. Since
 * the roads' copies are given back after their stitch and the asphalt's
 * and sidewalk's normals come after the overlap check (issue 14, session
 * 18, the same bytes): 30 MiB with the JSON answer (29 refused) and 24 as
 * the quantized GLB (22 refused). */
#define TOWN_SEG 0.38
static char *town(int n, double seg, int shift) {
    json_t *doc = pm_test_town(n, seg, shift);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

/* Samples the server's RSS every 5 ms while a test runs. */
typedef struct sampler {
    pthread_t t;
    pid_t pid;
    volatile int stop;
    double peak;
} sampler;

static void *sample(void *arg) {
    sampler *s = arg;
    while (!s->stop) {
        double r = pm_test_rss_mib(s->pid);
        if (r > s->peak) s->peak = r;
        svc_sleep_ms(5);
    }
    return NULL;
}

static void sampler_start(sampler *s, pid_t pid) {
    *s = (sampler){.pid = pid};
    pthread_create(&s->t, NULL, sample, s);
}

static double sampler_stop(sampler *s) {
    s->stop = 1;
    pthread_join(s->t, NULL);
    return s->peak;
}

/* Waits (up to 10 s) for RSS to come down to at most want MiB. */
static double rss_settles(pid_t pid, double want) {
    double r = pm_test_rss_mib(pid), give_up = svc_now() + 10;
    while (r > want && svc_now() < give_up) {
        svc_sleep_ms(20);
        r = pm_test_rss_mib(pid);
    }
    return r;
}

static const char *detail(const pm_http_response *r, char *buf, size_t cap) {
    json_t *j = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    snprintf(buf, cap, "%s", j ? json_string_value(json_object_get(j, "detail")) : "");
    json_decref(j);
    return buf;
}

/* Starts the server with args and watches its RSS; returns the idle RSS. */
static double start_watched(const char *const *args, sampler *smp) {
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    double idle = pm_test_rss_mib(srv.pid);
    sampler_start(smp, srv.pid);
    return idle;
}

/* Allowance over the documented bound's own terms: none. Allowance for
 * "RSS came back": what the process may keep after big jobs (its code,
 * heaps of small blocks, thread stacks touched), measured at 1 to 3 MiB
 * above its idle RSS with the budget and 60 to 110 MiB without it. */
#define BACK_MIB 24.0

/* The peak stayed under bound_mib, and RSS comes back near idle. */
static void check_rss(sampler *smp, double bound_mib, double idle) {
    double peak = sampler_stop(smp);
    cr_assert_leq(peak, bound_mib, "peak RSS %.1f MiB over the bound %.0f", peak, bound_mib);
    double after = rss_settles(srv.pid, idle + BACK_MIB);
    cr_assert_leq(after, idle + BACK_MIB, "RSS stays at %.1f MiB (idle %.1f, peak %.1f)", after,
                  idle, peak);
}

Test(http_memory, output_counts_against_the_job_limit, .fini = stop, .timeout = 60) {
    /* The job with a smaller answer fits 27 MiB (from 24 on); with its
     * JSON answer (from 30 on) it does not. */
    const char *args[] = {"--max-job-mb", "27", "--cache-mb", "8", "--max-inflight-mb", "128",
                          "--workers", "2", "--deadline-ms", "60000", NULL};
    sampler smp;
    double idle = start_watched(args, &smp);
    char buf[512];
    for (int i = 0; i < 2; i++) {
        char *body = town(6, TOWN_SEG, i);
        pm_http_response r;
        pm_http_post_json(&srv, "/v1/networks", body, &r);
        cr_assert_eq(r.status, 422, "%ld %.300s", r.status, r.body);
        cr_assert_not_null(strstr(detail(&r, buf, sizeof buf), "max_job_mb (27 MiB"), "%s", buf);
        cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf),
                         "application/problem+json");
        pm_http_response_free(&r);
        free(body);
    }
    /* The same generation with a smaller answer fits: what went past the
     * limit was the answer. */
    char *same = town(6, TOWN_SEG, 2);
    pm_http_response r;
    pm_http_post_json(&srv, "/v1/networks?format=glb&quantize=true&metadata=none", same, &r);
    cr_assert_eq(r.status, 200, "%ld %.300s", r.status, r.body);
    cr_assert_lt(r.body_len, 9000000u);
    pm_http_response_free(&r);
    free(same);
    /* A small network still works. */
    char *small = town(3, 5, 0);
    pm_http_post_json(&srv, "/v1/networks", small, &r);
    cr_assert_eq(r.status, 200, "%ld %.300s", r.status, r.body);
    pm_http_response_free(&r);
    free(small);
    cr_expect_eq(pm_test_metric(&srv, "procmesh_memory_refused_total{limit=\"max_job_mb\"}"), 2);
    check_rss(&smp, 8 + 128 + 64, idle);
}

/* Sends a request on a raw socket and reads nothing: the answer stays
 * with the server, held by a slow client. Returns the socket. */
static int hold(const char *path, const char *body) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)srv.port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int small = 4096;   /* keep what the kernel buffers small */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     path, strlen(body));
    cr_assert_eq(write(fd, head, (size_t)n), n);
    cr_assert_eq(write(fd, body, strlen(body)), (ssize_t)strlen(body));
    return fd;
}

Test(http_memory, held_results_count_against_the_inflight_cap, .fini = stop, .timeout = 60) {
    /* One town job needs 30 MiB: alone it fits the 38 MiB cap; with
     * another town's answer still unsent (14 to 24 MB, checked below), it
     * does not. */
    const char *args[] = {"--max-job-mb", "200", "--cache-mb", "0", "--max-inflight-mb", "38",
                          "--workers", "2", "--deadline-ms", "60000", NULL};
    sampler smp;
    double idle = start_watched(args, &smp);
    char *a = town(6, TOWN_SEG, 10), *b = town(6, TOWN_SEG, 11), buf[512];
    int fd = hold("/v1/networks", a);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_generations_total{generator=\"network\","
                                       "result=\"ok\"}", 1), 1);
    /* The answer is 14.6 MB, asked for as identity: no compressed form is
     * made for it (a form asked for would be in flight with it). */
    double held = svc_wait_metric_below(&srv, "procmesh_memory_inflight_bytes", 24e6);
    cr_assert_lt(held, 24e6, "once its job ended, only the answer and its forms are in flight: %.0f", held);
    cr_assert_geq(held, 14e6, "the unsent answer is in flight: %.0f", held);
    pm_http_response r;
    pm_http_post_json(&srv, "/v1/networks", b, &r);
    cr_assert_eq(r.status, 503, "%ld %.300s", r.status, r.body);
    cr_assert_not_null(strstr(detail(&r, buf, sizeof buf), "max_inflight_mb (38 MiB"), "%s", buf);
    cr_assert_str_eq(svc_header(&r, "Retry-After", buf, sizeof buf), "1");
    pm_http_response_free(&r);
    /* The slow client leaves: its answer is freed, and the retry fits. */
    close(fd);
    cr_assert_eq(svc_wait_metric_below(&srv, "procmesh_memory_inflight_bytes", 0), 0);
    pm_http_post_json(&srv, "/v1/networks", b, &r);
    cr_assert_eq(r.status, 200, "%ld %.300s", r.status, r.body);
    cr_assert_gt(r.body_len, 14000000u);
    pm_http_response_free(&r);
    free(a);
    free(b);
    /* Sent: nothing is in flight (the last reference goes just after). */
    cr_assert_eq(svc_wait_metric_below(&srv, "procmesh_memory_inflight_bytes", 0), 0);
    check_rss(&smp, 0 + 38 + 64, idle);
}
