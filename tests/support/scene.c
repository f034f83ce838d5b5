#include "pm_test_scene.h"

pm_scene *pm_test_grid_scene(pm_arena *a, uint32_t n) {
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = s ? pm_scene_add_prim(s, "g", "terrain", PM_PRIM_UV, (n + 1) * (n + 1), n * n * 6) : NULL;
    if (!p) return NULL;
    const float up[3] = {0, 1, 0};
    for (uint32_t j = 0; j <= n; j++)
        for (uint32_t i = 0; i <= n; i++) {
            float pos[3] = {(float)i * 0.37f, (float)((i * j) % 7) * 0.01f, (float)j * 0.41f};
            float uv[2] = {(float)i / (float)n, (float)j / (float)n};
            if (pm_prim_add_vertex(s, p, pos, up, uv, NULL) < 0) return NULL;
        }
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a0 = j * (n + 1) + i, b = a0 + n + 1;
            if (pm_prim_add_tri(s, p, a0, b, a0 + 1) < 0 || pm_prim_add_tri(s, p, a0 + 1, b, b + 1) < 0)
                return NULL;
        }
    return s;
}
