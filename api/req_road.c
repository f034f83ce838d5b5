#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "scene/result.h"
#include "road/road.h"
#include "pm_api/generator.h"
#include "pm_api/bulk.h"
#include "pm_api/reader.h"
#include "req_road.h"

/* POST /v1/roads: a spline road, optionally on a terrain (docs/road.md,
 * api/openapi.yaml "roads"). Parsing validates everything core asserts. */


static const char *const pm__curves[] = {"catmull-rom", "linear", NULL};
static const char *const pm__conforms[] = {"drape", "bank", NULL};
static const char *const pm__ups[] = {"world", "terrain", NULL};
static const char *const pm__sides[] = {"left", "right", "both", NULL};
static const char *const pm__aligns[] = {"tangent", "terrain", NULL};

static double pm__plan_dist(const double *a, const double *b) {
    return hypot(b[0] - a[0], b[2] - a[2]);
}

static void pm__read_points(pm_api_node *root, pm__road_req *q, const pm_api_limits *lim,
                            pm_arena *arena) {
    size_t n = 0;
    q->p.points = pm_api_rows(root, "points", PM_API_REQUIRED,
                              PM_API_ILIMIT(2, lim->max_points, "max_points"), 3,
                              PM_API_RANGE(-PM_ROAD_COORD_MAX, PM_ROAD_COORD_MAX), arena, &n);
    q->p.npoints = n;
}

/* One pass over the consecutive pairs of points (the closing pair too
 * when closed): whether any two lie within 1e-3 on both plan axes (then
 * pm__check_points looks closer), and the plan's |dx| + |dz| summed
 * for pm__check_size's first, rough test. */
static bool pm__pairs_scan(const pm_road_params *p, double *l1out) {
    const double *P = p->points;
    size_t n = p->npoints;
    double l1 = 0.0;
    unsigned near = 0;   /* no branch per pair: they are almost never near */
#ifdef __SSE2__
    /* (x, z) in the two lanes of one register: a subtraction, a mask and
     * a compare per pair, and no chain of scalar adds (l1 is a bound with
     * margins: its rounding decides nothing but whether the exact count
     * is taken). */
    if (n > 1) {
        __m128d prev = _mm_loadh_pd(_mm_load_sd(P), P + 2), sum = _mm_setzero_pd(), nearv = _mm_setzero_pd();
        const __m128d abs = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX)), mm = _mm_set1_pd(1e-3);
        for (size_t i = 1; i < n; i++) {
            __m128d cur = _mm_loadh_pd(_mm_load_sd(P + 3 * i), P + 3 * i + 2);
            __m128d d = _mm_and_pd(_mm_sub_pd(cur, prev), abs);
            sum = _mm_add_pd(sum, d);
            __m128d lt = _mm_cmplt_pd(d, mm);
            nearv = _mm_or_pd(nearv, _mm_and_pd(lt, _mm_unpackhi_pd(lt, lt)));
            prev = cur;
        }
        l1 = _mm_cvtsd_f64(sum) + _mm_cvtsd_f64(_mm_unpackhi_pd(sum, sum));
        near = (unsigned)_mm_movemask_pd(nearv) & 1u;
    }
#else
    for (size_t i = 1; i < n; i++) {
        double dx = fabs(P[3 * i] - P[3 * i - 3]), dz = fabs(P[3 * i + 2] - P[3 * i - 1]);
        l1 += dx + dz;
        near |= (unsigned)(dx < 1e-3) & (unsigned)(dz < 1e-3);
    }
#endif
    if (p->closed) {
        double dx = fabs(P[0] - P[3 * n - 3]), dz = fabs(P[2] - P[3 * n - 1]);
        l1 += dx + dz;
        near |= (unsigned)(dx < 1e-3) & (unsigned)(dz < 1e-3);
    }
    *l1out = l1;
    return near != 0;
}

/* Checks that need several fields: distinct consecutive points, closed
 * loops of three, the per-point roll length, increasing LODs. near: the
 * pairs scan found a pair within 1e-3 on both axes (none: no pair to
 * name). */
