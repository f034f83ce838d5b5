/* Compact glTF (issue 12): ?compress=meshopt, ?quantize=true, MSFT_lod,
 * ?metadata=; every generator in every mode through the Khronos validator,
 * and a decode round trip with meshoptimizer's own decoders. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <meshoptimizer.h>

#include "pm_api/encode.h"
#include "pm_api/key.h"
#include "pm_test_api.h"
#include "pm_test_validator.h"

extern const pm_api_generator pm_api_gen_junction, pm_api_gen_road, pm_api_gen_network,
    pm_api_gen_dungeon, pm_api_gen_grid;

/* One small request per generator. The road is the docs' example (190 m
 * long: float positions; flattened terrain heights; two LODs; props); the
 * junction is small (uint16 positions). */
typedef struct gen_case { const pm_api_generator *gen; const char *body; } gen_case;

static const gen_case cases[] = {
    {&pm_api_gen_junction,
     "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": [0, 1], \"width\": 7},"
     " {\"direction\": [-1, 0], \"width\": 7}], \"sidewalk\": {\"width\": 2}}"},
    {&pm_api_gen_road,
     "{\"points\": [[0,0,0], [60,0,25], [120,0,-15], [190,0,10]], \"width\": 8, \"shoulder\": 1.5,"
     " \"conform\": \"bank\", \"banking\": {\"max_degrees\": 6},"
     " \"terrain\": {\"origin\": [-30,-70], \"cell\": 4, \"cols\": 66, \"rows\": 36,"
     "  \"noise\": {\"seed\": 5, \"amplitude\": 12, \"wavelength\": 70}},"
     " \"flatten\": {\"margin\": 1.5, \"falloff\": 10},"
     " \"props\": [{\"name\": \"lamp\", \"spacing\": 30, \"offset\": 6.5, \"side\": \"left\"}],"
     " \"lods\": [0.5, 2]}"},
    {&pm_api_gen_network,
     "{\"nodes\": [{\"id\": \"c\", \"position\": [0, 0]}, {\"id\": \"e\", \"position\": [60, 0]},"
     " {\"id\": \"w\", \"position\": [-60, 0]}, {\"id\": \"s\", \"position\": [0, 0.5, 50]}],"
     " \"edges\": [{\"from\": \"c\", \"to\": \"e\"}, {\"from\": \"w\", \"to\": \"c\"},"
     " {\"from\": \"c\", \"to\": \"s\", \"width\": 6, \"points\": [[8, 25]]}],"
     " \"sidewalk\": {\"width\": 2}}"},
    {&pm_api_gen_dungeon, "{\"seed\": 42, \"generate\": {\"count\": 12, \"extent\": [64, 64]}}"},
    {&pm_api_gen_grid, "{\"seed\": 42, \"size\": 6}"},
};
#define NCASES (sizeof cases / sizeof *cases)

static const char key_hex[] = "00112233445566778899aabbccddeeff";

static pm_api_buf encode(const pm_scene *s, const pm_api_generator *gen, pm_api_format f,
                         pm_api_compress c, bool q, pm_api_metadata m) {
    pm_api_output o = {f, c, q, m};
    pm_api_buf b;
    cr_assert_eq(pm_api_encode_output(s, gen, key_hex, &o, &b), 0, "%s: encode", gen->name);
    return b;
}

/* Builds a case's scene into r and encodes it as GLB. */
static pm_api_buf build_glb(pm_test_api_run *r, const pm_api_generator *gen, const char *body,
                            pm_api_compress c, bool q, pm_api_metadata m) {
    pm_test_api_build(r, gen, body, NULL);
    cr_assert(r->generated, "%s did not generate", gen->name);
    return encode(r->scene, gen, PM_API_FMT_GLB, c, q, m);
}

/* Frees what a GLB check holds. */
static void finish(pm_test_api_run *r, pm_api_buf *b, json_t *j) {
    json_decref(j);
    free(b->data);
    pm_test_api_done(r);
}

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The JSON chunk of a GLB (the test owns the reference); *bin, *bin_len
 * the BIN chunk. */
static json_t *glb_json(const pm_api_buf *b, const unsigned char **bin, size_t *bin_len) {
    cr_assert_geq(b->len, 20);
    cr_assert_eq(rd32(b->data), 0x46546C67u);
    uint32_t jlen = rd32(b->data + 12);
    json_error_t err;
    json_t *j = json_loadb((const char *)b->data + 20, jlen, 0, &err);
    cr_assert_not_null(j, "GLB JSON: %s", err.text);
    *bin = NULL;
    *bin_len = 0;
    if (20 + (size_t)jlen + 8 <= b->len) {
        *bin_len = rd32(b->data + 20 + jlen);
        *bin = b->data + 28 + jlen;
    }
    return j;
}

static json_t *glb_only_json(const pm_api_buf *b) {
    const unsigned char *bin;
    size_t n;
    return glb_json(b, &bin, &n);
}

/* ---- every generator, every mode, through the validator ---- */

