/* Acceptance of /v1/networks on random plausible layouts, the way map
 * editors draw them (issue 11): jittered grid towns with 20-60 m blocks and
 * some diagonals, and random planar street graphs with 20-60 m edges and
 * angles of 30 degrees or more; widths 6-12 m; interior points along the
 * edges, in line or bending a few degrees, some 2-12 m from a node;
 * sidewalks on half of them. Each layout is a JSON body run through the
 * real request path (the api reader, core, the mesh). Every built one is
 * checked by an independent oracle: no two asphalt / sidewalk triangles
 * overlap in plan (exact, every pair whose x ranges meet, no exemption),
 * no non-manifold edge (by float position: at most two triangles on an
 * edge, in opposite directions), no ground face looking down. The
 * refusals are counted by reason and printed with the acceptance rate.
 *
 * PM_LAYOUTS=n runs n layouts instead of the default (bench/layouts.sh
 * runs a few thousand); PM_LAYOUTS_MIN_ANGLE=d lets edges meet at a node
 * d degrees apart or more instead of 30 (forks as maps have them); PM_LAYOUTS_SHOW=1 prints each refusal (2: with
 * every one of its error messages) and
 * PM_LAYOUTS_ONLY=i runs layout i alone, printing its body;
 * PM_LAYOUTS_DIGEST=1 prints a digest of each built layout's mesh
 * (positions, UVs, indices of every primitive), so a change meant to
 * build refused layouts can show it left every built one as it was.
 * The same layouts are also run with their nodes, or their edges, listed
 * in reverse order and as GeoJSON in longitude / latitude (half of them
 * across the antimeridian, a quarter over the North Pole): each must build
 * in those forms exactly when it builds as drawn.
 *
 * Networks drawn by someone else's rules: tests/data/netgen holds bodies
 * made by tools/netgen_bodies.py from SUMO's netgenerate (random planar
 * networks, spider webs, grids; PM_LAYOUTS_DIR=dir runs the bodies of
 * another directory, as bench/netgen_layouts.sh does with fresh ones). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/rng.h"
#include "pm_api/generator.h"
#include "pm_test_api.h"
#include "pm_test_overlap.h"

extern const pm_api_generator pm_api_gen_network;

#define PI 3.14159265358979323846

/* ---- a growing string ---- */

typedef struct sbuf { char *s; size_t n, cap; } sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && (size_t)k < b->cap - b->n) { b->n += (size_t)k; return; }
        b->cap = 2 * (b->cap + (size_t)k + 64);
        b->s = realloc(b->s, b->cap);
    }
}

/* ---- layouts ---- */

#define MAXN 40
#define MAXE 90

typedef struct layout {
    double x[MAXN], z[MAXN], y[MAXN];
    int n;
    int ea[MAXE], eb[MAXE];
    int ne;
    double min_angle;   /* between two edges at a node, radians */
} layout;

static double angle_between(const layout *L, int c, int a, int b) {
    double ux = L->x[a] - L->x[c], uz = L->z[a] - L->z[c], vx = L->x[b] - L->x[c], vz = L->z[b] - L->z[c];
    return acos(fmax(-1.0, fmin(1.0, (ux * vx + uz * vz) / (hypot(ux, uz) * hypot(vx, vz)))));
}

/* Whether edge a-b leaves both ends at least min_angle from the edges
 * already there. */
static bool angles_ok(const layout *L, int a, int b, double min_angle) {
    for (int e = 0; e < L->ne; e++) {
        int ends[2] = {a, b}, other[2] = {b, a};
        for (int k = 0; k < 2; k++) {
            int c = ends[k], far = -1;
            if (L->ea[e] == c) far = L->eb[e];
            else if (L->eb[e] == c) far = L->ea[e];
            if (far >= 0 && angle_between(L, c, other[k], far) < min_angle) return false;
        }
    }
    return true;
}

static double seg_point_dist(double ax, double az, double bx, double bz, double px, double pz) {
    double dx = bx - ax, dz = bz - az, t = ((px - ax) * dx + (pz - az) * dz) / (dx * dx + dz * dz);
    t = fmax(0, fmin(1, t));
    return hypot(ax + t * dx - px, az + t * dz - pz);
}

/* A jittered grid town: columns and rows 20-60 m apart, nodes moved up to
 * 3 m, most grid edges, a diagonal in some cells (where it meets the
 * streets at 30 degrees or more). */
