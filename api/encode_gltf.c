/* glTF 2.0: .gltf (JSON, the buffer as a base64 data URI) and GLB. */
#include <stdlib.h>
#include <string.h>

#include "encode_writer.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the glTF buffer is written from host floats: little-endian hosts only"
#endif

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

enum {
    GL_UNSIGNED_SHORT = 5123,
    GL_UNSIGNED_INT = 5125,
    GL_FLOAT = 5126,
    GL_ARRAY_BUFFER = 34962,
    GL_ELEMENT_ARRAY_BUFFER = 34963,
};

/* One accessor and the bufferView it alone uses (tightly packed, so no
 * byteStride), with where its bytes come from. */
typedef struct gltf_acc {
    const void *src;          /* floats or uint32 indices */
    size_t offset, length;    /* in the buffer; length before padding */
    uint32_t count;
    int ctype, target;        /* target 0: none (instancing data) */
    const char *type;         /* "SCALAR", "VEC2", … */
    bool minmax;
    float min[3], max[3];
} gltf_acc;

typedef struct gltf_prim_ref {
    uint32_t pos, nrm, uv, col, idx;   /* accessor indices; UINT32_MAX: absent */
    uint32_t material;
    bool opens;                        /* starts a new glTF mesh (its group) */
} gltf_prim_ref;

typedef struct gltf_plan {
    const pm_api__view *v;
    gltf_acc *acc;
    uint32_t nacc;
    size_t bin_len;
    gltf_prim_ref *prims;     /* per scene primitive; idx UINT32_MAX: skipped */
    const char **materials;   /* unique material names, first use first */
    uint32_t nmat;
    uint32_t marker_pos, marker_nrm, marker_idx, marker_mat;
    uint32_t *prop_acc;       /* per prop set: first of its T, R, S accessors */
    uint32_t *prop_mesh;      /* per prop set: its marker mesh */
    const char **mesh_names;  /* marker meshes: one per distinct prop name */
    uint32_t nmarkers, nprim_meshes;
} gltf_plan;

/* ---- the marker mesh: a 0.2 x 1 x 0.2 m post standing on its origin ---- */

#define MARKER_V 24
#define MARKER_I 36

typedef struct marker {
    float pos[MARKER_V * 3], nrm[MARKER_V * 3];
    uint32_t idx[MARKER_I];
} marker;

/* Each face spans axes u, v with u x v = its outward normal, so corners
 * (-,-) (+,-) (+,+) (-,+) run counter-clockwise seen from outside. */
static void marker_build(marker *m) {
    static const int faces[6][3] = {/* normal axis, u axis, v axis */
                                    {0, 1, 2}, {1, 2, 0}, {2, 0, 1}};
    static const float center[3] = {0, 0.5f, 0}, half[3] = {0.1f, 0.5f, 0.1f};
    static const int su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
    int vi = 0, ii = 0;
    for (int f = 0; f < 6; f++) {
        int a = faces[f % 3][0], u = faces[f % 3][1], w = faces[f % 3][2];
        float sign = f < 3 ? 1.0f : -1.0f;
        if (sign < 0) { int t = u; u = w; w = t; }   /* keep u x v outward */
        for (int c = 0; c < 4; c++) {
            float p[3] = {center[0], center[1], center[2]}, n[3] = {0, 0, 0};
            p[a] += sign * half[a];
            p[u] += (float)su[c] * half[u];
            p[w] += (float)sv[c] * half[w];
            n[a] = sign;
            memcpy(m->pos + 3 * (vi + c), p, sizeof p);
            memcpy(m->nrm + 3 * (vi + c), n, sizeof n);
        }
        static const int tri[6] = {0, 1, 2, 0, 2, 3};
        for (int k = 0; k < 6; k++) m->idx[ii++] = (uint32_t)(vi + tri[k]);
        vi += 4;
    }
}

/* ---- planning the buffer ---- */

