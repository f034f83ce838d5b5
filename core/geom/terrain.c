#include "geom/terrain.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "scene/result.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- noise ---- */

/* Sixteen unit gradients, written out so no libm call can differ between
 * platforms: (cos, sin) of k * 22.5 degrees. */
static const double pm__grad[16][2] = {
    {1.0, 0.0}, {0.92387953251128674, 0.38268343236508978},
    {0.70710678118654757, 0.70710678118654757}, {0.38268343236508978, 0.92387953251128674},
    {0.0, 1.0}, {-0.38268343236508978, 0.92387953251128674},
    {-0.70710678118654757, 0.70710678118654757}, {-0.92387953251128674, 0.38268343236508978},
    {-1.0, 0.0}, {-0.92387953251128674, -0.38268343236508978},
    {-0.70710678118654757, -0.70710678118654757}, {-0.38268343236508978, -0.92387953251128674},
    {0.0, -1.0}, {0.38268343236508978, -0.92387953251128674},
    {0.70710678118654757, -0.70710678118654757}, {0.92387953251128674, -0.38268343236508978},
};

static uint64_t pm__mix(uint64_t z) {
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static const double *pm__gradient(uint64_t seed, int64_t ix, int64_t iz) {
    uint64_t h = pm__mix(seed ^ pm__mix((uint64_t)ix * 0x9e3779b97f4a7c15ULL ^
                                        (uint64_t)iz * 0xc2b2ae3d27d4eb4fULL));
    return pm__grad[h >> 60];
}

static double pm__fade(double t) { return t * t * t * (t * (t * 6.0 - 15.0) + 10.0); }

/* One octave's constants, and the gradients of the last lattice cell it
 * visited: neighbouring grid nodes mostly share a cell, so a heightfield
 * fill hashes each lattice corner about once. */
typedef struct pm__octave {
    uint64_t seed;
    double freq, amp, ox, oz;
    int64_t ix, iz;
    bool valid;
    const double *g[4];
} pm__octave;

/* One octave of gradient noise, within about +-1. */
static double pm__perlin(pm__octave *o, double x, double z) {
    double fx0 = floor(x), fz0 = floor(z);
    int64_t ix = (int64_t)fx0, iz = (int64_t)fz0;
    if (!o->valid || ix != o->ix || iz != o->iz) {
        o->g[0] = pm__gradient(o->seed, ix, iz);
        o->g[1] = pm__gradient(o->seed, ix + 1, iz);
        o->g[2] = pm__gradient(o->seed, ix, iz + 1);
        o->g[3] = pm__gradient(o->seed, ix + 1, iz + 1);
        o->ix = ix;
        o->iz = iz;
        o->valid = true;
    }
    double fx = x - fx0, fz = z - fz0;
    const double *g00 = o->g[0], *g10 = o->g[1], *g01 = o->g[2], *g11 = o->g[3];
    double n00 = g00[0] * fx + g00[1] * fz;
    double n10 = g10[0] * (fx - 1.0) + g10[1] * fz;
    double n01 = g01[0] * fx + g01[1] * (fz - 1.0);
    double n11 = g11[0] * (fx - 1.0) + g11[1] * (fz - 1.0);
    double u = pm__fade(fx), v = pm__fade(fz);
    double nx0 = n00 + u * (n10 - n00), nx1 = n01 + u * (n11 - n01);
    /* 2D gradient noise peaks at sqrt(1/2); scale it to +-1. */
    return (nx0 + v * (nx1 - nx0)) * 1.4142135623730951;
}

/* Per-octave seeds (independent streams) and offsets (so lattice zeros
 * do not line up at the origin); amplitudes normalized to sum 1. */
static void pm__octaves(const pm_noise *n, pm__octave o[8]) {
    assert(n->wavelength > 0.0 && n->octaves >= 1 && n->octaves <= 8);
    double amp = 1.0, norm = 0.0, freq = 1.0 / n->wavelength;
    for (uint32_t k = 0; k < n->octaves; k++) norm += amp, amp *= 0.5;
    amp = 1.0 / norm;
    for (uint32_t k = 0; k < n->octaves; k++) {
        uint64_t seed = pm__mix(n->seed + 0x632be59bd9b4e019ULL * (k + 1));
        o[k] = (pm__octave){.seed = seed, .freq = freq, .amp = amp,
                            .ox = (double)(seed & 0xffff) / 65536.0 * 97.0,
                            .oz = (double)((seed >> 16) & 0xffff) / 65536.0 * 89.0};
        amp *= 0.5;
        freq *= 2.0;
    }
}

static double pm__noise_eval(const pm_noise *n, pm__octave *o, double x, double z) {
    double sum = 0.0;
    for (uint32_t k = 0; k < n->octaves; k++)
        sum += o[k].amp * pm__perlin(&o[k], x * o[k].freq + o[k].ox, z * o[k].freq + o[k].oz);
    double h = n->amplitude * sum;
    if (h > n->amplitude) h = n->amplitude;
    if (h < -n->amplitude) h = -n->amplitude;
    return h;
}

double pm_noise_height(const pm_noise *n, double x, double z) {
    pm__octave o[8];
    pm__octaves(n, o);
    return pm__noise_eval(n, o, x, z);
}

int pm_heightfield_from_noise(pm_arena *a, pm_heightfield *hf, const pm_noise *n,
                              const volatile int *cancel) {
    assert(hf->cols >= 2 && hf->rows >= 2 && hf->cell > 0.0);
    hf->h = pm_arena_alloc(a, (size_t)hf->cols * hf->rows * sizeof(double));
    hf->h32 = NULL;
    if (!hf->h) return PM_ERR_NOMEM;
    pm__octave o[8];
    pm__octaves(n, o);
    for (uint32_t r = 0; r < hf->rows; r++) {
        if (cancel && *cancel) return PM_ERR_CANCELLED;
        double z = hf->origin[1] + (double)r * hf->cell;
        for (uint32_t c = 0; c < hf->cols; c++)
            hf->h[(size_t)r * hf->cols + c] = pm__noise_eval(n, o, hf->origin[0] + (double)c * hf->cell, z);
    }
    return PM_OK;
}

/* ---- sampling ---- */

/* Grid coordinate of x along an axis of n nodes: cell index and fraction.
 * Inside the grid g is positive, so truncation is floor (a libm call
 * where the baseline x86-64 has no rounding instruction) with the same
 * bits. */
static inline uint32_t pm__axis(double x, double origin, double cell, uint32_t n, double *f) {
    double g = (x - origin) / cell;
    if (!(g > 0.0)) { *f = 0.0; return 0; }
    if (g >= (double)(n - 1)) { *f = 1.0; return n - 2; }
    uint32_t i = (uint32_t)g;
    *f = g - (double)i;
    return i;
}

/* Height of node k, whichever the storage. */
static inline double pm__node_h(const pm_heightfield *hf, size_t k) {
    return hf->h32 ? (double)hf->h32[k] : hf->h[k];
}

/* Bilinear interpolation in the cell whose first node is row0[0] (rows w
 * apart), for either storage: the same operations on the same values. */
#define PM__BILINEAR(row0, w, fx, fz)                                                             \
    do {                                                                                          \
        double a_ = (row0)[0], b_ = (row0)[1], c_ = (row0)[w], d_ = (row0)[(w) + 1];              \
        double h0_ = a_ + (fx) * (b_ - a_), h1_ = c_ + (fx) * (d_ - c_);                          \
        return h0_ + (fz) * (h1_ - h0_);                                                          \
    } while (0)

/* Height in cell (c, r) at fractions (fx, fz). */
static inline double pm__cell_height(const pm_heightfield *hf, uint32_t c, uint32_t r, double fx,
                                     double fz) {
    size_t k = (size_t)r * hf->cols + c;
    if (hf->h32) PM__BILINEAR(hf->h32 + k, hf->cols, fx, fz);
    PM__BILINEAR(hf->h + k, hf->cols, fx, fz);
}

double pm_heightfield_height(const void *ctx, double x, double z) {
    const pm_heightfield *hf = ctx;
    double fx, fz;
    uint32_t c = pm__axis(x, hf->origin[0], hf->cell, hf->cols, &fx);
    uint32_t r = pm__axis(z, hf->origin[1], hf->cell, hf->rows, &fz);
    return pm__cell_height(hf, c, r, fx, fz);
}

/* ---- chord bounds ---- */

/* The most cells pm_heightfield_chord_bound scans for the slope across a
 * chord (below the sampler's depth limit). */
#define PM__BOUND_CELLS 4096

/* The four corner heights of cell (c, r): h00, h10, h01, h11. */
static inline void pm__cell_corners(const pm_heightfield *hf, uint32_t c, uint32_t r, double q[4]) {
    size_t k = (size_t)r * hf->cols + c, w = hf->cols;
    if (hf->h32) {
        const float *p = hf->h32 + k;
        q[0] = p[0], q[1] = p[1], q[2] = p[w], q[3] = p[w + 1];
    } else {
        const double *p = hf->h + k;
        q[0] = p[0], q[1] = p[1], q[2] = p[w], q[3] = p[w + 1];
    }
}

/* max(m, |v|) for m >= 0, without a libm call. */
static inline double pm__maxabs2(double m, double v) {
    v = fabs(v);
    return v > m ? v : m;
}

/* A grid coordinate clamped to the grid [0, n - 1]. */
static inline double pm__clampg(double g, uint32_t n) {
    return g < 0.0 ? 0.0 : (g > (double)(n - 1) ? (double)(n - 1) : g);
}

/* The cell holding clamped grid coordinate g along an axis of n nodes. */
static inline uint32_t pm__cellg(double g, uint32_t n) {
    uint32_t i = (uint32_t)g;
    return i > n - 2 ? n - 2 : i;
}

/* The next integer grid line after parameter s along g0 + s * d (d != 0)
 * inside the grid, as a parameter; 2 when there is none before s = 1. */
static inline double pm__next_line(double g0, double d, double s, uint32_t n) {
    if (d == 0.0) return 2.0;
    double g = g0 + s * d;
    if (!(g > -1e15 && g < 1e15)) return 2.0;   /* no cell lines that far out */
    double k = (double)(int64_t)g;   /* g truncated; then the line strictly ahead */
    if (d > 0.0) k += k > g ? 0.0 : 1.0;
    else k -= k < g ? 0.0 : 1.0;
    if (k < 0.0 || k > (double)(n - 1)) {   /* outside: the grid's edge, if ahead */
        k = d > 0.0 ? (k < 0.0 ? 0.0 : INFINITY) : (k > (double)(n - 1) ? (double)(n - 1) : -INFINITY);
        if (!isfinite(k)) return 2.0;
    }
    double t = (k - g0) / d;
    while (!(t > s)) {   /* g rounded just short of a line: the one after it */
        k += d > 0.0 ? 1.0 : -1.0;
        if (k < 0.0 || k > (double)(n - 1)) return 2.0;
        t = (k - g0) / d;
    }
    return t;
}

/* Largest |height - chord height| along the plan chord itself. */
static double pm__chord_dev(const pm_heightfield *hf, const double g0[2], const double d[2],
                            double ya, double yb, double stop) {
    double worst = 0.0, s0 = 0.0;
    double sx = pm__next_line(g0[0], d[0], 0.0, hf->cols), sz = pm__next_line(g0[1], d[1], 0.0, hf->rows);
    /* A piece starts where the last one ended: its clamped grid point
     * and chord height carry over (the same operations on the same s). */
    double gx0 = pm__clampg(g0[0] + s0 * d[0], hf->cols), gz0 = pm__clampg(g0[1] + s0 * d[1], hf->rows);
    double y0 = ya + s0 * (yb - ya);
    while (s0 < 1.0) {
        double s1 = sx < sz ? sx : sz;
        if (s1 > 1.0) s1 = 1.0;
        double sm = 0.5 * (s0 + s1);
        uint32_t c = pm__cellg(pm__clampg(g0[0] + sm * d[0], hf->cols), hf->cols);
        uint32_t r = pm__cellg(pm__clampg(g0[1] + sm * d[1], hf->rows), hf->rows);
        double q[4], f[2], fx[2], fz[2];
        pm__cell_corners(hf, c, r, q);
        double gx1 = pm__clampg(g0[0] + s1 * d[0], hf->cols), gz1 = pm__clampg(g0[1] + s1 * d[1], hf->rows);
        double y1 = ya + s1 * (yb - ya);
        fx[0] = gx0 - (double)c, fx[1] = gx1 - (double)c;
        fz[0] = gz0 - (double)r, fz[1] = gz1 - (double)r;
        for (int e = 0; e < 2; e++) {
            double h0 = q[0] + fx[e] * (q[1] - q[0]), h1 = q[2] + fx[e] * (q[3] - q[2]);
            f[e] = h0 + fz[e] * (h1 - h0) - (e ? y1 : y0);
        }
        /* Over the piece, tau in [0, 1]: f0 + (f1 - f0) tau - k tau (1 - tau). */
        double k = (q[0] - q[1] - q[2] + q[3]) * (fx[1] - fx[0]) * (fz[1] - fz[0]);
        double m = pm__maxabs2(fabs(f[0]), f[1]);
        if (k != 0.0) {
            double tau = 0.5 * (1.0 - (f[1] - f[0]) / k);
            if (tau > 0.0 && tau < 1.0) m = pm__maxabs2(m, f[0] + (f[1] - f[0]) * tau - k * tau * (1.0 - tau));
        }
        if (m > worst) worst = m;
        if (worst > stop) return worst;
        if (s1 == sx) sx = pm__next_line(g0[0], d[0], s1, hf->cols);
        if (s1 == sz) sz = pm__next_line(g0[1], d[1], s1, hf->rows);
        s0 = s1, gx0 = gx1, gz0 = gz1, y0 = y1;
    }
    return worst;
}

double pm_heightfield_chord_bound(const void *ctx, const double a[3], const double b[3], double dp,
                                  double stop) {
    const pm_heightfield *hf = ctx;
    double g0[2] = {(a[0] - hf->origin[0]) / hf->cell, (a[2] - hf->origin[1]) / hf->cell};
    double d[2] = {(b[0] - hf->origin[0]) / hf->cell - g0[0], (b[2] - hf->origin[1]) / hf->cell - g0[1]};
    double dev = pm__chord_dev(hf, g0, d, a[1], b[1], stop);
    if (dev > stop || !(dp > 0.0)) return dev;
    /* Slopes across the chord over the cells within dp of it: per cell,
     * the largest edge differences along x and along z (outside the grid
     * the clamped height has one of them, or none). */
    double m = dp / hf->cell, x0 = g0[0], x1 = g0[0] + d[0], z0 = g0[1], z1 = g0[1] + d[1];
    if (x1 < x0) x0 = x1, x1 = g0[0];
    if (z1 < z0) z0 = z1, z1 = g0[1];
    uint32_t c0 = pm__cellg(pm__clampg(x0 - m, hf->cols), hf->cols);
    uint32_t c1 = pm__cellg(pm__clampg(x1 + m, hf->cols), hf->cols);
    uint32_t r0 = pm__cellg(pm__clampg(z0 - m, hf->rows), hf->rows);
    uint32_t r1 = pm__cellg(pm__clampg(z1 + m, hf->rows), hf->rows);
    /* A long chord over a wide box (only coarse LODs have them, and then
     * seldom within the error) is split rather than scanned cell by cell:
     * its halves cover a quarter of the box. */
    if ((uint64_t)(c1 - c0 + 1) * (r1 - r0 + 1) > PM__BOUND_CELLS && stop < INFINITY) return INFINITY;
    double gx = 0.0, gz = 0.0;
    for (uint32_t r = r0; r <= r1; r++) {
        for (uint32_t c = c0; c <= c1; c++) {
            double q[4];
            pm__cell_corners(hf, c, r, q);
            gx = pm__maxabs2(pm__maxabs2(gx, q[1] - q[0]), q[3] - q[2]);
            gz = pm__maxabs2(pm__maxabs2(gz, q[2] - q[0]), q[3] - q[1]);
        }
    }
    /* The plan offset is along the chord's normal (-dz, dx) / |d|. */
    double len = sqrt(d[0] * d[0] + d[1] * d[1]);
    double across = len > 0.0 ? (fabs(d[1]) * gx + fabs(d[0]) * gz) / len : (gx + gz);
    return dev + across / hf->cell * dp;
}

/* Central-difference gradient (dh/dx, dh/dz) at node (c, r); one-sided on
 * the border. cell2 is 2 * cell, exactly (double)(c1 - c0) * cell for an
 * inner node, so both cases give the bits of the general formula. */
static inline void pm__node_gradient(const pm_heightfield *hf, uint32_t c, uint32_t r, double cell2,
                                     double g[2]) {
    size_t w = hf->cols, at = (size_t)r * w + c;
    if (c - 1 < hf->cols - 2 && r - 1 < hf->rows - 2) {   /* an inner node: one storage test */
        if (hf->h32) {
            const float *q = hf->h32 + at;
            g[0] = ((double)q[1] - (double)q[-1]) / cell2;
            g[1] = ((double)q[w] - (double)*(q - w)) / cell2;
        } else {
            const double *q = hf->h + at;
            g[0] = (q[1] - q[-1]) / cell2;
            g[1] = (q[w] - *(q - w)) / cell2;
        }
        return;
    }
    if (c - 1 < hf->cols - 2) g[0] = (pm__node_h(hf, at + 1) - pm__node_h(hf, at - 1)) / cell2;
    else {
        uint32_t c0 = c ? c - 1 : c, c1 = c + 1 < hf->cols ? c + 1 : c;
        g[0] = (pm__node_h(hf, (size_t)r * w + c1) - pm__node_h(hf, (size_t)r * w + c0)) /
               ((double)(c1 - c0) * hf->cell);
    }
    if (r - 1 < hf->rows - 2) g[1] = (pm__node_h(hf, at + w) - pm__node_h(hf, at - w)) / cell2;
    else {
        uint32_t r0 = r ? r - 1 : r, r1 = r + 1 < hf->rows ? r + 1 : r;
        g[1] = (pm__node_h(hf, (size_t)r1 * w + c) - pm__node_h(hf, (size_t)r0 * w + c)) /
               ((double)(r1 - r0) * hf->cell);
    }
}

/* Two neighbouring node heights as doubles, whichever the storage (for
 * float32 one 8-byte load and one conversion). */
typedef double pm__v2d __attribute__((vector_size(16)));
typedef float pm__v2f __attribute__((vector_size(8)));
static inline pm__v2d pm__pair_f(const float *p) {
#if defined(__SSE2__)
    double t;   /* the two floats' bytes: movq, then cvtps2pd */
    memcpy(&t, p, sizeof t);
    return (pm__v2d)_mm_cvtps_pd(_mm_castpd_ps(_mm_set_sd(t)));
#else
    pm__v2f f;
    memcpy(&f, p, sizeof f);
    return __builtin_convertvector(f, pm__v2d);
#endif
}
static inline pm__v2d pm__pair_d(const double *p) {
    pm__v2d d;
    memcpy(&d, p, sizeof d);
    return d;
}

/* The four corners' central differences (2 cell times their gradients)
 * of a cell whose corners are all inner nodes (the usual case), straight
 * from the rows around it (p0 the cell's first node, rows w apart), as
 * pairs (x, z): a at (c, r), b at (c+1, r), c at (c, r+1), d at (c+1, r+1). */
#define PM__CORNER_DIFFS(pair, p0, w, A, B, C, D)                                                 \
    do {                                                                                          \
        const __typeof__(*(p0)) *p1_ = (p0) + (w);                                                \
        pm__v2d x0_ = pair((p0) + 1) - pair((p0) - 1), x1_ = pair(p1_ + 1) - pair(p1_ - 1);       \
        pm__v2d z0_ = pair(p1_) - pair((p0) - (w)), z1_ = pair(p1_ + (w)) - pair(p0);             \
        A = (pm__v2d){x0_[0], z0_[0]};                                                            \
        B = (pm__v2d){x0_[1], z0_[1]};                                                            \
        C = (pm__v2d){x1_[0], z1_[0]};                                                            \
        D = (pm__v2d){x1_[1], z1_[1]};                                                            \
    } while (0)

/* The gradient (dh/dx, dh/dz) in cell (ci, ri) at fractions (fx, fz).
 * Inside the grid the corners' differences are interpolated and then
 * multiplied by inv = 1 / (2 cell) once (one division where each corner
 * had its own); on the border each corner's one-sided gradient is
 * interpolated. The storage is passed apart (h32, else h) so that a caller
 * looping over many points tests it once. */
static inline __attribute__((always_inline)) void pm__cell_grad_in(const pm_heightfield *hf, const float *h32,
                                                                   const double *h, double inv, uint32_t ci,
                                                                   uint32_t ri, double fx, double fz,
                                                                   double g[2]) {
    if (ci - 1 < hf->cols - 3 && ri - 1 < hf->rows - 3) {
        ptrdiff_t w = (ptrdiff_t)hf->cols;
        size_t k = (size_t)ri * hf->cols + ci;
        pm__v2d a, b, c, d;
        if (h32) PM__CORNER_DIFFS(pm__pair_f, h32 + k, w, a, b, c, d);
        else PM__CORNER_DIFFS(pm__pair_d, h + k, w, a, b, c, d);
        pm__v2d top = a + fx * (b - a), bot = c + fx * (d - c);
        pm__v2d gv = (top + fz * (bot - top)) * inv;
        g[0] = gv[0];
        g[1] = gv[1];
    } else {
        double a[2], b[2], c[2], d[2], cell2 = 2.0 * hf->cell;
        pm__node_gradient(hf, ci, ri, cell2, a);
        pm__node_gradient(hf, ci + 1, ri, cell2, b);
        pm__node_gradient(hf, ci, ri + 1, cell2, c);
        pm__node_gradient(hf, ci + 1, ri + 1, cell2, d);
        for (int j = 0; j < 2; j++) {
            double top = a[j] + fx * (b[j] - a[j]), bot = c[j] + fx * (d[j] - c[j]);
            g[j] = top + fz * (bot - top);
        }
    }
}

/* The unit normal (-dh/dx, 1, -dh/dz) / |...| of gradient g. */
static inline void pm__grad_normal(const double g[2], double n[3]) {
    double il = 1.0 / sqrt(g[0] * g[0] + 1.0 + g[1] * g[1]);
    n[0] = -g[0] * il;
    n[1] = il;
    n[2] = -g[1] * il;
}

void pm_heightfield_normal(const pm_heightfield *hf, double x, double z, double n[3]) {
    double fx, fz, g[2];
    uint32_t ci = pm__axis(x, hf->origin[0], hf->cell, hf->cols, &fx);
    uint32_t ri = pm__axis(z, hf->origin[1], hf->cell, hf->rows, &fz);
    pm__cell_grad_in(hf, hf->h32, hf->h, 1.0 / (2.0 * hf->cell), ci, ri, fx, fz, g);
    pm__grad_normal(g, n);
}

/* Height and gradient at one point from one cell lookup, the storage
 * passed apart as in pm__cell_grad_in. */
static inline __attribute__((always_inline)) double pm__height_grad_in(const pm_heightfield *hf, const float *h32,
                                                                       const double *h, double inv, double x,
                                                                       double z, double g[2]) {
    double fx, fz;
    uint32_t ci = pm__axis(x, hf->origin[0], hf->cell, hf->cols, &fx);
    uint32_t ri = pm__axis(z, hf->origin[1], hf->cell, hf->rows, &fz);
    pm__cell_grad_in(hf, h32, h, inv, ci, ri, fx, fz, g);
    size_t at = (size_t)ri * hf->cols + ci;
    if (h32) PM__BILINEAR(h32 + at, hf->cols, fx, fz);
    PM__BILINEAR(h + at, hf->cols, fx, fz);
}

double pm_heightfield_height_normalf(const pm_heightfield *hf, double x, double z, float n[3]) {
    double g[2], nd[3];
    double y = pm__height_grad_in(hf, hf->h32, hf->h, 1.0 / (2.0 * hf->cell), x, z, g);
    pm__grad_normal(g, nd);
    for (int k = 0; k < 3; k++) n[k] = (float)nd[k];
    return y;
}

/* pm__grad_normal's float normals of m gradients (gx[i], gz[i]) into nf,
 * two at a time: the sqrt and the division that end each are the longest
 * wait of a lookup, and a pair costs the same wait as one. */
static void pm__normals_f(const double *gx, const double *gz, size_t m, float *nf) {
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 2 <= m; i += 2, nf += 6) {
        pm__v2d x = {gx[i], gx[i + 1]}, z = {gz[i], gz[i + 1]};
        pm__v2d s = x * x + 1.0 + z * z;
        pm__v2d il = 1.0 / (pm__v2d)_mm_sqrt_pd((__m128d)s);
        pm__v2d n0 = -x * il, n2 = -z * il;
        float f[6] = {(float)n0[0], (float)il[0], (float)n2[0], (float)n0[1], (float)il[1], (float)n2[1]};
        memcpy(nf, f, sizeof f);
    }
#endif
    for (; i < m; i++, nf += 3) {
        double g[2] = {gx[i], gz[i]}, nd[3];
        pm__grad_normal(g, nd);
        for (int k = 0; k < 3; k++) nf[k] = (float)nd[k];
    }
}