static void grid_town(layout *L, pm_rng *r) {
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 2, 5);
    double cx[6], cz[6];
    cx[0] = cz[0] = 0;
    for (int i = 1; i < gx; i++) cx[i] = cx[i - 1] + pm_rng_range(r, 20, 60);
    for (int j = 1; j < gz; j++) cz[j] = cz[j - 1] + pm_rng_range(r, 20, 60);
    bool hilly = pm_rng_chance(r, 0.2);
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            L->x[L->n] = cx[i] + pm_rng_range(r, -3, 3);
            L->z[L->n] = cz[j] + pm_rng_range(r, -3, 3);
            L->y[L->n] = hilly ? pm_rng_range(r, -1.5, 1.5) : 0;
            L->n++;
        }
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            int id = i * gz + j;
            if (i + 1 < gx && pm_rng_chance(r, 0.9)) { L->ea[L->ne] = id; L->eb[L->ne++] = id + gz; }
            if (j + 1 < gz && pm_rng_chance(r, 0.9)) { L->ea[L->ne] = id; L->eb[L->ne++] = id + 1; }
            if (i + 1 < gx && j + 1 < gz && pm_rng_chance(r, 0.2)) {
                bool up = pm_rng_chance(r, 0.5);
                int a = up ? id : id + 1, b = up ? id + gz + 1 : id + gz;
                if (angles_ok(L, a, b, L->min_angle)) { L->ea[L->ne] = a; L->eb[L->ne++] = b; }
            }
        }
}

/* A random planar street graph: nodes at least 20 m apart, edges 20-60 m
 * added shortest first where they cross nothing, pass 10 m or more from
 * every other node and leave both ends 30 degrees or more from the
 * edges there; some left out. */
static void planar_graph(layout *L, pm_rng *r) {
    int want = (int)pm_rng_int(r, 4, 16);
    double side = 35 * sqrt((double)want);
    for (int tries = 0; L->n < want && tries < 2000; tries++) {
        double x = pm_rng_range(r, 0, side), z = pm_rng_range(r, 0, side);
        bool ok = true;
        for (int i = 0; i < L->n && ok; i++) ok = hypot(L->x[i] - x, L->z[i] - z) >= 20;
        if (!ok) continue;
        L->x[L->n] = x;
        L->z[L->n] = z;
        L->y[L->n] = 0;
        L->n++;
    }
    typedef struct cand { double len; int a, b; } cand;
    cand c[MAXN * MAXN / 2];
    int nc = 0;
    for (int a = 0; a < L->n; a++)
        for (int b = a + 1; b < L->n; b++) {
            double len = hypot(L->x[a] - L->x[b], L->z[a] - L->z[b]);
            if (len >= 20 && len <= 60) c[nc++] = (cand){len, a, b};
        }
    for (int i = 1; i < nc; i++)
        for (int j = i; j > 0 && c[j - 1].len > c[j].len; j--) { cand t = c[j]; c[j] = c[j - 1]; c[j - 1] = t; }
    for (int i = 0; i < nc && L->ne < MAXE; i++) {
        int a = c[i].a, b = c[i].b;
        if (!pm_rng_chance(r, 0.85)) continue;
        bool ok = angles_ok(L, a, b, L->min_angle);
        for (int k = 0; k < L->n && ok; k++)
            if (k != a && k != b) ok = seg_point_dist(L->x[a], L->z[a], L->x[b], L->z[b], L->x[k], L->z[k]) >= 10;
        double pa[2] = {L->x[a], L->z[a]}, pb[2] = {L->x[b], L->z[b]};
        for (int e = 0; e < L->ne && ok; e++) {
            if (L->ea[e] == a || L->eb[e] == a || L->ea[e] == b || L->eb[e] == b) continue;
            double qa[2] = {L->x[L->ea[e]], L->z[L->ea[e]]}, qb[2] = {L->x[L->eb[e]], L->z[L->eb[e]]};
            ok = !pm_segments_intersect(pa, pb, qa, qb);
        }
        if (ok) { L->ea[L->ne] = a; L->eb[L->ne++] = b; }
    }
}

/* One layout as drawn: the graph, the request's options and each edge's
 * direction, width and interior points [x, z]; written out as a nodes /
 * edges body or as GeoJSON in longitude / latitude. */
