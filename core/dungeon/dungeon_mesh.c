#include <assert.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"

/* The dungeon mesh from a per-floor cell map. Floors and corridor floors
 * are greedy-merged into maximal rectangles; wall sides and corridor sides
 * are merged into runs along each grid line, so a straight wall of any
 * length is one quad. Each quad has its own four vertices with the face
 * normal (flat shading) and faces the side a player sees it from. Walls
 * are solid blocks one cell thick: a room's wall ring, and for corridors
 * every empty cell around them (diagonals too, so corners close). Faces
 * between two blocks are never emitted. A shaft is a tube between floors,
 * open at both ends, with a pad where it lands. */

enum { PM__EMPTY = 0, PM__INTERIOR, PM__WALL, PM__DOOR, PM__CORRIDOR, PM__SHAFT, PM__CWALL };
enum { PM__HOLE = 1, PM__PAD = 2 };

typedef struct pm__map {
    int32_t x0, z0, W, D, F;
    uint8_t *type, *flag, *used;
    uint8_t *mask[5];             /* one floor's masks, see pm__masks */
    int32_t *runs;                /* W open runs, for pm__sides */
    const pm_dungeon_params *p;
    pm_scene *s;
    pm_prim *prim;
} pm__map;

static size_t pm__at(const pm__map *m, int32_t f, int32_t x, int32_t z) {
    return ((size_t)f * (size_t)m->D + (size_t)(z - m->z0)) * (size_t)m->W + (size_t)(x - m->x0);
}

