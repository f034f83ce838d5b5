/* POST /v1/networks with a GeoJSON FeatureCollection, through the api
 * layer: snapping (tolerance, independent of feature order), lines split
 * at shared positions, rings, 422 pointers into the GeoJSON (parse and
 * generate), foreign members, the canonical form and key, the projection
 * metadata, the glTF validator, golden hashes of the derived canonical
 * form (the projection and snapping, bit for bit; the mesh itself is the
 * network generator's, with its own goldens in test_req_network.c).
 *
 * Golden hashes: when a deliberate change moves the projection or the
 * snapping, bump the network generator's version, run
 *     PM_GEOJSON_GOLDEN=print build/api_test_req_network_geojson --filter 'req_network_geojson/golden*'
 * and paste the printed hashes into `goldens` below. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "scene/meta.h"
#include "scene/rng.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_test_api.h"
#include "pm_test_validator.h"
#include "../../api/req_network_geojson.h"

extern const pm_api_generator pm_api_gen_network;
#define GEN pm_api_gen_network

typedef pm_test_api_run run;

/* A feature of one LineString: P its properties' members, C its positions. */
#define LINE(P, C)                                                                                \
    "{\"type\": \"Feature\", \"properties\": {" P "}, \"geometry\": {\"type\": \"LineString\", "  \
    "\"coordinates\": [" C "]}}"
#define FCX(X, ...) "{" X "\"type\": \"FeatureCollection\", \"features\": [" __VA_ARGS__ "]}"
#define FC(...) FCX("", __VA_ARGS__)
/* A crossroads at (10, 50): four lines from the centre, about 50 m long;
 * the east one with a bend point. */
#define C0 "[10.0, 50.0]"
#define EAST LINE("\"width\": 8", C0 ", [10.0004, 50.00002], [10.0007, 50.0]")
#define WEST LINE("", "[9.9993, 50.0], " C0)
#define NORTH LINE("\"sidewalk\": true", C0 ", [10.0, 50.00045]")
#define SOUTH LINE("\"name\": \"Südstraße\", \"highway\": \"residential\"", C0 ", [10.0, 49.99955]")
#define CROSSX(X) FCX(X, EAST ", " WEST ", " NORTH ", " SOUTH)
#define CROSS CROSSX("")

static void build(run *r, const char *body) {
    pm_test_api_build(r, &GEN, body, NULL);
    cr_assert_eq(r->rc, 0, "%s: %s", body, r->prob.detail);
}

static size_t canon_count(const run *r, const char *member) {
    return json_array_size(json_object_get(r->canon, member));
}

Test(req_network_geojson, crossroads_builds_and_passes_the_validator, .timeout = 120) {
    run r;
    build(&r, CROSS);
    cr_assert_eq(canon_count(&r, "nodes"), 5);
    cr_assert_eq(canon_count(&r, "edges"), 4);
    cr_assert_eq(r.scene->nprims, 3, "asphalt, curb, sidewalk (the north line has a sidewalk)");
    cr_assert_eq(pm_test_validate_scene(r.scene, &GEN), 0);
    pm_test_api_done(&r);
}

Test(req_network_geojson, metadata_names_origin_projection_and_edges) {
    run r;
    build(&r, CROSSX("\"origin\": [10.0, 50.0, 120], "));
    const pm_meta *geo = pm_meta_get(r.scene->meta, "geo");
    cr_assert_not_null(geo);
    const pm_meta *o = pm_meta_get(geo, "origin"), *p = pm_meta_get(geo, "projection");
    cr_assert_eq(pm_meta_get(o, "lon")->u.n, 10.0);
    cr_assert_eq(pm_meta_get(o, "lat")->u.n, 50.0);
    cr_assert_eq(pm_meta_get(o, "height")->u.n, 120.0);
    cr_assert_str_eq(pm_meta_get(o, "source")->u.s, "request");
    cr_assert_str_eq(pm_meta_get(p, "name")->u.s, "local_tangent_plane");
    cr_assert_str_eq(pm_meta_get(pm_meta_get(p, "ellipsoid"), "name")->u.s, "WGS84");
    const pm_meta *axes = pm_meta_get(p, "axes");
    cr_assert_str_eq(pm_meta_get(axes, "x")->u.s, "east");
    cr_assert_str_eq(pm_meta_get(axes, "y")->u.s, "up");
    cr_assert_str_eq(pm_meta_get(axes, "z")->u.s, "south");
    const pm_meta *edges = pm_meta_get(geo, "edges");
    cr_assert_eq(edges->u.kids.count, 4);
    const pm_meta *e0 = edges->u.kids.first;
    cr_assert_eq(pm_meta_get(e0, "feature")->u.i, 0);
    cr_assert_eq(pm_meta_get(e0, "coordinates")->u.kids.last->u.i, 2);
    /* the centre node sits at the origin, 120 m below it (no height given) */
    const json_t *n0 = NULL;
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(r.canon, "nodes"), i, n)
        if (strcmp(json_string_value(json_object_get(n, "id")), "/features/0/geometry/coordinates/0") == 0)
            n0 = json_object_get(n, "position");
    cr_assert_not_null(n0);
    cr_assert(fabs(json_real_value(json_array_get(n0, 0))) < 1e-9);
    cr_assert_float_eq(json_real_value(json_array_get(n0, 1)), -120.0, 1e-9);
    /* without an origin: the centre of the data's lon/lat box, height 0 */
    run b;
    build(&b, CROSS);
    o = pm_meta_get(pm_meta_get(b.scene->meta, "geo"), "origin");
    cr_assert_float_eq(pm_meta_get(o, "lon")->u.n, (9.9993 + 10.0007) / 2, 1e-12);
    cr_assert_float_eq(pm_meta_get(o, "lat")->u.n, 50.0, 1e-12);
    cr_assert_str_eq(pm_meta_get(o, "source")->u.s, "bbox_centre");
    pm_test_api_done(&r);
    pm_test_api_done(&b);
}