typedef struct drawn {
    layout L;
    double width, sidewalk, corner;   /* sidewalk, corner: 0 when not given */
    struct { int a, b, np; double width; double pt[3][2]; } e[MAXE];
} drawn;

/* The interior points of edge a-b: none on half the edges; else one to
 * three, each in line or off it (no segment more than 4 degrees off the
 * chord), about a third of them 2-12 m from a node. */
static int edge_points(double pt[3][2], const layout *L, int a, int b, pm_rng *r) {
    if (pm_rng_chance(r, 0.5)) return 0;
    double len = hypot(L->x[b] - L->x[a], L->z[b] - L->z[a]);
    double ux = (L->x[b] - L->x[a]) / len, uz = (L->z[b] - L->z[a]) / len;
    int k = (int)pm_rng_int(r, 1, 3);
    double d[3];
    for (int i = 0; i < k; i++) {
        if (pm_rng_chance(r, 0.35)) {
            double near = pm_rng_range(r, 2, fmin(12, len / 2 - 1));
            d[i] = pm_rng_chance(r, 0.5) ? near : len - near;
        } else {
            d[i] = pm_rng_range(r, 0.2 * len, 0.8 * len);
        }
    }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && d[j - 1] > d[j]; j--) { double t = d[j]; d[j] = d[j - 1]; d[j - 1] = t; }
    /* Each segment leaves the chord by at most 4 degrees, so the polyline
     * bends by at most 8 degrees at any point. */
    double last = 0, h = 0, tn = tan(4 * PI / 180);
    int written = 0;
    for (int i = 0; i < k; i++) {
        if (d[i] - last < 1.5 || len - d[i] < 1.5) continue;
        double off = 0;
        if (pm_rng_chance(r, 0.6)) {
            off = h + pm_rng_range(r, -1, 1) * (d[i] - last) * tn;
            double lim = fmin(d[i], len - d[i]) * tn;
            off = fmax(-lim, fmin(lim, off));
        }
        last = d[i];
        h = off;
        pt[written][0] = L->x[a] + ux * d[i] - uz * off;
        pt[written][1] = L->z[a] + uz * d[i] + ux * off;
        written++;
    }
    return written;
}

/* A random layout; *kind 0 town, 1 graph. */
static void random_layout(pm_rng *r, drawn *D, int *kind, double min_angle_deg) {
    memset(D, 0, sizeof *D);
    layout *L = &D->L;
    L->min_angle = min_angle_deg * PI / 180;
    *kind = pm_rng_chance(r, 0.5);
    if (*kind) planar_graph(L, r);
    else grid_town(L, r);
    D->width = pm_rng_range(r, 6, 12);
    if (pm_rng_chance(r, 0.5)) D->sidewalk = pm_rng_range(r, 1.5, 3);
    if (pm_rng_chance(r, 0.3)) D->corner = pm_rng_range(r, 1, 6);
    for (int e = 0; e < L->ne; e++) {
        bool flip = pm_rng_chance(r, 0.5);
        int a = flip ? L->eb[e] : L->ea[e], b = flip ? L->ea[e] : L->eb[e];
        D->e[e].a = a, D->e[e].b = b;
        if (pm_rng_chance(r, 0.25)) D->e[e].width = pm_rng_range(r, 6, 12);
        D->e[e].np = edge_points(D->e[e].pt, L, a, b, r);
    }
}

/* The request's options, for either form. */
static void put_options(sbuf *B, const drawn *D) {
    put(B, "\"width\": %.2f", D->width);
    if (D->sidewalk > 0) put(B, ", \"sidewalk\": {\"width\": %.2f}", D->sidewalk);
    if (D->corner > 0) put(B, ", \"corner_radius\": %.2f", D->corner);
}

/* As a /v1/networks nodes / edges body (malloc'd); nodes_rev, edges_rev:
 * the nodes (the same ids), the edges listed last first. */
