#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"

/* Corridors on the cell grid. For each edge: a straight corridor when the
 * two rooms share a side range (doors never on a corner cell), else an L
 * whose bend sits off the facing corners. A room in the way is walked
 * around along the ring of cells just outside it ("detour"), or becomes a
 * stop of the corridor ("break": the corridor ends at a door of that room
 * and a new one starts from it). Whatever these simple shapes cannot do, a
 * grid A* does, so every edge gets a corridor whenever one exists. Rooms on
 * different floors meet through a shaft: straight down where their
 * interiors overlap, else at the end of a corridor on one floor. */

typedef struct pm__c2 { int32_t x, z; } pm__c2;
typedef PM_VEC(pm__c2) pm__path;
typedef struct pm__hnode { int32_t f, g; uint32_t seq; int32_t node; } pm__hnode;

#define PM__MAX_DETOURS 32
#define PM__MAX_BREAK_DEPTH 8

typedef struct pm__router {
    pm_arena *a;
    const pm_dungeon_params *p;
    pm_dungeon_layout *l;
    pm_rng *rng;
    int32_t x0, z0, W, D, F;
    int32_t *owner;              /* F * W * D: room id, or -1 */
    uint32_t *stamp, cur;        /* A* scratch (all floors, made on first use), reset lazily */
    int32_t *g, *parent;
    PM_VEC(pm__hnode) heap;
    PM_VEC(pm_dungeon_corridor) cor;
    PM_VEC(pm_dungeon_shaft) sh;
    uint32_t edge;
} pm__router;

enum { PM__CLEAR = 0, PM__ASTAR = 1, PM__BROKEN = 2 };

static const pm_dungeon_room *pm__room(const pm__router *r, uint32_t i) { return &r->l->rooms[i].r; }

static int32_t pm__own(const pm__router *r, int32_t f, int32_t x, int32_t z) {
    if (f < 0 || f >= r->F || x < r->x0 || z < r->z0 || x >= r->x0 + r->W || z >= r->z0 + r->D)
        return -2;
    return r->owner[((size_t)f * (size_t)r->D + (size_t)(z - r->z0)) * (size_t)r->W + (size_t)(x - r->x0)];
}

static bool pm__free(const pm__router *r, int32_t f, pm__c2 c) { return pm__own(r, f, c.x, c.z) == -1; }

static bool pm__in(const pm_dungeon_room *m, pm__c2 c) {
    return c.x >= m->x && c.x < m->x + m->w && c.z >= m->z && c.z < m->z + m->d;
}

/* Side of a door cell (0 west, 1 east, 2 south, 3 north) or -1 when c is
 * not a wall cell off the corners. */
static int pm__door_side(const pm_dungeon_room *m, pm__c2 c) {
    bool ix = c.x > m->x && c.x < m->x + m->w - 1, iz = c.z > m->z && c.z < m->z + m->d - 1;
    if (iz && c.x == m->x) return 0;
    if (iz && c.x == m->x + m->w - 1) return 1;
    if (ix && c.z == m->z) return 2;
    if (ix && c.z == m->z + m->d - 1) return 3;
    return -1;
}

static pm__c2 pm__outward(pm__c2 c, int side) {
    static const int dx[4] = {-1, 1, 0, 0}, dz[4] = {0, 0, -1, 1};
    return (pm__c2){c.x + dx[side], c.z + dz[side]};
}

static int pm__push(pm__router *r, pm__path *p, pm__c2 c) { return pm_vec_push(r->a, p, c); }

/* Appends the cells from a to b (one axis), a skipped when it ends p. */
static int pm__line(pm__router *r, pm__path *p, pm__c2 a, pm__c2 b) {
    assert(a.x == b.x || a.z == b.z);
    int32_t sx = (b.x > a.x) - (b.x < a.x), sz = (b.z > a.z) - (b.z < a.z);
    pm__c2 c = a;
    if (p->len && p->data[p->len - 1].x == a.x && p->data[p->len - 1].z == a.z) {
        if (a.x == b.x && a.z == b.z) return 0;
        c.x += sx;
        c.z += sz;
    }
    for (;;) {
        if (pm__push(r, p, c) < 0) return PM_ERR_NOMEM;
        if (c.x == b.x && c.z == b.z) return 0;
        c.x += sx;
        c.z += sz;
    }
}

/* Straight corridor through a shared side range; 1 when built, 0 when the
 * rooms share no range, <0 on error. */