/* The crossroads again, with its centre 0.0004 degrees west of the
 * antimeridian: its east arm ends at -179.9997 (GeoJSON's longitudes stay
 * within [-180, 180]). The default origin is the centre of the narrower
 * box, across the antimeridian (not the middle of the globe), and every
 * node lies where it lies in the crossroads at 10 degrees east, to the
 * millimetre. */
#define A0 "[179.9996, 50.0]"
#define AEAST LINE("\"width\": 8", A0 ", [-180.0, 50.00002], [-179.9997, 50.0]")
#define AWEST LINE("", "[179.9989, 50.0], " A0)
#define ANORTH LINE("\"sidewalk\": true", A0 ", [179.9996, 50.00045]")
#define ASOUTH LINE("", A0 ", [179.9996, 49.99955]")
Test(req_network_geojson, a_network_across_the_antimeridian_builds) {
    run r, c;
    build(&r, FC(AEAST ", " AWEST ", " ANORTH ", " ASOUTH));
    build(&c, CROSS);
    const pm_meta *o = pm_meta_get(pm_meta_get(r.scene->meta, "geo"), "origin");
    cr_assert_float_eq(pm_meta_get(o, "lon")->u.n, 179.9996, 1e-9);
    cr_assert_str_eq(pm_meta_get(o, "source")->u.s, "bbox_centre");
    const json_t *rn = json_object_get(r.canon, "nodes"), *cn = json_object_get(c.canon, "nodes");
    cr_assert_eq(json_array_size(rn), 5);
    cr_assert_eq(json_array_size(cn), 5);
    for (size_t i = 0; i < 5; i++) {   /* the same node ids (pointers), maybe in another order */
        const json_t *a = json_array_get(rn, i), *b = NULL;
        for (size_t j = 0; j < 5 && !b; j++)
            if (json_equal(json_object_get(json_array_get(cn, j), "id"), json_object_get(a, "id")))
                b = json_array_get(cn, j);
        cr_assert_not_null(b, "node %s", json_string_value(json_object_get(a, "id")));
        for (size_t k = 0; k < 3; k++) {
            double x = json_real_value(json_array_get(json_object_get(a, "position"), k));
            double y = json_real_value(json_array_get(json_object_get(b, "position"), k));
            cr_assert(fabs(x - y) < 1e-3, "node %zu axis %zu: %.6f against %.6f", i, k, x, y);
        }
    }
    cr_assert_eq(pm_test_validate_scene(r.scene, &GEN), 0);
    pm_test_api_done(&r);
    pm_test_api_done(&c);
}

/* A crossroads over the North Pole: its centre 25 m from the pole on the
 * prime meridian, arms of 60 m north (across the pole, ending on the
 * 180th meridian), south, east and west (positions written with an exact
 * inverse of the ellipsoid's tangent plane at the centre). Its positions
 * have longitudes from -67 to 180 degrees, which is no trouble for the
 * projection: the ten distances between its five nodes are the drawn ones
 * (60, 84.853, 120 m) to the millimetre, as in the crossroads drawn in
 * metres, and the mesh builds and passes the validator. */
#define P0 "[0.0, 89.9997761741]"
#define PNORTH LINE("", P0 ", [180.0, 89.9996866438]")
#define PSOUTH LINE("", P0 ", [0.0, 89.9992389921]")
#define PEAST LINE("", P0 ", [67.3801350533, 89.9994180528]")
#define PWEST LINE("", P0 ", [-67.3801350533, 89.9994180528]")
static int dist_cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void node_distances(const run *r, double out[10]) {
    const json_t *nodes = json_object_get(r->canon, "nodes");
    cr_assert_eq(json_array_size(nodes), 5);
    size_t k = 0;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = i + 1; j < 5; j++) {
            const json_t *a = json_object_get(json_array_get(nodes, i), "position");
            const json_t *b = json_object_get(json_array_get(nodes, j), "position");
            double dx = json_real_value(json_array_get(a, 0)) - json_real_value(json_array_get(b, 0));
            double dz = json_real_value(json_array_get(a, 2)) - json_real_value(json_array_get(b, 2));
            out[k++] = sqrt(dx * dx + dz * dz);
        }
    qsort(out, 10, sizeof *out, dist_cmp);
}