static char *layout_body_order(const drawn *D, bool nodes_rev, bool edges_rev) {
    const layout *L = &D->L;
    sbuf B = {0};
    put(&B, "{");
    put_options(&B, D);
    put(&B, ", \"nodes\": [");
    for (int j = 0; j < L->n; j++) {
        int i = nodes_rev ? L->n - 1 - j : j;
        put(&B, "%s{\"id\": %d, \"position\": [%.3f, %.3f, %.3f]}", j ? ", " : "", i, L->x[i], L->y[i], L->z[i]);
    }
    put(&B, "], \"edges\": [");
    for (int j = 0; j < L->ne; j++) {
        int e = edges_rev ? L->ne - 1 - j : j;
        put(&B, "%s{\"from\": %d, \"to\": %d", j ? ", " : "", D->e[e].a, D->e[e].b);
        if (D->e[e].width > 0) put(&B, ", \"width\": %.2f", D->e[e].width);
        if (D->e[e].np) {
            put(&B, ", \"points\": [");
            for (int i = 0; i < D->e[e].np; i++)
                put(&B, "%s[%.3f, %.3f]", i ? ", " : "", D->e[e].pt[i][0], D->e[e].pt[i][1]);
            put(&B, "]");
        }
        put(&B, "}");
    }
    put(&B, "]}");
    return B.s;
}

static char *layout_body(const drawn *D) { return layout_body_order(D, false, false); }

/* Where a layout is placed as GeoJSON: local (cx, 0, cz) at (lon0, lat0)
 * on the WGS84 ellipsoid. */
typedef struct site { double lon0, lat0, cx, cz; } site;

/* A local point (x east, z south, metres; height y above the tangent
 * plane) as a GeoJSON position, exactly (the inverse of the service's
 * projection, written here on its own with libm): the point on the plane
 * tangent to the ellipsoid at the site, in ECEF, back to longitude,
 * latitude (Bowring's iteration to 1e-12 degrees) and height above the
 * ellipsoid. Exact also near a pole, where the meridians converge within
 * the layout. */
static void put_lonlat(sbuf *B, double x, double y, double z, const site *S) {
    const double a = 6378137.0, f = 1 / 298.257223563, e2 = f * (2 - f), b = a * (1 - f);
    double lam = S->lon0 * PI / 180, ph = S->lat0 * PI / 180;
    double sl = sin(lam), cl = cos(lam), sp = sin(ph), cp = cos(ph);
    double nr = a / sqrt(1 - e2 * sp * sp);
    double o[3] = {nr * cp * cl, nr * cp * sl, nr * (1 - e2) * sp};
    double E[3] = {-sl, cl, 0}, N[3] = {-sp * cl, -sp * sl, cp}, U[3] = {cp * cl, cp * sl, sp};
    double e = x - S->cx, n = -(z - S->cz), u = y, q[3];
    for (int k = 0; k < 3; k++) q[k] = o[k] + e * E[k] + n * N[k] + u * U[k];
    double pr = hypot(q[0], q[1]), lon = atan2(q[1], q[0]) * 180 / PI;
    double lat = atan2(q[2], pr * (1 - e2)), h = 0;
    for (int it = 0; it < 10; it++) {
        double s = sin(lat), nn = a / sqrt(1 - e2 * s * s);
        h = fabs(cos(lat)) > 1e-9 ? pr / cos(lat) - nn : fabs(q[2]) - b;
        lat = atan2(q[2], pr * (1 - e2 * nn / (nn + h)));
    }
    if (lon >= 180) lon -= 360;   /* across the antimeridian, as GeoJSON writes it */
    put(B, "[%.10f, %.10f, %.4f]", lon, lat * 180 / PI, h);
}

/* As GeoJSON the way a map editor exports it: a FeatureCollection of
 * LineStrings in longitude / latitude, one per edge from its first node
 * through its points to its last, the nodes shared by position, heights
 * as third coordinates (interior points at the height of the chord
 * there), the edge's width as a property (malloc'd). Placed by the
 * layout's number: near Oslo, 60 degrees north, where a degree of
 * longitude is half a degree of latitude; near Taveuni, Fiji, where the
 * antimeridian runs through the layout (odd numbers); or (every fourth)
 * over the North Pole itself, the layout's middle on it, so its
 * positions have every longitude. */
