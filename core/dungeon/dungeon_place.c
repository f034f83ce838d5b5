#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"

/* Seeded room placement. Random tries first (cheap, varied layouts); when a
 * room finds no spot that way, a first-fit scan over a summed-area table
 * settles it deterministically, so a packing fails only when it truly has
 * no room left. Every loop has a fixed bound. */

#define PM__TRIES_DRAWN 48   /* tries at the drawn size */
#define PM__TRIES_MIN 48     /* tries at min_size */

void pm_dungeon_packing(const pm_dungeon_placement *g, uint64_t *need, uint64_t *have) {
    uint64_t m = (uint64_t)g->min_size + (uint64_t)g->spacing;
    uint64_t cols = ((uint64_t)g->extent_w + (uint64_t)g->spacing) / m;
    uint64_t rows = ((uint64_t)g->extent_d + (uint64_t)g->spacing) / m;
    *need = g->count;
    *have = cols * rows * (uint64_t)g->floors;
}

bool pm_dungeon_rooms_overlap(const pm_dungeon_room *r, const pm_dungeon_room *s) {
    return r->floor == s->floor && r->x < s->x + s->w && s->x < r->x + r->w &&
           r->z < s->z + s->d && s->z < r->z + r->d;
}

typedef struct pm__place {
    const pm_dungeon_placement *g;
    uint8_t *occ;         /* floors * W * D: 1 where a footprint lies */
    uint32_t *sat;        /* (W+1) * (D+1) summed-area table, one floor */
} pm__place;

static uint8_t *pm__occ_floor(pm__place *pl, int32_t f) {
    return pl->occ + (size_t)f * (size_t)pl->g->extent_w * (size_t)pl->g->extent_d;
}

/* Whether the footprint (x, z, w, d) widened by the spacing is free. */
static bool pm__spot_free(pm__place *pl, int32_t f, int32_t x, int32_t z, int32_t w, int32_t d) {
    const pm_dungeon_placement *g = pl->g;
    int32_t s = g->spacing;
    int32_t x0 = x - s < 0 ? 0 : x - s, z0 = z - s < 0 ? 0 : z - s;
    int32_t x1 = x + w + s > g->extent_w ? g->extent_w : x + w + s;
    int32_t z1 = z + d + s > g->extent_d ? g->extent_d : z + d + s;
    const uint8_t *o = pm__occ_floor(pl, f);
    for (int32_t zz = z0; zz < z1; zz++) {
        const uint8_t *row = o + (size_t)zz * (size_t)g->extent_w;
        for (int32_t xx = x0; xx < x1; xx++)
            if (row[xx]) return false;
    }
    return true;
}

static void pm__mark(pm__place *pl, const pm_dungeon_room *r) {
    uint8_t *o = pm__occ_floor(pl, r->floor);
    for (int32_t z = r->z; z < r->z + r->d; z++)
        memset(o + (size_t)z * (size_t)pl->g->extent_w + (size_t)r->x, 1, (size_t)r->w);
}

static bool pm__try_random(pm__place *pl, pm_rng *rng, int32_t w, int32_t d, int tries,
                           pm_dungeon_room *out) {
    const pm_dungeon_placement *g = pl->g;
    for (int t = 0; t < tries; t++) {
        int32_t f = (int32_t)pm_rng_below(rng, (uint64_t)g->floors);
        int32_t x = (int32_t)pm_rng_int(rng, 0, g->extent_w - w);
        int32_t z = (int32_t)pm_rng_int(rng, 0, g->extent_d - d);
        if (pm__spot_free(pl, f, x, z, w, d)) {
            *out = (pm_dungeon_room){x, z, w, d, f};
            return true;
        }
    }
    return false;
}

/* First fit of a min_size room, scanning every floor from a seeded start
 * cell; O(floors * W * D). */
static bool pm__scan(pm__place *pl, pm_rng *rng, pm_dungeon_room *out) {
    const pm_dungeon_placement *g = pl->g;
    int32_t W = g->extent_w, D = g->extent_d, m = g->min_size, s = g->spacing;
    size_t sw = (size_t)W + 1;
    int32_t f0 = (int32_t)pm_rng_below(rng, (uint64_t)g->floors);
    uint64_t start = pm_rng_below(rng, (uint64_t)W * (uint64_t)D);
    for (int32_t k = 0; k < g->floors; k++) {
        int32_t f = (f0 + k) % g->floors;
        const uint8_t *o = pm__occ_floor(pl, f);
        memset(pl->sat, 0, sw * sizeof(uint32_t));
        for (int32_t z = 0; z < D; z++) {
            uint32_t run = 0;
            pl->sat[(size_t)(z + 1) * sw] = 0;
            for (int32_t x = 0; x < W; x++) {
                run += o[(size_t)z * (size_t)W + (size_t)x];
                pl->sat[(size_t)(z + 1) * sw + (size_t)x + 1] = pl->sat[(size_t)z * sw + (size_t)x + 1] + run;
            }
        }
        uint64_t cells = (uint64_t)W * (uint64_t)D;
        for (uint64_t i = 0; i < cells; i++) {
            uint64_t c = (start + i) % cells;
            int32_t x = (int32_t)(c % (uint64_t)W), z = (int32_t)(c / (uint64_t)W);
            if (x + m > W || z + m > D) continue;
            int32_t x0 = x - s < 0 ? 0 : x - s, z0 = z - s < 0 ? 0 : z - s;
            int32_t x1 = x + m + s > W ? W : x + m + s, z1 = z + m + s > D ? D : z + m + s;
            uint32_t sum = pl->sat[(size_t)z1 * sw + (size_t)x1] - pl->sat[(size_t)z0 * sw + (size_t)x1] -
                           pl->sat[(size_t)z1 * sw + (size_t)x0] + pl->sat[(size_t)z0 * sw + (size_t)x0];
            if (sum == 0) {
                *out = (pm_dungeon_room){x, z, m, m, f};
                return true;
            }
        }
    }
    return false;
}

