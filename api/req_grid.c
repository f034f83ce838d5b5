/* POST /v1/grids and GET /v1/grids?seed=…&size=…: organic quad grids. */
#include <string.h>

#include "grid/grid.h"
#include "scene/result.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"

/* Relaxation iterations one request may ask for: each one is a pass over
 * every quad, so this caps the work a small request can demand. */
#define PM_API_GRID_MAX_ITERATIONS 1000
/* Spacing in metres: a millimetre to ten kilometres keeps every coordinate
 * a comfortable float and every predicate far from underflow. */
#define PM_API_GRID_MIN_SPACING 0.001
#define PM_API_GRID_MAX_SPACING 10000.0

static const char *const shape_names[] = {"hexagon", "square", "disk", NULL};
static const char *const point_names[] = {"poisson", "lattice", NULL};
static const char *const relax_names[] = {"square", "laplacian", NULL};

static void read_relax(pm_api_node *root, pm_grid_params *p, const pm_grid_params *d) {
    pm_api_node n;
    if (pm_api_object(root, "relax", 0, &n) != 1) return;
    int mode = (int)d->relax.mode;
    int64_t it = d->relax.iterations;
    pm_api_enum(&n, "mode", 0, relax_names, mode, &mode);
    pm_api_int(&n, "iterations", 0, PM_API_IRANGE(0, PM_API_GRID_MAX_ITERATIONS), it, &it);
    pm_api_num(&n, "strength", 0, ((pm_api_range){0, 1, true, false, NULL}), d->relax.strength,
               &p->relax.strength);
    pm_api_bool(&n, "lock_boundary", 0, d->relax.lock_boundary, &p->relax.lock_boundary);
    pm_api_end(&n);
    p->relax.mode = (pm_grid_relax_mode)mode;
    p->relax.iterations = (uint32_t)it;
}

/* Limits that depend on several fields: the points the size gives and the
 * vertices of the finished grid. Both are named at /size. */
static void check_job_size(const pm_grid_params *p, const pm_api_limits *lim, pm_api_problem *prob) {
    uint64_t pts = pm_grid_point_bound(p), verts = pm_grid_vertex_bound(p);
    if (pts > lim->max_points)
        pm_api_problem_field(prob, "/size",
                             "gives up to %llu points with shape %s and points %s, over %u "
                             "(limit max_points)",
                             (unsigned long long)pts, pm_grid_shape_name(p->shape),
                             pm_grid_points_name(p->points), lim->max_points);
    else if (verts > lim->max_vertices)
        pm_api_problem_field(prob, "/size",
                             "gives up to %llu vertices, over %llu (limit max_vertices)",
                             (unsigned long long)verts, (unsigned long long)lim->max_vertices);
}

static int grid_parse(const json_t *body, const pm_api_limits *lim, pm_arena *arena, void **params,
                      json_t **canonical, pm_api_problem *prob) {
    pm_grid_params d, *p = pm_arena_alloc(arena, sizeof *p);
    pm_grid_defaults(&d);
    if (!p) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "out of memory");
        return -1;
    }
    *p = d;
    pm_api_node root;
    int shape = (int)d.shape, points = (int)d.points;
    int64_t size = d.size;
    pm_api_begin(&root, body, prob);
    pm_api_u64(&root, "seed", 0, d.seed, &p->seed);
    pm_api_int(&root, "size", 0, PM_API_ILIMIT(1, lim->max_grid_size, "max_grid_size"), d.size, &size);
    pm_api_enum(&root, "shape", 0, shape_names, shape, &shape);
    pm_api_enum(&root, "points", 0, point_names, points, &points);
    pm_api_num(&root, "spacing", 0, PM_API_RANGE(PM_API_GRID_MIN_SPACING, PM_API_GRID_MAX_SPACING),
               d.spacing, &p->spacing);
    pm_api_num(&root, "merge", 0, PM_API_RANGE(0, 1), d.merge, &p->merge);
    int bad_lo = pm_api_num(&root, "merge_min_angle", 0, ((pm_api_range){0, 180, false, true, NULL}),
                            d.merge_min_angle, &p->merge_min_angle);
    int bad_hi = pm_api_num(&root, "merge_max_angle", 0, ((pm_api_range){0, 180, true, false, NULL}),
                            d.merge_max_angle, &p->merge_max_angle);
    read_relax(&root, p, &d);
    p->size = (uint32_t)size;
    p->shape = (pm_grid_shape)shape;
    p->points = (pm_grid_points)points;
    if (bad_lo == 0 && bad_hi == 0 && !(p->merge_min_angle < p->merge_max_angle))
        pm_api_problem_field(prob, "/merge_max_angle", "must be greater than merge_min_angle (%g)",
                             p->merge_min_angle);
    if (!pm_api_problem_failed(prob)) check_job_size(p, lim, prob);
    json_t *canon = pm_api_finish(&root);
    if (!canon || pm_api_problem_failed(prob)) {
        json_decref(canon);
        return -1;
    }
    *params = p;
    *canonical = canon;
    return 0;
}

static const pm_api_qparam grid_query[] = {
    {"seed", PM_API_Q_U64},     {"size", PM_API_Q_INT},    {"shape", PM_API_Q_STR},
    {"points", PM_API_Q_STR},   {"spacing", PM_API_Q_NUM}, {"merge", PM_API_Q_NUM},
};

static json_t *grid_from_query(const pm_api_query_pair *q, size_t n, pm_api_problem *prob) {
    return pm_api_query_doc(grid_query, sizeof grid_query / sizeof grid_query[0], q, n, prob);
}

static int grid_generate(const void *params, const pm_api_limits *lim, pm_arena *arena,
                         const volatile int *cancel, pm_scene **scene, pm_api_problem *prob) {
    const pm_grid_params *p = params;
    int r = pm_grid_generate(arena, p, cancel, scene);
    switch (r) {
    case PM_OK:
        pm_scene_validate(*scene);   /* checked once here: the encoders then skip it */
        return 0;
    case PM_ERR_CANCELLED:
        pm_api_problem_set(prob, 503, "deadline", "Deadline exceeded",
                           "the grid was not finished within the deadline");
        return -1;
    case PM_ERR_NOMEM:
        pm_api_problem_field(prob, "/size", "needs more memory than one job may take (limit "
                             "max_arena_bytes, %zu bytes)", lim->max_arena_bytes);
        return -1;
    default:
        pm_api_problem_field(prob, "/size", "gives no grid: %s", pm_result_name((pm_result)r));
        return -1;
    }
}

/* ?metadata=summary leaves out the per-quad and per-vertex arrays (counts and quality stay). */
static const char *const grid_summary_omit[] = {"quads", "neighbors", "boundary", NULL};

const pm_api_generator pm_api_gen_grid = {
    .name = "grid",
    .version = "1.0.0",
    .path = "/v1/grids",
    .parse = grid_parse,
    .from_query = grid_from_query,
    .generate = grid_generate,
    .summary_omit = grid_summary_omit,
};
