/* POST /v1/networks with a GeoJSON FeatureCollection (RFC 7946) of
 * LineString / MultiLineString features in lon/lat (docs/network.md
 * "GeoJSON in"). Positions are projected onto the tangent plane at the
 * origin (core/geom/geodesy.h), snapped into nodes, split into edges, and the
 * resulting nodes / edges document goes through the ordinary parser. */
#include "req_network_geojson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geodesy.h"
#include "scene/meta.h"

#define PM__GJ_REACH 1e5           /* |x|, |z| bound of the network, metres */
#define PM__GJ_HMIN (-1e4)         /* heights, metres above the ellipsoid */
#define PM__GJ_HMAX 1e4
#define PM__GJ_TOL_DEF 0.5         /* snapping tolerance, metres */
#define PM__GJ_TOL_MAX 5.0
#define PM__GJ_TOL_MIN 0.001       /* or 0: equal positions only */
#define PM__GJ_LAYER_H_DEF 5.0     /* metres per layer */
#define PM__GJ_LAYER_MAX 5
#define PM__GJ_PTR 96
#define PM__CRS84 "urn:ogc:def:crs:OGC:1.3:CRS84"

/* One LineString (or one line of a MultiLineString). */
typedef struct pm__gline {
    uint32_t feature, part;
    bool multi, has_width, has_sidewalk;
    uint32_t first, n;         /* its positions in the vertex array */
} pm__gline;

/* One edge of the derived network: a piece of a line between two nodes. */
typedef struct pm__gedge {
    uint32_t line, k0, k1;     /* coordinate indices of its end positions */
    uint32_t npoints;
    uint32_t *point_k;         /* coordinate index of each interior point */
    /* An end inside one of the line's segments (a T: another line's
     * position lies on it): the node there, else -1. k0 / k1 are then the
     * segment's position before / after it. */
    int32_t node0, node1;
} pm__gedge;

struct pm_api__geo {
    pm_geo_frame frame;
    bool origin_given;
    double tolerance, layer_height;
    pm__gline *lines;
    size_t nlines;
    pm__gedge *edges;
    size_t nedges;
    char (*node_ptr)[PM__GJ_PTR];   /* per node: its first position, as a pointer */
    size_t nnodes;
};

typedef struct pm__gvtx {
    double lon, lat, h;        /* as given (h: 3rd coordinate or elevation) */
    double p[3];               /* local metres, layer lift included */
    int layer;
} pm__gvtx;

bool pm_api__geojson_is(const json_t *body) {
    return json_is_object(body) && json_object_get(body, "type") != NULL;
}

/* ---- pointers ---- */

static void pm__line_ptr(char *out, size_t cap, const pm__gline *L) {
    if (L->multi) snprintf(out, cap, "/features/%u/geometry/coordinates/%u", L->feature, L->part);
    else snprintf(out, cap, "/features/%u/geometry/coordinates", L->feature);
}

static void pm__coord_ptr(char *out, size_t cap, const pm__gline *L, uint32_t k) {
    if (L->multi)
        snprintf(out, cap, "/features/%u/geometry/coordinates/%u/%u", L->feature, L->part, k);
    else snprintf(out, cap, "/features/%u/geometry/coordinates/%u", L->feature, k);
}

/* ---- reading the GeoJSON ---- */

typedef struct pm__gread {
    pm_api_problem *prob;
    const pm_api_limits *lim;
    pm_arena *arena;
    pm__gvtx *v;
    size_t nv, capv;
    pm__gline *lines;
    size_t nlines, caplines;
    bool too_many;
} pm__gread;

static bool pm__num_in(const json_t *x, double lo, double hi, double *out) {
    if (!json_is_number(x)) return false;
    *out = json_number_value(x);
    return isfinite(*out) && *out >= lo && *out <= hi;
}

/* A position [lon, lat] or [lon, lat, height]; dim gets its length. */
static bool pm__read_position(pm__gread *R, const json_t *x, const char *ptr, double out[3],
                              size_t *dim) {
    char p[PM__GJ_PTR + 8];
    size_t n = json_is_array(x) ? json_array_size(x) : 0;
    if (n < 2 || n > 3) {
        pm_api_problem_field(R->prob, ptr, "must be a position: [longitude, latitude] or "
                             "[longitude, latitude, height] in degrees and metres");
        return false;
    }
    static const char *const what[3] = {"a longitude in [-180, 180] degrees",
                                        "a latitude in [-90, 90] degrees",
                                        "a height in [-10000, 10000] metres above the WGS84 ellipsoid"};
    static const double lo[3] = {-180, -90, PM__GJ_HMIN}, hi[3] = {180, 90, PM__GJ_HMAX};
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (pm__num_in(json_array_get(x, i), lo[i], hi[i], &out[i])) continue;
        snprintf(p, sizeof p, "%s/%zu", ptr, i);
        pm_api_problem_field(R->prob, p, "must be %s", what[i]);
        ok = false;
    }
    *dim = n;
    return ok;
}

static void *pm__grow(pm_arena *a, void *old, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return old;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *m = pm_arena_alloc(a, nc * size);
    if (m && old) memcpy(m, old, *cap * size);
    *cap = nc;
    return m;
}

/* The feature's own properties: width and sidewalk are checked by the
 * network parser later (pointers mapped back); layer and elevation here. */
typedef struct pm__gprops { bool has_width, has_sidewalk; int layer; double elevation; } pm__gprops;

static void pm__read_props(pm__gread *R, const json_t *props, const char *fptr, pm__gprops *out) {
    char p[PM__GJ_PTR + 24];
    memset(out, 0, sizeof *out);
    if (!json_is_object(props)) return;
    out->has_width = json_object_get(props, "width") != NULL;
    out->has_sidewalk = json_object_get(props, "sidewalk") != NULL;
    const json_t *layer = json_object_get(props, "layer"), *el = json_object_get(props, "elevation");
    double v;
    if (layer) {
        if (json_is_integer(layer) && llabs((long long)json_integer_value(layer)) <= PM__GJ_LAYER_MAX)
            out->layer = (int)json_integer_value(layer);
        else {
            snprintf(p, sizeof p, "%s/properties/layer", fptr);
            pm_api_problem_field(R->prob, p, "must be an integer in [-%d, %d]", PM__GJ_LAYER_MAX,
                                 PM__GJ_LAYER_MAX);
        }
    }
    if (el) {
        if (pm__num_in(el, PM__GJ_HMIN, PM__GJ_HMAX, &v)) out->elevation = v;
        else {
            snprintf(p, sizeof p, "%s/properties/elevation", fptr);
            pm_api_problem_field(R->prob, p, "must be a number of metres in [-10000, 10000]");
        }
    }
}