Test(compact, every_generator_validates_in_every_mode) {
    static const struct { pm_api_format f; pm_api_compress c; bool q; } modes[] = {
        {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, true},
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, false},
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true},
        {PM_API_FMT_GLTF, PM_API_COMPRESS_MESHOPT, true},
    };
    for (size_t i = 0; i < NCASES; i++) {
        pm_test_api_run r;
        pm_test_api_build(&r, cases[i].gen, cases[i].body, NULL);
        cr_assert(r.generated, "%s did not generate", cases[i].gen->name);
        for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
            pm_api_buf b = encode(r.scene, cases[i].gen, modes[m].f, modes[m].c, modes[m].q,
                                 PM_API_META_FULL);
            char report[8192];
            int bad = pm_test_gltf_validate(b.data, b.len, modes[m].f == PM_API_FMT_GLB,
                                            report, sizeof report);
            cr_expect_eq(bad, 0, "%s compress=%d quantize=%d %s: %s", cases[i].gen->name,
                         (int)modes[m].c, (int)modes[m].q, pm_api_format_name(modes[m].f),
                         report);
            free(b.data);
        }
        pm_test_api_done(&r);
    }
}

/* ---- decoding, as a reader would ---- */

typedef struct view_data { unsigned char *data; size_t len, stride; bool owned; } view_data;

/* Every bufferView's bytes: meshopt streams decoded with meshoptimizer's
 * decoders, plain views sliced from the BIN chunk. */
static view_data *decode_views(json_t *j, const unsigned char *bin, size_t bin_len, size_t *n) {
    json_t *views = json_object_get(j, "bufferViews");
    *n = json_array_size(views);
    view_data *v = calloc(*n + 1, sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        json_t *bv = json_array_get(views, i);
        json_t *mo = json_object_get(json_object_get(bv, "extensions"), "EXT_meshopt_compression");
        size_t len = (size_t)json_integer_value(json_object_get(bv, "byteLength"));
        v[i].stride = (size_t)json_integer_value(json_object_get(bv, "byteStride"));
        if (mo) {
            size_t off = (size_t)json_integer_value(json_object_get(mo, "byteOffset"));
            size_t clen = (size_t)json_integer_value(json_object_get(mo, "byteLength"));
            size_t count = (size_t)json_integer_value(json_object_get(mo, "count"));
            size_t stride = (size_t)json_integer_value(json_object_get(mo, "byteStride"));
            const char *mode = json_string_value(json_object_get(mo, "mode"));
            cr_assert_eq(json_integer_value(json_object_get(mo, "buffer")), 0);
            cr_assert_eq(json_integer_value(json_object_get(bv, "buffer")), 1,
                         "the uncompressed layout is the fallback buffer");
            cr_assert_leq(off + clen, bin_len);
            cr_assert_eq(count * stride, len);
            v[i].data = malloc(len);
            v[i].owned = true;
            int rc = strcmp(mode, "TRIANGLES") == 0
                         ? meshopt_decodeIndexBuffer(v[i].data, count, stride, bin + off, clen)
                         : meshopt_decodeVertexBuffer(v[i].data, count, stride, bin + off, clen);
            cr_assert_eq(rc, 0, "view %zu (%s) does not decode", i, mode);
            const char *filter = json_string_value(json_object_get(mo, "filter"));
            if (filter && strcmp(filter, "EXPONENTIAL") == 0)
                meshopt_decodeFilterExp(v[i].data, count, stride);
            else if (filter && strcmp(filter, "OCTAHEDRAL") == 0)
                meshopt_decodeFilterOct(v[i].data, count, stride);
            else
                cr_assert_null(filter, "view %zu: filter %s", i, filter);
        } else {
            size_t off = (size_t)json_integer_value(json_object_get(bv, "byteOffset"));
            cr_assert_leq(off + len, bin_len);
            v[i].data = (unsigned char *)bin + off;
        }
        v[i].len = len;
    }
    return v;
}

static void free_views(view_data *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (v[i].owned) free(v[i].data);
    free(v);
}

/* Component c of element k of an accessor, as a reader turns it into a
 * number (normalized integers scaled to [-1, 1] or [0, 1]). */
static double acc_get(json_t *acc, const view_data *v, size_t k, int c) {
    int ct = (int)json_integer_value(json_object_get(acc, "componentType"));
    bool norm = json_is_true(json_object_get(acc, "normalized"));
    const char *type = json_string_value(json_object_get(acc, "type"));
    size_t comps = type[0] == 'S' ? 1 : (size_t)(type[3] - '0');
    size_t csize = ct == 5120 || ct == 5121 ? 1 : ct == 5122 || ct == 5123 ? 2 : 4;
    size_t stride = v->stride ? v->stride : comps * csize;
    const unsigned char *p = v->data + k * stride + (size_t)c * csize;
    cr_assert_leq(k * stride + comps * csize, v->len);
    switch (ct) {
    case 5120: { int8_t x; memcpy(&x, p, 1); return norm ? fmax(x / 127.0, -1.0) : x; }
    case 5121: return norm ? p[0] / 255.0 : p[0];
    case 5122: { int16_t x; memcpy(&x, p, 2); return norm ? fmax(x / 32767.0, -1.0) : x; }
    case 5123: { uint16_t x; memcpy(&x, p, 2); return norm ? x / 65535.0 : x; }
    case 5125: { uint32_t x; memcpy(&x, p, 4); return x; }
    default: { float x; memcpy(&x, p, 4); return x; }
    }
}