Test(req_network_geojson, a_network_over_the_north_pole_builds_true_to_size, .timeout = 120) {
    run r, m;
    build(&r, FC(PNORTH ", " PSOUTH ", " PEAST ", " PWEST));
    build(&m, "{\"nodes\": [{\"id\": \"c\", \"position\": [0, 0, 0]}, {\"id\": \"n\", \"position\": [0, 0, -60]}, "
              "{\"id\": \"s\", \"position\": [0, 0, 60]}, {\"id\": \"e\", \"position\": [60, 0, 0]}, "
              "{\"id\": \"w\", \"position\": [-60, 0, 0]}], \"edges\": [{\"from\": \"c\", \"to\": \"n\"}, "
              "{\"from\": \"c\", \"to\": \"s\"}, {\"from\": \"c\", \"to\": \"e\"}, {\"from\": \"c\", \"to\": \"w\"}]}");
    double dr[10], dm[10];
    node_distances(&r, dr);
    node_distances(&m, dm);
    for (int i = 0; i < 10; i++) cr_assert(fabs(dr[i] - dm[i]) < 1e-3, "distance %d: %.6f against %.6f", i, dr[i], dm[i]);
    cr_assert_float_eq(dm[9], 120.0, 1e-9);
    cr_assert_eq(pm_test_validate_scene(r.scene, &GEN), 0);
    pm_test_api_done(&r);
    pm_test_api_done(&m);
}

/* A street drawn to end on another street's segment, not on one of its
 * positions (a map editor snapping to the segment without adding a vertex
 * to it): the east-west street is split there and the two join in a T,
 * exactly as when the east-west street has a position at that point. Also
 * when the end lies 0.22 m off the segment (within the tolerance). Only a
 * street's end does so: a street with an interior position on another's
 * segment still crosses it without a node (a 422), as a bend point near
 * another road is not a junction drawn. */
#define TMAIN LINE("", "[10.0, 50.0], [10.0014, 50.0]")
#define TMAIN3 LINE("", "[10.0, 50.0], [10.0007, 50.0], [10.0014, 50.0]")
#define TSTEM LINE("", "[10.0007, 50.0], [10.0007, 50.0005]")
#define TSTEM_OFF LINE("", "[10.0007, 50.000002], [10.0007, 50.0005]")
#define TCROSS LINE("", "[10.0007, 49.9995], [10.0007, 50.0], [10.0007, 50.0005]")

static size_t geo_edges(const run *r) {
    return pm_meta_get(pm_meta_get(r->scene->meta, "geo"), "edges")->u.kids.count;
}

Test(req_network_geojson, a_street_ending_on_another_streets_segment_joins_it_in_a_t, .timeout = 120) {
    run seg, pos, off, x;
    build(&seg, FC(TMAIN ", " TSTEM));
    build(&pos, FC(TMAIN3 ", " TSTEM));
    build(&off, FC(TMAIN ", " TSTEM_OFF));
    pm_test_api_parse(&x, &GEN, FC(TMAIN ", " TCROSS), NULL);
    cr_assert_eq(x.rc, -1);
    cr_assert(strstr(x.prob.detail, "without a node"), "%s", x.prob.detail);
    cr_assert_eq(canon_count(&seg, "nodes"), 4, "%s", seg.canon_text);
    cr_assert_eq(canon_count(&seg, "edges"), 3, "%s", seg.canon_text);
    cr_assert_eq(geo_edges(&seg), 3);
    cr_assert_eq(canon_count(&off, "edges"), 3, "%s", off.canon_text);
    /* The T is named by the stem's end, the one position there, and has
     * three edges. */
    size_t i, at_tee = 0;
    json_t *e;
    json_array_foreach(json_object_get(seg.canon, "edges"), i, e)
        for (int end = 0; end < 2; end++)
            at_tee += strcmp(json_string_value(json_object_get(e, end ? "to" : "from")),
                             "/features/1/geometry/coordinates/0") == 0;
    cr_assert_eq(at_tee, 3, "%s", seg.canon_text);
    /* The same mesh as with a position of the street at the T. */
    const pm_prim *a = &seg.scene->prims[0], *b = &pos.scene->prims[0];
    cr_assert_eq(a->vcount, b->vcount);
    cr_assert_eq(a->icount, b->icount);
    cr_assert_eq(memcmp(a->positions, b->positions, 3 * sizeof(float) * a->vcount), 0);
    cr_assert_eq(memcmp(a->indices, b->indices, sizeof(uint32_t) * a->icount), 0);
    /* Both pieces of the split street say which of its positions they lie
     * between (the segment's ends where they end inside it). */
    const pm_meta *e0 = pm_meta_get(pm_meta_get(seg.scene->meta, "geo"), "edges")->u.kids.first;
    for (const pm_meta *g = e0; g && pm_meta_get(g, "feature")->u.i == 0; g = g->next) {
        cr_assert_eq(pm_meta_get(g, "coordinates")->u.kids.first->u.i, 0);
        cr_assert_eq(pm_meta_get(g, "coordinates")->u.kids.last->u.i, 1);
    }
    cr_assert_eq(pm_test_validate_scene(seg.scene, &GEN), 0);
    pm_test_api_done(&seg);
    pm_test_api_done(&pos);
    pm_test_api_done(&off);
    pm_test_api_done(&x);
}

