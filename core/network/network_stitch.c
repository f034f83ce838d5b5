/* The stitch: every junction's and every road's asphalt into one primitive
 * whose seams share vertices, and the network's metadata. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "network/network_internal.h"
#include "geom/geom.h"
#include "scene/result.h"

#define PM__NONE UINT32_MAX

static int64_t pm__prim_index(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; s && i < s->nprims; i++)   /* (first letters first: no call for most) */
        if (s->prims[i].name[0] == name[0] && strcmp(s->prims[i].name, name) == 0) return i;
    return -1;
}

/* Appends src's vertices and triangles to dst; returns the vertex offset
 * through *voff. Normals are left zero: the stitch computes every
 * primitive's normals over the whole network at the end. */
static int pm__append(pm_scene *s, uint32_t dst, const pm_prim *src, uint32_t *voff) {
    int64_t off = pm_prim_append(s, &s->prims[dst], src);
    if (off < 0) return PM_ERR_NOMEM;
    *voff = (uint32_t)off;
    return PM_OK;
}

/* A road whose end section is not its mouth: it turns so tightly right
 * after the mouth that its inner side folds back over the mouth. */
static void pm__seam_problem(pm__net *N, const pm__road *R, int end) {
    pm_network_problem *q;
    if (pm__network_problem(N, &q)) return;
    const pm__step *st = &N->steps.data[R->first_step + (end ? R->nsteps - 1 : 0)];
    q->error = PM_NETWORK_SEAM;
    q->node = end ? R->end : R->start;
    q->edges[q->nedges++] = st->edge;
    snprintf(q->message, sizeof q->message, "the road along edge %u turns so tightly next to the "
             "junction mouth at node %lld that its inner side folds back over the mouth: give it "
             "more room after the mouth (a longer first segment, a gentler turn) or a smaller width",
             st->edge, (long long)q->node);
}

/* Column of a road vertex from its V (0 left, 0.5 centre, 1 right). */
static int pm__col(float v) { return v < 0.25f ? 0 : (v > 0.75f ? 2 : 1); }

/* The road's start section (U = 0 exactly; ok[0]) and end section (the
 * largest U of each column; ok[1]), as road-local vertices left, centre,
 * right, in one pass; ok says whether each is one vertex per column. */
static void pm__sections(const pm_prim *P, uint32_t s0[3], uint32_t s1[3], bool ok[2]) {
    uint32_t n0[3] = {0, 0, 0}, n1[3] = {0, 0, 0};
    float best[3] = {-1, -1, -1};
    for (int c = 0; c < 3; c++) s0[c] = s1[c] = PM__NONE;
    for (uint32_t v = 0; v < P->vcount; v++) {
        float u = P->uvs[2 * v];
        int c = pm__col(P->uvs[2 * v + 1]);
        if (u == 0.0f) { s0[c] = v; n0[c]++; }
        if (u > best[c]) {
            best[c] = u; s1[c] = v; n1[c] = 1;
        } else if (u == best[c]) {
            n1[c]++;
        }
    }
    ok[0] = n0[0] == 1 && n0[1] == 1 && n0[2] == 1;
    ok[1] = n1[0] == 1 && n1[1] == 1 && n1[2] == 1;
}

/* Maps one end section onto junction mouth (jl, jr: output vertices, the
 * road's own left and right there). Returns false when they are not the
 * same points (beyond snapping). */
static bool pm__map_end(pm__net *N, const pm_prim *A, const pm_prim *P, const uint32_t sec[3],
                        uint32_t jl, uint32_t jr, uint32_t *remap) {
    double tol = 0.01 + 2.0 * N->p->snap;
    /* (Most ends are the mouth's very floats: distance 0, no root needed.) */
    const float *pl = P->positions + 3 * sec[0], *pr = P->positions + 3 * sec[2];
    const float *ml = A->positions + 3 * jl, *mr = A->positions + 3 * jr;
    bool same = pl[0] == ml[0] && pl[1] == ml[1] && pl[2] == ml[2] && pr[0] == mr[0] && pr[1] == mr[1] &&
                pr[2] == mr[2];
    if (!same && (pm_v3f_dist(pl, ml) > tol || pm_v3f_dist(pr, mr) > tol)) return false;
    remap[sec[0]] = jl;
    remap[sec[2]] = jr;
    return true;
}

static void pm__midpoint(pm_prim *A, uint32_t c, uint32_t l, uint32_t r) {
    for (int k = 0; k < 3; k++)
        A->positions[3 * c + k] = (float)(((double)A->positions[3 * l + k] + A->positions[3 * r + k]) / 2.0);
}

/* Appends road vertex v once (an aliased vertex becomes its twin). */
static int pm__emit(pm_scene *s, pm_prim *A, const pm_prim *P, uint32_t v, uint32_t *remap,
                    const uint32_t *alias) {
    if (remap[v] != PM__NONE) return PM_OK;
    if (alias[v] != PM__NONE) {
        int rc = pm__emit(s, A, P, alias[v], remap, alias);
        remap[v] = remap[alias[v]];
        return rc;
    }
    int64_t id = pm_prim_add_vertex(s, A, P->positions + 3 * v, NULL, NULL, NULL);   /* see pm__append */
    if (id < 0) return PM_ERR_NOMEM;
    remap[v] = (uint32_t)id;
    return PM_OK;
}

/* The road's triangles edge by edge of its chain (each edge's vertices and
 * triangles then form ranges), vertices in order of first use. */
