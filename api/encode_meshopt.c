#include "encode_meshopt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <meshoptimizer.h>

/* meshoptimizer keeps the index codec version in a global; set it once,
 * before any encoding, so concurrent encoders never write it. Version 1 is
 * what EXT_meshopt_compression's TRIANGLES mode names. */
static pthread_once_t pm_api__mo_once = PTHREAD_ONCE_INIT;
static void pm_api__mo_init(void) {
    meshopt_encodeIndexVersion(1);
    meshopt_encodeVertexVersion(0);
}

static size_t pm_api__mo_bound(const pm_api__mo_view *v) {
    return v->triangles ? meshopt_encodeIndexBufferBound(v->count, v->vcount)
                        : meshopt_encodeVertexBufferBound(v->count, v->stride);
}

int pm_api__meshopt_pack(pm_api__mo_view *v, size_t n, unsigned char **out, size_t *len) {
    pthread_once(&pm_api__mo_once, pm_api__mo_init);
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) cap += (pm_api__mo_bound(&v[i]) + 3) & ~(size_t)3;
    unsigned char *o = calloc(cap ? cap : 1, 1);
    if (!o) return -1;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t bound = pm_api__mo_bound(&v[i]);
        size_t w = v[i].triangles
                       ? meshopt_encodeIndexBuffer(o + at, bound, v[i].indices, v[i].count)
                       : meshopt_encodeVertexBuffer(o + at, bound, v[i].raw, v[i].count,
                                                    v[i].stride);
        if (w == 0) {   /* cannot happen with the bound's room */
            free(o);
            return -1;
        }
        v[i].offset = at;
        v[i].length = w;
        at += (w + 3) & ~(size_t)3;
    }
    *out = o;
    *len = at;
    return 0;
}

void pm_api__meshopt_prim_free(pm_api__mo_prim *m) {
    free(m->positions);
    free(m->normals);
    free(m->uvs);
    free(m->colors);
    free(m->indices);
    memset(m, 0, sizeof *m);
}

/* dst = src reordered by remap (n vertices of comps floats); NULL src: NULL. */
static float *pm_api__mo_remap(const float *src, uint32_t n, size_t comps,
                               const unsigned int *remap, bool *oom) {
    if (!src) return NULL;
    float *d = malloc((n ? n : 1) * comps * sizeof *d);
    if (!d) {
        *oom = true;
        return NULL;
    }
    meshopt_remapVertexBuffer(d, src, n, comps * sizeof *d, remap);
    return d;
}

int pm_api__meshopt_reorder(const float *positions, const float *normals, const float *uvs,
                            const float *colors, uint32_t vcount, const uint32_t *indices,
                            uint32_t icount, pm_api__mo_prim *m) {
    memset(m, 0, sizeof *m);
    unsigned int *remap = malloc((vcount ? vcount : 1) * sizeof *remap);
    m->indices = malloc((icount ? icount : 1) * sizeof *m->indices);
    if (!remap || !m->indices) {
        free(remap);
        pm_api__meshopt_prim_free(m);
        return -1;
    }
    meshopt_optimizeVertexCache(m->indices, indices, icount, vcount);
    size_t used = meshopt_optimizeVertexFetchRemap(remap, m->indices, icount, vcount);
    for (uint32_t v = 0; v < vcount; v++)   /* unused vertices: kept, at the end */
        if (remap[v] == ~0u) remap[v] = (unsigned int)used++;
    meshopt_remapIndexBuffer(m->indices, m->indices, icount, remap);
    bool oom = false;
    m->positions = pm_api__mo_remap(positions, vcount, 3, remap, &oom);
    m->normals = pm_api__mo_remap(normals, vcount, 3, remap, &oom);
    m->uvs = pm_api__mo_remap(uvs, vcount, 2, remap, &oom);
    m->colors = pm_api__mo_remap(colors, vcount, 4, remap, &oom);
    free(remap);
    if (oom) {
        pm_api__meshopt_prim_free(m);
        return -1;
    }
    return 0;
}
