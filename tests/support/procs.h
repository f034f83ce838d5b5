#ifndef PM_TEST_PROCS_H
#define PM_TEST_PROCS_H
#include <stddef.h>
#include <sys/types.h>

/* Real processes on loopback for black-box tests (redis-server, procmesh,
 * nginx). Every child dies with the test process (PR_SET_PDEATHSIG), so a
 * crashed test leaves no server behind; every wait is bounded. */

/* A loopback TCP port that was free a moment ago (bind to port 0). */
int pm_tp_free_port(void);

/* Creates a fresh directory under $TMPDIR (or /tmp); caller frees. */
char *pm_tp_tmpdir(const char *tag);

/* Removes a directory tree (only regular files and directories). */
void pm_tp_rmrf(const char *dir);

/* Starts argv[0] (searched in PATH) with stdout and stderr appended to
 * log_path (NULL: /dev/null). Returns the pid or -1. env_extra is a
 * NULL-terminated list of "NAME=value" added to the environment, or NULL;
 * PROCMESH_* variables of the test's own environment are not passed on. */
pid_t pm_tp_spawn(char *const argv[], char *const env_extra[], const char *log_path);

/* Waits until something accepts TCP connections on 127.0.0.1:port or the
 * process exits. 0 when it listens, -1 on timeout or exit. */
int pm_tp_wait_port(int port, pid_t pid, int timeout_ms);

/* Sends sig, waits up to timeout_ms for the exit, then SIGKILLs and reaps.
 * Returns the exit status as waitpid reports it, or -1 if it had to kill. */
int pm_tp_stop(pid_t pid, int sig, int timeout_ms);

/* Milliseconds on a monotonic clock. */
double pm_tp_now_ms(void);
void pm_tp_sleep_ms(int ms);

/* A redis-server without persistence on 127.0.0.1:port, files in dir. */
typedef struct pm_tp_redis {
    pid_t pid;
    int port;
    char *dir;
} pm_tp_redis;

/* Starts one (port 0: pick a free one; otherwise reuse r->port and r->dir,
 * which is how a test restarts a killed server). 0 when it listens. */
int pm_tp_redis_start(pm_tp_redis *r);
/* Kills it (SIGKILL, as a crash would) and reaps; keeps port and dir. */
void pm_tp_redis_kill(pm_tp_redis *r);
/* Kills it if running and removes its directory. */
void pm_tp_redis_cleanup(pm_tp_redis *r);
#endif
