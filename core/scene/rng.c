#include "scene/rng.h"

#include <assert.h>

static uint64_t pm__splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t pm__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void pm_rng_seed(pm_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = pm__splitmix64(&x);
}

void pm_rng_fork(pm_rng *child, const pm_rng *parent, uint64_t stream) {
    uint64_t x = parent->s[0] ^ pm__rotl(parent->s[1], 17) ^ pm__rotl(parent->s[2], 31) ^
                 pm__rotl(parent->s[3], 47) ^ (stream * 0xD1B54A32D192ED03ull);
    for (int i = 0; i < 4; i++) child->s[i] = pm__splitmix64(&x);
}

uint64_t pm_rng_u64(pm_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = pm__rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = pm__rotl(s[3], 45);
    return result;
}

double pm_rng_unit(pm_rng *r) {
    /* 53 high bits scaled by 2^-53: exact in binary64 on every platform. */
    return (double)(pm_rng_u64(r) >> 11) * 0x1.0p-53;
}

double pm_rng_range(pm_rng *r, double lo, double hi) {
    double v = lo + (hi - lo) * pm_rng_unit(r);
    return v < hi ? v : lo; /* rounding can reach hi; keep the half-open contract */
}

uint64_t pm_rng_below(pm_rng *r, uint64_t n) {
    assert(n > 0); /* n == 0 would divide by zero below */
    /* Lemire, "Fast Random Integer Generation in an Interval" (2019). */
    unsigned __int128 m = (unsigned __int128)pm_rng_u64(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            m = (unsigned __int128)pm_rng_u64(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

int64_t pm_rng_int(pm_rng *r, int64_t lo, int64_t hi) {
    assert(lo <= hi);
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX) return (int64_t)pm_rng_u64(r);
    return (int64_t)((uint64_t)lo + pm_rng_below(r, span + 1));
}

bool pm_rng_chance(pm_rng *r, double p) { return pm_rng_unit(r) < p; }
