/* POST /v1/dungeons and GET /v1/dungeons?seed=…: request parsing,
 * validation and the run of the dungeon generator (core/dungeon/). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"

/* Bounds that keep one job's grids small (cells * floors <= 4 Mi). */
#define PM_DG_MAX_EXTENT 1024
#define PM_DG_MAX_FLOORS 16
#define PM_DG_MAX_SIZE 64
#define PM_DG_MAX_ROOM 256
#define PM_DG_MAX_SPACING 16
#define PM_DG_MAX_CELLS (UINT64_C(1) << 22)

static const char *const pm_dg_obstacles[] = {"detour", "break", NULL};

typedef struct pm_dg_ctx {
    pm_api_node *root;
    pm_api_problem *prob;
    const pm_api_limits *lim;
    pm_dungeon_params *p;
    pm_arena *arena;
} pm_dg_ctx;

static int32_t pm_dg_i32(int64_t v) { return (int32_t)v; }

/* Explicit rooms: [{x, z, w, d, floor}], sizes with the wall ring. */
static void pm_dg_read_rooms(pm_dg_ctx *c) {
    pm_api_node rooms, room;
    size_t n = pm_api_array(c->root, "rooms", PM_API_REQUIRED,
                            PM_API_ILIMIT(1, c->lim->max_rooms, "max_rooms"), &rooms);
    pm_dungeon_room *r = pm_arena_calloc(c->arena, n + 1, sizeof *r);
    if (!r) n = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x, z, w, d, f;
        pm_api_object(&rooms, NULL, PM_API_REQUIRED, &room);
        pm_api_int(&room, "x", PM_API_REQUIRED, PM_API_IRANGE(0, PM_DG_MAX_EXTENT - 3), 0, &x);
        pm_api_int(&room, "z", PM_API_REQUIRED, PM_API_IRANGE(0, PM_DG_MAX_EXTENT - 3), 0, &z);
        pm_api_int(&room, "w", PM_API_REQUIRED, PM_API_IRANGE(3, PM_DG_MAX_ROOM), 3, &w);
        pm_api_int(&room, "d", PM_API_REQUIRED, PM_API_IRANGE(3, PM_DG_MAX_ROOM), 3, &d);
        pm_api_int(&room, "floor", 0, PM_API_IRANGE(0, PM_DG_MAX_FLOORS - 1), 0, &f);
        pm_api_end(&room);
        r[i] = (pm_dungeon_room){pm_dg_i32(x), pm_dg_i32(z), pm_dg_i32(w), pm_dg_i32(d), pm_dg_i32(f)};
        char ptr[64];
        if (x + w > PM_DG_MAX_EXTENT) {
            pm_api_pointer_index(ptr, sizeof ptr, "/rooms", i);
            pm_api_problem_field(c->prob, ptr, "x + w must be at most %d", PM_DG_MAX_EXTENT);
        }
        if (z + d > PM_DG_MAX_EXTENT) {
            pm_api_pointer_index(ptr, sizeof ptr, "/rooms", i);
            pm_api_problem_field(c->prob, ptr, "z + d must be at most %d", PM_DG_MAX_EXTENT);
        }
    }
    pm_api_end(&rooms);
    c->p->rooms = r;
    c->p->nrooms = (uint32_t)n;
}