static void pm__read_line(pm__gread *R, const json_t *coords, const char *ptr, uint32_t f,
                          uint32_t part, bool multi, const pm__gprops *pr) {
    size_t n = json_is_array(coords) ? json_array_size(coords) : 0;
    if (!json_is_array(coords) || n < 2) {
        pm_api_problem_field(R->prob, ptr, "must be an array of at least 2 positions");
        return;
    }
    if (R->nv + n > R->lim->max_points) {
        R->too_many = true;
        return;
    }
    R->v = pm__grow(R->arena, R->v, &R->capv, R->nv + n, sizeof *R->v);
    R->lines = pm__grow(R->arena, R->lines, &R->caplines, R->nlines + 1, sizeof *R->lines);
    if (!R->v || !R->lines) {
        pm_api_problem_set(R->prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        R->too_many = true;     /* stops reading */
        return;
    }
    R->lines[R->nlines++] = (pm__gline){f, part, multi, pr->has_width, pr->has_sidewalk,
                                        (uint32_t)R->nv, (uint32_t)n};
    char p[PM__GJ_PTR];
    for (size_t k = 0; k < n; k++) {
        double pos[3] = {0, 0, pr->elevation};
        size_t dim = 0;
        snprintf(p, sizeof p, "%s/%zu", ptr, k);
        pm__read_position(R, json_array_get(coords, k), p, pos, &dim);
        R->v[R->nv++] = (pm__gvtx){pos[0], pos[1], pos[2], {0, 0, 0}, pr->layer};
    }
}

static void pm__read_feature(pm__gread *R, const json_t *ft, uint32_t f) {
    char fp[24], p[PM__GJ_PTR];
    snprintf(fp, sizeof fp, "/features/%u", f);
    if (!json_is_object(ft)) {
        pm_api_problem_field(R->prob, fp, "must be a GeoJSON Feature object");
        return;
    }
    const json_t *type = json_object_get(ft, "type"), *geom = json_object_get(ft, "geometry");
    const json_t *props = json_object_get(ft, "properties");
    if (!json_is_string(type) || strcmp(json_string_value(type), "Feature") != 0) {
        snprintf(p, sizeof p, "%s/type", fp);
        pm_api_problem_field(R->prob, p, "must be \"Feature\"");
    }
    if (!props || !(json_is_object(props) || json_is_null(props))) {
        snprintf(p, sizeof p, "%s/properties", fp);
        pm_api_problem_field(R->prob, p, props ? "must be an object or null"
                                               : "is required (RFC 7946: an object or null)");
    }
    pm__gprops pr;
    pm__read_props(R, props, fp, &pr);
    snprintf(p, sizeof p, "%s/geometry", fp);
    if (!json_is_object(geom)) {
        pm_api_problem_field(R->prob, p, "must be a LineString or MultiLineString geometry%s",
                             json_is_null(geom) ? " (a feature without geometry is no road)" : "");
        return;
    }
    const json_t *gt = json_object_get(geom, "type"), *coords = json_object_get(geom, "coordinates");
    const char *gts = json_is_string(gt) ? json_string_value(gt) : "";
    bool multi = strcmp(gts, "MultiLineString") == 0;
    if (!multi && strcmp(gts, "LineString") != 0) {
        snprintf(p, sizeof p, "%s/geometry/type", fp);
        pm_api_problem_field(R->prob, p, "must be \"LineString\" or \"MultiLineString\": only "
                             "lines are roads");
        return;
    }
    snprintf(p, sizeof p, "%s/geometry/coordinates", fp);
    if (!multi) {
        pm__read_line(R, coords, p, f, 0, false, &pr);
        return;
    }
    size_t np = json_is_array(coords) ? json_array_size(coords) : 0;
    if (np == 0) {
        pm_api_problem_field(R->prob, p, "must be an array of at least 1 line");
        return;
    }
    for (size_t k = 0; k < np; k++) {
        char lp[PM__GJ_PTR + 24];
        snprintf(lp, sizeof lp, "%s/%zu", p, k);
        pm__read_line(R, json_array_get(coords, k), lp, f, (uint32_t)k, true, &pr);
    }
}

/* The members a request's top level may have: GeoJSON's own, procmesh's
 * GeoJSON options, and the network options passed through unchanged. */
static const char *const pm__gj_own[] = {"type", "features", "bbox", "crs", "name",
                                         "origin", "tolerance", "layer_height", NULL};
static const char *const pm__gj_pass[] = {"width", "sidewalk", "corner_radius", "corner_segments",
                                          "uv_scale", "snap", "max_error", "max_segment", NULL};

static bool pm__in(const char *const *names, const char *key) {
    for (size_t i = 0; names[i]; i++)
        if (strcmp(names[i], key) == 0) return true;
    return false;
}

static void pm__read_top(pm__gread *R, const json_t *body, pm_api__geo *g, double origin[3]) {
    pm_api_problem *prob = R->prob;
    const char *key;
    const json_t *val;
    char p[PM__GJ_PTR + 8];
    json_object_foreach((json_t *)body, key, val) {
        if (pm__in(pm__gj_own, key) || pm__in(pm__gj_pass, key)) continue;
        pm_api_pointer_join(p, sizeof p, "", key);
        pm_api_problem_field(prob, p, "unknown field");
    }
    const json_t *type = json_object_get(body, "type");
    if (!json_is_string(type) || strcmp(json_string_value(type), "FeatureCollection") != 0)
        pm_api_problem_field(prob, "/type", "must be \"FeatureCollection\" (a GeoJSON request), "
                             "or leave \"type\" out for a nodes / edges request");
    const json_t *crs = json_object_get(body, "crs");
    const json_t *crsp = json_is_object(crs) ? json_object_get(crs, "properties") : NULL;
    const json_t *crsn = json_is_object(crsp) ? json_object_get(crsp, "name") : NULL;
    if (crs && !(json_is_string(crsn) && strcmp(json_string_value(crsn), PM__CRS84) == 0))
        pm_api_problem_field(prob, "/crs", "must name " PM__CRS84 " (WGS84 longitude, latitude) "
                             "or be left out: reproject other coordinate systems first");
    const json_t *name = json_object_get(body, "name");
    if (name && !json_is_string(name)) pm_api_problem_field(prob, "/name", "must be a string");
    const json_t *bbox = json_object_get(body, "bbox");
    size_t nb = json_is_array(bbox) ? json_array_size(bbox) : 0;
    bool bbox_ok = nb == 4 || nb == 6;
    for (size_t i = 0; i < nb; i++) bbox_ok &= json_is_number(json_array_get(bbox, i)) != 0;
    if (bbox && !bbox_ok) pm_api_problem_field(prob, "/bbox", "must be an array of 4 or 6 numbers");
    const json_t *o = json_object_get(body, "origin");
    g->origin_given = o != NULL;
    size_t dim = 0;
    if (o) pm__read_position(R, o, "/origin", origin, &dim);
    const json_t *tol = json_object_get(body, "tolerance"), *lh = json_object_get(body, "layer_height");
    g->tolerance = PM__GJ_TOL_DEF;
    g->layer_height = PM__GJ_LAYER_H_DEF;
    if (tol && !(pm__num_in(tol, 0, PM__GJ_TOL_MAX, &g->tolerance) &&
                 (g->tolerance == 0 || g->tolerance >= PM__GJ_TOL_MIN)))
        pm_api_problem_field(prob, "/tolerance", "must be 0 or a number of metres in [%g, %g]",
                             PM__GJ_TOL_MIN, PM__GJ_TOL_MAX);
    if (lh && !(pm__num_in(lh, 0, 100, &g->layer_height) && g->layer_height > 0))
        pm_api_problem_field(prob, "/layer_height", "must be a number of metres in (0, 100]");
    const json_t *fs = json_object_get(body, "features");
    if (!json_is_array(fs) || json_array_size(fs) == 0) {
        pm_api_problem_field(prob, "/features", fs ? "must be an array of at least 1 feature"
                                                   : "is required");
        return;
    }
    for (size_t f = 0; f < json_array_size(fs) && !R->too_many; f++)
        pm__read_feature(R, json_array_get(fs, f), (uint32_t)f);
    if (R->too_many)     /* after out of memory (503) this records nothing */
        pm_api_problem_field(prob, "/features", "hold more than %u positions in all (limit "
                             "max_points)", R->lim->max_points);
}

/* ---- projection and snapping ---- */

static void pm__project(pm__gread *R, pm_api__geo *g) {
    char p[PM__GJ_PTR];
    for (size_t l = 0; l < R->nlines; l++) {
        const pm__gline *L = &R->lines[l];
        for (uint32_t k = 0; k < L->n; k++) {
            pm__gvtx *V = &R->v[L->first + k];
            pm_geo_local(&g->frame, V->lon, V->lat, V->h, V->p);
            V->p[1] += V->layer * g->layer_height;
            if (fabs(V->p[0]) <= PM__GJ_REACH && fabs(V->p[2]) <= PM__GJ_REACH) continue;
            pm__coord_ptr(p, sizeof p, L, k);
            pm_api_problem_field(R->prob, p, "lies %.0f km from the origin: every position must lie "
                                 "within 100 km (east and north) of it", sqrt(V->p[0] * V->p[0] + V->p[2] * V->p[2]) / 1000);
        }
    }
}

/* A vertex in sort order: plan x, then z, then height, then its index. */
typedef struct pm__gkey { double x, z, y; uint32_t v; } pm__gkey;

static int pm__key_cmp(const void *x, const void *y) {
    const pm__gkey *a = x, *b = y;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->z != b->z) return a->z < b->z ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return a->v < b->v ? -1 : (a->v > b->v);
}