static void pm__check_points(pm__road_req *q, bool near, pm_api_problem *prob) {
    const pm_road_params *p = &q->p;
    if (pm_api_problem_failed(prob) || !p->points) return;
    char ptr[64];
    for (size_t i = 1; near && i <= p->npoints; i++) {
        if (i == p->npoints && !p->closed) break;
        size_t k = i < p->npoints ? i : 0;   /* i % npoints without a division per point */
        const double *a = p->points + 3 * (i - 1), *b = p->points + 3 * k;
        /* hypot is at least either side: most pairs need no hypot. */
        if (fabs(b[0] - a[0]) >= 1e-3 || fabs(b[2] - a[2]) >= 1e-3) continue;
        if (pm__plan_dist(a, b) >= 1e-3) continue;
        pm_api_pointer_index(ptr, sizeof ptr, "/points", i == p->npoints ? p->npoints - 1 : i);
        if (i == p->npoints)
            pm_api_problem_field(prob, ptr, "coincides with points[0] in plan (x, z); a closed "
                                            "road joins its ends itself, do not repeat the first point");
        else
            pm_api_problem_field(prob, ptr, "coincides with points[%zu] in plan (x, z): consecutive "
                                            "points must be at least 1 mm apart", i - 1);
    }
    if (p->closed && p->npoints < 3)
        pm_api_problem_field(prob, "/points", "a closed road needs at least 3 points");
}

static void pm__read_banking(pm_api_node *root, pm__road_req *q, pm_arena *arena) {
    pm_api_node b, roll;
    if (pm_api_object(root, "banking", PM_API_NULLABLE, &b) != 1) return;
    pm_api_num(&b, "max_degrees", 0, PM_API_RANGE(0, PM_ROAD_MAX_BANK_DEGREES), 0.0,
               &q->p.bank_max_degrees);
    pm_api_num(&b, "radius", 0, PM_API_RANGE(0.1, 1e5), 50.0, &q->p.bank_radius);
    pm_api_num(&b, "transition", 0, PM_API_RANGE(0, 1e5), 20.0, &q->p.bank_transition);
    if (b.in && json_object_get(b.in, "roll")) {
        size_t n = pm_api_array(&b, "roll", 0, PM_API_IRANGE(q->p.npoints, q->p.npoints), &roll);
        double *r = pm_arena_alloc(arena, (n ? n : 1) * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double v = 0.0;
            pm_api_num(&roll, NULL, PM_API_REQUIRED,
                       PM_API_RANGE(-PM_ROAD_MAX_BANK_DEGREES, PM_ROAD_MAX_BANK_DEGREES), 0.0, &v);
            if (r) r[i] = v;
        }
        pm_api_end(&roll);
        if (n == q->p.npoints && n > 0) q->p.roll = r;
    }
    pm_api_end(&b);
}

static void pm__read_noise(pm_api_node *t, pm__road_req *q) {
    pm_api_node nz;
    if (pm_api_object(t, "noise", PM_API_REQUIRED, &nz) != 1) return;
    int64_t oct = 4;
    pm_api_u64(&nz, "seed", 0, 0, &q->nz.seed);
    pm_api_num(&nz, "amplitude", 0, PM_API_RANGE(0, 1e4), 10.0, &q->nz.amplitude);
    pm_api_num(&nz, "wavelength", 0, PM_API_RANGE(0.01, 1e6), 200.0, &q->nz.wavelength);
    pm_api_int(&nz, "octaves", 0, PM_API_IRANGE(1, 8), 4, &oct);
    q->nz.octaves = (uint32_t)oct;
    q->noise = true;
    pm_api_end(&nz);
}

