#define _DEFAULT_SOURCE /* mkstemps */
#include "pm_test_validator.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pm_api/encode.h"

#ifndef PM_NODE_DIR
#error "PM_NODE_DIR must name the build tree's node directory"
#endif

static int write_temp(const void *data, size_t len, const char *suffix, char *path, size_t cap) {
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/pm_validate_XXXXXX%s", tmp && *tmp ? tmp : "/tmp", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) return -1;
    const unsigned char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n <= 0) {
            close(fd);
            unlink(path);
            return -1;
        }
        done += (size_t)n;
    }
    close(fd);
    return 0;
}

static void report_append(char *report, size_t cap, size_t *used, const char *line) {
    if (!report || cap == 0) return;
    size_t n = strlen(line);
    if (*used + n + 1 > cap) n = cap - *used - 1;
    memcpy(report + *used, line, n);
    *used += n;
    report[*used] = '\0';
}

int pm_test_gltf_validate(const void *data, size_t len, int is_glb, char *report, size_t cap) {
    size_t used = 0;
    if (report && cap) report[0] = '\0';
    char path[512];
    if (write_temp(data, len, is_glb ? ".glb" : ".gltf", path, sizeof path) < 0) {
        fprintf(stderr, "validator: cannot write a temporary file\n");
        return -1;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node '%s/tests/tools/validate.mjs' '%s' %s '%s' 2>&1",
             PM_SOURCE_DIR, PM_NODE_DIR, is_glb ? "glb" : "gltf", path);
    FILE *f = popen(cmd, "r");
    int errors = -1, warnings = -1, infos = 0, hints = 0;
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "summary errors=%d warnings=%d infos=%d hints=%d", &errors, &warnings,
                   &infos, &hints) == 4)
            continue;
        fprintf(stderr, "validator (%s): %s", is_glb ? "glb" : "gltf", line);
        report_append(report, cap, &used, line);
    }
    int status = f ? pclose(f) : -1;
    unlink(path);
    if (status != 0 || errors < 0 || warnings < 0) {
        fprintf(stderr, "validator did not run (status %d): is `make node` done? (%s)\n",
                status, PM_NODE_DIR);
        return -1;
    }
    return errors + warnings;
}

/* ---- the JSON mesh, parsed back ---- */

static int fail(const char *what, size_t a, size_t b) {
    fprintf(stderr, "json mesh: %s (%zu vs %zu)\n", what, a, b);
    return 1;
}

/* Checks that arr holds exactly the n floats of want (as float32). */
static int check_floats(const json_t *arr, const float *want, size_t n, const char *what) {
    if (!json_is_array(arr) || json_array_size(arr) != n)
        return fail(what, json_array_size(arr), n);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        if (!json_is_number(e)) return fail(what, i, n);
        if (want && (float)json_number_value(e) != want[i]) return fail(what, i, n);
    }
    return 0;
}

static int check_mesh(const json_t *m, const pm_prim *p) {
    int bad = 0;
    size_t v = p->vcount;
    if (!json_is_string(json_object_get(m, "name")) ||
        strcmp(json_string_value(json_object_get(m, "name")), p->name) != 0)
        bad += fail("mesh name", 0, 0);
    if (!json_is_string(json_object_get(m, "material")) ||
        strcmp(json_string_value(json_object_get(m, "material")), p->material) != 0)
        bad += fail("mesh material", 0, 0);
    bad += check_floats(json_object_get(m, "positions"), p->positions, 3 * v, "positions");
    const json_t *nrm = json_object_get(m, "normals");
    bad += check_floats(nrm, NULL, 3 * v, "normals");
    for (size_t i = 0; !bad && i < v; i++) {
        double x = json_number_value(json_array_get(nrm, 3 * i));
        double y = json_number_value(json_array_get(nrm, 3 * i + 1));
        double z = json_number_value(json_array_get(nrm, 3 * i + 2));
        if (fabs(sqrt(x * x + y * y + z * z) - 1) > 1e-3) bad += fail("unit normal", i, v);
    }
    const json_t *uvs = json_object_get(m, "uvs"), *cols = json_object_get(m, "colors");
    if (p->uvs) bad += check_floats(uvs, p->uvs, 2 * v, "uvs");
    else if (uvs) bad += fail("uvs without PM_PRIM_UV", 0, 0);
    if (p->colors) bad += check_floats(cols, NULL, 4 * v, "colors");
    else if (cols) bad += fail("colors without PM_PRIM_COLOR", 0, 0);
    const json_t *idx = json_object_get(m, "indices");
    if (!json_is_array(idx) || json_array_size(idx) != p->icount)
        return bad + fail("index count", json_array_size(idx), p->icount);
    for (size_t i = 0; i < p->icount; i++) {
        const json_t *e = json_array_get(idx, i);
        json_int_t k = json_is_integer(e) ? json_integer_value(e) : -1;
        if (k < 0 || (size_t)k >= v || (uint32_t)k != p->indices[i])
            return bad + fail("index out of range or wrong", i, v);
    }
    return bad;
}