static uint32_t pm__find(uint32_t *parent, uint32_t r) {
    while (parent[r] != r) {
        parent[r] = parent[parent[r]];
        r = parent[r];
    }
    return r;
}

static void pm__union(uint32_t *parent, uint32_t i, uint32_t j) {
    uint32_t ri = pm__find(parent, i), rj = pm__find(parent, j);
    if (ri < rj) parent[rj] = ri;
    else if (rj < ri) parent[ri] = rj;
}

/* A vertex in its cell of a square grid in plan. */
typedef struct pm__gcell { int64_t cx, cz; uint32_t rank; } pm__gcell;

static int pm__cell_cmp(const void *x, const void *y) {
    const pm__gcell *a = x, *b = y;
    if (a->cx != b->cx) return a->cx < b->cx ? -1 : 1;
    if (a->cz != b->cz) return a->cz < b->cz ? -1 : 1;
    return a->rank < b->rank ? -1 : (a->rank > b->rank);
}

/* The first entry of cell (cx, cz) in the sorted cells, or n. */
static size_t pm__cell_find(const pm__gcell *c, size_t n, int64_t cx, int64_t cz) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].cx < cx || (c[mid].cx == cx && c[mid].cz < cz)) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && c[lo].cx == cx && c[lo].cz == cz ? lo : n;
}

static bool pm__close(const double *p, const double *q, double tol) {
    double dx = q[0] - p[0], dz = q[2] - p[2];
    return dx * dx + dz * dz <= tol * tol;     /* IEEE arithmetic only: no libm hypot */
}

/* Joins (in parent, over ranks) every two vertices within tol in plan.
 * Cells of side 0.7 tol: a cell's own vertices are all within tol of one
 * another (joined at once), and two cells, once joined, are never compared
 * again, so a dense blob costs about n log n, not n^2. Without tolerance
 * only equal positions join: they are neighbours in rank order. */
static int pm__link(pm_arena *a, const pm__gvtx *v, const uint32_t *order, size_t n, double tol,
                    uint32_t *parent) {
    if (tol <= 0) {
        for (size_t r = 1; r < n; r++) {
            const double *p = v[order[r - 1]].p, *q = v[order[r]].p;
            if (p[0] == q[0] && p[2] == q[2]) pm__union(parent, (uint32_t)r - 1, (uint32_t)r);
        }
        return 0;
    }
    const double side = 0.7 * tol;
    pm__gcell *c = pm_arena_alloc(a, n * sizeof *c);
    if (!c) return -1;
    for (uint32_t r = 0; r < n; r++)
        c[r] = (pm__gcell){(int64_t)floor(v[order[r]].p[0] / side),
                           (int64_t)floor(v[order[r]].p[2] / side), r};
    qsort(c, n, sizeof *c, pm__cell_cmp);
    for (size_t i = 1; i < n; i++)
        if (c[i].cx == c[i - 1].cx && c[i].cz == c[i - 1].cz) pm__union(parent, c[i - 1].rank, c[i].rank);
    for (size_t i = 0; i < n;) {
        size_t iend = i;
        while (iend < n && c[iend].cx == c[i].cx && c[iend].cz == c[i].cz) iend++;
        /* the later cells of the 5 x 5 window (tol < 2 sides) */
        for (int64_t dx = 0; dx <= 2; dx++)
            for (int64_t dz = dx ? -2 : 1; dz <= 2; dz++) {
                size_t j = pm__cell_find(c, n, c[i].cx + dx, c[i].cz + dz);
                bool joined = j == n || pm__find(parent, c[i].rank) == pm__find(parent, c[j].rank);
                for (size_t p = i; p < iend && !joined; p++)
                    for (size_t q = j; q < n && c[q].cx == c[j].cx && c[q].cz == c[j].cz && !joined; q++)
                        if (pm__close(v[order[c[p].rank]].p, v[order[c[q].rank]].p, tol)) {
                            pm__union(parent, c[p].rank, c[q].rank);
                            joined = true;
                        }
            }
        i = iend;
    }
    return 0;
}

