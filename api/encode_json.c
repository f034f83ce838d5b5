/* The JSON mesh of DESIGN.md section 3. */
#include "encode_writer.h"

/* A guess at the output size so a big scene is written with few
 * reallocations: about 11 bytes per printed float or index. */
static size_t pm_api__json_estimate(const pm_scene *s) {
    size_t n = 1024 + 256 * (size_t)(s->nprims + s->nprops);
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *p = &s->prims[i];
        size_t per_vertex = 6 + (p->uvs ? 2 : 0) + (p->colors ? 4 : 0);
        n += ((size_t)p->vcount * per_vertex + p->icount) * 11;
    }
    for (uint32_t i = 0; i < s->nprops; i++) n += (size_t)s->props[i].count * 130;
    return n;
}

static void pm_api__json_key(pm_api__w *w, const char *key) {
    pm_api__w_str(w, key);
    pm_api__w_char(w, ':');
}

static void pm_api__json_floats(pm_api__w *w, const char *key, const float *v, size_t n) {
    pm_api__w_char(w, ',');
    pm_api__json_key(w, key);
    pm_api__w_char(w, '[');
    pm_api__w_f32s(w, v, n);
    pm_api__w_char(w, ']');
}

static void pm_api__json_prim(pm_api__w *w, const pm_api__prim_view *pv) {
    const pm_prim *p = pv->p;
    size_t n = p->vcount;
    pm_api__w_char(w, '{');
    pm_api__json_key(w, "name");
    pm_api__w_str(w, p->name);
    if (p->mesh) {
        pm_api__w_char(w, ',');
        pm_api__json_key(w, "mesh");
        pm_api__w_str(w, p->mesh);
    }
    pm_api__w_char(w, ',');
    pm_api__json_key(w, "material");
    pm_api__w_str(w, p->material);
    pm_api__json_floats(w, "positions", p->positions, 3 * n);
    pm_api__json_floats(w, "normals", pv->normals, 3 * n);
    if (p->uvs) pm_api__json_floats(w, "uvs", p->uvs, 2 * n);
    if (pv->colors) pm_api__json_floats(w, "colors", pv->colors, 4 * n);
    pm_api__w_char(w, ',');
    pm_api__json_key(w, "indices");
    pm_api__w_char(w, '[');
    pm_api__w_u32s(w, p->indices, p->icount);
    pm_api__w_lit(w, "]}");
}

/* [[x,y,z], …]: one inner array per instance. */
static void pm_api__json_tuples(pm_api__w *w, const char *key, const float *v, uint32_t count,
                                size_t dim) {
    pm_api__w_char(w, ',');
    pm_api__json_key(w, key);
    pm_api__w_char(w, '[');
    for (uint32_t i = 0; i < count; i++) {
        if (i) pm_api__w_char(w, ',');
        pm_api__w_char(w, '[');
        pm_api__w_f32s(w, v + dim * i, dim);
        pm_api__w_char(w, ']');
    }
    pm_api__w_char(w, ']');
}

static void pm_api__json_props(pm_api__w *w, const pm_props *pr) {
    pm_api__w_char(w, '{');
    pm_api__json_key(w, "prop");
    pm_api__w_str(w, pr->name);
    pm_api__json_tuples(w, "translations", pr->translations, pr->count, 3);
    pm_api__json_tuples(w, "rotations", pr->rotations, pr->count, 4);
    pm_api__json_tuples(w, "scales", pr->scales, pr->count, 3);
    pm_api__w_char(w, '}');
}

int pm_api__encode_json(const pm_api__view *v, const pm_api_generator *gen,
                        const char *key_hex, pm_api_metadata meta, pm_api_buf *out) {
    const pm_scene *s = v->s;
    pm_api__w w;
    pm_api__w_init(&w, pm_api__json_estimate(s));
    pm_api__w_char(&w, '{');
    pm_api__json_key(&w, "generator");
    pm_api__w_str(&w, gen->name);
    pm_api__w_char(&w, ',');
    pm_api__json_key(&w, "version");
    pm_api__w_str(&w, gen->version);
    pm_api__w_char(&w, ',');
    pm_api__json_key(&w, "key");
    pm_api__w_str(&w, key_hex ? key_hex : "");
    pm_api__w_char(&w, ',');
    pm_api__json_key(&w, "meshes");
    pm_api__w_char(&w, '[');
    for (uint32_t i = 0; i < s->nprims; i++) {
        if (i) pm_api__w_char(&w, ',');
        pm_api__json_prim(&w, &v->prims[i]);
    }
    pm_api__w_lit(&w, "],");
    pm_api__json_key(&w, "instances");
    pm_api__w_char(&w, '[');
    for (uint32_t i = 0; i < s->nprops; i++) {
        if (i) pm_api__w_char(&w, ',');
        pm_api__json_props(&w, &s->props[i]);
    }
    pm_api__w_lit(&w, "],");
    if (meta != PM_API_META_NONE) {
        pm_api__json_key(&w, "metadata");
        pm_api__w_meta_mode(&w, s->meta, gen, meta);
        pm_api__w_char(&w, ',');
    }
    pm_api__json_key(&w, "stats");
    pm_api__w_lit(&w, "{\"vertices\":");
    pm_api__w_u64(&w, pm_scene_vertex_count(s));
    pm_api__w_lit(&w, ",\"triangles\":");
    pm_api__w_u64(&w, pm_scene_triangle_count(s));
    pm_api__w_lit(&w, "}}\n");
    if (w.oom) {
        pm_api__w_free(&w);
        return -1;
    }
    out->data = (unsigned char *)w.data;
    out->len = w.len;
    return 0;
}
