/* Merged junctions (pm_junction_params.nodes / links, what pm_network
 * builds for close junctions): arms that leave their own nodes on the
 * lines they were drawn on, outlines along the links' sides. Named cases
 * (a pair of T junctions, a triangle of streets with a short side whose
 * two roads to the third node coincided from a merged centre) and a
 * property test over random clusters, each built one checked by an
 * independent oracle: a simple counter-clockwise contour whose triangles
 * cover exactly its area, face up and never overlap, every mouth across
 * its own arm's line at its node, every node and link inside the
 * asphalt; every refusal one of the merged junction's reasons. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_test_junction.h"
#include "pm_test_overlap.h"

typedef struct mcase {
    jcase c;
    double nodes[2 * 8];
    pm_junction_link links[8];
} mcase;

static void mcase_init(mcase *m) {
    memset(m, 0, sizeof *m);
    jcase_init(&m->c);
    m->c.p.has_center = true;
    m->c.p.nodes = m->nodes;
    m->c.p.links = m->links;
}

static uint32_t mnode(mcase *m, double x, double z) {
    uint32_t i = (uint32_t)m->c.p.nnodes++;
    m->nodes[2 * i] = x;
    m->nodes[2 * i + 1] = z;
    m->c.p.center[0] = m->c.p.center[1] = 0;
    for (uint32_t k = 0; k <= i; k++) {
        m->c.p.center[0] += m->nodes[2 * k] / (i + 1);
        m->c.p.center[1] += m->nodes[2 * k + 1] / (i + 1);
    }
    return i;
}

static void mlink(mcase *m, uint32_t a, uint32_t b, double width) {
    m->links[m->c.p.nlinks++] = (pm_junction_link){a, b, width};
}

/* An arm from node `node` towards [x, z], with room `len` (0: unbounded). */
static pm_junction_arm *marm(mcase *m, uint32_t node, double x, double z, double width, double len) {
    pm_junction_arm *a = &m->c.arms[m->c.p.narms++];
    a->direction[0] = x - m->nodes[2 * node];
    a->direction[1] = z - m->nodes[2 * node + 1];
    a->width = width;
    a->length = len;
    a->node = node;
    return a;
}

static bool inside_asphalt(const pm_prim *as, const double p[2]) {
    for (uint32_t t = 0; t < as->icount; t += 3) {
        double q[6];
        for (int k = 0; k < 3; k++) xz(as, as->indices[t + k], q + 2 * k);
        ptri T;
        if (ptri_make(q, q + 2, q + 4, &T) && ptri_inside(&T, p)) return true;
        /* On a shared edge: count it in. */
        for (int k = 0; k < 3; k++) {
            const double *a = q + 2 * k, *b = q + 2 * ((k + 1) % 3);
            double c = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
            double d = (p[0] - a[0]) * (b[0] - a[0]) + (p[1] - a[1]) * (b[1] - a[1]);
            double l2 = (b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]);
            if (fabs(c) < 1e-9 * l2 && d >= 0 && d <= l2) return true;
        }
    }
    return false;
}

/* The oracle; NULL when the merged junction is right. */
static const char *check_merged(const jrun *r, const mcase *m) {
    static char why[200];
    const char *w = check_all(r, &m->c, false);
    if (w) return w;
    const pm_prim *as = find_prim(r->s, "asphalt");
    size_t n = 0;
    const char *names[] = {"asphalt", NULL};
    ptri *T = ptri_from_prims(r->s, names, &n);
    size_t ov = ptri_count_overlaps(T, n);
    free(T);
    if (ov) { snprintf(why, sizeof why, "%zu overlapping triangle pairs", ov); return why; }
    const pm_meta *arms = pm_meta_get(r->s->meta, "arms");
    for (size_t i = 0; i < m->c.p.narms; i++) {
        const pm_junction_arm *a = &m->c.arms[i];
        const pm_meta *mo = pm_meta_get(at(arms, i), "mouth");
        double L[2], R[2], o[2] = {m->nodes[2 * a->node], m->nodes[2 * a->node + 1]};
        xz(as, (uint32_t)mnum(mo, "left_index"), L);
        xz(as, (uint32_t)mnum(mo, "right_index"), R);
        double dl = hypot(a->direction[0], a->direction[1]);
        double ux = a->direction[0] / dl, uz = a->direction[1] / dl;
        /* The mouth's midpoint on the arm's line through its node, its
         * ends half the width either side, square to it. */
        double mx = 0.5 * (L[0] + R[0]) - o[0], mz = 0.5 * (L[1] + R[1]) - o[1];
        double off = mx * uz - mz * ux, along = mx * ux + mz * uz;
        double half = 0.5 * hypot(L[0] - R[0], L[1] - R[1]);
        double sq = ((L[0] - R[0]) * ux + (L[1] - R[1]) * uz) / (2 * half);
        if (fabs(off) > 2e-3 || fabs(half - 0.5 * a->width) > 2e-3 || fabs(sq) > 1e-3 || along < -1e-3) {
            snprintf(why, sizeof why, "arm %zu's mouth is %.4f m off its line, %.4f wide, "
                     "%.4f out of square, %.3f along", i, off, 2 * half, sq, along);
            return why;
        }
        if (a->length > 0 && along > a->length + 2e-3) {
            snprintf(why, sizeof why, "arm %zu's mouth %.3f m out, beyond its %.3f", i, along, a->length);
            return why;
        }
    }
    for (size_t v = 0; v < m->c.p.nnodes; v++)
        if (!inside_asphalt(as, m->nodes + 2 * v)) {
            snprintf(why, sizeof why, "node %zu is not on the asphalt", v);
            return why;
        }
    for (size_t l = 0; l < m->c.p.nlinks; l++) {
        const double *a = m->nodes + 2 * m->links[l].a, *b = m->nodes + 2 * m->links[l].b;
        double mid[2] = {0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])};
        if (!inside_asphalt(as, mid)) {
            snprintf(why, sizeof why, "link %zu's middle is not on the asphalt", l);
            return why;
        }
    }
    return NULL;
}