static int pm__straight(pm__router *r, const pm_dungeon_room *A, const pm_dungeon_room *B, pm__path *p) {
    int32_t lo = A->x > B->x ? A->x + 1 : B->x + 1;
    int32_t hi = A->x + A->w < B->x + B->w ? A->x + A->w - 2 : B->x + B->w - 2;
    if (lo <= hi && (B->z >= A->z + A->d || A->z >= B->z + B->d)) {
        int32_t x = (int32_t)pm_rng_int(r->rng, lo, hi);
        bool north = B->z >= A->z + A->d;
        pm__c2 a = {x, north ? A->z + A->d - 1 : A->z}, b = {x, north ? B->z : B->z + B->d - 1};
        return pm__line(r, p, a, b) < 0 ? PM_ERR_NOMEM : 1;
    }
    lo = A->z > B->z ? A->z + 1 : B->z + 1;
    hi = A->z + A->d < B->z + B->d ? A->z + A->d - 2 : B->z + B->d - 2;
    if (lo <= hi && (B->x >= A->x + A->w || A->x >= B->x + B->w)) {
        int32_t z = (int32_t)pm_rng_int(r->rng, lo, hi);
        bool east = B->x >= A->x + A->w;
        pm__c2 a = {east ? A->x + A->w - 1 : A->x, z}, b = {east ? B->x : B->x + B->w - 1, z};
        return pm__line(r, p, a, b) < 0 ? PM_ERR_NOMEM : 1;
    }
    return 0;
}

/* L leaving A along x and entering B along z, the bend at the corner
 * cell nearest both rooms. Returns 1 built, 0 impossible, <0 error. */
static int pm__l_xz(pm__router *r, const pm_dungeon_room *A, const pm_dungeon_room *B, pm__path *p) {
    int32_t bx, ex, bz, ez;
    if (B->x + B->w - 2 >= A->x + A->w) {
        bx = B->x + 1 > A->x + A->w ? B->x + 1 : A->x + A->w;
        ex = A->x + A->w - 1;
    } else if (B->x + 1 <= A->x - 1) {
        bx = B->x + B->w - 2 < A->x - 1 ? B->x + B->w - 2 : A->x - 1;
        ex = A->x;
    } else {
        return 0;
    }
    if (A->z + 1 <= B->z - 1) {
        bz = A->z + A->d - 2 < B->z - 1 ? A->z + A->d - 2 : B->z - 1;
        ez = B->z;
    } else if (A->z + A->d - 2 >= B->z + B->d) {
        bz = A->z + 1 > B->z + B->d ? A->z + 1 : B->z + B->d;
        ez = B->z + B->d - 1;
    } else {
        return 0;
    }
    if (pm__line(r, p, (pm__c2){ex, bz}, (pm__c2){bx, bz}) < 0) return PM_ERR_NOMEM;
    if (pm__line(r, p, (pm__c2){bx, bz}, (pm__c2){bx, ez}) < 0) return PM_ERR_NOMEM;
    return 1;
}

static void pm__reverse(pm__path *p) {
    for (size_t i = 0, j = p->len ? p->len - 1 : 0; i < j; i++, j--) {
        pm__c2 t = p->data[i];
        p->data[i] = p->data[j];
        p->data[j] = t;
    }
}

/* L leaving A along z and entering B along x: the mirror of pm__l_xz. */
static int pm__l_zx(pm__router *r, const pm_dungeon_room *A, const pm_dungeon_room *B, pm__path *p) {
    int k = pm__l_xz(r, B, A, p);
    if (k > 0) pm__reverse(p);
    return k;
}

/* The article's first guess: straight, else one of the two Ls (seeded
 * order). Returns 1 with p from A's door to B's door, 0 when none fits. */
static int pm__candidate(pm__router *r, const pm_dungeon_room *A, const pm_dungeon_room *B, pm__path *p) {
    p->len = 0;
    int k = pm__straight(r, A, B, p);
    if (k != 0) return k;
    bool xz_first = pm_rng_chance(r->rng, 0.5);
    k = xz_first ? pm__l_xz(r, A, B, p) : pm__l_zx(r, A, B, p);
    if (k != 0) return k;
    p->len = 0;
    return xz_first ? pm__l_zx(r, A, B, p) : pm__l_xz(r, A, B, p);
}

/* The ring of cells just outside room m, walked counter-clockwise from its
 * min corner: index <-> cell. */
typedef struct pm__ring { int32_t x0, z0, x1, z1, P; } pm__ring;

static pm__ring pm__ring_of(const pm_dungeon_room *m) {
    pm__ring g = {m->x - 1, m->z - 1, m->x + m->w, m->z + m->d, 0};
    g.P = 2 * ((g.x1 - g.x0) + (g.z1 - g.z0));
    return g;
}

