#ifndef PM_SCENE_COPY_H
#define PM_SCENE_COPY_H
/* memcpy for blocks that may be a few KB or more, without glibc's one bad
 * case on AMD Zen 3 (the hosts this service is measured on).
 *
 * glibc 2.36 copies blocks from 2 KB up to its non-temporal threshold
 * (hundreds of KB) with `rep movsb`. On Zen 3 that instruction runs 20 to
 * 25 times slower when the destination lies 1 to 31 bytes after the
 * source modulo 4096 (4K aliasing: every store seems to hit the load just
 * behind it): 4.8 KB take 1.6-2.3 us instead of 62-110 ns, 200 KB 73 us
 * instead of 6 us (measured; other distances, and 0, are fine). Which
 * distance two blocks have depends on the allocator, so a request may hit
 * it on every run or never. pm_copy takes that window to a loop of 16-byte
 * loads and stores (baseline x86-64: no dispatch), about 1.5x the good
 * case's time, and everything else to memcpy. Blocks must not overlap. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether a copy to dst from src (addresses, or a file offset and the
 * address it is written from) falls in rep movsb's slow window: dst 1 to
 * 63 bytes after src modulo 4096 (1..31 measured, doubled for a margin). */
static inline int pm_copy_slow(uintptr_t dst, uintptr_t src) { return ((dst - src) & 4095u) - 1u < 63u; }

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>

/* The loop itself: 64 bytes a step, the tail by memcpy (below 64 bytes,
 * never rep movsb). */
static inline void pm_copy_loop(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_storeu_si128((__m128i *)(void *)(d + i), a);
        _mm_storeu_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(d + i + 48), e);
    }
    memcpy(d + i, s + i, n - i);
}

/* A copy with non-temporal stores (MOVNTDQ, baseline x86-64): the
 * destination's lines are written whole without being read first, and
 * leave the cache. Head and tail by memcpy (the stores need 16-byte
 * aligned addresses: the body starts on a 64-byte line), an SFENCE after
 * the body, so the bytes are ordered before anything later. The same bytes
 * as memcpy for any length and alignment. Blocks must not overlap. */
static inline void pm_copy_stream(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (n < head + 64) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_stream_si128((__m128i *)(void *)(d + i), a);
        _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
    }
    _mm_sfence();
    memcpy(d + i, s + i, n - i);
}

/* Below 2 KB glibc never uses rep movsb. */
static inline void pm_copy(void *dst, const void *src, size_t n) {
    if (n >= 2048 && pm_copy_slow((uintptr_t)dst, (uintptr_t)src)) pm_copy_loop(dst, src, n);
    else memcpy(dst, src, n);
}
#else
static inline void pm_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
static inline void pm_copy_stream(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif
#endif
