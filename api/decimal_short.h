#ifndef PM_API_DECIMAL_SHORT_H
#define PM_API_DECIMAL_SHORT_H
/* Internal to api/: pm_api__dec17's common case inline, for the callers
 * that print many reals (canon.c). A header of its own: the encoders'
 * translation units, which call pm_api__dec17, compile as before. */
#include "decimal.h"

extern const uint64_t pm_api__p5[28];   /* 5^0 .. 5^27 */

/* pm_api__dec17 of a = m 2^(be - 53) (m with its hidden bit) inline,
 * where requests' values mostly are (about 1e-10 to 1e15): with k the
 * estimate floor((be - 1) log10 2), m 5^(16-k) is at most 116 bits and its floor by 2^sh (sh 1..63) one
 * word, so the division is a shift and the dropped fraction a mask. When
 * k came out one too low, the 18th digit goes into the fraction's class.
 * False where this does not hold (pm_api__dec17's general path then). */
static inline bool pm_api__dec17_short(uint64_t m, int be, uint64_t *digits, int *x, int *frac) {
    int k = ((be - 1) * 78913) >> 18;   /* floor((be - 1) log10 2) */
    int p = 16 - k, sh = 53 - be - p;
    if (p < 0 || p > 27 || sh < 1 || sh > 63) return false;
    unsigned __int128 v = (unsigned __int128)m * pm_api__p5[p];
    uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
    if (hi >> sh) return false;
    uint64_t q = (hi << (64 - sh)) | (lo >> sh), r = lo & ((1ull << sh) - 1), half = 1ull << (sh - 1);
    int f = r == 0 ? 0 : r < half ? 1 : r == half ? 2 : 3;
    if (q >= pm_api__u10[17]) {
        uint64_t t = q / 10;
        unsigned d = (unsigned)(q - t * 10);
        f = d == 0 ? (f != 0) : d < 5 ? 1 : d == 5 && f == 0 ? 2 : 3;
        q = t;
        k++;
    }
    if (q < pm_api__u10[16] || q >= pm_api__u10[17]) return false;
    *digits = q;
    *x = k;
    *frac = f;
    return true;
}

#endif