/* One triangle corner: position (metres), normal, UV; and its key (the
 * position on the encoder's 2^-9 m lattice, identical for the decoded and
 * the original data) with the triangle's material. Normals and UVs are
 * compared within their tolerances once the triangles are matched. */
typedef struct corner { double v[8]; int64_t key[4]; } corner;
typedef struct tri { corner c[3]; } tri;

static void corner_key(corner *c, int64_t material) {
    for (int k = 0; k < 3; k++) c->key[k] = (int64_t)nearbyint(c->v[k] * 512);
    c->key[3] = material;
}

static int corner_cmp(const corner *a, const corner *b) {
    for (int k = 0; k < 4; k++)
        if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
    return 0;
}

static int tri_cmp(const void *pa, const void *pb) {
    const tri *a = pa, *b = pb;
    for (int i = 0; i < 3; i++) {
        int c = corner_cmp(&a->c[i], &b->c[i]);
        if (c) return c;
    }
    return 0;
}

/* The rotation of t (winding kept) whose corner sequence is smallest. */
static void tri_canon(tri *t) {
    tri best = *t;
    for (int r = 1; r < 3; r++) {
        tri x = {{t->c[r], t->c[(r + 1) % 3], t->c[(r + 2) % 3]}};
        if (tri_cmp(&x, &best) < 0) best = x;
    }
    *t = best;
}

/* The index of a material name in the glTF's materials. */
static int64_t material_index(json_t *j, const char *name) {
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(j, "materials"), i, m)
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0) return (int64_t)i;
    cr_assert_fail("material %s is not in the glTF", name);
    return -1;
}

/* Every triangle of the scene as the encoder was given it. */
static tri *scene_tris(const pm_scene *s, json_t *j, size_t *n) {
    size_t total = 0;
    for (uint32_t p = 0; p < s->nprims; p++) total += s->prims[p].icount / 3;
    tri *t = calloc(total + 1, sizeof *t);
    size_t at = 0;
    for (uint32_t pi = 0; pi < s->nprims; pi++) {
        const pm_prim *p = &s->prims[pi];
        if (p->icount == 0 || p->vcount == 0) continue;
        int64_t mat = material_index(j, p->material);
        for (uint32_t i = 0; i < p->icount; i++) {
            corner *c = &t[at + i / 3].c[i % 3];
            uint32_t v = p->indices[i];
            for (int k = 0; k < 3; k++) c->v[k] = p->positions[3 * v + k];
            for (int k = 0; k < 3; k++) c->v[3 + k] = p->normals[3 * v + k];
            for (int k = 0; k < 2; k++) c->v[6 + k] = p->uvs ? p->uvs[2 * v + k] : 0;
            corner_key(c, mat);
        }
        at += p->icount / 3;
    }
    for (size_t i = 0; i < at; i++) tri_canon(&t[i]);
    qsort(t, at, sizeof *t, tri_cmp);
    *n = at;
    return t;
}

/* The triangles of one glTF primitive, through its node's transform. */
static size_t decode_prim(json_t *j, json_t *gp, const view_data *views, const double t[3],
                          const double sc[3], tri *out) {
    json_t *accs = json_object_get(j, "accessors");
    json_t *at = json_object_get(gp, "attributes");
    json_t *apos = json_array_get(accs, json_integer_value(json_object_get(at, "POSITION")));
    json_t *anrm = json_array_get(accs, json_integer_value(json_object_get(at, "NORMAL")));
    json_t *juv = json_object_get(at, "TEXCOORD_0");
    json_t *auv = juv ? json_array_get(accs, json_integer_value(juv)) : NULL;
    json_t *aidx = json_array_get(accs, json_integer_value(json_object_get(gp, "indices")));
    size_t vcount = (size_t)json_integer_value(json_object_get(apos, "count"));
    size_t icount = (size_t)json_integer_value(json_object_get(aidx, "count"));
    const view_data *vp = &views[json_integer_value(json_object_get(apos, "bufferView"))];
    const view_data *vn = &views[json_integer_value(json_object_get(anrm, "bufferView"))];
    const view_data *vu = auv ? &views[json_integer_value(json_object_get(auv, "bufferView"))] : NULL;
    const view_data *vi = &views[json_integer_value(json_object_get(aidx, "bufferView"))];
    int64_t mat = json_integer_value(json_object_get(gp, "material"));
    for (size_t i = 0; i < icount; i++) {
        double idx = acc_get(aidx, vi, i, 0);
        cr_assert_lt(idx, (double)vcount, "index out of range");
        size_t v = (size_t)idx;
        corner *c = &out[i / 3].c[i % 3];
        for (int k = 0; k < 3; k++) c->v[k] = acc_get(apos, vp, v, k) * sc[k] + t[k];
        for (int k = 0; k < 3; k++) c->v[3 + k] = acc_get(anrm, vn, v, k);
        for (int k = 0; k < 2; k++) c->v[6 + k] = vu ? acc_get(auv, vu, v, k) : 0;
        corner_key(c, mat);
    }
    for (size_t i = 0; i < icount / 3; i++) tri_canon(&out[i]);
    return icount / 3;
}