static int check_tuples(const json_t *arr, const float *want, size_t count, size_t dim,
                        const char *what) {
    if (!json_is_array(arr) || json_array_size(arr) != count)
        return fail(what, json_array_size(arr), count);
    for (size_t i = 0; i < count; i++)
        if (check_floats(json_array_get(arr, i), want + dim * i, dim, what)) return 1;
    return 0;
}

int pm_test_check_json_mesh(const void *data, size_t len, const pm_scene *s) {
    json_error_t e;
    json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &e);
    if (!j) {
        fprintf(stderr, "json mesh does not parse: %s (line %d)\n", e.text, e.line);
        return -1;
    }
    int bad = 0;
    const char *keys[] = {"generator", "version", "key", "meshes", "instances", "metadata",
                          "stats"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!json_object_get(j, keys[i])) bad += fail(keys[i], 0, 0);
    if (json_object_size(j) != sizeof keys / sizeof *keys)
        bad += fail("top-level member count", json_object_size(j), 7);
    const json_t *meshes = json_object_get(j, "meshes"), *inst = json_object_get(j, "instances");
    if (json_array_size(meshes) != s->nprims)
        bad += fail("mesh count", json_array_size(meshes), s->nprims);
    for (uint32_t i = 0; !bad && i < s->nprims; i++)
        bad += check_mesh(json_array_get(meshes, i), &s->prims[i]);
    if (json_array_size(inst) != s->nprops)
        bad += fail("instance set count", json_array_size(inst), s->nprops);
    for (uint32_t i = 0; !bad && i < s->nprops; i++) {
        const json_t *in = json_array_get(inst, i);
        const pm_props *pr = &s->props[i];
        if (strcmp(json_string_value(json_object_get(in, "prop")), pr->name) != 0)
            bad += fail("prop name", i, 0);
        bad += check_tuples(json_object_get(in, "translations"), pr->translations, pr->count, 3,
                            "translations");
        bad += check_tuples(json_object_get(in, "rotations"), pr->rotations, pr->count, 4,
                            "rotations");
        bad += check_tuples(json_object_get(in, "scales"), pr->scales, pr->count, 3, "scales");
    }
    const json_t *st = json_object_get(j, "stats");
    uint64_t nv = pm_scene_vertex_count(s), nt = pm_scene_triangle_count(s);
    if ((uint64_t)json_integer_value(json_object_get(st, "vertices")) != nv)
        bad += fail("stats.vertices", (size_t)json_integer_value(json_object_get(st, "vertices")),
                    nv);
    if ((uint64_t)json_integer_value(json_object_get(st, "triangles")) != nt)
        bad += fail("stats.triangles",
                    (size_t)json_integer_value(json_object_get(st, "triangles")), nt);
    json_decref(j);
    return bad;
}

int pm_test_validate_scene(const pm_scene *s, const pm_api_generator *gen) {
    static const char key[] = "00000000000000000000000000000000";
    int total = 0;
    for (int f = 0; f < 3; f++) {
        pm_api_buf b;
        if (pm_api_encode(s, gen, key, (pm_api_format)f, &b) != 0) {
            fprintf(stderr, "cannot encode the scene as %s\n", pm_api_format_name(f));
            return -1;
        }
        int r = f == PM_API_FMT_JSON ? pm_test_check_json_mesh(b.data, b.len, s)
                                     : pm_test_gltf_validate(b.data, b.len,
                                                             f == PM_API_FMT_GLB, NULL, 0);
        free(b.data);
        if (r < 0) return -1;
        total += r;
    }
    return total;
}
