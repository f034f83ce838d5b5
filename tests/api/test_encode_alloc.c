/* pm_api_encode_with: the encoders' big buffers from the caller's
 * allocator, every byte accounted, and a refusal that stops the encoding
 * early without a leak. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/encode.h"
#include "scene/scene.h"

static const pm_api_generator gen = {.name = "test", .version = "0.0.1", .path = "/v1/test"};
static const char key[] = "0123456789abcdef0123456789abcdef";

/* A counting allocator with a limit on what it holds at once. */
typedef struct meter {
    size_t limit, held, peak, refusals;
} meter;

static void *m_realloc(void *ctx, void *p, size_t old_size, size_t new_size) {
    meter *m = ctx;
    if (new_size > old_size && m->limit && m->held - old_size + new_size > m->limit) {
        m->refusals++;
        return NULL;
    }
    void *q = realloc(p, new_size);
    if (!q) return NULL;
    m->held = m->held - old_size + new_size;
    if (m->held > m->peak) m->peak = m->held;
    return q;
}

static void m_free(void *ctx, void *p, size_t size) {
    meter *m = ctx;
    cr_assert_geq(m->held, size);
    m->held -= size;
    free(p);
}

/* A 200 x 200 quad grid with UVs: a few MB in every format. */
static pm_scene *grid(pm_arena *a) {
    pm_scene *s = pm_scene_create(a);
    uint32_t n = 200;
    pm_prim *p = pm_scene_add_prim(s, "g", "terrain", PM_PRIM_UV, (n + 1) * (n + 1), n * n * 6);
    const float up[3] = {0, 1, 0};
    for (uint32_t j = 0; j <= n; j++)
        for (uint32_t i = 0; i <= n; i++) {
            float pos[3] = {(float)i * 0.37f, (float)((i * j) % 7) * 0.01f, (float)j * 0.41f};
            float uv[2] = {(float)i / (float)n, (float)j / (float)n};
            cr_assert_geq(pm_prim_add_vertex(s, p, pos, up, uv, NULL), 0);
        }
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a0 = j * (n + 1) + i, b = a0 + n + 1;
            cr_assert_eq(pm_prim_add_tri(s, p, a0, b, a0 + 1), 0);
            cr_assert_eq(pm_prim_add_tri(s, p, a0 + 1, b, b + 1), 0);
        }
    return s;
}

Test(encode_alloc, same_bytes_every_byte_counted_and_refusal_stops_early) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = grid(a);
    for (int f = 0; f < 3; f++) {
        pm_api_buf plain, out;
        pm_api_output o = pm_api_output_default((pm_api_format)f);
        cr_assert_eq(pm_api_encode(s, &gen, key, (pm_api_format)f, &plain), 0);
        meter m = {0};
        pm_api_alloc al = {m_realloc, m_free, &m};
        cr_assert_eq(pm_api_encode_with(s, &gen, key, &o, &al, &out), 0);
        cr_assert_eq(out.len, plain.len);
        cr_assert(memcmp(out.data, plain.data, out.len) == 0, "format %d: other bytes", f);
        /* Only the output is left, trimmed to its length. */
        cr_assert_eq(m.held, out.len, "format %d: held %zu, output %zu", f, m.held, out.len);
        m_free(&m, out.data, out.len);

        /* Less than the output itself, or half of it: refused, never past
         * the limit on the way, and nothing is left held. */
        size_t limits[2] = {plain.len - 1, plain.len / 2};
        for (int k = 0; k < 2; k++) {
            meter tight = {.limit = limits[k]};
            al.ctx = &tight;
            cr_assert_eq(pm_api_encode_with(s, &gen, key, &o, &al, &out), -1);
            cr_assert_eq(tight.held, 0, "format %d leaks %zu bytes", f, tight.held);
            cr_assert_leq(tight.peak, tight.limit);
            cr_assert_gt(tight.refusals, 0);
            cr_assert_null(out.data);
        }

        /* A limit near the output's own size is enough: the writer does not
         * insist on its estimate or on doubling. */
        meter near = {.limit = plain.len + plain.len / 8 + (1u << 16)};
        /* glTF holds its binary buffer beside the text (3/4 of it), GLB
         * the JSON chunk beside the file. */
        if (f != PM_API_FMT_JSON) near.limit += plain.len;
        al.ctx = &near;
        cr_assert_eq(pm_api_encode_with(s, &gen, key, &o, &al, &out), 0,
                     "format %d: refused under %zu for a %zu-byte output", f, near.limit,
                     plain.len);
        m_free(&near, out.data, out.len);
        cr_assert_eq(near.held, 0);
        free(plain.data);
    }
    pm_arena_destroy(a);
}
