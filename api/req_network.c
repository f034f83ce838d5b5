/* POST /v1/networks: nodes + edges into pm_network_params (docs/network.md,
 * api/openapi.yaml "networks"). Everything core asserts is checked here:
 * ids, ranges, self-loops, duplicate edges, arm separation, crossings. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "junction/junction.h"
#include "network/network.h"
#include "scene/result.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"
#include "req_network.h"

#define PM__NMAX_CROSSINGS 20      /* crossing pairs listed in one response */

/* An id as read, for lookups: the request's order kept in `index`. */
typedef struct pm__idref { pm_network_id id; size_t index; } pm__idref;

static int pm__id_cmp(const pm_network_id *a, const pm_network_id *b) {
    if (a->is_num != b->is_num) return a->is_num ? -1 : 1;
    if (a->is_num) return a->num < b->num ? -1 : (a->num > b->num);
    return strcmp(a->str, b->str);
}

static int pm__idref_cmp(const void *x, const void *y) {
    const pm__idref *a = x, *b = y;
    int c = pm__id_cmp(&a->id, &b->id);
    return c ? c : (a->index < b->index ? -1 : (a->index > b->index));
}

static void pm__id_text(const pm_network_id *id, char *out, size_t cap) {
    if (id->is_num) snprintf(out, cap, "%lld", (long long)id->num);
    else snprintf(out, cap, "\"%s\"", id->str);
}

/* An id member: an integer or a string of 1..64 bytes. Returns 0 when read. */
static int pm__read_id(pm_api_node *n, const char *key, pm_arena *arena, pm_network_id *out) {
    const json_t *v = pm_api_peek(n, key);
    memset(out, 0, sizeof *out);
    out->is_num = true;
    if (v && json_is_string(v)) {
        char buf[PM__NID_MAX + 1] = "";
        if (pm_api_str(n, key, PM_API_REQUIRED, PM__NID_MAX, "", buf, sizeof buf)) return -1;
        if (!buf[0]) {
            pm_api_fail(n, key, "must not be empty");
            return -1;
        }
        out->is_num = false;
        out->str = pm_arena_strdup(arena, buf);
        return out->str ? 0 : -1;
    }
    if (v && !json_is_integer(v) && !json_is_real(v)) {
        pm_api_fail(n, key, "must be an integer or a string");
        if (n->canon) json_object_set_new(n->canon, key, json_null());
        return -1;
    }
    return pm_api_int(n, key, PM_API_REQUIRED, PM_API_IANY, 0, &out->num);
}

static void pm__read_sidewalk(pm_api_node *sw, const pm_junction_sidewalk *def,
                              pm_junction_sidewalk *out) {
    pm_api_num(sw, "width", 0, PM__POS(100), def->width, &out->width);
    pm_api_num(sw, "curb_height", 0, PM__POS(2), def->curb_height, &out->curb_height);
    pm_api_end(sw);
}

/* Built member by member: once per edge of the canonical form, where
 * json_pack's format parsing cost 2,800 instructions a call. */