/* The loop of pm_heightfield_drape for one storage (h32 or h NULL, known
 * where it is inlined): heights and gradients of up to 16 points, then
 * their normals. */
static inline __attribute__((always_inline)) void pm__drape_in(const pm_heightfield *hf, const float *h32,
                                                               const double *h, double *p, float *nf,
                                                               size_t n) {
    pm_heightfield c = *hf;   /* in locals: the stores to p and nf cannot alias it */
    double inv = 1.0 / (2.0 * c.cell);
    while (n > 0) {
        size_t m = n < 16 ? n : 16;
        double gx[16], gz[16];
        for (size_t i = 0; i < m; i++) {
            double g[2];
            p[3 * i + 1] = pm__height_grad_in(&c, h32, h, inv, p[3 * i], p[3 * i + 2], g);
            gx[i] = g[0], gz[i] = g[1];
        }
        pm__normals_f(gx, gz, m, nf);
        p += 3 * m, nf += 3 * m, n -= m;
    }
}

void pm_heightfield_drape(const pm_heightfield *hf, double *p, float *nf, size_t n) {
    if (hf->h32) pm__drape_in(hf, hf->h32, NULL, p, nf, n);
    else pm__drape_in(hf, NULL, hf->h, p, nf, n);
}

/* ---- flattening ---- */

