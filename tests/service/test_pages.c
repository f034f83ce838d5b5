/* The page pool (service/pages.c): alignment, reuse of space given back,
 * exhaustion, random sequences against a shadow model, and arenas on it
 * that account exactly as arenas on malloc. */
#define _DEFAULT_SOURCE   /* mkstemp, fdopen */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../api/encode_writer.h"
#include "pages.h"
#include "scene/rng.h"

#define MIB ((size_t)1 << 20)

Test(pages, blocks_are_aligned_and_the_pool_starts_on_a_huge_page) {
    pm_svc_pages *pg = pm_svc_pages_create(3 * MIB);
    cr_assert_not_null(pg);
    cr_assert_eq(pm_svc_pages_reserved(pg), 4 * MIB, "rounded up to 2 MiB");
    unsigned char *first = pm_svc_pages_alloc(pg, 1);
    cr_assert_not_null(first);
    cr_assert_eq((uintptr_t)first % (2 * MIB), 0);
    for (size_t n = 0; n < 300; n += 7) {
        unsigned char *p = pm_svc_pages_alloc(pg, n);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % PM_SVC_PAGES_GRAIN, 0, "size %zu", n);
        cr_assert(pm_svc_pages_owns(pg, p) && pm_svc_pages_owns(pg, p + (n ? n - 1 : 0)));
        memset(p, 0xab, n);
    }
    int local;
    cr_assert_not(pm_svc_pages_owns(pg, &local));
    pm_svc_pages_destroy(pg);
}

Test(pages, space_given_back_is_used_again) {
    pm_svc_pages *pg = pm_svc_pages_create(8 * MIB);
    cr_assert_not_null(pg);
    unsigned char *a = pm_svc_pages_alloc(pg, 100000), *b = pm_svc_pages_alloc(pg, 100000);
    cr_assert(a && b && b > a);
    size_t high = pm_svc_pages_used(pg);
    pm_svc_pages_free(pg, a, 100000);
    unsigned char *c = pm_svc_pages_alloc(pg, 40000), *d = pm_svc_pages_alloc(pg, 40000);
    cr_assert_eq(c, a, "the lowest free space first");
    cr_assert(d > c && d < b, "the rest of a's space");
    cr_assert_eq(pm_svc_pages_used(pg), high, "no fresh space touched");
    /* The newest block grows in place; freed at the top, top comes down. */
    unsigned char *e = pm_svc_pages_alloc(pg, 30000);   /* more than a's last 20,032 */
    cr_assert(e > b);
    memset(e, 7, 30000);
    cr_assert_eq(pm_svc_pages_realloc(pg, e, 30000, 3 * MIB), e);
    cr_assert_eq(e[29999], 7);
    pm_svc_pages_free(pg, e, 3 * MIB);
    unsigned char *f = pm_svc_pages_alloc(pg, 30000);
    cr_assert_eq(f, e);
    /* A block followed by free space grows into it. */
    pm_svc_pages_free(pg, d, 40000);
    memset(c, 5, 40000);
    cr_assert_eq(pm_svc_pages_realloc(pg, c, 40000, 90000), c);
    cr_assert_eq(c[39999], 5);
    pm_svc_pages_destroy(pg);
}

Test(pages, a_full_pool_refuses_and_keeps_what_it_holds) {
    pm_svc_pages *pg = pm_svc_pages_create(2 * MIB);
    cr_assert_not_null(pg);
    unsigned char *a = pm_svc_pages_alloc(pg, MIB), *b = pm_svc_pages_alloc(pg, MIB);
    cr_assert(a && b);
    cr_assert_null(pm_svc_pages_alloc(pg, 1), "full");
    memset(a, 3, MIB);
    cr_assert_null(pm_svc_pages_realloc(pg, a, MIB, MIB + 1), "no room to grow or move");
    cr_assert_eq(a[MIB - 1], 3, "untouched");
    cr_assert_null(pm_svc_pages_alloc(pg, SIZE_MAX), "no overflow");
    pm_svc_pages_free(pg, b, MIB);
    cr_assert_eq(pm_svc_pages_realloc(pg, a, MIB, 2 * MIB), a, "grown into b's space");
    pm_svc_pages_free(pg, a, 2 * MIB);
    cr_assert_eq(pm_svc_pages_alloc(pg, 2 * MIB), a, "all of it free again, in one piece");
    pm_svc_pages_destroy(pg);
    cr_assert_null(pm_svc_pages_create(0));
}