/* Overlaps and grid size of explicit rooms (after they read cleanly). */
static void pm_dg_check_rooms(pm_dg_ctx *c) {
    const pm_dungeon_params *p = c->p;
    uint32_t i, j;
    char pi[64], pj[64];
    if (pm_dungeon_find_overlap(c->arena, p->rooms, p->nrooms, &i, &j)) {
        pm_api_pointer_index(pi, sizeof pi, "/rooms", i);
        pm_api_pointer_index(pj, sizeof pj, "/rooms", j);
        pm_api_problem_field(c->prob, pj, "overlaps %s (rooms on one floor may not share a cell)", pi);
        pm_api_problem_field(c->prob, pi, "overlaps %s", pj);
    }
    int32_t x0 = INT32_MAX, z0 = INT32_MAX, x1 = 0, z1 = 0, f1 = 0;
    for (uint32_t k = 0; k < p->nrooms; k++) {
        const pm_dungeon_room *r = &p->rooms[k];
        x0 = r->x < x0 ? r->x : x0;
        z0 = r->z < z0 ? r->z : z0;
        x1 = r->x + r->w > x1 ? r->x + r->w : x1;
        z1 = r->z + r->d > z1 ? r->z + r->d : z1;
        f1 = r->floor > f1 ? r->floor : f1;
    }
    uint64_t cells = (uint64_t)(x1 - x0 + 4) * (uint64_t)(z1 - z0 + 4) * (uint64_t)(f1 + 1);
    if (p->nrooms && cells > PM_DG_MAX_CELLS)
        pm_api_problem_field(c->prob, "/rooms",
                             "the rooms span %" PRIu64 " grid cells (bounding box x floors); at most %" PRIu64,
                             cells, PM_DG_MAX_CELLS);
}

static void pm_dg_read_generate(pm_dg_ctx *c) {
    pm_api_node g;
    pm_dungeon_placement *gen = &c->p->gen;
    if (pm_api_object(c->root, "generate", 0, &g) != 1) return;
    int64_t count, floors, mn, mx, sp;
    double ext[2];
    pm_api_int(&g, "count", 0, PM_API_ILIMIT(1, c->lim->max_rooms, "max_rooms"), 12, &count);
    int ev = pm_api_vec(&g, "extent", 0, 2, 2, PM_API_RANGE(3, PM_DG_MAX_EXTENT), (const double[]){64, 64}, ext, NULL);
    pm_api_int(&g, "floors", 0, PM_API_IRANGE(1, PM_DG_MAX_FLOORS), 1, &floors);
    int mv = pm_api_int(&g, "min_size", 0, PM_API_IRANGE(3, PM_DG_MAX_SIZE), 5, &mn);
    int xv = pm_api_int(&g, "max_size", 0, PM_API_IRANGE(3, PM_DG_MAX_SIZE), 11, &mx);
    pm_api_int(&g, "spacing", 0, PM_API_IRANGE(1, PM_DG_MAX_SPACING), 2, &sp);
    pm_api_end(&g);
    for (int k = 0; k < 2 && ev == 0; k++)
        if (ext[k] != floor(ext[k])) {
            pm_api_problem_field(c->prob, k ? "/generate/extent/1" : "/generate/extent/0", "must be an integer");
            ev = -1;
        }
    *gen = (pm_dungeon_placement){(uint32_t)count, (int32_t)ext[0], (int32_t)ext[1], (int32_t)floors,
                                  (int32_t)mn, (int32_t)mx, (int32_t)sp};
    if (mv == 0 && xv == 0 && mn > mx)
        pm_api_problem_field(c->prob, "/generate/max_size", "must be at least min_size (%" PRId64 ")", mn);
    if (ev == 0 && (uint64_t)gen->extent_w * (uint64_t)gen->extent_d * (uint64_t)gen->floors > PM_DG_MAX_CELLS)
        pm_api_problem_field(c->prob, "/generate/extent", "extent w x d x floors must be at most %" PRIu64 " cells",
                             PM_DG_MAX_CELLS);
    if (ev == 0 && mv == 0 && (mn > gen->extent_w || mn > gen->extent_d))
        pm_api_problem_field(c->prob, "/generate/min_size", "must fit the extent (%dx%d)", gen->extent_w,
                             gen->extent_d);
}

/* Can count rooms fit at all? Cheap, deterministic, so it is a parse-time
 * 422 rather than a failed job. */
static void pm_dg_check_packing(pm_dg_ctx *c) {
    uint64_t need, have;
    pm_dungeon_packing(&c->p->gen, &need, &have);
    if (need > have)
        pm_api_problem_field(c->prob, "/generate/count",
                             "%" PRIu64 " rooms of min_size %d with spacing %d cannot be placed in a %dx%d extent "
                             "on %d floor%s: at most %" PRIu64 " fit",
                             need, c->p->gen.min_size, c->p->gen.spacing, c->p->gen.extent_w,
                             c->p->gen.extent_d, c->p->gen.floors, c->p->gen.floors == 1 ? "" : "s", have);
}