/* Clusters: positions within tolerance in plan, chained (single linkage),
 * so the result depends on the positions only, never on feature order.
 * cl[v] gets the cluster of vertex v, numbered in (x, z, y) order; cpos
 * the mean position of each cluster, summed in that order. Returns the
 * number of clusters, or 0 out of memory. */
static size_t pm__snap(pm_arena *a, const pm__gvtx *v, size_t n, double tol, uint32_t *cl,
                       double **cpos_out) {
    pm__gkey *key = pm_arena_alloc(a, n * sizeof *key);
    uint32_t *order = pm_arena_alloc(a, n * sizeof *order), *parent = pm_arena_alloc(a, n * sizeof *parent);
    double *cpos = pm_arena_calloc(a, 3 * n, sizeof *cpos);
    uint32_t *count = pm_arena_calloc(a, n, sizeof *count);
    if (!key || !order || !parent || !cpos || !count) return 0;
    for (uint32_t i = 0; i < n; i++) key[i] = (pm__gkey){v[i].p[0], v[i].p[2], v[i].p[1], i};
    qsort(key, n, sizeof *key, pm__key_cmp);
    for (uint32_t i = 0; i < n; i++) order[i] = key[i].v, parent[i] = i;
    if (pm__link(a, v, order, n, tol, parent) < 0) return 0;
    size_t nc = 0;
    uint32_t *num = count;      /* reused: root rank -> cluster number + 1 */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = pm__find(parent, i);
        if (r == i) num[i] = (uint32_t)++nc;
        cl[order[i]] = num[r] - 1;
    }
    uint32_t *members = parent;  /* reused: members per cluster */
    memset(members, 0, n * sizeof *members);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = cl[order[i]];
        for (int d = 0; d < 3; d++) cpos[3 * c + d] += v[order[i]].p[d];
        members[c]++;
    }
    for (size_t c = 0; c < nc; c++)
        for (int d = 0; d < 3; d++) cpos[3 * c + d] /= members[c];
    *cpos_out = cpos;
    return nc;
}

size_t pm_api__geojson_clusters(pm_arena *a, const double *pos, size_t n, double tol,
                                uint32_t *cluster) {
    pm__gvtx *v = pm_arena_calloc(a, n ? n : 1, sizeof *v);
    double *cpos;
    if (!v) return 0;
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) v[i].p[d] = pos[3 * i + d];
    return n ? pm__snap(a, v, n, tol, cluster, &cpos) : 0;
}

/* ---- nodes and edges ---- */

typedef struct pm__gbuild {
    uint32_t *cl;              /* vertex -> cluster */
    double *cpos;              /* cluster -> mean position */
    size_t nc;
    uint32_t *visits;          /* cluster -> runs of lines through it */
    uint32_t *node;            /* cluster -> node index + 1, 0: not a node */
    /* With T splits (pm__tsplit), the lines' vertices with a cluster put
     * into their segments: vertex -> coordinate index in its line (an
     * inserted one: its segment's first position), and whether inserted.
     * NULL without any: vertex k of a line is its position k. */
    uint32_t *coord;
    uint8_t *virt;
} pm__gbuild;

/* The coordinate index (in the GeoJSON) of a line's vertex k. */
static uint32_t pm__k(const pm__gbuild *B, const pm__gline *L, uint32_t k) {
    return B->coord ? B->coord[L->first + k] : k;
}

static bool pm__virt(const pm__gbuild *B, const pm__gline *L, uint32_t k) {
    return B->virt && B->virt[L->first + k];
}

/* ---- T junctions: a position on another line's segment ---- */

/* Cluster c put into segment k of line `line` (between its positions k
 * and k + 1), at parameter t along it. */
typedef struct pm__gsplit { uint32_t line, k, c; double t; } pm__gsplit;

static int pm__split_cmp(const void *x, const void *y) {
    const pm__gsplit *a = x, *b = y;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->c < b->c ? -1 : (a->c > b->c);
}

/* Where a line's segment passes within tolerance of a cluster where a
 * line ends, not one of the segment's ends (in plan, the cluster's mean
 * position, more than the tolerance from both ends, a line ending there on
 * the segment's layer), the line gets that cluster there as a vertex of
 * its own: a street drawn to end on another street's segment, not on one
 * of its positions (a map editor snapping to a segment without adding a
 * vertex to it), joins it in a T, as one ending on a position does. Only
 * ends: a bend point of one road within the tolerance of another road's
 * line (two roads leaving a node at a narrow angle) is not a junction
 * drawn, and splitting there would join the two roads twice. The
 * clusters' mean positions are the nodes, so
 * the line bends there by at most the tolerance. Clusters are found in
 * a grid of cells at least twice the tolerance wide, in the 3 x 3 cells
 * round samples one cell apart along each segment. Without any split the lines stay as they are; with tolerance
 * 0 (equal positions only) there are none. Returns 0, or -1 out of
 * memory. */
