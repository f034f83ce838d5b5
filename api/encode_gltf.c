/* glTF 2.0: .gltf (JSON, the buffer as a base64 data URI) and GLB. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encode_lod.h"
#include "encode_meshopt.h"
#include "encode_writer.h"
#include "scene/copy.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the glTF buffer is written from host floats: little-endian hosts only"
#endif

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

enum {
    GL_BYTE = 5120,
    GL_UNSIGNED_SHORT = 5123,
    GL_UNSIGNED_INT = 5125,
    GL_FLOAT = 5126,
    GL_ARRAY_BUFFER = 34962,
    GL_ELEMENT_ARRAY_BUFFER = 34963,
};

/* ?quantize=true (KHR_mesh_quantization): positions on one lattice of
 * 2^-9 m for the whole scene, so a vertex shared by two meshes (a seam)
 * lands on the same point in both and the error is at most 2^-10 m
 * (0.98 mm). A mesh spanning at most 65535 steps (128 m) per axis stores
 * uint16 lattice offsets, restored by its node's translation and scale. */
#define QPOS_SCALE 512.0
#define QPOS_SPAN 65535.0
#define QPOS_LIMIT 16777216.0   /* |lattice index| below 2^24: exact float translation */

/* How an accessor's bytes are made from its source. */
typedef enum gltf_conv {
    CONV_COPY,    /* float32 as is */
    CONV_INDEX,   /* uint32 indices as uint16 or uint32 */
    CONV_QPOS,    /* positions -> uint16 lattice offsets, 2 bytes padding */
    CONV_QPOSF,   /* positions -> float32 lattice points (meshes over 128 m) */
    CONV_QNRM,    /* unit normals -> normalized int8, 1 byte padding */
    CONV_QUV,     /* UVs in [0, 1] -> normalized uint16 */
    CONV_QUVF,    /* other UVs -> float32 on a 2^-14 lattice */
} gltf_conv;

/* One accessor and the bufferView it alone uses, with where its bytes
 * come from. Vertex elements are padded to 4 bytes (glTF's alignment rule
 * for vertex attributes); only then does the view carry a byteStride. */
typedef struct gltf_acc {
    const void *src;          /* floats or uint32 indices */
    size_t offset, length;    /* in the buffer; length before padding */
    uint32_t count, stride;   /* stride: bytes per element, padding included */
    uint32_t vcount;          /* index accessors: vertices they address */
    int ctype, target;        /* target 0: none (instancing data) */
    const char *type;         /* "SCALAR", "VEC2", … */
    gltf_conv conv;
    bool normalized, padded;
    double qmin[3];           /* CONV_QPOS: the lattice index of the mesh's origin */
    bool minmax;
    double min[3], max[3];
    size_t coffset, clength;  /* ?compress=meshopt: the stream in buffer 0 */
    int exponent;             /* ?compress=meshopt: the EXPONENTIAL filter's, 0: no filter */
} gltf_acc;

/* Per glTF mesh of primitives: whether its positions are quantized, and
 * the lattice index of its node's translation. */
typedef struct gltf_group {
    bool qpos;                /* uint16 offsets from qmin */
    bool qfloat;              /* else float32 lattice points (every index below QPOS_LIMIT) */
    double qmin[3];
} gltf_group;

typedef struct gltf_prim_ref {
    uint32_t pos, nrm, uv, col, idx;   /* accessor indices; UINT32_MAX: absent */
    uint32_t material;
    uint32_t group;                    /* its glTF mesh among the primitive meshes */
    bool opens;                        /* starts a new glTF mesh (its group) */
} gltf_prim_ref;

typedef struct gltf_plan {
    const pm_api__view *v;
    const pm_api_output *o;
    gltf_acc *acc;
    uint32_t nacc;
    size_t bin_len;
    gltf_group *groups;       /* per primitive mesh */
    bool quantized;           /* some accessor uses KHR_mesh_quantization types */
    unsigned char *cbin;      /* ?compress=meshopt: the compressed streams */
    pm_api__mo_prim *mo;      /* ?compress=meshopt: per primitive, reordered streams */
    pm_prim *mo_prims;        /* ... and the primitives that point at them */
    uint32_t *prim_group;     /* per scene primitive: its group, UINT32_MAX: not written */
    pm_api__lods lods;        /* LOD sets among the groups (MSFT_lod) */
    size_t cbin_len;
    gltf_prim_ref *prims;     /* per scene primitive; idx UINT32_MAX: skipped */
    const char **materials;   /* unique material names, first use first */
    uint32_t nmat;
    uint32_t marker_pos, marker_nrm, marker_idx, marker_mat;
    uint32_t *prop_acc;       /* per prop set: first of its T, R, S accessors */
    uint32_t *prop_mesh;      /* per prop set: its marker mesh */
    const char **mesh_names;  /* marker meshes: one per distinct prop name */
    uint32_t nmarkers, nprim_meshes;
    unsigned char *block;     /* the arrays above when malloc'd (plan_build), else NULL */
} gltf_plan;

/* Room on the caller's stack for a small scene's plan arrays. */
#define PLAN_LOCAL 4096

/* ---- the marker mesh: a 0.2 x 1 x 0.2 m post standing on its origin ---- */

#define MARKER_V 24
#define MARKER_I 36

typedef struct marker {
    float pos[MARKER_V * 3], nrm[MARKER_V * 3];
    uint32_t idx[MARKER_I];
} marker;

/* Each face spans axes u, v with u x v = its outward normal, so corners
 * (-,-) (+,-) (+,+) (-,+) run counter-clockwise seen from outside. */
static void marker_build(marker *m) {
    static const int faces[6][3] = {/* normal axis, u axis, v axis */
                                    {0, 1, 2}, {1, 2, 0}, {2, 0, 1}};
    static const float center[3] = {0, 0.5f, 0}, half[3] = {0.1f, 0.5f, 0.1f};
    static const int su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
    int vi = 0, ii = 0;
    for (int f = 0; f < 6; f++) {
        int a = faces[f % 3][0], u = faces[f % 3][1], w = faces[f % 3][2];
        float sign = f < 3 ? 1.0f : -1.0f;
        if (sign < 0) { int t = u; u = w; w = t; }   /* keep u x v outward */
        for (int c = 0; c < 4; c++) {
            float p[3] = {center[0], center[1], center[2]}, n[3] = {0, 0, 0};
            p[a] += sign * half[a];
            p[u] += (float)su[c] * half[u];
            p[w] += (float)sv[c] * half[w];
            n[a] = sign;
            memcpy(m->pos + 3 * (vi + c), p, sizeof p);
            memcpy(m->nrm + 3 * (vi + c), n, sizeof n);
        }
        static const int tri[6] = {0, 1, 2, 0, 2, 3};
        for (int k = 0; k < 6; k++) m->idx[ii++] = (uint32_t)(vi + tri[k]);
        vi += 4;
    }
}

/* ---- planning the buffer ---- */

