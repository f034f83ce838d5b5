/* XXH3 with AVX2 for the long updates of the cache key (a heightfield's
 * doubles: megabytes). libxxhash as Debian builds it uses SSE2 (about
 * 9 GB/s here); the same algorithm with AVX2 runs at 40 GB/s and gives the
 * same digest (XXH3 is defined bit for bit, whatever the vector width).
 * This file alone is compiled with -mavx2 on x86-64 (CMakeLists.txt); key.c
 * calls it only when the CPU has AVX2. */
#include "key_simd.h"

#if defined(__x86_64__) && defined(__AVX2__)
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

int pm_api__xxh3_update_avx2(void *state, const void *data, size_t len) {
    return XXH3_128bits_update(state, data, len) == XXH_OK ? 0 : -1;
}
#else
int pm_api__xxh3_update_avx2(void *state, const void *data, size_t len) {
    (void)state;
    (void)data;
    (void)len;
    return -1;   /* never called: pm_api__xxh3_avx2 says no */
}
#endif

int pm_api__xxh3_avx2(void) {
#if defined(__x86_64__) && defined(__AVX2__)
    return 1;
#else
    return 0;
#endif
}