typedef struct pm__flat {
    const pm_heightfield *hf;
    double *dist;       /* plan distance to the outline; 0 under the road */
    double *target;     /* road height there, minus depth */
    unsigned char *under;
} pm__flat;

/* Inclusive node range covering [lo, hi] along one axis, clipped. */
static bool pm__node_range(double lo, double hi, double origin, double cell, uint32_t n,
                           uint32_t *i0, uint32_t *i1) {
    double g0 = ceil((lo - origin) / cell), g1 = floor((hi - origin) / cell);
    if (g0 < 0.0) g0 = 0.0;
    if (g1 > (double)(n - 1)) g1 = (double)(n - 1);
    if (g0 > g1) return false;
    *i0 = (uint32_t)g0;
    *i1 = (uint32_t)g1;
    return true;
}

/* Nodes whose plan position lies in triangle abc take its surface height. */
static void pm__flat_triangle(pm__flat *f, const double *a, const double *b, const double *c,
                              double depth) {
    const pm_heightfield *hf = f->hf;
    double det = (b[0] - a[0]) * (c[2] - a[2]) - (c[0] - a[0]) * (b[2] - a[2]);
    if (det == 0.0) return;
    uint32_t c0, c1, r0, r1;
    if (!pm__node_range(fmin(a[0], fmin(b[0], c[0])), fmax(a[0], fmax(b[0], c[0])),
                        hf->origin[0], hf->cell, hf->cols, &c0, &c1) ||
        !pm__node_range(fmin(a[2], fmin(b[2], c[2])), fmax(a[2], fmax(b[2], c[2])),
                        hf->origin[1], hf->cell, hf->rows, &r0, &r1))
        return;
    const double tol = -1e-9;
    for (uint32_t r = r0; r <= r1; r++) {
        double z = hf->origin[1] + (double)r * hf->cell;
        for (uint32_t col = c0; col <= c1; col++) {
            double x = hf->origin[0] + (double)col * hf->cell;
            double wb = ((x - a[0]) * (c[2] - a[2]) - (c[0] - a[0]) * (z - a[2])) / det;
            double wc = ((b[0] - a[0]) * (z - a[2]) - (x - a[0]) * (b[2] - a[2])) / det;
            double wa = 1.0 - wb - wc;
            if (wa < tol || wb < tol || wc < tol) continue;
            double y = wa * a[1] + wb * b[1] + wc * c[1] - depth;
            size_t k = (size_t)r * hf->cols + col;
            if (!f->under[k] || y < f->target[k]) f->target[k] = y;
            f->under[k] = 1;
            f->dist[k] = 0.0;
        }
    }
}

