#ifndef PM_ROAD_INTERNAL_H
#define PM_ROAD_INTERNAL_H
/* Shared by the road's source files (core/road/road*.c): one level of
 * detail as sections along the centre line, their fold clamps, and the
 * vertex grid swept from them. Not a public header. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geom/plan_overlap.h"
#include "geom/trig.h"
#include "geom/vec.h"
#include "road/road.h"

#define PM__DEG (PM__PI / 180.0)

typedef struct pm__section {
    double t, s;            /* curve parameter, centre arc length */
    double c[3];            /* centre */
    double tan[3];          /* unit 3D tangent */
    double r[3];            /* sideways per nominal metre (bank, miter included) */
    double up[3];           /* unit section normal (banked) */
    double right[3];        /* unit banked right */
    double kappa;           /* signed plan curvature */
    double bank;            /* radians, + lowers the right edge */
    double clamp[2];        /* allowed nominal extent: [0] left, [1] right */
    bool fan[2];            /* this side runs to the turn's pivot (road_fold.c) */
    double piv[2][3];       /* that pivot: one point for the whole run */
} pm__section;

typedef struct pm__level {
    size_t n;               /* sections */
    pm__section *sec;
    uint32_t ncol;
    double *col;            /* ncol nominal offsets, ascending, 0 included */
    uint32_t kl, kr;        /* carriageway edge columns */
    double *pos;            /* n * ncol * 3 */
    double *uv;             /* n * ncol * 2 */
    float *nrm;             /* n * ncol * 3 terrain normals on a drape, else NULL */
    double edge_len[4];     /* left shoulder, left, right, right shoulder */
    double length;          /* centre polyline, 3D */
    double achieved;        /* measured chord error */
    uint64_t skipped;       /* degenerate triangles left out */
    bool fold_free;         /* pm__road_clamp_folds found no fold: no fan, every clamp sec[0].clamp[0] */
    bool kmax_known;        /* kmax holds: the sections were made by the unbanked lane pass */
    double kmax;            /* then the largest |kappa| of the sections (a > m ? a : m from +0) */
    bool closed;
    uint64_t triangles;     /* emitted */
    uint8_t *whole;         /* NULL (plain paths), or per section whether nothing
                               of it is cut back or fanned (road_mesh.c) */
    uint32_t *tsec;         /* NULL, or gets the section of each emitted triangle */
    size_t ntsec;
} pm__level;

typedef struct pm__ctx {
    pm_arena *a;
    const pm_road_params *p;
    pm_spline spline;
    pm_road_failure *fail;
    uint64_t budget;        /* vertices still allowed; UINT64_MAX = no cap */
    const pm_heightfield *ground;   /* terrain under props (flattened or not) */
    pm_scene *scene;
    pm_meta *warnings;
    bool plain;             /* road_mesh.c without its fast paths: the reference
                               tests compare them with (pm__road_generate_plain) */
    bool no_meta;           /* the base level only, without its metadata
                               (pm_road_generate_base): no kmax to keep, no
                               measured chord error (pm__level.achieved 0) */
} pm__ctx;

/* Column ranges of one primitive (the shoulder has one per side). */
typedef struct pm__range { uint32_t k0, k1; } pm__range;

/* road_frame.c: samples -> sections with frames and banking (L->sec, L->n). */
int pm__road_sections(pm__ctx *x, pm__level *L, const pm_curve_sample *smp, size_t n);

/* road_fold.c: merges the inner side of a turn tighter than the half width
 * into one pivot (a fan), cuts back the inner side where other consecutive
 * sections cross inside the road; welds consecutive collapse points into
 * one 3D point. */
void pm__road_clamp_folds(pm__ctx *x, pm__level *L);
void pm__road_weld_collapses(pm__level *L);
/* Whether no band of either side folds at full width (fresh sections: no
 * fan, every clamp W): then pm__road_clamp_folds has nothing to do. */
bool pm__road_fold_free(const pm__level *L);
/* The same, fast = false: without the four-lane pass (for tests). */
bool pm__road_fold_free_x(const pm__level *L, bool fast);
/* For tests: road_fold.c's quick "both bands surely convex" from the band
 * ends p and q (ux, uz, vx, vz, two lanes each: 8 numbers apiece), by the
 * six shared differences pm__road_fold_free uses (fast) or by four plain
 * orientations. */
