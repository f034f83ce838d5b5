/* POST /v1/junctions: the request (docs/junction.md, api/openapi.yaml
 * "Junction*" schemas) into pm_junction_params, and core's diagnostics into
 * 422 problems that name the arms as /arms/i. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "junction/junction.h"
#include "scene/result.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"

#define PM_API_JCOORD 1e5          /* |coordinate| bound, metres */
#define PM_API_JWIDTH 1000.0       /* widest arm, metres */
/* (0, hi]: positive, bounded. */
#define PM_API__POS(hi) ((pm_api_range){0, (hi), true, false, NULL})

typedef struct pm_api_jreq {
    pm_junction_params p;
    pm_junction_arm *arms;
} pm_api_jreq;

static const pm_junction_sidewalk pm_api__sidewalk_def = {2.0, 0.15};

/* Whether member key is present (null counts as present). */
static bool pm_api__has(const pm_api_node *n, const char *key) {
    return n->in && json_object_get(n->in, key) != NULL;
}

static void pm_api__field(pm_api_node *n, const char *key, const char *msg) {
    char ptr[PM_API_POINTER_MAX];
    pm_api_pointer_join(ptr, sizeof ptr, n->ptr, key);
    pm_api_problem_field(n->prob, ptr, "%s", msg);
}

/* Sets canonical member key of n (consumes v). */
static void pm_api__canon(pm_api_node *n, const char *key, json_t *v) {
    if (n->canon && v) json_object_set_new(n->canon, key, v);
    else json_decref(v);
}

static void pm_api__read_sidewalk(pm_api_node *sw, const pm_junction_sidewalk *def,
                                  pm_junction_sidewalk *out) {
    pm_api_num(sw, "width", 0, PM_API__POS(100), def->width, &out->width);
    pm_api_num(sw, "curb_height", 0, PM_API__POS(2), def->curb_height, &out->curb_height);
    pm_api_end(sw);
}

static json_t *pm_api__sidewalk_json(bool on, const pm_junction_sidewalk *s) {
    if (!on) return json_null();
    return json_pack("{s:f,s:f}", "width", s->width + 0.0, "curb_height", s->curb_height + 0.0);
}

/* A polyline of [x, z] or [x, y, z] points ending at the junction. Stores
 * the [x, z] pairs and, when the last point is 3D, its y in *last_y. */
static size_t pm_api__centerline(pm_api_node *arm, const pm_api_limits *lim, pm_arena *arena,
                                 pm_junction_arm *out, double *last_y, bool *has_y) {
    pm_api_node pts;
    size_t n = pm_api_array(arm, "centerline", PM_API_REQUIRED,
                            PM_API_ILIMIT(2, lim->max_points, "max_points"), &pts);
    double *xz = n ? pm_arena_alloc(arena, 2 * n * sizeof *xz) : NULL;
    *has_y = false;
    for (size_t i = 0; i < n; i++) {
        double v[3] = {0, 0, 0};
        size_t dim = 0;
        pm_api_vec(&pts, NULL, PM_API_REQUIRED, 2, 3,
                   PM_API_RANGE(-PM_API_JCOORD, PM_API_JCOORD), NULL, v, &dim);
        if (!xz) continue;
        xz[2 * i] = v[0];
        xz[2 * i + 1] = dim == 3 ? v[2] : v[1];
        *has_y = dim == 3;
        *last_y = dim == 3 ? v[1] : 0;
    }
    pm_api_end(&pts);
    if (n >= 2 && xz && xz[2 * n - 2] == xz[2 * n - 4] && xz[2 * n - 1] == xz[2 * n - 3])
        pm_api__field(arm, "centerline", "the last two points must differ in x or z");
    out->centerline = xz;
    out->centerline_len = xz ? n : 0;
    return n;
}