static int32_t pm__ring_index(const pm__ring *g, pm__c2 c) {
    int32_t w = g->x1 - g->x0, d = g->z1 - g->z0;
    if (c.z == g->z0 && c.x >= g->x0 && c.x <= g->x1) return c.x - g->x0;
    if (c.x == g->x1 && c.z >= g->z0 && c.z <= g->z1) return w + (c.z - g->z0);
    if (c.z == g->z1 && c.x >= g->x0 && c.x <= g->x1) return w + d + (g->x1 - c.x);
    if (c.x == g->x0 && c.z > g->z0 && c.z < g->z1) return 2 * w + d + (g->z1 - c.z);
    return -1;
}

static pm__c2 pm__ring_cell(const pm__ring *g, int32_t k) {
    int32_t w = g->x1 - g->x0, d = g->z1 - g->z0;
    k = ((k % g->P) + g->P) % g->P;
    if (k < w) return (pm__c2){g->x0 + k, g->z0};
    if (k < w + d) return (pm__c2){g->x1, g->z0 + (k - w)};
    if (k < 2 * w + d) return (pm__c2){g->x1 - (k - w - d), g->z1};
    return (pm__c2){g->x0, g->z1 - (k - 2 * w - d)};
}

/* Number of steps from s to e going dir (+1/-1) when every cell strictly
 * between is free; -1 otherwise. */
static int32_t pm__ring_walk(const pm__router *r, int32_t f, const pm__ring *g, int32_t s, int32_t e, int dir) {
    int32_t steps = dir > 0 ? ((e - s) % g->P + g->P) % g->P : ((s - e) % g->P + g->P) % g->P;
    for (int32_t k = 1; k < steps; k++)
        if (!pm__free(r, f, pm__ring_cell(g, s + dir * k))) return -1;
    return steps;
}

/* Drops every loop of the path (a cell visited twice keeps its first
 * visit), so a detour that doubles back leaves a simple corridor. */
static void pm__erase_loops(pm__path *p) {
    size_t n = 0;
    for (size_t i = 0; i < p->len; i++) {
        pm__c2 c = p->data[i];
        size_t k = 0;
        while (k < n && (p->data[k].x != c.x || p->data[k].z != c.z)) k++;
        if (k < n) n = k + 1;
        else p->data[n++] = c;
    }
    p->len = n;
}

/* Replaces p[i..j] (the run inside room c) by the shorter free way round c
 * from p[i-1] to p[j+1]. Returns 1 done, 0 no way round, <0 error. */
static int pm__detour(pm__router *r, int32_t f, pm__path *p, uint32_t c, size_t i, size_t j) {
    pm__ring g = pm__ring_of(pm__room(r, c));
    int32_t s = pm__ring_index(&g, p->data[i - 1]), e = pm__ring_index(&g, p->data[j + 1]);
    if (s < 0 || e < 0) return 0;
    int32_t fw = pm__ring_walk(r, f, &g, s, e, +1), bw = pm__ring_walk(r, f, &g, s, e, -1);
    if (fw < 0 && bw < 0) return 0;
    int dir;
    if (fw < 0) dir = -1;
    else if (bw < 0) dir = +1;
    else if (fw != bw) dir = fw < bw ? +1 : -1;
    else dir = pm_rng_chance(r->rng, 0.5) ? +1 : -1;
    int32_t steps = dir > 0 ? fw : bw;
    pm__path out = {0};
    if (pm_vec_reserve(r->a, &out, p->len + (size_t)steps + 1) < 0) return PM_ERR_NOMEM;
    for (size_t k = 0; k + 1 < i; k++) out.data[out.len++] = p->data[k];
    for (int32_t k = 0; k <= steps; k++) out.data[out.len++] = pm__ring_cell(&g, s + dir * k);
    for (size_t k = j + 2; k < p->len; k++) out.data[out.len++] = p->data[k];
    pm__erase_loops(&out);
    *p = out;
    return 1;
}

static int pm__route_pair(pm__router *r, uint32_t A, uint32_t B, int depth);

static pm_dungeon_cell pm__cell(pm__c2 c, int32_t f) { return (pm_dungeon_cell){c.x, f, c.z}; }