/* Nodes within reach of outline segment ab remember it when it is nearer. */
static void pm__flat_segment(pm__flat *f, const double *a, const double *b, double reach,
                             double depth) {
    const pm_heightfield *hf = f->hf;
    uint32_t c0, c1, r0, r1;
    if (!pm__node_range(fmin(a[0], b[0]) - reach, fmax(a[0], b[0]) + reach, hf->origin[0],
                        hf->cell, hf->cols, &c0, &c1) ||
        !pm__node_range(fmin(a[2], b[2]) - reach, fmax(a[2], b[2]) + reach, hf->origin[1],
                        hf->cell, hf->rows, &r0, &r1))
        return;
    double ex = b[0] - a[0], ez = b[2] - a[2], l2 = ex * ex + ez * ez;
    for (uint32_t r = r0; r <= r1; r++) {
        double z = hf->origin[1] + (double)r * hf->cell;
        for (uint32_t col = c0; col <= c1; col++) {
            size_t k = (size_t)r * hf->cols + col;
            if (f->under[k]) continue;
            double x = hf->origin[0] + (double)col * hf->cell;
            double t = l2 > 0.0 ? ((x - a[0]) * ex + (z - a[2]) * ez) / l2 : 0.0;
            t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
            double d = hypot(x - (a[0] + t * ex), z - (a[2] + t * ez));
            if (d < f->dist[k]) {
                f->dist[k] = d;
                f->target[k] = a[1] + t * (b[1] - a[1]) - depth;
            }
        }
    }
}