static uint32_t plan_add(gltf_plan *pl, const void *src, uint32_t count, int ctype,
                         const char *type, int target) {
    size_t comps = type[0] == 'S' ? 1 : (size_t)(type[3] - '0');
    size_t csize = ctype == GL_UNSIGNED_SHORT ? 2 : 4;
    gltf_acc *a = &pl->acc[pl->nacc];
    memset(a, 0, sizeof *a);
    a->src = src;
    a->offset = pl->bin_len;
    a->length = comps * csize * count;
    a->count = count;
    a->ctype = ctype;
    a->type = type;
    a->target = target;
    pl->bin_len += (a->length + 3) & ~(size_t)3;
    return pl->nacc++;
}

static void plan_bounds(gltf_acc *a, const float *p, uint32_t n) {
    a->minmax = true;
    memcpy(a->min, p, sizeof a->min);
    memcpy(a->max, p, sizeof a->max);
    for (uint32_t i = 1; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            float x = p[3 * i + k];
            if (x < a->min[k]) a->min[k] = x;
            if (x > a->max[k]) a->max[k] = x;
        }
    }
}

static uint32_t plan_name(const char **names, uint32_t *n, const char *name) {
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0) return i;
    names[*n] = name;
    return (*n)++;
}

static bool prim_included(const pm_prim *p) { return p->vcount > 0 && p->icount > 0; }

/* Whether b continues a's group: both name the same mesh. */
static bool same_group(const pm_prim *a, const pm_prim *b) {
    return a && a->mesh && b->mesh && strcmp(a->mesh, b->mesh) == 0;
}