typedef struct live { unsigned char *p; size_t n; unsigned char fill; } live;

static int by_address(const void *x, const void *y) {
    const live *a = x, *b = y;
    return a->p < b->p ? -1 : a->p > b->p;
}

/* Every live block holds its fill byte and none overlaps another. */
static void check(live *l, size_t n) {
    live *s = malloc((n ? n : 1) * sizeof *s);
    memcpy(s, l, n * sizeof *s);
    qsort(s, n, sizeof *s, by_address);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s[i].n; k += 97)
            cr_assert_eq(s[i].p[k], s[i].fill, "block %p lost its content", (void *)s[i].p);
        if (s[i].n) cr_assert_eq(s[i].p[s[i].n - 1], s[i].fill);
        if (i + 1 < n)
            cr_assert(s[i].p + (s[i].n ? s[i].n : 1) <= s[i + 1].p, "blocks overlap");
    }
    free(s);
}

Test(pages, random_sequences_match_a_shadow_model) {
    for (uint64_t seed = 1; seed <= 12; seed++) {
        pm_rng g;
        pm_rng_seed(&g, seed);
        size_t cap = (seed % 3 + 1) * 2 * MIB;
        pm_svc_pages *pg = pm_svc_pages_create(cap);
        cr_assert_not_null(pg);
        live l[64];
        size_t nl = 0, held = 0, refused = 0;
        for (int step = 0; step < 3000; step++) {
            uint32_t op = (uint32_t)pm_rng_u64(&g) % 10;
            /* sizes from a few bytes to a few hundred KiB, some 0 */
            size_t n = (size_t)(uint32_t)pm_rng_u64(&g) % (1u << ((uint32_t)pm_rng_u64(&g) % 19));
            if (op < 4 && nl < 64) {
                unsigned char *p = pm_svc_pages_alloc(pg, n);
                if (!p) {
                    /* The free space (all but what is held, rounded up to
                     * grains) lies in at most nl + 1 pieces, so one of them
                     * holds a block up to their mean. */
                    size_t r = (n + PM_SVC_PAGES_GRAIN) & ~(PM_SVC_PAGES_GRAIN - 1);
                    cr_assert_gt(r * (nl + 1), cap - held - PM_SVC_PAGES_GRAIN * nl,
                                 "refused %zu bytes with only %zu held", n, held);
                    refused++;
                    continue;
                }
                l[nl] = (live){p, n, (unsigned char)(step | 1)};
                memset(p, l[nl].fill, n);
                held += n, nl++;
            } else if (op < 7 && nl) {
                size_t i = (uint32_t)pm_rng_u64(&g) % nl;
                pm_svc_pages_free(pg, l[i].p, l[i].n);
                held -= l[i].n;
                l[i] = l[--nl];
            } else if (nl) {
                size_t i = (uint32_t)pm_rng_u64(&g) % nl;
                unsigned char *q = pm_svc_pages_realloc(pg, l[i].p, l[i].n, n);
                if (!q) {
                    refused++;
                    continue;
                }
                if (n > l[i].n) memset(q + l[i].n, l[i].fill, n - l[i].n);
                held += n, held -= l[i].n;
                l[i].p = q, l[i].n = n;
            }
            cr_assert_leq(pm_svc_pages_used(pg), cap);
            if (step % 16 == 0) check(l, nl);
        }
        check(l, nl);
        while (nl) pm_svc_pages_free(pg, l[nl - 1].p, l[nl - 1].n), nl--;
        unsigned char *all = pm_svc_pages_alloc(pg, cap);
        cr_assert_not_null(all, "seed %llu: space lost after freeing everything",
                           (unsigned long long)seed);
        pm_svc_pages_destroy(pg);
        (void)refused;
    }
}

/* pm_svc_pages_room is exactly how far a block grows in place: to it the
 * block stays, one grain more and it moves (or is refused), among random
 * blocks and free space. */