int pm_dungeon_place(pm_arena *a, const pm_dungeon_params *p, pm_dungeon_room **out,
                     pm_dungeon_failure *fail) {
    const pm_dungeon_placement *g = &p->gen;
    assert(g->count >= 1 && g->floors >= 1 && g->min_size >= 3 && g->min_size <= g->max_size);
    assert(g->min_size <= g->extent_w && g->min_size <= g->extent_d && g->spacing >= 0);
    uint64_t need, have;
    pm_dungeon_packing(g, &need, &have);
    if (need > have) {
        *fail = (pm_dungeon_failure){PM_DUNGEON_FAIL_PACKING, 0, 0, need, have};
        return PM_ERR_GEOMETRY;
    }
    pm__place pl = {g, NULL, NULL};
    size_t cells = (size_t)g->extent_w * (size_t)g->extent_d;
    pl.occ = pm_arena_calloc(a, cells * (size_t)g->floors, 1);
    pm_dungeon_room *rooms = pm_arena_calloc(a, g->count, sizeof *rooms);
    if (!pl.occ || !rooms) return PM_ERR_NOMEM;
    pm_rng root, rng;
    pm_rng_seed(&root, p->seed);
    pm_rng_fork(&rng, &root, 1);
    int32_t maxw = g->max_size < g->extent_w ? g->max_size : g->extent_w;
    int32_t maxd = g->max_size < g->extent_d ? g->max_size : g->extent_d;
    for (uint32_t i = 0; i < g->count; i++) {
        int32_t w = (int32_t)pm_rng_int(&rng, g->min_size, maxw);
        int32_t d = (int32_t)pm_rng_int(&rng, g->min_size, maxd);
        bool ok = pm__try_random(&pl, &rng, w, d, PM__TRIES_DRAWN, &rooms[i]) ||
                  pm__try_random(&pl, &rng, g->min_size, g->min_size, PM__TRIES_MIN, &rooms[i]);
        if (!ok) {
            if (!pl.sat) {
                pl.sat = pm_arena_alloc(a, ((size_t)g->extent_w + 1) * ((size_t)g->extent_d + 1) * sizeof(uint32_t));
                if (!pl.sat) return PM_ERR_NOMEM;
            }
            ok = pm__scan(&pl, &rng, &rooms[i]);
        }
        if (!ok) {
            *fail = (pm_dungeon_failure){PM_DUNGEON_FAIL_PLACEMENT, i, 0, need, have};
            return PM_ERR_GEOMETRY;
        }
        pm__mark(&pl, &rooms[i]);
    }
    *out = rooms;
    return PM_OK;
}

typedef struct pm__ov { int32_t x0, x1; uint32_t i; } pm__ov;

static int pm__ov_cmp(const void *pa, const void *pb) {
    const pm__ov *a = pa, *b = pb;
    if (a->x0 != b->x0) return a->x0 < b->x0 ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

bool pm_dungeon_find_overlap(pm_arena *scratch, const pm_dungeon_room *r, uint32_t n,
                             uint32_t *oi, uint32_t *oj) {
    /* Sweep along x: only rooms whose x ranges meet are compared. The pair
     * reported is the one with the smallest larger index, then smallest
     * smaller index, independent of the sweep order. */
    pm__ov *v = pm_arena_alloc(scratch, (size_t)n * sizeof *v + 1);
    bool found = false;
    uint32_t bi = 0, bj = 0;
    if (!v) {   /* no scratch: quadratic, still correct */
        for (uint32_t j = 1; j < n; j++)
            for (uint32_t i = 0; i < j; i++)
                if (pm_dungeon_rooms_overlap(&r[i], &r[j])) { *oi = i; *oj = j; return true; }
        return false;
    }
    for (uint32_t i = 0; i < n; i++) v[i] = (pm__ov){r[i].x, r[i].x + r[i].w, i};
    qsort(v, n, sizeof *v, pm__ov_cmp);
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t l = k + 1; l < n && v[l].x0 < v[k].x1; l++) {
            uint32_t i = v[k].i < v[l].i ? v[k].i : v[l].i, j = v[k].i ^ v[l].i ^ i;
            if (!pm_dungeon_rooms_overlap(&r[i], &r[j])) continue;
            if (!found || j < bj || (j == bj && i < bi)) { bi = i; bj = j; found = true; }
        }
    if (found) { *oi = bi; *oj = bj; }
    return found;
}