/* The terrain mesh splits cell (c, r) along the diagonal from (c, r+1) to
 * (c+1, r): the nodes and weights of the triangle that holds a point. */
static void pm__grid_triangle(const pm_heightfield *hf, double x, double z, size_t k[3], double w[3]) {
    double fx, fz;
    uint32_t c = pm__axis(x, hf->origin[0], hf->cell, hf->cols, &fx);
    uint32_t r = pm__axis(z, hf->origin[1], hf->cell, hf->rows, &fz);
    size_t k00 = (size_t)r * hf->cols + c, k10 = k00 + 1, k01 = k00 + hf->cols, k11 = k01 + 1;
    if (fx + fz <= 1.0) {
        k[0] = k00, k[1] = k10, k[2] = k01;
        w[0] = 1.0 - fx - fz, w[1] = fx, w[2] = fz;
    } else {
        k[0] = k11, k[1] = k01, k[2] = k10;
        w[0] = fx + fz - 1.0, w[1] = 1.0 - fx, w[2] = 1.0 - fz;
    }
}

/* A road vertex above which the terrain's triangle would rise (the road
 * bends inside the cell) lowers that triangle's flattened corners just
 * enough. Lowering only ever lowers, so vertices done earlier stay below. */
static void pm__flat_vertex(const pm__flat *f, double *h, const double *v, double margin, double depth) {
    size_t k[3];
    double w[3], at = 0.0, wl = 0.0;
    pm__grid_triangle(f->hf, v[0], v[2], k, w);
    for (int j = 0; j < 3; j++) {
        at += w[j] * h[k[j]];
        if (f->dist[k[j]] <= margin) wl += w[j];
    }
    double excess = at - (v[1] - depth);
    if (!(excess > 0.0) || wl <= 0.0) return;
    /* A triangle mostly outside the margin (a steep cut beside a narrow
     * margin) is only partly corrected rather than spiked down. */
    double drop = wl >= 0.5 ? excess / wl : 2.0 * excess;
    for (int j = 0; j < 3; j++)
        if (f->dist[k[j]] <= margin) h[k[j]] -= drop;
}