static json_t *pm__sidewalk_json(bool on, const pm_junction_sidewalk *s) {
    if (!on) return json_null();
    json_t *o = json_object();
    if (o && (json_object_set_new(o, "width", json_real(s->width + 0.0)) ||
              json_object_set_new(o, "curb_height", json_real(s->curb_height + 0.0)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static bool pm__has(pm_api_node *n, const char *key) {
    return pm_api_peek(n, key) != NULL;
}

static void pm__read_nodes(pm_api_node *root, pm__nreq *q, const pm_api_limits *lim,
                           pm_arena *arena, bool *ok) {
    pm_api_node arr, o;
    size_t n = pm_api_array(root, "nodes", PM_API_REQUIRED,
                            PM_API_ILIMIT(2, lim->max_points, "max_points"), &arr);
    q->nodes = pm_arena_calloc(arena, 3 * (n ? n : 1), sizeof(double));
    q->ids = pm_arena_calloc(arena, n ? n : 1, sizeof *q->ids);
    *ok = q->nodes && q->ids;
    for (size_t i = 0; i < n && q->nodes && q->ids; i++) {
        if (pm_api_object(&arr, NULL, PM_API_REQUIRED, &o) != 1) { *ok = false; continue; }
        if (pm__read_id(&o, "id", arena, &q->ids[i])) *ok = false;
        double v[3] = {0, 0, 0};
        size_t dim = 0;
        if (pm_api_vec(&o, "position", PM_API_REQUIRED, 2, 3, PM_API_RANGE(-PM__NCOORD, PM__NCOORD),
                       NULL, v, &dim))
            *ok = false;
        q->nodes[3 * i] = v[0];
        q->nodes[3 * i + 1] = dim == 3 ? v[1] : 0.0;
        q->nodes[3 * i + 2] = dim == 3 ? v[2] : v[1];
        pm_api_end(&o);
    }
    pm_api_end(&arr);
    q->p.nodes = q->nodes;
    q->p.ids = q->ids;
    q->p.nnodes = n;
}

/* Interior points: [x, z] points take heights interpolated by plan arc
 * length between their nearest known heights (the nodes, 3D points). */
static void pm__fill_heights(double *pts, const bool *known, size_t n, const double *a,
                             const double *b) {
    size_t last = SIZE_MAX;     /* last known interior point, SIZE_MAX: node a */
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !known[i]) continue;
        const double *p0 = last == SIZE_MAX ? a : pts + 3 * last;
        const double *p1 = i == n ? b : pts + 3 * i;
        size_t s = last == SIZE_MAX ? 0 : last + 1;
        double total = 0.0, acc = 0.0;
        const double *prev = p0;
        for (size_t k = s; k <= i; k++) {
            const double *cur = k == i ? p1 : pts + 3 * k;
            total += hypot(cur[0] - prev[0], cur[2] - prev[2]);
            prev = cur;
        }
        prev = p0;
        for (size_t k = s; k < i; k++) {
            acc += hypot(pts[3 * k] - prev[0], pts[3 * k + 2] - prev[2]);
            pts[3 * k + 1] = total > 0 ? p0[1] + (p1[1] - p0[1]) * acc / total : p0[1];
            prev = pts + 3 * k;
        }
        last = i;
    }
}

static size_t pm__read_points(pm_api_node *e, const pm_api_limits *lim, pm_arena *arena,
                              double **out, bool **known) {
    pm_api_node arr;
    size_t n = pm_api_array(e, "points", 0, PM_API_ILIMIT(0, lim->max_points, "max_points"), &arr);
    double *pts = pm_arena_calloc(arena, 3 * (n ? n : 1), sizeof(double));
    bool *kn = pm_arena_calloc(arena, n ? n : 1, sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        double v[3] = {0, 0, 0};
        size_t dim = 0;
        pm_api_vec(&arr, NULL, PM_API_REQUIRED, 2, 3, PM_API_RANGE(-PM__NCOORD, PM__NCOORD), NULL, v, &dim);
        if (!pts || !kn) continue;
        pts[3 * i] = v[0];
        pts[3 * i + 1] = dim == 3 ? v[1] : 0.0;
        pts[3 * i + 2] = dim == 3 ? v[2] : v[1];
        kn[i] = dim == 3;
    }
    pm_api_end(&arr);
    *out = pts;
    *known = kn;
    return pts && kn ? n : 0;
}

static void pm__read_edges(pm_api_node *root, pm__nreq *q, const pm_api_limits *lim,
                           pm_arena *arena, double width, bool gsw_on,
                           const pm_junction_sidewalk *gsw, pm__raw_edge **raw_out) {
    pm_api_node arr, o, sw;
    size_t n = pm_api_array(root, "edges", PM_API_REQUIRED,
                            PM_API_ILIMIT(1, lim->max_points, "max_points"), &arr);
    q->edges = pm_arena_calloc(arena, n ? n : 1, sizeof *q->edges);
    pm__raw_edge *raw = pm_arena_calloc(arena, n ? n : 1, sizeof *raw);
    *raw_out = raw;
    size_t total = 0;
    /* The canonical sidewalk of an edge without one of its own: one object
     * shared by all of them (canonical forms are never modified), not one
     * built, dumped for the key and deleted per edge. */
    json_t *gsw_json = NULL;
    for (size_t i = 0; i < n && q->edges && raw; i++) {
        pm_network_edge *E = &q->edges[i];
        if (pm_api_object(&arr, NULL, PM_API_REQUIRED, &o) != 1) continue;
        raw[i].ids_ok = pm__read_id(&o, "from", arena, &raw[i].from) == 0;
        raw[i].ids_ok &= pm__read_id(&o, "to", arena, &raw[i].to) == 0;
        pm_api_num(&o, "width", 0, PM__POS(1000), width, &E->width);
        double *pts = NULL;
        E->npoints = pm__read_points(&o, lim, arena, &pts, &raw[i].known);
        E->points = pts;
        total += E->npoints;
        if (pm__has(&o, "sidewalk")) {
            E->has_sidewalk = pm_api_object(&o, "sidewalk", PM_API_NULLABLE, &sw) == 1;
            if (E->has_sidewalk) pm__read_sidewalk(&sw, gsw_on ? gsw : &pm__sidewalk_def, &E->sidewalk);
        } else {
            E->has_sidewalk = gsw_on;
            E->sidewalk = *gsw;
            if (o.canon && !gsw_json) gsw_json = pm__sidewalk_json(gsw_on, gsw);
            if (o.canon) json_object_set(o.canon, "sidewalk", gsw_json);
        }
        pm_api_end(&o);
    }
    json_decref(gsw_json);
    pm_api_end(&arr);
    if (total > lim->max_points)
        pm_api_problem_field(root->prob, "/edges", "holds %zu interior points in all (limit "
                             "max_points = %u)", total, lim->max_points);
    q->p.edges = q->edges;
    q->p.nedges = q->edges ? n : 0;
}

static uint64_t pm__id_hash(const pm_network_id *id) {
    return id->is_num ? XXH3_64bits(&id->num, sizeof id->num) : XXH3_64bits(id->str, strlen(id->str));
}

/* An empty open-addressing table for n entries: a power of two of slots,
 * at least 16 and twice n, each UINT32_MAX (empty); *mask is its size - 1.
 * NULL when out of memory. */
static uint32_t *pm__slots(pm_arena *arena, size_t n, size_t *mask) {
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    uint32_t *t = pm_arena_alloc(arena, size * sizeof *t);
    if (!t) return NULL;
    memset(t, 0xff, size * sizeof *t);
    *mask = size - 1;
    return t;
}

/* An open-addressing table of the node ids' first holders (power-of-two
 * size, at most half full): an edge's id found in one or two probes rather
 * than by a binary search of string compares. *dup tells whether an id
 * repeats (the table keeps its lowest node). NULL when out of memory. */
static uint32_t *pm__id_table(const pm_network_id *ids, size_t nn, pm_arena *arena, size_t *mask,
                              bool *dup) {
    uint32_t *t = pm__slots(arena, nn, mask);
    if (!t) return NULL;
    *dup = false;
    for (size_t i = 0; i < nn; i++) {
        size_t h = (size_t)pm__id_hash(&ids[i]) & *mask;
        while (t[h] != UINT32_MAX && pm__id_cmp(&ids[t[h]], &ids[i]) != 0) h = (h + 1) & *mask;
        if (t[h] == UINT32_MAX) t[h] = (uint32_t)i;
        else *dup = true;
    }
    return t;
}

/* The lowest node with id, or nn when none has it. */
static size_t pm__id_find(const pm_network_id *ids, size_t nn, const uint32_t *t, size_t mask,
                          const pm_network_id *id) {
    for (size_t h = (size_t)pm__id_hash(id) & mask; t[h] != UINT32_MAX; h = (h + 1) & mask)
        if (pm__id_cmp(&ids[t[h]], id) == 0) return t[h];
    return nn;
}

/* Each node whose id an earlier node has, in the order of the sorted ids
 * (then of the nodes). Returns 0, or -1 when out of memory (a 503). */
static int pm__report_duplicates(const pm__nreq *q, pm_arena *arena, pm_api_problem *prob) {
    size_t nn = q->p.nnodes;
    pm__idref *ref = pm_arena_alloc(arena, (nn ? nn : 1) * sizeof *ref);
    if (!ref) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return -1;
    }
    for (size_t i = 0; i < nn; i++) ref[i] = (pm__idref){q->ids[i], i};
    qsort(ref, nn, sizeof *ref, pm__idref_cmp);
    char txt[80], ptr[64];
    for (size_t i = 1; i < nn; i++) {
        if (pm__id_cmp(&ref[i].id, &ref[i - 1].id)) continue;
        pm__id_text(&ref[i].id, txt, sizeof txt);
        snprintf(ptr, sizeof ptr, "/nodes/%zu/id", ref[i].index);
        pm_api_problem_field(prob, ptr, "duplicates the id %s of /nodes/%zu", txt, ref[i - 1].index);
    }
    return 0;
}

/* Ids: duplicates among nodes (sorted only when there are any), then each
 * edge's from / to resolved (edges whose ids all resolved are marked). */
static void pm__resolve(pm__nreq *q, pm__raw_edge *raw, pm_arena *arena, pm_api_problem *prob) {
    size_t nn = q->p.nnodes, mask = 0;
    bool dup = false;
    const uint32_t *table = pm__id_table(q->ids, nn, arena, &mask, &dup);
    if (!table) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return;
    }
    if (dup && pm__report_duplicates(q, arena, prob) < 0) return;
    char txt[80];
    for (size_t e = 0; e < q->p.nedges; e++) {
        raw[e].resolved = raw[e].ids_ok;
        for (int end = 0; end < 2 && raw[e].ids_ok; end++) {
            const pm_network_id *id = end ? &raw[e].to : &raw[e].from;
            size_t lo = pm__id_find(q->ids, nn, table, mask, id);
            uint32_t *dst = end ? &q->edges[e].to : &q->edges[e].from;
            if (lo < nn) {
                *dst = (uint32_t)lo;
                continue;
            }
            char ptr[64];
            pm__id_text(id, txt, sizeof txt);
            snprintf(ptr, sizeof ptr, "/edges/%zu/%s", e, end ? "to" : "from");
            pm_api_problem_field(prob, ptr, "no node has the id %s", txt);
            raw[e].resolved = false;
        }
    }
}