static uint32_t plan_add_conv(gltf_plan *pl, const void *src, uint32_t count, int ctype,
                              const char *type, int target, gltf_conv conv) {
    uint32_t comps = type[0] == 'S' ? 1 : (uint32_t)(type[3] - '0');
    uint32_t csize = ctype == GL_BYTE ? 1 : ctype == GL_UNSIGNED_SHORT ? 2 : 4;
    uint32_t esize = comps * csize;
    gltf_acc *a = &pl->acc[pl->nacc];
    memset(a, 0, sizeof *a);
    a->src = src;
    a->count = count;
    a->stride = target == GL_ARRAY_BUFFER ? (esize + 3) & ~3u : esize;
    a->padded = a->stride != esize;
    a->offset = pl->bin_len;
    a->length = (size_t)a->stride * count;
    a->ctype = ctype;
    a->type = type;
    a->target = target;
    a->conv = conv;
    a->normalized = conv == CONV_QNRM || conv == CONV_QUV;
    pl->quantized |= conv == CONV_QPOS || conv == CONV_QNRM || conv == CONV_QUV;
    pl->bin_len += (a->length + 3) & ~(size_t)3;
    return pl->nacc++;
}

static uint32_t plan_add(gltf_plan *pl, const void *src, uint32_t count, int ctype,
                         const char *type, int target) {
    return plan_add_conv(pl, src, count, ctype, type, target,
                         target == GL_ELEMENT_ARRAY_BUFFER ? CONV_INDEX : CONV_COPY);
}

/* The lattice index of a coordinate (exact: scaling by 2^9 is exact). */
static double qpos_index(float x) { return nearbyint((double)x * QPOS_SCALE); }

/* The lattice point nearest x as a float32 (exact below QPOS_LIMIT steps). */
static float qpos_point(float x) { return (float)(qpos_index(x) / QPOS_SCALE); }

/* ?quantize=true: UVs outside [0, 1] (they run in UV units per metre, a
 * repeating texture) on a lattice of 2^-14, 1/16 of a texel of a 1024
 * texture; below 2^9 in magnitude so that the EXPONENTIAL filter keeps
 * every lattice point (24 bits), else float32 as they are. */
#define QUV_SCALE 16384.0
#define QUV_LIMIT 512.0   /* 2^23 lattice steps */
static float quv_point(float x) { return (float)(nearbyint((double)x * QUV_SCALE) / QUV_SCALE); }

/* POSITION min/max: of the float32 values, or of the stored lattice
 * offsets; either way exactly what the buffer holds. */
static void plan_bounds(gltf_acc *a, const float *p, uint32_t n) {
    a->minmax = true;
    if (a->conv != CONV_QPOS) {
        pm_api__f32_bounds3(p, n, a->min, a->max);
        return;
    }
    for (int k = 0; k < 3; k++) a->min[k] = INFINITY, a->max[k] = -INFINITY;
    if (a->conv != CONV_QPOS) {
        /* Plain floats: their extremes widened are the widened extremes. */
        float lx = INFINITY, ly = INFINITY, lz = INFINITY, hx = -INFINITY, hy = -INFINITY, hz = -INFINITY;
        for (const float *q = p, *end = p + 3 * (size_t)n; q < end; q += 3) {
            lx = q[0] < lx ? q[0] : lx, hx = q[0] > hx ? q[0] : hx;
            ly = q[1] < ly ? q[1] : ly, hy = q[1] > hy ? q[1] : hy;
            lz = q[2] < lz ? q[2] : lz, hz = q[2] > hz ? q[2] : hz;
        }
        a->min[0] = lx, a->min[1] = ly, a->min[2] = lz;
        a->max[0] = hx, a->max[1] = hy, a->max[2] = hz;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            double x = a->conv == CONV_QPOS    ? qpos_index(p[3 * i + k]) - a->qmin[k]
                       : a->conv == CONV_QPOSF ? (double)qpos_point(p[3 * i + k])
                                               : (double)p[3 * i + k];
            if (x < a->min[k]) a->min[k] = x;
            if (x > a->max[k]) a->max[k] = x;
        }
    }
}

/* ?compress=meshopt: the EXPONENTIAL filter's exponent for values on a
 * lattice of step 2^-step_bits, none above m in magnitude: -step_bits,
 * when every lattice index fits the filter's signed 24-bit mantissa;
 * else 0 (no filter: a position past 16 km, a UV past 512). */
static int lattice_exponent(double m, int step_bits) {
    return ldexp(m, step_bits) < 8388608.0 ? -step_bits : 0;
}

static int qpos_exponent(const gltf_acc *a) {
    double m = 0;
    for (int k = 0; k < 3; k++) m = fmax(m, fmax(fabs(a->min[k]), fabs(a->max[k])));
    return lattice_exponent(m, 9);
}

/* The largest |u| or |v|. */
static double uvs_extent(const float *uv, uint32_t n) {
    double m = 0;
    for (uint32_t i = 0; i < 2 * n; i++) m = fmax(m, fabs((double)uv[i]));
    return m;
}

static bool uvs_unit(const float *uv, uint32_t n) {
    for (uint32_t i = 0; i < 2 * n; i++)
        if (!(uv[i] >= 0.0f && uv[i] <= 1.0f)) return false;
    return true;
}

/* Decides each primitive mesh's position lattice (?quantize=true): the
 * mesh is quantized when its lattice span fits uint16 on every axis. */
static void plan_groups(gltf_plan *pl) {
    const pm_scene *s = pl->v->s;
    uint32_t g = UINT32_MAX;
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (uint32_t i = 0; i <= s->nprims; i++) {
        const gltf_prim_ref *r = i < s->nprims ? &pl->prims[i] : NULL;
        if (r && r->idx == UINT32_MAX) continue;
        if ((!r || r->opens) && g != UINT32_MAX) {
            bool fits = true, lattice = true;
            for (int k = 0; k < 3; k++) {
                lattice &= fabs(lo[k]) < QPOS_LIMIT && fabs(hi[k]) < QPOS_LIMIT;
                fits &= hi[k] - lo[k] <= QPOS_SPAN;
            }
            pl->groups[g].qpos = fits && lattice;
            pl->groups[g].qfloat = !fits && lattice;
            memcpy(pl->groups[g].qmin, lo, sizeof lo);
        }
        if (!r) break;
        if (r->opens) {
            g = r->group;
            for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
        }
        const pm_prim *p = &s->prims[i];
        for (uint32_t v = 0; v < p->vcount; v++) {
            for (int k = 0; k < 3; k++) {
                double q = qpos_index(p->positions[3 * v + k]);
                if (q < lo[k]) lo[k] = q;
                if (q > hi[k]) hi[k] = q;
            }
        }
    }
}

static uint32_t plan_name(const char **names, uint32_t *n, const char *name) {
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0) return i;
    names[*n] = name;
    return (*n)++;
}

static bool prim_included(const pm_prim *p) { return p->vcount > 0 && p->icount > 0; }

/* Whether b continues a's group: both name the same mesh. */
static bool same_group(const pm_prim *a, const pm_prim *b) {
    return a && a->mesh && b->mesh && strcmp(a->mesh, b->mesh) == 0;
}

