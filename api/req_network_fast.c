/* POST /v1/networks straight from the body's bytes (pm_api_generator.
 * parse_text): nodes and edges read into the job's arrays with no jansson
 * node per value, and the canonical form written as the text its dump
 * would be (api/canon.c): positions and points from their own tokens as
 * they are read (api/req_text.h, as the road reader does), the rest from
 * the values read.
 *
 * It takes the common case only: a body that req_network.c would read
 * without a single error, spelled plainly (ids as integers or strings of
 * printable ASCII with no escapes; known members only, each once). At
 * anything else it gives up (returns 1) and the document path reads the
 * body, so every error, pointer and message is that path's own. A body it
 * takes gets the same parameters, and the checks after reading (ids,
 * edges, angles, crossings: pm_api__network_check) are the same code; but
 * when the node ids are all different and every edge's ends name one,
 * the ids are resolved here by their text (no string copies, strlen or
 * strcmp) and only the checks after them run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "req_network.h"
#include "req_text.h"

/* Text in the body: an id's canonical text is its own token's. */
typedef struct pm__nf_span {
    const char *s;
    size_t n;
} pm__nf_span;

/* An id: an integer token, or a plain string of 1..PM__NID_MAX bytes;
 * *text its canonical text (the token: quotes and plain bytes, or an
 * integer's digits as jansson writes them, but for -0). A string's bytes
 * are copied into the arena when it is given (a node's id), else its
 * str is NULL and the text tells it (an edge's end, pm__nf_edge_ids). */
PM__TX_INLINE bool pm__nf_id(pm__tx *f, pm_arena *arena, pm_network_id *out, pm__nf_span *text) {
    memset(out, 0, sizeof *out);
    out->is_num = true;
    pm__tx_ws(f);
    const char *start = f->p;
    if (f->p < f->end && *f->p == '"') {
        const char *s;
        size_t n;
        if (!pm__tx_plain(f, &s, &n) || n == 0 || n > PM__NID_MAX) return false;
        out->is_num = false;
        if (arena) {
            char *str = pm_arena_alloc(arena, n + 1);
            if (!str) return false;
            memcpy(str, s, n);
            str[n] = '\0';
            out->str = str;
        }
        *text = (pm__nf_span){start, n + 2};
        return true;
    }
    if (!pm__tx_int(f, INT64_MIN, INT64_MAX, &out->num)) return false;
    *text = out->num ? (pm__nf_span){start, (size_t)(f->p - start)} : (pm__nf_span){"0", 1};
    return true;
}

/* [x, z] or [x, y, z], each within the coordinate bound: *dim 2 or 3;
 * its canonical text written into t as it is read (pm__tx_point_short,
 * pm__tx_real_text), memo the columns' last texts. */
static bool pm__nf_vec(pm__tx *f, pm__tx_out *t, pm__tx_memo memo[3], double v[3], size_t *dim) {
    char *w = pm__tx_room(t, PM__TX_POINT_TEXT);
    if (!w) return false;
    char *w0 = w;
    pm__tx_ws(f);
    const char *e;
    if (f->end - f->p >= PM__TX_POINT_ROOM &&
        (e = pm__tx_point_short(f->p, PM__NCOORD, v, dim, w, &w))) {
        f->p = e;
        t->len += (size_t)(w - w0);
        return true;
    }
    if (!pm__tx_take(f, '[')) return false;
    *w++ = '[';
    size_t n = 0;
    for (;;) {
        if (n == 3 || !(w = pm__tx_real_text(f, PM__NCOORD, &memo[n], &v[n], w))) return false;
        n++;
        int next = pm__tx_next(f, ']');
        if (next < 0) return false;
        *w++ = next ? ',' : ']';
        if (next == 0) break;
    }
    *dim = n;
    t->len += (size_t)(w - w0);
    return n >= 2;
}

/* ---- growing arrays (malloc: what is kept goes to the arena at the end) ---- */

static bool pm__nf_grow(void **data, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *d = realloc(*data, c * elem);
    if (!d) return false;
    *data = d;
    *cap = c;
    return true;
}