static const char *corner_kind(const jrun *r, size_t k) {
    return pm_meta_get(at(pm_meta_get(r->s->meta, "corners"), k), "kind")->u.s;
}

Test(junction_merged, two_tees_joined_by_a_short_link) {
    /* Two T junctions 6 m apart on an east-west street, their third arms
     * north from each: 8 m wide roads, no room for two junctions. */
    mcase m;
    mcase_init(&m);
    uint32_t a = mnode(&m, 0, 0), b = mnode(&m, 6, 0);
    mlink(&m, a, b, 8);
    marm(&m, a, -40, 0, 8, 30);
    marm(&m, a, 0, -40, 8, 30);
    marm(&m, b, 6, 40, 8, 30);
    marm(&m, b, 46, 0, 8, 30);
    jrun r = run(&m.c);
    const char *w = check_merged(&r, &m);
    cr_assert_null(w, "%s", w);
    /* Four corners, two of them along the link's sides. */
    size_t links = 0;
    for (size_t k = 0; k < 4; k++) links += strcmp(corner_kind(&r, k), "links") == 0;
    cr_assert_eq(links, 2);
    pm_arena_destroy(r.a);
}

Test(junction_merged, triangle_with_a_short_side_keeps_both_roads_to_the_third_node) {
    /* Nodes 0 and 1 12 m apart, both sending a 9 m road to node 2 far
     * north: from a centre between them the two arms would coincide
     * (the refusal this replaces: "0.00 degrees apart"). Here they leave
     * their own nodes, 11.4 degrees apart as drawn, and the block between
     * them keeps its corners at both nodes. */
    mcase m;
    mcase_init(&m);
    uint32_t a = mnode(&m, 0, 0), b = mnode(&m, 12, 0);
    mlink(&m, a, b, 9);
    marm(&m, a, 6, -60, 9, 40);
    marm(&m, b, 6, -60, 9, 40);
    marm(&m, a, -40, 0, 9, 30);
    marm(&m, b, 52, 0, 9, 30);
    marm(&m, a, -10, 40, 9, 30);
    jrun r = run(&m.c);
    const char *w = check_merged(&r, &m);
    cr_assert_null(w, "%s", w);
    /* The block between the two roads north: a point between them 30 m
     * out is not asphalt. */
    double gap[2] = {6, -30};
    cr_assert(!inside_asphalt(find_prim(r.s, "asphalt"), gap));
    pm_arena_destroy(r.a);
}

Test(junction_merged, a_solid_face_names_its_arms) {
    /* Two nodes 4 m apart sending 10 m roads to one point 20 m north: the
     * roads overlap each other right to the end, so the face between them
     * is asphalt through and through: refused, naming both arms. */
    mcase m;
    mcase_init(&m);
    uint32_t a = mnode(&m, 0, 0), b = mnode(&m, 4, 0);
    mlink(&m, a, b, 10);
    marm(&m, a, 2, -20, 10, 12);
    marm(&m, b, 2, -20, 10, 12);
    marm(&m, a, -30, 0, 10, 20);
    marm(&m, b, 34, 0, 10, 20);
    jrun r = run(&m.c);
    cr_assert_eq(r.rc, PM_ERR_GEOMETRY);
    cr_assert(r.d.error == PM_JUNCTION_LINKS_OVERLAP || r.d.error == PM_JUNCTION_ARM_TOO_SHORT,
              "%s", pm_junction_error_name(r.d.error));
    cr_assert_eq(r.d.narms, 2);
    pm_arena_destroy(r.a);
}