static void plan_prim(gltf_plan *pl, const pm_api__prim_view *pv, gltf_prim_ref *r) {
    const pm_prim *p = pv->p;
    const gltf_group *g = &pl->groups[r->group];
    bool q = pl->o->quantize;
    /* Lattice floats only where the EXPONENTIAL filter makes them pay. */
    bool mo = pl->o->compress == PM_API_COMPRESS_MESHOPT;
    if (g->qpos) {
        r->pos = plan_add_conv(pl, p->positions, p->vcount, GL_UNSIGNED_SHORT, "VEC3",
                               GL_ARRAY_BUFFER, CONV_QPOS);
        memcpy(pl->acc[r->pos].qmin, g->qmin, sizeof g->qmin);
    } else if (g->qfloat && mo) {
        r->pos = plan_add_conv(pl, p->positions, p->vcount, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER,
                               CONV_QPOSF);
    } else {
        r->pos = plan_add(pl, p->positions, p->vcount, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
    }
    gltf_acc *pa = &pl->acc[r->pos];
    if (pa->conv == CONV_COPY && !pl->mo && pl->v->s->validated && p->bounds_of &&
        p->bounds_of == p->positions) {
        /* pm_scene_validate found them in its pass over these positions. */
        pa->minmax = true;
        for (int k = 0; k < 3; k++) pa->min[k] = p->pos_min[k], pa->max[k] = p->pos_max[k];
    } else {
        plan_bounds(pa, p->positions, p->vcount);
    }
    if (g->qfloat && mo) pl->acc[r->pos].exponent = qpos_exponent(&pl->acc[r->pos]);
    r->nrm = q ? plan_add_conv(pl, pv->normals, p->vcount, GL_BYTE, "VEC3", GL_ARRAY_BUFFER,
                               CONV_QNRM)
               : plan_add(pl, pv->normals, p->vcount, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
    double uv_max = q && p->uvs ? uvs_extent(p->uvs, p->vcount) : 0;
    r->uv = !p->uvs ? UINT32_MAX
            : q && uvs_unit(p->uvs, p->vcount)
                ? plan_add_conv(pl, p->uvs, p->vcount, GL_UNSIGNED_SHORT, "VEC2",
                                GL_ARRAY_BUFFER, CONV_QUV)
            : q && mo && uv_max < QUV_LIMIT
                ? plan_add_conv(pl, p->uvs, p->vcount, GL_FLOAT, "VEC2", GL_ARRAY_BUFFER,
                                CONV_QUVF)
                : plan_add(pl, p->uvs, p->vcount, GL_FLOAT, "VEC2", GL_ARRAY_BUFFER);
    if (r->uv != UINT32_MAX && pl->acc[r->uv].conv == CONV_QUVF)
        pl->acc[r->uv].exponent = lattice_exponent(uv_max, 14);
    r->col = pv->colors ? plan_add(pl, pv->colors, p->vcount, GL_FLOAT, "VEC4", GL_ARRAY_BUFFER)
                        : UINT32_MAX;
    /* uint16 whenever it can hold every index; 65535 itself never occurs
     * then (it would be the primitive-restart value). */
    int ctype = p->vcount <= 65535 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT;
    r->idx = plan_add(pl, p->indices, p->icount, ctype, "SCALAR", GL_ELEMENT_ARRAY_BUFFER);
    pl->acc[r->idx].vcount = p->vcount;
    r->material = plan_name(pl->materials, &pl->nmat, p->material);
}

/* ?compress=meshopt: each included primitive reordered for the codecs
 * (the vertex cache and fetch order compress far better). */
static int plan_reorder(gltf_plan *pl) {
    const pm_api__view *v = pl->v;
    uint32_t n = v->s->nprims;
    pl->mo = calloc(n ? n : 1, sizeof *pl->mo);
    pl->mo_prims = calloc(n ? n : 1, sizeof *pl->mo_prims);
    if (!pl->mo || !pl->mo_prims) return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (pl->prims[i].idx == UINT32_MAX) continue;
        const pm_api__prim_view *pv = &v->prims[i];
        const pm_prim *p = pv->p;
        pm_api__mo_prim *m = &pl->mo[i];
        if (pm_api__meshopt_reorder(p->positions, pv->normals, p->uvs, pv->colors, p->vcount,
                                    p->indices, p->icount, m) < 0)
            return -1;
        pl->mo_prims[i] = *p;
        pl->mo_prims[i].positions = m->positions;
        pl->mo_prims[i].normals = m->normals;
        pl->mo_prims[i].uvs = m->uvs;
        pl->mo_prims[i].colors = m->colors;
        pl->mo_prims[i].indices = m->indices;
    }
    return 0;
}

static int plan_build(gltf_plan *pl, const pm_api__view *v, const pm_api_output *o,
                      marker *mk, unsigned char *local) {
    const pm_scene *s = v->s;
    memset(pl, 0, sizeof *pl);
    pl->v = v;
    pl->o = o;
    size_t nprims = s->nprims, nprops = s->nprops;
    /* The plan's arrays in one block: the caller's local one when they fit
     * (a road's single primitive), else one malloc. */
    size_t sz[8] = {(6 * nprims + 3 + 3 * nprops) * sizeof *pl->acc, (nprims + 1) * sizeof *pl->prims,
                    (nprims + 1) * sizeof *pl->materials,    (nprops + 1) * sizeof *pl->prop_acc,
                    (nprops + 1) * sizeof *pl->prop_mesh,    (nprops + 1) * sizeof *pl->mesh_names,
                    (nprims + 1) * sizeof *pl->groups,       (nprims + 1) * sizeof *pl->prim_group};
    size_t total = 0;
    for (int i = 0; i < 8; i++) total += (sz[i] + 15) & ~(size_t)15;
    unsigned char *b = total <= PLAN_LOCAL ? local : malloc(total);
    if (!b) return -1;
    pl->block = b == local ? NULL : b;
    void *part[8];
    for (int i = 0; i < 8; i++) part[i] = b, b += (sz[i] + 15) & ~(size_t)15;
    pl->acc = part[0], pl->prims = part[1], pl->materials = part[2], pl->prop_acc = part[3];
    pl->prop_mesh = part[4], pl->mesh_names = part[5], pl->groups = part[6], pl->prim_group = part[7];
    memset(pl->groups, 0, sz[6]);
    const pm_prim *prev = NULL;
    for (uint32_t i = 0; i < s->nprims; i++) {
        pl->prims[i].idx = UINT32_MAX;
        if (!prim_included(&s->prims[i])) continue;
        pl->prims[i].idx = 0;   /* included; the accessor comes below */
        pl->prims[i].opens = !same_group(prev, &s->prims[i]);
        pl->nprim_meshes += pl->prims[i].opens;
        pl->prims[i].group = pl->nprim_meshes - 1;
        prev = &s->prims[i];
    }
    for (uint32_t i = 0; i < s->nprims; i++)
        pl->prim_group[i] = pl->prims[i].idx == UINT32_MAX ? UINT32_MAX : pl->prims[i].group;
    if (pm_api__lods_plan(&pl->lods, s, pl->prim_group, pl->nprim_meshes) < 0) return -1;
    if (o->quantize) plan_groups(pl);
    if (o->compress == PM_API_COMPRESS_MESHOPT && plan_reorder(pl) < 0) return -1;
    for (uint32_t i = 0; i < s->nprims; i++) {
        if (pl->prims[i].idx == UINT32_MAX) continue;
        pm_api__prim_view pv = v->prims[i];
        if (pl->mo) {   /* the same primitive, its streams reordered */
            pv.p = &pl->mo_prims[i];
            pv.normals = pl->mo[i].normals;
            pv.colors = pl->mo[i].colors;
        }
        plan_prim(pl, &pv, &pl->prims[i]);
    }
    bool any_props = false;
    for (uint32_t i = 0; i < s->nprops; i++) any_props |= s->props[i].count > 0;
    if (any_props) {
        marker_build(mk);
        pl->marker_pos = plan_add(pl, mk->pos, MARKER_V, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
        plan_bounds(&pl->acc[pl->marker_pos], mk->pos, MARKER_V);
        pl->marker_nrm = plan_add(pl, mk->nrm, MARKER_V, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER);
        pl->marker_idx = plan_add(pl, mk->idx, MARKER_I, GL_UNSIGNED_SHORT, "SCALAR",
                                  GL_ELEMENT_ARRAY_BUFFER);
        pl->marker_mat = pl->nmat++;
    }
    for (uint32_t i = 0; i < s->nprops; i++) {
        const pm_props *pr = &s->props[i];
        pl->prop_acc[i] = UINT32_MAX;
        if (pr->count == 0) continue;
        pl->prop_acc[i] = plan_add(pl, pr->translations, pr->count, GL_FLOAT, "VEC3", 0);
        plan_add(pl, pr->rotations, pr->count, GL_FLOAT, "VEC4", 0);
        plan_add(pl, pr->scales, pr->count, GL_FLOAT, "VEC3", 0);
        pl->prop_mesh[i] = pl->nprim_meshes + plan_name(pl->mesh_names, &pl->nmarkers, pr->name);
    }
    return 0;
}

static void plan_free(gltf_plan *pl) {
    free(pl->block);
    free(pl->cbin);
    for (uint32_t i = 0; pl->mo && i < pl->v->s->nprims; i++) pm_api__meshopt_prim_free(&pl->mo[i]);
    free(pl->mo);
    free(pl->mo_prims);
    pm_api__lods_free(&pl->lods);
}

static void put_u16(unsigned char *o, uint16_t x) { memcpy(o, &x, 2); }

/* n 32-bit indices (each below 2^16) at src as 16-bit ones, 16 per step:
 * one AVX2 pack where the CPU has it (picked at load; the same truncation,
 * the same bytes), else in SSE2 quarters. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
static void put_u16s(unsigned char *o, const uint32_t *src, uint32_t n) {
    typedef uint32_t v16w __attribute__((vector_size(64)));
    typedef uint16_t v16h __attribute__((vector_size(32)));
    uint32_t k = 0;
    for (; k + 16 <= n; k += 16) {
        v16w x;
        memcpy(&x, src + k, sizeof x);
        v16h y = __builtin_convertvector(x, v16h);
        memcpy(o + 2 * k, &y, sizeof y);
    }
    for (; k < n; k++) put_u16(o + 2 * k, (uint16_t)src[k]);
}

/* Arrays copied with non-temporal stores when the GLB's buffer is on
 * resident pages (glb_assemble): from this length on. */
#define STREAM_MIN ((size_t)1 << 20)

/* One accessor's bytes (length, padding in elements zeroed); stream: a
 * long copy goes by non-temporal stores. */
static void fill_acc(const gltf_acc *a, unsigned char *o, bool stream) {
    const float *f = a->src;
    if (a->conv != CONV_COPY && a->conv != CONV_INDEX)
        memset(o, 0, a->length);   /* the copies and indices write every byte themselves */
    switch (a->conv) {
    case CONV_COPY:
    copy:
        if (stream && a->length >= STREAM_MIN) pm_copy_stream(o, a->src, a->length);
        else pm_copy(o, a->src, a->length);
        return;
    case CONV_INDEX:
        if (a->ctype == GL_UNSIGNED_INT) goto copy;
        put_u16s(o, a->src, a->count);
        return;
    case CONV_QPOSF:
        for (uint32_t k = 0; k < 3 * a->count; k++) {
            float x = qpos_point(f[k]);
            memcpy(o + 4 * k, &x, 4);
        }
        return;
    case CONV_QUVF:
        for (uint32_t k = 0; k < 2 * a->count; k++) {
            float x = quv_point(f[k]);
            memcpy(o + 4 * k, &x, 4);
        }
        return;
    case CONV_QPOS:
        for (uint32_t k = 0; k < 3 * a->count; k++)
            put_u16(o + 8 * (k / 3) + 2 * (k % 3),
                    (uint16_t)(qpos_index(f[k]) - a->qmin[k % 3]));
        return;
    case CONV_QNRM:
        for (uint32_t k = 0; k < 3 * a->count; k++) {
            double q = nearbyint((double)f[k] * 127.0);
            int8_t b = (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
            memcpy(o + 4 * (k / 3) + k % 3, &b, 1);
        }
        return;
    case CONV_QUV:
        for (uint32_t k = 0; k < 2 * a->count; k++)
            put_u16(o + 2 * k, (uint16_t)nearbyint((double)f[k] * 65535.0));
        return;
    }
}

/* Writes the buffer's bytes (bin_len, padding zeroed) to dst. */
static void plan_fill(const gltf_plan *pl, unsigned char *dst, bool stream) {
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        fill_acc(a, dst + a->offset, stream);
        size_t padded = (a->length + 3) & ~(size_t)3;
        memset(dst + a->offset + a->length, 0, padded - a->length);
    }
}

/* ?compress=meshopt: every view through meshoptimizer's codecs, from the
 * uncompressed buffer raw; the streams land in pl->cbin. */
static int plan_compress(gltf_plan *pl, const unsigned char *raw) {
    pm_api__mo_view *mv = calloc(pl->nacc ? pl->nacc : 1, sizeof *mv);
    if (!mv) return -1;
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        mv[i].triangles = a->conv == CONV_INDEX;
        mv[i].raw = raw + a->offset;
        mv[i].indices = a->src;
        mv[i].count = a->count;
        mv[i].stride = a->stride;
        mv[i].vcount = a->vcount;
        mv[i].exp_fixed = a->exponent != 0;
        mv[i].exponent = a->exponent;
        mv[i].oct_normals = a->conv == CONV_QNRM ? a->src : NULL;
    }
    int r = pm_api__meshopt_pack(mv, pl->nacc, &pl->cbin, &pl->cbin_len);
    for (uint32_t i = 0; r == 0 && i < pl->nacc; i++) {
        pl->acc[i].coffset = mv[i].offset;
        pl->acc[i].clength = mv[i].length;
    }
    free(mv);
    return r;
}

/* ---- the JSON part ---- */

/* A material's colour, and its text after the name (,"pbrMetallicRoughness":
 * ...}}) as the writer prints those numbers: the same for every output,
 * so written out here; pm_api__gltf_material_texts_ok checks each against
 * the printing (tests/api/test_encode.c). */
typedef struct material_colour {
    const char *name;
    float rgb[3], roughness;
    const char *tail;
} material_colour;

/* Base colours for the material names generators use (DESIGN.md 2);
 * linear RGB, chosen to read well under a default light. */
static const material_colour material_colours[] = {
    {"asphalt", {0.05f, 0.05f, 0.055f}, 0.9f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.05000000074505806,0.05000000074505806,0.054999999701976776,1],\"metallicFactor\":0,\"roughnessFactor\":0.8999999761581421}}"},
    {"curb", {0.45f, 0.45f, 0.43f}, 0.8f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.44999998807907104,0.44999998807907104,0.4300000071525574,1],\"metallicFactor\":0,\"roughnessFactor\":0.800000011920929}}"},
    {"sidewalk", {0.5f, 0.48f, 0.44f}, 0.85f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.5,0.47999998927116394,0.4399999976158142,1],\"metallicFactor\":0,\"roughnessFactor\":0.8500000238418579}}"},
    {"shoulder", {0.25f, 0.22f, 0.18f}, 0.95f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.25,0.2199999988079071,0.18000000715255737,1],\"metallicFactor\":0,\"roughnessFactor\":0.949999988079071}}"},
    {"terrain", {0.12f, 0.25f, 0.07f}, 1.0f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.11999999731779099,0.25,0.07000000029802322,1],\"metallicFactor\":0,\"roughnessFactor\":1}}"},
    {"floor", {0.35f, 0.3f, 0.24f}, 0.85f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.3499999940395355,0.30000001192092896,0.23999999463558197,1],\"metallicFactor\":0,\"roughnessFactor\":0.8500000238418579}}"},
    {"wall", {0.55f, 0.52f, 0.47f}, 0.9f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.550000011920929,0.5199999809265137,0.4699999988079071,1],\"metallicFactor\":0,\"roughnessFactor\":0.8999999761581421}}"},
    {"grid", {0.6f, 0.58f, 0.52f}, 0.8f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.6000000238418579,0.5799999833106995,0.5199999809265137,1],\"metallicFactor\":0,\"roughnessFactor\":0.800000011920929}}"},
    {"island", {0.2f, 0.35f, 0.12f}, 0.95f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.20000000298023224,0.3499999940395355,0.11999999731779099,1],\"metallicFactor\":0,\"roughnessFactor\":0.949999988079071}}"},
    {"corridor", {0.3f, 0.27f, 0.22f}, 0.85f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.30000001192092896,0.27000001072883606,0.2199999988079071,1],\"metallicFactor\":0,\"roughnessFactor\":0.8500000238418579}}"},
    {"shaft", {0.1f, 0.1f, 0.12f}, 0.9f,
     ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.10000000149011612,0.10000000149011612,0.11999999731779099,1],\"metallicFactor\":0,\"roughnessFactor\":0.8999999761581421}}"},
};
static const material_colour material_default = {
    "", {0.8f, 0.8f, 0.8f}, 0.8f,
    ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.800000011920929,0.800000011920929,0.800000011920929,1],\"metallicFactor\":0,\"roughnessFactor\":0.800000011920929}}"};