/* A corridor on one floor from p[0] (door of A) to p[n-1] (door of B). */
static int pm__emit_same(pm__router *r, uint32_t A, uint32_t B, int32_t f, const pm__path *p) {
    assert(p->len >= 2);
    pm_dungeon_corridor c = {A, B, r->edge, NULL, (uint32_t)(p->len - 2),
                             {pm__cell(p->data[0], f), pm__cell(p->data[p->len - 1], f)}};
    c.cells = pm_arena_alloc(r->a, (c.ncells + 1) * sizeof *c.cells);
    if (!c.cells) return PM_ERR_NOMEM;
    for (uint32_t k = 0; k < c.ncells; k++) c.cells[k] = pm__cell(p->data[k + 1], f);
    return pm_vec_push(r->a, &r->cor, c) < 0 ? PM_ERR_NOMEM : PM_OK;
}

/* Whether column (x, z) is free on every floor from `from` (exclusive) to
 * `to` (inclusive). */
static bool pm__column_free(const pm__router *r, pm__c2 c, int32_t from, int32_t to) {
    int32_t s = to > from ? 1 : -1;
    for (int32_t f = from + s;; f += s) {
        if (!pm__free(r, f, c)) return false;
        if (f == to) return true;
    }
}

/* A corridor on A's floor from p[0] to p[n-2], then a shaft at p[n-2] to
 * B's floor, where p[n-1] is the door of B. */
static int pm__emit_cross(pm__router *r, uint32_t A, uint32_t B, const pm__path *p) {
    int32_t fa = pm__room(r, A)->floor, fb = pm__room(r, B)->floor, s = fb > fa ? 1 : -1;
    pm__c2 o = p->data[p->len - 2];
    uint32_t nflat = (uint32_t)(p->len - 2), nvert = (uint32_t)(fb > fa ? fb - fa : fa - fb);
    pm_dungeon_corridor c = {A, B, r->edge, NULL, nflat + nvert,
                             {pm__cell(p->data[0], fa), pm__cell(p->data[p->len - 1], fb)}};
    c.cells = pm_arena_alloc(r->a, (c.ncells + 1) * sizeof *c.cells);
    if (!c.cells) return PM_ERR_NOMEM;
    for (uint32_t k = 0; k < nflat; k++) c.cells[k] = pm__cell(p->data[k + 1], fa);
    for (uint32_t k = 0; k < nvert; k++) c.cells[nflat + k] = pm__cell(o, fa + s * (int32_t)(k + 1));
    pm_dungeon_shaft sh = {A, B, o.x, o.z, fa < fb ? fa : fb, fa < fb ? fb : fa};
    if (pm_vec_push(r->a, &r->cor, c) < 0 || pm_vec_push(r->a, &r->sh, sh) < 0) return PM_ERR_NOMEM;
    return PM_OK;
}

/* Whether p (A's floor) ends in a usable shaft: p[n-2] is the cell right
 * outside B's door p[n-1] and its column is free down (or up) to B. */
static bool pm__cross_ok(const pm__router *r, uint32_t A, uint32_t B, const pm__path *p) {
    if (p->len < 3) return false;
    const pm_dungeon_room *b = pm__room(r, B);
    pm__c2 w = p->data[p->len - 1], o = p->data[p->len - 2];
    int side = pm__door_side(b, w);
    if (side < 0) return false;
    pm__c2 out = pm__outward(w, side);
    return out.x == o.x && out.z == o.z && pm__column_free(r, o, pm__room(r, A)->floor, b->floor);
}

/* Walks the candidate p on floor f and clears it of rooms in the way: a
 * detour round each, or (break mode) a stop at the first. PM__CLEAR when
 * p is usable, PM__BROKEN when the edge was finished through a break,
 * PM__ASTAR when only a search can do it; <0 on error. */
static int pm__resolve(pm__router *r, uint32_t A, uint32_t B, int32_t f, pm__path *p, int depth) {
    for (int round = 0; round <= PM__MAX_DETOURS; round++) {
        size_t i = 1;
        while (i + 1 < p->len && pm__free(r, f, p->data[i])) i++;
        if (i + 1 >= p->len) return PM__CLEAR;
        int32_t c = pm__own(r, f, p->data[i].x, p->data[i].z);
        if (c < 0 || (uint32_t)c == A || (uint32_t)c == B || round == PM__MAX_DETOURS) return PM__ASTAR;
        const pm_dungeon_room *m = pm__room(r, (uint32_t)c);
        size_t j = i;
        for (size_t k = i; k < p->len; k++)
            if (pm__in(m, p->data[k])) j = k;
        if (j + 1 >= p->len) return PM__ASTAR;
        if (r->p->obstacles == PM_DUNGEON_BREAK && depth < PM__MAX_BREAK_DEPTH &&
            pm__door_side(m, p->data[i]) >= 0) {
            pm__path piece = *p;
            piece.len = i + 1;
            int k = pm__emit_same(r, A, (uint32_t)c, f, &piece);
            if (k < 0) return k;
            r->l->breaks++;
            k = pm__route_pair(r, (uint32_t)c, B, depth + 1);
            return k < 0 ? k : PM__BROKEN;
        }
        int k = pm__detour(r, f, p, (uint32_t)c, i, j);
        if (k < 0) return k;
        if (k == 0) return PM__ASTAR;
        r->l->detours++;
    }
    return PM__ASTAR;
}