static int pm__tsplit(pm__gread *R, pm__gbuild *B, double tol) {
    if (!(tol > 0) || B->nc == 0) return 0;
    pm_arena *a = R->arena;
    /* The layers each cluster has a line's end on (bit layer + 5); 0: no
     * line ends there. */
    uint16_t *layers = pm_arena_calloc(a, B->nc, sizeof *layers);
    if (!layers) return -1;
    for (size_t l = 0; l < R->nlines; l++) {
        const pm__gline *L = &R->lines[l];
        uint32_t ends[2] = {L->first, L->first + L->n - 1};
        for (int w = 0; w < 2; w++)
            layers[B->cl[ends[w]]] |= (uint16_t)(1u << (R->v[ends[w]].layer + PM__GJ_LAYER_MAX));
    }
    /* The clusters in a dense grid over their box: cells at least twice
     * the tolerance and 8 m wide, wider while there would be more than
     * 4 per cluster (so a sparse network far apart stays small). */
    double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
    for (size_t c = 0; c < B->nc; c++)
        for (int d = 0; d < 2; d++)
            lo[d] = fmin(lo[d], B->cpos[3 * c + 2 * d]), hi[d] = fmax(hi[d], B->cpos[3 * c + 2 * d]);
    double side = fmax(2 * tol, 8.0);
    size_t nx, nz;
    for (;; side *= 2) {
        nx = (size_t)((hi[0] - lo[0]) / side) + 1, nz = (size_t)((hi[1] - lo[1]) / side) + 1;
        if ((double)nx * (double)nz <= 4.0 * (double)B->nc + 4096) break;
    }
    uint32_t *start = pm_arena_calloc(a, nx * nz + 1, sizeof *start), *ids = pm_arena_alloc(a, B->nc * sizeof *ids);
    if (!start || !ids) return -1;
#define PM__CELL(x, z) ((size_t)floor(((z) - lo[1]) / side) * nx + (size_t)floor(((x) - lo[0]) / side))
    for (size_t c = 0; c < B->nc; c++) start[PM__CELL(B->cpos[3 * c], B->cpos[3 * c + 2]) + 1]++;
    for (size_t i = 0; i < nx * nz; i++) start[i + 1] += start[i];
    for (uint32_t c = 0; c < B->nc; c++) ids[start[PM__CELL(B->cpos[3 * c], B->cpos[3 * c + 2])]++] = c;
    for (size_t i = nx * nz; i > 0; i--) start[i] = start[i - 1];   /* back to each cell's first */
    start[0] = 0;
#undef PM__CELL
    pm__gsplit *sp = NULL;
    size_t nsp = 0, capsp = 0;
    for (size_t l = 0; l < R->nlines; l++) {
        const pm__gline *L = &R->lines[l];
        uint16_t bit = (uint16_t)(1u << (R->v[L->first].layer + PM__GJ_LAYER_MAX));
        for (uint32_t k = 0; k + 1 < L->n; k++) {
            uint32_t ca = B->cl[L->first + k], cb = B->cl[L->first + k + 1];
            if (ca == cb) continue;
            const double *pa = B->cpos + 3 * ca, *pb = B->cpos + 3 * cb;
            double dx = pb[0] - pa[0], dz = pb[2] - pa[2], len2 = dx * dx + dz * dz;
            double steps = ceil(sqrt(len2) / side);
            int64_t last_x = -2, last_z = -2;
            for (double i = 0; i <= steps; i++) {
                double f = steps > 0 ? i / steps : 0;
                int64_t qx = (int64_t)floor((pa[0] + f * dx - lo[0]) / side);
                int64_t qz = (int64_t)floor((pa[2] + f * dz - lo[1]) / side);
                if (qx == last_x && qz == last_z) continue;
                last_x = qx, last_z = qz;
                for (int64_t ox = qx - 1; ox <= qx + 1; ox++)
                    for (int64_t oz = qz - 1; oz <= qz + 1; oz++) {
                        if (ox < 0 || oz < 0 || ox >= (int64_t)nx || oz >= (int64_t)nz) continue;
                        size_t cell = (size_t)oz * nx + (size_t)ox;
                        for (uint32_t j = start[cell]; j < start[cell + 1]; j++) {
                            uint32_t c = ids[j];
                            if (c == ca || c == cb || !(layers[c] & bit)) continue;
                            const double *q = B->cpos + 3 * c;
                            double t = ((q[0] - pa[0]) * dx + (q[2] - pa[2]) * dz) / len2;
                            double ex = pa[0] + t * dx - q[0], ez = pa[2] + t * dz - q[2];
                            if (!(t > 0 && t < 1) || ex * ex + ez * ez > tol * tol || pm__close(pa, q, tol) ||
                                pm__close(pb, q, tol))
                                continue;
                            sp = pm__grow(a, sp, &capsp, nsp + 1, sizeof *sp);
                            if (!sp) return -1;
                            sp[nsp++] = (pm__gsplit){(uint32_t)l, k, c, t};
                        }
                    }
            }
        }
    }
    if (nsp == 0) return 0;
    qsort(sp, nsp, sizeof *sp, pm__split_cmp);
    /* The lines again, each cluster once per segment, in order along it. */
    size_t nv = R->nv + nsp, m = 0, s = 0;
    uint32_t *cl = pm_arena_alloc(a, nv * sizeof *cl), *coord = pm_arena_alloc(a, nv * sizeof *coord);
    uint8_t *virt = pm_arena_calloc(a, nv, sizeof *virt);
    if (!cl || !coord || !virt) return -1;
    for (size_t l = 0; l < R->nlines; l++) {
        pm__gline *L = &R->lines[l];
        uint32_t first = (uint32_t)m;
        for (uint32_t k = 0; k < L->n; k++) {
            cl[m] = B->cl[L->first + k], coord[m++] = k;
            for (; s < nsp && sp[s].line == l && sp[s].k == k; s++) {
                if (cl[m - 1] == sp[s].c) continue;    /* found from two cells */
                cl[m] = sp[s].c, coord[m] = k, virt[m++] = 1;
            }
        }
        L->first = first;
        L->n = (uint32_t)m - first;
    }
    B->cl = cl, B->coord = coord, B->virt = virt;
    return 0;
}

/* Runs: consecutive positions of a line in one cluster count as one. */
static bool pm__run_start(const pm__gbuild *B, const pm__gline *L, uint32_t k) {
    return k == 0 || B->cl[L->first + k] != B->cl[L->first + k - 1];
}

/* Nodes: clusters where a line ends or that lines visit twice or more. A
 * line that comes back to where it started (a ring, a loop) gets two of
 * its own positions as nodes, one third and two thirds along, so that no
 * edge is a self-loop and no two join the same pair of nodes. */