static const material_colour material_marker = {
    "marker", {1.0f, 0.45f, 0.05f}, 0.6f,
    ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[1,0.44999998807907104,0.05000000074505806,1],\"metallicFactor\":0,\"roughnessFactor\":0.6000000238418579}}"};

#define NCOLOURS (sizeof material_colours / sizeof *material_colours)

/* The colour of material name: its row of material_colours, else the default. */
static const material_colour *material_lookup(const char *name) {
    for (size_t i = 0; i < NCOLOURS; i++)
        if (strcmp(material_colours[i].name, name) == 0) return &material_colours[i];
    return &material_default;
}

#define PUT_LIT(o, s) (memcpy((o), (s), sizeof(s) - 1), (o) + sizeof(s) - 1)

/* What a colour's tail is: ,"pbrMetallicRoughness":{...}} of c printed at
 * o (room for 192 bytes); the end. */
static char *put_material_tail(char *o, const material_colour *c) {
    o = PUT_LIT(o, ",\"pbrMetallicRoughness\":{\"baseColorFactor\":[");
    for (int k = 0; k < 3; k++) {
        o += pm_api__fmt_f64(o, c->rgb[k]);
        *o++ = ',';
    }
    o = PUT_LIT(o, "1],\"metallicFactor\":0,\"roughnessFactor\":");
    o += pm_api__fmt_f64(o, c->roughness);
    return PUT_LIT(o, "}}");
}

