/* The junction cache's fast paths (core/network/network_jcache.c: the
 * doubt scan four triangles a time, rmax eight vertices a time, each
 * entry's corners made into a table once and copied per node) against its
 * plain paths, whole networks compared: random towns (jittered or whole-
 * metre grids, turned by any angle, some edges bent, sidewalks on most
 * or none, fillets from none to wide)
 * built both ways must give the same return code, the same problems and
 * the same bytes once encoded as the JSON mesh (the nodes' "corners" with
 * their moved fillet points included). network_jcache.c is compiled into
 * this test with its plain switch below (its external symbols are defined
 * here, so the linker takes this copy). */
#include <criterion/criterion.h>
#include <stdbool.h>

static bool fast_off;   /* every fast path off */
#define PM__JCACHE_PLAIN fast_off
#include "../../core/network/network_jcache.c"

#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "scene/rng.h"
#include "pm_test_network.h"

/* A gx x gz town s apart, turned by turn radians; jittered or on whole
 * metres, some edges bent, sidewalks on most (or none). */
static void random_town(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 6), gz = (int)pm_rng_int(r, 3, 5);
    bool whole = pm_rng_chance(r, 0.4), sw = pm_rng_chance(r, 0.7);
    double S = whole ? (double)pm_rng_int(r, 25, 90) : pm_rng_range(r, 25, 90);
    double turn = pm_rng_chance(r, 0.4) ? 0.0 : pm_rng_range(r, 0, 6.283185307179586);
    double c = cos(turn), s = sin(turn), o[2] = {pm_rng_range(r, -5000, 5000), pm_rng_range(r, -5000, 5000)};
    if (whole) o[0] = round(o[0]), o[1] = round(o[1]);   /* (unturned: junctions one another's copies) */
    double w0 = pm_rng_chance(r, 0.6) ? 7 : 0;   /* one width for every edge, or each its own */
    uint32_t id[6][5];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double x = i * S, z = -j * S;
            if (!whole) x += pm_rng_range(r, -3, 3), z += pm_rng_range(r, -3, 3);
            double y = !whole && pm_rng_chance(r, 0.15) ? pm_rng_range(r, -2, 2) : 0;
            /* (rounded as a request's numbers are: neighbours' arms then
             * differ in their last bits only) */
            id[i][j] = node(n, round((o[0] + c * x - s * z) * 1000) / 1000, y,
                            round((o[1] + s * x + c * z) * 1000) / 1000);
        }
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx && (whole || pm_rng_chance(r, 0.9))) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], w0 > 0 ? w0 : pm_rng_range(r, 4, 11));
                if (!whole && pm_rng_chance(r, 0.3)) {
                    const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                    bend(n, e, (p[0] + q[0]) / 2 + pm_rng_range(r, -6, 6), (p[2] + q[2]) / 2 + pm_rng_range(r, -6, 6));
                }
            }
            if (j + 1 < gz && (whole || pm_rng_chance(r, 0.9)))
                edge(n, id[i][j], id[i][j + 1], w0 > 0 ? w0 : pm_rng_range(r, 4, 11));
        }
    if (n->nedges == 0) edge(n, id[0][0], id[1][0], 7);
    double w = pm_rng_range(r, 0.8, 4), ch = pm_rng_range(r, 0.02, 0.3);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = sw && pm_rng_chance(r, 0.85);
        n->edges[e].sidewalk = (pm_junction_sidewalk){w, ch};
    }
    n->p.corner_radius = pm_rng_chance(r, 0.2) ? 0 : pm_rng_range(r, 0, 12);
    n->p.corner_segments = (uint32_t)pm_rng_int(r, 2, 10);
    n->p.max_segment = pm_rng_chance(r, 0.3) ? 1000 : pm_rng_range(r, 2, 10);
    finish(n);
}

/* Whether the n bytes at h hold the string w. */
static bool holds(const char *h, size_t n, const char *w) {
    size_t k = strlen(w);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(h + i, w, k) == 0) return true;
    return false;
}

typedef struct built {
    pm_arena *a;
    int rc;
    pm_network_diag d;
    pm_api_buf json;
    size_t reused;
} built;

