/* pm_api_encode_to: an output given to a sink piece by piece is the same
 * bytes as the buffer pm_api_encode_with builds, a GLB's arrays go to the
 * sink straight from the scene (no copy, no output buffer), the sink is
 * told the exact length once before the first byte, nothing is written
 * when the encoding fails, and a sink that stops ends it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/encode.h"
#include "pm_test_scene.h"
#include "scene/scene.h"

static const pm_api_generator gen = {.name = "test", .version = "0.0.1", .path = "/v1/test"};
static const char key[] = "0123456789abcdef0123456789abcdef";

/* Gathers what it is given; stops after stop_after calls (0: never). */
typedef struct collect {
    unsigned char *data;
    size_t len, calls, attempts, stop_after;
    const void *watch;     /* a scene array: was it given as it is? */
    bool watched;
    size_t told, totals;   /* the length told, how many times */
    size_t len_when_told;
} collect;

static void collect_total(void *ctx, size_t n) {
    collect *c = ctx;
    c->told = n;
    c->totals++;
    c->len_when_told = c->len;
}

static int collect_write(void *ctx, const void *p, size_t n) {
    collect *c = ctx;
    c->attempts++;
    if (c->stop_after && c->calls == c->stop_after) return -1;
    c->calls++;
    if (p == c->watch) c->watched = true;
    c->data = realloc(c->data, c->len + n + 1);
    cr_assert_not_null(c->data);
    memcpy(c->data + c->len, p, n);
    c->len += n;
    return 0;
}

/* A terrain-like grid with UVs, a coloured strip and a prop set. */
static pm_scene *scene(pm_arena *a) {
    pm_scene *s = pm_test_grid_scene(a, 60);
    cr_assert_not_null(s);
    pm_prim *c = pm_scene_add_prim(s, "strip", "wall", PM_PRIM_COLOR, 0, 0);
    for (uint32_t i = 0; i < 10; i++) {
        float pos[3] = {(float)i, (float)(i % 2), 5}, rgba[4] = {0.2f, 0.4f, 0.6f, 1};
        cr_assert_geq(pm_prim_add_vertex(s, c, pos, (const float[3]){0, 0, 1}, NULL, rgba), 0);
    }
    for (uint32_t i = 0; i + 2 < 10; i++)
        cr_assert_eq(pm_prim_add_tri(s, c, i, i % 2 ? i + 2 : i + 1, i % 2 ? i + 1 : i + 2), 0);
    pm_props *pr = pm_scene_add_props(s, "lamp");
    for (int i = 0; i < 5; i++)
        cr_assert_eq(pm_props_add(s, pr, (const float[3]){(float)i, 0, 1}, (const float[4]){0, 0, 0, 1},
                                  (const float[3]){1, 1, 1}),
                     0);
    cr_assert_eq(pm_scene_validate(s), 0);
    return s;
}

Test(encode_stream, the_same_bytes_as_the_buffer_in_every_format_and_option) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = scene(a);
    const pm_api_output outs[] = {
        {PM_API_FMT_JSON, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
        {PM_API_FMT_GLTF, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
        {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
        {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, true, PM_API_META_SUMMARY},
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, false, PM_API_META_FULL},
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true, PM_API_META_NONE},
    };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        pm_api_buf buf;
        cr_assert_eq(pm_api_encode_with(s, &gen, key, &outs[i], NULL, &buf), 0);
        collect c = {.watch = s->prims[0].positions};
        const pm_api_sink sink = {.write = collect_write, .ctx = &c, .total = collect_total};
        cr_assert_eq(pm_api_encode_to(s, &gen, key, &outs[i], NULL, &sink), 0, "output %zu", i);
        cr_assert_eq(c.len, buf.len, "output %zu: %zu bytes streamed, %zu built", i, c.len, buf.len);
        cr_assert_eq(c.totals, 1, "output %zu: the length told %zu times", i, c.totals);
        cr_assert_eq(c.told, buf.len, "output %zu: told %zu bytes, %zu came", i, c.told, buf.len);
        cr_assert_eq(c.len_when_told, 0, "output %zu: told after %zu bytes", i, c.len_when_told);
        cr_assert(memcmp(c.data, buf.data, buf.len) == 0, "output %zu: the bytes differ", i);
        if (i == 2)
            cr_assert(c.watched, "a plain GLB's positions go to the sink as the scene holds them");
        free(c.data);
        free(buf.data);
    }
    pm_arena_destroy(a);
}

Test(encode_stream, a_sink_that_stops_ends_the_encoding) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = scene(a);
    pm_api_output o = pm_api_output_default(PM_API_FMT_GLB);
    for (size_t stop = 1; stop <= 4; stop++) {
        collect c = {.stop_after = stop};
        const pm_api_sink sink = {.write = collect_write, .ctx = &c};
        cr_assert_eq(pm_api_encode_to(s, &gen, key, &o, NULL, &sink), -3);
        cr_assert_eq(c.attempts, stop + 1, "no write after the sink stopped");
        free(c.data);
    }
    pm_arena_destroy(a);
}

static void *refuse(void *ctx, void *p, size_t old_size, size_t new_size) {
    (void)ctx, (void)p, (void)old_size, (void)new_size;
    return NULL;
}

static void never_free(void *ctx, void *p, size_t size) { (void)ctx, (void)p, (void)size; }

Test(encode_stream, nothing_is_written_when_the_encoding_fails) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = scene(a);
    const pm_api_alloc none = {refuse, never_free, NULL, NULL};
    for (int f = 0; f < 3; f++) {
        pm_api_output o = pm_api_output_default((pm_api_format)f);
        collect c = {0};
        const pm_api_sink sink = {.write = collect_write, .ctx = &c, .total = collect_total};
        cr_assert_eq(pm_api_encode_to(s, &gen, key, &o, &none, &sink), -1, "format %d", f);
        cr_assert_eq(c.calls, 0, "format %d wrote %zu bytes", f, c.len);
        cr_assert_eq(c.totals, 0, "format %d told a length", f);
    }
    pm_arena_destroy(a);
}
