#ifndef PM_API_KEY_SIMD_H
#define PM_API_KEY_SIMD_H
/* Internal to api/key.c: XXH3_128bits_update on an XXH3_state_t (of the
 * same xxhash version) with AVX2 code. Call only when pm_api__xxh3_avx2()
 * says it was built so and the CPU has AVX2. Returns 0 or -1. */
#include <stddef.h>

int pm_api__xxh3_avx2(void);
int pm_api__xxh3_update_avx2(void *state, const void *data, size_t len);
#endif