static int pm__emit_pieces(pm__net *N, pm_scene *s, pm__road *R, const pm_prim *P, uint32_t *remap,
                           const uint32_t *alias) {
    pm_prim *A = &s->prims[0];
    uint32_t nt = P->icount / 3;
    uint32_t *tri_edge = pm_arena_alloc(N->tmp, (nt + 1) * sizeof *tri_edge);
    R->piece = pm_arena_calloc(N->a, 4 * R->nsteps, sizeof *R->piece);
    R->piece_len = pm_arena_calloc(N->a, R->nsteps, sizeof *R->piece_len);
    if (!tri_edge || !R->piece || !R->piece_len) return PM_ERR_NOMEM;
    int rc = pm__network_pieces(N, R, P, tri_edge, R->piece_len);
    R->voff = A->vcount;
    R->toff = A->icount / 3;
    for (uint32_t k = 0; rc == PM_OK && k < R->nsteps; k++) {
        uint32_t v0 = A->vcount, t0 = A->icount / 3;
        for (uint32_t t = 0; rc == PM_OK && t < nt; t++) {
            if (tri_edge[t] != k) continue;
            const uint32_t *q = P->indices + 3 * t;
            uint32_t o[3];
            for (int c = 0; c < 3 && rc == PM_OK; c++) {
                o[c] = remap[q[c]];
                if (o[c] != PM__NONE) continue;    /* most corners: a vertex already out */
                rc = pm__emit(s, A, P, q[c], remap, alias);
                o[c] = remap[q[c]];
            }
            if (rc == PM_OK && pm_prim_add_tri(s, A, o[0], o[1], o[2])) rc = PM_ERR_NOMEM;
        }
        R->piece[4 * k] = v0;
        R->piece[4 * k + 1] = A->vcount - v0;
        R->piece[4 * k + 2] = t0;
        R->piece[4 * k + 3] = A->icount / 3 - t0;
    }
    R->vcount = A->vcount - R->voff;
    R->tcount = A->icount / 3 - R->toff;
    return rc;
}

/* One road into the asphalt: its end sections replaced by the mouths'
 * vertices (the centre column kept, moved to the mouth's midpoint). */
static int pm__stitch_road(pm__net *N, pm_scene *s, pm__road *R) {
    const pm_prim *P = &R->scene->prims[0];
    pm_prim *A = &s->prims[0];
    pm_arena_reset(N->tmp);   /* the road's working arrays: until the next road */
    uint32_t *remap = pm_arena_alloc(N->tmp, (P->vcount ? P->vcount : 1) * sizeof *remap);
    uint32_t *alias = pm_arena_alloc(N->tmp, (P->vcount ? P->vcount : 1) * sizeof *alias);
    if (!remap || !alias) return PM_ERR_NOMEM;
    for (uint32_t v = 0; v < P->vcount; v++) remap[v] = alias[v] = PM__NONE;
    uint32_t sec0[3], sec1[3];
    bool sec_ok[2];
    pm__sections(P, sec0, sec1, sec_ok);
    const pm__node *J0 = R->arm0 >= 0 ? &N->nodes[R->start] : NULL;
    const pm__node *J1 = R->arm1 >= 0 ? &N->nodes[R->end] : NULL;
    if (J0 && !(sec_ok[0] &&
                pm__map_end(N, A, P, sec0, J0->voff + J0->mouth_l[R->arm0],
                            J0->voff + J0->mouth_r[R->arm0], remap))) {
        pm__seam_problem(N, R, 0);
        return PM_OK;
    }
    /* Entering the junction, the road's left is the mouth's right. */
    if (J1 && !(sec_ok[1] &&
                pm__map_end(N, A, P, sec1, J1->voff + J1->mouth_r[R->arm1],
                            J1->voff + J1->mouth_l[R->arm1], remap))) {
        pm__seam_problem(N, R, 1);
        return PM_OK;
    }
    /* A closed road repeats its first section at the end (its own U runs
     * on); here UVs are planar, so the two are one. */
    bool weld = R->closed && sec_ok[0] && sec_ok[1];
    if (weld)
        for (int c = 0; c < 3; c++) alias[sec1[c]] = sec0[c];
    int rc = pm__emit_pieces(N, s, R, P, remap, alias);
    /* The centre of a seam is always used by the road's triangles; should
     * it not be, it still has to exist for the junction's split. */
    if (rc == PM_OK && J0) rc = pm__emit(s, A, P, sec0[1], remap, alias);
    if (rc == PM_OK && J1) rc = pm__emit(s, A, P, sec1[1], remap, alias);
    if (rc) return rc;
    if (J0) {
        for (int c = 0; c < 3; c++) R->seam0[c] = remap[sec0[c]];
        pm__midpoint(A, R->seam0[1], R->seam0[0], R->seam0[2]);
        N->nodes[R->start].split[R->arm0] = R->seam0[1];
    }
    if (J1) {
        for (int c = 0; c < 3; c++) R->seam1[c] = remap[sec1[c]];
        pm__midpoint(A, R->seam1[1], R->seam1[0], R->seam1[2]);
        N->nodes[R->end].split[R->arm1] = R->seam1[1];
    }
    rc = pm__network_road_sides(N, R, P, remap, A);
    if (rc == PM_ERR_GEOMETRY) {
        pm_network_problem *q;
        if (pm__network_problem(N, &q)) return PM_OK;
        q->error = PM_NETWORK_SIDEWALK;
        q->node = -1;
        q->edges[q->nedges++] = N->steps.data[R->first_step].edge;
        snprintf(q->message, sizeof q->message, "the road along edge %u folds so tightly that its "
                 "edge has no single curb line for a sidewalk: give it gentler curves",
                 q->edges[0]);
        return PM_OK;
    }
    return rc;
}

