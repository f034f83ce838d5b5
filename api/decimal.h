#ifndef PM_API_DECIMAL_H
#define PM_API_DECIMAL_H
/* Internal to api/: the exact decimal digits of a double, as printf rounds
 * them, in 128-bit integer arithmetic. Shared by the canonical form's
 * "%.17g" (canon.c, cache keys) and the encoders' shortest of 15, 16 or 17
 * digits (encode_writer.c). */
#include <stdbool.h>
#include <stdint.h>

/* Exact powers of ten as integers, 10^0 .. 10^19. */
extern const uint64_t pm_api__u10[20];

/* a > 0, finite and normal: floor(a 10^(16 - *x)) in [10^16, 10^17) into
 * *digits, *x the decimal exponent of its first digit, *frac the class of
 * the fraction the floor drops (0 none, 1 below one half, 2 exactly one
 * half, 3 above). False where 128 bits do not cover a (the callers fall
 * back to printf or jansson). */
bool pm_api__dec17(double a, uint64_t *digits, int *x, int *frac);

/* digits (17 of them) and frac from pm_api__dec17 rounded to p (1..17)
 * significant digits as printf rounds (to nearest, ties to even, on the
 * exact value); *x moves up on a carry to 10^p. *exact: nothing but zeros
 * was dropped. */
uint64_t pm_api__dec_round(uint64_t digits, int frac, int p, int *x, bool *exact);
#endif