static void pm_dg_read_common(pm_dg_ctx *c) {
    pm_dungeon_params *p = c->p;
    int ob = 0;
    pm_api_num(c->root, "branch_probability", 0, PM_API_RANGE(0, 1), 0.2, &p->branch_probability);
    pm_api_num(c->root, "dead_end_probability", 0, PM_API_RANGE(0, 1), 0.5, &p->dead_end_probability);
    pm_api_num(c->root, "dead_end_extend_probability", 0, PM_API_RANGE(0, 1), 0.6,
               &p->dead_end_extend_probability);
    pm_api_num(c->root, "loops", 0, PM_API_RANGE(0, 1), 0.0, &p->loop_probability);
    pm_api_enum(c->root, "obstacles", 0, pm_dg_obstacles, 0, &ob);
    p->obstacles = ob == 1 ? PM_DUNGEON_BREAK : PM_DUNGEON_DETOUR;
    pm_api_num(c->root, "cell_size", 0, (pm_api_range){0, 100, true, false, NULL}, 1.0, &p->cell_size);
    pm_api_num(c->root, "wall_height", 0, (pm_api_range){0, 1000, true, false, NULL}, 3.0, &p->wall_height);
    pm_api_num(c->root, "floor_height", 0, (pm_api_range){0, 1000, true, false, NULL}, 4.0, &p->floor_height);
}

static int pm_dg_parse(const json_t *body, const pm_api_limits *lim, pm_arena *arena, void **params,
                       json_t **canonical, pm_api_problem *prob) {
    pm_dungeon_params *p = pm_arena_calloc(arena, 1, sizeof *p);
    if (!p) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "out of memory");
        return -1;
    }
    pm_dungeon_params_default(p);
    pm_api_node root;
    pm_dg_ctx c = {&root, prob, lim, p, arena};
    pm_api_begin(&root, body, prob);
    pm_api_u64(&root, "seed", PM_API_REQUIRED, 0, &p->seed);
    const json_t *rooms = json_is_object(body) ? json_object_get(body, "rooms") : NULL;
    bool explicit_rooms = rooms && !json_is_null(rooms);
    if (explicit_rooms) {
        pm_dg_read_rooms(&c);
        pm_api_node g;
        if (pm_api_object(&root, "generate", PM_API_NULLABLE | PM_API_ABSENT_OFF, &g) == 1) {
            pm_api_problem_field(prob, "/generate", "must be absent or null when rooms is given");
            pm_api_end(&g);
        }
    } else {
        if (root.canon) json_object_set_new(root.canon, "rooms", json_null());
        pm_dg_read_generate(&c);
    }
    pm_dg_read_common(&c);
    if (!pm_api_problem_failed(prob)) {
        if (explicit_rooms) pm_dg_check_rooms(&c);
        else pm_dg_check_packing(&c);
    }
    json_t *canon = pm_api_finish(&root);
    if (!canon || pm_api_problem_failed(prob)) {
        json_decref(canon);
        return -1;
    }
    *params = p;
    *canonical = canon;
    return 0;
}

static const pm_api_qparam pm_dg_query[] = {
    {"seed", PM_API_Q_U64},       {"count", PM_API_Q_INT},    {"floors", PM_API_Q_INT},
    {"extent", PM_API_Q_PAIR},    {"min_size", PM_API_Q_INT}, {"max_size", PM_API_Q_INT},
    {"spacing", PM_API_Q_INT},    {"obstacles", PM_API_Q_STR}, {"loops", PM_API_Q_NUM},
    {"branch_probability", PM_API_Q_NUM}, {"dead_end_probability", PM_API_Q_NUM},
    {"dead_end_extend_probability", PM_API_Q_NUM}, {"cell_size", PM_API_Q_NUM},
    {"wall_height", PM_API_Q_NUM}, {"floor_height", PM_API_Q_NUM},
};

/* GET: the query's placement parameters move into "generate"; range errors
 * then point at /generate/<name>. */