/* The triangle holding directed edge a -> b among [t0, t1) and [e0, e1),
 * and through *rot the corner where that edge starts. */
static int64_t pm__find_edge(const pm_prim *A, uint32_t t0, uint32_t t1, uint32_t e0, uint32_t e1,
                             uint32_t a, uint32_t b, int *rot) {
    for (int pass = 0; pass < 2; pass++) {
        uint32_t lo = pass ? e0 : t0, hi = pass ? e1 : t1;
        for (uint32_t t = lo; t < hi; t++) {
            const uint32_t *q = A->indices + 3 * t;
            /* Corners in order 0, 1, 2: the first that starts the edge. */
            int r = q[0] == a && q[1] == b ? 0 : q[1] == a && q[2] == b ? 1 : q[2] == a && q[0] == b ? 2 : -1;
            if (r >= 0) { *rot = r; return t; }
        }
    }
    return -1;
}

/* Splits each junction's mouth-edge triangle at the road's centre vertex,
 * so the junction's side of the seam has the road's two edges. */
static int pm__split_mouths(pm__net *N, pm_scene *s) {
    pm_prim *A = &s->prims[0];
    for (size_t n = 0; n < N->p->nnodes; n++) {
        pm__node *V = &N->nodes[n];
        if (!V->scene) continue;
        uint32_t e0 = A->icount / 3;
        for (uint32_t k = 0; k < V->deg; k++) {
            uint32_t c = V->split[k];
            if (c == PM__NONE) continue;
            uint32_t l = V->voff + V->mouth_l[k], r = V->voff + V->mouth_r[k];
            int rot = 0;
            int64_t t = pm__find_edge(A, V->toff, V->toff + V->tcount, e0, A->icount / 3, r, l, &rot);
            if (t < 0) return PM_ERR_GEOMETRY;
            uint32_t x = A->indices[3 * t + (rot + 2) % 3];
            A->indices[3 * t] = r;
            A->indices[3 * t + 1] = c;
            A->indices[3 * t + 2] = x;
            if (pm_prim_add_tri(s, A, c, l, x)) return PM_ERR_NOMEM;
        }
        V->xt0 = e0;
        V->xtn = A->icount / 3 - e0;
    }
    return PM_OK;
}

static int pm__add_prims(pm__net *N, pm_scene *s, bool *sidewalks) {
    uint64_t nv = 0, nt = 0;
    *sidewalks = false;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm_scene *J = N->nodes[n].scene;
        if (!J) continue;
        nv += J->prims[0].vcount;
        nt += J->prims[0].icount / 3 + N->nodes[n].deg;
        if (pm__prim_index(J, "curb") >= 0) *sidewalks = true;
    }
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        nv += R->scene->prims[0].vcount;
        nt += R->scene->prims[0].icount / 3;
        if (N->p->edges[N->steps.data[R->first_step].edge].has_sidewalk) *sidewalks = true;
    }
    if (nv >= UINT32_MAX / 4 || nt >= UINT32_MAX / 4) return PM_ERR_LIMIT;
    if (!pm_scene_add_prim(s, "asphalt", "asphalt", PM_PRIM_UV, (uint32_t)nv, (uint32_t)(3 * nt)))
        return PM_ERR_NOMEM;
    if (*sidewalks && (!pm_scene_add_prim(s, "curb", "curb", PM_PRIM_UV, 0, 0) ||
                       !pm_scene_add_prim(s, "sidewalk", "sidewalk", PM_PRIM_UV, 0, 0)))
        return PM_ERR_NOMEM;
    return PM_OK;
}

static int pm__stitch_junction(pm_scene *s, pm__node *V) {
    uint32_t off;
    for (uint32_t k = 0; k < V->deg; k++) V->split[k] = PM__NONE;
    int rc = pm__append(s, 0, &V->scene->prims[0], &off);
    if (rc) return rc;
    V->voff = off;
    V->vcount = V->scene->prims[0].vcount;
    V->tcount = V->scene->prims[0].icount / 3;
    V->toff = s->prims[0].icount / 3 - V->tcount;
    V->swt0 = V->swtn = 0;
    return PM_OK;
}

/* The junctions' curbs and sidewalks, in node order, ahead of the roads'
 * slabs: each primitive sized once for all of them and the roads' (the
 * road sides are known by now), so that it is not copied as it grows. */
static int pm__stitch_slabs(pm__net *N, pm_scene *s) {
    static const char *const names[2] = {"curb", "sidewalk"};
    uint64_t v[2], t[2];
    pm__network_sidewalk_bound(N, v, t);
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm_scene *J = N->nodes[n].scene;
        for (uint32_t i = 0; J && i < 2; i++) {
            int64_t k = pm__prim_index(J, names[i]);
            if (k < 0) continue;
            v[i] += J->prims[k].vcount;
            t[i] += J->prims[k].icount / 3;
        }
    }
    for (uint32_t i = 0; i < 2; i++)
        if (v[i] < UINT32_MAX / 4 && t[i] < UINT32_MAX / 12 &&
            pm_prim_reserve(s, &s->prims[1 + i], (uint32_t)v[i], (uint32_t)(3 * t[i])))
            return PM_ERR_NOMEM;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        pm__node *V = &N->nodes[n];
        if (!V->scene) continue;
        V->swt0 = s->prims[2].icount / 3;
        for (uint32_t i = 0; i < 2; i++) {
            int64_t k = pm__prim_index(V->scene, names[i]);
            uint32_t off;
            int rc = k >= 0 ? pm__append(s, 1 + i, &V->scene->prims[k], &off) : PM_OK;
            if (rc) return rc;
        }
        V->swtn = s->prims[2].icount / 3 - V->swt0;
    }
    return PM_OK;
}