static double pm__smoothstep(double t) {
    if (t <= 0.0) return 0.0;
    if (t >= 1.0) return 1.0;
    return t * t * (3.0 - 2.0 * t);
}

int pm_heightfield_flatten(pm_arena *a, const pm_heightfield *in, const pm_flatten_shape *shape,
                           const pm_flatten_opts *o, pm_heightfield *out,
                           const volatile int *cancel) {
    size_t n = (size_t)in->cols * in->rows;
    *out = *in;
    out->h = pm_arena_alloc(a, n * sizeof(double));
    out->h32 = NULL;
    pm__flat f = {.hf = in,
                  .dist = pm_arena_alloc(a, n * sizeof(double)),
                  .target = pm_arena_alloc(a, n * sizeof(double)),
                  .under = pm_arena_calloc(a, n, 1)};
    if (!out->h || !f.dist || !f.target || !f.under) return PM_ERR_NOMEM;
    for (size_t k = 0; k < n; k++) f.dist[k] = INFINITY;
    for (size_t t = 0; t < shape->ntriangles; t++) {
        if (cancel && (t & 1023) == 0 && *cancel) return PM_ERR_CANCELLED;
        const uint32_t *ix = shape->indices + 3 * t;
        pm__flat_triangle(&f, shape->positions + 3 * ix[0], shape->positions + 3 * ix[1],
                          shape->positions + 3 * ix[2], o->depth);
    }
    double reach = o->margin + o->falloff;
    for (size_t l = 0; l < shape->nlines; l++) {
        if (cancel && *cancel) return PM_ERR_CANCELLED;
        for (size_t i = 0; i + 1 < shape->line_len[l]; i++)
            pm__flat_segment(&f, shape->lines[l] + 3 * i, shape->lines[l] + 3 * (i + 1), reach,
                             o->depth);
    }
    for (size_t k = 0; k < n; k++) {
        double d = f.dist[k], h = pm__node_h(in, k);
        if (d <= o->margin) h = f.target[k];
        else if (d < reach) h += (f.target[k] - h) * pm__smoothstep((reach - d) / o->falloff);
        out->h[k] = h;
    }
    for (size_t v = 0; v < shape->nvertices; v++)
        pm__flat_vertex(&f, out->h, shape->positions + 3 * v, o->margin, o->depth);
    return PM_OK;
}

