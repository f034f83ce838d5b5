#include "procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double pm_tp_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void pm_tp_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int pm_tp_free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

char *pm_tp_tmpdir(const char *tag) {
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/procmesh-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void pm_tp_rmrf(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[1024];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) pm_tp_rmrf(p);
        else unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Resolved before fork: the child only calls async-signal-safe functions. */
static int find_exe(const char *name, char *out, size_t cap) {
    if (strchr(name, '/')) {
        snprintf(out, cap, "%s", name);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s:/usr/sbin:/sbin:/usr/bin", path ? path : "");
    for (char *save = NULL, *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        snprintf(out, cap, "%s/%s", dir, name);
        if (access(out, X_OK) == 0) return 0;
    }
    return -1;
}

pid_t pm_tp_spawn(char *const argv[], char *const env_extra[], const char *log_path) {
    char exe[1024];
    if (find_exe(argv[0], exe, sizeof exe) != 0) return -1;
    size_t n = 0, m = 0;
    while (environ[n]) n++;
    while (env_extra && env_extra[m]) m++;
    char **envp = calloc(n + m + 1, sizeof *envp);
    if (!envp) return -1;
    size_t k = 0;
    for (size_t i = 0; i < m; i++) envp[k++] = env_extra[i];
    for (size_t i = 0; i < n; i++) {
        /* an extra NAME=... replaces the inherited one */
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
        /* ...and the test's own PROCMESH_* settings never leak into a child */
        int dup = !strncmp(environ[i], "PROCMESH_", 9);
        for (size_t j = 0; j < m; j++) dup |= !strncmp(env_extra[j], environ[i], nl);
        if (!dup) envp[k++] = environ[i];
    }
    int fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(envp);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        execve(exe, argv, envp);
        _exit(127);
    }
    close(fd);
    free(envp);
    return pid;
}

int pm_tp_wait_port(int port, pid_t pid, int timeout_ms) {
    double end = pm_tp_now_ms() + timeout_ms;
    while (pm_tp_now_ms() < end) {
        if (pid > 0 && waitpid(pid, NULL, WNOHANG) == pid) return -1;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        if (fd >= 0) close(fd);
        if (ok) return 0;
        pm_tp_sleep_ms(10);
    }
    return -1;
}

int pm_tp_stop(pid_t pid, int sig, int timeout_ms) {
    if (pid <= 0) return -1;
    int st = 0;
    if (kill(pid, sig) != 0 && errno == ESRCH) {
        waitpid(pid, &st, WNOHANG);
        return -1;
    }
    double end = pm_tp_now_ms() + timeout_ms;
    while (pm_tp_now_ms() < end) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return st;
        if (w < 0) return -1;
        pm_tp_sleep_ms(5);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

int pm_tp_redis_start(pm_tp_redis *r) {
    if (r->port <= 0) r->port = pm_tp_free_port();
    if (!r->dir) r->dir = pm_tp_tmpdir("redis");
    if (r->port <= 0 || !r->dir) return -1;
    char port[16], log[600];
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(log, sizeof log, "%s/redis.log", r->dir);
    char *argv[] = {"redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", r->dir,
                    "--save", "", "--appendonly", "no", "--daemonize", "no",
                    "--protected-mode", "no", NULL};
    r->pid = pm_tp_spawn(argv, NULL, log);
    if (r->pid < 0) return -1;
    if (pm_tp_wait_port(r->port, r->pid, 5000) != 0) {
        pm_tp_stop(r->pid, SIGKILL, 1000);
        r->pid = -1;
        return -1;
    }
    return 0;
}

void pm_tp_redis_kill(pm_tp_redis *r) {
    if (r->pid > 0) pm_tp_stop(r->pid, SIGKILL, 2000);
    r->pid = -1;
}

void pm_tp_redis_cleanup(pm_tp_redis *r) {
    pm_tp_redis_kill(r);
    if (r->dir) pm_tp_rmrf(r->dir);
    free(r->dir);
    r->dir = NULL;
}
