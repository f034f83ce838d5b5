/* Libraries opened on first need (dl.h). */
#include "dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *pm_svc__dl_soname(const pm_svc_dl *lib) {
    return lib->marked + strlen(PM_SVC_DL_MARK);
}

/* Under lib->lock, once: sets state to 1, or to -1 with the reason. */
static void pm_svc__dl_open(pm_svc_dl *lib) {
    void *h = dlopen(pm_svc__dl_soname(lib), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib->why, sizeof lib->why, "%s", dlerror());
        lib->state = -1;
        return;
    }
    for (size_t i = 0; i < lib->count; i++) {
        void *sym = dlsym(h, lib->names[i]);
        if (!sym) {
            snprintf(lib->why, sizeof lib->why, "no %s in it", lib->names[i]);
            lib->state = -1;
            return;
        }
        /* POSIX: a function pointer has the size and representation of a
         * data pointer (dlsym's contract); copied, not cast. */
        memcpy((char *)lib->table + i * sizeof sym, &sym, sizeof sym);
    }
    __atomic_store_n(&lib->state, 1, __ATOMIC_RELEASE);
}

int pm_svc_dl_load(pm_svc_dl *lib, char *err, size_t errcap) {
    int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&lib->lock);
        if (lib->state == 0) pm_svc__dl_open(lib);
        state = lib->state;
        pthread_mutex_unlock(&lib->lock);
    }
    if (state == 1) return 0;
    snprintf(err, errcap, "cannot load %s: %s", pm_svc__dl_soname(lib), lib->why);
    return -1;
}

void pm_svc_dl_need_slow(pm_svc_dl *lib) {
    char err[320];
    if (pm_svc_dl_load(lib, err, sizeof err) == 0) return;
    fprintf(stderr, "procmesh: %s\n", err);
    abort();
}
