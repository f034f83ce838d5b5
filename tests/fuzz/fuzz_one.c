#include "fuzz_one.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

void pm_fuzz_limits(pm_api_limits *l) {
    pm_api_limits_default(l);
    l->max_arms = 8;
    l->max_points = 2000;   /* a grid of size 10 needs ~1,000; inputs are <= 4 KB */
    l->max_rooms = 24;
    l->max_grid_size = 10;
    l->max_vertices = 100000;
    l->max_arena_bytes = (size_t)64 << 20;
}

static void pm__fail(const pm_api_generator *gen, const char *what) {
    fprintf(stderr, "fuzz %s: %s\n", gen->name, what);
    abort();
}

static uint32_t pm__le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void pm_fuzz_one(const pm_api_generator *gen, const uint8_t *data, size_t size) {
    static const pm_api_format fmt[3] = {PM_API_FMT_JSON, PM_API_FMT_GLTF, PM_API_FMT_GLB};
    pm_api_limits lim;
    pm_fuzz_limits(&lim);
    pm_api_buf out[3];
    int status;
    int rc = pm_pipeline_run(gen, (const char *)data, size, &lim, 3, fmt, out, &status);
    if (rc < 0) pm__fail(gen, "broken contract: a refusal without a 4xx/503 problem, or output "
                              "the encoder refused");
    if (rc > 0) return;
    for (int i = 0; i < 2; i++) {   /* JSON and glTF: one JSON document each */
        json_error_t err;
        json_t *doc = json_loadb((const char *)out[i].data, out[i].len, 0, &err);
        if (!doc) pm__fail(gen, "the JSON output does not parse");
        json_decref(doc);
    }
    if (out[2].len < 12 || memcmp(out[2].data, "glTF", 4) != 0 || pm__le32(out[2].data + 4) != 2 ||
        pm__le32(out[2].data + 8) != out[2].len)
        pm__fail(gen, "the GLB header is wrong");
    for (int i = 0; i < 3; i++) free(out[i].data);
}