Test(pages, room_is_how_far_a_block_grows_in_place) {
    for (uint64_t seed = 1; seed <= 8; seed++) {
        pm_rng g;
        pm_rng_seed(&g, seed);
        size_t cap = 4 * MIB;
        pm_svc_pages *pg = pm_svc_pages_create(cap);
        cr_assert_not_null(pg);
        live l[64];
        size_t nl = 0, checked = 0;
        for (int step = 0; step < 2000; step++) {
            uint32_t op = (uint32_t)pm_rng_u64(&g) % 8;
            size_t n = (size_t)(uint32_t)pm_rng_u64(&g) % (1u << ((uint32_t)pm_rng_u64(&g) % 17));
            if (op < 4 && nl < 64) {
                unsigned char *p = pm_svc_pages_alloc(pg, n);
                if (!p) continue;
                l[nl] = (live){p, n, (unsigned char)(step | 1)};
                memset(p, l[nl].fill, n);
                nl++;
            } else if (op < 7 && nl) {
                size_t i = (uint32_t)pm_rng_u64(&g) % nl;
                pm_svc_pages_free(pg, l[i].p, l[i].n);
                l[i] = l[--nl];
            } else if (nl) {
                size_t i = (uint32_t)pm_rng_u64(&g) % nl;
                unsigned char *p = l[i].p;
                size_t r = pm_svc_pages_room(pg, p, l[i].n);
                cr_assert_geq(r, pm_svc_pages_block(l[i].n));
                cr_assert_leq(r, cap);
                if (r - l[i].n > MIB) continue;   /* the top: grown there below */
                cr_assert_eq(pm_svc_pages_realloc(pg, p, l[i].n, r), p, "seed %llu step %d: in place",
                             (unsigned long long)seed, step);
                memset(p + l[i].n, l[i].fill, r - l[i].n);
                l[i].n = r;
                unsigned char *q = pm_svc_pages_realloc(pg, p, r, r + 1);
                cr_assert_neq(q, p, "seed %llu step %d: one byte more stays in place",
                              (unsigned long long)seed, step);
                if (q) l[i].p = q, l[i].n = r + 1, q[r] = l[i].fill;
                checked++;
            }
            if (step % 16 == 0) check(l, nl);
        }
        check(l, nl);
        cr_assert_gt(checked, 50);
        pm_svc_pages_destroy(pg);
    }
}

static void *plain_realloc(void *ctx, void *p, size_t old_size, size_t n) {
    (void)ctx, (void)old_size;
    return realloc(p, n);
}
static void plain_free(void *ctx, void *p, size_t size) {
    (void)ctx, (void)size;
    free(p);
}
static size_t room_not_known(void *ctx, const void *p, size_t size) {
    (void)ctx, (void)p, (void)size;
    return 0;
}

/* Text of the offsets where it stands ("0,2,4,6,8,10,13,..."), n bytes or
 * a few more, through w; whether it reads back whole. */
static bool offsets_text(pm_api__w *w, size_t n) {
    char line[64];
    while (w->len < n) {
        int k = snprintf(line, sizeof line, "%zu,", w->len);
        pm_api__w_raw(w, line, (size_t)k);
        if (w->oom) return false;
    }
    for (size_t at = 0; at < w->len;) {
        int k = snprintf(line, sizeof line, "%zu,", at);
        if (memcmp(w->data + at, line, (size_t)k) != 0) return false;
        at += (size_t)k;
    }
    return true;
}

/* An allocator that cannot tell the room (0) grows the output as ever. */
Test(pages, an_output_whose_room_is_not_known_doubles) {
    pm_api_alloc al = {plain_realloc, plain_free, NULL, room_not_known};
    pm_api__w w;
    pm_api__w_init_al(&w, 256, &al);
    cr_assert(offsets_text(&w, 3 * MIB));
    cr_assert_geq(w.cap, w.len);
    cr_assert_eq(w.cap & (w.cap - 1), 0, "doubled from 256: %zu", w.cap);
    pm_api__w_free(&w);
}

/* A growing output (the encoder's writer) takes the free space after it
 * before it moves: a buffer that doubles would leave a 3 MiB gap for a
 * 4 MiB block at the top. */