static char *layout_geojson(const drawn *D, int it) {
    const layout *L = &D->L;
    site S[1] = {{10.752, 59.913, 0, 0}};
    if (it & 1) {
        S->lon0 = 179.9996, S->lat0 = -16.81;
    } else if (it % 4 == 2) {
        /* The middle of the layout's box on the pole. */
        double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
        for (int v = 0; v < L->n; v++) {
            lo[0] = fmin(lo[0], L->x[v]), hi[0] = fmax(hi[0], L->x[v]);
            lo[1] = fmin(lo[1], L->z[v]), hi[1] = fmax(hi[1], L->z[v]);
        }
        *S = (site){30.0, 90.0, 0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])};
    }
    sbuf B = {0};
    put(&B, "{\"type\": \"FeatureCollection\", ");
    put_options(&B, D);
    put(&B, ", \"features\": [");
    for (int e = 0; e < L->ne; e++) {
        int a = D->e[e].a, b = D->e[e].b;
        put(&B, "%s{\"type\": \"Feature\", \"properties\": {", e ? ", " : "");
        if (D->e[e].width > 0) put(&B, "\"width\": %.2f", D->e[e].width);
        put(&B, "}, \"geometry\": {\"type\": \"LineString\", \"coordinates\": [");
        put_lonlat(&B, L->x[a], L->y[a], L->z[a], S);
        double len = hypot(L->x[b] - L->x[a], L->z[b] - L->z[a]);
        for (int i = 0; i < D->e[e].np; i++) {
            const double *q = D->e[e].pt[i];
            double t = ((q[0] - L->x[a]) * (L->x[b] - L->x[a]) + (q[1] - L->z[a]) * (L->z[b] - L->z[a])) / (len * len);
            put(&B, ", ");
            put_lonlat(&B, q[0], L->y[a] + t * (L->y[b] - L->y[a]), q[1], S);
        }
        put(&B, ", ");
        put_lonlat(&B, L->x[b], L->y[b], L->z[b], S);
        put(&B, "]}}");
    }
    put(&B, "]}");
    return B.s;
}

/* ---- the oracle ---- */

typedef struct faults { size_t overlaps, nonmanifold, down, tris; double at[2]; } faults;

static int ptri_lo_cmp(const void *x, const void *y) {
    const ptri *s = x, *t = y;
    return s->lo[0] < t->lo[0] ? -1 : (s->lo[0] > t->lo[0]);
}

static const pm_prim *prim(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, name) == 0) return &s->prims[i];
    return NULL;
}

static void check_mesh(const pm_scene *s, faults *f) {
    memset(f, 0, sizeof *f);
    const pm_prim *ground[2] = {prim(s, "asphalt"), prim(s, "sidewalk")};
    const pm_prim *slab[2] = {prim(s, "curb"), prim(s, "sidewalk")};
    cr_assert_not_null(ground[0]);
    f->nonmanifold = pm_test_nonmanifold(ground, 1) + (slab[0] ? pm_test_nonmanifold(slab, 2) : 0);
    size_t cap = 0, n = 0;
    for (int g = 0; g < 2; g++) cap += ground[g] ? ground[g]->icount / 3 : 0;
    ptri *T = malloc((cap + 1) * sizeof *T);
    for (int g = 0; g < 2; g++) {
        const pm_prim *P = ground[g];
        for (uint32_t t = 0; P && t < P->icount; t += 3) {
            double q[3][2];
            for (int k = 0; k < 3; k++) {
                const float *v = P->positions + 3 * P->indices[t + k];
                q[k][0] = v[0];
                q[k][1] = v[2];
            }
            /* Up (+Y) is counter-clockwise seen from above in (x, z) with
             * x right and z down the page: pm_orient_xz > 0. */
            if (pm_orient_xz(q[0], q[1], q[2]) <= 0) f->down++;
            if (ptri_make(q[0], q[1], q[2], &T[n])) n++;
        }
    }
    f->tris = n;
    qsort(T, n, sizeof *T, ptri_lo_cmp);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n && T[j].lo[0] < T[i].hi[0]; j++)
            if (ptri_overlap(&T[i], &T[j]) && f->overlaps++ == 0) {
                f->at[0] = (T[i].v[0][0] + T[i].v[1][0] + T[i].v[2][0]) / 3;
                f->at[1] = (T[i].v[0][1] + T[i].v[1][1] + T[i].v[2][1]) / 3;
            }
    free(T);
}

/* ---- refusals ---- */

static const char *const reasons[] = {
    "edge too short for its junction mouths", "junction has no valid mesh",
    "road folds back over a mouth", "road folds over itself", "sidewalk cannot be built",
    "surfaces overlap (two pieces)", "road overlaps itself", "edges cross / arms too close",
    "other"};