static void pm_api__direction(pm_api_node *arm, pm_junction_arm *out) {
    double d[2] = {1, 0};
    pm_api_vec(arm, "direction", PM_API_REQUIRED, 2, 2, PM_API_RANGE(-PM_API_JCOORD, PM_API_JCOORD),
               NULL, d, NULL);
    double len = hypot(d[0], d[1]);
    if (!(len > 0)) {
        pm_api__field(arm, "direction", "must not be [0, 0]");
        len = 1;
    }
    /* Unit length in the canonical form and in the parameters alike, so that
     * equal keys always mean equal meshes. */
    out->direction[0] = d[0] / len + 0.0;
    out->direction[1] = d[1] / len + 0.0;
    pm_api__canon(arm, "direction", json_pack("[f,f]", out->direction[0], out->direction[1]));
}

static void pm_api__arm(pm_api_node *arms, const pm_api_limits *lim, pm_arena *arena,
                        bool global_sw, const pm_junction_sidewalk *gsw, pm_junction_arm *out) {
    pm_api_node arm, sw;
    memset(out, 0, sizeof *out);
    if (pm_api_object(arms, NULL, PM_API_REQUIRED, &arm) != 1) return;
    bool has_dir = pm_api__has(&arm, "direction"), has_cl = pm_api__has(&arm, "centerline");
    double last_y = 0;
    bool has_y = false;
    if (has_dir && has_cl) {
        pm_api_problem_field(arm.prob, arm.ptr, "give either direction or centerline, not both");
    } else if (!has_dir && !has_cl) {
        pm_api_problem_field(arm.prob, arm.ptr, "needs a direction or a centerline");
    }
    if (has_dir) pm_api__direction(&arm, out);
    if (has_cl) pm_api__centerline(&arm, lim, arena, out, &last_y, &has_y);
    pm_api_num(&arm, "width", PM_API_REQUIRED, PM_API__POS(PM_API_JWIDTH), 0, &out->width);
    pm_api_num(&arm, "elevation", 0, PM_API_RANGE(-1e4, 1e4), has_y ? last_y : 0,
               &out->elevation);
    if (pm_api__has(&arm, "length")) {
        if (json_is_null(json_object_get(arm.in, "length"))) {
            pm_api__canon(&arm, "length", json_null());
        } else {
            pm_api_num(&arm, "length", 0, PM_API__POS(PM_API_JCOORD), 0, &out->length);
            if (has_cl) pm_api__field(&arm, "length", "is not allowed with a centerline (its "
                                                      "last segment gives the room)");
        }
    } else {
        pm_api__canon(&arm, "length", json_null());
    }
    if (pm_api__has(&arm, "sidewalk")) {
        pm_junction_sidewalk def = global_sw ? *gsw : pm_api__sidewalk_def;
        out->has_sidewalk = pm_api_object(&arm, "sidewalk", PM_API_NULLABLE, &sw) == 1;
        if (out->has_sidewalk) pm_api__read_sidewalk(&sw, &def, &out->sidewalk);
    } else {
        /* Inherited: written out, so that the canonical form says what is built. */
        out->has_sidewalk = global_sw;
        out->sidewalk = *gsw;
        pm_api__canon(&arm, "sidewalk", pm_api__sidewalk_json(global_sw, gsw));
    }
    pm_api_end(&arm);
}

static void pm_api__roundabout(pm_api_node *root, pm_junction_params *p) {
    pm_api_node rb;
    p->has_roundabout = pm_api_object(root, "roundabout", PM_API_NULLABLE | PM_API_ABSENT_OFF,
                                      &rb) == 1;
    if (!p->has_roundabout) return;
    pm_junction_roundabout *r = &p->roundabout;
    int64_t seg = 32;
    int ok = pm_api_num(&rb, "radius", 0, PM_API__POS(1e4), 15, &r->radius);
    ok |= pm_api_num(&rb, "island_radius", 0, PM_API__POS(1e4), 8, &r->island_radius);
    pm_api_int(&rb, "segments", 0, PM_API_IRANGE(8, 256), 32, &seg);
    pm_api_num(&rb, "island_height", 0, PM_API__POS(10), 0.15, &r->island_height);
    r->segments = (uint32_t)seg;
    if (ok == 0 && !(r->island_radius < r->radius))
        pm_api__field(&rb, "island_radius", "must be less than radius");
    else if (ok == 0 && seg >= 8 && seg <= 256 &&
             !(r->island_radius < r->radius * cos(3.14159265358979323846 / (double)seg)))
        pm_api__field(&rb, "island_radius", "must be less than radius x cos(180 deg / segments) "
                                            "so that the ring's chords clear the island");
    pm_api_end(&rb);
}

