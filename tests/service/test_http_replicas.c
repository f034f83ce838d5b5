/* Replicas with a shared Redis behind nginx, all real processes on
 * loopback: redis-server, three procmesh and nginx running
 * deploy/nginx.conf (upstreams and listen port rewritten). */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procs.h"

#define NREP 3

typedef struct cluster {
    char *dir;
    pm_tp_redis redis;
    pid_t rep[NREP];
    int port[NREP];
    pid_t nginx;
    int nport;
} cluster;

static cluster cl;

typedef struct resp {
    long status;
    char xcache[16];
    char etag[96];
    char *body;
    size_t len;
} resp;

/* ---- HTTP -------------------------------------------------------------- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
    resp *r = ud;
    char *b = realloc(r->body, r->len + sz * n + 1);
    if (!b) return 0;
    memcpy(b + r->len, p, sz * n);
    r->body = b;
    r->len += sz * n;
    b[r->len] = '\0';
    return sz * n;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap) {
    size_t nl = strlen(name);
    if (n <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':') return;
    const char *v = line + nl + 1;
    while (*v == ' ') v++;
    size_t vl = (size_t)(line + n - v);
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n')) vl--;
    if (vl >= cap) vl = cap - 1;
    memcpy(out, v, vl);
    out[vl] = '\0';
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
    resp *r = ud;
    header_value(p, sz * n, "X-Cache", r->xcache, sizeof r->xcache);
    header_value(p, sz * n, "ETag", r->etag, sizeof r->etag);
    return sz * n;
}

/* GET (json NULL) or POST json to http://127.0.0.1:port/path, with a
 * reusable handle (NULL: a fresh one), so load threads keep their
 * connection alive as real clients do. */
static void request(CURL *h, int port, const char *path, const char *json, resp *r) {
    memset(r, 0, sizeof *r);
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    CURL *c = h ? h : curl_easy_init();
    struct curl_slist *hdr = json ? curl_slist_append(NULL, "Content-Type: application/json") : NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 15000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    if (json) curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    else curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdr);
    if (!h) curl_easy_cleanup(c);
}

static void get_with(CURL *h, int port, const char *path, resp *r) { request(h, port, path, NULL, r); }

static void get(int port, const char *path, resp *r) { get_with(NULL, port, path, r); }

static void resp_free(resp *r) {
    free(r->body);
    r->body = NULL;
}

/* The first seeded generator this build serves (generators land one by
 * one; any of them shows the caching): GET <path>?seed=N and POST <path>
 * {"seed": N} must both answer 200. */
static const char *route;
static const char *const candidates[] = {"/v1/dungeons", "/v1/grids", NULL};

static void path_for(unsigned seed, char *out, size_t cap) {
    snprintf(out, cap, "%s?seed=%u", route, seed);
}

static void post_seed(CURL *h, int port, unsigned seed, resp *r) {
    char json[64];
    snprintf(json, sizeof json, "{\"seed\": %u}", seed);
    request(h, port, route, json, r);
}

static int wait_metric(int port, const char *name, unsigned long long want, int timeout_ms);
static void wait_cluster_ready(void);

static void pick_route(void) {
    for (int i = 0; candidates[i] && !route; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s?seed=1", candidates[i]);
        resp r;
        get(cl.port[0], p, &r);
        resp_free(&r);
        if (r.status == 200) route = candidates[i];
    }
    cr_assert_not_null(route, "no generator answers GET ?seed=1 (tried /v1/dungeons, /v1/grids)");
    /* A replica stores in Redis after it answers: wait for that SET, or it
     * could land during a test and be taken for the one the test awaits. */
    cr_assert(wait_metric(cl.port[0], "procmesh_redis_stores_total", 1, 3000),
              "replica 0 never stored its first result in Redis");
    resp r;
    post_seed(NULL, cl.port[0], 1, &r);
    cr_assert_eq(r.status, 200, "POST %s {\"seed\": 1} answered %ld", route, r.status);
    resp_free(&r);
}

/* ---- the processes ----------------------------------------------------- */

/* The Redis timeout is generous: a loaded CI host can stall a thread for
 * tens of milliseconds, and one timeout marks the tier down until it
 * reconnects, which would turn the cross-replica HIT under test into a
 * MISS. Killing Redis is refused at once, whatever the timeout. */
