#include "encode_meshopt.h"

#include <math.h>
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

/* The EXPONENTIAL filter's format (each 32-bit value a signed 24-bit
 * mantissa m and an 8-bit exponent e, decoded as m * 2^e) with one
 * exponent for every value: fixed point. meshoptimizer 0.18's
 * meshopt_encodeFilterExp picks the exponent per vector from its largest
 * component, so neighbouring vertices get different scales and the
 * codec's byte deltas grow (the road's terrain positions: 847 KB against
 * 738 KB fixed); later versions call this mode SharedComponent. */
static void pm_api__mo_exp_fixed(uint32_t *d, const float *src, size_t n, int exponent) {
    for (size_t i = 0; i < n; i++) {
        int32_t m = (int32_t)lrint(ldexp((double)src[i], -exponent));
        d[i] = ((uint32_t)m & 0xFFFFFFu) | (uint32_t)(uint8_t)(int8_t)exponent << 24;
    }
}

/* v's vertex stream through meshoptimizer's vertex codec, after its
 * filter. Returns the bytes written, 0 when out of memory. */
static size_t pm_api__mo_vertices(unsigned char *o, size_t bound, const pm_api__mo_view *v) {
    if (!v->exp_fixed && !v->oct_normals)
        return meshopt_encodeVertexBuffer(o, bound, v->raw, v->count, v->stride);
    size_t bytes = (size_t)v->count * v->stride;
    unsigned char *f = malloc(bytes ? bytes : 1);
    float *n4 = v->oct_normals ? malloc(((size_t)v->count + 1) * 4 * sizeof *n4) : NULL;
    size_t w = 0;
    if (f && v->oct_normals && n4) {
        for (size_t i = 0; i < v->count; i++) {   /* w = 0: the padding byte stays 0 */
            memcpy(n4 + 4 * i, v->oct_normals + 3 * i, 3 * sizeof *n4);
            n4[4 * i + 3] = 0.0f;
        }
        meshopt_encodeFilterOct(f, v->count, v->stride, 8, n4);
        w = meshopt_encodeVertexBuffer(o, bound, f, v->count, v->stride);
    } else if (f && v->exp_fixed) {
        /* raw is 4-byte aligned: views start on 4-byte boundaries of the buffer */
        pm_api__mo_exp_fixed((uint32_t *)(void *)f, (const float *)(const void *)v->raw,
                             bytes / 4, v->exponent);
        w = meshopt_encodeVertexBuffer(o, bound, f, v->count, v->stride);
    }
    free(n4);
    free(f);
    return w;
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
                       : pm_api__mo_vertices(o + at, bound, &v[i]);
        if (w == 0) {   /* out of memory (the bound leaves room) */
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
    meshopt_optimizeVertexCacheStrip(m->indices, indices, icount, vcount);
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