/* One quad c[0..3] (in order round its rim) facing n. */
static int pm__quad(pm__map *m, const float c[4][3], const float n[3]) {
    float u[3] = {c[1][0] - c[0][0], c[1][1] - c[0][1], c[1][2] - c[0][2]};
    float v[3] = {c[2][0] - c[0][0], c[2][1] - c[0][1], c[2][2] - c[0][2]};
    float cr[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    bool flip = cr[0] * n[0] + cr[1] * n[1] + cr[2] * n[2] < 0;
    int64_t base = -1;
    for (int k = 0; k < 4; k++) {
        int64_t i = pm_prim_add_vertex(m->s, m->prim, c[k], n, NULL, NULL);
        if (i < 0) return PM_ERR_NOMEM;
        if (k == 0) base = i;
    }
    uint32_t b = (uint32_t)base;
    if (!flip)
        return pm_prim_add_tri(m->s, m->prim, b, b + 1, b + 2) < 0 ||
                       pm_prim_add_tri(m->s, m->prim, b, b + 2, b + 3) < 0 ? PM_ERR_NOMEM : PM_OK;
    return pm_prim_add_tri(m->s, m->prim, b, b + 2, b + 1) < 0 ||
                   pm_prim_add_tri(m->s, m->prim, b, b + 3, b + 2) < 0 ? PM_ERR_NOMEM : PM_OK;
}

/* Horizontal rectangle of cells [x0, x1) x [z0, z1) at height y, facing up. */
static int pm__hrect(pm__map *m, int32_t x0, int32_t z0, int32_t x1, int32_t z1, double y) {
    float cs = (float)m->p->cell_size, yy = (float)y;
    float c[4][3] = {{x0 * cs, yy, z0 * cs}, {x1 * cs, yy, z0 * cs}, {x1 * cs, yy, z1 * cs}, {x0 * cs, yy, z1 * cs}};
    static const float up[3] = {0, 1, 0};
    return pm__quad(m, c, up);
}

/* Vertical rectangle on the grid line between cells: axis 0 is the plane
 * x = at (spanning z from a0 to a1), axis 1 the plane z = at; dir is the
 * sign of the normal along that axis. */
static int pm__vrect(pm__map *m, int axis, int32_t at, int32_t a0, int32_t a1, double y0, double y1, int dir) {
    float cs = (float)m->p->cell_size, p = at * cs, lo = a0 * cs, hi = a1 * cs;
    float b = (float)y0, t = (float)y1;
    float c[4][3];
    float n[3] = {0, 0, 0};
    if (axis == 0) {
        float q[4][3] = {{p, b, lo}, {p, b, hi}, {p, t, hi}, {p, t, lo}};
        memcpy(c, q, sizeof c);
        n[0] = (float)dir;
    } else {
        float q[4][3] = {{lo, b, p}, {hi, b, p}, {hi, t, p}, {lo, t, p}};
        memcpy(c, q, sizeof c);
        n[2] = (float)dir;
    }
    return pm__quad(m, c, n);
}

/* Greedy meshing of a mask plane (W x D, 1 = in): grows each unused cell
 * into the widest run, then as many rows as stay fully in the mask. */
static int pm__greedy(pm__map *m, const uint8_t *in, double y) {
    size_t W = (size_t)m->W;
    memset(m->used, 0, W * (size_t)m->D);
    for (int32_t z = 0; z < m->D; z++)
        for (int32_t x = 0; x < m->W; x++) {
            size_t i = (size_t)z * W + (size_t)x;
            if (m->used[i] || !in[i]) continue;
            int32_t x1 = x + 1;
            while (x1 < m->W && !m->used[i + (size_t)(x1 - x)] && in[i + (size_t)(x1 - x)]) x1++;
            int32_t z1 = z + 1;
            for (bool grow = true; grow && z1 < m->D; z1 += grow) {
                size_t row = (size_t)z1 * W;
                for (int32_t xx = x; xx < x1 && grow; xx++) grow = !m->used[row + (size_t)xx] && in[row + (size_t)xx];
            }
            for (int32_t zz = z; zz < z1; zz++) memset(m->used + (size_t)zz * W + (size_t)x, 1, (size_t)(x1 - x));
            int r = pm__hrect(m, m->x0 + x, m->z0 + z, m->x0 + x1, m->z0 + z1, y);
            if (r < 0) return r;
        }
    return PM_OK;
}

static int pm__side_quad(pm__map *m, int axis, int dir, int32_t li, int32_t run, int32_t end, double y0, double y1) {
    int32_t at = (axis == 0 ? m->x0 : m->z0) + li + (dir > 0 ? 1 : 0);
    int32_t base = axis == 0 ? m->z0 : m->x0;
    return pm__vrect(m, axis, at, base + run, base + end, y0, y1, dir);
}

/* Side faces, facing out of the blocks: for every cell edge with
 * self[cell] and open[neighbour] (a neighbour off the map is open), a quad
 * on that grid line, merged into runs. One row-major pass per direction:
 * runs along z are tracked per column. */
static int pm__sides(pm__map *m, const uint8_t *self, const uint8_t *open, double y0, double y1) {
    static const int dx[4] = {1, -1, 0, 0}, dz[4] = {0, 0, 1, -1};
    size_t W = (size_t)m->W;
    int32_t *col = m->runs;
    for (int k = 0; k < 4; k++) {
        int axis = dx[k] ? 0 : 1, dir = dx[k] + dz[k];
        for (int32_t x = 0; x < m->W; x++) col[x] = -1;
        for (int32_t z = 0; z <= m->D; z++) {
            int32_t run = -1;
            for (int32_t x = 0; x <= m->W; x++) {
                bool on = false;
                if (z < m->D && x < m->W && self[(size_t)z * W + (size_t)x]) {
                    int32_t nx = x + dx[k], nz = z + dz[k];
                    on = nx < 0 || nz < 0 || nx >= m->W || nz >= m->D || open[(size_t)nz * W + (size_t)nx];
                }
                int r = 0;
                if (axis == 0 && x < m->W) {
                    if (on && col[x] < 0) col[x] = z;
                    else if (!on && col[x] >= 0) {
                        r = pm__side_quad(m, 0, dir, x, col[x], z, y0, y1);
                        col[x] = -1;
                    }
                } else if (axis == 1 && z < m->D) {
                    if (on && run < 0) run = x;
                    else if (!on && run >= 0) {
                        r = pm__side_quad(m, 1, dir, z, run, x, y0, y1);
                        run = -1;
                    }
                }
                if (r < 0) return r;
            }
        }
    }
    return PM_OK;
}

/* The masks of one floor. */
enum { PM__M_FLOOR, PM__M_WALL, PM__M_OPEN, PM__M_CFLOOR, PM__M_CWALL, PM__NMASKS };

static void pm__masks(pm__map *m, int32_t f) {
    size_t plane = (size_t)m->W * (size_t)m->D;
    const uint8_t *t = m->type + (size_t)f * plane, *fl = m->flag + (size_t)f * plane;
    uint8_t **k = m->mask;
    for (size_t i = 0; i < plane; i++) {
        k[PM__M_FLOOR][i] = (t[i] == PM__INTERIOR || t[i] == PM__DOOR) && !fl[i];
        k[PM__M_WALL][i] = t[i] == PM__WALL;
        k[PM__M_OPEN][i] = t[i] != PM__WALL && t[i] != PM__CWALL;
        k[PM__M_CFLOOR][i] = t[i] == PM__CORRIDOR && !fl[i];
        k[PM__M_CWALL][i] = t[i] == PM__CWALL;
    }
}

/* Wall blocks in every empty cell next to a corridor cell. */
static void pm__corridor_walls(pm__map *m) {
    for (int32_t f = 0; f < m->F; f++)
        for (int32_t z = m->z0 + 1; z < m->z0 + m->D - 1; z++)
            for (int32_t x = m->x0 + 1; x < m->x0 + m->W - 1; x++) {
                if (m->type[pm__at(m, f, x, z)] != PM__CORRIDOR) continue;
                for (int32_t dz = -1; dz <= 1; dz++)
                    for (int32_t dx = -1; dx <= 1; dx++) {
                        size_t at = pm__at(m, f, x + dx, z + dz);
                        if (m->type[at] == PM__EMPTY) m->type[at] = PM__CWALL;
                    }
            }
}

static int pm__map_build(pm__map *m, pm_arena *a, const pm_dungeon_layout *l) {
    int32_t x0 = l->rooms[0].r.x, z0 = l->rooms[0].r.z, x1 = x0, z1 = z0, f1 = 0;
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *r = &l->rooms[i].r;
        if (r->x < x0) x0 = r->x;
        if (r->z < z0) z0 = r->z;
        if (r->x + r->w > x1) x1 = r->x + r->w;
        if (r->z + r->d > z1) z1 = r->z + r->d;
        if (r->floor > f1) f1 = r->floor;
    }
    /* Corridors stay within 2 cells of the rooms; one more for their walls. */
    m->x0 = x0 - 3, m->z0 = z0 - 3, m->W = x1 - x0 + 6, m->D = z1 - z0 + 6, m->F = f1 + 1;
    size_t plane = (size_t)m->W * (size_t)m->D;
    m->type = pm_arena_calloc(a, plane * (size_t)m->F, 1);
    m->flag = pm_arena_calloc(a, plane * (size_t)m->F, 1);
    m->used = pm_arena_alloc(a, plane);
    if (!m->type || !m->flag || !m->used) return PM_ERR_NOMEM;
    for (int k = 0; k < PM__NMASKS; k++)
        if (!(m->mask[k] = pm_arena_alloc(a, plane))) return PM_ERR_NOMEM;
    if (!(m->runs = pm_arena_alloc(a, (size_t)m->W * sizeof(int32_t)))) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *r = &l->rooms[i].r;
        for (int32_t z = r->z; z < r->z + r->d; z++)
            for (int32_t x = r->x; x < r->x + r->w; x++) {
                bool ring = x == r->x || z == r->z || x == r->x + r->w - 1 || z == r->z + r->d - 1;
                m->type[pm__at(m, r->floor, x, z)] = ring ? PM__WALL : PM__INTERIOR;
            }
    }
    for (uint32_t c = 0; c < l->ncorridors; c++) {
        const pm_dungeon_corridor *k = &l->corridors[c];
        for (uint32_t i = 0; i < k->ncells; i++) {
            size_t at = pm__at(m, k->cells[i].floor, k->cells[i].x, k->cells[i].z);
            assert(m->type[at] == PM__EMPTY || m->type[at] == PM__CORRIDOR || m->type[at] == PM__SHAFT);
            if (m->type[at] == PM__EMPTY) m->type[at] = PM__CORRIDOR;
        }
        for (int d = 0; d < 2; d++) {
            size_t at = pm__at(m, k->doors[d].floor, k->doors[d].x, k->doors[d].z);
            if (m->type[at] == PM__WALL) m->type[at] = PM__DOOR;
        }
    }
    /* A shaft's column is a hole in every floor above its bottom; between
     * its ends it is shaft, not corridor, so no corridor walls box it in. */
    for (uint32_t i = 0; i < l->nshafts; i++) {
        const pm_dungeon_shaft *sh = &l->shafts[i];
        m->flag[pm__at(m, sh->floor_lo, sh->x, sh->z)] |= PM__PAD;
        for (int32_t f = sh->floor_lo + 1; f <= sh->floor_hi; f++) {
            size_t at = pm__at(m, f, sh->x, sh->z);
            m->flag[at] |= PM__HOLE;
            if (f < sh->floor_hi && m->type[at] == PM__CORRIDOR) m->type[at] = PM__SHAFT;
        }
    }
    pm__corridor_walls(m);
    return PM_OK;
}

