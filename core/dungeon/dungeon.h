#ifndef PM_DUNGEON_H
#define PM_DUNGEON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/rng.h"
#include "scene/scene.h"

/* Seeded dungeon layouts on a cell grid: rooms (placed or given), a
 * connection graph with a main path from a rest room to a boss room,
 * branches and dead ends, corridors that never pass through a room, vertical
 * shafts between floors, and a greedy-meshed scene.
 *
 * Grid: cell (x, z) on floor f covers [x, x+1) x [z, z+1) times cell_size at
 * height f * floor_height. A room's footprint is [x, x+w) x [z, z+d) and
 * includes its 1-cell wall ring; its interior is [x+1, x+w-1) x [z+1, z+d-1).
 * A door is a wall cell that is not a corner (for a shaft that opens in a
 * room's floor or ceiling, an interior cell). Corridor cells lie outside
 * every room footprint. Core asserts its preconditions: api/ validates. */

typedef struct pm_dungeon_room {
    int32_t x, z;     /* min corner in cells */
    int32_t w, d;     /* size in cells, wall ring included, >= 3 */
    int32_t floor;    /* >= 0 */
} pm_dungeon_room;

/* Seeded placement without overlaps: count rooms with sizes in
 * [min_size, max_size] (per axis) inside [0, extent_w) x [0, extent_d) on
 * floors [0, floors), at least spacing free cells apart on a floor. */
typedef struct pm_dungeon_placement {
    uint32_t count;
    int32_t extent_w, extent_d;
    int32_t floors;
    int32_t min_size, max_size;
    int32_t spacing;
} pm_dungeon_placement;

typedef enum pm_dungeon_obstacles {
    PM_DUNGEON_DETOUR = 0,   /* go around a room in the way (A* as a last resort) */
    PM_DUNGEON_BREAK = 1,    /* end the corridor at the room in the way, go on from it */
} pm_dungeon_obstacles;

typedef struct pm_dungeon_params {
    uint64_t seed;
    const pm_dungeon_room *rooms;   /* explicit rooms, or NULL: use gen */
    uint32_t nrooms;
    pm_dungeon_placement gen;
    double branch_probability;          /* a main-path room also links its second-nearest */
    double dead_end_probability;        /* that branch is a dead end */
    double dead_end_extend_probability; /* a dead end takes one more room */
    double loop_probability;            /* a room gets an extra cycle edge */
    pm_dungeon_obstacles obstacles;
    double cell_size, wall_height, floor_height;   /* metres, > 0 */
} pm_dungeon_params;

/* The defaults of the HTTP API (issue 5): 0.2 / 0.5 / 0.6, no loops,
 * detour, 1 m cells, 3 m walls, 4 m floors; 12 rooms in 64 x 64 on 1 floor,
 * sizes 5..11, spacing 2. The seed is 0. */
void pm_dungeon_params_default(pm_dungeon_params *p);

typedef enum pm_dungeon_role { PM_ROOM_NORMAL = 0, PM_ROOM_REST = 1, PM_ROOM_BOSS = 2 } pm_dungeon_role;
typedef enum pm_dungeon_edge_kind {
    PM_EDGE_MAIN = 0, PM_EDGE_BRANCH = 1, PM_EDGE_DEAD_END = 2, PM_EDGE_LOOP = 3
} pm_dungeon_edge_kind;

const char *pm_dungeon_role_name(pm_dungeon_role r);        /* "rest", "normal", "boss" */
const char *pm_dungeon_edge_kind_name(pm_dungeon_edge_kind k); /* "main", "branch", … */

typedef struct pm_dungeon_room_info {
    pm_dungeon_room r;
    pm_dungeon_role role;
    bool on_main_path;
    bool end;           /* the boss room or the last room of a dead end */
} pm_dungeon_room_info;

/* Edges in creation order: along the main path, each main edge is followed
 * by the branch or dead-end edges taken at its first room. */
typedef struct pm_dungeon_edge {
    uint32_t a, b;      /* a is the room the edge was taken from */
    pm_dungeon_edge_kind kind;
} pm_dungeon_edge;

typedef struct pm_dungeon_cell { int32_t x, floor, z; } pm_dungeon_cell;

/* One corridor between rooms a and b: cells from a's door to b's door (doors
 * excluded), then doors[0] in a and doors[1] in b. An edge routed straight or
 * around obstacles gives one corridor; in "break" mode an edge that meets a
 * room in the way gives a chain of corridors through that room. */
typedef struct pm_dungeon_corridor {
    uint32_t a, b;
    uint32_t edge;      /* index into edges */
    pm_dungeon_cell *cells;
    uint32_t ncells;
    pm_dungeon_cell doors[2];
} pm_dungeon_corridor;