static int pm__stitch_all(pm__net *N, pm_scene **out);

int pm__network_stitch(pm__net *N, pm_scene **out) {
    /* The working arrays of one road or one sidewalk side at a time, in a
     * scratch arena: they go back to the job's arena as they end instead
     * of staying until the job does. */
    N->tmp = pm_arena_create_scratch(N->a);
    int rc = N->tmp ? pm__stitch_all(N, out) : PM_ERR_NOMEM;
    pm_arena_destroy(N->tmp);
    N->tmp = NULL;
    return rc;
}

static int pm__stitch_all(pm__net *N, pm_scene **out) {
    pm_scene *s = pm_scene_create(N->a);
    if (!s) return PM_ERR_NOMEM;
    bool sidewalks;
    int rc = pm__add_prims(N, s, &sidewalks);
    for (size_t n = 0; rc == PM_OK && n < N->p->nnodes; n++)
        if (N->nodes[n].scene) rc = pm__stitch_junction(s, &N->nodes[n]);
    for (size_t r = 0; rc == PM_OK && r < N->roads.len; r++) rc = pm__stitch_road(N, s, &N->roads.data[r]);
    if (rc == PM_OK && N->problems.len) return PM_OK;     /* reported by the caller */
    if (rc == PM_OK) rc = pm__split_mouths(N, s);
    if (rc == PM_OK && s->nprims == 3) rc = pm__stitch_slabs(N, s);
    if (rc == PM_OK && s->nprims == 3) rc = pm__network_sidewalks(N, s);
    if (rc == PM_OK && N->problems.len) return PM_OK;     /* reported by the caller */
    if (rc) return rc;
    if (s->nprims == 3) {
        /* The bands' UVs planar over the whole network like the asphalt's,
         * so they run on across junction/road seams. */
        pm_prim *sw = &s->prims[2];
        for (uint32_t v = 0; v < sw->vcount; v++) {
            sw->uvs[2 * v] = (float)((double)sw->positions[3 * v] * N->p->uv_scale);
            sw->uvs[2 * v + 1] = (float)((double)sw->positions[3 * v + 2] * N->p->uv_scale);
        }
        pm_prim_compute_normals(&s->prims[1]);
        pm_prim_compute_normals(sw);
    }
    /* One UV scheme for the whole surface: a seam vertex can carry only one
     * UV, and planar UVs are the scheme that is continuous across seams. */
    pm_prim *A = &s->prims[0];
    for (uint32_t v = 0; v < A->vcount; v++) {
        A->uvs[2 * v] = (float)((double)A->positions[3 * v] * N->p->uv_scale);
        A->uvs[2 * v + 1] = (float)((double)A->positions[3 * v + 2] * N->p->uv_scale);
    }
    pm_prim_compute_normals(A);
    *out = s;
    return PM_OK;
}

/* ---- metadata ---- */

static pm_meta *pm__id(pm_arena *a, const pm_network_params *p, size_t n) {
    if (!p->ids) return pm_meta_int(a, (int64_t)n);
    return p->ids[n].is_num ? pm_meta_int(a, p->ids[n].num) : pm_meta_str(a, p->ids[n].str);
}

static pm_meta *pm__range(pm_arena *a, uint32_t first, uint32_t count) {
    int64_t v[2] = {first, count};
    return pm_meta_ints(a, v, 2);
}

static pm_meta *pm__vertex(pm_arena *a, const pm_prim *A, uint32_t v) {
    double q[3] = {A->positions[3 * v], A->positions[3 * v + 1], A->positions[3 * v + 2]};
    return pm_meta_nums(a, q, 3);
}

/* A member of the junction's own metadata, unlinked from it and moved
 * into the network's tree (a node can sit in one list only). */
static pm_meta *pm__take(const pm_scene *J, const char *key) {
    pm_meta *obj = J->meta, *prev = NULL;
    for (pm_meta *m = obj->u.kids.first; m; prev = m, m = m->next) {
        if (strcmp(m->key, key) != 0) continue;
        if (prev) prev->next = m->next;
        else obj->u.kids.first = m->next;
        if (obj->u.kids.last == m) obj->u.kids.last = prev;
        obj->u.kids.count--;
        m->next = NULL;
        return m;
    }
    return NULL;
}

static const char *const pm__kinds[] = {"unused", "end", "through", "junction", "merged"};