/* A sidewalk as given: which members, their values. */
typedef struct pm__nf_sw {
    int state;                 /* 0 absent, 1 null, 2 an object */
    bool has_width, has_curb;
    double width, curb;
} pm__nf_sw;

typedef struct pm__nf_edge {
    pm_network_id from, to;
    bool has_width;
    double width;
    pm__nf_sw sw;
    pm__nf_span from_text, to_text;   /* from, to: strings by their text only */
    size_t first, npoints;     /* into the point pool */
    size_t text, text_end;     /* the points' text in ptext: "[x,z],[x,y,z]" */
} pm__nf_edge;

typedef struct pm__nf_doc {
    const char *body;          /* the body's first byte */
    pm_arena *arena;
    double *nodes;             /* 3 per node, y 0 for [x, z] */
    pm_network_id *ids;
    pm__nf_span *id_text;
    size_t *node_text;         /* the end of each node's position text in ntext */
    size_t nnodes, node_cap;
    pm__nf_edge *edges;
    size_t nedges, edge_cap;
    double *pts;               /* every edge's interior points, 3 each */
    bool *pt3;
    size_t npts, pt_cap;
    /* The canonical text of the positions and points, from their tokens. */
    pm__tx_out ntext, ptext;
    pm__tx_memo nmemo[3], pmemo[3];
} pm__nf_doc;

static void pm__nf_doc_free(pm__nf_doc *d) {
    free(d->nodes);
    free(d->ids);
    free(d->edges);
    free(d->pts);
    free(d->pt3);
    free(d->node_text);
    free(d->id_text);
    free(d->ntext.b);
    free(d->ptext.b);
}

/* null, or {"width", "curb_height"} in their ranges. */
static bool pm__nf_sidewalk(pm__tx *f, pm__nf_sw *sw) {
    static const pm__tx_name names[] = {PM__TX_NAME("width"), PM__TX_NAME("curb_height")};
    if (pm__tx_null(f)) {
        sw->state = 1;
        return true;
    }
    if (!pm__tx_take(f, '{')) return false;
    sw->state = 2;
    if (pm__tx_empty(f, '}')) return true;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(f, names, 2, &seen, &k)) return false;
        if (k == 0 ? !pm__tx_num(f, 0, true, 100, &sw->width)
                   : !pm__tx_num(f, 0, true, 2, &sw->curb))
            return false;
        int next = pm__tx_next(f, '}');
        if (next < 0) return false;
        if (next == 0) break;
    }
    sw->has_width = seen & 1u;
    sw->has_curb = (seen >> 1) & 1u;
    return true;
}

/* A position read as [x, z] or [x, y, z] stored as x, y, z (y 0 when not
 * given); whether it had its y. */
static bool pm__nf_put3(double *out, const double v[3], size_t dim) {
    out[0] = v[0];
    out[1] = dim == 3 ? v[1] : 0.0;
    out[2] = dim == 3 ? v[2] : v[1];
    return dim == 3;
}

static bool pm__nf_node(pm__tx *f, pm__nf_doc *d) {
    static const pm__tx_name names[] = {PM__TX_NAME("id"), PM__TX_NAME("position")};
    size_t i = d->nnodes;
    if (i == d->node_cap) {   /* the three arrays grow together */
        size_t c1 = i, c2 = i, c3 = i, c4 = i;
        if (!pm__nf_grow((void **)&d->nodes, &c1, i + 1, 3 * sizeof(double)) ||
            !pm__nf_grow((void **)&d->ids, &c2, c1, sizeof *d->ids) ||
            !pm__nf_grow((void **)&d->id_text, &c3, c1, sizeof *d->id_text) ||
            !pm__nf_grow((void **)&d->node_text, &c4, c1, sizeof *d->node_text))
            return false;
        d->node_cap = c1;
    }
    if (!pm__tx_take(f, '{')) return false;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(f, names, 2, &seen, &k)) return false;
        if (k == 0) {
            if (!pm__nf_id(f, d->arena, &d->ids[i], &d->id_text[i])) return false;
        } else {
            double v[3];
            size_t dim;
            if (!pm__nf_vec(f, &d->ntext, d->nmemo, v, &dim)) return false;
            pm__nf_put3(&d->nodes[3 * i], v, dim);
            d->node_text[i] = d->ntext.len;
        }
        int next = pm__tx_next(f, '}');
        if (next < 0) return false;
        if (next == 0) break;
    }
    d->nnodes++;
    return seen == 3u;
}