/* Random T's snapped onto a segment: a straight street 80-200 m long in
 * any direction, a side street starting 0-0.45 m off it (within the
 * default tolerance) at 20-80 % of its length and leaving at 40-140
 * degrees for 40-80 m, widths 5-10 m. Each must build, with the mesh the
 * same street gives when it has a position of its own at the side
 * street's start (the topology drawn explicitly): the same triangles, bit
 * for bit. */
static void put_ll(char *b, size_t cap, double x, double z) {
    /* metres east / south of (10, 50) to degrees, linearly: both bodies
     * share these numbers, so the projection's accuracy does not matter */
    snprintf(b, cap, "[%.10f, %.10f]", 10.0 + x / 71700.0, 50.0 - z / 111200.0);
}

Test(req_network_geojson, random_ts_snapped_onto_a_segment_build_as_drawn_explicitly, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 23);
    for (int it = 0; it < 200; it++) {
        double ang = pm_rng_range(&r, 0, 2 * 3.14159265358979), len = pm_rng_range(&r, 80, 200);
        double ux = cos(ang), uz = sin(ang), t = pm_rng_range(&r, 0.2, 0.8), off = pm_rng_range(&r, 0, 0.45);
        double side = pm_rng_chance(&r, 0.5) ? 1 : -1, turn = pm_rng_range(&r, 40, 140) * 3.14159265358979 / 180;
        double sl = pm_rng_range(&r, 40, 80), w0 = pm_rng_range(&r, 5, 10), w1 = pm_rng_range(&r, 5, 10);
        double ax = 0, az = 0, bx = len * ux, bz = len * uz;
        double px = t * bx - side * off * uz, pz = t * bz + side * off * ux;
        double dx = ux * cos(turn) - side * uz * sin(turn), dz = uz * cos(turn) + side * ux * sin(turn);
        char A[64], B[64], P[64], Q[64], seg[1024], pos[1024];
        put_ll(A, sizeof A, ax, az);
        put_ll(B, sizeof B, bx, bz);
        put_ll(P, sizeof P, px, pz);
        put_ll(Q, sizeof Q, px + sl * dx, pz + sl * dz);
        snprintf(seg, sizeof seg, FC(LINE("\"width\": %.2f", "%s, %s") ", " LINE("\"width\": %.2f", "%s, %s")),
                 w0, A, B, w1, P, Q);
        snprintf(pos, sizeof pos, FC(LINE("\"width\": %.2f", "%s, %s, %s") ", " LINE("\"width\": %.2f", "%s, %s")),
                 w0, A, P, B, w1, P, Q);
        run a, b;
        pm_test_api_build(&a, &GEN, seg, NULL);
        pm_test_api_build(&b, &GEN, pos, NULL);
        cr_assert_eq(b.rc, 0, "case %d, drawn explicitly: %s", it, b.prob.detail);
        cr_assert_eq(a.rc, 0, "case %d: %s\n%s", it, a.prob.detail, seg);
        cr_assert_eq(canon_count(&a, "edges"), 3, "case %d: %s", it, a.canon_text);
        const pm_prim *pa = &a.scene->prims[0], *pb = &b.scene->prims[0];
        cr_assert(pa->vcount == pb->vcount && pa->icount == pb->icount &&
                  memcmp(pa->positions, pb->positions, 3 * sizeof(float) * pa->vcount) == 0 &&
                  memcmp(pa->indices, pb->indices, sizeof(uint32_t) * pa->icount) == 0,
                  "case %d: not the mesh of the street with a position there", it);
        pm_test_api_done(&a);
        pm_test_api_done(&b);
    }
}

/* No T where the tolerance is 0 (equal positions only), or where the
 * street passing is on another layer (a bridge over a street's end). */
Test(req_network_geojson, no_t_without_tolerance_or_across_layers) {
    run z, br;
    pm_test_api_parse(&z, &GEN, FCX("\"tolerance\": 0, ", TMAIN ", " TSTEM_OFF), NULL);
    cr_assert_eq(z.rc, 0, "%s", z.prob.detail);
    cr_assert_eq(canon_count(&z, "edges"), 2, "%s", z.canon_text);
    pm_test_api_parse(&br, &GEN, FC(LINE("\"layer\": 1", "[10.0, 50.0], [10.0014, 50.0]") ", " TSTEM_OFF), NULL);
    cr_assert_eq(br.rc, 0, "%s", br.prob.detail);
    cr_assert_eq(canon_count(&br, "edges"), 2, "%s", br.canon_text);
    pm_test_api_done(&z);
    pm_test_api_done(&br);
}