Test(pages, the_output_grows_into_free_space_before_it_moves) {
    for (int with_room = 0; with_room < 2; with_room++) {
        pm_svc_pages *pg = pm_svc_pages_create(32 * MIB);
        cr_assert_not_null(pg);
        unsigned char *gap = pm_svc_pages_alloc(pg, 3 * MIB), *above = pm_svc_pages_alloc(pg, 100);
        cr_assert(gap && above);
        pm_svc_pages_free(pg, gap, 3 * MIB);
        size_t high = pm_svc_pages_used(pg);
        pm_api_alloc al = pm_svc_pages_output(pg);
        if (!with_room) al.room = NULL;
        pm_api__w w;
        pm_api__w_init_al(&w, 256, &al);
        cr_assert_eq((unsigned char *)w.data, gap, "the lowest free space first");
        cr_assert(offsets_text(&w, (size_t)5 * MIB / 2), "the text whole either way");
        if (with_room) {
            cr_assert_eq((unsigned char *)w.data, gap, "grown in place");
            cr_assert_eq(pm_svc_pages_used(pg), high, "no fresh space");
            cr_assert_leq(w.cap, 3 * MIB);
        } else {
            cr_assert_gt(pm_svc_pages_used(pg), high + 3 * MIB, "doubled past the gap");
        }
        pm_api__w_free(&w);
        pm_svc_pages_destroy(pg);
    }
}

/* The same random requests of an arena on malloc and of one on the pool
 * (too small for all of it: the rest from malloc) under the same limit:
 * the same answers, the same bytes reserved at every step. */
Test(pages, an_arena_on_the_pool_accounts_as_one_on_malloc) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        pm_svc_pages *pg = pm_svc_pages_create(4 * MIB);
        cr_assert_not_null(pg);
        pm_arena_allocator al = pm_svc_pages_arena(pg);
        pm_arena *a = pm_arena_create(0);
        pm_arena *b = pm_arena_create_with(0, &al);
        size_t limit = (size_t)(seed + 2) * 3 * MIB;
        pm_arena_set_limit(a, limit);
        pm_arena_set_limit(b, limit);
        pm_rng g;
        pm_rng_seed(&g, seed);
        struct { unsigned char *pa, *pb; size_t n; } v[32] = {0};
        for (int step = 0; step < 2000; step++) {
            uint32_t op = (uint32_t)pm_rng_u64(&g) % 8, i = (uint32_t)pm_rng_u64(&g) % 32;
            size_t n = (size_t)(uint32_t)pm_rng_u64(&g) % (1u << ((uint32_t)pm_rng_u64(&g) % 22));
            if (op < 5) {   /* grow (or start) vector i */
                size_t m = v[i].n + n;
                unsigned char *pa = pm_arena_realloc(a, v[i].pa, v[i].n, m);
                unsigned char *pb = pm_arena_realloc(b, v[i].pb, v[i].n, m);
                cr_assert_eq(pa == NULL, pb == NULL, "seed %llu step %d: answers differ",
                             (unsigned long long)seed, step);
                if (pa) {
                    memset(pa + v[i].n, (int)i, m - v[i].n);
                    memset(pb + v[i].n, (int)i, m - v[i].n);
                    v[i].pa = pa, v[i].pb = pb, v[i].n = m;
                }
            } else if (op < 7) {
                pm_arena_free(a, v[i].pa, v[i].n);
                pm_arena_free(b, v[i].pb, v[i].n);
                v[i].pa = v[i].pb = NULL, v[i].n = 0;
            } else {
                cr_assert_eq(pm_arena_alloc(a, n) == NULL, pm_arena_alloc(b, n) == NULL);
            }
            cr_assert_eq(pm_arena_reserved(a), pm_arena_reserved(b), "seed %llu step %d",
                         (unsigned long long)seed, step);
        }
        for (int i = 0; i < 32; i++)
            cr_assert(v[i].n == 0 || memcmp(v[i].pa, v[i].pb, v[i].n) == 0);
        cr_assert_gt(pm_svc_pages_used(pg), 0, "the pool was used");
        pm_arena_destroy(a);
        pm_arena_destroy(b);
        pm_svc_pages_destroy(pg);
    }
}

