#ifndef PM_RNG_H
#define PM_RNG_H
#include <stdbool.h>
#include <stdint.h>

/* Deterministic PRNG: xoshiro256** (Blackman & Vigna, 2018), state seeded
 * from one 64-bit seed through splitmix64. Integer-only state updates and an
 * exact integer-to-double conversion give the same sequence on every
 * platform and compiler. */
typedef struct pm_rng { uint64_t s[4]; } pm_rng;

void pm_rng_seed(pm_rng *r, uint64_t seed);
/* A derived, independent stream: the same (parent seed, stream) pair always
 * gives the same child. Lets a generator give each stage its own stream so
 * that changing one stage's draws does not shift another's. */
void pm_rng_fork(pm_rng *child, const pm_rng *parent, uint64_t stream);
uint64_t pm_rng_u64(pm_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double pm_rng_unit(pm_rng *r);
/* Uniform in [lo, hi). */
double pm_rng_range(pm_rng *r, double lo, double hi);
/* Uniform integer in [0, n) without modulo bias (Lemire's method); n > 0. */
uint64_t pm_rng_below(pm_rng *r, uint64_t n);
/* Uniform integer in [lo, hi], inclusive; lo <= hi. */
int64_t pm_rng_int(pm_rng *r, int64_t lo, int64_t hi);
/* true with probability p. */
bool pm_rng_chance(pm_rng *r, double p);
#endif