typedef struct pm__pair { uint32_t a, b; size_t edge; } pm__pair;

static int pm__pair_cmp(const void *x, const void *y) {
    const pm__pair *s = x, *t = y;
    if (s->a != t->a) return s->a < t->a ? -1 : 1;
    if (s->b != t->b) return s->b < t->b ? -1 : 1;
    return s->edge < t->edge ? -1 : (s->edge > t->edge);
}

/* Whether two of the n pairs join the same two nodes (a hash of each; true
 * when out of memory, so the sort decides). */
static bool pm__pairs_repeat(const pm__pair *pairs, size_t n, pm_arena *arena) {
    size_t mask;
    uint32_t *t = pm__slots(arena, n, &mask);
    if (!t) return true;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)pairs[i].a << 32 | pairs[i].b;
        size_t h = (size_t)XXH3_64bits(&k, sizeof k) & mask;
        for (; t[h] != UINT32_MAX; h = (h + 1) & mask)
            if (pairs[t[h]].a == pairs[i].a && pairs[t[h]].b == pairs[i].b) return true;
        t[h] = (uint32_t)i;
    }
    return false;
}

/* Self-loops, duplicate edges, points too close, widths against the snap
 * grid. */
static void pm__check_edges(pm__nreq *q, const pm__raw_edge *raw, pm_arena *arena,
                            pm_api_problem *prob) {
    const pm_network_params *p = &q->p;
    pm__pair *pairs = pm_arena_alloc(arena, (p->nedges ? p->nedges : 1) * sizeof *pairs);
    if (!pairs) return;
    size_t np = 0;
    char ptr[96];
    for (size_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        if (!raw[e].resolved) continue;
        if (E->from == E->to) {
            snprintf(ptr, sizeof ptr, "/edges/%zu/to", e);
            pm_api_problem_field(prob, ptr, "is the edge's own from node: an edge must join two "
                                            "different nodes (no self-loops)");
            continue;
        }
        pairs[np++] = (pm__pair){E->from < E->to ? E->from : E->to, E->from < E->to ? E->to : E->from, e};
        if (E->width < 10 * p->snap) {
            snprintf(ptr, sizeof ptr, "/edges/%zu/width", e);
            pm_api_problem_field(prob, ptr, "must be at least 10 x snap (%g)", 10 * p->snap);
        }
        const double *prev = p->nodes + 3 * E->from;
        for (size_t k = 0; k <= E->npoints; k++) {
            const double *cur = k < E->npoints ? E->points + 3 * k : p->nodes + 3 * E->to;
            /* Past 2e-6 the squared distance leaves no doubt (hypot >= 1e-3). */
            double dx = cur[0] - prev[0], dz = cur[2] - prev[2];
            if (!(dx * dx + dz * dz >= 2e-6) && hypot(dx, dz) < 1e-3) {
                if (k < E->npoints) snprintf(ptr, sizeof ptr, "/edges/%zu/points/%zu", e, k);
                else snprintf(ptr, sizeof ptr, "/edges/%zu/to", e);
                pm_api_problem_field(prob, ptr, "coincides in plan (x, z) with the point before it "
                                                "on the edge: consecutive points must be at least 1 mm apart");
            }
            prev = cur;
        }
    }
    if (!pm__pairs_repeat(pairs, np, arena)) return;   /* nothing to list: no sort */
    qsort(pairs, np, sizeof *pairs, pm__pair_cmp);
    for (size_t i = 1; i < np; i++) {
        if (pairs[i].a != pairs[i - 1].a || pairs[i].b != pairs[i - 1].b) continue;
        size_t first = i - 1;
        while (first > 0 && pairs[first - 1].a == pairs[i].a && pairs[first - 1].b == pairs[i].b) first--;
        snprintf(ptr, sizeof ptr, "/edges/%zu", pairs[i].edge);
        pm_api_problem_field(prob, ptr, "joins the same two nodes as /edges/%zu (duplicate edge)",
                             pairs[first].edge);
        if (first == i - 1) {
            snprintf(ptr, sizeof ptr, "/edges/%zu", pairs[first].edge);
            pm_api_problem_field(prob, ptr, "joins the same two nodes as /edges/%zu (duplicate edge)",
                                 pairs[i].edge);
        }
    }
}