/* ---- mesh ---- */

#define PM__TERRAIN_BAND 7

/* Adds node (c, r) = k as a vertex (the first time it is used). */
static int64_t pm__grid_vertex_new(pm_scene *s, pm_prim *p, const pm_heightfield *hf, uint32_t *map,
                                   uint32_t c, uint32_t r, size_t k) {
    double g[2];
    pm__node_gradient(hf, c, r, 2.0 * hf->cell, g);
    double l = sqrt(g[0] * g[0] + 1.0 + g[1] * g[1]);
    double n[3] = {-g[0] / l, 1.0 / l, -g[1] / l};
    float pos[3] = {(float)(hf->origin[0] + (double)c * hf->cell), (float)pm__node_h(hf, k),
                    (float)(hf->origin[1] + (double)r * hf->cell)};
    float nf[3] = {(float)n[0], (float)n[1], (float)n[2]};
    float uv[2] = {(float)((double)c / (double)(hf->cols - 1)),
                   (float)((double)r / (double)(hf->rows - 1))};
    int64_t v = pm_prim_add_vertex(s, p, pos, nf, uv, NULL);
    if (v >= 0) map[k] = (uint32_t)v;
    return v;
}

/* The vertex of node (c, r): three of a cell's four corners are usually
 * there already, so that lookup is inline and the rest out of line. */