/* Decodes a GLB as a reader would (every node holding a primitive mesh,
 * through its translation and scale) and compares the triangles with the
 * scene's as sets (meshopt reorders, tiles split; winding and material
 * kept): positions within pos_tol metres, normals within nrm_tol, UVs
 * within uv_tol. */
static void round_trip(const pm_scene *s, const pm_api_buf *b, double pos_tol, double nrm_tol,
                       double uv_tol, const char *what) {
    const unsigned char *bin;
    size_t bin_len, nviews, nwant;
    json_t *j = glb_json(b, &bin, &bin_len);
    view_data *views = decode_views(j, bin, bin_len, &nviews);
    json_t *meshes = json_object_get(j, "meshes");
    tri *want = scene_tris(s, j, &nwant);
    tri *got = calloc(nwant + 1, sizeof *got);
    size_t ngot = 0, ni;
    json_t *node;
    json_array_foreach(json_object_get(j, "nodes"), ni, node) {
        json_t *jm = json_object_get(node, "mesh");
        if (!jm) continue;
        json_t *mesh = json_array_get(meshes, json_integer_value(jm));
        if (json_object_get(mesh, "extras")) continue;   /* a prop's marker */
        double t[3] = {0, 0, 0}, sc[3] = {1, 1, 1};
        json_t *tt = json_object_get(node, "translation"), *ss = json_object_get(node, "scale");
        for (int k = 0; k < 3; k++) {
            if (tt) t[k] = json_number_value(json_array_get(tt, k));
            if (ss) sc[k] = json_number_value(json_array_get(ss, k));
        }
        size_t pi;
        json_t *gp;
        json_array_foreach(json_object_get(mesh, "primitives"), pi, gp) {
            size_t icount = (size_t)json_integer_value(json_object_get(
                json_array_get(json_object_get(j, "accessors"),
                               json_integer_value(json_object_get(gp, "indices"))), "count"));
            cr_assert_leq(ngot + icount / 3, nwant, "%s: more triangles than the scene", what);
            ngot += decode_prim(j, gp, views, t, sc, got + ngot);
        }
    }
    cr_assert_eq(ngot, nwant, "%s: %zu triangles decoded, %zu in the scene", what, ngot, nwant);
    qsort(got, ngot, sizeof *got, tri_cmp);
    for (size_t i = 0; i < ngot; i++) {
        cr_assert_eq(tri_cmp(&got[i], &want[i]), 0, "%s: the triangle sets differ", what);
        for (int c = 0; c < 3; c++) {
            const double *g = got[i].c[c].v, *w = want[i].c[c].v;
            for (int k = 0; k < 3; k++)
                cr_assert_leq(fabs(g[k] - w[k]), pos_tol, "%s: position off by %g", what,
                              fabs(g[k] - w[k]));
            for (int k = 3; k < 6; k++) cr_assert_leq(fabs(g[k] - w[k]), nrm_tol, "%s: normal off", what);
            for (int k = 6; k < 8; k++) cr_assert_leq(fabs(g[k] - w[k]), uv_tol, "%s: uv off", what);
        }
    }
    free(want);
    free(got);
    free_views(views, nviews);
    json_decref(j);
}

Test(compact, meshopt_round_trip_is_lossless) {
    for (size_t i = 0; i < NCASES; i++) {
        pm_test_api_run r;
        pm_api_buf b = build_glb(&r, cases[i].gen, cases[i].body, PM_API_COMPRESS_MESHOPT, false,
                                 PM_API_META_NONE);
        round_trip(r.scene, &b, 0, 0, 0, cases[i].gen->name);
        free(b.data);
        pm_test_api_done(&r);
    }
}

/* Positions within 2^-10 m (the lattice's half step, for the float ones
 * with meshopt too), int8 normals within half a step (0.5 / 127; with
 * meshopt, octahedral: 0.02), unit UVs within half a uint16 step, other
 * UVs exact (with meshopt on the 2^-14 lattice: 2^-15): the documented
 * bounds. With and without meshopt. */
