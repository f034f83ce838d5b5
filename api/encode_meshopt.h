#ifndef PM_API_ENCODE_MESHOPT_H
#define PM_API_ENCODE_MESHOPT_H
/* Internal to the glTF encoder: buffer views compressed with
 * meshoptimizer's codecs for EXT_meshopt_compression (vertex codec version
 * 0, index codec version 1, the EXPONENTIAL and OCTAHEDRAL filters where
 * asked). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pm_api__mo_view {
    /* in */
    const unsigned char *raw;  /* ATTRIBUTES: count * stride bytes */
    const uint32_t *indices;   /* TRIANGLES: count indices (a triangle list) */
    uint32_t count, stride;    /* stride: 4..256, a multiple of 4 (attributes) */
    uint32_t vcount;           /* TRIANGLES: vertices the indices address */
    bool triangles;
    bool exp_fixed;            /* ATTRIBUTES of floats, each a multiple of
                                  2^exponent below 2^(exponent + 23) in magnitude:
                                  through the EXPONENTIAL filter, exactly */
    int exponent;
    const float *oct_normals;  /* ATTRIBUTES of stride 4 (int8 VEC3 + padding):
                                  made from these unit vectors (3 floats each)
                                  by the OCTAHEDRAL filter (8 bits); NULL: none */
    /* out: where the stream landed in the packed buffer */
    size_t offset, length;
} pm_api__mo_view;

/* A primitive's streams reordered for the codecs: triangles for the
 * vertex cache in strip-like order (meshopt_optimizeVertexCacheStrip:
 * smaller index and vertex streams than meshopt_optimizeVertexCache's
 * order, at a slightly worse cache hit rate), vertices in first-use order
 * (meshopt_optimizeVertexFetchRemap), vertices no triangle uses kept at
 * the end in their order, so the vertex count stays. Every array is
 * malloc'd (NULL when its input is NULL). */
typedef struct pm_api__mo_prim {
    float *positions, *normals, *uvs, *colors;
    uint32_t *indices;
} pm_api__mo_prim;

/* Returns 0, or -1 when out of memory (m then holds nothing). Indices must
 * be below vcount and icount a multiple of 3. */
int pm_api__meshopt_reorder(const float *positions, const float *normals, const float *uvs,
                            const float *colors, uint32_t vcount, const uint32_t *indices,
                            uint32_t icount, pm_api__mo_prim *m);
void pm_api__meshopt_prim_free(pm_api__mo_prim *m);

/* Encodes every view into one malloc'd buffer (*out, *len), each stream
 * starting on a 4-byte boundary, zero padding between them. Returns 0, or
 * -1 when out of memory. Output is a pure function of the input. */
int pm_api__meshopt_pack(pm_api__mo_view *v, size_t n, unsigned char **out, size_t *len);
#endif