static void plan_prim(gltf_plan *pl, const pm_api__prim_view *pv, gltf_prim_ref *r) {
    const pm_prim *p = pv->p;
    r->pos = plan_add(pl, p->positions, p->vcount, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
    plan_bounds(&pl->acc[r->pos], p->positions, p->vcount);
    r->nrm = plan_add(pl, pv->normals, p->vcount, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
    r->uv = p->uvs ? plan_add(pl, p->uvs, p->vcount, GL_FLOAT, "VEC2", GL_ARRAY_BUFFER)
                   : UINT32_MAX;
    r->col = pv->colors ? plan_add(pl, pv->colors, p->vcount, GL_FLOAT, "VEC4", GL_ARRAY_BUFFER)
                        : UINT32_MAX;
    /* uint16 whenever it can hold every index; 65535 itself never occurs
     * then (it would be the primitive-restart value). */
    int ctype = p->vcount <= 65535 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT;
    r->idx = plan_add(pl, p->indices, p->icount, ctype, "SCALAR", GL_ELEMENT_ARRAY_BUFFER);
    r->material = plan_name(pl->materials, &pl->nmat, p->material);
}

static int plan_build(gltf_plan *pl, const pm_api__view *v, const marker *mk) {
    const pm_scene *s = v->s;
    memset(pl, 0, sizeof *pl);
    pl->v = v;
    size_t nprims = s->nprims, nprops = s->nprops;
    pl->acc = malloc((6 * nprims + 3 + 3 * nprops) * sizeof *pl->acc);
    pl->prims = malloc((nprims + 1) * sizeof *pl->prims);
    pl->materials = malloc((nprims + 1) * sizeof *pl->materials);
    pl->prop_acc = malloc((nprops + 1) * sizeof *pl->prop_acc);
    pl->prop_mesh = malloc((nprops + 1) * sizeof *pl->prop_mesh);
    pl->mesh_names = malloc((nprops + 1) * sizeof *pl->mesh_names);
    if (!pl->acc || !pl->prims || !pl->materials || !pl->prop_acc || !pl->prop_mesh ||
        !pl->mesh_names)
        return -1;
    const pm_prim *prev = NULL;
    for (uint32_t i = 0; i < s->nprims; i++) {
        pl->prims[i].idx = UINT32_MAX;
        if (!prim_included(&s->prims[i])) continue;
        plan_prim(pl, &v->prims[i], &pl->prims[i]);
        pl->prims[i].opens = !same_group(prev, &s->prims[i]);
        pl->nprim_meshes += pl->prims[i].opens;
        prev = &s->prims[i];
    }
    bool any_props = false;
    for (uint32_t i = 0; i < s->nprops; i++) any_props |= s->props[i].count > 0;
    if (any_props) {
        pl->marker_pos = plan_add(pl, mk->pos, MARKER_V, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
        plan_bounds(&pl->acc[pl->marker_pos], mk->pos, MARKER_V);
        pl->marker_nrm = plan_add(pl, mk->nrm, MARKER_V, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
        pl->marker_idx = plan_add(pl, mk->idx, MARKER_I, GL_UNSIGNED_SHORT, "SCALAR",
                                  GL_ELEMENT_ARRAY_BUFFER);
        pl->marker_mat = pl->nmat++;
    }
    for (uint32_t i = 0; i < s->nprops; i++) {
        const pm_props *pr = &s->props[i];
        pl->prop_acc[i] = UINT32_MAX;
        if (pr->count == 0) continue;
        pl->prop_acc[i] = plan_add(pl, pr->translations, pr->count, GL_FLOAT, "VEC3", 0);
        plan_add(pl, pr->rotations, pr->count, GL_FLOAT, "VEC4", 0);
        plan_add(pl, pr->scales, pr->count, GL_FLOAT, "VEC3", 0);
        pl->prop_mesh[i] = pl->nprim_meshes + plan_name(pl->mesh_names, &pl->nmarkers, pr->name);
    }
    return 0;
}

static void plan_free(gltf_plan *pl) {
    free(pl->acc);
    free(pl->prims);
    free(pl->materials);
    free(pl->prop_acc);
    free(pl->prop_mesh);
    free(pl->mesh_names);
}

/* Writes the buffer's bytes (bin_len, padding zeroed) to dst. */
static void plan_fill(const gltf_plan *pl, unsigned char *dst) {
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        unsigned char *o = dst + a->offset;
        if (a->ctype == GL_UNSIGNED_SHORT) {
            const uint32_t *src = a->src;
            for (uint32_t k = 0; k < a->count; k++) {
                uint16_t x = (uint16_t)src[k];
                memcpy(o + 2 * k, &x, 2);
            }
        } else {
            memcpy(o, a->src, a->length);
        }
        size_t padded = (a->length + 3) & ~(size_t)3;
        memset(o + a->length, 0, padded - a->length);
    }
}

/* ---- the JSON part ---- */

typedef struct material_colour { const char *name; float rgb[3], roughness; } material_colour;

/* Base colours for the material names generators use (DESIGN.md 2);
 * linear RGB, chosen to read well under a default light. */
static const material_colour material_colours[] = {
    {"asphalt", {0.05f, 0.05f, 0.055f}, 0.9f},  {"curb", {0.45f, 0.45f, 0.43f}, 0.8f},
    {"sidewalk", {0.5f, 0.48f, 0.44f}, 0.85f},  {"shoulder", {0.25f, 0.22f, 0.18f}, 0.95f},
    {"terrain", {0.12f, 0.25f, 0.07f}, 1.0f},   {"floor", {0.35f, 0.3f, 0.24f}, 0.85f},
    {"wall", {0.55f, 0.52f, 0.47f}, 0.9f},      {"grid", {0.6f, 0.58f, 0.52f}, 0.8f},
    {"island", {0.2f, 0.35f, 0.12f}, 0.95f},    {"corridor", {0.3f, 0.27f, 0.22f}, 0.85f},
    {"shaft", {0.1f, 0.1f, 0.12f}, 0.9f},
};
static const material_colour material_default = {"", {0.8f, 0.8f, 0.8f}, 0.8f};
static const material_colour material_marker = {"marker", {1.0f, 0.45f, 0.05f}, 0.6f};

static const material_colour *material_lookup(const char *name) {
    for (size_t i = 0; i < sizeof material_colours / sizeof *material_colours; i++)
        if (strcmp(material_colours[i].name, name) == 0) return &material_colours[i];
    return &material_default;
}

static void w_key(pm_api__w *w, const char *key) {
    pm_api__w_str(w, key);
    pm_api__w_char(w, ':');
}

static void w_key_u(pm_api__w *w, const char *key, uint64_t v) {
    w_key(w, key);
    pm_api__w_u64(w, v);
}

static void w_material(pm_api__w *w, const char *name, const material_colour *c) {
    pm_api__w_char(w, '{');
    w_key(w, "name");
    pm_api__w_str(w, name);
    pm_api__w_lit(w, ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[");
    for (int k = 0; k < 3; k++) {
        pm_api__w_f64(w, c->rgb[k]);
        pm_api__w_char(w, ',');
    }
    pm_api__w_lit(w, "1],\"metallicFactor\":0,\"roughnessFactor\":");
    pm_api__w_f64(w, c->roughness);
    pm_api__w_lit(w, "}}");
}

static void w_materials(pm_api__w *w, const gltf_plan *pl) {
    pm_api__w_lit(w, ",\"materials\":[");
    uint32_t named = pl->nmat - (pl->nmarkers ? 1 : 0);
    for (uint32_t i = 0; i < named; i++) {
        if (i) pm_api__w_char(w, ',');
        w_material(w, pl->materials[i], material_lookup(pl->materials[i]));
    }
    if (pl->nmarkers) {
        if (named) pm_api__w_char(w, ',');
        w_material(w, "marker", &material_marker);
    }
    pm_api__w_char(w, ']');
}

static void w_accessors(pm_api__w *w, const gltf_plan *pl) {
    pm_api__w_lit(w, ",\"accessors\":[");
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        if (i) pm_api__w_char(w, ',');
        pm_api__w_char(w, '{');
        w_key_u(w, "bufferView", i);
        pm_api__w_char(w, ',');
        w_key_u(w, "componentType", (uint64_t)a->ctype);
        pm_api__w_char(w, ',');
        w_key_u(w, "count", a->count);
        pm_api__w_char(w, ',');
        w_key(w, "type");
        pm_api__w_str(w, a->type);
        if (a->minmax) {
            /* Exact values of the float32 data, so readers (and the
             * validator) compare equal. */
            for (int b = 0; b < 2; b++) {
                pm_api__w_lit(w, b ? ",\"max\":[" : ",\"min\":[");
                for (int k = 0; k < 3; k++) {
                    if (k) pm_api__w_char(w, ',');
                    pm_api__w_f64(w, (double)(b ? a->max[k] : a->min[k]));
                }
                pm_api__w_char(w, ']');
            }
        }
        pm_api__w_char(w, '}');
    }
    pm_api__w_char(w, ']');
}

static void w_buffer_views(pm_api__w *w, const gltf_plan *pl) {
    pm_api__w_lit(w, ",\"bufferViews\":[");
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        if (i) pm_api__w_char(w, ',');
        pm_api__w_lit(w, "{\"buffer\":0,");
        w_key_u(w, "byteOffset", a->offset);
        pm_api__w_char(w, ',');
        w_key_u(w, "byteLength", a->length);
        if (a->target) {
            pm_api__w_char(w, ',');
            w_key_u(w, "target", (uint64_t)a->target);
        }
        pm_api__w_char(w, '}');
    }
    pm_api__w_char(w, ']');
}

static void w_primitive(pm_api__w *w, uint32_t pos, uint32_t nrm, uint32_t uv, uint32_t col,
                        uint32_t idx, uint32_t mat) {
    pm_api__w_lit(w, "{\"attributes\":{");
    w_key_u(w, "POSITION", pos);
    pm_api__w_char(w, ',');
    w_key_u(w, "NORMAL", nrm);
    if (uv != UINT32_MAX) {
        pm_api__w_char(w, ',');
        w_key_u(w, "TEXCOORD_0", uv);
    }
    if (col != UINT32_MAX) {
        pm_api__w_char(w, ',');
        w_key_u(w, "COLOR_0", col);
    }
    pm_api__w_lit(w, "},");
    w_key_u(w, "indices", idx);
    pm_api__w_char(w, ',');
    w_key_u(w, "material", mat);
    pm_api__w_lit(w, ",\"mode\":4}");
}

static void w_meshes(pm_api__w *w, const gltf_plan *pl) {
    const pm_scene *s = pl->v->s;
    pm_api__w_lit(w, ",\"meshes\":[");
    bool first = true;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const gltf_prim_ref *r = &pl->prims[i];
        if (r->idx == UINT32_MAX) continue;
        if (r->opens) {
            if (!first) pm_api__w_lit(w, "]},");
            first = false;
            pm_api__w_char(w, '{');
            w_key(w, "name");
            pm_api__w_str(w, pm_prim_mesh(&s->prims[i]));
            pm_api__w_lit(w, ",\"primitives\":[");
        } else {
            pm_api__w_char(w, ',');
        }
        w_primitive(w, r->pos, r->nrm, r->uv, r->col, r->idx, r->material);
    }
    if (!first) pm_api__w_lit(w, "]}");
    for (uint32_t i = 0; i < pl->nmarkers; i++) {
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_char(w, '{');
        w_key(w, "name");
        pm_api__w_str(w, pl->mesh_names[i]);
        pm_api__w_lit(w, ",\"primitives\":[");
        w_primitive(w, pl->marker_pos, pl->marker_nrm, UINT32_MAX, UINT32_MAX, pl->marker_idx,
                    pl->marker_mat);
        pm_api__w_lit(w, "],\"extras\":{\"marker\":true}}");
    }
    pm_api__w_char(w, ']');
}

static void w_nodes(pm_api__w *w, const gltf_plan *pl) {
    const pm_scene *s = pl->v->s;
    pm_api__w_lit(w, ",\"nodes\":[");
    uint32_t mesh = 0;
    bool first = true;
    for (uint32_t i = 0; i < s->nprims; i++) {
        if (pl->prims[i].idx == UINT32_MAX || !pl->prims[i].opens) continue;
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_char(w, '{');
        w_key(w, "name");
        pm_api__w_str(w, pm_prim_mesh(&s->prims[i]));
        pm_api__w_char(w, ',');
        w_key_u(w, "mesh", mesh++);
        pm_api__w_char(w, '}');
    }
    for (uint32_t i = 0; i < s->nprops; i++) {
        uint32_t a = pl->prop_acc[i];
        if (a == UINT32_MAX) continue;
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_char(w, '{');
        w_key(w, "name");
        pm_api__w_str(w, s->props[i].name);
        pm_api__w_char(w, ',');
        w_key_u(w, "mesh", pl->prop_mesh[i]);
        pm_api__w_lit(w, ",\"extensions\":{\"EXT_mesh_gpu_instancing\":{\"attributes\":{");
        w_key_u(w, "TRANSLATION", a);
        pm_api__w_char(w, ',');
        w_key_u(w, "ROTATION", a + 1);
        pm_api__w_char(w, ',');
        w_key_u(w, "SCALE", a + 2);
        pm_api__w_lit(w, "}}}}");
    }
    pm_api__w_char(w, ']');
}

static uint32_t node_count(const gltf_plan *pl) {
    uint32_t n = pl->nprim_meshes;
    for (uint32_t i = 0; i < pl->v->s->nprops; i++) n += pl->prop_acc[i] != UINT32_MAX;
    return n;
}

static void w_scene(pm_api__w *w, const gltf_plan *pl, const pm_api_generator *gen,
                    const char *key_hex) {
    const pm_scene *s = pl->v->s;
    uint32_t nodes = node_count(pl);
    pm_api__w_lit(w, ",\"scene\":0,\"scenes\":[{");
    w_key(w, "name");
    pm_api__w_str(w, gen->name);
    if (nodes) {
        pm_api__w_lit(w, ",\"nodes\":[");
        for (uint32_t i = 0; i < nodes; i++) {
            if (i) pm_api__w_char(w, ',');
            pm_api__w_u64(w, i);
        }
        pm_api__w_char(w, ']');
    }
    pm_api__w_lit(w, ",\"extras\":{\"generator\":");
    pm_api__w_str(w, gen->name);
    pm_api__w_lit(w, ",\"version\":");
    pm_api__w_str(w, gen->version);
    pm_api__w_lit(w, ",\"key\":");
    pm_api__w_str(w, key_hex ? key_hex : "");
    pm_api__w_lit(w, ",\"metadata\":");
    pm_api__w_meta(w, s->meta);
    pm_api__w_lit(w, ",\"stats\":{\"vertices\":");
    pm_api__w_u64(w, pm_scene_vertex_count(s));
    pm_api__w_lit(w, ",\"triangles\":");
    pm_api__w_u64(w, pm_scene_triangle_count(s));
    pm_api__w_lit(w, "}}}]");
    if (nodes) w_nodes(w, pl);
}

/* Everything but the buffer's data; for .gltf, bin (bin_len bytes) is
 * embedded as a data URI. */
static void w_gltf_json(pm_api__w *w, const gltf_plan *pl, const pm_api_generator *gen,
                        const char *key_hex, const unsigned char *bin) {
    pm_api__w_lit(w, "{\"asset\":{\"version\":\"2.0\",\"generator\":");
    pm_api__w_str(w, "procmesh " PM_VERSION);
    pm_api__w_char(w, '}');
    if (pl->nmarkers) pm_api__w_lit(w, ",\"extensionsUsed\":[\"EXT_mesh_gpu_instancing\"]");
    w_scene(w, pl, gen, key_hex);
    if (pl->nprim_meshes + pl->nmarkers) w_meshes(w, pl);
    if (pl->nmat) w_materials(w, pl);
    if (pl->nacc) {
        w_accessors(w, pl);
        w_buffer_views(w, pl);
        pm_api__w_lit(w, ",\"buffers\":[{");
        w_key_u(w, "byteLength", pl->bin_len);
        if (bin) {
            pm_api__w_lit(w, ",\"uri\":\"data:application/octet-stream;base64,");
            pm_api__w_base64(w, bin, pl->bin_len);
            pm_api__w_char(w, '"');
        }
        pm_api__w_lit(w, "}]");
    }
    pm_api__w_char(w, '}');
}

static void put_u32(unsigned char *o, uint32_t v) {
    for (int i = 0; i < 4; i++) o[i] = (unsigned char)(v >> (8 * i));
}

/* GLB: header, JSON chunk (padded with spaces), BIN chunk (data already
 * 4-byte aligned; omitted when there is none). */
static int glb_assemble(const pm_api__w *json, const gltf_plan *pl, const pm_api_alloc *al,
                        pm_api_buf *out) {
    size_t jlen = (json->len + 3) & ~(size_t)3;
    size_t total = 12 + 8 + jlen + (pl->bin_len ? 8 + pl->bin_len : 0);
    if (total > UINT32_MAX) return -1;
    unsigned char *o = pm_api__mem_realloc(al, NULL, 0, total);
    if (!o) return -1;
    put_u32(o, 0x46546C67);           /* "glTF" */
    put_u32(o + 4, 2);
    put_u32(o + 8, (uint32_t)total);
    put_u32(o + 12, (uint32_t)jlen);
    put_u32(o + 16, 0x4E4F534A);      /* "JSON" */
    memcpy(o + 20, json->data, json->len);
    memset(o + 20 + json->len, ' ', jlen - json->len);
    if (pl->bin_len) {
        unsigned char *b = o + 20 + jlen;
        put_u32(b, (uint32_t)pl->bin_len);
        put_u32(b + 4, 0x004E4942);   /* "BIN\0" */
        plan_fill(pl, b + 8);
    }
    out->data = o;
    out->len = total;
    return 0;
}

int pm_api__encode_gltf(const pm_api__view *v, const pm_api_generator *gen,
                        const char *key_hex, bool glb, pm_api_buf *out) {
    marker mk;
    marker_build(&mk);
    gltf_plan pl;
    int r = -1;
    unsigned char *bin = NULL;
    pm_api__w w = {0};
    if (plan_build(&pl, v, &mk) < 0) goto done;
    size_t estimate = 4096 + 400 * (size_t)(pl.nacc + v->s->nprims + v->s->nprops);
    if (!glb) {
        bin = pm_api__mem_realloc(v->al, NULL, 0, pl.bin_len ? pl.bin_len : 1);
        if (!bin) goto done;
        plan_fill(&pl, bin);
        estimate += (pl.bin_len + 2) / 3 * 4;
    }
    pm_api__w_init_al(&w, estimate, v->al);
    w_gltf_json(&w, &pl, gen, key_hex, bin);
    if (w.oom) goto done;
    if (glb) {
        r = glb_assemble(&w, &pl, v->al, out);
    } else {
        pm_api__w_char(&w, '\n');
        r = pm_api__w_take(&w, out);
    }
done:
    pm_api__w_free(&w);
    if (bin) pm_api__mem_free(v->al, bin, pl.bin_len ? pl.bin_len : 1);
    plan_free(&pl);
    return r;
}