typedef struct pm__arm { double angle; size_t edge; } pm__arm;

static int pm__arm_cmp(const void *x, const void *y) {
    const pm__arm *s = x, *t = y;
    if (s->angle != t->angle) return s->angle < t->angle ? -1 : 1;
    return s->edge < t->edge ? -1 : (s->edge > t->edge);
}

/* An arm's direction in plan: from node n to the next point of edge e
 * (n is one of its ends; the edges here have no self-loops). */
static void pm__arm_dir(const pm_network_params *p, uint32_t n, size_t e, double dir[2]) {
    const pm_network_edge *E = &p->edges[e];
    int end = E->from == n ? 0 : 1;
    const double *c = p->nodes + 3 * n;
    const double *nx = E->npoints ? E->points + 3 * (end ? E->npoints - 1 : 0)
                                  : p->nodes + 3 * (end ? E->from : E->to);
    dir[0] = nx[0] - c[0];
    dir[1] = nx[2] - c[2];
}

/* Whether every two of a node's d arms are more than the separation
 * whose squared cosine is cos2 apart, told by their directions alone: the
 * dot product's square against cos2 times the squared lengths (or a dot
 * product <= 0: 90 degrees or more). cos2 is taken 1e-6 radians past the
 * minimum, far beyond the rounding of these products and of atan2, so
 * arms told apart here have no gap below the minimum by their angles
 * either; any doubt (tiny lengths) answers false. */