/* ---- A*: the last resort, shortest path on one floor ---- */

static bool pm__heap_less(const pm__hnode *a, const pm__hnode *b) {
    return a->f != b->f ? a->f < b->f : a->seq < b->seq;
}

static int pm__heap_push(pm__router *r, pm__hnode n) {
    if (pm_vec_push(r->a, &r->heap, n) < 0) return PM_ERR_NOMEM;
    size_t i = r->heap.len - 1;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!pm__heap_less(&r->heap.data[i], &r->heap.data[up])) break;
        pm__hnode t = r->heap.data[i];
        r->heap.data[i] = r->heap.data[up];
        r->heap.data[up] = t;
        i = up;
    }
    return PM_OK;
}

static pm__hnode pm__heap_pop(pm__router *r) {
    pm__hnode top = r->heap.data[0];
    r->heap.data[0] = r->heap.data[--r->heap.len];
    size_t i = 0, n = r->heap.len;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && pm__heap_less(&r->heap.data[l], &r->heap.data[m])) m = l;
        if (l + 1 < n && pm__heap_less(&r->heap.data[l + 1], &r->heap.data[m])) m = l + 1;
        if (m == i) break;
        pm__hnode t = r->heap.data[i];
        r->heap.data[i] = r->heap.data[m];
        r->heap.data[m] = t;
        i = m;
    }
    return top;
}

static int32_t pm__rect_dist(const pm_dungeon_room *m, pm__c2 c) {
    int32_t dx = c.x < m->x ? m->x - c.x : (c.x >= m->x + m->w ? c.x - (m->x + m->w - 1) : 0);
    int32_t dz = c.z < m->z ? m->z - c.z : (c.z >= m->z + m->d ? c.z - (m->z + m->d - 1) : 0);
    return dx + dz;
}

typedef PM_VEC(pm_dungeon_cell) pm__path3;

/* Search nodes cover the floors from flo up: node = (f - flo) * plane + cell. */
static pm_dungeon_cell pm__node_cell(const pm__router *r, int32_t flo, int32_t n) {
    int32_t plane = r->W * r->D, c = n % plane;
    return (pm_dungeon_cell){r->x0 + c % r->W, flo + n / plane, r->z0 + c / r->W};
}
static int32_t pm__cell_node(const pm__router *r, int32_t flo, pm_dungeon_cell c) {
    return (c.floor - flo) * r->W * r->D + (c.z - r->z0) * r->W + (c.x - r->x0);
}

static int pm__astar_open(pm__router *r, int32_t node, int32_t g, int32_t h, int32_t parent, uint32_t *seq) {
    if (r->stamp[node] == r->cur && r->g[node] <= g) return PM_OK;
    r->stamp[node] = r->cur;
    r->g[node] = g;
    r->parent[node] = parent;
    return pm__heap_push(r, (pm__hnode){g + h, g, (*seq)++, node});
}

static int32_t pm__h3(const pm_dungeon_room *b, pm_dungeon_cell c) {
    int32_t df = c.floor > b->floor ? c.floor - b->floor : b->floor - c.floor;
    return pm__rect_dist(b, (pm__c2){c.x, c.z}) + df;
}

static int pm__astar_scratch(pm__router *r) {
    if (r->stamp) return PM_OK;
    size_t n = (size_t)r->W * (size_t)r->D * (size_t)r->F;
    r->stamp = pm_arena_calloc(r->a, n, sizeof(uint32_t));
    r->g = pm_arena_alloc(r->a, n * sizeof(int32_t));
    r->parent = pm_arena_alloc(r->a, n * sizeof(int32_t));
    return r->stamp && r->g && r->parent ? PM_OK : PM_ERR_NOMEM;
}

/* Whether the search may step from c (owner own) to n. Doors of A only
 * step outward; B's door is entered only from outside; climbing happens
 * only between free cells, within the floors of A and B. */
