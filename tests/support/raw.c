#include "pm_test_raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double pm_raw__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pm_raw_connect_from(const char *src_ip, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (src_ip) {
        struct sockaddr_in s = {.sin_family = AF_INET};
        inet_pton(AF_INET, src_ip, &s.sin_addr);
        if (bind(fd, (struct sockaddr *)&s, sizeof s) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int pm_raw_connect(int port) { return pm_raw_connect_from(NULL, port); }

int pm_raw_send(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int pm_raw_send_str(int fd, const char *s) { return pm_raw_send(fd, s, strlen(s)); }

int pm_raw_read(int fd, int timeout_ms, pm_raw_reply *out) {
    memset(out, 0, sizeof *out);
    double t0 = pm_raw__now(), end = t0 + timeout_ms / 1000.0;
    int first = 1;
    for (;;) {
        double left = end - pm_raw__now();
        if (left <= 0) break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) break;
        char *at = out->text + out->len;
        size_t room = sizeof out->text - 1 - out->len;
        char sink[4096];
        ssize_t n = recv(fd, room ? at : sink, room ? room : sizeof sink, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            out->reset = errno == ECONNRESET;
            break;
        }
        if (n == 0) {
            out->closed = 1;
            break;
        }
        if (first) out->seconds = pm_raw__now() - t0;
        first = 0;
        if (room) out->len += (size_t)n;
    }
    if (first) out->seconds = pm_raw__now() - t0;
    out->text[out->len] = '\0';
    if (strncmp(out->text, "HTTP/1.", 7) == 0 && out->len > 12)
        out->status = strtol(out->text + 9, NULL, 10);
    return out->status ? 0 : -1;
}

int pm_raw_exchange(int port, const void *req, size_t len, int timeout_ms, pm_raw_reply *out) {
    int fd = pm_raw_connect(port);
    if (fd < 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    pm_raw_send(fd, req, len);   /* the server may answer before all of it */
    int rc = pm_raw_read(fd, timeout_ms, out);
    close(fd);
    return rc;
}

const char *pm_raw_header(const pm_raw_reply *r, const char *name, char *buf, size_t cap) {
    size_t nl = strlen(name);
    const char *end = strstr(r->text, "\r\n\r\n");
    for (const char *l = strstr(r->text, "\r\n"); l && (!end || l < end); l = strstr(l + 2, "\r\n")) {
        const char *h = l + 2;
        if (strncasecmp(h, name, nl) != 0 || h[nl] != ':') continue;
        const char *v = h + nl + 1;
        while (*v == ' ' || *v == '\t') v++;
        size_t n = strcspn(v, "\r");
        snprintf(buf, cap, "%.*s", (int)n, v);
        return buf;
    }
    return NULL;
}

const char *pm_raw_body(const pm_raw_reply *r) {
    const char *b = strstr(r->text, "\r\n\r\n");
    return b ? b + 4 : "";
}
