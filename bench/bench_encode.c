/* Encoder CPU time (the process CPU clock: the machine is shared) on a
 * 1M-vertex scene (a 999 x 1000 quad grid with UVs and colours, about 2M
 * triangles), per format, against a peer:
 * jansson serializing the same numbers (the obvious way to write the JSON
 * mesh) and a bare memcpy of the vertex data (the floor for GLB). Also a
 * 4M-vertex run to show the cost grows linearly. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scene/scene.h"
#include "pm_api/encode.h"

static const pm_api_generator gen = {.name = "bench", .version = "1", .path = "/bench"};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pm_scene *grid(pm_arena *a, uint32_t nx, uint32_t nz) {
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "terrain", "terrain", PM_PRIM_UV | PM_PRIM_COLOR,
                                   (nx + 1) * (nz + 1), nx * nz * 6);
    for (uint32_t j = 0; j <= nz; j++)
        for (uint32_t i = 0; i <= nx; i++) {
            float h = 0.37f * (float)((i * 7919u + j * 104729u) % 1000u) / 1000.0f;
            float pos[3] = {(float)i * 0.25f, h, (float)j * 0.25f};
            float n[3] = {0, 1, 0}, uv[2] = {(float)i / (float)nx, (float)j / (float)nz};
            float c[4] = {uv[0], uv[1], 0.5f, 1};
            pm_prim_add_vertex(s, p, pos, n, uv, c);
        }
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            uint32_t v = j * (nx + 1) + i, w = v + nx + 1;
            pm_prim_add_tri(s, p, v, w, v + 1);
            pm_prim_add_tri(s, p, v + 1, w, w + 1);
        }
    return s;
}

static double best_of(int reps, const pm_scene *s, pm_api_format f, size_t *len) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        pm_api_buf b;
        double t0 = now();
        if (pm_api_encode(s, &gen, "00000000000000000000000000000000", f, &b) != 0) exit(1);
        double t = now() - t0;
        if (t < best) best = t;
        *len = b.len;
        free(b.data);
    }
    return best;
}

/* The peer for the JSON mesh: the same arrays through jansson. */
static double jansson_peer(const pm_scene *s, size_t *len) {
    double t0 = now();
    const pm_prim *p = &s->prims[0];
    json_t *m = json_object();
    const struct { const char *k; const float *v; size_t n; } arrs[] = {
        {"positions", p->positions, 3}, {"normals", p->normals, 3}, {"uvs", p->uvs, 2},
        {"colors", p->colors, 4}};
    for (int a = 0; a < 4; a++) {
        json_t *arr = json_array();
        for (size_t i = 0; i < arrs[a].n * p->vcount; i++)
            json_array_append_new(arr, json_real(arrs[a].v[i]));
        json_object_set_new(m, arrs[a].k, arr);
    }
    json_t *idx = json_array();
    for (uint32_t i = 0; i < p->icount; i++) json_array_append_new(idx, json_integer(p->indices[i]));
    json_object_set_new(m, "indices", idx);
    char *text = json_dumps(m, JSON_COMPACT | JSON_REAL_PRECISION(9));
    double t = now() - t0;
    *len = strlen(text);
    free(text);
    json_decref(m);
    return t;
}

static double memcpy_floor(const pm_scene *s) {
    const pm_prim *p = &s->prims[0];
    size_t bytes = (size_t)p->vcount * 12 * 4 + (size_t)p->icount * 4;
    char *dst = malloc(bytes);
    double t0 = now();
    size_t o = 0;
    memcpy(dst + o, p->positions, (size_t)p->vcount * 12), o += (size_t)p->vcount * 12;
    memcpy(dst + o, p->normals, (size_t)p->vcount * 12), o += (size_t)p->vcount * 12;
    memcpy(dst + o, p->uvs, (size_t)p->vcount * 8), o += (size_t)p->vcount * 8;
    memcpy(dst + o, p->colors, (size_t)p->vcount * 16), o += (size_t)p->vcount * 16;
    memcpy(dst + o, p->indices, (size_t)p->icount * 4);
    double t = now() - t0;
    volatile char sink = dst[bytes / 2];
    (void)sink;
    free(dst);
    return t;
}

int main(void) {
    const char *names[] = {"json", "gltf", "glb"};
    uint32_t sizes[][2] = {{999, 1000}, {1999, 2000}};
    for (int k = 0; k < 2; k++) {
        pm_arena *a = pm_arena_create(1 << 24);
        pm_scene *s = grid(a, sizes[k][0], sizes[k][1]);
        printf("scene: %llu vertices, %llu triangles\n",
               (unsigned long long)pm_scene_vertex_count(s),
               (unsigned long long)pm_scene_triangle_count(s));
        for (int f = 0; f < 3; f++) {
            size_t len;
            double t = best_of(3, s, (pm_api_format)f, &len);
            printf("  encode %-4s %8.1f ms  %7.1f MB  %6.1f MB/s\n", names[f], t * 1e3,
                   (double)len / 1e6, (double)len / 1e6 / t);
        }
        if (k == 0) {
            size_t len;
            double t = jansson_peer(s, &len);
            printf("  peer jansson json_dumps (same arrays, %%.9g) %8.1f ms  %7.1f MB\n",
                   t * 1e3, (double)len / 1e6);
            printf("  floor memcpy of the vertex+index data        %8.1f ms\n",
                   memcpy_floor(s) * 1e3);
        }
        pm_arena_destroy(a);
    }
    return 0;
}