static int pm__node_meta(pm__net *N, const pm_scene *s, size_t n, pm_meta *arr) {
    pm_arena *a = N->a;
    const pm__node *V = &N->nodes[n];
    const pm_prim *A = &s->prims[0];
    pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
    int rc = pm_meta_set_lit(o, "id", pm__id(a, N->p, n));
    rc |= pm_meta_set_lit(o, "index", pm_meta_int(a, (int64_t)n));
    rc |= pm_meta_set_lit(o, "kind", pm_meta_str(a, pm__kinds[V->kind]));
    rc |= pm_meta_set_lit(o, "position", pm_meta_nums(a, N->p->nodes + 3 * n, 3));
    for (uint32_t k = 0; k < V->deg; k++) rc |= pm_meta_push(edges, pm_meta_int(a, N->inc[V->first + k].edge));
    rc |= pm_meta_set_lit(o, "edges", edges);
    if (V->kind == PM__MERGED) rc |= pm_meta_set_lit(o, "junction", pm_meta_int(a, V->into));
    if (V->merged_node >= 0) rc |= pm_meta_set_lit(o, "centre", pm_meta_nums(a, V->c, 3));
    if (V->scene) {
        pm_meta *mouths = pm_meta_arr(a);
        for (uint32_t k = 0; k < V->deg; k++) {
            pm_meta *m = pm_meta_obj(a);
            uint32_t l = V->voff + V->mouth_l[k], r = V->voff + V->mouth_r[k];
            rc |= pm_meta_set_lit(m, "edge", pm_meta_int(a, N->inc[V->first + k].edge));
            rc |= pm_meta_set_lit(m, "distance", pm_meta_num(a, V->mouth_d[k]));
            rc |= pm_meta_set_lit(m, "left", pm__vertex(a, A, l));
            rc |= pm_meta_set_lit(m, "right", pm__vertex(a, A, r));
            rc |= pm_meta_set_lit(m, "left_index", pm_meta_int(a, l));
            rc |= pm_meta_set_lit(m, "right_index", pm_meta_int(a, r));
            rc |= pm_meta_set_lit(m, "centre_index", pm_meta_int(a, V->split[k]));
            rc |= pm_meta_push(mouths, m);
        }
        rc |= pm_meta_set_lit(o, "vertices", pm__range(a, V->voff, V->vcount));
        rc |= pm_meta_set_lit(o, "mouths", mouths);
        rc |= pm_meta_set_lit(o, "corners", pm__take(V->scene, "corners"));
    }
    return rc | pm_meta_push(arr, o);
}

static int pm__edge_meta(pm__net *N, uint32_t e, pm_meta *arr) {
    pm_arena *a = N->a;
    const pm_network_edge *E = &N->p->edges[e];
    const double *q = N->p->nodes + 3 * E->from;
    double len = 0.0;
    for (size_t i = 0; i <= E->npoints; i++) {
        const double *r = i < E->npoints ? E->points + 3 * i : N->p->nodes + 3 * E->to;
        len += hypot(r[0] - q[0], r[2] - q[2]);
        q = r;
    }
    if (!N->edge_road[e]) {      /* inside a merged junction: no road of its own */
        pm_meta *o = pm_meta_obj(a);
        int rc = pm_meta_set_lit(o, "index", pm_meta_int(a, e));
        rc |= pm_meta_set_lit(o, "from", pm__id(a, N->p, E->from));
        rc |= pm_meta_set_lit(o, "to", pm__id(a, N->p, E->to));
        rc |= pm_meta_set_lit(o, "road", pm_meta_null(a));
        rc |= pm_meta_set_lit(o, "width", pm_meta_num(a, E->width));
        rc |= pm_meta_set_lit(o, "plan_length", pm_meta_num(a, len));
        rc |= pm_meta_set_lit(o, "length", pm_meta_num(a, 0.0));
        rc |= pm_meta_set_lit(o, "vertices", pm__range(a, 0, 0));
        rc |= pm_meta_set_lit(o, "triangles", pm__range(a, 0, 0));
        rc |= pm_meta_set_lit(o, "sidewalk_sides", pm_meta_arr(a));
        return rc | pm_meta_push(arr, o);
    }
    const pm__road *R = &N->roads.data[N->edge_road[e] - 1];
    size_t k = 0;
    while (k + 1 < R->nsteps && N->steps.data[R->first_step + k].edge != e) k++;
    const uint32_t *piece = R->piece + 4 * k;
    pm_meta *o = pm_meta_obj(a);
    int rc = pm_meta_set_lit(o, "index", pm_meta_int(a, e));
    rc |= pm_meta_set_lit(o, "from", pm__id(a, N->p, E->from));
    rc |= pm_meta_set_lit(o, "to", pm__id(a, N->p, E->to));
    rc |= pm_meta_set_lit(o, "road", pm_meta_int(a, (int64_t)N->edge_road[e] - 1));
    rc |= pm_meta_set_lit(o, "width", pm_meta_num(a, E->width));
    rc |= pm_meta_set_lit(o, "plan_length", pm_meta_num(a, len));
    rc |= pm_meta_set_lit(o, "length", pm_meta_num(a, R->piece_len[k]));
    rc |= pm_meta_set_lit(o, "vertices", pm__range(a, piece[0], piece[1]));
    rc |= pm_meta_set_lit(o, "triangles", pm__range(a, piece[2], piece[3]));
    /* Sides as seen travelling from `from` to `to`; the road may run the
     * other way. */
    pm_meta *sides = pm_meta_arr(a);
    bool rev = N->steps.data[R->first_step + k].end == 1;
    if (R->nchain[rev ? 1 : 0] >= 2) rc |= pm_meta_push(sides, pm_meta_str(a, "left"));
    if (R->nchain[rev ? 0 : 1] >= 2) rc |= pm_meta_push(sides, pm_meta_str(a, "right"));
    rc |= pm_meta_set_lit(o, "sidewalk_sides", sides);
    return rc | pm_meta_push(arr, o);
}