/* Positions closer than the tolerance become one node, at their mean. */
Test(req_network_geojson, snapping_follows_the_tolerance) {
    /* the west line ends 0.3 m west of the centre (0.0000042 degrees of longitude) */
    const char *body = "{\"tolerance\": %s, \"type\": \"FeatureCollection\", \"features\": ["
        LINE("", C0 ", [10.0007, 50.0]") ", " LINE("", "[9.9993, 50.0], [9.9999958, 50.0]") ", "
        LINE("", C0 ", [10.0, 50.00045]") "]}";
    char buf[1024];
    snprintf(buf, sizeof buf, body, "0.5");
    run r;
    build(&r, buf);
    cr_assert_eq(canon_count(&r, "nodes"), 4, "snapped: %s", r.canon_text);
    snprintf(buf, sizeof buf, body, "0.2");
    run s;
    pm_test_api_parse(&s, &GEN, buf, NULL);
    cr_assert_eq(s.rc, 0, "%s", s.prob.detail);
    cr_assert_eq(canon_count(&s, "nodes"), 5, "0.2 m apart is not shared at 0.2: %s", s.canon_text);
    pm_test_api_done(&r);
    pm_test_api_done(&s);
}

/* The nodes (positions and order) do not depend on the features' order,
 * nor do chains of close positions (a-b, b-c within tolerance, a-c not). */
Test(req_network_geojson, snapping_ignores_feature_order) {
    /* three ends near the centre, 0.3 m apart in a row: one node */
    const char *a = LINE("", "[9.9999958, 50.0], [9.9993, 50.0]");
    const char *b = LINE("", C0 ", [10.0, 50.00045]");
    const char *c = LINE("", "[10.0000042, 50.0], [10.0007, 50.0]");
    const char *d = LINE("", "[10.0, 49.99955], [10.0000042, 50.0]");
    const char *orders[][4] = {{a, b, c, d}, {d, c, b, a}, {c, a, d, b}, {b, d, a, c}};
    char *first = NULL;
    for (size_t i = 0; i < 4; i++) {
        char buf[2048];
        snprintf(buf, sizeof buf, "{\"type\": \"FeatureCollection\", \"tolerance\": 0.35, "
                 "\"origin\": [10, 50], \"features\": [%s, %s, %s, %s]}", orders[i][0], orders[i][1],
                 orders[i][2], orders[i][3]);
        run r;
        pm_test_api_parse(&r, &GEN, buf, NULL);
        cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
        json_t *nodes = json_object_get(r.canon, "nodes");
        cr_assert_eq(json_array_size(nodes), 5, "%s", r.canon_text);
        json_t *pos = json_array();
        size_t k;
        json_t *n;
        json_array_foreach(nodes, k, n) json_array_append(pos, json_object_get(n, "position"));
        char *text = json_dumps(pos, JSON_COMPACT);
        json_decref(pos);
        if (!first) first = text;
        else {
            cr_assert_str_eq(text, first, "order %zu", i);
            free(text);
        }
        pm_test_api_done(&r);
    }
    free(first);
}

/* The snapping against brute force: every pair compared, joined when
 * within tolerance in plan, chained. Random blobs, grids at exactly the
 * tolerance, streets along one meridian (one x), tolerance 0. */
static uint32_t bf_find(uint32_t *p, uint32_t i) {
    while (p[i] != i) i = p[i];
    return i;
}

Test(req_network_geojson, snapping_matches_brute_force) {
    enum { N = 600 };
    static double pos[3 * N];
    static uint32_t cl[N], parent[N];
    uint64_t s = 12345;
    for (int round = 0; round < 40; round++) {
        double tol = round % 8 == 7 ? 0.0 : 0.1 + 0.05 * (round % 5);
        for (int i = 0; i < N; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(s >> 11) / 9007199254740992.0;
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double w = (double)(s >> 11) / 9007199254740992.0;
            switch (round % 4) {
            case 0: pos[3 * i] = 6 * u, pos[3 * i + 2] = 6 * w; break;          /* a blob */
            case 1: pos[3 * i] = tol * (i % 25), pos[3 * i + 2] = tol * (i / 25); break; /* at tol */
            case 2: pos[3 * i] = 0.0, pos[3 * i + 2] = 150 * u; break;          /* one meridian */
            default: pos[3 * i] = (int)(40 * u) * 0.25, pos[3 * i + 2] = (int)(40 * w) * 0.25;
            }
            pos[3 * i + 1] = w;
            parent[i] = (uint32_t)i;
        }
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                double dx = pos[3 * j] - pos[3 * i], dz = pos[3 * j + 2] - pos[3 * i + 2];
                if (dx * dx + dz * dz <= tol * tol) parent[bf_find(parent, (uint32_t)j)] = bf_find(parent, (uint32_t)i);
            }
        pm_arena *a = pm_arena_create(0);
        size_t nc = pm_api__geojson_clusters(a, pos, N, tol, cl);
        size_t roots = 0;
        for (int i = 0; i < N; i++) roots += bf_find(parent, (uint32_t)i) == (uint32_t)i;
        cr_assert_eq(nc, roots, "round %d: %zu clusters, brute force %zu", round, nc, roots);
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++)
                cr_assert_eq(cl[i] == cl[j], bf_find(parent, (uint32_t)i) == bf_find(parent, (uint32_t)j),
                             "round %d: %d and %d", round, i, j);
        pm_arena_destroy(a);
    }
}