/* Adds a primitive and lets fill write it; drops it again when empty (a
 * glTF accessor may not be empty). */
static int pm__prim(pm__map *m, const char *name, int (*fill)(pm__map *m, const pm_dungeon_layout *l),
                    const pm_dungeon_layout *l) {
    m->prim = pm_scene_add_prim(m->s, name, name, 0, 64, 96);
    if (!m->prim) return PM_ERR_NOMEM;
    int r = fill(m, l);
    if (r < 0) return r;
    if (m->prim->icount == 0) m->s->nprims--;
    return PM_OK;
}

static int pm__fill_floor(pm__map *m, const pm_dungeon_layout *l) {
    (void)l;
    for (int32_t f = 0; f < m->F; f++) {
        pm__masks(m, f);
        int r = pm__greedy(m, m->mask[PM__M_FLOOR], f * m->p->floor_height);
        if (r < 0) return r;
    }
    return PM_OK;
}

static int pm__fill_wall(pm__map *m, const pm_dungeon_layout *l) {
    (void)l;
    for (int32_t f = 0; f < m->F; f++) {
        double y0 = f * m->p->floor_height, y1 = y0 + m->p->wall_height;
        pm__masks(m, f);
        int r = pm__greedy(m, m->mask[PM__M_WALL], y1);
        if (r == 0) r = pm__sides(m, m->mask[PM__M_WALL], m->mask[PM__M_OPEN], y0, y1);
        if (r < 0) return r;
    }
    return PM_OK;
}