static void pm__mark_nodes(pm__gread *R, pm__gbuild *B, pm_api__geo *g) {
    char p[PM__GJ_PTR];
    for (size_t l = 0; l < R->nlines; l++) {
        const pm__gline *L = &R->lines[l];
        uint32_t runs = 0;
        for (uint32_t k = 0; k < L->n; k++)
            if (pm__run_start(B, L, k)) B->visits[B->cl[L->first + k]]++, runs++;
        B->node[B->cl[L->first]] = 1;
        B->node[B->cl[L->first + L->n - 1]] = 1;
        if (runs > 1) continue;
        pm__line_ptr(p, sizeof p, L);
        pm_api_problem_field(R->prob, p, "has all its positions within tolerance (%g m) of one "
                             "another: a road needs length", g->tolerance);
    }
    for (size_t c = 0; c < B->nc; c++)
        if (B->visits[c] > 1) B->node[c] = 1;
    for (size_t l = 0; l < R->nlines; l++) {
        const pm__gline *L = &R->lines[l];
        uint32_t from = 0, m = 0;      /* last node run, interior runs since */
        for (uint32_t k = 1; k < L->n; k++) {
            if (!pm__run_start(B, L, k)) continue;
            uint32_t c = B->cl[L->first + k];
            if (!B->node[c]) {
                m++;
                continue;
            }
            if (c == B->cl[L->first + from] && m >= 2) {
                /* ring: nodes near one third and two thirds of its runs */
                uint32_t want[2] = {m / 3, 2 * m / 3}, seen = 0;
                for (uint32_t j = from + 1; j < k; j++) {
                    if (!pm__run_start(B, L, j)) continue;
                    if (seen == want[0] || seen == want[1]) B->node[B->cl[L->first + j]] = 1;
                    seen++;
                }
            } else if (c == B->cl[L->first + from]) {
                pm__coord_ptr(p, sizeof p, L, pm__k(B, L, k));
                pm_api_problem_field(R->prob, p, "comes back within tolerance (%g m) of position %u "
                                     "of its line with fewer than 2 positions between: a road "
                                     "must join two different places", g->tolerance, pm__k(B, L, from));
            }
            from = k;
            m = 0;
        }
    }
}

static json_t *pm__pos_json(const double *p) {
    return json_pack("[f,f,f]", p[0] + 0.0, p[1] + 0.0, p[2] + 0.0);
}

/* Numbers the nodes (cluster order, so feature order does not matter) and
 * names each by the pointer of its first position in feature order. */
static json_t *pm__nodes_json(pm__gread *R, pm__gbuild *B, pm_api__geo *g) {
    size_t nn = 0;
    for (size_t c = 0; c < B->nc; c++)
        if (B->node[c]) B->node[c] = (uint32_t)++nn;
    g->nnodes = nn;
    g->node_ptr = pm_arena_calloc(R->arena, nn ? nn : 1, sizeof *g->node_ptr);
    json_t *nodes = json_array();
    if (!g->node_ptr || !nodes) return json_decref(nodes), NULL;
    for (size_t l = 0; l < R->nlines; l++)
        for (uint32_t k = 0; k < R->lines[l].n; k++) {
            uint32_t c = B->cl[R->lines[l].first + k];
            if (B->node[c] && !g->node_ptr[B->node[c] - 1][0] && !pm__virt(B, &R->lines[l], k))
                pm__coord_ptr(g->node_ptr[B->node[c] - 1], PM__GJ_PTR, &R->lines[l], pm__k(B, &R->lines[l], k));
        }
    for (size_t c = 0; c < B->nc; c++) {
        if (!B->node[c]) continue;
        json_t *n = json_pack("{s:s,s:o}", "id", g->node_ptr[B->node[c] - 1], "position",
                              pm__pos_json(B->cpos + 3 * c));
        if (!n || json_array_append_new(nodes, n) < 0) return json_decref(nodes), NULL;
    }
    return nodes;
}

/* The edge's members other than from / to / points: the feature's width
 * and sidewalk as given (true: the request's sidewalk, or the defaults). */
static int pm__edge_props(json_t *e, const json_t *props, const json_t *body) {
    const json_t *w = json_is_object(props) ? json_object_get(props, "width") : NULL;
    const json_t *sw = json_is_object(props) ? json_object_get(props, "sidewalk") : NULL;
    int rc = 0;
    if (w) rc |= json_object_set(e, "width", (json_t *)w);
    if (!sw) return rc;
    if (json_is_false(sw)) return rc | json_object_set_new(e, "sidewalk", json_null());
    if (!json_is_true(sw)) return rc | json_object_set(e, "sidewalk", (json_t *)sw);
    const json_t *top = json_object_get(body, "sidewalk");
    return rc | json_object_set_new(e, "sidewalk", json_is_object(top) ? json_deep_copy(top)
                                                                        : json_object());
}

/* Splits every line at its nodes into edges. */
static json_t *pm__edges_json(pm__gread *R, pm__gbuild *B, pm_api__geo *g, const json_t *body) {
    size_t ne = 0, cap = 0;
    bool bad = false;
    json_t *edges = json_array();
    const json_t *fs = json_object_get(body, "features");
    for (size_t l = 0; l < R->nlines && edges && !bad; l++) {
        const pm__gline *L = &R->lines[l];
        const json_t *props = json_object_get(json_array_get(fs, L->feature), "properties");
        uint32_t from = 0, npts = 0, base = 0;
        uint32_t *ks = pm_arena_alloc(R->arena, L->n * sizeof *ks);  /* interior coordinate indices */
        json_t *pts = json_array();
        bad = !ks || !pts;
        for (uint32_t k = 1; k < L->n && !bad; k++) {
            if (!pm__run_start(B, L, k)) continue;
            uint32_t c = B->cl[L->first + k];
            if (!B->node[c]) {
                ks[base + npts++] = pm__k(B, L, k);
                bad = json_array_append_new(pts, pm__pos_json(B->cpos + 3 * c)) < 0;
                continue;
            }
            g->edges = pm__grow(R->arena, g->edges, &cap, ne + 1, sizeof *g->edges);
            json_t *e = json_pack("{s:s,s:s}", "from", g->node_ptr[B->node[B->cl[L->first + from]] - 1],
                                  "to", g->node_ptr[B->node[c] - 1]);
            bad = !g->edges || !e || (npts && json_object_set(e, "points", pts) < 0) ||
                  pm__edge_props(e, props, body) || json_array_append(edges, e) < 0;
            json_decref(e);
            if (bad) break;
            bool v0 = pm__virt(B, L, from), v1 = pm__virt(B, L, k);
            g->edges[ne++] = (pm__gedge){(uint32_t)l, pm__k(B, L, from), pm__k(B, L, k) + v1, npts, ks + base,
                                         v0 ? (int32_t)B->node[B->cl[L->first + from]] - 1 : -1,
                                         v1 ? (int32_t)B->node[c] - 1 : -1};
            json_decref(pts);
            pts = json_array();
            bad = !pts;
            base += npts;
            from = k;
            npts = 0;
        }
        json_decref(pts);
    }
    g->nedges = ne;
    if (bad) json_decref(edges);
    return bad ? NULL : edges;
}