/* A line through a position another line ends at is split there; a line
 * whose interior position another line also passes through is split too. */
Test(req_network_geojson, lines_split_at_shared_positions) {
    run r;
    build(&r, FC(LINE("", "[9.9993, 50.0], " C0 ", [10.0007, 50.0]") ", "
                 LINE("", "[10.0, 50.00045], " C0 ", [10.0, 49.99955]") ", "
                 LINE("", "[10.0007, 50.0], [10.0007, 50.00045]")));
    cr_assert_eq(canon_count(&r, "nodes"), 6, "%s", r.canon_text);
    cr_assert_eq(canon_count(&r, "edges"), 5, "%s", r.canon_text);
    json_t *e = json_array_get(json_object_get(r.canon, "edges"), 1);
    cr_assert_str_eq(json_string_value(json_object_get(e, "from")), "/features/0/geometry/coordinates/1");
    cr_assert_str_eq(json_string_value(json_object_get(e, "to")), "/features/0/geometry/coordinates/2");
    pm_test_api_done(&r);
}

/* MultiLineString: each line is a line; a closed ring gets two nodes of
 * its own, so that no edge is a loop. */
Test(req_network_geojson, multilinestrings_and_rings, .timeout = 60) {
    run r;
    build(&r, FC("{\"type\": \"Feature\", \"properties\": null, \"geometry\": {\"type\": "
                 "\"MultiLineString\", \"coordinates\": [[[10.0, 50.0], [10.0008, 50.0]], "
                 "[[10.0, 50.0], [9.9994, 50.0003], [9.9988, 50.0], [9.9994, 49.9997], [10.0, 50.0]]]}}"));
    cr_assert_eq(canon_count(&r, "edges"), 4, "%s", r.canon_text);
    cr_assert_eq(canon_count(&r, "nodes"), 4, "%s", r.canon_text);
    cr_assert_eq(pm_test_validate_scene(r.scene, &GEN), 0);
    pm_test_api_done(&r);
}

/* ---- 422s, pointed into the GeoJSON ---- */

static void expect(const char *body, bool generate, const char *pointer, const char *word) {
    pm_test_api_expect_422(&GEN, body, NULL, generate, pointer, word);
}

Test(req_network_geojson, bad_shapes_name_their_pointers) {
    expect(FC(EAST ", " WEST ", " NORTH ", " LINE("", C0 ", [10.0, 49.99955], [\"x\", 50]")),
           false, "/features/3/geometry/coordinates/2/0", "longitude");
    expect(FC(EAST ", " LINE("", C0 ", [10.0, 91]")), false, "/features/1/geometry/coordinates/1/1",
           "latitude");
    expect(FC(EAST ", " LINE("", C0 ", [10.0, 50.1, 1, 2]")), false,
           "/features/1/geometry/coordinates/1", "position");
    expect(FC(EAST ", " LINE("", C0)), false, "/features/1/geometry/coordinates", "at least 2");
    expect(FC(EAST ", {\"type\": \"Feature\", \"properties\": {}, \"geometry\": {\"type\": \"Point\", "
              "\"coordinates\": [10, 50]}}"), false, "/features/1/geometry/type", "LineString");
    expect(FC(EAST ", {\"type\": \"Feature\", \"properties\": {}, \"geometry\": null}"), false,
           "/features/1/geometry", "without geometry");
    expect(FC("{\"type\": \"Feature\", \"geometry\": {\"type\": \"LineString\", \"coordinates\": "
              "[[10, 50], [10.001, 50]]}}"), false, "/features/0/properties", "required");
    expect(FC("{\"type\": \"Feat\", \"properties\": {}, \"geometry\": {\"type\": \"LineString\", "
              "\"coordinates\": [[10, 50], [10.001, 50]]}}"), false, "/features/0/type", "Feature");
    expect(FC(EAST ", 7"), false, "/features/1", "Feature");
    expect("{\"type\": \"Feature\", \"features\": []}", false, "/type", "FeatureCollection");
    expect("{\"type\": \"FeatureCollection\", \"features\": []}", false, "/features", "at least 1");
    expect("{\"type\": \"FeatureCollection\"}", false, "/features", "required");
    expect(FC(LINE("\"layer\": 1.5", "[10, 50], [10.001, 50]")), false, "/features/0/properties/layer",
           "integer");
    expect(FC(LINE("\"elevation\": \"high\"", "[10, 50], [10.001, 50]")), false,
           "/features/0/properties/elevation", "metres");
    expect(FC(LINE("", "[10, 50], [10, 50.0000001]")), false, "/features/0/geometry/coordinates",
           "within tolerance");
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    lim.max_points = 8;     /* the crossroads has 9 positions */
    pm_test_api_expect_422(&GEN, CROSS, &lim, false, "/features", "max_points");
    expect(FC(LINE("", "[10, 50], [10.5, 50], [13, 50]")), false,
           "/features/0/geometry/coordinates/2", "100 km");
}