static int pm__fill_corridor(pm__map *m, const pm_dungeon_layout *l) {
    (void)l;
    for (int32_t f = 0; f < m->F; f++) {
        double y0 = f * m->p->floor_height, y1 = y0 + m->p->wall_height;
        pm__masks(m, f);
        int r = pm__greedy(m, m->mask[PM__M_CFLOOR], y0);
        if (r == 0) r = pm__greedy(m, m->mask[PM__M_CWALL], y1);
        if (r == 0) r = pm__sides(m, m->mask[PM__M_CWALL], m->mask[PM__M_OPEN], y0, y1);
        if (r < 0) return r;
    }
    return PM_OK;
}

/* A box face: the axis-aligned rectangle lo..hi (one coordinate equal in
 * both) facing n. */
static int pm__face(pm__map *m, const float lo[3], const float hi[3], const float n[3]) {
    float c[4][3];
    if (lo[0] == hi[0]) {
        float q[4][3] = {{lo[0], lo[1], lo[2]}, {lo[0], lo[1], hi[2]}, {lo[0], hi[1], hi[2]}, {lo[0], hi[1], lo[2]}};
        memcpy(c, q, sizeof c);
    } else if (lo[1] == hi[1]) {
        float q[4][3] = {{lo[0], lo[1], lo[2]}, {hi[0], lo[1], lo[2]}, {hi[0], lo[1], hi[2]}, {lo[0], lo[1], hi[2]}};
        memcpy(c, q, sizeof c);
    } else {
        float q[4][3] = {{lo[0], lo[1], lo[2]}, {hi[0], lo[1], lo[2]}, {hi[0], hi[1], lo[2]}, {lo[0], hi[1], lo[2]}};
        memcpy(c, q, sizeof c);
    }
    return pm__quad(m, c, n);
}