static bool pm__astar_step(const pm__router *r, uint32_t A, uint32_t B, pm_dungeon_cell c, int32_t own,
                           pm_dungeon_cell n, int32_t flo, int32_t fhi) {
    if (n.floor < flo || n.floor > fhi) return false;
    if (own == (int32_t)A) {
        pm__c2 o = pm__outward((pm__c2){c.x, c.z}, pm__door_side(pm__room(r, A), (pm__c2){c.x, c.z}));
        if (n.floor != c.floor || o.x != n.x || o.z != n.z) return false;
    }
    int32_t no = pm__own(r, n.floor, n.x, n.z);
    if (no == -1) return true;
    if (no != (int32_t)B || n.floor != c.floor) return false;
    int side = pm__door_side(pm__room(r, B), (pm__c2){n.x, n.z});
    if (side < 0) return false;
    pm__c2 o = pm__outward((pm__c2){n.x, n.z}, side);
    return o.x == c.x && o.z == c.z;
}

/* Shortest corridor from a door of A to a door of B over the free cells of
 * the floors from A's to B's, climbing in place between floors (each climb
 * becomes a shaft). Every door of A is a source. Returns 1 with p from
 * A's door to B's door, 0 when none exists, <0 on error. */
static int pm__astar(pm__router *r, uint32_t A, uint32_t B, pm__path3 *p) {
    const pm_dungeon_room *a = pm__room(r, A), *b = pm__room(r, B);
    int32_t flo = a->floor < b->floor ? a->floor : b->floor, fhi = a->floor ^ b->floor ^ flo;
    static const int dx[6] = {1, -1, 0, 0, 0, 0}, dz[6] = {0, 0, 1, -1, 0, 0}, df[6] = {0, 0, 0, 0, 1, -1};
    int k = pm__astar_scratch(r);
    if (k < 0) return k;
    r->cur++;
    r->heap.len = 0;
    r->l->astar++;
    uint32_t seq = 0;
    for (int32_t z = a->z; z < a->z + a->d; z++)
        for (int32_t x = a->x; x < a->x + a->w; x++) {
            pm_dungeon_cell c = {x, a->floor, z};
            if (pm__door_side(a, (pm__c2){x, z}) < 0) continue;
            k = pm__astar_open(r, pm__cell_node(r, flo, c), 0, pm__h3(b, c), -1, &seq);
            if (k < 0) return k;
        }
    while (r->heap.len) {
        pm__hnode h = pm__heap_pop(r);
        if (h.g > r->g[h.node]) continue;   /* stale entry */
        pm_dungeon_cell c = pm__node_cell(r, flo, h.node);
        int32_t own = pm__own(r, c.floor, c.x, c.z);
        if (own == (int32_t)B) {
            p->len = 0;
            for (int32_t n = h.node; n >= 0; n = r->parent[n])
                if (pm_vec_push(r->a, p, pm__node_cell(r, flo, n)) < 0) return PM_ERR_NOMEM;
            for (size_t i = 0, j = p->len - 1; i < j; i++, j--) {
                pm_dungeon_cell t = p->data[i];
                p->data[i] = p->data[j];
                p->data[j] = t;
            }
            return 1;
        }
        for (int d = 0; d < 6; d++) {
            pm_dungeon_cell n = {c.x + dx[d], c.floor + df[d], c.z + dz[d]};
            if (df[d] && own != -1) continue;
            if (!pm__astar_step(r, A, B, c, own, n, flo, fhi)) continue;
            k = pm__astar_open(r, pm__cell_node(r, flo, n), h.g + 1, pm__h3(b, n), h.node, &seq);
            if (k < 0) return k;
        }
    }
    return 0;
}

/* A corridor from a 3D walk p (door of A ... door of B); every vertical
 * run in it becomes a shaft. */
static int pm__emit_walk(pm__router *r, uint32_t A, uint32_t B, const pm__path3 *p) {
    assert(p->len >= 2);
    pm_dungeon_corridor c = {A, B, r->edge, NULL, (uint32_t)(p->len - 2), {p->data[0], p->data[p->len - 1]}};
    c.cells = pm_arena_alloc(r->a, (c.ncells + 1) * sizeof *c.cells);
    if (!c.cells) return PM_ERR_NOMEM;
    memcpy(c.cells, p->data + 1, c.ncells * sizeof *c.cells);
    for (size_t k = 0; k + 1 < p->len;) {
        if (p->data[k + 1].floor == p->data[k].floor) {
            k++;
            continue;
        }
        size_t j = k;
        int32_t lo = p->data[k].floor, hi = lo;
        while (j + 1 < p->len && p->data[j + 1].floor != p->data[j].floor) {
            j++;
            lo = p->data[j].floor < lo ? p->data[j].floor : lo;
            hi = p->data[j].floor > hi ? p->data[j].floor : hi;
        }
        pm_dungeon_shaft sh = {A, B, p->data[k].x, p->data[k].z, lo, hi};
        if (pm_vec_push(r->a, &r->sh, sh) < 0) return PM_ERR_NOMEM;
        k = j;
    }
    return pm_vec_push(r->a, &r->cor, c) < 0 ? PM_ERR_NOMEM : PM_OK;
}

