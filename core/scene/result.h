#ifndef PM_RESULT_H
#define PM_RESULT_H
/* Result codes shared by every core function: 0 is success, errors are
 * negative (libuv's habit), so `if (r < 0)` reads the same everywhere. */
typedef enum pm_result {
    PM_OK = 0,
    PM_ERR_NOMEM = -1,      /* the arena (or its byte limit) ran out */
    PM_ERR_GEOMETRY = -2,   /* valid parameters that give no valid mesh */
    PM_ERR_LIMIT = -3,      /* output would exceed a configured limit */
    PM_ERR_CANCELLED = -4,  /* the caller's cancel flag was raised */
} pm_result;

const char *pm_result_name(pm_result r);
#endif