static inline int64_t pm__grid_vertex(pm_scene *s, pm_prim *p, const pm_heightfield *hf,
                                      uint32_t *map, uint32_t c, uint32_t r) {
    size_t k = (size_t)r * hf->cols + c;
    if (map[k] != UINT32_MAX) return map[k];
    return pm__grid_vertex_new(s, p, hf, map, c, r, k);
}

/* Cell (c, r) as two triangles, counter-clockwise seen from +Y. */
static int pm__grid_cell(pm_scene *s, pm_prim *p, const pm_heightfield *hf, uint32_t *map,
                         uint32_t c, uint32_t r) {
    int64_t v00 = pm__grid_vertex(s, p, hf, map, c, r);
    int64_t v01 = pm__grid_vertex(s, p, hf, map, c, r + 1);
    int64_t v10 = pm__grid_vertex(s, p, hf, map, c + 1, r);
    int64_t v11 = pm__grid_vertex(s, p, hf, map, c + 1, r + 1);
    if (v00 < 0 || v01 < 0 || v10 < 0 || v11 < 0) return PM_ERR_NOMEM;
    if (pm_prim_add_tri(s, p, (uint32_t)v00, (uint32_t)v01, (uint32_t)v10) < 0 ||
        pm_prim_add_tri(s, p, (uint32_t)v01, (uint32_t)v11, (uint32_t)v10) < 0)
        return PM_ERR_NOMEM;
    return PM_OK;
}

long pm_heightfield_to_prim(pm_scene *s, const pm_heightfield *hf, const char *name,
                            const volatile int *cancel) {
    size_t n = (size_t)hf->cols * hf->rows;
    if (n > UINT32_MAX - 2) return PM_ERR_LIMIT;
    uint64_t ntri = 2ull * (hf->cols - 1) * (hf->rows - 1);
    if (3 * ntri > UINT32_MAX) return PM_ERR_LIMIT;
    uint32_t *map = pm_arena_alloc(s->arena, n * sizeof(uint32_t));
    long index = (long)s->nprims;
    pm_prim *p = map ? pm_scene_add_prim(s, name, "terrain", PM_PRIM_UV, (uint32_t)n,
                                         (uint32_t)(3 * ntri)) : NULL;
    if (!p) return PM_ERR_NOMEM;
    memset(map, 0xff, n * sizeof(uint32_t));
    for (uint32_t b0 = 0; b0 + 1 < hf->cols; b0 += PM__TERRAIN_BAND) {
        uint32_t b1 = b0 + PM__TERRAIN_BAND < hf->cols - 1 ? b0 + PM__TERRAIN_BAND : hf->cols - 1;
        for (uint32_t r = 0; r + 1 < hf->rows; r++) {
            if (cancel && *cancel) return PM_ERR_CANCELLED;
            for (uint32_t c = b0; c < b1; c++) {
                int e = pm__grid_cell(s, p, hf, map, c, r);
                if (e < 0) return e;
            }
        }
    }
    return index;
}