Test(compact, quantized_round_trip_within_the_documented_error) {
    const double pos_tol = 1.0 / 1024 + 1e-9, nrm_tol[2] = {0.5 / 127 + 1e-6, 0.02},
                 uv_tol[2] = {0.5 / 65535 + 1e-9, 1.0 / 32768 + 1e-9};
    for (size_t i = 0; i < NCASES; i++) {
        pm_test_api_run r;
        pm_test_api_build(&r, cases[i].gen, cases[i].body, NULL);
        for (int c = 0; c < 2; c++) {
            pm_api_buf b = encode(r.scene, cases[i].gen, PM_API_FMT_GLB,
                                  c ? PM_API_COMPRESS_MESHOPT : PM_API_COMPRESS_NONE, true,
                                 PM_API_META_NONE);
            round_trip(r.scene, &b, pos_tol, nrm_tol[c], uv_tol[c], cases[i].gen->name);
            free(b.data);
        }
        pm_test_api_done(&r);
    }
}

/* The small junction's meshes get uint16 positions with a node transform;
 * the 190 m road's asphalt keeps float32 positions (wider than 128 m: the
 * 1 mm bound would not hold in uint16) but its normals are int8. */
Test(compact, quantize_picks_types_by_extent) {
    for (size_t i = 0; i < 2; i++) {
        pm_test_api_run r;
        pm_api_buf b = build_glb(&r, cases[i].gen, cases[i].body, PM_API_COMPRESS_NONE, true,
                                 PM_API_META_NONE);
        json_t *j = glb_only_json(&b);
        json_t *node0 = json_array_get(json_object_get(j, "nodes"), 0);
        json_t *req = json_object_get(j, "extensionsRequired");
        cr_assert_str_eq(json_string_value(json_array_get(req, 0)), "KHR_mesh_quantization");
        json_t *mesh = json_array_get(json_object_get(j, "meshes"),
                                      (size_t)json_integer_value(json_object_get(node0, "mesh")));
        json_t *at = json_object_get(json_array_get(json_object_get(mesh, "primitives"), 0),
                                     "attributes");
        json_t *accs = json_object_get(j, "accessors");
        json_t *pos = json_array_get(accs, (size_t)json_integer_value(json_object_get(at, "POSITION")));
        json_t *nrm = json_array_get(accs, (size_t)json_integer_value(json_object_get(at, "NORMAL")));
        cr_assert_eq(json_integer_value(json_object_get(nrm, "componentType")), 5120);
        cr_assert(json_is_true(json_object_get(nrm, "normalized")));
        if (cases[i].gen == &pm_api_gen_junction) {
            cr_assert_eq(json_integer_value(json_object_get(pos, "componentType")), 5123);
            cr_assert_eq(json_number_value(json_array_get(json_object_get(node0, "scale"), 0)),
                         1.0 / 512);
            cr_assert_not_null(json_object_get(node0, "translation"));
        } else {
            cr_assert_str_eq(json_string_value(json_object_get(node0, "name")), "asphalt");
            cr_assert_eq(json_integer_value(json_object_get(pos, "componentType")), 5126);
            cr_assert_null(json_object_get(node0, "scale"));
        }
        finish(&r, &b, j);
    }
}

/* With meshopt, the road's 190 m asphalt stores its positions as float32
 * lattice points through the EXPONENTIAL filter with one exponent, -9,
 * for every value (fixed point: what compresses), its UVs (metres times
 * uv_scale, beyond [0, 1]) on the 2^-14 lattice with exponent -14, and
 * its int8 normals through the OCTAHEDRAL filter. */
Test(compact, meshopt_quantize_filters_large_meshes) {
    pm_test_api_run r;
    pm_api_buf b = build_glb(&r, cases[1].gen, cases[1].body, PM_API_COMPRESS_MESHOPT, true,
                             PM_API_META_NONE);
    const unsigned char *bin;
    size_t bin_len, nviews;
    json_t *j = glb_json(&b, &bin, &bin_len);
    json_t *node0 = json_array_get(json_object_get(j, "nodes"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(node0, "name")), "asphalt");
    json_t *mesh = json_array_get(json_object_get(j, "meshes"),
                                  (size_t)json_integer_value(json_object_get(node0, "mesh")));
    json_t *at = json_object_get(json_array_get(json_object_get(mesh, "primitives"), 0),
                                 "attributes");
    static const struct { const char *attr, *filter; int exponent; } want[] = {
        {"POSITION", "EXPONENTIAL", -9}, {"TEXCOORD_0", "EXPONENTIAL", -14},
        {"NORMAL", "OCTAHEDRAL", 0}};
    for (size_t k = 0; k < 3; k++) {
        json_t *acc = json_array_get(json_object_get(j, "accessors"),
                                     (size_t)json_integer_value(json_object_get(at, want[k].attr)));
        json_t *bv = json_array_get(json_object_get(j, "bufferViews"),
                                    (size_t)json_integer_value(json_object_get(acc, "bufferView")));
        json_t *mo = json_object_get(json_object_get(bv, "extensions"), "EXT_meshopt_compression");
        cr_assert_str_eq(json_string_value(json_object_get(mo, "filter")), want[k].filter,
                         "%s", want[k].attr);
        if (!want[k].exponent) continue;
        cr_assert_eq(json_integer_value(json_object_get(acc, "componentType")), 5126);
        /* the stream before the filter is decoded: every exponent byte the same */
        size_t count = (size_t)json_integer_value(json_object_get(mo, "count"));
        size_t stride = (size_t)json_integer_value(json_object_get(mo, "byteStride"));
        uint32_t *raw = malloc(count * stride);
        cr_assert_eq(meshopt_decodeVertexBuffer(
                         raw, count, stride,
                         bin + json_integer_value(json_object_get(mo, "byteOffset")),
                         (size_t)json_integer_value(json_object_get(mo, "byteLength"))),
                     0);
        for (size_t i = 0; i < count * stride / 4; i++)
            cr_assert_eq((int8_t)(raw[i] >> 24), want[k].exponent, "%s value %zu",
                         want[k].attr, i);
        free(raw);
    }
    /* decoded, the positions are lattice points */
    view_data *views = decode_views(j, bin, bin_len, &nviews);
    json_t *pos = json_array_get(json_object_get(j, "accessors"),
                                 (size_t)json_integer_value(json_object_get(at, "POSITION")));
    const view_data *vp = &views[json_integer_value(json_object_get(pos, "bufferView"))];
    for (size_t i = 0; i < (size_t)json_integer_value(json_object_get(pos, "count")); i++)
        for (int c = 0; c < 3; c++) {
            double x = acc_get(pos, vp, i, c) * 512;
            cr_assert_eq(x, nearbyint(x), "position %zu is not a lattice point", i);
        }
    free_views(views, nviews);
    finish(&r, &b, j);
}