enum { NREASONS = sizeof reasons / sizeof *reasons };

static int reason_of(const char *m) {
    if (strstr(m, "overlaps itself")) return 6;
    if (strstr(m, " overlaps ")) return 5;
    if (strstr(m, "m long in plan")) return 0;
    if (strstr(m, "the junction at node")) return 1;
    if (strstr(m, "next to the junction mouth")) return 2;
    if (strstr(m, "folds so tightly")) return 3;
    if (strstr(m, "the sidewalk on the")) return 4;
    if (strstr(m, "crosses") || strstr(m, "degrees apart") || strstr(m, "degrees from")) return 7;
    return 8;
}

/* FNV-1a over the bytes of every primitive's name, positions, UVs and
 * indices: equal digests, equal meshes (the normals are left to the
 * encoder, so the scene may not hold them yet). */
static uint64_t digest(const pm_scene *s) {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *P = &s->prims[i];
        struct { const void *p; size_t n; } part[] = {
            {P->name, strlen(P->name)},
            {P->positions, 3 * sizeof(float) * P->vcount},
            {P->uvs, P->uvs ? 2 * sizeof(float) * P->vcount : 0},
            {P->indices, sizeof(uint32_t) * P->icount}};
        for (size_t k = 0; k < sizeof part / sizeof *part; k++)
            for (size_t b = 0; b < part[k].n; b++)
                h = (h ^ ((const unsigned char *)part[k].p)[b]) * 1099511628211ull;
    }
    return h;
}

static int env_int(const char *name, int def) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

/* One network through the api as a map editor would send it: a built one
 * checked by the oracle (its triangles added to *tris; a fault printed,
 * naming it `what`, with `extra` after, and counted in *bad), a refused
 * one a 422 whose reasons are counted once each in hist (show > 1 prints
 * every message). Returns whether it built; run is left for the caller. */
static bool build_and_check(pm_test_api_run *run, const char *body, const char *what, const char *extra,
                            int show, size_t *tris, size_t *bad, int *hist) {
    pm_test_api_build(run, &pm_api_gen_network, body, NULL);
    if (run->generated) {
        faults f;
        check_mesh(run->scene, &f);
        *tris += f.tris;
        if (f.overlaps || f.nonmanifold || f.down) {
            (*bad)++;
            fprintf(stderr, "%s: %zu overlapping pairs (first near [%.3f, %.3f]), %zu non-manifold edges, "
                    "%zu faces down\n%s", what, f.overlaps, f.at[0], f.at[1], f.nonmanifold, f.down, extra);
        }
        return true;
    }
    cr_assert_eq(run->prob.status, 422, "%s: %d %s", what, run->prob.status, run->prob.detail);
    bool seen[NREASONS] = {false};
    size_t i;
    json_t *e;
    json_array_foreach(run->prob.errors, i, e) {
        const char *m = json_string_value(json_object_get(e, "message"));
        seen[reason_of(m ? m : "")] = true;
        if (show > 1) fprintf(stderr, "%s error: %s\n", what, m ? m : "");
    }
    for (int k = 0; k < NREASONS; k++) hist[k] += seen[k];
    return false;
}

/* The forms a layout is sent in: its nodes / edges body, the same with
 * the nodes or the edges listed last first, GeoJSON in longitude /
 * latitude. */
enum form { METRES, REVERSED, EDGES_REVERSED, GEOJSON };

/* it: the layout's number (GeoJSON: the odd ones across the antimeridian,
 * every fourth over the North Pole). */
static char *layout_form(const drawn *D, enum form f, int it) {
    return f == GEOJSON ? layout_geojson(D, it) : layout_body_order(D, f == REVERSED, f == EDGES_REVERSED);
}

/* Whether the nodes / edges body as drawn builds. */
static bool builds_in_metres(const drawn *D) {
    char *body = layout_body(D);
    pm_test_api_run m;
    pm_test_api_build(&m, &pm_api_gen_network, body, NULL);
    bool ok = m.generated;
    pm_test_api_done(&m);
    free(body);
    return ok;
}

/* Runs the random layouts in one form; checks every built one with the
 * oracle and counts the refusals by reason. In another form than METRES
 * each layout is also built from its body as drawn, and those built in
 * one form but not in the other are printed; returns how many. */