static void pm__read_terrain(pm_api_node *root, pm__road_req *q, const pm_api_limits *lim,
                             pm_arena *arena, pm_api_problem *prob) {
    pm_api_node t;
    if (pm_api_object(root, "terrain", PM_API_NULLABLE | PM_API_ABSENT_OFF, &t) != 1) return;
    int64_t cols = 2, rows = 2;
    pm_api_vec(&t, "origin", 0, 2, 2, PM_API_RANGE(-PM_ROAD_COORD_MAX, PM_ROAD_COORD_MAX),
               (const double[]){0.0, 0.0}, q->hf.origin, NULL);
    pm_api_num(&t, "cell", PM_API_REQUIRED, PM_API_RANGE(0.01, 1e4), 1.0, &q->hf.cell);
    pm_api_int(&t, "cols", PM_API_REQUIRED, PM_API_IRANGE(2, 1 << 20), 2, &cols);
    pm_api_int(&t, "rows", PM_API_REQUIRED, PM_API_IRANGE(2, 1 << 20), 2, &rows);
    pm_api_bool(&t, "mesh", 0, true, &q->p.terrain_mesh);
    q->hf.cols = (uint32_t)cols;
    q->hf.rows = (uint32_t)rows;
    uint64_t nodes = (uint64_t)cols * (uint64_t)rows;
    bool size_ok = nodes <= lim->max_vertices;
    if (!size_ok)
        pm_api_problem_field(prob, "/terrain/cols", "cols x rows = %llu nodes exceeds the limit "
                             "max_vertices (%llu)", (unsigned long long)nodes,
                             (unsigned long long)lim->max_vertices);
    bool has_heights = t.in && json_object_get(t.in, "heights");
    bool has_noise = t.in && json_object_get(t.in, "noise");
    if (has_heights && has_noise) {
        pm_api_problem_field(prob, "/terrain", "give either heights or noise, not both");
    } else if (has_noise || !has_heights) {
        pm__read_noise(&t, q);
    } else if (size_ok && pm_api_bulk_is_f32(json_object_get(t.in, "heights"))) {
        /* Binary heights stay float32: half the memory, the same values. */
        float *h32 = pm_arena_alloc(arena, nodes * sizeof(float));
        q->hf.h32 = h32;
        if (h32)
            pm_api_vec_f32(&t, "heights", nodes,
                           PM_API_RANGE(-PM_ROAD_COORD_MAX, PM_ROAD_COORD_MAX), h32);
        else
            pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable",
                               "no memory for the heightfield");
    } else if (size_ok) {
        q->hf.h = pm_arena_alloc(arena, nodes * sizeof(double));
        if (q->hf.h)
            pm_api_vec(&t, "heights", PM_API_REQUIRED, nodes, nodes,
                       PM_API_RANGE(-PM_ROAD_COORD_MAX, PM_ROAD_COORD_MAX), NULL, q->hf.h, NULL);
        else
            pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable",
                               "no memory for the heightfield");
    }
    q->has_terrain = true;
    pm_api_end(&t);
}

static void pm__read_flatten(pm_api_node *root, pm__road_req *q) {
    pm_api_node f;
    if (pm_api_object(root, "flatten", PM_API_NULLABLE | PM_API_ABSENT_OFF, &f) != 1) return;
    q->p.flatten = true;
    pm_api_num(&f, "margin", 0, PM_API_RANGE(0, 1e3), 1.0, &q->p.flatten_opts.margin);
    pm_api_num(&f, "falloff", 0, PM_API_RANGE(0, 1e4), 8.0, &q->p.flatten_opts.falloff);
    pm_api_num(&f, "depth", 0, PM_API_RANGE(0, 10), 0.05, &q->p.flatten_opts.depth);
    pm_api_end(&f);
}