/* Same input, same bytes; and the options change the bytes. */
Test(compact, output_is_deterministic_and_smaller) {
    pm_test_api_run r;
    pm_test_api_build(&r, &pm_api_gen_grid, cases[4].body, NULL);
    pm_api_buf plain = encode(r.scene, r.gen, PM_API_FMT_GLB, PM_API_COMPRESS_NONE, false,
                             PM_API_META_NONE);
    pm_api_buf a = encode(r.scene, r.gen, PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true,
                          PM_API_META_NONE);
    pm_api_buf b = encode(r.scene, r.gen, PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true,
                          PM_API_META_NONE);
    cr_assert_eq(a.len, b.len);
    cr_assert_eq(memcmp(a.data, b.data, a.len), 0);
    cr_assert_lt(a.len * 3, plain.len, "meshopt + quantize: %zu bytes vs %zu plain", a.len,
                 plain.len);
    free(plain.data);
    free(a.data);
    free(b.data);
    pm_test_api_done(&r);
}

/* ---- LODs ---- */

Test(compact, road_lods_are_one_msft_lod_node) {
    pm_test_api_run r;
    pm_api_buf b = build_glb(&r, &pm_api_gen_road, cases[1].body, PM_API_COMPRESS_NONE, false,
                             PM_API_META_NONE);
    json_t *j = glb_only_json(&b);
    json_t *nodes = json_object_get(j, "nodes");
    json_t *roots = json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "nodes");
    /* find the set node and the level nodes by name */
    json_t *set = NULL;
    size_t i, setn = 0, lod1 = 0, lod2 = 0, asphalt = 0, shoulder = 0;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        const char *name = json_string_value(json_object_get(n, "name"));
        if (strcmp(name, "road") == 0) set = n, setn = i;
        if (strcmp(name, "road_lod1") == 0) lod1 = i;
        if (strcmp(name, "road_lod2") == 0) lod2 = i;
        if (strcmp(name, "asphalt") == 0) asphalt = i;
        if (strcmp(name, "shoulder") == 0) shoulder = i;
    }
    cr_assert_not_null(set);
    json_t *ids = json_object_get(json_object_get(json_object_get(set, "extensions"), "MSFT_lod"), "ids");
    cr_assert_eq(json_array_size(ids), 2);
    cr_assert_eq(json_integer_value(json_array_get(ids, 0)), (json_int_t)lod1);
    cr_assert_eq(json_integer_value(json_array_get(ids, 1)), (json_int_t)lod2);
    json_t *kids = json_object_get(set, "children");
    cr_assert_eq(json_array_size(kids), 2);
    cr_assert_eq(json_integer_value(json_array_get(kids, 0)), (json_int_t)asphalt);
    cr_assert_eq(json_integer_value(json_array_get(kids, 1)), (json_int_t)shoulder);
    json_t *cov = json_object_get(json_object_get(set, "extras"), "MSFT_screencoverage");
    cr_assert_eq(json_array_size(cov), 3);
    for (size_t k = 0; k < 3; k++) {
        double c = json_number_value(json_array_get(cov, k));
        cr_assert(c >= 0 && c <= 1);
        if (k) cr_assert_leq(c, json_number_value(json_array_get(cov, k - 1)));
    }
    cr_assert_eq(json_number_value(json_array_get(cov, 2)), 0);
    /* a viewer draws one level: only the set node (not its levels, not
     * level 0 directly) is a root */
    bool root_set = false;
    json_array_foreach(roots, i, n) {
        size_t k = (size_t)json_integer_value(n);
        cr_assert(k != lod1 && k != lod2 && k != asphalt && k != shoulder,
                  "node %zu is drawn beside its LOD set", k);
        root_set |= k == setn;
    }
    cr_assert(root_set);
    bool declared = false;
    json_array_foreach(json_object_get(j, "extensionsUsed"), i, n)
        declared |= strcmp(json_string_value(n), "MSFT_lod") == 0;
    cr_assert(declared);
    cr_assert_null(json_object_get(j, "extensionsRequired"), "MSFT_lod is optional");
    finish(&r, &b, j);
}

