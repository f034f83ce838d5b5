#ifndef PM_HYPOT4_H
#define PM_HYPOT4_H
/* hypot of four pairs at once, bit for bit what the C library's hypot
 * returns, for lane code (GCC vector extensions; each lane does the
 * scalar operations in their order, so build with -ffp-contract=off).
 *
 * glibc (2.35 on) computes hypot without FMA as Borges' corrected square
 * root ("An improved algorithm for hypot(a, b)", 2019): with ax >= ay the
 * magnitudes, h = sqrt(ax^2 + ay^2) and one correction step from the
 * rounding error of the square, taken in one of two algebraic forms by
 * whether h <= 2 ay. It does so where ax <= 2^511, ay >= 2^-459 and
 * ay > ax 2^-54; where ay <= ax 2^-54 it returns ax + ay (for ay below
 * 2^-459 too, as long as ax >= ay 2^54), else it scales. Lanes well
 * inside the kernel's range take its steps here, lanes with ay = 0 (C's
 * Annex F: hypot(x, +-0) is fabs(x)) or ay <= ax 2^-56 (ax not tiny) get
 * ax + ay, and any other lane calls hypot itself. So the result never
 * depends on this copy being right at the ranges' edges,
 * and tests/core/test_road_frame_fast.c checks it against the library on
 * random and edge inputs (a C library with another hypot fails there). */
#include <math.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Lane vectors stay inside one translation unit's inlined code, never
 * crossing an ABI: the compiler's note that AVX passes them differently
 * does not apply (for the includer's code either). */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef double pm_d4 __attribute__((vector_size(32)));
typedef int64_t pm_k4 __attribute__((vector_size(32)));   /* lane masks: 0 or -1 */

static inline __attribute__((always_inline)) pm_d4 pm_d4_sel(pm_k4 m, pm_d4 a, pm_d4 b) {
    return (pm_d4)((m & (pm_k4)a) | (~m & (pm_k4)b));
}

static inline __attribute__((always_inline)) pm_d4 pm_d4_abs(pm_d4 a) {
    return (pm_d4)((pm_k4)a & (pm_k4){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX});
}

/* sqrt per lane (correctly rounded, as the scalar sqrt). */
static inline __attribute__((always_inline)) pm_d4 pm_d4_sqrt(pm_d4 x) {
#if defined(__SSE2__)
    __m128d lo = _mm_sqrt_pd((__m128d){x[0], x[1]}), hi = _mm_sqrt_pd((__m128d){x[2], x[3]});
    return (pm_d4){lo[0], lo[1], hi[0], hi[1]};
#else
    return (pm_d4){sqrt(x[0]), sqrt(x[1]), sqrt(x[2]), sqrt(x[3])};
#endif
}

/* hypot(x[j], y[j]) per lane, given s = sqrt(x * x + y * y) per lane (the
 * caller often has it: it is the first step of hypot, as the sum of the
 * squares does not depend on their order). */
static inline __attribute__((always_inline)) pm_d4 pm_hypot4_with(pm_d4 x, pm_d4 y, pm_d4 s) {
    pm_d4 x0 = pm_d4_abs(x), y0 = pm_d4_abs(y);
    pm_k4 swap = (pm_k4)(x0 < y0);
    pm_d4 ax = pm_d4_sel(swap, y0, x0), ay = pm_d4_sel(swap, x0, y0), h = s;
    /* h <= 2 ay: the form for close magnitudes, else the other one. */
    pm_d4 da = h - ay, db = h - ax;
    pm_d4 t1a = ax * (2.0 * da - ax), t2a = (da - 2.0 * (ax - ay)) * da;
    pm_d4 t1b = 2.0 * db * (ax - 2.0 * ay), t2b = (4.0 * db - ay) * ay + db * db;
    pm_k4 close = (pm_k4)(h <= 2.0 * ay);
    pm_d4 t1 = pm_d4_sel(close, t1a, t1b), t2 = pm_d4_sel(close, t2a, t2b);
    pm_d4 r = h - (t1 + t2) / (2.0 * h);
    const pm_d4 big = {0x1p500, 0x1p500, 0x1p500, 0x1p500};
    const pm_d4 tiny = {0x1p-450, 0x1p-450, 0x1p-450, 0x1p-450};
    const pm_d4 small = {0x1p-400, 0x1p-400, 0x1p-400, 0x1p-400};
    pm_k4 norm = (pm_k4)(ax < big);
    pm_k4 kernel = norm & (pm_k4)(ay > tiny) & (pm_k4)(ay > ax * 0x1p-50);
    pm_k4 axis = norm & ((pm_k4)(ay == 0.0) | ((pm_k4)(ax > small) & (pm_k4)(ay <= ax * 0x1p-56)));
    r = pm_d4_sel(axis, ax + ay, r);
    pm_k4 done = kernel | axis;
    if ((done[0] & done[1] & done[2] & done[3]) != -1)
        for (int j = 0; j < 4; j++)
            if (!done[j]) r[j] = hypot(x[j], y[j]);
    return r;
}

static inline __attribute__((always_inline)) pm_d4 pm_hypot4(pm_d4 x, pm_d4 y) {
    return pm_hypot4_with(x, y, pm_d4_sqrt(x * x + y * y));
}

#endif
