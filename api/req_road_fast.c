/* POST /v1/roads straight from the body's bytes (pm_api_generator.
 * parse_text): points, short terrain heights and every other member read into
 * the job's parameters with no jansson node per value, and the canonical
 * form written as the text its dump would be (api/canon.c), from the
 * values read.
 *
 * It takes the common case only: a body that req_road.c would read without
 * a single error, spelled plainly (known members only, each once; strings
 * of printable ASCII with no escapes). At anything else it gives up
 * (returns 1) and the document path reads the body, so every error,
 * pointer and message is that path's own. A body it takes gets the same
 * parameters, and the checks after reading (pm_api__road_check) are the
 * same code. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/bulk.h"
#include "pm_api/rows.h"
#include "scene/copy.h"
#include "req_road.h"
#include "req_text.h"

#define PM__RF_EXACT_INT 9007199254740992.0 /* 2^53: pm_api_int's integral reals */

/* What a nested object was: absent, null, or an object. */
enum { PM__RF_ABSENT, PM__RF_NULL, PM__RF_OBJECT };

typedef struct pm__rf_prop {
    const char *name;
    size_t name_len;
    double spacing, offset;
    int side, align;
} pm__rf_prop;

/* The body as read, before it becomes the parameters. */
typedef struct pm__rf {
    pm__tx f;
    pm_arena *arena;
    const pm_api_limits *lim;
    pm__road_req *q;
    double *pts;
    size_t npts, pts_cap;        /* rows of 3 */
    int curve, conform, up;
    int64_t cs;
    int banking;                 /* PM__RF_* */
    double *roll;                /* NULL: no roll member */
    size_t nroll, roll_cap;
    int flatten;
    pm__rf_prop props[PM_ROAD_MAX_PROPS];
    size_t nprops;
    size_t nlods;
    int terrain;
    int64_t cols, rows;
    bool has_cell, has_cols, has_rows;
    double *heights;             /* NULL: no heights member */
    size_t nheights, h_cap;
    int noise;
    pm_noise nz;                 /* read into q->nz when the terrain is noise */
    int64_t octaves;
    bool ssse3;                  /* the points' digits in SSSE3 lanes (pm_api__short_scan_ssse3) */
} pm__rf;

/* ---- values ---- */

/* pm_api_num's range [lo, hi] (closed). */
PM__TX_INLINE bool pm__rf_num(pm__rf *r, double lo, double hi, double *out) {
    return pm__tx_num(&r->f, lo, false, hi, out);
}

/* pm_api_int: an integer token, or a real with an integral value up to
 * 2^53, in [lo, hi]. */
static bool pm__rf_int(pm__rf *r, int64_t lo, int64_t hi, int64_t *out) {
    bool is_int;
    double x;
    pm__tx_ws(&r->f);
    if (!pm_api__json_number_short(&r->f.p, r->f.end, &is_int, out, &x)) return false;
    if (!is_int) {
        if (!(fabs(x) <= PM__RF_EXACT_INT) || x != floor(x)) return false;
        *out = (int64_t)x;
    }
    return *out >= lo && *out <= hi;
}

/* pm_api_u64: an integer >= 0 (or integral real up to 2^53), or a plain
 * string of 1..20 digits within uint64. */
static bool pm__rf_u64(pm__rf *r, uint64_t *out) {
    pm__tx_ws(&r->f);
    if (r->f.p < r->f.end && *r->f.p == '"') {
        const char *s;
        size_t n;
        if (!pm__tx_plain(&r->f, &s, &n) || n == 0 || n > 20) return false;
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (d > 9 || v > (UINT64_MAX - d) / 10) return false;
            v = v * 10 + d;
        }
        *out = v;
        return true;
    }
    int64_t i;
    if (!pm__rf_int(r, 0, INT64_MAX, &i)) return false;
    *out = (uint64_t)i;
    return true;
}

static bool pm__rf_bool(pm__rf *r, bool *out) {
    pm__tx_ws(&r->f);
    size_t room = (size_t)(r->f.end - r->f.p);
    if (room >= 4 && memcmp(r->f.p, "true", 4) == 0) {
        r->f.p += 4;
        *out = true;
        return true;
    }
    if (room >= 5 && memcmp(r->f.p, "false", 5) == 0) {
        r->f.p += 5;
        *out = false;
        return true;
    }
    return false;
}