static pid_t start_replica(int i) {
    char port[32], url[64], log[600];
    snprintf(port, sizeof port, "PROCMESH_PORT=%d", cl.port[i]);
    snprintf(url, sizeof url, "PROCMESH_REDIS_URL=redis://127.0.0.1:%d", cl.redis.port);
    snprintf(log, sizeof log, "%s/replica-%d.log", cl.dir, i);
    char *env[] = {port, url, "PROCMESH_BIND=127.0.0.1", "PROCMESH_THREADS=4",
                   "PROCMESH_WORKERS=2", "PROCMESH_DRAIN_MS=5000", "PROCMESH_LOG_LEVEL=warn",
                   "PROCMESH_REDIS_TIMEOUT_MS=1000", "PROCMESH_CACHE_MB=64", NULL};
    char *argv[] = {PM_BINARY, NULL};
    pid_t pid = pm_tp_spawn(argv, env, log);
    cr_assert_gt(pid, 0, "cannot start %s", PM_BINARY);
    cr_assert_eq(pm_tp_wait_port(cl.port[i], pid, 10000), 0, "replica %d did not listen", i);
    return pid;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* deploy/nginx.conf with procmesh-N:port -> 127.0.0.1:<replica N port>,
 * the listen port on loopback, temp files in the test directory and one
 * process (so it dies with the test). Everything else stays as shipped. */
static void write_nginx_conf(const char *path) {
    char *src = slurp(PM_SOURCE_DIR "/deploy/nginx.conf");
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    fprintf(out, "master_process off;\n");
    int servers = 0, listens = 0;
    for (char *save = NULL, *line = strtok_r(src, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        int n;
        char *s = strstr(line, "server procmesh-");
        char *l = strstr(line, "listen ");
        if (s && sscanf(s, "server procmesh-%d:", &n) == 1 && n >= 1 && n <= NREP) {
            const char *rest = strchr(s, ' ');
            rest = strchr(rest + 1, ' ');
            fprintf(out, "        server 127.0.0.1:%d%s\n", cl.port[n - 1], rest ? rest : ";");
            servers++;
        } else if (l && strchr(l, ';') && !strstr(line, "#")) {
            fprintf(out, "        listen 127.0.0.1:%d;\n", cl.nport);
            listens++;
        } else if (strstr(line, "http {")) {
            fprintf(out, "%s\n", line);
            const char *kinds[] = {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"};
            for (int k = 0; k < 5; k++)
                fprintf(out, "    %s_temp_path %s/%s_temp;\n", kinds[k], cl.dir, kinds[k]);
        } else {
            fprintf(out, "%s\n", line);
        }
    }
    fclose(out);
    free(src);
    cr_assert_eq(servers, NREP, "nginx.conf: expected %d upstream servers, rewrote %d", NREP, servers);
    cr_assert_eq(listens, 1);
}

static void start_nginx(void) {
    char conf[600], err[600], glob[700];
    snprintf(conf, sizeof conf, "%s/nginx.conf", cl.dir);
    snprintf(err, sizeof err, "%s/nginx-error.log", cl.dir);
    snprintf(glob, sizeof glob, "daemon off; pid %s/nginx.pid;", cl.dir);
    write_nginx_conf(conf);
    char *argv[] = {"nginx", "-p", cl.dir, "-c", conf, "-e", err, "-g", glob, NULL};
    cl.nginx = pm_tp_spawn(argv, NULL, err);
    cr_assert_gt(cl.nginx, 0, "cannot start nginx");
    cr_assert_eq(pm_tp_wait_port(cl.nport, cl.nginx, 10000), 0, "nginx did not listen (see %s)", err);
}

static void up(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    memset(&cl, 0, sizeof cl);
    cl.dir = pm_tp_tmpdir("replicas");
    cr_assert_not_null(cl.dir);
    chmod(cl.dir, 0755); /* nginx may drop privileges to nobody */
    cr_assert_eq(pm_tp_redis_start(&cl.redis), 0, "redis-server did not start");
    for (int i = 0; i < NREP; i++) cl.port[i] = pm_tp_free_port();
    cl.nport = pm_tp_free_port();
    for (int i = 0; i < NREP; i++) cl.rep[i] = start_replica(i);
    start_nginx();
    wait_cluster_ready();   /* so the first result below does reach Redis */
    pick_route();
}

/* A replica that has just started may still be connecting to Redis (its
 * tier reports degraded until then): wait, as a load balancer waits for
 * readiness, before asking it to share. */
static int wait_degraded(int port, int want, int timeout_ms);
static void wait_cluster_ready(void) {
    for (int i = 0; i < NREP; i++)
        cr_assert(wait_degraded(cl.port[i], 0, 10000), "replica %d never connected to Redis", i);
}

static void down(void) {
    if (cl.nginx > 0) pm_tp_stop(cl.nginx, SIGTERM, 3000);
    for (int i = 0; i < NREP; i++)
        if (cl.rep[i] > 0) pm_tp_stop(cl.rep[i], SIGKILL, 3000);
    pm_tp_redis_cleanup(&cl.redis);
    if (cl.dir) pm_tp_rmrf(cl.dir);
    free(cl.dir);
    cl.dir = NULL;
    curl_global_cleanup();
}

static unsigned long long metric(int port, const char *name) {
    resp r;
    get(port, "/metrics", &r);
    cr_assert_eq(r.status, 200);
    char pat[160];
    snprintf(pat, sizeof pat, "\n%s ", name);
    const char *p = r.body ? strstr(r.body, pat) : NULL;
    cr_assert(p, "metric %s missing from /metrics", name);
    unsigned long long v = strtoull(p + strlen(pat), NULL, 10);
    resp_free(&r);
    return v;
}

/* Polls a counter until it reaches at least want. */
static int wait_metric(int port, const char *name, unsigned long long want, int timeout_ms) {
    double end = pm_tp_now_ms() + timeout_ms;
    while (metric(port, name) < want) {
        if (pm_tp_now_ms() > end) return 0;
        pm_tp_sleep_ms(10);
    }
    return 1;
}

/* Polls /readyz until its body does (want=1) or does not contain
 * "degraded"; it must stay 200 throughout. */
static int wait_degraded(int port, int want, int timeout_ms) {
    double end = pm_tp_now_ms() + timeout_ms;
    for (;;) {
        resp r;
        get(port, "/readyz", &r);
        cr_assert_eq(r.status, 200, "/readyz must stay 200 with Redis %s", want ? "down" : "up");
        int deg = r.body && strstr(r.body, "degraded") != NULL;
        resp_free(&r);
        if (deg == want) return 1;
        if (pm_tp_now_ms() > end) return 0;
        pm_tp_sleep_ms(50);
    }
}

/* When a replica misses where it should hit: what its tier says (skipped
 * lookups, errors, reconnects) and its log, so a rare failure on a loaded
 * CI host explains itself. */
static void explain_miss(int i) {
    static const char *const names[] = {
        "procmesh_redis_up", "procmesh_redis_hits_total", "procmesh_redis_misses_total",
        "procmesh_redis_skipped_total", "procmesh_redis_reconnects_total",
        "procmesh_redis_errors_total{op=\"get\"}", "procmesh_redis_errors_total{op=\"connect\"}",
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        cr_log_error("replica %d: %s %llu", i, names[k], metric(cl.port[i], names[k]));
    char log[600];
    snprintf(log, sizeof log, "%s/replica-%d.log", cl.dir, i);
    char *text = slurp(log);
    cr_log_error("replica %d log:\n%s", i, text);
    free(text);
}

TestSuite(replicas, .init = up, .fini = down, .timeout = 60);

/* ---- the checks -------------------------------------------------------- */

Test(replicas, a_result_from_one_replica_is_a_hit_on_another) {
    wait_cluster_ready();
    unsigned long long stores[NREP];
    for (int i = 0; i < NREP; i++) stores[i] = metric(cl.port[i], "procmesh_redis_stores_total");
    for (int i = 0; i < NREP; i++) {
        char p[128];
        path_for(1000u + (unsigned)i, p, sizeof p);
        int a = i, b = (i + 1) % NREP;
        resp first, second, third;
        get(cl.port[a], p, &first);
        cr_assert_eq(first.status, 200);
        cr_expect_str_eq(first.xcache, "MISS", "replica %d: fresh request", a);
        /* The replica stores in Redis after answering: wait for the SET. */
        cr_assert(wait_metric(cl.port[a], "procmesh_redis_stores_total", stores[a] + 1, 3000),
                  "replica %d never stored its result in Redis", a);
        stores[a]++;
        get(cl.port[b], p, &second);
        cr_assert_eq(second.status, 200);
        if (strcmp(second.xcache, "HIT") != 0) explain_miss(b);
        cr_expect_str_eq(second.xcache, "HIT", "replica %d did not find replica %d's result in Redis", b, a);
        cr_expect_str_eq(second.etag, first.etag);
        cr_assert_eq(second.len, first.len);
        cr_expect_eq(memcmp(second.body, first.body, first.len), 0, "bytes differ across replicas");
        get(cl.nport, p, &third); /* through nginx: whichever replica, a hit */
        cr_expect_eq(third.status, 200);
        cr_expect_str_eq(third.xcache, "HIT");
        resp_free(&first);
        resp_free(&second);
        resp_free(&third);
    }
    for (int i = 0; i < NREP; i++)
        cr_expect_geq(metric(cl.port[i], "procmesh_redis_hits_total"), 1, "replica %d", i);
    cr_expect_eq(metric(cl.port[0], "procmesh_redis_up"), 1);
}

Test(replicas, killing_redis_mid_run_fails_no_request) {
    int failed = 0, total = 0;
    wait_cluster_ready();
    for (unsigned i = 0; i < 90; i++) {
        if (i == 30) pm_tp_redis_kill(&cl.redis);
        char p[128];
        path_for(2000u + i % 45, p, sizeof p); /* the second half repeats */
        int port = i % 4 == 3 ? cl.nport : cl.port[i % NREP];
        resp r;
        get(port, p, &r);
        total++;
        if (r.status != 200) {
            failed++;
            cr_log_error("request %u to port %d: status %ld", i, port, r.status);
        }
        resp_free(&r);
    }
    cr_expect_eq(failed, 0, "%d of %d requests failed while Redis died", failed, total);
    for (int i = 0; i < NREP; i++) {
        cr_expect(wait_degraded(cl.port[i], 1, 3000), "replica %d: /readyz not degraded", i);
        cr_expect_eq(metric(cl.port[i], "procmesh_redis_up"), 0);
    }
    /* Back up: the replicas reconnect on their own and share again. */
    cr_assert_eq(pm_tp_redis_start(&cl.redis), 0);
    for (int i = 0; i < NREP; i++)
        cr_expect(wait_degraded(cl.port[i], 0, 10000), "replica %d did not reconnect", i);
    char p[128];
    path_for(3000u, p, sizeof p);
    resp a, b;
    unsigned long long st = metric(cl.port[0], "procmesh_redis_stores_total");
    get(cl.port[0], p, &a);
    cr_expect(wait_metric(cl.port[0], "procmesh_redis_stores_total", st + 1, 3000));
    get(cl.port[2], p, &b);
    cr_expect_eq(a.status, 200);
    cr_expect_str_eq(b.xcache, "HIT", "no sharing after Redis came back");
    resp_free(&a);
    resp_free(&b);
}

typedef struct load {
    unsigned id;
    atomic_int *stop;
    int ok, failed, after_term;
    atomic_int *terminated;
    long bad_status;
} load;

/* One client through nginx on a keep-alive connection, like a real one:
 * a third of the requests are new POSTs (they generate), a third new GETs,
 * a third repeat (hits). nginx may retry the POSTs: procmesh's POSTs are
 * pure functions of their body. */
static void *client(void *p) {
    load *l = p;
    CURL *h = curl_easy_init();
    double end = pm_tp_now_ms() + 20000;
    for (unsigned i = 0; i < 3000 && !atomic_load(l->stop) && pm_tp_now_ms() < end; i++) {
        unsigned fresh = 5000u + l->id * 10000u + i;
        resp r;
        if (i % 3 == 0) {
            post_seed(h, cl.nport, fresh, &r);
        } else {
            char path[128];
            path_for(i % 3 == 1 ? fresh : 4000u + i % 16, path, sizeof path);
            get_with(h, cl.nport, path, &r);
        }
        if (r.status == 200) {
            l->ok++;
            if (atomic_load(l->terminated)) l->after_term++;
        } else {
            l->failed++;
            l->bad_status = r.status;
        }
        resp_free(&r);
    }
    curl_easy_cleanup(h);
    return NULL;
}

Test(replicas, sigterm_on_one_replica_under_load_fails_no_request) {
    atomic_int stop = 0, terminated = 0;
    enum { NCLI = 4 };
    pthread_t th[NCLI];
    load l[NCLI];
    for (unsigned i = 0; i < NCLI; i++) {
        l[i] = (load){.id = i, .stop = &stop, .terminated = &terminated};
        pthread_create(&th[i], NULL, client, &l[i]);
    }
    pm_tp_sleep_ms(1000);
    int before = 0;
    for (int i = 0; i < NCLI; i++) before += l[i].ok; /* racy read: only a sanity floor */
    atomic_store(&terminated, 1);
    double t0 = pm_tp_now_ms();
    int st = pm_tp_stop(cl.rep[1], SIGTERM, 8000);
    double drain = pm_tp_now_ms() - t0;
    cl.rep[1] = -1;
    pm_tp_sleep_ms(1500); /* load continues on the two others */
    atomic_store(&stop, 1);
    int ok = 0, failed = 0, after = 0;
    for (int i = 0; i < NCLI; i++) {
        pthread_join(th[i], NULL);
        ok += l[i].ok;
        failed += l[i].failed;
        after += l[i].after_term;
        if (l[i].failed) cr_log_error("client %d: %d failures, last status %ld", i, l[i].failed, l[i].bad_status);
    }
    cr_log_info("load: %d ok, %d failed, %d after SIGTERM, %d before, drain %.0f ms, route %s", ok, failed, after, before, drain, route);
    cr_expect_gt(before, 0, "no load before the SIGTERM");
    cr_expect(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "SIGTERM: replica did not exit cleanly within 8 s (status %d, %.0f ms)", st, drain);
    cr_expect_gt(after, 20, "too little load after the SIGTERM (%d)", after);
    cr_expect_eq(failed, 0, "%d of %d requests through nginx failed", failed, ok + failed);
}