static int pm__seam_meta(pm__net *N, size_t r, int end, pm_meta *arr) {
    pm_arena *a = N->a;
    const pm__road *R = &N->roads.data[r];
    const uint32_t *sv = end ? R->seam1 : R->seam0;
    const pm__step *st = &N->steps.data[R->first_step + (end ? R->nsteps - 1 : 0)];
    pm_meta *o = pm_meta_obj(a);
    int rc = pm_meta_set_lit(o, "node", pm_meta_int(a, end ? R->end : R->start));
    rc |= pm_meta_set_lit(o, "edge", pm_meta_int(a, st->edge));
    rc |= pm_meta_set_lit(o, "road", pm_meta_int(a, (int64_t)r));
    rc |= pm_meta_set_lit(o, "road_end", pm_meta_str(a, end ? "end" : "start"));
    /* The mouth's left/right as seen from the junction looking out. */
    rc |= pm_meta_set_lit(o, "left_index", pm_meta_int(a, end ? sv[2] : sv[0]));
    rc |= pm_meta_set_lit(o, "centre_index", pm_meta_int(a, sv[1]));
    rc |= pm_meta_set_lit(o, "right_index", pm_meta_int(a, end ? sv[0] : sv[2]));
    return rc | pm_meta_push(arr, o);
}

static int pm__road_meta(pm__net *N, size_t r, pm_meta *roads, pm_meta *seams) {
    pm_arena *a = N->a;
    const pm__road *R = &N->roads.data[r];
    pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a), *rev = pm_meta_arr(a);
    int rc = 0;
    for (size_t k = 0; k < R->nsteps; k++) {
        const pm__step *st = &N->steps.data[R->first_step + k];
        rc |= pm_meta_push(edges, pm_meta_int(a, st->edge));
        rc |= pm_meta_push(rev, pm_meta_bool(a, st->end == 1));
    }
    rc |= pm_meta_set_lit(o, "edges", edges);
    rc |= pm_meta_set_lit(o, "reversed", rev);
    rc |= pm_meta_set_lit(o, "closed", pm_meta_bool(a, R->closed));
    rc |= pm_meta_set_lit(o, "start", R->closed ? pm_meta_null(a) : pm_meta_int(a, R->start));
    rc |= pm_meta_set_lit(o, "end", R->closed ? pm_meta_null(a) : pm_meta_int(a, R->end));
    rc |= pm_meta_set_lit(o, "length", pm_meta_num(a, R->length));
    rc |= pm_meta_set_lit(o, "samples", pm_meta_int(a, R->samples));
    rc |= pm_meta_set_lit(o, "vertices", pm__range(a, R->voff, R->vcount));
    rc |= pm_meta_set_lit(o, "triangles", pm__range(a, R->toff, R->tcount));
    rc |= pm_meta_push(roads, o);
    if (R->arm0 >= 0) rc |= pm__seam_meta(N, r, 0, seams);
    if (R->arm1 >= 0) rc |= pm__seam_meta(N, r, 1, seams);
    return rc;
}

/* A road side whose sidewalk stops short of a stretch where the road's own
 * edge crosses itself. */
static int pm__gap_meta(pm__net *N, const pm__gap_t *g, pm_meta *out) {
    pm_arena *a = N->a;
    const pm__road *R = &N->roads.data[g->road];
    pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
    double from[3] = {g->from[0], g->from[1], g->from[2]}, to[3] = {g->to[0], g->to[1], g->to[2]};
    int rc = pm_meta_set_lit(o, "code", pm_meta_str(a, "sidewalk_interrupted"));
    for (size_t k = 0; k < R->nsteps; k++)
        rc |= pm_meta_push(edges, pm_meta_int(a, N->steps.data[R->first_step + k].edge));
    rc |= pm_meta_set_lit(o, "road", pm_meta_int(a, (int64_t)g->road));
    rc |= pm_meta_set_lit(o, "edges", edges);
    rc |= pm_meta_set_lit(o, "side", pm_meta_str(a, g->side ? "right" : "left"));
    rc |= pm_meta_set_lit(o, "from", pm_meta_nums(a, from, 3));
    rc |= pm_meta_set_lit(o, "to", pm_meta_nums(a, to, 3));
    rc |= pm_meta_set_lit(o, "curb_edges", pm_meta_int(a, g->bare));
    char msg[200];
    if (g->overlap)
        snprintf(msg, sizeof msg, "the road's %s sidewalk would lie on another road, junction or "
                 "sidewalk there (too little room between them): it stops (with end caps) on both "
                 "sides of that stretch", g->side ? "right" : "left");
    else if (g->corner)
        snprintf(msg, sizeof msg, "the road's %s sidewalk starts beyond a junction corner that "
                 "had no room for its own (corner_sidewalk_dropped): from there it would lie on "
                 "the neighbouring road's", g->side ? "right" : "left");
    else
        snprintf(msg, sizeof msg, "the road's %s edge crosses itself in a turn too tight for its "
                 "width: its sidewalk stops (with end caps) on both sides of that stretch",
                 g->side ? "right" : "left");
    rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
    return rc | pm_meta_push(out, o);
}

/* The nodes merged into junction n (n first) and the edges inside it, in
 * index order, into nodes and edges; the warning's message into msg. */
