/* meshoptimizer through dlopen (meshopt.h says why): one pointer per
 * function api/ calls, found once; the meshopt_* definitions below forward
 * to them. A function api/ starts to call is added to PM_SVC_MESHOPT_FNS
 * and given a definition below (the link of procmesh fails without one). */
#include "meshopt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <meshoptimizer.h>

#ifndef PM_SVC_MESHOPT_SONAME
#define PM_SVC_MESHOPT_SONAME "libmeshoptimizer.so.2d"
#endif
/* The marker lets tests/deploy (and the Dockerfile) find the library in
 * the binary as readelf finds a linked one. */
static const char pm_svc__meshopt_marker[] = "PM_DLOPEN:" PM_SVC_MESHOPT_SONAME;
const char pm_svc_meshopt_soname[] = PM_SVC_MESHOPT_SONAME;

#define PM_SVC_MESHOPT_FNS(X)                                                                  \
    X(meshopt_encodeVertexVersion) X(meshopt_encodeIndexVersion)                               \
    X(meshopt_encodeVertexBufferBound) X(meshopt_encodeIndexBufferBound)                       \
    X(meshopt_encodeVertexBuffer) X(meshopt_encodeIndexBuffer) X(meshopt_encodeFilterOct)      \
    X(meshopt_optimizeVertexCacheStrip) X(meshopt_optimizeVertexFetchRemap)                    \
    X(meshopt_remapIndexBuffer) X(meshopt_remapVertexBuffer)

static struct {
#define PM_SVC__MO_PTR(f) __typeof__(f) *f;
    PM_SVC_MESHOPT_FNS(PM_SVC__MO_PTR)
#undef PM_SVC__MO_PTR
} pm_svc__mo;
static pthread_once_t pm_svc__mo_once = PTHREAD_ONCE_INIT;
static int pm_svc__mo_loaded;
static char pm_svc__mo_why[256];

static void pm_svc__meshopt_open(void) {
    void *h = dlopen(pm_svc__meshopt_marker + strlen("PM_DLOPEN:"), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(pm_svc__mo_why, sizeof pm_svc__mo_why, "%s", dlerror());
        return;
    }
    void *sym;
#define PM_SVC__MO_FIND(f)                                                                      \
    if (!(sym = dlsym(h, #f))) {                                                                \
        snprintf(pm_svc__mo_why, sizeof pm_svc__mo_why, "%s: no %s", pm_svc_meshopt_soname, #f); \
        return;                                                                                 \
    }                                                                                           \
    memcpy(&pm_svc__mo.f, &sym, sizeof sym);
    PM_SVC_MESHOPT_FNS(PM_SVC__MO_FIND)
#undef PM_SVC__MO_FIND
    __atomic_store_n(&pm_svc__mo_loaded, 1, __ATOMIC_RELEASE);   /* the handle stays open for the process's life */
}

int pm_svc_meshopt_load(char *err, size_t errcap) {
    pthread_once(&pm_svc__mo_once, pm_svc__meshopt_open);
    if (__atomic_load_n(&pm_svc__mo_loaded, __ATOMIC_ACQUIRE)) return 0;
    snprintf(err, errcap, "cannot load %s: %s", pm_svc_meshopt_soname, pm_svc__mo_why);
    return -1;
}

/* The table, loaded (a missing library is a broken installation: said,
 * then abort, as a failed link would at start). */
static inline void pm_svc__mo_need(void) {
    if (__builtin_expect(__atomic_load_n(&pm_svc__mo_loaded, __ATOMIC_ACQUIRE), 1)) return;
    char err[320];
    if (pm_svc_meshopt_load(err, sizeof err) == 0) return;
    fprintf(stderr, "procmesh: %s\n", err);
    abort();
}

void meshopt_encodeVertexVersion(int version) {
    pm_svc__mo_need();
    pm_svc__mo.meshopt_encodeVertexVersion(version);
}

void meshopt_encodeIndexVersion(int version) {
    pm_svc__mo_need();
    pm_svc__mo.meshopt_encodeIndexVersion(version);
}

size_t meshopt_encodeVertexBufferBound(size_t vertex_count, size_t vertex_size) {
    pm_svc__mo_need();
    return pm_svc__mo.meshopt_encodeVertexBufferBound(vertex_count, vertex_size);
}

size_t meshopt_encodeIndexBufferBound(size_t index_count, size_t vertex_count) {
    pm_svc__mo_need();
    return pm_svc__mo.meshopt_encodeIndexBufferBound(index_count, vertex_count);
}

size_t meshopt_encodeVertexBuffer(unsigned char *buffer, size_t buffer_size, const void *vertices,
                                  size_t vertex_count, size_t vertex_size) {
    pm_svc__mo_need();
    return pm_svc__mo.meshopt_encodeVertexBuffer(buffer, buffer_size, vertices, vertex_count, vertex_size);
}

size_t meshopt_encodeIndexBuffer(unsigned char *buffer, size_t buffer_size, const unsigned int *indices,
                                 size_t index_count) {
    pm_svc__mo_need();
    return pm_svc__mo.meshopt_encodeIndexBuffer(buffer, buffer_size, indices, index_count);
}

void meshopt_encodeFilterOct(void *destination, size_t count, size_t stride, int bits, const float *data) {
    pm_svc__mo_need();
    pm_svc__mo.meshopt_encodeFilterOct(destination, count, stride, bits, data);
}

void meshopt_optimizeVertexCacheStrip(unsigned int *destination, const unsigned int *indices,
                                      size_t index_count, size_t vertex_count) {
    pm_svc__mo_need();
    pm_svc__mo.meshopt_optimizeVertexCacheStrip(destination, indices, index_count, vertex_count);
}

size_t meshopt_optimizeVertexFetchRemap(unsigned int *destination, const unsigned int *indices,
                                        size_t index_count, size_t vertex_count) {
    pm_svc__mo_need();
    return pm_svc__mo.meshopt_optimizeVertexFetchRemap(destination, indices, index_count, vertex_count);
}

void meshopt_remapIndexBuffer(unsigned int *destination, const unsigned int *indices, size_t index_count,
                              const unsigned int *remap) {
    pm_svc__mo_need();
    pm_svc__mo.meshopt_remapIndexBuffer(destination, indices, index_count, remap);
}

void meshopt_remapVertexBuffer(void *destination, const void *vertices, size_t vertex_count,
                               size_t vertex_size, const unsigned int *remap) {
    pm_svc__mo_need();
    pm_svc__mo.meshopt_remapVertexBuffer(destination, vertices, vertex_count, vertex_size, remap);
}