/* A plain string that is one of names (NULL-terminated): *out its index. */
static bool pm__rf_enum(pm__rf *r, const char *const *names, int *out) {
    const char *s;
    size_t n;
    if (!pm__tx_plain(&r->f, &s, &n)) return false;
    for (int i = 0; names[i]; i++) {
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) {
            *out = i;
            return true;
        }
    }
    return false;
}

/* '{' then whether the object is empty (its '}' taken): 1, 0, or -1 when
 * no object starts here. null gives PM__RF_NULL in *state when nullable. */
static int pm__rf_open(pm__rf *r, bool nullable, int *state) {
    if (nullable && pm__tx_null(&r->f)) {
        *state = PM__RF_NULL;
        return 1;
    }
    if (!pm__tx_take(&r->f, '{')) return -1;
    *state = PM__RF_OBJECT;
    return pm__tx_empty(&r->f, '}');
}

/* Grows an arena array of elem-byte items to hold need (doubling). */
static bool pm__rf_grow(pm__rf *r, double **data, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need) c *= 2;
    void *d = pm_arena_realloc(r->arena, *data, *cap * elem, c * elem);
    if (!d) return false;
    *data = d;
    *cap = c;
    return true;
}

/* A numeric array into an arena array of doubles, each in [lo, hi]. */
static bool pm__rf_nums(pm__rf *r, double lo, double hi, double **out, size_t *n, size_t *cap) {
    if (!pm__tx_take(&r->f, '[')) return false;
    *n = 0;
    if (!pm__rf_grow(r, out, cap, 1, sizeof(double))) return false;   /* never NULL */
    if (pm__tx_empty(&r->f, ']')) return true;
    for (;;) {
        if (*n == *cap && !pm__rf_grow(r, out, cap, *n + 1, sizeof(double))) return false;
        if (!pm__rf_num(r, lo, hi, &(*out)[*n])) return false;
        ++*n;
        int next = pm__tx_next(&r->f, ']');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

/* ---- members ---- */

/* A point of three short tokens (pm__tx_point_value) read in one step
 * from p (room bytes readable): its end, or NULL, the values then to be
 * read one by one. */
typedef const char *(*pm__rf_point_reader)(const char *p, double bound, double *v);

#ifdef PM_API_JSON_SWAR
static inline const char *pm__rf_point_swar(const char *p, double bound, double *v) {
    size_t dim;
    const char *e = pm__tx_point_value(p, bound, v, &dim, pm_api__short_scan_swar);
    return e && dim == 3 ? e : NULL;
}
#define PM__RF_POINT_SWAR_ROOM PM__TX_POINT_ROOM
#else   /* no one-step reader: every point token by token */
static inline const char *pm__rf_point_swar(const char *p, double bound, double *v) {
    (void)p, (void)bound, (void)v;
    return NULL;
}
#define PM__RF_POINT_SWAR_ROOM 0
#endif

/* A point token by token, each as pm__tx_num reads it (any spelling):
 * its end, or NULL. Out of line, on a cursor of its own: the number
 * reader takes its cursor's address, which would keep the points loop's
 * cursor in memory (a store and a load on the way from each point to the
 * next). */
static const char *pm__rf_point_tokens(const char *p, const char *end, double *v) {
    const double m = PM_ROAD_COORD_MAX;
    pm__tx t = {p, end};
    if (!pm__tx_take(&t, '[') || !pm__tx_num(&t, -m, false, m, &v[0]) || !pm__tx_take(&t, ',') ||
        !pm__tx_num(&t, -m, false, m, &v[1]) || !pm__tx_take(&t, ',') ||
        !pm__tx_num(&t, -m, false, m, &v[2]) || !pm__tx_take(&t, ']'))
        return NULL;
    return t.p;
}

/* points: [[x, y, z], ...], each coordinate within the bound, -0 as 0.
 * Only their values are kept: their canonical form is binary (the row
 * block's doubles, copied in by pm_api__road_parse_text_path), not text.
 * A point of short tokens is read in one step (point, a constant where
 * this is inlined), any other token by token. The cursor is a local, kept
 * in a register. */
PM__TX_INLINE bool pm__rf_points_with(pm__rf *r, pm__rf_point_reader point, ptrdiff_t room) {
    pm__tx f = r->f;
    if (!pm__tx_take(&f, '[')) return false;
    if (pm__tx_empty(&f, ']')) {
        r->f = f;
        return true;
    }
    const double m = PM_ROAD_COORD_MAX;
    for (size_t n = r->npts;;) {
        if (n == r->pts_cap && !pm__rf_grow(r, &r->pts, &r->pts_cap, n + 1, 3 * sizeof(double)))
            return false;
        double *v = r->pts + 3 * n++;
        pm__tx_ws(&f);
        const char *e = NULL;
        if (f.end - f.p >= room) {
            e = point(f.p, m, v);
            /* The next point after ", " (within the room): straight to it. */
            if (e && e[0] == ',' && e[1] == ' ' && e[2] == '[') {
                f.p = e + 2;
                continue;
            }
        }
        if (!e && !(e = pm__rf_point_tokens(f.p, f.end, v))) return false;
        f.p = e;
        int next = pm__tx_next(&f, ']');
        if (next < 0) return false;
        if (next == 0) {
            r->npts = n;
            r->f = f;
            return true;
        }
    }
}

static bool pm__rf_points_plain(pm__rf *r) {
    return pm__rf_points_with(r, pm__rf_point_swar, PM__RF_POINT_SWAR_ROOM);
}

#if PM_API_SHORT_SCAN_SSSE3
__attribute__((target("ssse3"))) static bool pm__rf_points_ssse3(pm__rf *r) {
    return pm__rf_points_with(r, pm__tx_point3_ssse3, PM__TX_POINT3_ROOM);
}
#endif

/* The points by the scan r->ssse3 picks. */
static bool pm__rf_points(pm__rf *r) {
#if PM_API_SHORT_SCAN_SSSE3
    if (r->ssse3) return pm__rf_points_ssse3(r);
#endif
    return pm__rf_points_plain(r);
}

/* banking: null, or {max_degrees, radius, transition, roll}. */
static bool pm__rf_banking(pm__rf *r) {
    static const pm__tx_name names[] = {PM__TX_NAME("max_degrees"), PM__TX_NAME("radius"),
                                        PM__TX_NAME("transition"), PM__TX_NAME("roll")};
    const double bank = PM_ROAD_MAX_BANK_DEGREES;
    pm_road_params *p = &r->q->p;
    int e = pm__rf_open(r, true, &r->banking);
    if (e != 0) return e > 0;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(&r->f, names, 4, &seen, &k)) return false;
        bool ok = k == 0   ? pm__rf_num(r, 0, bank, &p->bank_max_degrees)
                  : k == 1 ? pm__rf_num(r, 0.1, 1e5, &p->bank_radius)
                  : k == 2 ? pm__rf_num(r, 0, 1e5, &p->bank_transition)
                           : pm__rf_nums(r, -bank, bank, &r->roll, &r->nroll, &r->roll_cap);
        if (!ok) return false;
        int next = pm__tx_next(&r->f, '}');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

static bool pm__rf_flatten(pm__rf *r) {
    static const pm__tx_name names[] = {PM__TX_NAME("margin"), PM__TX_NAME("falloff"),
                                        PM__TX_NAME("depth")};
    pm_flatten_opts *o = &r->q->p.flatten_opts;
    int e = pm__rf_open(r, true, &r->flatten);
    if (e != 0) return e > 0;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(&r->f, names, 3, &seen, &k)) return false;
        bool ok = k == 0   ? pm__rf_num(r, 0, 1e3, &o->margin)
                  : k == 1 ? pm__rf_num(r, 0, 1e4, &o->falloff)
                           : pm__rf_num(r, 0, 10, &o->depth);
        if (!ok) return false;
        int next = pm__tx_next(&r->f, '}');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

static const char *const pm__rf_sides[] = {"left", "right", "both", NULL};
static const char *const pm__rf_aligns[] = {"tangent", "terrain", NULL};

/* One prop: name and spacing required, the name not empty. */
static bool pm__rf_prop_read(pm__rf *r, pm__rf_prop *o) {
    static const pm__tx_name names[] = {PM__TX_NAME("name"), PM__TX_NAME("spacing"),
                                        PM__TX_NAME("offset"), PM__TX_NAME("side"),
                                        PM__TX_NAME("align")};
    *o = (pm__rf_prop){.side = 2};
    if (!pm__tx_take(&r->f, '{')) return false;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(&r->f, names, 5, &seen, &k)) return false;
        bool ok = k == 0   ? pm__tx_plain(&r->f, &o->name, &o->name_len)
                  : k == 1 ? pm__rf_num(r, 0.1, 1e6, &o->spacing)
                  : k == 2 ? pm__rf_num(r, 0, 1e3, &o->offset)
                  : k == 3 ? pm__rf_enum(r, pm__rf_sides, &o->side)
                           : pm__rf_enum(r, pm__rf_aligns, &o->align);
        if (!ok) return false;
        int next = pm__tx_next(&r->f, '}');
        if (next < 0) return false;
        if (next == 0) break;
    }
    return (seen & 3u) == 3u && o->name_len > 0 && o->name_len <= PM_ROAD_NAME_MAX;
}