/* Checks that need several fields: sizes against the snap grid (features
 * smaller than a few grid steps would collapse when snapped), and a ring
 * wide enough for every arm. */
static void pm_api__cross_checks(pm_api_node *root, pm_api_node *arms, const pm_api_jreq *q) {
    const pm_junction_params *p = &q->p;
    char ptr[PM_API_POINTER_MAX], msg[160];
    double min_size = 10 * p->snap;
    for (size_t i = 0; i < p->narms; i++) {
        const pm_junction_arm *a = &q->arms[i];
        pm_api_pointer_index(ptr, sizeof ptr, arms->ptr, i);
        size_t base = strlen(ptr);
        if (a->width > 0 && a->width < min_size) {
            snprintf(ptr + base, sizeof ptr - base, "/width");
            pm_api_problem_field(root->prob, ptr, "must be at least 10 x snap (%g)", min_size);
        }
        if (a->has_sidewalk && a->sidewalk.width > 0 && a->sidewalk.curb_height > 0 &&
            (a->sidewalk.width < min_size || a->sidewalk.curb_height < 2 * p->snap)) {
            snprintf(ptr + base, sizeof ptr - base, "/sidewalk");
            snprintf(msg, sizeof msg, "width must be at least 10 x snap and curb_height at "
                                      "least 2 x snap");
            pm_api_problem_field(root->prob, ptr, "%s", msg);
        }
        if (p->has_roundabout && p->roundabout.radius > 0 && a->width / 2 >= p->roundabout.radius) {
            snprintf(ptr + base, sizeof ptr - base, "/width");
            pm_api_problem_field(root->prob, ptr, "must be less than the roundabout's diameter "
                                                  "(2 x radius = %g)", 2 * p->roundabout.radius);
        }
    }
    if (p->has_roundabout && p->roundabout.island_radius > 0 &&
        p->roundabout.radius - p->roundabout.island_radius < min_size)
        pm_api_problem_field(root->prob, "/roundabout/island_radius",
                             "must leave a ring at least 10 x snap wide");
}