Test(req_network_geojson, options_and_unknown_members) {
    /* the top level is the request: a typo there is refused */
    expect(CROSSX("\"tolerence\": 1, "), false, "/tolerence", "unknown field");
    expect(CROSSX("\"tolerance\": 6, "), false, "/tolerance", "[0.001, 5]");
    expect(CROSSX("\"tolerance\": 1e-9, "), false, "/tolerance", "must be 0 or");
    expect(CROSSX("\"origin\": [200, 50], "), false, "/origin/0", "longitude");
    expect(CROSSX("\"crs\": {\"type\": \"name\", \"properties\": {\"name\": \"EPSG:3857\"}}, "),
           false, "/crs", "CRS84");
    expect(CROSSX("\"bbox\": [1, 2, 3], "), false, "/bbox", "4 or 6");
    /* network options pass through with their own pointers */
    expect(CROSSX("\"corner_radius\": -1, "), false, "/corner_radius", NULL);
    expect(CROSSX("\"sidewalk\": {\"widht\": 2}, "), false, "/sidewalk/widht", "unknown field");
    /* members of features, geometries and properties that are not ours are
     * foreign members (RFC 7946 6.1): ignored, and not in the key */
    run a, b;
    build(&a, CROSS);
    build(&b, "{\"name\": \"streets\", \"bbox\": [9.9993, 49.99955, 10.0007, 50.00045], "
              "\"crs\": {\"type\": \"name\", \"properties\": {\"name\": \"urn:ogc:def:crs:OGC:1.3:CRS84\"}},"
              " \"type\": \"FeatureCollection\", \"features\": ["
              "{\"id\": 17, \"type\": \"Feature\", \"title\": \"x\", \"properties\": {\"width\": 8.0, "
              "\"osm_id\": 4}, \"geometry\": {\"coordinates\": [" C0 ", [10.0004, 50.00002], [10.0007, "
              "50.0]], \"type\": \"LineString\", \"bbox\": [0, 0, 1, 1]}}, " WEST ", " NORTH ", " SOUTH "]}");
    cr_assert_str_eq(a.canon_text, b.canon_text);
    pm_test_api_done(&a);
    pm_test_api_done(&b);
}

/* Errors of the nodes / edges checks and of generation come back as
 * pointers into the GeoJSON, with the edge's positions named. */
Test(req_network_geojson, network_errors_point_into_the_geojson, .timeout = 60) {
    expect(FC(EAST ", " LINE("\"width\": -3", "[9.9993, 50.0], " C0)), false,
           "/features/1/properties/width", NULL);
    expect(FC(EAST ", " LINE("\"sidewalk\": {\"width\": 0}", "[9.9993, 50.0], " C0)), false,
           "/features/1/properties/sidewalk/width", NULL);
    /* two lines crossing without a shared position */
    expect(FC(LINE("", "[9.9993, 50.0], [10.0007, 50.0]") ", " LINE("", "[10.0, 50.00045], [10.0, 49.99955]")),
           false, "/features/1/geometry/coordinates", "crosses /features/0/geometry/coordinates "
           "(positions 0 to 1)");
    /* two lines leaving a node 2 degrees apart */
    expect(FC(EAST ", " LINE("", C0 ", [10.0007, 50.000011]")), false,
           "/features/0/geometry/coordinates/0", "degrees");
    /* too wide for the room: refused by generation, named by the line */
    run r;
    pm_test_api_build(&r, &GEN, FC(LINE("\"width\": 30", "[10, 50], [10.0001, 50]") ", "
                                   LINE("\"width\": 30", "[10, 50], [10, 50.0001]") ", "
                                   LINE("\"width\": 30", "[10, 50], [9.9999, 50]")), NULL);
    cr_assert_eq(r.rc, -1);
    cr_assert_eq(r.prob.status, 422);
    size_t i;
    json_t *e;
    json_array_foreach(r.prob.errors, i, e) {
        const char *p = json_string_value(json_object_get(e, "pointer"));
        cr_assert(strncmp(p, "/features/", 10) == 0, "pointer %s is not into the GeoJSON", p);
    }
    cr_assert(pm_test_api_has_error(&r.prob, "/features/0/geometry/coordinates/0", "junction at node "
                                    "\"/features/0/geometry/coordinates/0\""));
    cr_assert(pm_test_api_has_error(&r.prob, "/features/1/geometry/coordinates", "(positions 0 to 1)"));
    pm_test_api_done(&r);
}

