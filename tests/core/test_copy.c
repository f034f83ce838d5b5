#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scene/copy.h"
#include "scene/rng.h"

/* pm_copy writes what memcpy writes, and nothing around it, for every
 * size near the thresholds and every distance in and around the window
 * it takes to its own loop (1..63 bytes after the source, modulo 4096). */
Test(copy, same_bytes_as_memcpy_in_and_out_of_the_window) {
    enum { SPACE = 1 << 17 };
    unsigned char *src = malloc(SPACE), *a = malloc(SPACE + 64), *b = malloc(SPACE + 64);
    cr_assert(src && a && b);
    pm_rng r;
    pm_rng_seed(&r, 7);
    for (size_t i = 0; i < SPACE; i++) src[i] = (unsigned char)pm_rng_u64(&r);
    static const size_t sizes[] = {0, 1, 63, 64, 65, 2047, 2048, 2049, 4096, 4800, 65535, 65536};
    int looped = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        for (int dist = -70; dist <= 70; dist++) {
            /* a place in b whose distance from src + 128 is dist modulo 4096 */
            uintptr_t want = ((uintptr_t)(src + 128) + (uintptr_t)(intptr_t)dist) & 4095u;
            size_t at = (want - ((uintptr_t)b & 4095u)) & 4095u;
            if (at + n + 32 > SPACE) continue;
            memset(a, 0xA5, SPACE + 64);
            memset(b, 0xA5, SPACE + 64);
            memcpy(a + at, src + 128, n);
            pm_copy(b + at, src + 128, n);
            cr_assert_eq(memcmp(a, b, SPACE + 64), 0, "size %zu distance %d", n, dist);
            looped += n >= 2048 && dist >= 1 && dist <= 63;
        }
    }
    cr_expect_gt(looped, 300, "%d copies through the loop", looped);
    free(src), free(a), free(b);
}