static bool pm__arms_apart(const pm_network_params *p, uint32_t n, const pm__arm *A, uint32_t d,
                           double cos2) {
    double dir[16][2], len2[16];
    for (uint32_t k = 0; k < d; k++) {
        pm__arm_dir(p, n, A[k].edge, dir[k]);
        len2[k] = dir[k][0] * dir[k][0] + dir[k][1] * dir[k][1];
        if (!(len2[k] >= 1e-150)) return false;
    }
    for (uint32_t i = 0; i < d; i++) {
        for (uint32_t j = i + 1; j < d; j++) {
            double dot = dir[i][0] * dir[j][0] + dir[i][1] * dir[j][1];
            if (dot > 0 && !(dot * dot < cos2 * (len2[i] * len2[j]))) return false;
        }
    }
    return true;
}

/* Edges leaving one node must be PM_JUNCTION_MIN_SEPARATION_DEG apart:
 * closer, junction arms cannot be separated and a road through a node
 * would fold back onto itself. A node of at most 16 arms all told apart
 * by pm__arms_apart passes without their angles; the others' arms are
 * sorted by angle (atan2) and each gap measured. */
static void pm__check_angles(pm__nreq *q, pm_arena *arena, pm_api_problem *prob) {
    const pm_network_params *p = &q->p;
    uint32_t *deg = pm_arena_calloc(arena, p->nnodes + 1, sizeof *deg);
    uint32_t *first = pm_arena_calloc(arena, p->nnodes + 1, sizeof *first);
    pm__arm *arms = pm_arena_alloc(arena, (2 * p->nedges + 1) * sizeof *arms);
    if (!deg || !first || !arms) return;
    for (size_t e = 0; e < p->nedges; e++) { deg[p->edges[e].from]++; deg[p->edges[e].to]++; }
    for (size_t n = 1; n <= p->nnodes; n++) first[n] = first[n - 1] + deg[n - 1];
    memset(deg, 0, (p->nnodes + 1) * sizeof *deg);
    for (size_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        arms[first[E->from] + deg[E->from]++] = (pm__arm){0.0, e};
        arms[first[E->to] + deg[E->to]++] = (pm__arm){0.0, e};
    }
    const double pi = 3.14159265358979323846, min = PM_JUNCTION_MIN_SEPARATION_DEG * pi / 180.0;
    const double cos_apart = cos(min + 1e-6), cos2 = cos_apart * cos_apart;
    char ptr[64], txt[80];
    for (size_t n = 0; n < p->nnodes; n++) {
        pm__arm *A = arms + first[n];
        uint32_t d = deg[n];
        if (d < 2) continue;
        if (d <= 16 && pm__arms_apart(p, (uint32_t)n, A, d, cos2)) continue;
        for (uint32_t k = 0; k < d; k++) {
            double dir[2];
            pm__arm_dir(p, (uint32_t)n, A[k].edge, dir);
            A[k].angle = atan2(dir[1], dir[0]);
        }
        /* A node has a handful of arms: sorted in place (the order is total,
         * so the same as qsort's), without qsort's set-up per call. */
        if (d > 16) qsort(A, d, sizeof *A, pm__arm_cmp);
        for (uint32_t k = 1; d <= 16 && k < d; k++) {
            pm__arm x = A[k];
            uint32_t at = k;
            for (; at > 0 && pm__arm_cmp(&A[at - 1], &x) > 0; at--) A[at] = A[at - 1];
            A[at] = x;
        }
        for (uint32_t k = 0; k < d; k++) {
            const pm__arm *a = &A[k], *b = &A[(k + 1) % d];
            double gap = k + 1 < d ? b->angle - a->angle : b->angle + 2 * pi - a->angle;
            if (gap >= min) continue;
            pm__id_text(&q->ids[n], txt, sizeof txt);
            snprintf(ptr, sizeof ptr, "/nodes/%zu", n);
            pm_api_problem_field(prob, ptr, "edges %zu and %zu leave node %s %.2f degrees apart; at "
                                 "least %g are needed", a->edge, b->edge, txt, gap * 180.0 / pi,
                                 PM_JUNCTION_MIN_SEPARATION_DEG);
            size_t es[2] = {a->edge, b->edge};
            for (int j = 0; j < 2; j++) {
                snprintf(ptr, sizeof ptr, "/edges/%zu", es[j]);
                pm_api_problem_field(prob, ptr, "leaves node %s %.2f degrees from /edges/%zu (at "
                                     "least %g are needed)", txt, gap * 180.0 / pi, es[1 - j],
                                     PM_JUNCTION_MIN_SEPARATION_DEG);
            }
            if (d == 2) break;      /* both gaps of two arms name the same pair */
        }
    }
}

