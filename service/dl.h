#ifndef PM_SVC_DL_H
#define PM_SVC_DL_H
/* A shared library opened with dlopen when first needed, not by the
 * dynamic loader at every start of the executable (mhd.h and meshopt.h
 * say why for each). Its functions are found by name, once per process,
 * into the module's table of function pointers, which the module's own
 * definitions of the library's functions call, so callers are written as
 * with a linked library. The handle stays open for the process's life. */
#include <pthread.h>
#include <stddef.h>

/* Written before the SONAME in the binary: tests/deploy and the
 * Dockerfile find the libraries the binary opens by it, as readelf finds
 * the linked ones. */
#define PM_SVC_DL_MARK "PM_DLOPEN:"

typedef struct pm_svc_dl {
    const char *marked;       /* PM_SVC_DL_MARK then the SONAME */
    const char *const *names; /* the functions, in the table's order */
    size_t count;
    void *table;              /* count function pointers, one per name */
    pthread_mutex_t lock;
    int state;                /* 0 not tried, 1 loaded, -1 failed (why) */
    char why[256];
} pm_svc_dl;

/* marked: a char array (PM_SVC_DL_MARK "libx.so.1"); names: an array of
 * the function names; table: a struct holding exactly that many function
 * pointers, in the same order. */
#define PM_SVC_DL_INIT(marked_, names_, table_)                                       \
    {.marked = (marked_), .names = (names_), .count = sizeof(names_) / sizeof *(names_), \
     .table = (table_), .lock = PTHREAD_MUTEX_INITIALIZER, .state = 0, .why = ""}

/* Declares a module's library: `static struct {...} table` with one
 * pointer per function of FNS (an X-macro list: FNS(X) calls X(name) for
 * each), typed as the function's own declaration, the names in the same
 * order, the SONAME marked in the binary, and `static pm_svc_dl lib`
 * tying them together. */
#define PM_SVC__DL_PTR(f) __typeof__(f) *f;
#define PM_SVC__DL_NAME(f) #f,
#define PM_SVC_DL_LIBRARY(FNS, soname, table, lib)                              \
    static struct {                                                             \
        FNS(PM_SVC__DL_PTR)                                                     \
    } table;                                                                    \
    static const char *const lib##_names[] = {FNS(PM_SVC__DL_NAME)};            \
    _Static_assert(sizeof table == sizeof lib##_names, "one pointer per name"); \
    static const char lib##_marked[] = PM_SVC_DL_MARK soname;                   \
    static pm_svc_dl lib = PM_SVC_DL_INIT(lib##_marked, lib##_names, &table)

/* Opens the library and finds every function (the first call does; later
 * calls give its answer). 0, or -1 with "cannot load <soname>: <why>" in
 * err. */
int pm_svc_dl_load(pm_svc_dl *lib, char *err, size_t errcap);

/* Loads the library, or says why it cannot on stderr and aborts: a
 * missing library is a broken installation, as a failed link would be. */
void pm_svc_dl_need_slow(pm_svc_dl *lib);

/* The table is filled; called first by every forwarding definition. */
static inline void pm_svc_dl_need(pm_svc_dl *lib) {
    if (__builtin_expect(__atomic_load_n(&lib->state, __ATOMIC_ACQUIRE) == 1, 1)) return;
    pm_svc_dl_need_slow(lib);
}
#endif