/* ---- problems of the derived document, pointed back into the GeoJSON ---- */

static const pm__gedge *pm__edge_at(const pm_api__geo *g, const char *s, const char **rest) {
    char *end;
    unsigned long e = strtoul(s, &end, 10);
    if (end == s || e >= g->nedges) return NULL;
    *rest = end;
    return &g->edges[e];
}

/* Maps one pointer of the derived document; *what gets a note naming the
 * part of a line an edge is ("" when the pointer says it all). */
static void pm__map_pointer(const pm_api__geo *g, const char *in, char *out, size_t cap,
                            char *what, size_t wcap) {
    const char *rest = NULL;
    what[0] = 0;
    snprintf(out, cap, "%s", in);
    if (strcmp(in, "/nodes") == 0 || strcmp(in, "/edges") == 0) {
        snprintf(out, cap, "/features");
    } else if (strncmp(in, "/nodes/", 7) == 0) {
        char *end;
        unsigned long n = strtoul(in + 7, &end, 10);
        if (end != in + 7 && n < g->nnodes) snprintf(out, cap, "%s", g->node_ptr[n]);
    } else if (strncmp(in, "/edges/", 7) == 0) {
        const pm__gedge *E = pm__edge_at(g, in + 7, &rest);
        if (!E) return;
        const pm__gline *L = &g->lines[E->line];
        unsigned long j;
        char *end;
        if (strcmp(rest, "/from") == 0) {
            if (E->node0 >= 0) snprintf(out, cap, "%s", g->node_ptr[E->node0]);
            else pm__coord_ptr(out, cap, L, E->k0);
        } else if (strcmp(rest, "/to") == 0) {
            if (E->node1 >= 0) snprintf(out, cap, "%s", g->node_ptr[E->node1]);
            else pm__coord_ptr(out, cap, L, E->k1);
        } else if (strncmp(rest, "/points/", 8) == 0 &&
                   (j = strtoul(rest + 8, &end, 10), end != rest + 8) && j < E->npoints) {
            pm__coord_ptr(out, cap, L, E->point_k[j]);
        } else if (strncmp(rest, "/width", 6) == 0) {
            if (L->has_width) snprintf(out, cap, "/features/%u/properties%s", L->feature, rest);
            else snprintf(out, cap, "%s", rest);
        } else if (strncmp(rest, "/sidewalk", 9) == 0) {
            if (L->has_sidewalk) snprintf(out, cap, "/features/%u/properties%s", L->feature, rest);
            else snprintf(out, cap, "%s", rest);
        } else {
            pm__line_ptr(out, cap, L);
            snprintf(what, wcap, "(positions %u to %u) ", E->k0, E->k1);
        }
    }
}

/* Rewrites "/edges/<n>" inside a message as the line it is a piece of. */
static void pm__map_message(const pm_api__geo *g, const char *in, char *out, size_t cap) {
    size_t o = 0;
    while (*in && o + 1 < cap) {
        const char *rest;
        const pm__gedge *E = strncmp(in, "/edges/", 7) == 0 ? pm__edge_at(g, in + 7, &rest) : NULL;
        if (!E) {
            out[o++] = *in++;
            continue;
        }
        char p[PM__GJ_PTR];
        pm__line_ptr(p, sizeof p, &g->lines[E->line]);
        int w = snprintf(out + o, cap - o, "%s (positions %u to %u)", p, E->k0, E->k1);
        o = w < 0 || (size_t)w >= cap - o ? cap - 1 : o + (size_t)w;
        in = rest;
    }
    out[o] = 0;
}