/* ---- canonical form and key ---- */

Test(req_network_geojson, same_geojson_same_key_and_unlike_nodes_edges) {
    run a, b, c;
    build(&a, CROSS);
    build(&b, CROSS);
    cr_assert_str_eq(a.canon_text, b.canon_text);
    pm_api_key ka = pm_api_cache_key(&GEN, a.canon, PM_API_FMT_GLB);
    pm_api_key kb = pm_api_cache_key(&GEN, b.canon, PM_API_FMT_GLB);
    cr_assert(memcmp(&ka, &kb, sizeof ka) == 0);
    /* the derived nodes / edges document is an ordinary request: sent as
     * such it reads the same, but its key differs (no "geojson" member:
     * its response carries no projection) */
    json_t *plain = json_deep_copy(a.canon);
    json_object_del(plain, "geojson");
    char *text = json_dumps(plain, JSON_COMPACT | JSON_SORT_KEYS);
    build(&c, text);
    cr_assert_null(json_object_get(c.canon, "geojson"));
    json_object_del(a.canon, "geojson");
    cr_assert(json_equal(c.canon, a.canon), "%s", text);
    json_t *full = json_deep_copy(b.canon);
    pm_api_key kc = pm_api_cache_key(&GEN, c.canon, PM_API_FMT_GLB);
    cr_assert(memcmp(&kc, &kb, sizeof kc) != 0);
    cr_assert_null(pm_meta_get(c.scene->meta, "geo"));
    json_decref(full);
    free(text);
    json_decref(plain);
    pm_test_api_done(&a);
    pm_test_api_done(&b);
    pm_test_api_done(&c);
}

Test(req_network_geojson, output_is_deterministic) {
    cr_assert_eq(pm_test_api_glb_hash(&GEN, CROSS), pm_test_api_glb_hash(&GEN, CROSS));
}

/* The README's Rothenburg example, read from README.md itself: two
 * junctions (Marktplatz, Ploenlein), six roads, sidewalks, and a GLB and
 * glTF the validator passes. */
Test(req_network_geojson, readme_rothenburg_builds_and_validates, .timeout = 120) {
    FILE *f = fopen(PM_SOURCE_DIR "/README.md", "rb");
    cr_assert_not_null(f);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *mark = "cat > rothenburg.geojson <<'EOF'\n";
    char *start = strstr(text, mark), *end = start ? strstr(start, "\nEOF\n") : NULL;
    cr_assert(start && end, "README.md has no rothenburg.geojson block");
    *end = 0;
    run r;
    build(&r, start + strlen(mark));
    cr_assert_eq(pm_meta_get(r.scene->meta, "junctions")->u.i, 2);
    cr_assert_eq(pm_meta_get(r.scene->meta, "roads_count")->u.i, 6);
    cr_assert_eq(pm_meta_get(r.scene->meta, "warnings")->u.kids.count, 0);
    cr_assert_eq(r.scene->nprims, 3);
    cr_assert_eq(pm_test_validate_scene(r.scene, &GEN), 0);
    pm_test_api_done(&r);
}

/* The canonical form carries every projected position as a double: its
 * hash pins the projection and the snapping to the last bit. */
Test(req_network_geojson, golden_canonical_hashes) {
    static const struct { const char *name, *body; uint64_t hash; } goldens[] = {
        {"cross", CROSS, 0x25e14a624367231eull},
        {"cross_origin", CROSSX("\"origin\": [10.0001, 49.9999, 250], \"tolerance\": 0, "), 0xdbf29aa75b6f3a5cull},
        {"ring", FC("{\"type\": \"Feature\", \"properties\": null, \"geometry\": {\"type\": "
                    "\"MultiLineString\", \"coordinates\": [[[10.0, 50.0], [10.0008, 50.0]], "
                    "[[10.0, 50.0], [9.9994, 50.0003, 4], [9.9988, 50.0], [9.9994, 49.9997], [10.0, 50.0]]]}}"), 0x7e747bf68fabc239ull},
    };
    bool print = getenv("PM_GEOJSON_GOLDEN") && strcmp(getenv("PM_GEOJSON_GOLDEN"), "print") == 0;
    for (size_t i = 0; i < sizeof goldens / sizeof *goldens; i++) {
        run r;
        pm_test_api_parse(&r, &GEN, goldens[i].body, NULL);
        cr_assert_eq(r.rc, 0, "%s: %s", goldens[i].name, r.prob.detail);
        uint64_t h = XXH3_64bits(r.canon_text, strlen(r.canon_text));
        if (print) printf("        {\"%s\", ..., 0x%016llxull},\n", goldens[i].name, (unsigned long long)h);
        else cr_assert_eq(h, goldens[i].hash, "%s: 0x%016llx", goldens[i].name, (unsigned long long)h);
        pm_test_api_done(&r);
    }
}