static bool material_text_ok(const material_colour *c) {
    char t[192];
    size_t n = (size_t)(put_material_tail(t, c) - t);
    return strlen(c->tail) == n && memcmp(c->tail, t, n) == 0;
}

bool pm_api__gltf_material_texts_ok(void) {
    bool ok = material_text_ok(&material_default) && material_text_ok(&material_marker);
    for (size_t i = 0; i < NCOLOURS; i++) ok &= material_text_ok(&material_colours[i]);
    return ok;
}

/* Appends n bytes of s; with a constant n the copy is a few moves. */
static inline void w_put(pm_api__w *w, const char *s, size_t n) {
    if (!pm_api__w_reserve(w, n)) return;
    memcpy(w->data + w->len, s, n);
    w->len += n;
}
#define W_LIT(w, s) w_put((w), (s), sizeof(s) - 1)

/* Reserves n bytes and returns where they start (NULL: out of memory);
 * w_end hands the end back to w. */
static inline char *w_at(pm_api__w *w, size_t n) {
    return pm_api__w_reserve(w, n) ? w->data + w->len : NULL;
}
static inline void w_end(pm_api__w *w, const char *o) { w->len = (size_t)(o - w->data); }

/* lit (the key's text, its punctuation around it) and then v's digits. */
#define PUT_KEY_U(o, lit, v) ((o) = PUT_LIT((o), lit), (o) = pm_api__put_u64((o), (v)))
/* "key": and "key":v for a literal key. */
#define w_key(w, k) W_LIT((w), "\"" k "\":")
#define w_key_u(w, k, v) (w_key((w), k), pm_api__w_u64((w), (v)))

static void w_material(pm_api__w *w, const char *name, const material_colour *c) {
    W_LIT(w, "{\"name\":");
    pm_api__w_str(w, name);
    pm_api__w_lit(w, c->tail);
}

static void w_materials(pm_api__w *w, const gltf_plan *pl) {
    W_LIT(w, ",\"materials\":[");
    uint32_t named = pl->nmat - (pl->nmarkers ? 1 : 0);
    for (uint32_t i = 0; i < named; i++) {
        if (i) pm_api__w_char(w, ',');
        w_material(w, pl->materials[i], material_lookup(pl->materials[i]));
    }
    if (pl->nmarkers) {
        if (named) pm_api__w_char(w, ',');
        w_material(w, "marker", &material_marker);
    }
    pm_api__w_char(w, ']');
}

/* A double as pm_api__w_f64 writes it (room for 32 bytes). */
static inline char *put_f64(char *o, double d) {
    if (!isfinite(d)) return PUT_LIT(o, "null");
    return o + pm_api__fmt_f64(o, d);
}

/* The most one accessor's text takes: its fixed members and numbers (20
 * bytes each), min and max (3 doubles of 32 bytes each). */
#define ACC_TEXT_MAX 384

static void w_accessors(pm_api__w *w, const gltf_plan *pl) {
    W_LIT(w, ",\"accessors\":[");
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        char *o = w_at(w, ACC_TEXT_MAX);
        if (!o) return;
        if (i) *o++ = ',';
        PUT_KEY_U(o, "{\"bufferView\":", i);
        PUT_KEY_U(o, ",\"componentType\":", (uint64_t)a->ctype);
        PUT_KEY_U(o, ",\"count\":", a->count);
        o = PUT_LIT(o, ",\"type\":\"");
        size_t tl = strlen(a->type);   /* SCALAR, VEC2 ... */
        memcpy(o, a->type, tl);
        o += tl;
        *o++ = '"';
        if (a->normalized) o = PUT_LIT(o, ",\"normalized\":true");
        if (a->minmax) {
            /* Exact values of the float32 data, so readers (and the
             * validator) compare equal. */
            for (int b = 0; b < 2; b++) {
                o = b ? PUT_LIT(o, ",\"max\":[") : PUT_LIT(o, ",\"min\":[");
                for (int k = 0; k < 3; k++) {
                    if (k) *o++ = ',';
                    o = put_f64(o, b ? a->max[k] : a->min[k]);
                }
                *o++ = ']';
            }
        }
        *o++ = '}';
        w_end(w, o);
    }
    pm_api__w_char(w, ']');
}