static void pm__check_crossings(pm__nreq *q, pm_arena *arena, pm_api_problem *prob) {
    uint32_t pairs[PM__NMAX_CROSSINGS][2];
    int64_t n = pm_network_crossings(arena, &q->p, pairs, PM__NMAX_CROSSINGS);
    if (n < 0) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return;
    }
    char ptr[64];
    for (int64_t i = 0; i < n && i < PM__NMAX_CROSSINGS; i++) {
        uint32_t a = pairs[i][0], b = pairs[i][1];
        snprintf(ptr, sizeof ptr, "/edges/%u", a);
        if (a == b) {
            pm_api_problem_field(prob, ptr, "crosses itself");
            continue;
        }
        pm_api_problem_field(prob, ptr, "crosses /edges/%u without a node: the network must be "
                             "planar (split both edges at a shared node)", b);
        snprintf(ptr, sizeof ptr, "/edges/%u", b);
        pm_api_problem_field(prob, ptr, "crosses /edges/%u without a node: the network must be "
                             "planar (split both edges at a shared node)", a);
    }
    if (n > PM__NMAX_CROSSINGS)
        pm_api_problem_field(prob, "/edges", "%lld pairs of edges cross in all (the first %d are "
                             "listed)", (long long)n, PM__NMAX_CROSSINGS);
}

void pm_api__network_check_resolved(pm__nreq *q, const pm__raw_edge *raw, pm_arena *arena,
                                    pm_api_problem *prob) {
    const pm_network_params *p = &q->p;
    for (size_t e = 0; e < p->nedges; e++)
        if (raw[e].resolved && p->edges[e].npoints)
            pm__fill_heights((double *)p->edges[e].points, raw[e].known, p->edges[e].npoints,
                             p->nodes + 3 * p->edges[e].from, p->nodes + 3 * p->edges[e].to);
    pm__check_edges(q, raw, arena, prob);
    if (!pm_api_problem_failed(prob)) pm__check_angles(q, arena, prob);
    if (!pm_api_problem_failed(prob)) pm__check_crossings(q, arena, prob);
}