static built build(const net *n, bool plain_path) {
    built b = {.a = pm_arena_create(1 << 20)};
    cr_assert(b.a);
    pm_scene *s = NULL;
    fast_off = plain_path;
    b.rc = pm_network_generate(b.a, &n->p, &s, &b.d);
    fast_off = false;
    b.reused = b.d.junctions_reused;
    if (b.rc == PM_OK) {
        cr_assert(s);
        cr_assert_eq(pm_api_encode(s, pm_api_find_generator("/v1/networks"), NULL, PM_API_FMT_JSON, &b.json), 0);
    }
    return b;
}

Test(network_jcache_fast, towns_are_the_same_with_and_without_the_fast_paths, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261214);
    int built_ok = 0, with_corners = 0;
    size_t reused = 0;
    for (int it = 0; it < 1200; it++) {
        net n;
        random_town(&n, &r);
        if (net_crosses(&n)) continue;
        built f = build(&n, false), p = build(&n, true);
        cr_assert_eq(f.rc, p.rc, "town %d: rc %d, plain %d", it, f.rc, p.rc);
        cr_assert_eq(f.d.nproblems, p.d.nproblems, "town %d: %zu problems, plain %zu", it, f.d.nproblems,
                     p.d.nproblems);
        for (size_t k = 0; k < f.d.nproblems; k++)
            cr_assert_str_eq(f.d.problems[k].message, p.d.problems[k].message, "town %d, problem %zu", it, k);
        if (f.rc == PM_OK) {
            built_ok++;
            cr_assert(f.json.len == p.json.len && memcmp(f.json.data, p.json.data, f.json.len) == 0,
                      "town %d: the JSON meshes differ (%zu and %zu bytes)", it, f.json.len, p.json.len);
            with_corners += holds((const char *)f.json.data, f.json.len, "\"point\":[");
            free(f.json.data);
            free(p.json.data);
        }
        reused += f.reused;
        pm_arena_destroy(f.a);
        pm_arena_destroy(p.a);
    }
    cr_log_info("towns built: %d of 1200, %d with fillet points, %zu junctions reused", built_ok, with_corners, reused);
    cr_assert_geq(built_ok, 1000, "only %d towns built", built_ok);
    cr_assert_geq(with_corners, 800, "only %d towns with fillet points", with_corners);
    cr_assert_geq(reused, 500, "only %zu junctions reused", reused);
}

/* The rounding step read off the exponent bits against frexp and ldexp:
 * every exponent, the edges of the bit path (m's exponent 24 and 2046),
 * zeros, subnormals, infinities, NaN and negative m. */
Test(network_jcache_fast, rounding_step_matches_frexp_and_ldexp) {
    pm_rng r;
    pm_rng_seed(&r, 20261215);
    size_t bits_path = 0;
    for (int it = 0; it < 400000; it++) {
        uint64_t u = (uint64_t)pm_rng_below(&r, 1u << 30) << 34 ^ (uint64_t)pm_rng_below(&r, 1u << 30) << 4 ^
                     (uint64_t)pm_rng_below(&r, 16);
        if (it % 4 == 1) u &= ~(UINT64_C(1) << 63);   /* positive */
        if (it % 8 == 3) u = (u & ~(UINT64_C(0x7ff) << 52)) | (uint64_t)pm_rng_int(&r, 20, 28) << 52;
        if (it % 8 == 5) u = (u & ~(UINT64_C(0xfff) << 52)) | (uint64_t)pm_rng_int(&r, 2040, 2047) << 52;
        double m;
        memcpy(&m, &u, sizeof m);
        if (it < 8) m = (double[]){0.0, -0.0, INFINITY, NAN, 1.0, 5e-324, 0x1p-1000, 0x1p1023}[it];
        int e0, e1;
        frexp(m, &e0);
        double d0 = ldexp(1.0, e0 - 24), d1 = pm__jcache_step(m, &e1);
        cr_assert_eq(e0, e1, "m %a", m);
        cr_assert_eq(memcmp(&d0, &d1, sizeof d0), 0, "m %a: %a against %a", m, d1, d0);
        bits_path += (u >> 52) >= 24 && (u >> 52) < 0x7ff;
    }
    cr_assert_gt(bits_path, 100000);
}