Test(junction_merged, a_corner_along_a_link_gets_its_fillet) {
    /* Nodes 10 m apart joined by an 8 m link; node 0 sends a road west
     * and one diagonally back (towards [-30, -30]), node 1 roads east and
     * south. Where the diagonal's curb meets the link's side (at
     * [4 sqrt 2 - 4, -4]) the block has a 135-degree corner: it gets a
     * fillet of the requested radius, as any block corner does, so a
     * point 0.15 m into the block along its bisector is asphalt (a sharp
     * corner left it outside). */
    mcase m;
    mcase_init(&m);
    uint32_t a = mnode(&m, 0, 0), b = mnode(&m, 10, 0);
    mlink(&m, a, b, 8);
    marm(&m, a, -30, 0, 8, 30);
    marm(&m, a, -30, -30, 8, 30);
    marm(&m, b, 40, 0, 8, 30);
    marm(&m, b, 10, 30, 8, 30);
    jrun r = run(&m.c);
    const char *w = check_merged(&r, &m);
    cr_assert_null(w, "%s", w);
    const pm_meta *corners = pm_meta_get(r.s->meta, "corners");
    bool found = false;
    for (size_t k = 0; k < corners->u.kids.count; k++) {
        const pm_meta *arms = pm_meta_get(at(corners, k), "arms");
        if (strcmp(corner_kind(&r, k), "links") != 0 || arms->u.kids.last->u.i != 1) continue;
        found = true;
        cr_assert_float_eq(mnum(at(corners, k), "radius"), 3.0, 1e-12);
    }
    cr_assert(found, "no corner along the link from the diagonal arm");
    double p[2] = {4 * sqrt(2.0) - 4, -4}, bis[2] = {1 - sqrt(0.5), -sqrt(0.5)};
    double l = hypot(bis[0], bis[1]);
    double q[2] = {p[0] + 0.15 * bis[0] / l, p[1] + 0.15 * bis[1] / l};
    cr_assert(inside_asphalt(find_prim(r.s, "asphalt"), q), "[%g, %g] is not asphalt", q[0], q[1]);
    /* Beyond the fillet (0.25 m from the corner along the bisector) the
     * block stays. */
    double q2[2] = {p[0] + 0.4 * bis[0] / l, p[1] + 0.4 * bis[1] / l};
    cr_assert(!inside_asphalt(find_prim(r.s, "asphalt"), q2), "[%g, %g] is asphalt", q2[0], q2[1]);
    pm_arena_destroy(r.a);
}

Test(junction_merged, a_road_forking_off_a_link_meets_its_side_at_the_crotch) {
    /* Node b 35 m from node a along an 8 m link; a's second road leaves
     * 18 degrees off the link (a map's Y fork), so the two strips overlap
     * out to where the road's curb crosses the link's side, about 26 m
     * out: there the outline turns from the link's side onto the road's
     * curb (the fork's crotch), and the road's mouth lies beyond it. Up to
     * network 1.9.0 that join was far from the node, so it was bevelled:
     * the mouth stayed 4 m out, inside the link's road, and the contour
     * crossed itself. */
    mcase m;
    mcase_init(&m);
    double th = 62 * PI / 180, fk = th + 18 * PI / 180;
    uint32_t a = mnode(&m, 0, 0), b = mnode(&m, 35 * cos(th), 35 * sin(th));
    mlink(&m, a, b, 8);
    marm(&m, a, 60 * cos(fk), 60 * sin(fk), 8, 60);
    marm(&m, a, 40 * cos(th - 2.6), 40 * sin(th - 2.6), 8, 30);
    marm(&m, b, m.nodes[2] + 40 * cos(th + 0.4), m.nodes[3] + 40 * sin(th + 0.4), 8, 30);
    marm(&m, b, m.nodes[2] + 40 * cos(th - 1.9), m.nodes[3] + 40 * sin(th - 1.9), 8, 30);
    jrun r = run(&m.c);
    cr_assert_eq(r.rc, 0, "%s", r.d.message);
    const char *w = check_merged(&r, &m);
    cr_assert_null(w, "%s", w);
    /* The fork's mouth: past where the road's inner curb crosses the
     * link's side, (h + h cos 18) / sin 18 along the road. */
    double crotch = (4 + 4 * cos(18 * PI / 180)) / sin(18 * PI / 180);
    const pm_meta *mo = pm_meta_get(at(pm_meta_get(r.s->meta, "arms"), 0), "mouth");
    cr_assert_geq(mnum(mo, "distance"), crotch - 1e-6, "mouth %.3f m out, crotch %.3f",
                  mnum(mo, "distance"), crotch);
    pm_arena_destroy(r.a);
}