void pm_api__network_check(pm__nreq *q, pm__raw_edge *raw, pm_arena *arena, pm_api_problem *prob) {
    pm__resolve(q, raw, arena, prob);
    pm_api__network_check_resolved(q, raw, arena, prob);
}

int pm_api__network_parse_doc(const json_t *body, const pm_api_limits *lim, pm_arena *arena,
                              const pm_api__geo *geo, void **params, json_t **canonical,
                              pm_api_problem *prob) {
    pm__nreq *q = pm_arena_calloc(arena, 1, sizeof *q);
    if (!q) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        return -1;
    }
    q->geo = geo;
    pm_network_params *p = &q->p;
    pm_network_params_default(p);
    pm_api_node root, sw;
    int64_t segs = 4;
    double width = 7.0;
    bool nodes_ok = false;
    pm__raw_edge *raw = NULL;
    pm_api_begin(&root, body, prob);
    pm_junction_sidewalk gsw = pm__sidewalk_def;
    bool gsw_on = pm_api_object(&root, "sidewalk", PM_API_NULLABLE | PM_API_ABSENT_OFF, &sw) == 1;
    if (gsw_on) pm__read_sidewalk(&sw, &pm__sidewalk_def, &gsw);
    pm_api_num(&root, "width", 0, PM__POS(1000), 7.0, &width);
    pm_api_num(&root, "corner_radius", 0, PM_API_RANGE(0, 1000), 3, &p->corner_radius);
    pm_api_int(&root, "corner_segments", 0, PM_API_IRANGE(2, 64), 4, &segs);
    p->corner_segments = (uint32_t)segs;
    pm_api_num(&root, "uv_scale", 0, PM__POS(1000), 0.1, &p->uv_scale);
    pm_api_num(&root, "snap", 0, PM_API_RANGE(1e-6, 1), 0.001, &p->snap);
    pm_api_num(&root, "max_error", 0, PM_API_RANGE(1e-3, 100), 0.05, &p->max_error);
    pm_api_num(&root, "max_segment", 0, PM_API_RANGE(0.05, 1000), 5.0, &p->max_segment);
    pm__read_nodes(&root, q, lim, arena, &nodes_ok);
    pm__read_edges(&root, q, lim, arena, width, gsw_on, &gsw, &raw);
    /* Edges are checked as far as their own ids resolve, so one answer
     * lists every bad edge; angles and crossings need the whole graph. */
    if (nodes_ok && raw && q->edges) pm_api__network_check(q, raw, arena, prob);
    json_t *canon = pm_api_finish(&root);
    if (!canon || pm_api_problem_failed(prob)) {
        json_decref(canon);
        return -1;
    }
    *params = q;
    *canonical = canon;
    return 0;
}

static int pm__network_parse(const json_t *body, const pm_api_limits *lim, pm_arena *arena,
                             void **params, json_t **canonical, pm_api_problem *prob) {
    if (pm_api__geojson_is(body))
        return pm_api__geojson_parse(body, lim, arena, params, canonical, prob);
    return pm_api__network_parse_doc(body, lim, arena, NULL, params, canonical, prob);
}

/* ---- generation ---- */

static void pm__problem_json(const pm__nreq *q, const pm_network_problem *pr, pm_api_problem *prob) {
    char ptr[64], txt[80], msg[640];
    snprintf(msg, sizeof msg, "%s", pr->message);
    if (pr->error == PM_NETWORK_JUNCTION && pr->node >= 0) {
        pm__id_text(&q->ids[pr->node], txt, sizeof txt);
        snprintf(msg, sizeof msg, "the junction at node %s (its arms are its edges in edge "
                 "order): %s", txt, pr->message);
    }
    if (pr->node >= 0) {
        snprintf(ptr, sizeof ptr, "/nodes/%lld", (long long)pr->node);
        pm_api_problem_field(prob, ptr, "%s", msg);
    }
    if (pr->node2 >= 0) {
        snprintf(ptr, sizeof ptr, "/nodes/%lld", (long long)pr->node2);
        pm_api_problem_field(prob, ptr, "%s", msg);
    }
    for (size_t i = 0; i < pr->nedges; i++) {
        snprintf(ptr, sizeof ptr, "/edges/%u", pr->edges[i]);
        pm_api_problem_field(prob, ptr, "%s", msg);
    }
    if (pr->node < 0 && pr->nedges == 0) pm_api_problem_field(prob, "", "%s", msg);
}