/* A vertical shaft: the column (x, z) open from floor lo to floor hi. */
typedef struct pm_dungeon_shaft {
    uint32_t a, b;      /* the rooms its corridor joins */
    int32_t x, z;
    int32_t floor_lo, floor_hi;
} pm_dungeon_shaft;

typedef struct pm_dungeon_layout {
    pm_dungeon_room_info *rooms;
    uint32_t nrooms;
    pm_dungeon_edge *edges;
    uint32_t nedges;
    uint32_t *main_path;        /* room ids from rest to boss */
    uint32_t nmain;
    pm_dungeon_corridor *corridors;
    uint32_t ncorridors;
    pm_dungeon_shaft *shafts;
    uint32_t nshafts;
    uint32_t detours, breaks, astar;   /* how obstacles were handled (counts) */
} pm_dungeon_layout;

/* Why a valid-looking request has no dungeon. */
typedef enum pm_dungeon_fail_kind {
    PM_DUNGEON_FAIL_NONE = 0,
    PM_DUNGEON_FAIL_PACKING,     /* gen.count rooms do not fit the extent */
    PM_DUNGEON_FAIL_PLACEMENT,   /* bounded search could not place room `a` */
    PM_DUNGEON_FAIL_UNREACHABLE, /* no corridor can join rooms a and b */
} pm_dungeon_fail_kind;

typedef struct pm_dungeon_failure {
    pm_dungeon_fail_kind kind;
    uint32_t a, b;
    uint64_t need, have;         /* PACKING: rooms asked for vs rooms that fit */
} pm_dungeon_failure;

/* need = gen.count; have = how many rooms of min_size, spacing apart, fit
 * the extent at best (a grid packing, optimal for equal squares). Placement
 * fails early with PM_DUNGEON_FAIL_PACKING when need > have. */
void pm_dungeon_packing(const pm_dungeon_placement *g, uint64_t *need, uint64_t *have);

/* Places p->gen.count rooms with p's seed; every search is bounded (a fixed
 * number of tries per room), so an impossible packing fails in bounded time.
 * Returns 0 with *out (arena) set, PM_ERR_GEOMETRY with *fail set, or
 * PM_ERR_NOMEM. */
int pm_dungeon_place(pm_arena *a, const pm_dungeon_params *p, pm_dungeon_room **out,
                     pm_dungeon_failure *fail);

/* Whether two rooms on one floor share a cell. */
bool pm_dungeon_rooms_overlap(const pm_dungeon_room *r, const pm_dungeon_room *s);
/* First overlapping pair (i < j) among n rooms, in (j, i) order; false when
 * none. O(n log n + overlaps). scratch is used for sorting. */
bool pm_dungeon_find_overlap(pm_arena *scratch, const pm_dungeon_room *r, uint32_t n,
                             uint32_t *i, uint32_t *j);

/* The connection graph of n rooms (n >= 1): fills rooms, edges, main_path
 * of out. rng is the graph stage's stream. */
int pm_dungeon_graph(pm_arena *a, const pm_dungeon_params *p, const pm_dungeon_room *rooms,
                     uint32_t n, pm_rng *rng, pm_dungeon_layout *out);

/* Routes a corridor for every edge of out (after pm_dungeon_graph): fills
 * corridors and shafts. Returns 0, PM_ERR_GEOMETRY with fail set when two
 * rooms cannot be joined (only possible when rooms wall others in),
 * PM_ERR_CANCELLED or PM_ERR_NOMEM. */
int pm_dungeon_route(pm_arena *a, const pm_dungeon_params *p, pm_rng *rng,
                     const volatile int *cancel, pm_dungeon_layout *out,
                     pm_dungeon_failure *fail);

/* The whole layout: placement (or p->rooms), graph, corridors. */
int pm_dungeon_layout_build(pm_arena *a, const pm_dungeon_params *p,
                            const volatile int *cancel, pm_dungeon_layout *out,
                            pm_dungeon_failure *fail);

/* Adds the primitives floor, wall, corridor and shaft (each only when it has
 * triangles) to s: greedy-merged quads, flat unit normals, CCW from the
 * visible side. */
int pm_dungeon_mesh(pm_scene *s, const pm_dungeon_layout *l, const pm_dungeon_params *p);

/* Writes rooms, edges, main_path, corridors and shafts into s->meta. */
int pm_dungeon_meta(pm_scene *s, const pm_dungeon_layout *l);

/* Layout + mesh + metadata in one scene (arena a). layout may be NULL. */
int pm_dungeon_generate(pm_arena *a, const pm_dungeon_params *p, const volatile int *cancel,
                        pm_scene **scene, pm_dungeon_layout *layout, pm_dungeon_failure *fail);
#endif
