/* procmesh: the HTTP service. Reads the configuration, serves until SIGTERM
 * or SIGINT, drains, exits 0. Exit 2 on a bad configuration, 1 when the
 * server cannot start. `procmesh generate …` runs one request offline
 * (cli.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "budget.h"
#include "cli.h"
#include "config.h"
#include "log.h"
#include "server.h"
#include "tiers.h"

/* Each connection is a descriptor: lift the soft open-files limit towards
 * what --max-connections needs (never above the hard limit). */
static void raise_nofile(uint32_t connections) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    rlim_t want = (rlim_t)connections + 256;   /* listener, pipes, logs, tier */
    if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) want = rl.rlim_max;
    if (want <= rl.rlim_cur) return;
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        pm_svc_log(PM_SVC_LOG_WARN, NULL, "cannot raise the open-files limit", NULL);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "generate") == 0)
        pm_svc_cli_exit(pm_svc_cli_generate(argc - 1, argv + 1));
    pm_svc_config cfg;
    char err[512];
    pm_svc_config_default(&cfg);
    int rc = pm_svc_config_load(&cfg, argc, argv, NULL, stdout, err, sizeof err);
    if (rc == 1) return 0;
    if (rc != 0) {
        fprintf(stderr, "procmesh: %s\n", err);
        return 2;
    }
    pm_svc_log_set_level(cfg.log_level);
    raise_nofile(cfg.max_connections);
    pm_svc_budget_malloc_policy(cfg.threads + cfg.workers);

    pm_svc_tier *tier = NULL;
    if (pm_svc_tier_open(&cfg, &tier, err, sizeof err) < 0) {
        fprintf(stderr, "procmesh: %s\n", err);
        return 2;
    }

    /* Signals are taken synchronously by this thread only: every thread
     * started from here on inherits the blocked mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    pm_svc_server *srv = pm_svc_server_start(&cfg, tier);
    if (!srv) return 1;
    int sig = 0;
    while (sigwait(&stop, &sig) != 0) {
    }
    pm_svc_log_lifecycle("signal received", "\"signal\":\"%s\"",
               sig == SIGTERM ? "SIGTERM" : "SIGINT");
    pm_svc_server_shutdown(srv);
    return 0;
}
