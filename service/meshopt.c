/* meshoptimizer through dlopen (meshopt.h says why): one pointer per
 * function api/ calls, found once; the meshopt_* definitions below forward
 * to them. A function api/ starts to call is added to PM_SVC_MESHOPT_FNS
 * and given a definition below (the link of procmesh fails without one). */
#include "meshopt.h"

#include <meshoptimizer.h>

#include "dl.h"

#ifndef PM_SVC_MESHOPT_SONAME
#define PM_SVC_MESHOPT_SONAME "libmeshoptimizer.so.2d"
#endif

#define PM_SVC_MESHOPT_FNS(X)                                                                  \
    X(meshopt_encodeVertexVersion) X(meshopt_encodeIndexVersion)                               \
    X(meshopt_encodeVertexBufferBound) X(meshopt_encodeIndexBufferBound)                       \
    X(meshopt_encodeVertexBuffer) X(meshopt_encodeIndexBuffer) X(meshopt_encodeFilterOct)      \
    X(meshopt_optimizeVertexCacheStrip) X(meshopt_optimizeVertexFetchRemap)                    \
    X(meshopt_remapIndexBuffer) X(meshopt_remapVertexBuffer)

PM_SVC_DL_LIBRARY(PM_SVC_MESHOPT_FNS, PM_SVC_MESHOPT_SONAME, pm_svc__mo, pm_svc__mo_lib);

int pm_svc_meshopt_load(char *err, size_t errcap) {
    return pm_svc_dl_load(&pm_svc__mo_lib, err, errcap);
}

#define pm_svc__mo_need() pm_svc_dl_need(&pm_svc__mo_lib)

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