static int pm_api__junction_parse(const json_t *body, const pm_api_limits *lim,
                                  pm_arena *arena, void **params, json_t **canonical,
                                  pm_api_problem *prob) {
    pm_api_node root, arms, sw;
    pm_api_jreq *q = pm_arena_calloc(arena, 1, sizeof *q);
    if (!q) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "out of memory");
        return -1;
    }
    pm_junction_params *p = &q->p;
    pm_api_begin(&root, body, prob);
    pm_junction_sidewalk gsw = pm_api__sidewalk_def;
    bool global_sw = pm_api_object(&root, "sidewalk", PM_API_NULLABLE | PM_API_ABSENT_OFF,
                                   &sw) == 1;
    if (global_sw) pm_api__read_sidewalk(&sw, &pm_api__sidewalk_def, &gsw);
    size_t n = pm_api_array(&root, "arms", PM_API_REQUIRED,
                            PM_API_ILIMIT(2, lim->max_arms, "max_arms"), &arms);
    q->arms = pm_arena_calloc(arena, n ? n : 1, sizeof *q->arms);
    for (size_t i = 0; i < n && q->arms; i++)
        pm_api__arm(&arms, lim, arena, global_sw, &gsw, &q->arms[i]);
    p->arms = q->arms;
    p->narms = q->arms ? n : 0;
    if (pm_api__has(&root, "center") && !json_is_null(json_object_get(body, "center"))) {
        p->has_center = true;
        pm_api_vec(&root, "center", 0, 2, 2, PM_API_RANGE(-PM_API_JCOORD, PM_API_JCOORD), NULL,
                   p->center, NULL);
    } else {
        pm_api__canon(&root, "center", json_null());
    }
    int64_t segs = 4;
    pm_api_num(&root, "corner_radius", 0, PM_API_RANGE(0, 1000), 3, &p->corner_radius);
    pm_api_int(&root, "corner_segments", 0, PM_API_IRANGE(2, 64), 4, &segs);
    p->corner_segments = (uint32_t)segs;
    pm_api_num(&root, "uv_scale", 0, PM_API__POS(1000), 0.1, &p->uv_scale);
    pm_api_num(&root, "snap", 0, PM_API_RANGE(1e-6, 1), 0.001, &p->snap);
    pm_api__roundabout(&root, p);
    if (!pm_api_problem_failed(prob)) pm_api__cross_checks(&root, &arms, q);
    pm_api_end(&arms);
    *canonical = pm_api_finish(&root);
    if (!*canonical) return -1;
    *params = q;
    return 0;
}

/* Core's "no junction for these arms" as a 422 naming each arm involved. */
static void pm_api__geometry_problem(const pm_junction_diag *d, const pm_junction_params *p,
                                     pm_api_problem *prob) {
    char ptr[32];
    if (d->narms == 0) {
        pm_api_problem_field(prob, p->has_roundabout ? "/roundabout" : "/arms", "%s", d->message);
        return;
    }
    for (size_t i = 0; i < d->narms; i++) {
        snprintf(ptr, sizeof ptr, "/arms/%d", d->arms[i]);
        pm_api_problem_field(prob, ptr, "%s", d->message);
    }
    if (d->error == PM_JUNCTION_RING_NO_FIT)
        pm_api_problem_field(prob, "/roundabout", "%s", d->message);
}

static int pm_api__junction_generate(const void *params, const pm_api_limits *lim,
                                     pm_arena *arena, const volatile int *cancel,
                                     pm_scene **scene, pm_api_problem *prob) {
    const pm_api_jreq *q = params;
    if (cancel && *cancel) {
        pm_api_problem_set(prob, 503, "deadline", "Service Unavailable",
                           "the job was cancelled before it started");
        return -1;
    }
    pm_scene *s = pm_scene_create(arena);
    pm_junction_diag diag;
    int rc = s ? pm_junction_generate(s, &q->p, &diag) : PM_ERR_NOMEM;
    if (rc == PM_ERR_GEOMETRY) {
        pm_api__geometry_problem(&diag, &q->p, prob);
        return -1;
    }
    if (rc < 0) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable",
                           "the job ran out of memory");
        return -1;
    }
    uint64_t nv = pm_scene_vertex_count(s);
    if (nv > lim->max_vertices) {
        pm_api_problem_field(prob, "", "the junction would have %llu vertices (limit "
                             "max_vertices = %llu)", (unsigned long long)nv,
                             (unsigned long long)lim->max_vertices);
        return -1;
    }
    *scene = s;
    pm_scene_validate(*scene);   /* checked once here: the encoders then skip it */
    return 0;
}

/* ?metadata=summary leaves out the asphalt contour points (arms, mouths, corners, warnings stay). */
static const char *const junction_summary_omit[] = {"contour", NULL};

const pm_api_generator pm_api_gen_junction = {
    .name = "junction",
    .version = "1.2.0",   /* 1.2.0: neighbours 0.5-5 degrees apart build */
    .path = "/v1/junctions",
    .parse = pm_api__junction_parse,
    .from_query = NULL,
    .generate = pm_api__junction_generate,
    .summary_omit = junction_summary_omit,
};