/* With meshopt the views' own buffer is the fallback (buffer 1, no
 * data) and the extension object names the stream in buffer 0. */
#define VIEW_TEXT_MAX 384

static void w_buffer_views(pm_api__w *w, const gltf_plan *pl) {
    bool mo = pl->cbin != NULL;
    W_LIT(w, ",\"bufferViews\":[");
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        char *o = w_at(w, VIEW_TEXT_MAX);
        if (!o) return;
        if (i) *o++ = ',';
        o = mo ? PUT_LIT(o, "{\"buffer\":1,") : PUT_LIT(o, "{\"buffer\":0,");
        PUT_KEY_U(o, "\"byteOffset\":", a->offset);
        PUT_KEY_U(o, ",\"byteLength\":", a->length);
        if (a->padded) PUT_KEY_U(o, ",\"byteStride\":", a->stride);
        if (a->target) PUT_KEY_U(o, ",\"target\":", (uint64_t)a->target);
        if (mo) {
            o = PUT_LIT(o, ",\"extensions\":{\"EXT_meshopt_compression\":{\"buffer\":0,");
            PUT_KEY_U(o, "\"byteOffset\":", a->coffset);
            PUT_KEY_U(o, ",\"byteLength\":", a->clength);
            PUT_KEY_U(o, ",\"byteStride\":", a->stride);
            PUT_KEY_U(o, ",\"count\":", a->count);
            o = a->conv == CONV_INDEX ? PUT_LIT(o, ",\"mode\":\"TRIANGLES\"")
                                      : PUT_LIT(o, ",\"mode\":\"ATTRIBUTES\"");
            if (a->exponent) o = PUT_LIT(o, ",\"filter\":\"EXPONENTIAL\"");
            if (a->conv == CONV_QNRM) o = PUT_LIT(o, ",\"filter\":\"OCTAHEDRAL\"");
            o = PUT_LIT(o, "}}");
        }
        *o++ = '}';
        w_end(w, o);
    }
    pm_api__w_char(w, ']');
}

static void w_primitive(pm_api__w *w, uint32_t pos, uint32_t nrm, uint32_t uv, uint32_t col,
                        uint32_t idx, uint32_t mat) {
    char *o = w_at(w, 256);
    if (!o) return;
    PUT_KEY_U(o, "{\"attributes\":{\"POSITION\":", pos);
    PUT_KEY_U(o, ",\"NORMAL\":", nrm);
    if (uv != UINT32_MAX) PUT_KEY_U(o, ",\"TEXCOORD_0\":", uv);
    if (col != UINT32_MAX) PUT_KEY_U(o, ",\"COLOR_0\":", col);
    PUT_KEY_U(o, "},\"indices\":", idx);
    PUT_KEY_U(o, ",\"material\":", mat);
    o = PUT_LIT(o, ",\"mode\":4}");
    w_end(w, o);
}

static void w_meshes(pm_api__w *w, const gltf_plan *pl) {
    const pm_scene *s = pl->v->s;
    pm_api__w_lit(w, ",\"meshes\":[");
    bool first = true;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const gltf_prim_ref *r = &pl->prims[i];
        if (r->idx == UINT32_MAX) continue;
        if (r->opens) {
            if (!first) pm_api__w_lit(w, "]},");
            first = false;
            pm_api__w_char(w, '{');
            w_key(w, "name");
            pm_api__w_str(w, pm_prim_mesh(&s->prims[i]));
            pm_api__w_lit(w, ",\"primitives\":[");
        } else {
            pm_api__w_char(w, ',');
        }
        w_primitive(w, r->pos, r->nrm, r->uv, r->col, r->idx, r->material);
    }
    if (!first) pm_api__w_lit(w, "]}");
    for (uint32_t i = 0; i < pl->nmarkers; i++) {
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_char(w, '{');
        w_key(w, "name");
        pm_api__w_str(w, pl->mesh_names[i]);
        pm_api__w_lit(w, ",\"primitives\":[");
        w_primitive(w, pl->marker_pos, pl->marker_nrm, UINT32_MAX, UINT32_MAX, pl->marker_idx,
                    pl->marker_mat);
        pm_api__w_lit(w, "],\"extras\":{\"marker\":true}}");
    }
    pm_api__w_char(w, ']');
}

/* A LOD set's node: level 0 as its children, the coarser levels' nodes
 * (one per level group; group i is node i) in MSFT_lod.ids. */
static void w_lod_node(pm_api__w *w, const pm_api__lods *l, const pm_api__lod_set *set) {
    pm_api__w_char(w, '{');
    w_key(w, "name");
    pm_api__w_str(w, set->base);
    pm_api__w_lit(w, ",\"children\":[");
    for (uint32_t c = 0; c < set->nchildren; c++) {
        if (c) pm_api__w_char(w, ',');
        pm_api__w_u64(w, l->children[set->first_child + c]);
    }
    pm_api__w_lit(w, "],\"extensions\":{\"MSFT_lod\":{\"ids\":[");
    for (uint32_t k = 0; k < set->nids; k++) {
        if (k) pm_api__w_char(w, ',');
        pm_api__w_u64(w, set->ids[k]);
    }
    pm_api__w_lit(w, "]}},\"extras\":{\"MSFT_screencoverage\":[");
    for (uint32_t k = 0; k <= set->nids; k++) {
        if (k) pm_api__w_char(w, ',');
        pm_api__w_f64(w, set->coverage[k]);
    }
    pm_api__w_lit(w, "]}}");
}

static void w_nodes(pm_api__w *w, const gltf_plan *pl) {
    const pm_scene *s = pl->v->s;
    pm_api__w_lit(w, ",\"nodes\":[");
    uint32_t mesh = 0;
    bool first = true;
    for (uint32_t i = 0; i < s->nprims; i++) {
        if (pl->prims[i].idx == UINT32_MAX || !pl->prims[i].opens) continue;
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_char(w, '{');
        w_key(w, "name");
        pm_api__w_str(w, pm_prim_mesh(&s->prims[i]));
        pm_api__w_char(w, ',');
        const gltf_group *g = &pl->groups[pl->prims[i].group];
        if (g->qpos) {   /* lattice offsets -> metres */
            pm_api__w_lit(w, "\"translation\":[");
            for (int k = 0; k < 3; k++) {
                if (k) pm_api__w_char(w, ',');
                pm_api__w_f64(w, g->qmin[k] / QPOS_SCALE);
            }
            pm_api__w_lit(w, "],\"scale\":[");
            for (int k = 0; k < 3; k++) {
                if (k) pm_api__w_char(w, ',');
                pm_api__w_f64(w, 1.0 / QPOS_SCALE);
            }
            pm_api__w_lit(w, "],");
        }
        w_key_u(w, "mesh", mesh++);
        pm_api__w_char(w, '}');
    }
    for (uint32_t i = 0; i < s->nprops; i++) {
        uint32_t a = pl->prop_acc[i];
        if (a == UINT32_MAX) continue;
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_char(w, '{');
        w_key(w, "name");
        pm_api__w_str(w, s->props[i].name);
        pm_api__w_char(w, ',');
        w_key_u(w, "mesh", pl->prop_mesh[i]);
        pm_api__w_lit(w, ",\"extensions\":{\"EXT_mesh_gpu_instancing\":{\"attributes\":{");
        w_key_u(w, "TRANSLATION", a);
        pm_api__w_char(w, ',');
        w_key_u(w, "ROTATION", a + 1);
        pm_api__w_char(w, ',');
        w_key_u(w, "SCALE", a + 2);
        pm_api__w_lit(w, "}}}}");
    }
    for (uint32_t i = 0; i < pl->lods.nsets; i++) {
        if (!first) pm_api__w_char(w, ',');
        first = false;
        w_lod_node(w, &pl->lods, &pl->lods.sets[i]);
    }
    pm_api__w_char(w, ']');
}

