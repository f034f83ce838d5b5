#include "decimal_short.h"

#include <string.h>

const uint64_t pm_api__u10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

typedef unsigned __int128 pm_api__u128;

/* 5^k for k <= 27 (< 2^63): 10^k / 2^k, in two steps past 10^19. */
static uint64_t pm_api__pow5(int k) {
    if (k <= 19) return pm_api__u10[k] >> k;
    return (pm_api__u10[19] >> 19) * (pm_api__u10[k - 19] >> (k - 19));
}

/* The fraction r / den (0 <= r < den) as the rounding rules need it:
 * 0 none, 1 below one half, 2 exactly one half, 3 above. */
static int pm_api__frac_class(pm_api__u128 r, pm_api__u128 den) {
    if (r == 0) return 0;
    pm_api__u128 rest = den - r;
    return r < rest ? 1 : r == rest ? 2 : 3;
}

/* floor(m 2^e 10^k) and the class of what the floor drops, exact in 128
 * bits; false when that does not fit (the caller falls back to printf)
 * or the integer part reaches 2^64. */
static bool pm_api__scale_floor(uint64_t m, int e, int k, uint64_t *n, int *frac) {
    pm_api__u128 v, q, r, den;
    if (k >= 0) {
        if (k > 27) return false;
        v = (pm_api__u128)m * pm_api__pow5(k);   /* < 2^53 * 2^63 */
        int s = e + k;
        if (s >= 0) {
            if (s >= 64 || (v >> (64 - s)) != 0) return false;
            *n = (uint64_t)(v << s);
            *frac = 0;
            return true;
        }
        if (s < -126) return false;
        den = (pm_api__u128)1 << -s;
        q = v >> -s;
        r = v & (den - 1);
    } else {
        if (k < -38 || e < 0 || e > 74) return false;   /* m 2^e < 2^127 */
        v = (pm_api__u128)m << e;
        den = -k <= 19 ? pm_api__u10[-k] : (pm_api__u128)pm_api__u10[19] * pm_api__u10[-k - 19];
        q = v / den;
        r = v - q * den;
    }
    if (q >> 64) return false;
    *n = (uint64_t)q;
    *frac = pm_api__frac_class(r, den);
    return true;
}

uint64_t pm_api__dec_round(uint64_t n, int frac, int p, int *x, bool *exact) {
    uint64_t div = pm_api__u10[17 - p], q = n / div, r = n - q * div;
    int c;   /* the dropped part against one half of the last kept digit */
    if (div == 1) c = frac == 0 ? -2 : frac == 2 ? 0 : frac == 1 ? -1 : 1;
    else if (r == div / 2) c = frac ? 1 : 0;
    else c = r == 0 && !frac ? -2 : r < div / 2 ? -1 : 1;
    *exact = c == -2;
    q += c > 0 || (c == 0 && (q & 1));
    if (q == pm_api__u10[p]) {
        q = pm_api__u10[p - 1];
        (*x)++;
    }
    return q;
}

/* 5^k for k <= 27. */
const uint64_t pm_api__p5[28] = {
    1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull, 1953125ull,
    9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull,
    152587890625ull, 762939453125ull, 3814697265625ull, 19073486328125ull, 95367431640625ull,
    476837158203125ull, 2384185791015625ull, 11920928955078125ull, 59604644775390625ull,
    298023223876953125ull, 1490116119384765625ull, 7450580596923828125ull};

bool pm_api__dec17(double a, uint64_t *digits, int *x, int *frac) {
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);   /* normal: a = m 2^(be - 53) */
    uint64_t m = (bits & ((1ull << 52) - 1)) | 1ull << 52;
    int be = (int)(bits >> 52) - 1022;
    int k = ((be - 1) * 78913) >> 18;   /* floor((be - 1) log10 2): 10^k <= a, or one above */
    if (pm_api__dec17_short(m, be, digits, x, frac)) return true;
    for (int tries = 0; tries < 3; tries++) {
        if (!pm_api__scale_floor(m, be - 53, 16 - k, digits, frac)) return false;
        if (*digits >= pm_api__u10[17]) k++;
        else if (*digits < pm_api__u10[16]) k--;
        else {
            *x = k;
            return true;
        }
    }
    return false;
}