static int pm__route_astar(pm__router *r, uint32_t A, uint32_t B) {
    pm__path3 p = {0};
    int k = pm__astar(r, A, B, &p);
    if (k < 0) return k;
    if (k == 0) return PM_ERR_GEOMETRY;
    return pm__emit_walk(r, A, B, &p);
}

/* ---- one edge ---- */

/* Same floor: candidate, resolved; else A*. */
static int pm__route_same(pm__router *r, uint32_t A, uint32_t B, int depth) {
    const pm_dungeon_room *a = pm__room(r, A), *b = pm__room(r, B);
    pm__path p = {0};
    int k = pm__candidate(r, a, b, &p);
    if (k < 0) return k;
    if (k > 0) {
        k = pm__resolve(r, A, B, a->floor, &p, depth);
        if (k < 0 || k == PM__BROKEN) return k < 0 ? k : PM_OK;
        if (k == PM__CLEAR) return pm__emit_same(r, A, B, a->floor, &p);
    }
    return pm__route_astar(r, A, B);
}

/* Interiors overlap: a shaft straight through both rooms' floors at a
 * seeded cell whose column is free in between. 1 built, 0 none, <0. */
static int pm__route_through(pm__router *r, uint32_t A, uint32_t B) {
    const pm_dungeon_room *a = pm__room(r, A), *b = pm__room(r, B);
    int32_t x0 = a->x > b->x ? a->x + 1 : b->x + 1, z0 = a->z > b->z ? a->z + 1 : b->z + 1;
    int32_t x1 = a->x + a->w < b->x + b->w ? a->x + a->w - 1 : b->x + b->w - 1;
    int32_t z1 = a->z + a->d < b->z + b->d ? a->z + a->d - 1 : b->z + b->d - 1;
    if (x0 >= x1 || z0 >= z1) return 0;
    uint64_t n = (uint64_t)(x1 - x0) * (uint64_t)(z1 - z0), start = pm_rng_below(r->rng, n);
    int32_t s = b->floor > a->floor ? 1 : -1;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t k = (start + t) % n;
        pm__c2 c = {x0 + (int32_t)(k % (uint64_t)(x1 - x0)), z0 + (int32_t)(k / (uint64_t)(x1 - x0))};
        bool ok = true;
        for (int32_t f = a->floor + s; ok && f != b->floor; f += s) ok = pm__free(r, f, c);
        if (!ok) continue;
        uint32_t nv = (uint32_t)(s * (b->floor - a->floor) - 1);
        pm_dungeon_corridor cor = {A, B, r->edge, NULL, nv,
                                   {pm__cell(c, a->floor), pm__cell(c, b->floor)}};
        cor.cells = pm_arena_alloc(r->a, (nv + 1) * sizeof *cor.cells);
        if (!cor.cells) return PM_ERR_NOMEM;
        for (uint32_t v = 0; v < nv; v++) cor.cells[v] = pm__cell(c, a->floor + s * (int32_t)(v + 1));
        pm_dungeon_shaft sh = {A, B, c.x, c.z, a->floor < b->floor ? a->floor : b->floor,
                               a->floor < b->floor ? b->floor : a->floor};
        if (pm_vec_push(r->a, &r->cor, cor) < 0 || pm_vec_push(r->a, &r->sh, sh) < 0) return PM_ERR_NOMEM;
        return 1;
    }
    return 0;
}

/* Different floors: through-shaft, else a corridor on one room's floor
 * (seeded which) that ends in a shaft outside a door of the other. */
static int pm__route_cross(pm__router *r, uint32_t A, uint32_t B, int depth) {
    int k = pm__route_through(r, A, B);
    if (k != 0) return k < 0 ? k : PM_OK;
    if (pm_rng_chance(r->rng, 0.5)) {
        uint32_t t = A;
        A = B;
        B = t;
    }
    const pm_dungeon_room *a = pm__room(r, A), *b = pm__room(r, B);
    pm__path p = {0};
    k = pm__candidate(r, a, b, &p);
    if (k < 0) return k;
    if (k > 0) {
        k = pm__resolve(r, A, B, a->floor, &p, depth);
        if (k < 0 || k == PM__BROKEN) return k < 0 ? k : PM_OK;
        if (k == PM__CLEAR && pm__cross_ok(r, A, B, &p)) return pm__emit_cross(r, A, B, &p);
    }
    return pm__route_astar(r, A, B);
}