static json_t *pm_dg_from_query(const pm_api_query_pair *q, size_t n, pm_api_problem *prob) {
    json_t *doc = pm_api_query_doc(pm_dg_query, sizeof pm_dg_query / sizeof pm_dg_query[0], q, n, prob);
    if (!doc) return NULL;
    static const char *const placement[] = {"count", "floors", "extent", "min_size", "max_size", "spacing"};
    json_t *gen = json_object();
    for (size_t i = 0; i < sizeof placement / sizeof placement[0]; i++) {
        json_t *v = json_object_get(doc, placement[i]);
        if (!v) continue;
        json_object_set(gen, placement[i], v);
        json_object_del(doc, placement[i]);
    }
    json_object_set_new(doc, "generate", gen);
    return doc;
}

static void pm_dg_fail(const pm_dungeon_params *p, const pm_dungeon_failure *f, pm_api_problem *prob) {
    char pa[64], pb[64];
    switch (f->kind) {
    case PM_DUNGEON_FAIL_PACKING:
    case PM_DUNGEON_FAIL_PLACEMENT:
        pm_api_problem_field(prob, "/generate/count",
                             "placed %u of %u rooms before the %dx%d extent on %d floor%s ran out of space "
                             "(bounded search); lower count, min_size or spacing, or enlarge extent",
                             f->a, p->gen.count, p->gen.extent_w, p->gen.extent_d, p->gen.floors,
                             p->gen.floors == 1 ? "" : "s");
        break;
    case PM_DUNGEON_FAIL_UNREACHABLE:
        if (p->rooms) {
            pm_api_pointer_index(pa, sizeof pa, "/rooms", f->a);
            pm_api_pointer_index(pb, sizeof pb, "/rooms", f->b);
            pm_api_problem_field(prob, pa, "no corridor can join it to %s: other rooms wall it in", pb);
            pm_api_problem_field(prob, pb, "no corridor can join it to %s: other rooms wall it in", pa);
        } else {
            pm_api_problem_field(prob, "", "rooms %u and %u cannot be joined", f->a, f->b);
        }
        break;
    default:
        pm_api_problem_field(prob, "", "no dungeon for these parameters");
    }
}

static int pm_dg_generate(const void *params, const pm_api_limits *lim, pm_arena *arena,
                          const volatile int *cancel, pm_scene **scene, pm_api_problem *prob) {
    const pm_dungeon_params *p = params;
    pm_dungeon_failure f;
    int r = pm_dungeon_generate(arena, p, cancel, scene, NULL, &f);
    if (r == PM_ERR_GEOMETRY) {
        pm_dg_fail(p, &f, prob);
        return -1;
    }
    if (r == PM_ERR_CANCELLED) {
        pm_api_problem_set(prob, 503, "deadline", "Service Unavailable", "the job passed its deadline");
        return -1;
    }
    if (r == PM_ERR_NOMEM) {
        pm_api_problem_field(prob, "", "the job needs more memory than one request may take (limit max_arena_bytes)");
        return -1;
    }
    if (r < 0) {
        pm_api_problem_set(prob, 500, "internal", "Internal Server Error", "dungeon generator failed (%d)", r);
        return -1;
    }
    uint64_t nv = pm_scene_vertex_count(*scene);
    if (nv > lim->max_vertices) {
        pm_api_problem_field(prob, p->rooms ? "/rooms" : "/generate/count",
                             "the mesh would have %" PRIu64 " vertices (limit max_vertices = %" PRIu64 ")", nv,
                             lim->max_vertices);
        return -1;
    }
    pm_scene_validate(*scene);   /* checked once here: the encoders then skip it */
    return 0;
}

/* ?metadata=summary leaves out the cells of every corridor (rooms, edges, doors and shafts stay). */
static const char *const dungeon_summary_omit[] = {"corridors[].cells", NULL};

const pm_api_generator pm_api_gen_dungeon = {
    .name = "dungeon",
    .version = "1.0.0",
    .path = "/v1/dungeons",
    .parse = pm_dg_parse,
    .from_query = pm_dg_from_query,
    .generate = pm_dg_generate,
    .summary_omit = dungeon_summary_omit,
};