bool pm__road_bands_sure(const double p[8], const double q[8], bool fast);
/* The plain test pm__road_fold_free answers for every band at once: the
 * band of one side between sections a and b is convex (or a segment). */
bool pm__road_band_ok(const pm__section *a, const pm__section *b, int side);
/* Whether column k of section sc is cut back onto the fold's collapse point
 * (inline: emission asks it of every vertex). */
static inline bool pm__road_collapsed(const pm__level *L, const pm__section *sc, uint32_t k) {
    double d = L->col[k];
    return d < 0.0 ? -d >= sc->clamp[0] : (d > 0.0 && d >= sc->clamp[1]);
}

/* road_mesh.c: the vertex grid (positions, per-side U, V) and primitives. */
void pm__road_vertex_at(const pm_road_params *p, const pm__section *sc, double d, double o[3]);
int pm__road_grid(pm__ctx *x, pm__level *L);
int pm__road_emit(pm__ctx *x, pm__level *L, const char *name, const char *material,
                  const pm__range *rg, int nrg);
/* pm__road_grid, then pm__road_emit of columns kl .. kr, in one pass where
 * the level is open, off terrain, 3 columns wide and fold free
 * (pm__road_grid_emit_fits; the primitive's bytes the same, triangles'
 * sections kept where L->tsec is set; L->uv left unset, L->pos too unless
 * keep_pos, so only for a level nothing else reads after: the base level,
 * whose props read only its sections); 1 where it does not apply
 * (nothing done). */
bool pm__road_grid_emit_fits(const pm__ctx *x, const pm__level *L);
int pm__road_grid_emit(pm__ctx *x, pm__level *L, const char *name, const char *material, bool keep_pos);

/* road_overlap.c: PM_ERR_GEOMETRY (x->fail->overlaps filled) when the
 * triangles of the level's primitives (scene->prims[first ..], asphalt
 * then shoulder, their sections in L->tsec) overlap in plan; level as in
 * pm_road_overlaps. */
int pm__road_overlaps(pm__ctx *x, pm__level *L, uint32_t level, uint32_t first);

/* road_overlap.c: pm_loop_simple of the outline loop of an open level
 * (left edge, last section, right edge back, first section; float plan
 * points): 1 simple, 0 not, PM_ERR_NOMEM. */
int pm__road_outline_loop(pm_arena *a, const pm__level *L);

/* road_outline.c: 1 when the outline loop of a clean open level (no fold,
 * no sliver; W its half width with the shoulder) is proven simple by a
 * cheap pass over chunks of sections, 0 when not proven (then ask
 * pm_loop_simple), PM_ERR_NOMEM. */
int pm__road_outline_windows(pm_arena *a, const pm__level *L, double W);
/* The same with windows of up to `win` (2 or 3) chunks; the pass above
 * uses 3 (for tests: 2 is the plain pairs-only proof). */
int pm__road_outline_windows_k(pm_arena *a, const pm__level *L, double W, uint32_t win);
/* The same, fast = false: without the four-lane windows (for tests). */
int pm__road_outline_windows_x(pm_arena *a, const pm__level *L, double W, uint32_t win, bool fast);
/* For tests: the order (chunk indices) road_outline.c's sort gives n <= 64
 * boxes whose lower x ends are lo (ties by chunk). */
void pm__road_outline_sort(const float *lo, uint32_t n, uint32_t *order);

/* road_props.c: instanced props along the base level; out gets per-line counts. */
int pm__road_props(pm__ctx *x, const pm__level *L, pm_meta *out);

/* road.c: pm_road_generate through road_mesh.c's plain paths only (the
 * same bytes; for tests of the fast paths). */
int pm__road_generate_plain(pm_arena *a, const pm_road_params *p, pm_scene **out,
                            pm_road_failure *fail);

/* road.c: records a limit failure (field, needed) and returns PM_ERR_LIMIT. */
int pm__road_limit(pm__ctx *x, const char *field, uint64_t needed);
#endif