static bool pm__rf_props(pm__rf *r) {
    if (!pm__tx_take(&r->f, '[')) return false;
    if (pm__tx_empty(&r->f, ']')) return true;
    for (;;) {
        if (r->nprops == PM_ROAD_MAX_PROPS || !pm__rf_prop_read(r, &r->props[r->nprops]))
            return false;
        r->nprops++;
        int next = pm__tx_next(&r->f, ']');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

/* lods: increasing is checked once max_error is known. */
static bool pm__rf_lods(pm__rf *r) {
    if (!pm__tx_take(&r->f, '[')) return false;
    if (pm__tx_empty(&r->f, ']')) return true;
    for (;;) {
        if (r->nlods == PM_ROAD_MAX_LODS || !pm__rf_num(r, 1e-3, 1e3, &r->q->lods[r->nlods]))
            return false;
        r->nlods++;
        int next = pm__tx_next(&r->f, ']');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

static bool pm__rf_noise(pm__rf *r) {
    static const pm__tx_name names[] = {PM__TX_NAME("seed"), PM__TX_NAME("amplitude"),
                                        PM__TX_NAME("wavelength"), PM__TX_NAME("octaves")};
    pm_noise *nz = &r->nz;
    int e = pm__rf_open(r, false, &r->noise);
    if (e != 0) return e > 0;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(&r->f, names, 4, &seen, &k)) return false;
        bool ok = k == 0   ? pm__rf_u64(r, &nz->seed)
                  : k == 1 ? pm__rf_num(r, 0, 1e4, &nz->amplitude)
                  : k == 2 ? pm__rf_num(r, 0.01, 1e6, &nz->wavelength)
                           : pm__rf_int(r, 1, 8, &r->octaves);
        if (!ok) return false;
        int next = pm__tx_next(&r->f, '}');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

/* Heights: read whatever their count (checked against cols x rows at the
 * end) below PM_API_BULK_CANON_MIN values. A longer array is declined:
 * the document path reads it in bulk (pm_api_vec) in fewer instructions
 * than this reader's per-token work (a 512 x 512 heightfield: 87.5 M
 * against 110.7 M for the whole request), and writes its binary
 * canonical form. */
static bool pm__rf_heights(pm__rf *r) {
    const double m = PM_ROAD_COORD_MAX;
    pm__tx *f = &r->f;
    r->nheights = 0;
    if (!pm__tx_take(f, '[')) return false;
    if (!pm__rf_grow(r, &r->heights, &r->h_cap, 1, sizeof(double))) return false;
    if (pm__tx_empty(f, ']')) return true;
    for (;;) {
        size_t i = r->nheights;
        if (i + 1 >= PM_API_BULK_CANON_MIN) return false;
        if (i == r->h_cap && !pm__rf_grow(r, &r->heights, &r->h_cap, i + 1, sizeof(double)))
            return false;
        double x;
        if (!pm__rf_num(r, -m, m, &x)) return false;
        r->heights[i] = x;
        r->nheights = i + 1;
        int next = pm__tx_next(f, ']');
        if (next < 0) return false;
        if (next == 0) break;
    }
    return true;
}

static bool pm__rf_terrain(pm__rf *r) {
    static const pm__tx_name names[] = {PM__TX_NAME("origin"), PM__TX_NAME("cell"),
                                        PM__TX_NAME("cols"), PM__TX_NAME("rows"),
                                        PM__TX_NAME("mesh"), PM__TX_NAME("heights"),
                                        PM__TX_NAME("noise")};
    const double m = PM_ROAD_COORD_MAX;
    pm__road_req *q = r->q;
    int e = pm__rf_open(r, true, &r->terrain);
    if (e != 0) return e > 0;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(&r->f, names, 7, &seen, &k)) return false;
        bool ok = false;
        switch (k) {
        case 0:
            ok = pm__tx_take(&r->f, '[') && pm__rf_num(r, -m, m, &q->hf.origin[0]) &&
                 pm__tx_take(&r->f, ',') && pm__rf_num(r, -m, m, &q->hf.origin[1]) &&
                 pm__tx_take(&r->f, ']');
            break;
        case 1: ok = pm__rf_num(r, 0.01, 1e4, &q->hf.cell); break;
        case 2: ok = pm__rf_int(r, 2, 1 << 20, &r->cols); break;
        case 3: ok = pm__rf_int(r, 2, 1 << 20, &r->rows); break;
        case 4: ok = pm__rf_bool(r, &q->p.terrain_mesh); break;
        case 5: ok = pm__rf_heights(r); break;
        default: ok = pm__rf_noise(r); break;
        }
        if (!ok) return false;
        int next = pm__tx_next(&r->f, '}');
        if (next < 0) return false;
        if (next == 0) break;
    }
    r->has_cell = (seen >> 1) & 1u;
    r->has_cols = (seen >> 2) & 1u;
    r->has_rows = (seen >> 3) & 1u;
    return true;
}

static const char *const pm__rf_curves[] = {"catmull-rom", "linear", NULL};
static const char *const pm__rf_conforms[] = {"drape", "bank", NULL};
static const char *const pm__rf_ups[] = {"world", "terrain", NULL};

enum { PM__RF_POINTS, PM__RF_CLOSED, PM__RF_CURVE, PM__RF_ALPHA, PM__RF_ERROR, PM__RF_SEGMENT,
       PM__RF_WIDTH, PM__RF_SHOULDER, PM__RF_CROSS, PM__RF_BANKING, PM__RF_TERRAIN,
       PM__RF_CONFORM, PM__RF_UP, PM__RF_FLATTEN, PM__RF_PROPS, PM__RF_LODS, PM__RF_UV };

static bool pm__rf_root(pm__rf *r) {
    static const pm__tx_name names[] = {
        PM__TX_NAME("points"), PM__TX_NAME("closed"), PM__TX_NAME("curve"),
        PM__TX_NAME("alpha"), PM__TX_NAME("max_error"), PM__TX_NAME("max_segment"),
        PM__TX_NAME("width"), PM__TX_NAME("shoulder"), PM__TX_NAME("cross_segments"),
        PM__TX_NAME("banking"), PM__TX_NAME("terrain"), PM__TX_NAME("conform"),
        PM__TX_NAME("up"), PM__TX_NAME("flatten"), PM__TX_NAME("props"), PM__TX_NAME("lods"),
        PM__TX_NAME("uv_scale")};
    pm_road_params *p = &r->q->p;
    pm__tx *f = &r->f;
    unsigned seen = 0;
    if (!pm__tx_take(f, '{')) return false;
    if (!pm__tx_empty(f, '}')) {
        for (;;) {
            unsigned k;
            if (!pm__tx_key(f, names, 17, &seen, &k)) return false;
            bool ok = false;
            switch (k) {
            case PM__RF_POINTS: ok = pm__rf_points(r); break;
            case PM__RF_CLOSED: ok = pm__rf_bool(r, &p->closed); break;
            case PM__RF_CURVE: ok = pm__rf_enum(r, pm__rf_curves, &r->curve); break;
            case PM__RF_ALPHA: ok = pm__rf_num(r, 0, 1, &p->alpha); break;
            case PM__RF_ERROR: ok = pm__rf_num(r, 1e-3, 100, &p->max_error); break;
            case PM__RF_SEGMENT: ok = pm__rf_num(r, 0.05, 1000, &p->max_segment); break;
            case PM__RF_WIDTH: ok = pm__rf_num(r, 0.1, 200, &p->width); break;
            case PM__RF_SHOULDER: ok = pm__rf_num(r, 0, 100, &p->shoulder); break;
            case PM__RF_CROSS: ok = pm__rf_int(r, 1, 64, &r->cs); break;
            case PM__RF_BANKING: ok = pm__rf_banking(r); break;
            case PM__RF_TERRAIN: ok = pm__rf_terrain(r); break;
            case PM__RF_CONFORM: ok = pm__rf_enum(r, pm__rf_conforms, &r->conform); break;
            case PM__RF_UP: ok = pm__rf_enum(r, pm__rf_ups, &r->up); break;
            case PM__RF_FLATTEN: ok = pm__rf_flatten(r); break;
            case PM__RF_PROPS: ok = pm__rf_props(r); break;
            case PM__RF_LODS: ok = pm__rf_lods(r); break;
            default: ok = pm__rf_num(r, 1e-6, 1e6, &p->uv_scale); break;
            }
            if (!ok) return false;
            int next = pm__tx_next(f, '}');
            if (next < 0) return false;
            if (next == 0) break;
        }
    }
    pm__tx_ws(f);
    return f->p == f->end && (seen & (1u << PM__RF_POINTS));
}

/* ---- the parameters ---- */

/* What the document path checks while reading, and the parameters it
 * then holds: false at anything it would refuse (left to it). */
static bool pm__rf_fill(pm__rf *r) {
    pm__road_req *q = r->q;
    pm_road_params *p = &q->p;
    const pm_api_limits *lim = r->lim;
    if (r->npts < 2 || r->npts > lim->max_points) return false;
    p->points = r->pts;
    p->npoints = r->npts;
    if (r->banking == PM__RF_OBJECT && r->roll) {
        if (r->nroll != r->npts) return false;
        p->roll = r->roll;
    }
    if (r->terrain == PM__RF_OBJECT) {
        if (!r->has_cell || !r->has_cols || !r->has_rows) return false;
        uint64_t nodes = (uint64_t)r->cols * (uint64_t)r->rows;
        if (nodes > lim->max_vertices) return false;
        q->hf.cols = (uint32_t)r->cols;
        q->hf.rows = (uint32_t)r->rows;
        if (r->heights) {
            if (r->noise != PM__RF_ABSENT || r->nheights != nodes) return false;
            q->hf.h = r->heights;
        } else {
            if (r->noise != PM__RF_OBJECT) return false;   /* noise is required then */
            q->nz = r->nz;
            q->nz.octaves = (uint32_t)r->octaves;
            q->noise = true;
        }
        q->has_terrain = true;
    }
    p->flatten = r->flatten == PM__RF_OBJECT;
    if (p->flatten && !q->has_terrain) return false;
    for (size_t i = 0; i < r->nlods; i++)
        if (!(q->lods[i] > (i ? q->lods[i - 1] : p->max_error))) return false;
    p->lods = q->lods;
    p->nlods = r->nlods;
    pm_road_prop *props = pm_arena_calloc(r->arena, r->nprops ? r->nprops : 1, sizeof *props);
    if (!props) return false;
    for (size_t i = 0; i < r->nprops; i++) {
        const pm__rf_prop *s = &r->props[i];
        char *name = pm_arena_alloc(r->arena, s->name_len + 1);
        if (!name) return false;
        memcpy(name, s->name, s->name_len);
        name[s->name_len] = '\0';
        props[i] = (pm_road_prop){.name = name, .spacing = s->spacing, .offset = s->offset,
                                  .side = s->side == 0   ? PM_ROAD_SIDE_LEFT
                                          : s->side == 1 ? PM_ROAD_SIDE_RIGHT
                                                         : PM_ROAD_SIDE_BOTH,
                                  .align = s->align ? PM_ROAD_ALIGN_TERRAIN : PM_ROAD_ALIGN_TANGENT};
    }
    p->props = props;
    p->nprops = r->nprops;
    p->curve = r->curve ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
    p->conform = r->conform ? PM_ROAD_BANK : PM_ROAD_DRAPE;
    p->up = r->up ? PM_ROAD_UP_TERRAIN : PM_ROAD_UP_WORLD;
    p->cross_segments = (uint32_t)r->cs;
    return true;
}

/* ---- the canonical text ---- */

static void pm__rf_reals(pm__tx_out *o, const double *v, size_t n) {
    PM__TX_LIT(o, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) PM__TX_LIT(o, ",");
        pm_api__tx_real(o, v[i]);
    }
    PM__TX_LIT(o, "]");
}

static void pm__rf_string(pm__tx_out *o, const char *s, size_t n) {
    char *w = pm__tx_room(o, n + 2);
    if (!w) return;
    w[0] = '"';
    memcpy(w + 1, s, n);
    w[n + 1] = '"';
    o->len += n + 2;
}

static void pm__rf_name(pm__tx_out *o, const char *s) { pm__rf_string(o, s, strlen(s)); }

static void pm__rf_key(pm__tx_out *o, const char *key, double x) {
    pm__tx_put(o, key, strlen(key));
    pm_api__tx_real(o, x);
}

static void pm__rf_terrain_text(pm__tx_out *o, const pm__rf *r) {
    const pm__road_req *q = r->q;
    if (!q->has_terrain) {
        PM__TX_LIT(o, "null");
        return;
    }
    pm__rf_key(o, "{\"cell\":", q->hf.cell);
    PM__TX_LIT(o, ",\"cols\":");
    pm_api__tx_integer(o, r->cols);
    if (!q->noise) {
        PM__TX_LIT(o, ",\"heights\":");
        pm__rf_reals(o, r->heights, r->nheights);   /* below PM_API_BULK_CANON_MIN */
    }
    if (q->p.terrain_mesh) PM__TX_LIT(o, ",\"mesh\":true");
    else PM__TX_LIT(o, ",\"mesh\":false");
    if (q->noise) {
        pm__rf_key(o, ",\"noise\":{\"amplitude\":", q->nz.amplitude);
        PM__TX_LIT(o, ",\"octaves\":");
        pm_api__tx_integer(o, r->octaves);
        PM__TX_LIT(o, ",\"seed\":");
        if (q->nz.seed <= (uint64_t)INT64_MAX) {
            pm_api__tx_integer(o, (int64_t)q->nz.seed);
        } else {   /* the decimal string pm_api_u64 keeps above 2^63-1 */
            char d[24], *e = d + sizeof d, *b = e;
            uint64_t u = q->nz.seed;
            do *--b = (char)('0' + u % 10);
            while ((u /= 10) != 0);
            pm__rf_string(o, b, (size_t)(e - b));
        }
        pm__rf_key(o, ",\"wavelength\":", q->nz.wavelength);
        PM__TX_LIT(o, "}");
    }
    PM__TX_LIT(o, ",\"origin\":");
    pm__rf_reals(o, q->hf.origin, 2);
    PM__TX_LIT(o, ",\"rows\":");
    pm_api__tx_integer(o, r->rows);
    PM__TX_LIT(o, "}");
}

static void pm__rf_props_text(pm__tx_out *o, const pm_road_params *p) {
    PM__TX_LIT(o, "[");
    for (size_t i = 0; i < p->nprops; i++) {
        const pm_road_prop *rp = &p->props[i];
        if (i) PM__TX_LIT(o, ",");
        PM__TX_LIT(o, "{\"align\":");
        pm__rf_name(o, pm__rf_aligns[rp->align == PM_ROAD_ALIGN_TERRAIN]);
        PM__TX_LIT(o, ",\"name\":");
        pm__rf_name(o, rp->name);
        pm__rf_key(o, ",\"offset\":", rp->offset);
        PM__TX_LIT(o, ",\"side\":");
        pm__rf_name(o, pm__rf_sides[rp->side == PM_ROAD_SIDE_LEFT    ? 0
                                    : rp->side == PM_ROAD_SIDE_RIGHT ? 1
                                                                     : 2]);
        pm__rf_key(o, ",\"spacing\":", rp->spacing);
        PM__TX_LIT(o, "}");
    }
    PM__TX_LIT(o, "]");
}

/* The canonical form's dump, keys in jansson's sorted order, after the
 * tag that makes it a canonical text (canon_text.h): up to the points. */
static void pm__rf_canon_head(pm__tx_out *o, const pm__rf *r) {
    const pm__road_req *q = r->q;
    const pm_road_params *p = &q->p;
    pm__tx_put(o, pm_api__canon_text_tag, PM_API_CANON_TEXT_TAG_LEN);
    pm__rf_key(o, "{\"alpha\":", p->alpha);
    PM__TX_LIT(o, ",\"banking\":");
    if (r->banking == PM__RF_NULL) {
        PM__TX_LIT(o, "null");
    } else {
        pm__rf_key(o, "{\"max_degrees\":", p->bank_max_degrees);
        pm__rf_key(o, ",\"radius\":", p->bank_radius);
        if (r->roll) {
            PM__TX_LIT(o, ",\"roll\":");
            pm__rf_reals(o, r->roll, r->nroll);
        }
        pm__rf_key(o, ",\"transition\":", p->bank_transition);
        PM__TX_LIT(o, "}");
    }
    if (p->closed) PM__TX_LIT(o, ",\"closed\":true");
    else PM__TX_LIT(o, ",\"closed\":false");
    PM__TX_LIT(o, ",\"conform\":");
    pm__rf_name(o, pm__rf_conforms[r->conform]);
    PM__TX_LIT(o, ",\"cross_segments\":");
    pm_api__tx_integer(o, r->cs);
    PM__TX_LIT(o, ",\"curve\":");
    pm__rf_name(o, pm__rf_curves[r->curve]);
    if (p->flatten) {
        pm__rf_key(o, ",\"flatten\":{\"depth\":", p->flatten_opts.depth);
        pm__rf_key(o, ",\"falloff\":", p->flatten_opts.falloff);
        pm__rf_key(o, ",\"margin\":", p->flatten_opts.margin);
        PM__TX_LIT(o, "}");
    } else {
        PM__TX_LIT(o, ",\"flatten\":null");
    }
    PM__TX_LIT(o, ",\"lods\":");
    pm__rf_reals(o, q->lods, p->nlods);
    pm__rf_key(o, ",\"max_error\":", p->max_error);
    pm__rf_key(o, ",\"max_segment\":", p->max_segment);
    PM__TX_LIT(o, ",\"points\":");
}

/* The rest of the canonical form, after the points. */
static void pm__rf_canon_tail(pm__tx_out *o, const pm__rf *r) {
    const pm__road_req *q = r->q;
    const pm_road_params *p = &q->p;
    PM__TX_LIT(o, ",\"props\":");
    pm__rf_props_text(o, p);
    pm__rf_key(o, ",\"shoulder\":", p->shoulder);
    PM__TX_LIT(o, ",\"terrain\":");
    pm__rf_terrain_text(o, r);
    PM__TX_LIT(o, ",\"up\":");
    pm__rf_name(o, pm__rf_ups[r->up]);
    pm__rf_key(o, ",\"uv_scale\":", p->uv_scale);
    pm__rf_key(o, ",\"width\":", p->width);
    PM__TX_LIT(o, "}");
}

/* ---- the request ---- */

int pm_api__road_parse_text(const char *body, size_t len, const pm_api_limits *lim,
                            pm_arena *arena, void **params, json_t **canonical,
                            pm_api_problem *prob) {
    return pm_api__road_parse_text_path(body, len, lim, arena, params, canonical, prob, -1);
}

int pm_api__road_parse_text_path(const char *body, size_t len, const pm_api_limits *lim,
                                 pm_arena *arena, void **params, json_t **canonical,
                                 pm_api_problem *prob, int path) {
    *canonical = NULL;
#if PM_API_SHORT_SCAN_SSSE3
    bool ssse3 = path < 0 ? __builtin_cpu_supports("ssse3") : path == 1;
    if (ssse3 && !__builtin_cpu_supports("ssse3")) return -2;
#else
    bool ssse3 = false;
    if (path == 1) return -2;
#endif
    pm__road_req *q = pm_arena_calloc(arena, 1, sizeof *q);
    if (!q) return 1;
    pm_road_params_default(&q->p);
    /* The document path's defaults where they are its own (noise). */
    pm__rf r = {.f = {body, body + len}, .arena = arena, .lim = lim, .q = q, .cs = 4,
                .nz = {.seed = 0, .amplitude = 10.0, .wavelength = 200.0, .octaves = 4},
                .octaves = 4, .ssse3 = ssse3};
    if (!pm__rf_root(&r) || !pm__rf_fill(&r)) return 1;
    /* The points enter the canonical form as the row block's binary form
     * (pm_api_rows_canon_head, then the doubles, -0 read as 0), as the
     * document path's canonical row block dumps (api/canon.c). */
    size_t bytes = r.npts * 3 * sizeof(double);
    pm__tx_out o = {0};
    pm__rf_canon_head(&o, &r);
    char *w = pm__tx_room(&o, PM_API_ROWS_CANON_HEAD + bytes);
    if (w) {
        pm_api_rows_canon_head(w, r.npts, 3);
        pm_copy(w + PM_API_ROWS_CANON_HEAD, r.pts, bytes);
        o.len += PM_API_ROWS_CANON_HEAD + bytes;
    }
    pm__rf_canon_tail(&o, &r);
    json_t *canon = o.failed ? NULL : json_stringn_nocheck(o.b, o.len);
    free(o.b);
    if (!canon) return 1;
    pm_api__road_check(q, lim, prob);
    if (pm_api_problem_failed(prob)) {
        json_decref(canon);
        return -1;
    }
    *params = q;
    *canonical = canon;
    return 0;
}