/* ---- metadata modes ---- */

static json_t *json_mesh_metadata(const pm_scene *s, const pm_api_generator *gen,
                                  pm_api_metadata m, bool *present) {
    pm_api_buf b = encode(s, gen, PM_API_FMT_JSON, PM_API_COMPRESS_NONE, false, m);
    json_error_t err;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, &err);
    cr_assert_not_null(j, "%s", err.text);
    free(b.data);
    json_t *meta = json_object_get(j, "metadata");
    *present = meta != NULL;
    json_incref(meta);
    cr_assert_not_null(json_object_get(j, "stats"), "stats stay in every mode");
    json_decref(j);
    return meta;
}

/* Removes a summary path ("a.b", "a[].b") from a full metadata copy,
 * returning how many elements it held (*seen: whether it was there). */
static size_t drop_path(json_t *v, const char *path, bool *seen) {
    const char *dot = strchr(path, '.');
    char head[64];
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    cr_assert_lt(n, sizeof head);
    memcpy(head, path, n);
    head[n] = '\0';
    bool each = n > 2 && strcmp(head + n - 2, "[]") == 0;
    if (each) head[n - 2] = '\0';
    json_t *child = json_object_get(v, head);
    if (!child) return 0;
    if (!dot) {
        size_t count = json_is_array(child) ? json_array_size(child) : 1;
        json_object_del(v, head);
        *seen = true;
        return count;
    }
    size_t total = 0, i;
    json_t *e;
    if (each) {
        json_array_foreach(child, i, e) total += drop_path(e, dot + 1, seen);
    } else {
        total = drop_path(child, dot + 1, seen);
    }
    return total;
}

Test(compact, metadata_summary_and_none_for_every_generator) {
    for (size_t i = 0; i < NCASES; i++) {
        const pm_api_generator *gen = cases[i].gen;
        cr_assert_not_null(gen->summary_omit, "%s defines no summary", gen->name);
        pm_test_api_run r;
        pm_test_api_build(&r, gen, cases[i].body, NULL);
        bool present;
        json_t *full = json_mesh_metadata(r.scene, gen, PM_API_META_FULL, &present);
        cr_assert(present);
        json_t *summary = json_mesh_metadata(r.scene, gen, PM_API_META_SUMMARY, &present);
        cr_assert(present);
        json_t *none = json_mesh_metadata(r.scene, gen, PM_API_META_NONE, &present);
        cr_assert(!present, "%s: metadata=none still writes metadata", gen->name);
        /* summary == full without the omitted paths, plus "omitted" */
        json_t *expect = json_deep_copy(full);
        json_t *omitted = json_object();
        size_t dropped = 0;
        for (const char *const *p = gen->summary_omit; *p; p++) {
            bool seen = false;
            size_t n = drop_path(expect, *p, &seen);
            if (seen) json_object_set_new(omitted, *p, json_integer((json_int_t)n));
            dropped += n;
        }
        cr_assert_gt(dropped, 0, "%s: the test request has nothing to summarize", gen->name);
        if (json_object_size(omitted)) json_object_set(expect, "omitted", omitted);
        char *a = json_dumps(summary, JSON_SORT_KEYS | JSON_COMPACT);
        char *e = json_dumps(expect, JSON_SORT_KEYS | JSON_COMPACT);
        char *f = json_dumps(full, JSON_COMPACT);
        cr_expect_str_eq(a, e, "%s summary", gen->name);
        cr_expect_lt(strlen(a), strlen(f), "%s: summary is not smaller", gen->name);
        free(a);
        free(e);
        free(f);
        json_decref(omitted);
        json_decref(expect);
        json_decref(full);
        json_decref(summary);
        json_decref(none);
        pm_test_api_done(&r);
    }
}

/* The grid's summary drops its per-quad arrays; glTF extras follow the
 * same mode. */