/* Whether direction (x, z) is at least deg degrees from unit (ux, uz). */
static bool apart(double x, double z, double ux, double uz, double deg) {
    return (x * ux + z * uz) / hypot(x, z) < cos(deg * PI / 180);
}

/* Random clusters of 2-3 nodes 4-25 m apart joined by a path (or a
 * triangle) of links, each node with 1-3 arms at least min_deg degrees
 * from each other and from its links, 6-12 m wide, with rooms of 15-40 m
 * (forks: 15-60 m, the room a road forking off at a narrow angle needs):
 * every built one passes the oracle; the others are refused for a reason
 * a merged junction has. Returns how many of how many built. */
static void random_clusters(uint64_t seed, double min_deg, double max_room, int *built_out, int *total_out) {
    pm_rng rng;
    pm_rng_seed(&rng, seed);
    int built = 0, total = 0;
    for (int it = 0; it < 3000; it++) {
        mcase m;
        mcase_init(&m);
        int nn = (int)pm_rng_int(&rng, 2, 3);
        double x = 0, z = 0, heading = pm_rng_range(&rng, 0, 2 * PI);
        for (int v = 0; v < nn; v++) {
            mnode(&m, x, z);
            heading += pm_rng_range(&rng, -1.2, 1.2);
            double d = pm_rng_range(&rng, 4, 25);
            x += d * cos(heading);
            z += d * sin(heading);
        }
        for (int v = 0; v + 1 < nn; v++) mlink(&m, (uint32_t)v, (uint32_t)v + 1, pm_rng_range(&rng, 6, 12));
        if (nn == 3 && pm_rng_chance(&rng, 0.3)) mlink(&m, 2, 0, pm_rng_range(&rng, 6, 12));
        for (int v = 0; v < nn; v++) {
            int want = (int)pm_rng_int(&rng, 1, 3);
            for (int tries = 0; tries < 40 && want > 0; tries++) {
                double ang = pm_rng_range(&rng, 0, 2 * PI);
                bool ok = true;
                double ux = cos(ang), uz = sin(ang);
                for (size_t l = 0; l < m.c.p.nlinks && ok; l++) {
                    const pm_junction_link *L = &m.links[l];
                    if (L->a != (uint32_t)v && L->b != (uint32_t)v) continue;
                    uint32_t o = L->a == (uint32_t)v ? L->b : L->a;
                    ok = apart(m.nodes[2 * o] - m.nodes[2 * v], m.nodes[2 * o + 1] - m.nodes[2 * v + 1], ux, uz,
                               min_deg);
                }
                for (size_t i = 0; i < m.c.p.narms && ok; i++)
                    if (m.c.arms[i].node == (uint32_t)v)
                        ok = apart(m.c.arms[i].direction[0], m.c.arms[i].direction[1], ux, uz, min_deg);
                if (!ok) continue;
                marm(&m, (uint32_t)v, m.nodes[2 * v] + ux, m.nodes[2 * v + 1] + uz, pm_rng_range(&rng, 6, 12),
                     pm_rng_range(&rng, 15, max_room));
                want--;
            }
        }
        if (m.c.p.narms < 2) continue;
        total++;
        jrun r = run(&m.c);
        if (r.rc == 0) {
            const char *w = check_merged(&r, &m);
            cr_assert_null(w, "cluster %d: %s", it, w);
            built++;
        } else {
            cr_assert_eq(r.rc, PM_ERR_GEOMETRY, "cluster %d: %d", it, r.rc);
            pm_junction_error e = r.d.error;
            cr_assert(e == PM_JUNCTION_LINKS_OVERLAP || e == PM_JUNCTION_ARM_TOO_SHORT ||
                      e == PM_JUNCTION_SELF_INTERSECTION || e == PM_JUNCTION_ARMS_TOO_CLOSE,
                      "cluster %d: %s (%s)", it, pm_junction_error_name(e), r.d.message);
            cr_assert_gt(strlen(r.d.message), 0);
        }
        pm_arena_destroy(r.a);
    }
    *built_out = built;
    *total_out = total;
}

Test(junction_merged, random_clusters_pass_the_oracle) {
    int built, total;
    random_clusters(2026, 30, 40, &built, &total);
    cr_log_info("merged clusters: %d of %d built", built, total);
    cr_assert_gt(built, total / 3, "only %d of %d random clusters built", built, total);
}

Test(junction_merged, random_clusters_with_forks_pass_the_oracle) {
    int built, total;
    random_clusters(2027, 12, 60, &built, &total);
    cr_log_info("merged clusters with forks: %d of %d built", built, total);
    /* 800 of 3,000 (785 up to network 1.9.0): most refusals are arms of
     * two nodes whose roads run into each other across a short link, which
     * a network avoids by building the two junctions apart. The point is
     * the oracle on every one built. */
    cr_assert_gt(built, total / 4, "only %d of %d random clusters built", built, total);
}
