/* The representation options beside the format: ?compress=, ?quantize=,
 * ?metadata= (docs/api.md "Compact glTF" and "Metadata"). */
#include <string.h>

#include "pm_api/encode.h"

static const char *const pm_api__compress_names[] = {"none", "meshopt"};
static const char *const pm_api__metadata_names[] = {"full", "summary", "none"};
static const char *const pm_api__bool_names[] = {"false", "true"};

pm_api_output pm_api_output_default(pm_api_format f) {
    return (pm_api_output){f, PM_API_COMPRESS_NONE, false, PM_API_META_FULL};
}

bool pm_api_output_param(const char *name) {
    return strcmp(name, "format") == 0 || strcmp(name, "compress") == 0 ||
           strcmp(name, "quantize") == 0 || strcmp(name, "metadata") == 0;
}

/* The index of v among n names (exact, case-sensitive: the documented
 * enums are lowercase), or -1. */
static int pm_api__enum(const char *v, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return i;
    return -1;
}

int pm_api_output_parse(const char *compress, const char *quantize, const char *metadata,
                        pm_api_output *o, pm_api_problem *p) {
    bool gltf = o->format != PM_API_FMT_JSON;
    if (compress) {
        int c = pm_api__enum(compress, pm_api__compress_names, 2);
        if (c < 0) pm_api_problem_field(p, "/compress", "must be one of none, meshopt");
        else if (c && !gltf)
            pm_api_problem_field(p, "/compress", "applies to glTF only (format glb or gltf)");
        else o->compress = (pm_api_compress)c;
    }
    if (quantize) {
        int q = pm_api__enum(quantize, pm_api__bool_names, 2);
        if (q < 0) pm_api_problem_field(p, "/quantize", "must be true or false");
        else if (q && !gltf)
            pm_api_problem_field(p, "/quantize", "applies to glTF only (format glb or gltf)");
        else o->quantize = q == 1;
    }
    if (metadata) {
        int m = pm_api__enum(metadata, pm_api__metadata_names, 3);
        if (m < 0) pm_api_problem_field(p, "/metadata", "must be one of full, summary, none");
        else o->metadata = (pm_api_metadata)m;
    }
    return pm_api_problem_failed(p) ? -1 : 0;
}

/* format in bits 0-1, compress 2, quantize 3, metadata 4-5: the defaults
 * give the bare format, as before the options existed. */
uint32_t pm_api_output_code(const pm_api_output *o) {
    return (uint32_t)o->format | (uint32_t)o->compress << 2 | (uint32_t)o->quantize << 3 |
           (uint32_t)o->metadata << 4;
}