/* A square tube with walls a tenth of a cell thick: outer and inner sides
 * and rims at both ends, so no face is seen from behind. */
static int pm__tube(pm__map *m, int32_t x, int32_t z, double y0, double y1) {
    float cs = (float)m->p->cell_size, t = 0.1f * cs, b = (float)y0, h = (float)y1;
    float X0 = x * cs, Z0 = z * cs, X1 = X0 + cs, Z1 = Z0 + cs;
    float xi0 = X0 + t, zi0 = Z0 + t, xi1 = X1 - t, zi1 = Z1 - t;
    const float nx[3] = {-1, 0, 0}, px[3] = {1, 0, 0}, nz[3] = {0, 0, -1}, pz[3] = {0, 0, 1};
    const float up[3] = {0, 1, 0}, down[3] = {0, -1, 0};
    int r = 0;
    /* outer, inner */
    r |= pm__face(m, (float[]){X0, b, Z0}, (float[]){X0, h, Z1}, nx);
    r |= pm__face(m, (float[]){X1, b, Z0}, (float[]){X1, h, Z1}, px);
    r |= pm__face(m, (float[]){X0, b, Z0}, (float[]){X1, h, Z0}, nz);
    r |= pm__face(m, (float[]){X0, b, Z1}, (float[]){X1, h, Z1}, pz);
    r |= pm__face(m, (float[]){xi0, b, zi0}, (float[]){xi0, h, zi1}, px);
    r |= pm__face(m, (float[]){xi1, b, zi0}, (float[]){xi1, h, zi1}, nx);
    r |= pm__face(m, (float[]){xi0, b, zi0}, (float[]){xi1, h, zi0}, pz);
    r |= pm__face(m, (float[]){xi0, b, zi1}, (float[]){xi1, h, zi1}, nz);
    /* rims: the ring between outer and inner at the top and the bottom */
    for (int e = 0; e < 2; e++) {
        float y = e ? h : b;
        const float *n = e ? up : down;
        r |= pm__face(m, (float[]){X0, y, Z0}, (float[]){X1, y, zi0}, n);
        r |= pm__face(m, (float[]){X0, y, zi1}, (float[]){X1, y, Z1}, n);
        r |= pm__face(m, (float[]){X0, y, zi0}, (float[]){xi0, y, zi1}, n);
        r |= pm__face(m, (float[]){xi1, y, zi0}, (float[]){X1, y, zi1}, n);
    }
    return r ? PM_ERR_NOMEM : PM_OK;
}

static int pm__fill_shaft(pm__map *m, const pm_dungeon_layout *l) {
    for (uint32_t i = 0; i < l->nshafts; i++) {
        const pm_dungeon_shaft *sh = &l->shafts[i];
        double ylo = sh->floor_lo * m->p->floor_height, y0 = ylo + m->p->wall_height;
        double y1 = sh->floor_hi * m->p->floor_height;
        int r = pm__hrect(m, sh->x, sh->z, sh->x + 1, sh->z + 1, ylo);
        if (r == 0 && y1 > y0) r = pm__tube(m, sh->x, sh->z, y0, y1);
        if (r < 0) return r;
    }
    return PM_OK;
}

int pm_dungeon_mesh(pm_scene *s, const pm_dungeon_layout *l, const pm_dungeon_params *p) {
    assert(l->nrooms >= 1);
    pm__map m = {.p = p, .s = s};
    int r = pm__map_build(&m, s->arena, l);
    if (r == 0) r = pm__prim(&m, "floor", pm__fill_floor, l);
    if (r == 0) r = pm__prim(&m, "wall", pm__fill_wall, l);
    if (r == 0) r = pm__prim(&m, "corridor", pm__fill_corridor, l);
    if (r == 0) r = pm__prim(&m, "shaft", pm__fill_shaft, l);
    return r;
}
