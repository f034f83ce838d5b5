#include "pm_test_scene.h"
#include <string.h>

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

bool pm_test_meta_same(pm_arena *a, const pm_meta *x, const pm_meta *y) {
    if (!x || !y) return x == y;
    if (x->kind == PM_META_TABLE) x = pm_meta_copy(a, x);
    if (y->kind == PM_META_TABLE) y = pm_meta_copy(a, y);
    if (!x || !y || x->kind != y->kind || x->key_len != y->key_len) return false;
    if (x->key_len && memcmp(x->key, y->key, x->key_len) != 0) return false;
    switch (x->kind) {
    case PM_META_NULL: return true;
    case PM_META_BOOL: return x->u.b == y->u.b;
    case PM_META_INT: return x->u.i == y->u.i;
    case PM_META_NUM: return memcmp(&x->u.n, &y->u.n, sizeof x->u.n) == 0;
    case PM_META_STR: return strcmp(x->u.s, y->u.s) == 0;
    default: break;
    }
    if (x->u.kids.count != y->u.kids.count) return false;
    for (const pm_meta *p = x->u.kids.first, *q = y->u.kids.first; p || q; p = p->next, q = q->next)
        if (!p || !q || !pm_test_meta_same(a, p, q)) return false;
    return true;
}