static int pm__network_run(const pm__nreq *q, const pm_api_limits *lim, pm_arena *arena,
                           const volatile int *cancel, pm_scene **scene, pm_api_problem *prob) {
    pm_network_params p = q->p;
    p.max_vertices = lim->max_vertices;
    p.cancel = cancel;
    pm_network_diag diag;
    int rc = pm_network_generate(arena, &p, scene, &diag);
    switch (rc) {
    case PM_OK:
        pm_scene_validate(*scene);   /* checked once here: the encoders then skip it */
        return 0;
    case PM_ERR_GEOMETRY:
        for (size_t i = 0; i < diag.nproblems; i++) pm__problem_json(q, &diag.problems[i], prob);
        if (diag.nproblems == 0) pm_api_problem_field(prob, "", "these nodes and edges give no valid network");
        return -1;
    case PM_ERR_LIMIT:
        pm_api_problem_field(prob, "/max_segment", "the network needs more than the limit max_vertices "
                             "(%llu) vertices: coarsen max_error / max_segment, or send fewer edges",
                             (unsigned long long)lim->max_vertices);
        return -1;
    case PM_ERR_CANCELLED:
        pm_api_problem_set(prob, 503, "deadline", "Service Unavailable",
                           "the network was not finished before the deadline");
        return -1;
    default:
        pm_api_problem_field(prob, "", "the job needs more memory than the limit max_arena_bytes (%zu)",
                             lim->max_arena_bytes);
        return -1;
    }
}

static int pm__network_generate(const void *params, const pm_api_limits *lim, pm_arena *arena,
                                const volatile int *cancel, pm_scene **scene, pm_api_problem *prob) {
    const pm__nreq *q = params;
    if (!q->geo) return pm__network_run(q, lim, arena, cancel, scene, prob);
    pm_api_problem own;
    pm_api_problem_init(&own);
    int rc = pm__network_run(q, lim, arena, cancel, scene, &own);
    if (rc == 0 && pm_api__geojson_meta(q->geo, arena, *scene) < 0) {
        pm_api_problem_set(prob, 503, "out-of-memory", "Service Unavailable", "no memory");
        rc = -1;
    }
    if (pm_api_problem_failed(&own)) pm_api__geojson_problem(q->geo, &own, prob);
    pm_api_problem_free(&own);
    return rc;
}

/* ?metadata=summary leaves out each junction's mouths and corners (seams, ids, edges, roads, warnings stay). */
static const char *const network_summary_omit[] = {"nodes[].mouths", "nodes[].corners", NULL};

const pm_api_generator pm_api_gen_network = {
    .name = "network",
    .version = "1.10.0",   /* 1.10.0: a merged junction's outline meets a road forking off a link at a narrow angle at the fork's crotch, however far out (it was bevelled at the node, and the contour crossed itself); GeoJSON: a position within tolerance of another line's segment splits it (a T snapped onto a segment); 1.9.0: a junction corner beyond one arm's room leaves a point out of that arm's road only, not of both arms' (roads keep more of their drawn points); 1.8.0: close junctions merge over their shortest candidate edge first, not the first listed (which layouts build no longer depends on the edge order; the few whose merges had several candidates get other merged junctions); 1.7.0: arms' directions rounded to multiples of 2^-32 and their rooms down to 2^-24 m before a junction is built, so the junctions of a grid turned by any angle share one build as along the axes (last-bit changes in non-axis directions); 1.6.1: a sidewalk gap at a junction corner no longer reads its overlap flag from old memory (its sidewalk_interrupted warning could say "overlap" and vary between runs); 1.6.0: road 1.6.0's chord bound; 1.5.0: road 1.5.0's sampling (streets in the fewest chords of at most max_segment); 1.4.0: junctions built in their node's local frame (translated when placed, identical ones reused; coordinates rounded there); 1.3.1: road 1.3.0's triangle order and sampling; 1.3.0 (never released): merged junctions keep their arms at their own nodes; roads fan the inner side of turns tighter than their half width; sidewalks on other pieces cut back (bare corners, interrupted road sidewalks); arms past through nodes; 30-degree sharp nodes */
    .path = "/v1/networks",
    .parse = pm__network_parse,
    .parse_text = pm_api__network_parse_text,
    .from_query = NULL,
    .generate = pm__network_generate,
    .summary_omit = network_summary_omit,
};