static int run_layouts(enum form form) {
    static const char *const names[] = {"", " with the nodes reversed", " with the edges reversed",
                                        " as GeoJSON"};
    int count = env_int("PM_LAYOUTS", 300), show = env_int("PM_LAYOUTS_SHOW", 0);
    int only = env_int("PM_LAYOUTS_ONLY", -1), dig = env_int("PM_LAYOUTS_DIGEST", 0);
    pm_rng r;
    pm_rng_seed(&r, (uint64_t)env_int("PM_LAYOUTS_SEED", 11));
    int built[2] = {0, 0}, total[2] = {0, 0}, hist[NREASONS] = {0}, differ = 0;
    size_t tris = 0, bad = 0;
    drawn *D = malloc(sizeof *D);
    for (int it = 0; it < count; it++) {
        int kind;
        random_layout(&r, D, &kind, env_int("PM_LAYOUTS_MIN_ANGLE", 30));
        if (only >= 0 && it != only) continue;
        char *body = layout_form(D, form, it);
        if (only >= 0) fprintf(stderr, "%s\n", body);
        total[kind]++;
        pm_test_api_run run;
        char what[32];
        snprintf(what, sizeof what, "layout %d", it);
        if (build_and_check(&run, body, what, show ? body : "", show, &tris, &bad, hist)) {
            built[kind]++;
            if (dig) fprintf(stderr, "layout %d digest %016llx\n", it, (unsigned long long)digest(run.scene));
        } else if (show) {
            fprintf(stderr, "layout %d refused: %s\n%s\n", it, run.prob.detail, body);
        }
        if (form != METRES && builds_in_metres(D) != run.generated) {
            differ++;
            fprintf(stderr, "layout %d %s as drawn but not%s%s%s\n", it,
                    run.generated ? "is refused" : "builds", names[form], run.generated ? "" : ": ",
                    run.generated ? "" : run.prob.detail);
        }
        pm_test_api_done(&run);
        free(body);
    }
    free(D);
    int ok = built[0] + built[1];
    fprintf(stderr, "layouts%s: %d of %d built (%.1f %%): towns %d of %d, planar graphs %d of %d; "
            "%zu ground triangles checked, %zu built layouts with faults\n", names[form], ok, count,
            100.0 * ok / count, built[0], total[0], built[1], total[1], tris, bad);
    for (int k = 0; k < NREASONS; k++)
        if (hist[k]) fprintf(stderr, "  refused: %-40s %d layouts\n", reasons[k], hist[k]);
    if (form != METRES) fprintf(stderr, "  built in one form only: %d layouts\n", differ);
    /* Every built layout is clean. Issue 11 aims at 97 % built; 300 of
     * the 300 default layouts build today (3000 of 3000 on
     * bench/layouts.sh): the floor guards that. */
    cr_assert_eq(bad, 0, "%zu built layouts overlap, are non-manifold or face down", bad);
    cr_assert_geq(ok * 100, count * 98, "only %d of %d layouts built", ok, count);
    return differ;
}

Test(net_layouts, random_plausible_layouts_are_built_without_overlaps, .timeout = 600) {
    run_layouts(METRES);
}

/* Whether a layout builds depends on the layout, not on the order its
 * nodes are listed in (a junction merged into another once went on being
 * built on its own when it came first, and refused the layout) ... */
Test(net_layouts, random_plausible_layouts_build_whatever_the_node_order, .timeout = 600) {
    int differ = run_layouts(REVERSED);
    cr_assert_eq(differ, 0, "%d layouts build in one node order only", differ);
}

/* ... or its edges (close junctions merged over the first edge in the
 * list where one had several candidates, not the shortest). */
Test(net_layouts, random_plausible_layouts_build_whatever_the_edge_order, .timeout = 600) {
    int differ = run_layouts(EDGES_REVERSED);
    cr_assert_eq(differ, 0, "%d layouts build in one edge order only", differ);
}

/* The same layouts as a map editor exports them, GeoJSON in longitude /
 * latitude (which lists the nodes by their first position in feature
 * order), half of them across the antimeridian and a quarter over the
 * North Pole (every longitude at once): the projection to the tangent
 * plane must not cost a layout. */
Test(net_layouts, random_plausible_layouts_in_lon_lat_are_built_as_in_metres, .timeout = 600) {
    int differ = run_layouts(GEOJSON);
    cr_assert_eq(differ, 0, "%d layouts build in metres or as GeoJSON, not both", differ);
}