Test(compact, grid_summary_in_gltf_extras) {
    pm_test_api_run r;
    pm_api_buf b = build_glb(&r, &pm_api_gen_grid, cases[4].body, PM_API_COMPRESS_NONE, false,
                             PM_API_META_SUMMARY);
    json_t *j = glb_only_json(&b);
    json_t *meta = json_object_get(
        json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "extras"), "metadata");
    cr_assert_not_null(json_object_get(meta, "counts"));
    cr_assert_not_null(json_object_get(meta, "quality"));
    cr_assert_null(json_object_get(meta, "quads"));
    cr_assert_null(json_object_get(meta, "neighbors"));
    json_t *om = json_object_get(meta, "omitted");
    cr_assert_eq(json_integer_value(json_object_get(om, "quads")),
                 json_integer_value(json_object_get(json_object_get(meta, "counts"), "quads")));
    json_decref(j);
    free(b.data);
    b = encode(r.scene, r.gen, PM_API_FMT_GLB, PM_API_COMPRESS_NONE, false, PM_API_META_NONE);
    j = glb_only_json(&b);
    json_t *extras = json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "extras");
    cr_assert_null(json_object_get(extras, "metadata"));
    cr_assert_not_null(json_object_get(extras, "stats"));
    cr_assert_str_eq(json_string_value(json_object_get(extras, "key")), key_hex);
    finish(&r, &b, j);
}

/* ---- the options: strict values, the key, the memo code ---- */

static int parse(pm_api_format f, const char *c, const char *q, const char *m, pm_api_output *o,
                 pm_api_problem *p) {
    pm_api_problem_init(p);
    *o = pm_api_output_default(f);
    return pm_api_output_parse(c, q, m, o, p);
}

Test(compact, options_are_strict_enums) {
    pm_api_output o;
    pm_api_problem p;
    cr_assert_eq(parse(PM_API_FMT_GLB, "meshopt", "true", "summary", &o, &p), 0);
    cr_assert(o.compress == PM_API_COMPRESS_MESHOPT && o.quantize && o.metadata == PM_API_META_SUMMARY);
    pm_api_problem_free(&p);
    cr_assert_eq(parse(PM_API_FMT_GLTF, "none", "false", "none", &o, &p), 0);
    cr_assert(o.compress == PM_API_COMPRESS_NONE && !o.quantize && o.metadata == PM_API_META_NONE);
    pm_api_problem_free(&p);
    static const char *const bad[][4] = {
        /* compress, quantize, metadata, the pointer */
        {"Meshopt", NULL, NULL, "/compress"}, {"draco", NULL, NULL, "/compress"},
        {"", NULL, NULL, "/compress"},        {NULL, "1", NULL, "/quantize"},
        {NULL, "TRUE", NULL, "/quantize"},    {NULL, "yes", NULL, "/quantize"},
        {NULL, NULL, "Full", "/metadata"},    {NULL, NULL, "some", "/metadata"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(parse(PM_API_FMT_GLB, bad[i][0], bad[i][1], bad[i][2], &o, &p), -1);
        cr_assert_eq(p.status, 422);
        cr_assert(pm_test_api_has_error(&p, bad[i][3], NULL), "no error at %s", bad[i][3]);
        pm_api_problem_free(&p);
    }
    /* the JSON mesh has no buffers to compress or quantize; metadata applies */
    cr_assert_eq(parse(PM_API_FMT_JSON, "meshopt", "true", "summary", &o, &p), -1);
    cr_assert(pm_test_api_has_error(&p, "/compress", "glTF"));
    cr_assert(pm_test_api_has_error(&p, "/quantize", "glTF"));
    pm_api_problem_free(&p);
    cr_assert_eq(parse(PM_API_FMT_JSON, "none", "false", "summary", &o, &p), 0);
    pm_api_problem_free(&p);
    cr_assert(pm_api_output_param("compress") && pm_api_output_param("quantize") &&
              pm_api_output_param("metadata") && pm_api_output_param("format"));
    cr_assert(!pm_api_output_param("seed"));
}

Test(compact, options_enter_the_key_and_the_memo_code) {
    json_t *canon = json_pack("{s:i}", "seed", 42);
    const pm_api_generator *gen = &pm_api_gen_grid;
    pm_api_output d = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_key k0 = pm_api_cache_key(gen, canon, PM_API_FMT_GLB);
    pm_api_key kd = pm_api_cache_key_output(gen, canon, &d);
    cr_assert(k0.hi == kd.hi && k0.lo == kd.lo, "default options keep the old key");
    pm_api_output variants[] = {
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, false, PM_API_META_FULL},
        {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, true, PM_API_META_FULL},
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true, PM_API_META_FULL},
        {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, false, PM_API_META_SUMMARY},
        {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, false, PM_API_META_NONE},
        {PM_API_FMT_GLTF, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
        {PM_API_FMT_JSON, PM_API_COMPRESS_NONE, false, PM_API_META_SUMMARY},
    };
    size_t n = sizeof variants / sizeof *variants;
    pm_api_key keys[8];
    uint32_t codes[8];
    keys[0] = kd;
    codes[0] = pm_api_output_code(&d);
    for (size_t i = 0; i < n; i++) {
        keys[i + 1] = pm_api_cache_key_output(gen, canon, &variants[i]);
        codes[i + 1] = pm_api_output_code(&variants[i]);
    }
    for (size_t i = 0; i <= n; i++)
        for (size_t k = 0; k < i; k++) {
            cr_assert(keys[i].hi != keys[k].hi || keys[i].lo != keys[k].lo, "keys %zu, %zu", i, k);
            cr_assert_neq(codes[i], codes[k]);
        }
    json_decref(canon);
}