static bool pm__nf_points(pm__tx *f, pm__nf_doc *d, pm__nf_edge *e) {
    if (!pm__tx_take(f, '[')) return false;
    e->first = d->npts;
    e->text = e->text_end = d->ptext.len;
    if (pm__tx_empty(f, ']')) return true;
    for (;;) {
        size_t i = d->npts;
        if (i == d->pt_cap) {   /* both arrays grow together */
            size_t c1 = i, c2 = i;
            if (!pm__nf_grow((void **)&d->pts, &c1, i + 1, 3 * sizeof(double)) ||
                !pm__nf_grow((void **)&d->pt3, &c2, c1, sizeof *d->pt3))
                return false;
            d->pt_cap = c1;
        }
        double v[3];
        size_t dim;
        if (e->npoints) PM__TX_LIT(&d->ptext, ",");
        if (!pm__nf_vec(f, &d->ptext, d->pmemo, v, &dim)) return false;
        d->pt3[i] = pm__nf_put3(&d->pts[3 * i], v, dim);
        d->npts++;
        e->npoints++;
        e->text_end = d->ptext.len;
        int next = pm__tx_next(f, ']');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

static bool pm__nf_edge_read(pm__tx *f, pm__nf_doc *d) {
    static const pm__tx_name names[] = {PM__TX_NAME("from"), PM__TX_NAME("to"),
                                        PM__TX_NAME("width"), PM__TX_NAME("points"),
                                        PM__TX_NAME("sidewalk")};
    if (!pm__nf_grow((void **)&d->edges, &d->edge_cap, d->nedges + 1, sizeof *d->edges))
        return false;
    pm__nf_edge *e = &d->edges[d->nedges];
    memset(e, 0, sizeof *e);
    if (!pm__tx_take(f, '{')) return false;
    unsigned seen = 0, k;
    for (;;) {
        if (!pm__tx_key(f, names, 5, &seen, &k)) return false;
        bool ok = k == 0   ? pm__nf_id(f, NULL, &e->from, &e->from_text)
                  : k == 1 ? pm__nf_id(f, NULL, &e->to, &e->to_text)
                  : k == 2 ? pm__tx_num(f, 0, true, 1000, &e->width)
                  : k == 3 ? pm__nf_points(f, d, e)
                           : pm__nf_sidewalk(f, &e->sw);
        if (!ok) return false;
        int next = pm__tx_next(f, '}');
        if (next < 0) return false;
        if (next == 0) break;
    }
    e->has_width = (seen >> 2) & 1u;
    d->nedges++;
    return (seen & 3u) == 3u;
}

/* An array of objects, each read by one. */
static bool pm__nf_list(pm__tx *f, pm__nf_doc *d, bool (*one)(pm__tx *, pm__nf_doc *)) {
    if (!pm__tx_take(f, '[')) return false;
    if (pm__tx_empty(f, ']')) return true;
    for (;;) {
        if (!one(f, d)) return false;
        int next = pm__tx_next(f, ']');
        if (next < 0) return false;
        if (next == 0) return true;
    }
}

/* ---- the canonical text ---- */

static void pm__nf_sidewalk_text(pm__tx_out *o, bool on, const pm_junction_sidewalk *s) {
    if (!on) {
        PM__TX_LIT(o, "null");
        return;
    }
    PM__TX_LIT(o, "{\"curb_height\":");
    pm_api__tx_real(o, s->curb_height);
    PM__TX_LIT(o, ",\"width\":");
    pm_api__tx_real(o, s->width);
    PM__TX_LIT(o, "}");
}

/* The canonical form's dump, keys in jansson's sorted order, after the
 * tag that makes it a canonical text (canon_text.h). */
static void pm__nf_canon(pm__tx_out *o, const pm__nreq *q, const pm__nf_doc *d, bool gsw_on,
                         const pm_junction_sidewalk *gsw, double width) {
    const pm_network_params *p = &q->p;
    pm__tx_put(o, pm_api__canon_text_tag, PM_API_CANON_TEXT_TAG_LEN);
    PM__TX_LIT(o, "{\"corner_radius\":");
    pm_api__tx_real(o, p->corner_radius);
    PM__TX_LIT(o, ",\"corner_segments\":");
    pm_api__tx_integer(o, p->corner_segments);
    PM__TX_LIT(o, ",\"edges\":[");
    for (size_t e = 0; e < p->nedges && !o->failed; e++) {
        const pm_network_edge *E = &p->edges[e];
        if (e) PM__TX_LIT(o, ",");
        PM__TX_LIT(o, "{\"from\":");
        const pm__nf_edge *s = &d->edges[e];
        pm__tx_put(o, s->from_text.s, s->from_text.n);
        PM__TX_LIT(o, ",\"points\":[");
        if (s->text_end > s->text) pm__tx_put(o, d->ptext.b + s->text, s->text_end - s->text);
        PM__TX_LIT(o, "],\"sidewalk\":");
        pm__nf_sidewalk_text(o, E->has_sidewalk, &E->sidewalk);
        PM__TX_LIT(o, ",\"to\":");
        pm__tx_put(o, s->to_text.s, s->to_text.n);
        PM__TX_LIT(o, ",\"width\":");
        pm_api__tx_real(o, E->width);
        PM__TX_LIT(o, "}");
    }
    PM__TX_LIT(o, "],\"max_error\":");
    pm_api__tx_real(o, p->max_error);
    PM__TX_LIT(o, ",\"max_segment\":");
    pm_api__tx_real(o, p->max_segment);
    PM__TX_LIT(o, ",\"nodes\":[");
    for (size_t n = 0; n < p->nnodes && !o->failed; n++) {
        if (n) PM__TX_LIT(o, ",");
        PM__TX_LIT(o, "{\"id\":");
        pm__tx_put(o, d->id_text[n].s, d->id_text[n].n);
        PM__TX_LIT(o, ",\"position\":");
        size_t t0 = n ? d->node_text[n - 1] : 0;
        pm__tx_put(o, d->ntext.b + t0, d->node_text[n] - t0);
        PM__TX_LIT(o, "}");
    }
    PM__TX_LIT(o, "],\"sidewalk\":");
    pm__nf_sidewalk_text(o, gsw_on, gsw);
    PM__TX_LIT(o, ",\"snap\":");
    pm_api__tx_real(o, p->snap);
    PM__TX_LIT(o, ",\"uv_scale\":");
    pm_api__tx_real(o, p->uv_scale);
    PM__TX_LIT(o, ",\"width\":");
    pm_api__tx_real(o, width);
    PM__TX_LIT(o, "}");
}

/* ---- the request ---- */

/* The root's members: read into d and p. */
typedef struct pm__nf_root {
    pm__nf_sw sw;
    double width;
    int64_t segs;
} pm__nf_root;

enum { PM__NF_SIDEWALK, PM__NF_WIDTH, PM__NF_RADIUS, PM__NF_SEGS, PM__NF_UV, PM__NF_SNAP,
       PM__NF_ERROR, PM__NF_SEGMENT, PM__NF_NODES, PM__NF_EDGES };

static bool pm__nf_root_read(pm__tx *f, pm__nf_doc *d, pm_network_params *p, pm__nf_root *r,
                             unsigned *seen) {
    static const pm__tx_name names[] = {
        PM__TX_NAME("sidewalk"), PM__TX_NAME("width"), PM__TX_NAME("corner_radius"),
        PM__TX_NAME("corner_segments"), PM__TX_NAME("uv_scale"), PM__TX_NAME("snap"),
        PM__TX_NAME("max_error"), PM__TX_NAME("max_segment"), PM__TX_NAME("nodes"),
        PM__TX_NAME("edges")};
    if (!pm__tx_take(f, '{')) return false;
    if (pm__tx_empty(f, '}')) return true;
    for (;;) {
        unsigned k;
        if (!pm__tx_key(f, names, 10, seen, &k)) return false;
        bool ok = false;
        switch (k) {
        case PM__NF_SIDEWALK: ok = pm__nf_sidewalk(f, &r->sw); break;
        case PM__NF_WIDTH: ok = pm__tx_num(f, 0, true, 1000, &r->width); break;
        case PM__NF_RADIUS: ok = pm__tx_num(f, 0, false, 1000, &p->corner_radius); break;
        case PM__NF_SEGS: ok = pm__tx_int(f, 2, 64, &r->segs); break;
        case PM__NF_UV: ok = pm__tx_num(f, 0, true, 1000, &p->uv_scale); break;
        case PM__NF_SNAP: ok = pm__tx_num(f, 1e-6, false, 1, &p->snap); break;
        case PM__NF_ERROR: ok = pm__tx_num(f, 1e-3, false, 100, &p->max_error); break;
        case PM__NF_SEGMENT: ok = pm__tx_num(f, 0.05, false, 1000, &p->max_segment); break;
        case PM__NF_NODES: ok = pm__nf_list(f, d, pm__nf_node); break;
        case PM__NF_EDGES: ok = pm__nf_list(f, d, pm__nf_edge_read); break;
        default: break;
        }
        if (!ok) return false;
        int next = pm__tx_next(f, '}');
        if (next < 0) return false;
        if (next == 0) break;
    }
    pm__tx_ws(f);
    return f->p == f->end;
}

/* ---- edges' ids resolved by their text ---- */

/* An id's hash: an integer's value, a string's text (its token, quotes
 * and plain bytes: the same text for the same string) in 8-byte words,
 * the last ending at the token's end; a token shorter than a word is read
 * with the body's bytes before it (when there are 8) shifted out. */
static inline uint64_t pm__nf_id_hash(const pm_network_id *id, pm__nf_span text, const char *body) {
    uint64_t h, w;
    if (id->is_num) {
        h = (uint64_t)id->num;
    } else if ((size_t)(text.s - body) + text.n >= 8) {
        const char *s = text.s, *e = text.s + text.n - 8;
        h = text.n;
        for (; s < e; s += 8) {
            memcpy(&w, s, 8);
            h = (h ^ w) * 0x9e3779b97f4a7c15u;
            h ^= h >> 32;
        }
        memcpy(&w, e, 8);
        unsigned drop = text.n < 8 ? 8 * (8 - (unsigned)text.n) : 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w <<= drop;
#else
        w >>= drop;
#endif
        h = (h ^ w) * 0x9e3779b97f4a7c15u;
    } else {
        h = text.n;
        for (size_t i = 0; i < text.n; i++) h = h * 0x100000001b3u ^ (unsigned char)text.s[i];
        h *= 0x9e3779b97f4a7c15u;
    }
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 31);
}

/* Whether two ids are the same id (as req_network.c compares them). */
static inline bool pm__nf_id_eq(const pm_network_id *a, pm__nf_span at, const pm_network_id *b,
                         pm__nf_span bt) {
    if (a->is_num != b->is_num) return false;
    return a->is_num ? a->num == b->num : at.n == bt.n && memcmp(at.s, bt.s, at.n) == 0;
}

/* The nodes' ids by their text, open addressing (a power of two of
 * slots, at least twice the nodes; UINT32_MAX empty). NULL when two nodes
 * share an id (pm_api__network_check lists them) or out of memory. */
static uint32_t *pm__nf_id_table(const pm__nf_doc *d, size_t *mask) {
    size_t size = 16;
    while (size < 2 * d->nnodes) size *= 2;
    uint32_t *t = malloc(size * sizeof *t);
    if (!t) return NULL;
    memset(t, 0xff, size * sizeof *t);
    *mask = size - 1;
    for (size_t i = 0; i < d->nnodes; i++) {
        size_t h = (size_t)pm__nf_id_hash(&d->ids[i], d->id_text[i], d->body) & *mask;
        for (; t[h] != UINT32_MAX; h = (h + 1) & *mask) {
            if (pm__nf_id_eq(&d->ids[t[h]], d->id_text[t[h]], &d->ids[i], d->id_text[i])) {
                free(t);
                return NULL;
            }
        }
        t[h] = (uint32_t)i;
    }
    return t;
}

/* The node with the id, or UINT32_MAX when none has it. */
static inline uint32_t pm__nf_id_find(const pm__nf_doc *d, const uint32_t *t, size_t mask,
                               const pm_network_id *id, pm__nf_span text) {
    for (size_t h = (size_t)pm__nf_id_hash(id, text, d->body) & mask; t[h] != UINT32_MAX; h = (h + 1) & mask)
        if (pm__nf_id_eq(&d->ids[t[h]], d->id_text[t[h]], id, text)) return t[h];
    return UINT32_MAX;
}

/* An edge end's string id copied into the arena (for pm_api__network_check
 * to resolve and name). */
static bool pm__nf_id_str(pm_arena *arena, pm_network_id *id, pm__nf_span text) {
    if (id->is_num) return true;
    char *str = pm_arena_alloc(arena, text.n - 1);
    if (!str) return false;
    memcpy(str, text.s + 1, text.n - 2);
    str[text.n - 2] = '\0';
    id->str = str;
    return true;
}

/* The read document into q's arena arrays, as req_network.c fills them;
 * *resolved tells whether every edge's from and to are resolved to
 * distinct nodes' indices here (else their ids are left to
 * pm_api__network_check). Returns the raw edges, or NULL when out of
 * memory. */
static pm__raw_edge *pm__nf_fill(const pm__nf_doc *d, pm__nreq *q, pm_arena *arena,
                                 double width, bool gsw_on, const pm_junction_sidewalk *gsw,
                                 bool *resolved) {
    size_t n = d->nnodes, m = d->nedges;
    q->nodes = pm_arena_alloc(arena, 3 * n * sizeof(double));
    q->ids = pm_arena_alloc(arena, n * sizeof *q->ids);
    /* Each edge is written whole below: no zeroing first (m is within
     * max_points, so the sizes do not overflow). */
    q->edges = pm_arena_alloc(arena, m * sizeof *q->edges);
    pm__raw_edge *raw = pm_arena_alloc(arena, m * sizeof *raw);
    /* Every edge has its points array (room for one point when it has
     * none), as req_network.c gives it; the empty ones share one. */
    double *pts = pm_arena_calloc(arena, 3 * (d->npts + 1), sizeof(double));
    bool *known = pm_arena_calloc(arena, d->npts + 1, sizeof(bool));
    if (!q->nodes || !q->ids || !q->edges || !raw || !pts || !known) return NULL;
    memcpy(q->nodes, d->nodes, 3 * n * sizeof(double));
    memcpy(q->ids, d->ids, n * sizeof *q->ids);
    if (d->npts) {
        memcpy(pts + 3, d->pts, 3 * d->npts * sizeof(double));
        memcpy(known + 1, d->pt3, d->npts * sizeof(bool));
    }
    size_t mask = 0;
    uint32_t *table = pm__nf_id_table(d, &mask);
    bool all = table != NULL;
    for (size_t i = 0; i < m; i++) {
        const pm__nf_edge *s = &d->edges[i];
        uint32_t from = UINT32_MAX, to = UINT32_MAX;
        if (table) {
            from = pm__nf_id_find(d, table, mask, &s->from, s->from_text);
            to = pm__nf_id_find(d, table, mask, &s->to, s->to_text);
        }
        bool res = from != UINT32_MAX && to != UINT32_MAX;
        all &= res;
        pm_network_edge E = {.from = res ? from : 0,
                             .to = res ? to : 0,
                             .width = s->has_width ? s->width : width,
                             .npoints = s->npoints,
                             .points = s->npoints ? pts + 3 * (1 + s->first) : pts};
        if (s->sw.state == 0) {
            E.has_sidewalk = gsw_on;
            E.sidewalk = *gsw;
        } else if (s->sw.state == 2) {
            const pm_junction_sidewalk *def = gsw_on ? gsw : &pm__sidewalk_def;
            E.has_sidewalk = true;
            E.sidewalk.width = s->sw.has_width ? s->sw.width : def->width;
            E.sidewalk.curb_height = s->sw.has_curb ? s->sw.curb : def->curb_height;
        }
        q->edges[i] = E;
        raw[i] = (pm__raw_edge){.from = s->from, .to = s->to, .ids_ok = true, .resolved = res,
                                .known = s->npoints ? known + 1 + s->first : known};
    }
    free(table);
    /* Left to pm_api__network_check: the edges' string ids and none
     * resolved, as its reader would give them. */
    for (size_t i = 0; i < m && !all; i++) {
        raw[i].resolved = false;
        if (!pm__nf_id_str(arena, &raw[i].from, d->edges[i].from_text) ||
            !pm__nf_id_str(arena, &raw[i].to, d->edges[i].to_text))
            return NULL;
    }
    *resolved = all;
    q->p.nodes = q->nodes;
    q->p.ids = q->ids;
    q->p.nnodes = n;
    q->p.edges = q->edges;
    q->p.nedges = m;
    return raw;
}

/* The sizes req_network.c checks while reading, all within their limits. */
static bool pm__nf_sizes(const pm__nf_doc *d, const pm_api_limits *lim, unsigned seen) {
    if (!(seen & (1u << PM__NF_NODES)) || !(seen & (1u << PM__NF_EDGES))) return false;
    if (d->nnodes < 2 || d->nnodes > lim->max_points) return false;
    if (d->nedges < 1 || d->nedges > lim->max_points) return false;
    return d->npts <= lim->max_points;   /* each edge's count is at most the total */
}

int pm_api__network_parse_text(const char *body, size_t len, const pm_api_limits *lim,
                               pm_arena *arena, void **params, json_t **canonical,
                               pm_api_problem *prob) {
    *canonical = NULL;
    pm__nreq *q = pm_arena_calloc(arena, 1, sizeof *q);
    if (!q) return 1;
    pm_network_params *p = &q->p;
    pm_network_params_default(p);
    p->corner_radius = 3;
    p->uv_scale = 0.1;
    p->snap = 0.001;
    p->max_error = 0.05;
    p->max_segment = 5.0;
    pm__nf_root r = {.width = 7.0, .segs = 4};
    pm__nf_doc d = {.body = body, .arena = arena};
    pm__tx f = {body, body + len};
    unsigned seen = 0;
    bool ok = pm__nf_root_read(&f, &d, p, &r, &seen) && pm__nf_sizes(&d, lim, seen);
    pm__raw_edge *raw = NULL;
    bool resolved = false;
    pm_junction_sidewalk gsw = pm__sidewalk_def;
    bool gsw_on = r.sw.state == 2;
    if (ok) {
        if (r.sw.has_width) gsw.width = r.sw.width;
        if (r.sw.has_curb) gsw.curb_height = r.sw.curb;
        p->corner_segments = (uint32_t)r.segs;
        raw = pm__nf_fill(&d, q, arena, r.width, gsw_on, &gsw, &resolved);
    }
    /* The text before the checks: they fill the heights of 2D points. */
    pm__tx_out o = {0};
    /* Room up front: the body's bytes and what defaults add per edge
     * (about as long as the text), grown by doubling past that. */
    if (raw && !pm_api__tx_grow(&o, len + 64 * d.nedges + 4096)) raw = NULL;
    if (raw && !d.ntext.failed && !d.ptext.failed) pm__nf_canon(&o, q, &d, gsw_on, &gsw, r.width);
    pm__nf_doc_free(&d);
    if (!raw || !o.b) return 1;
    json_t *canon = o.failed ? NULL : json_stringn_nocheck(o.b, o.len);
    free(o.b);
    if (!canon) return 1;
    if (resolved) pm_api__network_check_resolved(q, raw, arena, prob);
    else pm_api__network_check(q, raw, arena, prob);
    if (pm_api_problem_failed(prob)) {
        json_decref(canon);
        return -1;
    }
    *params = q;
    *canonical = canon;
    return 0;
}