Test(pages, the_process_pool_maps_address_space_only) {
    pm_svc_pages *pg = pm_svc_pages_create_for_process();
    if (pm_svc_pages_strict_commit("/proc/sys/vm/overcommit_memory")) {
        cr_assert_null(pg, "no reservation under strict commit accounting");
        return;
    }
    cr_assert_not_null(pg);
    cr_assert_geq(pm_svc_pages_reserved(pg), 64 * MIB);
    cr_assert_eq(pm_svc_pages_used(pg), 0);
    pm_api_alloc out = pm_svc_pages_output(pg);
    char *p = out.realloc(out.ctx, NULL, 0, 5 * MIB);
    cr_assert(p && pm_svc_pages_owns(pg, p));
    memset(p, 1, 5 * MIB);
    p = out.realloc(out.ctx, p, 5 * MIB, 40 * MIB);
    cr_assert(p && p[5 * MIB - 1] == 1);
    out.free(out.ctx, p, 40 * MIB);
    pm_svc_pages_destroy(pg);
}

static int strict_of(const char *text) {
    char path[] = "/tmp/pm_overcommit_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    int r = pm_svc_pages_strict_commit(path);
    unlink(path);
    return r;
}

/* Strict commit accounting (vm.overcommit_memory 2) ignores MAP_NORESERVE:
 * the process pool must not reserve there. */
Test(pages, strict_commit_accounting_is_recognised) {
    cr_assert_eq(strict_of("2\n"), 1);
    cr_assert_eq(strict_of("0\n"), 0);
    cr_assert_eq(strict_of("1\n"), 0);
    cr_assert_eq(strict_of(""), 0);
    cr_assert_eq(pm_svc_pages_strict_commit("/nonexistent/overcommit_memory"), 0);
    /* This host's own answer agrees with the pool the process gets. */
    pm_svc_pages *pg = pm_svc_pages_create_for_process();
    cr_assert_eq(pg == NULL, pm_svc_pages_strict_commit("/proc/sys/vm/overcommit_memory") == 1);
    pm_svc_pages_destroy(pg);
}

/* A child arena on the pool (pm_arena_create_child, a network's road
 * copies): destroyed, its blocks are one free space in the pool, and the
 * parent's next big allocation (the overlap check's arrays) takes it
 * instead of fresh pages: the pool's high-water mark does not move. Its
 * accounting is the one on malloc. */
Test(pages, a_childs_space_takes_the_parents_next_big_allocation) {
    pm_svc_pages *pg = pm_svc_pages_create(64 * MIB);
    cr_assert_not_null(pg);
    pm_arena_allocator al = pm_svc_pages_arena(pg);
    pm_arena *a = pm_arena_create_with(0, &al), *m = pm_arena_create(0);
    for (int i = 0; i < 40; i++) cr_assert(pm_arena_alloc(a, 3000) && pm_arena_alloc(m, 3000));
    pm_arena *k = pm_arena_create_child(a), *km = pm_arena_create_child(m);
    cr_assert(k && km);
    for (int i = 0; i < 300; i++) {
        unsigned char *p = pm_arena_alloc(k, 30000), *q = pm_arena_alloc(km, 30000);
        cr_assert(p && q);
        memset(p, 1, 30000);
        cr_assert_eq(pm_arena_reserved(a), pm_arena_reserved(m));
    }
    unsigned char *scene = pm_arena_alloc(a, 3 * MIB);   /* above the child, held */
    cr_assert(scene && pm_arena_alloc(m, 3 * MIB));
    pm_arena_destroy(k);
    pm_arena_destroy(km);
    cr_assert_eq(pm_arena_reserved(a), pm_arena_reserved(m));
    size_t high = pm_svc_pages_used(pg);
    unsigned char *big = pm_arena_alloc(a, 5 * MIB);
    cr_assert(big && pm_arena_alloc(m, 5 * MIB));
    memset(big, 2, 5 * MIB);
    cr_assert_eq(pm_svc_pages_used(pg), high, "the big allocation lies in the child's space");
    cr_assert(big < scene, "below the scene");
    cr_assert_eq(pm_arena_reserved(a), pm_arena_reserved(m));
    pm_arena_destroy(a);
    pm_arena_destroy(m);
    pm_svc_pages_destroy(pg);
}
