#include "pm_test_server.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void pm_test__sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double pm_test__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *pm_test_server_log(const pm_test_server *s) {
    FILE *f = fopen(s->log_path, "rb");
    if (!f) return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = buf && n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
    if (buf) buf[got] = '\0';
    fclose(f);
    return buf;
}

/* In the child: a clean environment (no inherited PROCMESH_*), the log on
 * stderr, death with the parent. Never returns. */
static void pm_test__exec(const pm_test_server *s, const char *const *args,
                          const char *const *env) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int log = open(s->log_path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    int null = open("/dev/null", O_RDWR);
    if (log < 0 || null < 0) _exit(127);
    dup2(null, 0);
    dup2(null, 1);
    dup2(log, 2);
    for (char **e = environ; *e;) {
        if (strncmp(*e, "PROCMESH_", 9) == 0) {
            char name[256];
            size_t n = strcspn(*e, "=");
            snprintf(name, sizeof name, "%.*s", (int)n, *e);
            unsetenv(name);
            e = environ;   /* unsetenv may move entries */
        } else {
            e++;
        }
    }
    for (size_t i = 0; env && env[i]; i++) {
        char name[256];
        size_t n = strcspn(env[i], "=");
        snprintf(name, sizeof name, "%.*s", (int)n, env[i]);
        setenv(name, env[i][n] ? env[i] + n + 1 : "", 1);
    }
    size_t n = 0;
    while (args && args[n]) n++;
    const char **argv = calloc(n + 6, sizeof *argv);
    if (!argv) _exit(127);
    argv[0] = PM_BINARY;
    argv[1] = "--bind";
    argv[2] = "127.0.0.1";
    argv[3] = "--port";
    argv[4] = "0";
    for (size_t i = 0; i < n; i++) argv[5 + i] = args[i];
    execv(PM_BINARY, (char *const *)argv);
    _exit(127);
}

/* Reads the port from the server's "listening" line; 0 while absent. */
static int pm_test__port_from_log(const pm_test_server *s) {
    char *log = pm_test_server_log(s);
    int port = 0;
    const char *l = log ? strstr(log, "\"msg\":\"listening\"") : NULL;
    const char *p = l ? strstr(l, "\"port\":") : NULL;
    if (p) port = atoi(p + 7);
    free(log);
    return port;
}

static void pm_test__dump_log(const pm_test_server *s) {
    char *log = pm_test_server_log(s);
    fprintf(stderr, "---- procmesh log (%s) ----\n%s---- end of log ----\n", s->log_path,
            log ? log : "");
    free(log);
}

int pm_test_server_start_env(pm_test_server *s, const char *const *args, const char *const *env) {
    memset(s, 0, sizeof *s);
    snprintf(s->log_path, sizeof s->log_path, "/tmp/procmesh-test-XXXXXX");
    int fd = mkstemp(s->log_path);
    if (fd < 0) return -1;
    close(fd);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) pm_test__exec(s, args, env);
    s->pid = pid;
    double give_up = pm_test__now() + 20.0;
    while (pm_test__now() < give_up) {
        if (pm_test_server_wait(s, 0) >= 0) break;   /* exited: bad flags or cannot bind */
        s->port = pm_test__port_from_log(s);
        if (s->port > 0) break;
        pm_test__sleep_ms(10);
    }
    if (s->port <= 0) {
        pm_test__dump_log(s);
        pm_test_server_stop(s);
        return -1;
    }
    snprintf(s->base, sizeof s->base, "http://127.0.0.1:%d", s->port);
    while (pm_test__now() < give_up) {
        pm_http_response r;
        pm_http_get(s, "/healthz", &r);
        long st = r.status;
        pm_http_response_free(&r);
        if (st == 200) return 0;
        pm_test__sleep_ms(10);
    }
    pm_test__dump_log(s);
    pm_test_server_stop(s);
    return -1;
}

int pm_test_server_start(pm_test_server *s, const char *const *args) {
    return pm_test_server_start_env(s, args, NULL);
}

int pm_test_server_signal(pm_test_server *s, int sig) {
    if (s->pid <= 0 || s->exited) return -1;
    return kill(s->pid, sig);
}

int pm_test_server_wait(pm_test_server *s, int timeout_ms) {
    if (s->pid <= 0) return -1;
    if (s->exited) return s->status;
    double give_up = pm_test__now() + timeout_ms / 1000.0;
    for (;;) {
        int st;
        pid_t p = waitpid(s->pid, &st, WNOHANG);
        if (p == s->pid) {
            s->exited = 1;
            s->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            return s->status;
        }
        if (p < 0 && errno != EINTR) return -1;
        if (pm_test__now() >= give_up) return -1;
        pm_test__sleep_ms(5);
    }
}

int pm_test_server_stop(pm_test_server *s) {
    if (s->pid <= 0) return -1;
    int rc = s->exited ? s->status : -1;
    if (!s->exited) {
        kill(s->pid, SIGTERM);
        rc = pm_test_server_wait(s, 30000);
        if (rc < 0) {
            kill(s->pid, SIGKILL);
            pm_test_server_wait(s, 5000);
            rc = -1;
        }
    }
    /* A server that did not stop cleanly says why (its log goes with it
     * otherwise): exit status, signal (128 + n) or -1 for no exit. */
    if (rc != 0) {
        fprintf(stderr, "procmesh pid %d stopped with status %d\n", (int)s->pid, rc);
        pm_test__dump_log(s);
    }
    if (!getenv("PM_TEST_KEEP_LOGS")) unlink(s->log_path);
    s->pid = 0;
    return rc;
}