static int pm__merged_lists(pm__net *N, size_t n, pm_meta *nodes, pm_meta *edges, char *msg,
                            size_t cap) {
    const pm_network_params *p = N->p;
    const pm__node *V = &N->nodes[n];
    pm_arena *a = N->a;
    int rc = pm_meta_push(nodes, pm_meta_int(a, (int64_t)n));
    size_t count = 1;
    for (size_t m = 0; m < p->nnodes; m++)
        if (N->nodes[m].kind == PM__MERGED && N->nodes[m].into == n) {
            rc |= pm_meta_push(nodes, pm_meta_int(a, (int64_t)m));
            count++;
        }
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        uint32_t f = N->nodes[E->from].kind == PM__MERGED ? N->nodes[E->from].into : E->from;
        uint32_t t = N->nodes[E->to].kind == PM__MERGED ? N->nodes[E->to].into : E->to;
        if (f == n && t == n) rc |= pm_meta_push(edges, pm_meta_int(a, e));
    }
    const pm_network_edge *E = &p->edges[V->merged_edge];
    if (count == 2) {
        snprintf(msg, cap, "nodes %zu and %lld are %.3f m apart, too close for two junctions "
                 "and a road between them: merged into one junction centred between them, with "
                 "every arm of both; edge %u lies inside it", n, (long long)V->merged_node,
                 hypot(p->nodes[3 * E->from] - p->nodes[3 * E->to],
                       p->nodes[3 * E->from + 2] - p->nodes[3 * E->to + 2]), V->merged_edge);
    } else {
        int k = snprintf(msg, cap, "nodes %zu", n);
        for (size_t m = 0; m < p->nnodes && k > 0 && (size_t)k < cap; m++)
            if (N->nodes[m].kind == PM__MERGED && N->nodes[m].into == n)
                k += snprintf(msg + k, cap - (size_t)k, ", %zu", m);
        if (k > 0 && (size_t)k < cap)
            snprintf(msg + k, cap - (size_t)k, " are too close for separate junctions (roads from "
                     "two of them meet the third within their widths): merged into one junction "
                     "centred among them, with every arm of all; the edges between them lie inside it");
    }
    return rc;
}

/* The arm of junction node n on (edge, end), or -1. */
static int64_t pm__arm_on(const pm__net *N, int64_t n, uint32_t edge, int end) {
    const pm__node *V = n >= 0 ? &N->nodes[n] : NULL;
    for (uint32_t k = 0; V && V->scene && V->cap && k < V->deg; k++)
        if (N->inc[V->first + k].edge == edge && N->inc[V->first + k].end == end) return k;
    return -1;
}

/* junctions_close for a road through through nodes between two junctions
 * whose mouths were shortened to fit (naming every edge of the road). */
static int pm__close_chain_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    int rc = 0;
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        if (R->closed || R->nsteps < 2) continue;
        const pm__step *st = &N->steps.data[R->first_step], *last = st + R->nsteps - 1;
        int64_t k = pm__arm_on(N, R->start, st->edge, st->end);
        int64_t j = pm__arm_on(N, R->end, last->edge, last->end ? 0 : 1);
        if (k < 0 || j < 0) continue;
        if (N->nodes[R->start].cap[k] == HUGE_VAL && N->nodes[R->end].cap[j] == HUGE_VAL) continue;
        pm_meta *o = pm_meta_obj(a), *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a);
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "junctions_close"));
        rc |= pm_meta_push(nodes, pm_meta_int(a, R->start));
        rc |= pm_meta_push(nodes, pm_meta_int(a, R->end));
        for (size_t i = 0; i < R->nsteps; i++) rc |= pm_meta_push(edges, pm_meta_int(a, st[i].edge));
        rc |= pm_meta_set_lit(o, "nodes", nodes);
        rc |= pm_meta_set_lit(o, "edges", edges);
        rc |= pm_meta_set_lit(o, "road_length", pm_meta_num(a, R->length));
        char msg[240];
        snprintf(msg, sizeof msg, "the junctions at nodes %lld and %lld are too close for their full "
                 "corners: their corners were made smaller so that a road of %.3f m joins them along "
                 "edges %u to %u (through their through nodes)", (long long)R->start, (long long)R->end,
                 R->length, st->edge, last->edge);
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
        rc |= pm_meta_push(out, o);
        N->nwarnings++;
    }
    return rc;
}

/* Close junctions: each pair merged into one (junctions_merged), and each
 * pair joined by a road shortened to fit (junctions_close). */
static int pm__close_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    const pm_network_params *p = N->p;
    int rc = 0;
    char msg[320];
    for (size_t n = 0; n < p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        if (V->merged_node < 0 || !V->scene) continue;
        pm_meta *o = pm_meta_obj(a), *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a);
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "junctions_merged"));
        rc |= pm__merged_lists(N, n, nodes, edges, msg, sizeof msg);
        rc |= pm_meta_set_lit(o, "node", pm_meta_int(a, (int64_t)n));
        rc |= pm_meta_set_lit(o, "nodes", nodes);
        rc |= pm_meta_set_lit(o, "edges", edges);
        rc |= pm_meta_set_lit(o, "centre", pm_meta_nums(a, V->c, 3));
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
        rc |= pm_meta_push(out, o);
        N->nwarnings++;
    }
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        const pm__node *A = &N->nodes[E->from], *B = &N->nodes[E->to];
        if (!N->edge_road[e] || !A->scene || !B->scene || !A->cap || !B->cap) continue;
        uint32_t ka = 0, kb = 0;
        while (ka < A->deg && !(N->inc[A->first + ka].edge == e && N->inc[A->first + ka].end == 0)) ka++;
        while (kb < B->deg && !(N->inc[B->first + kb].edge == e && N->inc[B->first + kb].end == 1)) kb++;
        if (ka == A->deg || kb == B->deg || (A->cap[ka] == HUGE_VAL && B->cap[kb] == HUGE_VAL)) continue;
        const pm__road *R = &N->roads.data[N->edge_road[e] - 1];
        pm_meta *o = pm_meta_obj(a), *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a);
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "junctions_close"));
        rc |= pm_meta_push(nodes, pm_meta_int(a, E->from));
        rc |= pm_meta_push(nodes, pm_meta_int(a, E->to));
        rc |= pm_meta_push(edges, pm_meta_int(a, e));
        rc |= pm_meta_set_lit(o, "nodes", nodes);
        rc |= pm_meta_set_lit(o, "edges", edges);
        rc |= pm_meta_set_lit(o, "road_length", pm_meta_num(a, R->length));
        snprintf(msg, sizeof msg, "the junctions at nodes %u and %u are too close for their full "
                 "corners: their corners were made smaller so that a road of %.3f m joins them "
                 "along edge %u", E->from, E->to, R->length, e);
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
        rc |= pm_meta_push(out, o);
        N->nwarnings++;
    }
    return rc | pm__close_chain_meta(N, out);
}

