#include "pm_api/encode.h"

#include "encode_writer.h"

int pm_api_encode(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                  pm_api_format f, pm_api_buf *out) {
    pm_api_output o = pm_api_output_default(f);
    return pm_api_encode_output(s, gen, key_hex, &o, out);
}

int pm_api_encode_output(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                         const pm_api_output *o, pm_api_buf *out) {
    return pm_api_encode_with(s, gen, key_hex, o, NULL, out);
}

int pm_api_encode_with(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                       const pm_api_output *o, const pm_api_alloc *al, pm_api_buf *out) {
    out->data = NULL;
    out->len = 0;
    pm_api__view v;
    int r = pm_api__view_init(&v, s);
    v.al = al;
    if (r == 0) {
        if (o->format == PM_API_FMT_JSON)
            r = pm_api__encode_json(&v, gen, key_hex, o->metadata, out);
        else r = pm_api__encode_gltf(&v, gen, key_hex, o, out);
    }
    pm_api__view_free(&v);
    return r;
}

int pm_api_encode_to(const pm_scene *s, const pm_api_generator *gen, const char *key_hex,
                     const pm_api_output *o, const pm_api_alloc *al, const pm_api_sink *sink) {
    if (o->format != PM_API_FMT_GLB) {
        pm_api_buf out;
        int r = pm_api_encode_with(s, gen, key_hex, o, al, &out);
        if (r == 0 && sink->total) sink->total(sink->ctx, out.len);
        if (r == 0 && sink->write(sink->ctx, out.data, out.len) != 0) r = -3;
        if (out.data) pm_api__mem_free(al, out.data, out.len);
        return r;
    }
    pm_api__view v;
    int r = pm_api__view_init(&v, s);
    v.al = al;
    if (r == 0) r = pm_api__stream_glb(&v, gen, key_hex, o, sink);
    pm_api__view_free(&v);
    return r;
}