static int pm__route_pair(pm__router *r, uint32_t A, uint32_t B, int depth) {
    if (pm__room(r, A)->floor == pm__room(r, B)->floor) return pm__route_same(r, A, B, depth);
    return pm__route_cross(r, A, B, depth);
}

static int pm__router_init(pm__router *r) {
    const pm_dungeon_layout *l = r->l;
    int32_t x0 = l->rooms[0].r.x, z0 = l->rooms[0].r.z, x1 = x0, z1 = z0, f1 = 0;
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *m = &l->rooms[i].r;
        if (m->x < x0) x0 = m->x;
        if (m->z < z0) z0 = m->z;
        if (m->x + m->w > x1) x1 = m->x + m->w;
        if (m->z + m->d > z1) z1 = m->z + m->d;
        if (m->floor > f1) f1 = m->floor;
    }
    /* Two spare cells round the rooms: a corridor can pass outside any
     * room's ring and still stay on the grid. */
    r->x0 = x0 - 2;
    r->z0 = z0 - 2;
    r->W = x1 - x0 + 4;
    r->D = z1 - z0 + 4;
    r->F = f1 + 1;
    size_t plane = (size_t)r->W * (size_t)r->D, cells = plane * (size_t)r->F;
    r->owner = pm_arena_alloc(r->a, cells * sizeof(int32_t));
    if (!r->owner) return PM_ERR_NOMEM;
    memset(r->owner, 0xff, cells * sizeof(int32_t));
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *m = &l->rooms[i].r;
        for (int32_t z = m->z; z < m->z + m->d; z++)
            for (int32_t x = m->x; x < m->x + m->w; x++)
                r->owner[((size_t)m->floor * (size_t)r->D + (size_t)(z - r->z0)) * (size_t)r->W +
                         (size_t)(x - r->x0)] = (int32_t)i;
    }
    return PM_OK;
}

static void pm__corridor_reverse(pm_dungeon_corridor *c) {
    uint32_t t = c->a;
    c->a = c->b;
    c->b = t;
    pm_dungeon_cell d = c->doors[0];
    c->doors[0] = c->doors[1];
    c->doors[1] = d;
    for (uint32_t i = 0, j = c->ncells ? c->ncells - 1 : 0; i < j; i++, j--) {
        pm_dungeon_cell x = c->cells[i];
        c->cells[i] = c->cells[j];
        c->cells[j] = x;
    }
}

/* Orders the pieces of one edge (several after breaks; a cross-floor piece
 * may run either way) into a chain from edge.a to edge.b. */
static void pm__chain(pm__router *r, size_t first, uint32_t from) {
    for (size_t k = first; k < r->cor.len; k++) {
        size_t m = k;
        while (m < r->cor.len && r->cor.data[m].a != from && r->cor.data[m].b != from) m++;
        if (m == r->cor.len) return;   /* cannot happen: pieces always chain */
        pm_dungeon_corridor t = r->cor.data[k];
        r->cor.data[k] = r->cor.data[m];
        r->cor.data[m] = t;
        if (r->cor.data[k].a != from) pm__corridor_reverse(&r->cor.data[k]);
        from = r->cor.data[k].b;
    }
}

int pm_dungeon_route(pm_arena *a, const pm_dungeon_params *p, pm_rng *rng,
                     const volatile int *cancel, pm_dungeon_layout *out,
                     pm_dungeon_failure *fail) {
    pm__router r = {.a = a, .p = p, .l = out, .rng = rng};
    out->detours = out->breaks = out->astar = 0;
    int k = pm__router_init(&r);
    if (k < 0) return k;
    for (uint32_t e = 0; e < out->nedges; e++) {
        if (cancel && *cancel) return PM_ERR_CANCELLED;
        r.edge = e;
        size_t first = r.cor.len;
        k = pm__route_pair(&r, out->edges[e].a, out->edges[e].b, 0);
        if (k == 0) pm__chain(&r, first, out->edges[e].a);
        if (k == PM_ERR_GEOMETRY) {
            *fail = (pm_dungeon_failure){PM_DUNGEON_FAIL_UNREACHABLE, out->edges[e].a, out->edges[e].b, 0, 0};
            return k;
        }
        if (k < 0) return k;
    }
    out->corridors = r.cor.data;
    out->ncorridors = (uint32_t)r.cor.len;
    out->shafts = r.sh.data;
    out->nshafts = (uint32_t)r.sh.len;
    return PM_OK;
}