static void pm__read_props(pm_api_node *root, pm__road_req *q, pm_arena *arena) {
    pm_api_node arr, o;
    size_t n = pm_api_array(root, "props", 0, PM_API_IRANGE(0, PM_ROAD_MAX_PROPS), &arr);
    pm_road_prop *props = pm_arena_calloc(arena, n ? n : 1, sizeof *props);
    for (size_t i = 0; i < n && props; i++) {
        pm_road_prop *rp = &props[i];
        char name[PM_ROAD_NAME_MAX + 1] = "prop";
        int side = 2, align = 0;
        if (pm_api_object(&arr, NULL, PM_API_REQUIRED, &o) != 1) continue;
        pm_api_str(&o, "name", PM_API_REQUIRED, PM_ROAD_NAME_MAX, NULL, name, sizeof name);
        pm_api_num(&o, "spacing", PM_API_REQUIRED, PM_API_RANGE(0.1, 1e6), 10.0, &rp->spacing);
        pm_api_num(&o, "offset", 0, PM_API_RANGE(0, 1e3), 0.0, &rp->offset);
        pm_api_enum(&o, "side", 0, pm__sides, 2, &side);
        pm_api_enum(&o, "align", 0, pm__aligns, 0, &align);
        if (name[0] == '\0') {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/props/%zu/name", i);
            pm_api_problem_field(o.prob, ptr, "must not be empty");
        }
        rp->name = pm_arena_strdup(arena, name);
        rp->side = side == 0 ? PM_ROAD_SIDE_LEFT : (side == 1 ? PM_ROAD_SIDE_RIGHT : PM_ROAD_SIDE_BOTH);
        rp->align = align ? PM_ROAD_ALIGN_TERRAIN : PM_ROAD_ALIGN_TANGENT;
        pm_api_end(&o);
    }
    pm_api_end(&arr);
    q->p.props = props;
    q->p.nprops = props ? n : 0;
}

static void pm__read_lods(pm_api_node *root, pm__road_req *q, pm_api_problem *prob) {
    pm_api_node arr;
    size_t n = pm_api_array(root, "lods", 0, PM_API_IRANGE(0, PM_ROAD_MAX_LODS), &arr);
    for (size_t i = 0; i < n; i++) {
        char ptr[32];
        pm_api_num(&arr, NULL, PM_API_REQUIRED, PM_API_RANGE(1e-3, 1e3), 1.0, &q->lods[i]);
        double prev = i ? q->lods[i - 1] : q->p.max_error;
        if (!(q->lods[i] > prev)) {
            snprintf(ptr, sizeof ptr, "/lods/%zu", i);
            if (i)
                pm_api_problem_field(prob, ptr, "must be greater than lods[%zu] (%g)", i - 1, prev);
            else
                pm_api_problem_field(prob, ptr, "must be greater than max_error (%g)", prev);
        }
    }
    pm_api_end(&arr);
    q->p.lods = q->lods;
    q->p.nlods = n;
}

/* A lower bound on the output's vertices, known before any sampling: the
 * plan length of the control polygon cut into max_segment chords. Over the
 * limit is a 422 now; the exact count is enforced while sampling. */
static void pm__check_size(const pm__road_req *q, const pm_api_limits *lim, double l1, pm_api_problem *prob) {
    const pm_road_params *p = &q->p;
    if (pm_api_problem_failed(prob)) return;
    double per = (double)pm_road_columns(p) + (p->shoulder > 0.0 ? 2.0 : 0.0);
    double terrain = q->has_terrain && p->terrain_mesh ? (double)q->hf.cols * (double)q->hf.rows : 0.0;
    /* Far within the limit by the plan's |dx| + |dz| (l1, at least its
     * length): no hypot per point. Near it, the exact count decides. */
    if ((l1 * 1.001 / p->max_segment + 1.0 + (double)p->npoints) * per + terrain < 0.999 * (double)lim->max_vertices)
        return;
    double len = 0.0;
    for (size_t i = 1; i < p->npoints; i++) len += pm__plan_dist(p->points + 3 * (i - 1), p->points + 3 * i);
    if (p->closed) len += pm__plan_dist(p->points + 3 * (p->npoints - 1), p->points);
    double samples = floor(len / p->max_segment) + (double)p->npoints;
    double need = samples * per + terrain;
    if (need > (double)lim->max_vertices)
        pm_api_problem_field(prob, "/max_segment", "the road needs at least %.0f vertices, over the "
                             "limit max_vertices (%llu): raise max_segment or shorten the road",
                             need, (unsigned long long)lim->max_vertices);
}

void pm_api__road_check(pm__road_req *q, const pm_api_limits *lim, pm_api_problem *prob) {
    double l1 = 0.0;
    bool near = !pm_api_problem_failed(prob) && q->p.points && pm__pairs_scan(&q->p, &l1);
    pm__check_points(q, near, prob);
    pm__check_size(q, lim, l1, prob);
}

