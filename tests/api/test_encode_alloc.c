/* pm_api_encode_with: the encoders' big buffers from the caller's
 * allocator, every byte accounted, and a refusal that stops the encoding
 * early without a leak. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/encode.h"
#include "pm_test_scene.h"
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
    pm_scene *s = pm_test_grid_scene(a, 200);
    cr_assert_not_null(s);
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
        pm_api_alloc al = {m_realloc, m_free, &m, NULL};
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