/* Junction corners whose slab was left out because it lay on another
 * piece (corner_sidewalk_dropped, like a corner without room). */
static int pm__bare_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    int rc = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        for (uint32_t k = 0; V->scene && V->bare && k < V->deg; k++) {
            if (!V->bare[k]) continue;
            /* The corner's other arm: the next one clockwise in atan2(z, x). */
            double ak = atan2(V->dir[2 * k + 1], V->dir[2 * k]), best = HUGE_VAL;
            uint32_t j = k;
            for (uint32_t i = 0; i < V->deg; i++) {
                double d = ak - atan2(V->dir[2 * i + 1], V->dir[2 * i]);
                while (d <= 0) d += 2 * 3.14159265358979323846;
                if (i != k && d < best) { best = d; j = i; }
            }
            uint32_t ek = N->inc[V->first + k].edge, ej = N->inc[V->first + j].edge;
            pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
            rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "corner_sidewalk_dropped"));
            rc |= pm_meta_set_lit(o, "node", pm_meta_int(a, (int64_t)n));
            rc |= pm_meta_push(edges, pm_meta_int(a, ek));
            rc |= pm_meta_push(edges, pm_meta_int(a, ej));
            rc |= pm_meta_set_lit(o, "edges", edges);
            char msg[200];
            snprintf(msg, sizeof msg, "corner between edges %u and %u: no sidewalk (its slab would "
                     "lie on another road, junction or sidewalk: too little room between them)", ek, ej);
            rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
            rc |= pm_meta_push(out, o);
        }
    }
    return rc;
}

/* Junction warnings, each naming its node and the edges of its arms. */
static int pm__warnings_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    int rc = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        const pm_meta *w = V->scene ? pm_meta_get(V->scene->meta, "warnings") : NULL;
        for (const pm_meta *it = w ? w->u.kids.first : NULL; it; it = it->next) {
            pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
            const pm_meta *arms = pm_meta_get(it, "arms"), *code = pm_meta_get(it, "code");
            const pm_meta *msg = pm_meta_get(it, "message");
            rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, code ? code->u.s : "junction"));
            rc |= pm_meta_set_lit(o, "node", pm_meta_int(a, (int64_t)n));
            for (const pm_meta *k = arms ? arms->u.kids.first : NULL; k; k = k->next)
                if (k->kind == PM_META_INT && k->u.i >= 0 && k->u.i < V->deg)
                    rc |= pm_meta_push(edges, pm_meta_int(a, N->inc[V->first + k->u.i].edge));
            rc |= pm_meta_set_lit(o, "edges", edges);
            const pm_meta *rq = pm_meta_get(it, "requested_radius"), *rr = pm_meta_get(it, "radius");
            if (rq) rc |= pm_meta_set_lit(o, "requested_radius", pm_meta_num(a, rq->u.n));
            if (rr) rc |= pm_meta_set_lit(o, "radius", pm_meta_num(a, rr->u.n));
            rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg ? msg->u.s : ""));
            rc |= pm_meta_push(out, o);
        }
    }
    for (size_t g = 0; g < N->gaps.len; g++) rc |= pm__gap_meta(N, &N->gaps.data[g], out);
    rc |= pm__bare_meta(N, out);
    rc |= pm__close_meta(N, out);
    return rc;
}

int pm__network_meta(pm__net *N, pm_scene *s) {
    pm_arena *a = N->a;
    pm_meta *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a), *roads = pm_meta_arr(a);
    pm_meta *seams = pm_meta_arr(a), *warnings = pm_meta_arr(a);
    int rc = 0;
    size_t nj = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        rc |= pm__node_meta(N, s, n, nodes);
        nj += N->nodes[n].scene != NULL;
    }
    for (uint32_t e = 0; e < N->p->nedges; e++) rc |= pm__edge_meta(N, e, edges);
    for (size_t r = 0; r < N->roads.len; r++) rc |= pm__road_meta(N, r, roads, seams);
    rc |= pm__warnings_meta(N, warnings);
    rc |= pm_meta_set_lit(s->meta, "junctions", pm_meta_int(a, (int64_t)nj));
    rc |= pm_meta_set_lit(s->meta, "roads_count", pm_meta_int(a, (int64_t)N->roads.len));
    rc |= pm_meta_set_lit(s->meta, "nodes", nodes);
    rc |= pm_meta_set_lit(s->meta, "edges", edges);
    rc |= pm_meta_set_lit(s->meta, "roads", roads);
    rc |= pm_meta_set_lit(s->meta, "seams", seams);
    rc |= pm_meta_set_lit(s->meta, "warnings", warnings);
    return rc ? PM_ERR_NOMEM : PM_OK;
}