static int pm__road_parse(const json_t *body, const pm_api_limits *lim, pm_arena *arena,
                          void **params, json_t **canonical, pm_api_problem *prob) {
    pm__road_req *q = pm_arena_calloc(arena, 1, sizeof *q);
    if (!q) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return -1;
    }
    pm_road_params *p = &q->p;
    pm_road_params_default(p);
    pm_api_node root;
    int curve = 0, conform = 0, up = 0;
    int64_t cs = 4;
    pm_api_begin(&root, body, prob);
    pm__read_points(&root, q, lim, arena);
    pm_api_bool(&root, "closed", 0, false, &p->closed);
    pm_api_enum(&root, "curve", 0, pm__curves, 0, &curve);
    pm_api_num(&root, "alpha", 0, PM_API_RANGE(0, 1), 0.5, &p->alpha);
    pm_api_num(&root, "max_error", 0, PM_API_RANGE(1e-3, 100), 0.05, &p->max_error);
    pm_api_num(&root, "max_segment", 0, PM_API_RANGE(0.05, 1000), 5.0, &p->max_segment);
    pm_api_num(&root, "width", 0, PM_API_RANGE(0.1, 200), 7.0, &p->width);
    pm_api_num(&root, "shoulder", 0, PM_API_RANGE(0, 100), 1.0, &p->shoulder);
    pm_api_int(&root, "cross_segments", 0, PM_API_IRANGE(1, 64), 4, &cs);
    pm__read_banking(&root, q, arena);
    pm__read_terrain(&root, q, lim, arena, prob);
    pm_api_enum(&root, "conform", 0, pm__conforms, 0, &conform);
    pm_api_enum(&root, "up", 0, pm__ups, 0, &up);
    pm__read_flatten(&root, q);
    pm__read_props(&root, q, arena);
    pm__read_lods(&root, q, prob);
    pm_api_num(&root, "uv_scale", 0, PM_API_RANGE(1e-6, 1e6), 0.25, &p->uv_scale);
    p->curve = curve ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
    p->conform = conform ? PM_ROAD_BANK : PM_ROAD_DRAPE;
    p->up = up ? PM_ROAD_UP_TERRAIN : PM_ROAD_UP_WORLD;
    p->cross_segments = (uint32_t)cs;
    if (p->flatten && !q->has_terrain && !pm_api_problem_failed(prob))
        pm_api_problem_field(prob, "/flatten", "needs a terrain to flatten");
    pm_api__road_check(q, lim, prob);
    json_t *canon = pm_api_finish(&root);
    if (!canon || pm_api_problem_failed(prob)) {
        json_decref(canon);
        return -1;
    }
    *params = q;
    *canonical = canon;
    return 0;
}

/* A road lying on itself: one error per pair of control points named,
 * pointing at the first of the two. */
static void pm__overlap_problem(const pm__road_req *q, const pm_road_overlaps *o, pm_api_problem *prob) {
    char lod[64] = "", ptr[32];
    if (o->level)
        snprintf(lod, sizeof lod, " at level of detail lods[%u] (%g m)", o->level - 1,
                 q->lods[o->level - 1]);
    for (size_t k = 0; k < o->n; k++) {
        const pm_road_overlap *h = &o->o[k];
        const char *what = h->shoulder[0] == h->shoulder[1] ? (h->shoulder[0] ? "shoulder" : "asphalt")
                                                            : "asphalt and shoulder";
        char parts[64];
        if (h->point[0] == h->point[1]) snprintf(parts, sizeof parts, "around points[%u]", h->point[0]);
        else snprintf(parts, sizeof parts, "near points[%u] and near points[%u]", h->point[0], h->point[1]);
        char turn[64] = "";
        if (h->turn_radius == 0.0) snprintf(turn, sizeof turn, " (it turns there at a sharp corner)");
        else if (isfinite(h->turn_radius))
            snprintf(turn, sizeof turn, " (its tightest turn there: %.3f m)", h->turn_radius);
        pm_api_pointer_index(ptr, sizeof ptr, "/points", h->point[0]);
        pm_api_problem_field(prob, ptr, "the road overlaps itself%s near [%.3f, %.3f] (%s): its parts %s "
                             "lie on each other in plan; two legs need their centre lines at least "
                             "%.3f m apart, and a turn tighter than a centre-line radius of %.3f m (half "
                             "the width plus the shoulder)%s has its inner side merged into one point "
                             "only where the legs leaving it keep that spacing; move the points apart, "
                             "turn more gently or make the road narrower", lod, h->at[0], h->at[1], what,
                             parts, o->spacing, o->radius, turn);
    }
    if (o->pairs > o->n && o->n == PM_ROAD_MAX_OVERLAPS)
        pm_api_problem_field(prob, "/points", "%s%llu pairs of triangles overlap (the first %d "
                             "pairs of points are named)", o->pairs >= 4096 ? "at least " : "",
                             (unsigned long long)o->pairs,
                             PM_ROAD_MAX_OVERLAPS);
}