static uint32_t prop_node_count(const gltf_plan *pl) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < pl->v->s->nprops; i++) n += pl->prop_acc[i] != UINT32_MAX;
    return n;
}

static uint32_t node_count(const gltf_plan *pl) {
    return pl->nprim_meshes + prop_node_count(pl) + pl->lods.nsets;
}

/* The scene's root nodes: every primitive mesh's node but the LOD levels
 * (level 0 hangs under its set's node, the others only under MSFT_lod),
 * the prop nodes, the LOD sets' nodes. */
static void w_scene_roots(pm_api__w *w, const gltf_plan *pl) {
    pm_api__w_lit(w, ",\"nodes\":[");
    bool first = true;
    uint32_t n = node_count(pl);
    for (uint32_t i = 0; i < n; i++) {
        if (i < pl->nprim_meshes && pl->lods.role[i] != PM_API__LOD_ROOT) continue;
        if (!first) pm_api__w_char(w, ',');
        first = false;
        pm_api__w_u64(w, i);
    }
    pm_api__w_char(w, ']');
}

static void w_scene(pm_api__w *w, const gltf_plan *pl, const pm_api_generator *gen,
                    const char *key_hex) {
    const pm_scene *s = pl->v->s;
    uint32_t nodes = node_count(pl);
    pm_api__w_lit(w, ",\"scene\":0,\"scenes\":[{");
    w_key(w, "name");
    pm_api__w_str(w, gen->name);
    if (nodes) w_scene_roots(w, pl);
    pm_api__w_lit(w, ",\"extras\":{\"generator\":");
    pm_api__w_str(w, gen->name);
    pm_api__w_lit(w, ",\"version\":");
    pm_api__w_str(w, gen->version);
    pm_api__w_lit(w, ",\"key\":");
    pm_api__w_str(w, key_hex ? key_hex : "");
    if (pl->o->metadata != PM_API_META_NONE) {
        pm_api__w_lit(w, ",\"metadata\":");
        pm_api__w_meta_mode(w, s->meta, gen, pl->o->metadata);
    }
    pm_api__w_lit(w, ",\"stats\":{\"vertices\":");
    pm_api__w_u64(w, pm_scene_vertex_count(s));
    pm_api__w_lit(w, ",\"triangles\":");
    pm_api__w_u64(w, pm_scene_triangle_count(s));
    pm_api__w_lit(w, "}}}]");
    if (nodes) w_nodes(w, pl);
}

/* extensionsUsed, and extensionsRequired for the ones a reader cannot
 * ignore (compressed views, integer vertex attributes). */
static void w_extensions(pm_api__w *w, const gltf_plan *pl) {
    const char *used[4];
    int n = 0, req = 0;
    if (pl->cbin) used[n++] = "EXT_meshopt_compression";
    if (pl->quantized) used[n++] = "KHR_mesh_quantization";
    req = n;
    if (pl->nmarkers) used[n++] = "EXT_mesh_gpu_instancing";
    if (pl->lods.nsets) used[n++] = "MSFT_lod";
    for (int list = 0; list < 2; list++) {
        int m = list ? req : n;
        if (!m) continue;
        pm_api__w_lit(w, list ? ",\"extensionsRequired\":[" : ",\"extensionsUsed\":[");
        for (int i = 0; i < m; i++) {
            if (i) pm_api__w_char(w, ',');
            pm_api__w_str(w, used[i]);
        }
        pm_api__w_char(w, ']');
    }
}

/* Everything but the buffer's data; for .gltf, bin (the buffer's bytes:
 * compressed with meshopt) is embedded as a data URI. */
static void w_gltf_json(pm_api__w *w, const gltf_plan *pl, const pm_api_generator *gen,
                        const char *key_hex, const unsigned char *bin) {
    pm_api__w_lit(w, "{\"asset\":{\"version\":\"2.0\",\"generator\":");
    pm_api__w_str(w, "procmesh " PM_VERSION);
    pm_api__w_char(w, '}');
    w_extensions(w, pl);
    w_scene(w, pl, gen, key_hex);
    if (pl->nprim_meshes + pl->nmarkers) w_meshes(w, pl);
    if (pl->nmat) w_materials(w, pl);
    if (pl->nacc) {
        w_accessors(w, pl);
        w_buffer_views(w, pl);
        size_t len = pl->cbin ? pl->cbin_len : pl->bin_len;
        pm_api__w_lit(w, ",\"buffers\":[{");
        w_key_u(w, "byteLength", len);
        if (bin) {
            pm_api__w_lit(w, ",\"uri\":\"data:application/octet-stream;base64,");
            pm_api__w_base64(w, bin, len);
            pm_api__w_char(w, '"');
        }
        pm_api__w_char(w, '}');
        if (pl->cbin) {   /* the fallback: the uncompressed layout, no data */
            pm_api__w_lit(w, ",{");
            w_key_u(w, "byteLength", pl->bin_len);
            pm_api__w_lit(w, ",\"extensions\":{\"EXT_meshopt_compression\":{\"fallback\":true}}}");
        }
        pm_api__w_char(w, ']');
    }
    pm_api__w_char(w, '}');
}

static void put_u32(unsigned char *o, uint32_t v) {
    for (int i = 0; i < 4; i++) o[i] = (unsigned char)(v >> (8 * i));
}

/* The GLB's first 20 bytes (header, JSON chunk header) for a JSON text
 * of json_len bytes and a BIN chunk of blen; *total gets the file's size,
 * *jlen the JSON chunk's (padded with spaces). -1 past 4 GiB. */
static int glb_head(size_t json_len, size_t blen, unsigned char head[20], size_t *total,
                    size_t *jlen) {
    *jlen = (json_len + 3) & ~(size_t)3;
    *total = 12 + 8 + *jlen + (blen ? 8 + blen : 0);
    if (*total > UINT32_MAX) return -1;
    put_u32(head, 0x46546C67);           /* "glTF" */
    put_u32(head + 4, 2);
    put_u32(head + 8, (uint32_t)*total);
    put_u32(head + 12, (uint32_t)*jlen);
    put_u32(head + 16, 0x4E4F534A);      /* "JSON" */
    return 0;
}

static void glb_bin_head(size_t blen, unsigned char b[8]) {
    put_u32(b, (uint32_t)blen);
    put_u32(b + 4, 0x004E4942);   /* "BIN\0" */
}