/* ---- networks drawn by netgenerate ---- */

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    sbuf b = {NULL, 0, 0};
    char chunk[4096];
    size_t n;
    put(&b, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, "%.*s", (int)n, chunk);
    fclose(f);
    return b.s;
}

/* Every *.json body in dir, in name order: the built ones checked by the
 * oracle, the refused ones printed. */
Test(net_layouts, networks_drawn_by_sumo_netgenerate_are_built_without_overlaps, .timeout = 600) {
    const char *dir = getenv("PM_LAYOUTS_DIR");
    bool own = !dir || !*dir;
    if (own) dir = PM_SOURCE_DIR "/tests/data/netgen";
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        names = realloc(names, (count + 1) * sizeof *names);
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, name_cmp);
    int built = 0, hist[NREASONS] = {0};
    size_t tris = 0, bad = 0;
    for (size_t i = 0; i < count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *body = read_text(path);
        cr_assert_not_null(body, "cannot read %s", path);
        pm_test_api_run run;
        int show = env_int("PM_LAYOUTS_SHOW", 0);
        if (build_and_check(&run, body, names[i], "", show, &tris, &bad, hist)) built++;
        else if (own || show) fprintf(stderr, "%s refused: %s\n", names[i], run.prob.detail);
        pm_test_api_done(&run);
        free(body);
        free(names[i]);
    }
    free(names);
    fprintf(stderr, "netgenerate networks (%s): %d of %zu built; %zu ground triangles checked, %zu built "
            "with faults\n", dir, built, count, tris, bad);
    for (int r = 0; r < NREASONS; r++)
        if (hist[r]) fprintf(stderr, "  refused: %-40s %d networks\n", reasons[r], hist[r]);
    cr_assert_eq(bad, 0, "%zu built networks overlap, are non-manifold or face down", bad);
    if (own) {
        /* The 49 bodies kept here are the ones whose roads do not overlap
         * as drawn (tools/netgen_bodies.py --feasible, seed 2026). 48
         * build; netgen_spider_0037 is refused: 14 spokes of 12.3 m roads
         * meet a ring 32.8 m out whose nodes are 14.6 m apart: the whole
         * inner disc would be one plaza of 15 nodes, and the merged
         * junction round the centre has two arms running into each other
         * across a link. A floor, not a goal. */
        cr_assert_eq(count, 49, "%zu bodies in %s", count, dir);
        cr_assert_geq(built, 48, "only %d of %zu built", built, count);
    }
}

/* A street bending 85 degrees at a degree-2 node whose neighbouring
 * points are 60 and 107 m away (too far for the node to count as a sharp
 * corner), with a dead-end street passing 12.2 m from the node: the
 * spline through the node swings out past the corner drawn and lay on the
 * dead end (refused up to session 22's main: "edge 1's road overlaps edge
 * 2's road"). The last fallback builds the node as a 2-arm junction,
 * whose corner keeps to the lines drawn: built, and clean by the oracle
 * (from SUMO netgenerate's seed-1 random network 36). */
Test(net_layouts, a_wide_bend_at_a_degree_2_node_clears_a_street_beside_it) {
    const char *body =
        "{\"sidewalk\": {\"width\": 2.79}, \"corner_radius\": 4.89, \"width\": 6.76, \"nodes\": ["
        "{\"id\": \"a\", \"position\": [416.71, -170.14]}, {\"id\": \"b\", \"position\": [389.87, -116.39]}, "
        "{\"id\": \"c\", \"position\": [481.17, -60.07]}, {\"id\": \"d\", \"position\": [411.66, -90.97]}, "
        "{\"id\": \"e\", \"position\": [338.69, -129.73]}], \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, "
        "{\"from\": \"b\", \"to\": \"c\"}, {\"from\": \"d\", \"to\": \"e\"}]}";
    pm_test_api_run run;
    size_t tris = 0, bad = 0;
    int hist[NREASONS] = {0};
    bool built = build_and_check(&run, body, "bend", "", 0, &tris, &bad, hist);
    cr_assert(built, "%s", run.prob.detail);
    cr_assert_eq(bad, 0);
    cr_assert_gt(tris, 50);
    pm_test_api_done(&run);
}