static int pm__road_generate(const void *params, const pm_api_limits *lim, pm_arena *arena,
                             const volatile int *cancel, pm_scene **scene, pm_api_problem *prob) {
    const pm__road_req *req = params;
    pm_road_params p = req->p;
    pm_heightfield *hf = NULL;
    p.max_vertices = lim->max_vertices;
    p.cancel = cancel;
    int r = PM_OK;
    if (req->has_terrain) {
        hf = pm_arena_alloc(arena, sizeof *hf);
        if (!hf) r = PM_ERR_NOMEM;
        else {
            *hf = req->hf;
            if (req->noise) r = pm_heightfield_from_noise(arena, hf, &req->nz, cancel);
            p.terrain = hf;
        }
    }
    pm_road_failure fail = {0};
    if (r == PM_OK) r = pm_road_generate(arena, &p, scene, &fail);
    switch (r) {
    case PM_OK:
        pm_scene_validate(*scene);   /* checked once here: the encoders then skip it */
        return 0;
    case PM_ERR_LIMIT:
        pm_api_problem_field(prob, fail.field ? fail.field : "",
                             "the output needs more than the limit max_vertices (%llu) vertices "
                             "or instances: coarsen max_error / max_segment, or shorten the road",
                             (unsigned long long)lim->max_vertices);
        return -1;
    case PM_ERR_GEOMETRY:
        if (fail.overlaps.pairs) {
            pm__overlap_problem(req, &fail.overlaps, prob);
            return -1;
        }
        pm_api_problem_field(prob, "/points", "these points give no valid road (%s)",
                             pm_result_name((pm_result)r));
        return -1;
    case PM_ERR_CANCELLED:
        pm_api_problem_set(prob, 503, "deadline", "Service Unavailable",
                           "the road was not finished before the deadline");
        return -1;
    case PM_ERR_NOMEM:
        pm_api_problem_field(prob, "", "the job needs more memory than the limit "
                             "max_arena_bytes (%zu)", lim->max_arena_bytes);
        return -1;
    default:
        pm_api_problem_field(prob, "/points", "these points give no valid road (%s)",
                             pm_result_name((pm_result)r));
        return -1;
    }
}

/* ?metadata=summary leaves out the flattened terrain heights (lengths, lods, props, warnings stay). */
static const char *const road_summary_omit[] = {"terrain.heights", NULL};

const pm_api_generator pm_api_gen_road = {
    .name = "road",
    .version = "1.6.0",   /* 1.6.0: the chord bound's peak from a root form that does not cancel (symmetric arc pieces were accepted up to 12 % past max_error; many chords' max_chord_error differs in the last digits); 1.1.0: LOD levels as one MSFT_lod node in glTF; 1.2.0: tight turns fan their inner side; 1.3.0: triangles in strip-band order (no meshopt pass), chord error in closed form; 1.4.0: a draped chord's error bounded in closed form (terrain); 1.5.0: a chord longer than max_segment cut into the fewest equal pieces, not halves */
    .path = "/v1/roads",
    .parse = pm__road_parse,
    .parse_text = pm_api__road_parse_text,
    .from_query = NULL,
    .generate = pm__road_generate,
    .summary_omit = road_summary_omit,
    .row_arrays = true,   /* points as one block */
};