/* GLB: header, JSON chunk (padded with spaces), BIN chunk (data already
 * 4-byte aligned; omitted when there is none). */
static int glb_assemble(const pm_api__w *json, const gltf_plan *pl, const pm_api_alloc *al,
                        pm_api_buf *out) {
    size_t blen = pl->cbin ? pl->cbin_len : pl->bin_len, total, jlen;
    unsigned char head[20];
    if (glb_head(json->len, blen, head, &total, &jlen) < 0) return -1;
    /* The caller's allocator counts the bytes (the service's budget); with
     * none, a big output gets huge pages (pm_api__out_alloc). */
    unsigned char *o = al ? pm_api__mem_realloc(al, NULL, 0, total) : pm_api__out_alloc(total);
    if (!o) return -1;
    memcpy(o, head, sizeof head);
    memcpy(o + 20, json->data, json->len);
    memset(o + 20 + json->len, ' ', jlen - json->len);
    if (blen) {
        unsigned char *b = o + 20 + jlen;
        glb_bin_head(blen, b);
        /* Written before (the caller's pool): copied by non-temporal
         * stores, which do not read each line first. Fresh pages are
         * zeroed by the kernel at the first store, in cache: ordinary
         * stores then. */
        bool stream = blen >= 16 * STREAM_MIN && pm_api__resident(b + 8, blen);
        if (pl->cbin) memcpy(b + 8, pl->cbin, blen);
        else plan_fill(pl, b + 8, stream);
    }
    out->data = o;
    out->len = total;
    return 0;
}

/* Whether accessor a's bytes are its source array's as they are. */
static bool acc_verbatim(const gltf_acc *a) {
    return a->conv == CONV_COPY || (a->conv == CONV_INDEX && a->ctype == GL_UNSIGNED_INT);
}

static int sink_fill(const pm_api_sink *k, unsigned char c, size_t n) {
    unsigned char fill[64];
    memset(fill, c, sizeof fill);
    for (size_t m; n; n -= m) {
        m = n < sizeof fill ? n : sizeof fill;
        if (k->write(k->ctx, fill, m) != 0) return -1;
    }
    return 0;
}

/* The GLB of glb_assemble, to sink: the arrays kept as they are go
 * straight from the scene, the converted ones through tmp (room for the
 * longest). -1 when sink stopped. */
static int glb_stream(const pm_api__w *json, const gltf_plan *pl, unsigned char *tmp,
                      const pm_api_sink *k) {
    size_t blen = pl->cbin ? pl->cbin_len : pl->bin_len, total, jlen;
    unsigned char head[20], bhead[8];
    if (glb_head(json->len, blen, head, &total, &jlen) < 0) return -1;
    if (k->total) k->total(k->ctx, total);
    if (k->write(k->ctx, head, sizeof head) || k->write(k->ctx, json->data, json->len) ||
        sink_fill(k, ' ', jlen - json->len))
        return -1;
    if (!blen) return 0;
    glb_bin_head(blen, bhead);
    if (k->write(k->ctx, bhead, sizeof bhead)) return -1;
    if (pl->cbin) return k->write(k->ctx, pl->cbin, blen);
    for (uint32_t i = 0; i < pl->nacc; i++) {
        const gltf_acc *a = &pl->acc[i];
        const void *src = a->src;
        if (!acc_verbatim(a)) {
            fill_acc(a, tmp, false);
            src = tmp;
        }
        /* plan_add lays the accessors out one after another, 4-aligned. */
        size_t padded = (a->length + 3) & ~(size_t)3;
        if (k->write(k->ctx, src, a->length) || sink_fill(k, 0, padded - a->length)) return -1;
    }
    return 0;
}

/* The plan and the JSON text of output o, with for .gltf or meshopt the
 * buffer's bytes (*bin, bin_len of them, for pm_api__mem_free). */
static int gltf_prepare(const pm_api__view *v, const pm_api_generator *gen, const char *key_hex,
                        const pm_api_output *o, marker *mk, gltf_plan *pl, unsigned char *local,
                        pm_api__w *w, unsigned char **bin) {
    bool glb = o->format == PM_API_FMT_GLB;
    *bin = NULL;
    if (plan_build(pl, v, o, mk, local) < 0) return -1;
    size_t estimate = 4096 + 400 * (size_t)(pl->nacc + v->s->nprims + v->s->nprops);
    bool mo = o->compress == PM_API_COMPRESS_MESHOPT && pl->nacc;
    if (!glb || mo) {
        *bin = pm_api__mem_realloc(v->al, NULL, 0, pl->bin_len ? pl->bin_len : 1);
        if (!*bin) return -1;
        plan_fill(pl, *bin, false);
        if (mo && plan_compress(pl, *bin) < 0) return -1;
        estimate += ((mo ? pl->cbin_len : pl->bin_len) + 2) / 3 * 4;
    }
    pm_api__w_init_al(w, estimate, v->al);
    w_gltf_json(w, pl, gen, key_hex, glb ? NULL : mo ? pl->cbin : *bin);
    return w->oom ? -1 : 0;
}

int pm_api__encode_gltf(const pm_api__view *v, const pm_api_generator *gen,
                        const char *key_hex, const pm_api_output *o, pm_api_buf *out) {
    marker mk;   /* built by plan_build when the scene has props */
    gltf_plan pl;
    _Alignas(16) unsigned char local[PLAN_LOCAL];
    unsigned char *bin = NULL;
    pm_api__w w = {0};
    int r = gltf_prepare(v, gen, key_hex, o, &mk, &pl, local, &w, &bin);
    if (r == 0 && o->format == PM_API_FMT_GLB) {
        r = glb_assemble(&w, &pl, v->al, out);
    } else if (r == 0) {
        pm_api__w_char(&w, '\n');
        r = pm_api__w_take(&w, out);
    }
    pm_api__w_free(&w);
    if (bin) pm_api__mem_free(v->al, bin, pl.bin_len ? pl.bin_len : 1);
    plan_free(&pl);
    return r;
}

int pm_api__stream_glb(const pm_api__view *v, const pm_api_generator *gen, const char *key_hex,
                       const pm_api_output *o, const pm_api_sink *sink) {
    marker mk;   /* built by plan_build when the scene has props */
    gltf_plan pl;
    _Alignas(16) unsigned char local[PLAN_LOCAL];
    unsigned char *bin = NULL, *tmp = NULL;
    pm_api__w w = {0};
    size_t ntmp = 0;
    int r = gltf_prepare(v, gen, key_hex, o, &mk, &pl, local, &w, &bin);
    for (uint32_t i = 0; r == 0 && !pl.cbin && i < pl.nacc; i++)
        if (!acc_verbatim(&pl.acc[i]) && pl.acc[i].length > ntmp) ntmp = pl.acc[i].length;
    if (r == 0 && ntmp && !(tmp = pm_api__mem_realloc(v->al, NULL, 0, ntmp))) r = -1;
    if (r == 0 && glb_stream(&w, &pl, tmp, sink) != 0) r = -3;
    if (tmp) pm_api__mem_free(v->al, tmp, ntmp);
    pm_api__w_free(&w);
    if (bin) pm_api__mem_free(v->al, bin, pl.bin_len ? pl.bin_len : 1);
    plan_free(&pl);
    return r;
}