void pm_api__geojson_problem(const pm_api__geo *g, const pm_api_problem *src, pm_api_problem *dst) {
    if (src->status != 422) {
        const char *suffix = strrchr(src->type, ':');
        pm_api_problem_set(dst, src->status, suffix ? suffix + 1 : src->type, src->title, "%s",
                           src->detail);
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(src->errors, i, e) {
        const char *ptr = json_string_value(json_object_get(e, "pointer"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        char p[2 * PM__GJ_PTR], what[64], m[256];
        pm__map_pointer(g, ptr ? ptr : "", p, sizeof p, what, sizeof what);
        pm__map_message(g, msg ? msg : "", m, sizeof m);
        pm_api_problem_field(dst, p, "%s%s", what, m);
    }
    dst->dropped += src->dropped;
}

/* ---- metadata ---- */

int pm_api__geojson_meta(const pm_api__geo *g, pm_arena *a, pm_scene *scene) {
    pm_meta *geo = pm_meta_obj(a), *origin = pm_meta_obj(a), *proj = pm_meta_obj(a);
    pm_meta *ell = pm_meta_obj(a), *axes = pm_meta_obj(a), *edges = pm_meta_arr(a);
    if (!geo || !origin || !proj || !ell || !axes || !edges) return -1;
    int rc = pm_meta_set(a, origin, "lon", pm_meta_num(a, g->frame.lon));
    rc |= pm_meta_set(a, origin, "lat", pm_meta_num(a, g->frame.lat));
    rc |= pm_meta_set(a, origin, "height", pm_meta_num(a, g->frame.height));
    rc |= pm_meta_set(a, origin, "source", pm_meta_str(a, g->origin_given ? "request" : "bbox_centre"));
    rc |= pm_meta_set(a, ell, "name", pm_meta_str(a, "WGS84"));
    rc |= pm_meta_set(a, ell, "a", pm_meta_num(a, PM_GEO_WGS84_A));
    rc |= pm_meta_set(a, ell, "inverse_flattening", pm_meta_num(a, PM_GEO_WGS84_INV_F));
    rc |= pm_meta_set(a, axes, "x", pm_meta_str(a, "east"));
    rc |= pm_meta_set(a, axes, "y", pm_meta_str(a, "up"));
    rc |= pm_meta_set(a, axes, "z", pm_meta_str(a, "south"));
    rc |= pm_meta_set(a, proj, "name", pm_meta_str(a, "local_tangent_plane"));
    rc |= pm_meta_set(a, proj, "method", pm_meta_str(a, "geodetic -> ECEF -> ENU"));
    rc |= pm_meta_set(a, proj, "ellipsoid", ell);
    rc |= pm_meta_set(a, proj, "axes", axes);
    rc |= pm_meta_set(a, proj, "units", pm_meta_str(a, "metre"));
    for (size_t e = 0; e < g->nedges; e++) {
        const pm__gedge *E = &g->edges[e];
        const pm__gline *L = &g->lines[E->line];
        pm_meta *o = pm_meta_obj(a);
        int64_t ks[2] = {E->k0, E->k1};
        rc |= pm_meta_set(a, o, "feature", pm_meta_int(a, L->feature));
        rc |= pm_meta_set(a, o, "part", pm_meta_int(a, L->part));
        rc |= pm_meta_set(a, o, "coordinates", pm_meta_ints(a, ks, 2));
        rc |= pm_meta_push(edges, o);
    }
    rc |= pm_meta_set(a, geo, "origin", origin);
    rc |= pm_meta_set(a, geo, "projection", proj);
    rc |= pm_meta_set(a, geo, "tolerance", pm_meta_num(a, g->tolerance));
    rc |= pm_meta_set(a, geo, "layer_height", pm_meta_num(a, g->layer_height));
    rc |= pm_meta_set(a, geo, "edges", edges);
    rc |= pm_meta_set(a, scene->meta, "geo", geo);
    return rc ? -1 : 0;
}

/* ---- parse ---- */

/* The centre of the positions' longitude / latitude box. A network across
 * the antimeridian (Fiji's Taveuni, Chukotka) has longitudes near both
 * +180 and -180: its box is the narrower one with the western longitudes
 * counted from 0 to 360, its centre taken back into [-180, 180). Any
 * other network's box is the plain one (the shifted box is never
 * narrower), so its origin is as it always was. */
static void pm__origin_default(const pm__gread *R, double origin[3]) {
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (size_t i = 0; i < R->nv; i++) {
        double c[3] = {R->v[i].lon, R->v[i].lat, R->v[i].lon < 0 ? R->v[i].lon + 360.0 : R->v[i].lon};
        for (int d = 0; d < 3; d++) lo[d] = fmin(lo[d], c[d]), hi[d] = fmax(hi[d], c[d]);
    }
    origin[0] = (lo[0] + hi[0]) / 2;
    if (hi[2] - lo[2] < hi[0] - lo[0]) {
        origin[0] = (lo[2] + hi[2]) / 2;
        if (origin[0] >= 180.0) origin[0] -= 360.0;
    }
    origin[1] = (lo[1] + hi[1]) / 2;
    origin[2] = 0.0;
}

/* The network document: nodes, edges and the options passed through. */
static json_t *pm__build_doc(pm__gread *R, pm_api__geo *g, const json_t *body) {
    pm__gbuild B = {0};
    B.cl = pm_arena_alloc(R->arena, R->nv * sizeof *B.cl);
    B.nc = B.cl ? pm__snap(R->arena, R->v, R->nv, g->tolerance, B.cl, &B.cpos) : 0;
    B.visits = pm_arena_calloc(R->arena, B.nc + 1, sizeof *B.visits);
    B.node = pm_arena_calloc(R->arena, B.nc + 1, sizeof *B.node);
    if (!B.nc || !B.visits || !B.node || pm__tsplit(R, &B, g->tolerance) < 0) return NULL;
    pm__mark_nodes(R, &B, g);
    json_t *doc = json_object();
    json_t *nodes = pm__nodes_json(R, &B, g), *edges = nodes ? pm__edges_json(R, &B, g, body) : NULL;
    int rc = !doc || json_object_set_new(doc, "nodes", nodes) || json_object_set_new(doc, "edges", edges);
    for (size_t i = 0; pm__gj_pass[i] && !rc; i++) {
        const json_t *v = json_object_get(body, pm__gj_pass[i]);
        if (v) rc = json_object_set(doc, pm__gj_pass[i], (json_t *)v);
    }
    if (rc) json_decref(doc);
    return rc ? NULL : doc;
}

static json_t *pm__canon_geo(const pm_api__geo *g) {
    json_t *edges = json_array();
    if (!edges) return NULL;
    for (size_t e = 0; e < g->nedges; e++) {
        const pm__gedge *E = &g->edges[e];
        const pm__gline *L = &g->lines[E->line];
        if (json_array_append_new(edges, json_pack("[i,i,i,i]", (json_int_t)L->feature,
                                                   (json_int_t)L->part, (json_int_t)E->k0,
                                                   (json_int_t)E->k1)) < 0)
            return json_decref(edges), NULL;
    }
    return json_pack("{s:[f,f,f],s:f,s:f,s:o}", "origin", g->frame.lon + 0.0, g->frame.lat + 0.0,
                     g->frame.height + 0.0, "tolerance", g->tolerance + 0.0, "layer_height",
                     g->layer_height + 0.0, "edges", edges);
}

int pm_api__geojson_parse(const json_t *body, const pm_api_limits *lim, pm_arena *arena,
                          void **params, json_t **canonical, pm_api_problem *prob) {
    pm_api__geo *g = pm_arena_calloc(arena, 1, sizeof *g);
    pm__gread R = {.prob = prob, .lim = lim, .arena = arena};
    if (!g) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return -1;
    }
    double origin[3] = {0, 0, 0};
    pm__read_top(&R, body, g, origin);
    if (pm_api_problem_failed(prob)) return -1;
    if (!g->origin_given) pm__origin_default(&R, origin);
    pm_geo_frame_init(&g->frame, origin[0], origin[1], origin[2]);
    g->lines = R.lines;
    g->nlines = R.nlines;
    pm__project(&R, g);
    if (pm_api_problem_failed(prob)) return -1;
    json_t *doc = pm__build_doc(&R, g, body);
    if (!doc && !pm_api_problem_failed(prob))
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
    if (!doc || pm_api_problem_failed(prob)) return json_decref(doc), -1;
    pm_api_problem own;
    pm_api_problem_init(&own);
    int rc = pm_api__network_parse_doc(doc, lim, arena, g, params, canonical, &own);
    json_decref(doc);
    if (pm_api_problem_failed(&own)) pm_api__geojson_problem(g, &own, prob);
    pm_api_problem_free(&own);
    if (rc) return -1;
    json_t *cg = pm__canon_geo(g);
    if (!cg || json_object_set_new(*canonical, "geojson", cg) < 0) {
        json_decref(*canonical);
        *canonical = NULL;
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return -1;
    }
    return 0;
}