/* ---- HTTP ---- */

typedef struct pm_test__sink {
    unsigned char *data;
    size_t len;
} pm_test__sink;

static size_t pm_test__write(char *p, size_t size, size_t n, void *ud) {
    pm_test__sink *s = ud;
    size_t add = size * n;
    unsigned char *d = realloc(s->data, s->len + add + 1);
    if (!d) return 0;
    memcpy(d + s->len, p, add);
    s->data = d;
    s->len += add;
    d[s->len] = '\0';
    return add;
}

/* Keeps only the last response's headers (after a 100 Continue, say). */
static size_t pm_test__header(char *p, size_t size, size_t n, void *ud) {
    pm_test__sink *s = ud;
    if (size * n > 5 && strncmp(p, "HTTP/", 5) == 0) s->len = 0;
    return pm_test__write(p, size, n, ud);
}

typedef struct pm_test__reader {
    const unsigned char *data;
    size_t len, off;
} pm_test__reader;

/* Feeds the body in small pieces, so a chunked upload has many chunks. */
static size_t pm_test__read(char *buf, size_t size, size_t n, void *ud) {
    pm_test__reader *r = ud;
    size_t room = size * n, left = r->len - r->off;
    size_t take = left < room ? left : room;
    if (take > 16384) take = 16384;
    memcpy(buf, r->data + r->off, take);
    r->off += take;
    return take;
}

static void pm_test__curl_init(void) {
    static int done;
    if (!done) {
        curl_global_init(CURL_GLOBAL_ALL);
        done = 1;
    }
}

int pm_http(const pm_test_server *s, const pm_http_request *req, pm_http_response *out) {
    memset(out, 0, sizeof *out);
    pm_test__curl_init();
    CURL *c = curl_easy_init();
    if (!c) return -1;
    /* Sized to the path: tests send very long URLs on purpose. */
    size_t ulen = strlen(s->base) + strlen(req->path) + 1;
    char *url = malloc(ulen);
    if (!url) {
        curl_easy_cleanup(c);
        return -1;
    }
    snprintf(url, ulen, "%s%s", s->base, req->path);
    pm_test__sink body = {0}, head = {0};
    pm_test__reader rd = {req->body, 0, 0};
    struct curl_slist *hl = NULL;
    for (size_t i = 0; req->headers && req->headers[i]; i++)
        hl = curl_slist_append(hl, req->headers[i]);
    const char *method = req->method ? req->method : req->body ? "POST" : "GET";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms ? req->timeout_ms : 30000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, pm_test__write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, pm_test__header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET") != 0)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (req->body) {
        rd.len = req->body_len ? req->body_len : strlen(req->body);
        if (req->chunked) {
            hl = curl_slist_append(hl, "Transfer-Encoding: chunked");
            curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(c, CURLOPT_READFUNCTION, pm_test__read);
            curl_easy_setopt(c, CURLOPT_READDATA, &rd);
            if (strcmp(method, "PUT") != 0) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        } else {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rd.len);
            if (strcmp(method, "POST") != 0) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        }
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &out->seconds);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    free(url);
    out->headers = head.data ? (char *)head.data : calloc(1, 1);
    out->body = body.data ? body.data : calloc(1, 1);
    out->body_len = body.len;
    /* A response that arrived counts even when the server then closed a
     * connection it refused to read further (413). */
    if (rc != CURLE_OK && out->status == 0) return -1;
    return 0;
}

int pm_http_get(const pm_test_server *s, const char *path, pm_http_response *out) {
    pm_http_request req = {.method = "GET", .path = path};
    return pm_http(s, &req, out);
}

int pm_http_post_json(const pm_test_server *s, const char *path, const char *json,
                      pm_http_response *out) {
    const char *h[] = {"Content-Type: application/json", NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = h, .body = json};
    return pm_http(s, &req, out);
}

const char *pm_http_header(const pm_http_response *r, const char *name, char *buf, size_t cap) {
    size_t nl = strlen(name);
    for (const char *line = r->headers; line && *line;) {
        const char *end = strstr(line, "\r\n");
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0) {
            const char *v = line + nl + 1;
            const char *ve = line + len;
            while (v < ve && (*v == ' ' || *v == '\t')) v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            size_t n = (size_t)(ve - v);
            if (n >= cap) n = cap - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return buf;
        }
        if (!end) break;
        line = end + 2;
    }
    return NULL;
}

void pm_http_response_free(pm_http_response *r) {
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof *r);
}

double pm_test_metric(const pm_test_server *s, const char *series) {
    pm_http_response r;
    double v = -1;
    if (pm_http_get(s, "/metrics", &r) == 0 && r.status == 200) {
        size_t n = strlen(series);
        for (const char *line = (const char *)r.body; line && *line;) {
            if (strncmp(line, series, n) == 0 && line[n] == ' ') {
                v = strtod(line + n + 1, NULL);
                break;
            }
            line = strchr(line, '\n');
            if (line) line++;
        }
    }
    pm_http_response_free(&r);
    return v;
}
