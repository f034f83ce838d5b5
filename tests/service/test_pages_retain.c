/* What a long-lived page pool keeps between jobs (service/pages.c's
 * retained count and trim, service/budget.c's accounting of it): the count
 * is never below the free pages the kernel really holds (mincore), a trim
 * gives them back without touching a held block, the free list never
 * forgets space, and a job's meter charges the same bytes at every step
 * whether its blocks come from the pool or from malloc. */
#define _DEFAULT_SOURCE   /* mincore */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "budget.h"
#include "pages.h"
#include "scene/rng.h"

#define MIB ((size_t)1 << 20)

typedef struct blk { unsigned char *p; size_t n; unsigned char fill; } blk;

/* Bytes of the resident pages in [base, base + span) that no held block
 * touches. */
static size_t resident_free(unsigned char *base, size_t span, const blk *l, size_t nl) {
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), pages = (span + ps - 1) / ps, n = 0;
    unsigned char *vec = malloc(pages ? pages : 1);
    cr_assert_eq(mincore(base, pages * ps, vec), 0);
    for (size_t k = 0; k < pages; k++) {
        if (!(vec[k] & 1)) continue;
        unsigned char *a = base + k * ps, *b = a + ps;
        int held = 0;
        for (size_t i = 0; i < nl && !held; i++) {
            unsigned char *e = l[i].p + (l[i].n ? l[i].n : 1);
            held = l[i].p < b && e > a;
        }
        if (!held) n += ps;
    }
    free(vec);
    return n;
}

static void check_blocks(const blk *l, size_t nl) {
    for (size_t i = 0; i < nl; i++)
        for (size_t k = 0; k < l[i].n; k += 61)
            cr_assert_eq(l[i].p[k], l[i].fill, "a held block lost its content");
}

Test(pages_retain, retained_bounds_the_resident_free_pages_and_trim_gives_them_back) {
    for (uint64_t seed = 1; seed <= 8; seed++) {
        size_t cap = 16 * MIB;
        pm_svc_pages *pg = pm_svc_pages_create(cap);
        cr_assert_not_null(pg);
        pm_svc_pages_small(pg);
        unsigned char *base = pm_svc_pages_alloc(pg, 1);
        pm_svc_pages_free(pg, base, 1);
        cr_assert_eq(pm_svc_pages_held(pg), 0);
        pm_rng g;
        pm_rng_seed(&g, seed);
        blk l[48];
        size_t nl = 0;
        int trims = 0;
        for (int step = 0; step < 1500; step++) {
            uint32_t op = (uint32_t)pm_rng_below(&g, 12);
            size_t n = (size_t)pm_rng_below(&g, 1u << (1 + pm_rng_below(&g, 20)));
            if (op < 4 && nl < 48) {
                unsigned char *p = pm_svc_pages_alloc(pg, n);
                if (!p) continue;
                l[nl] = (blk){p, n, (unsigned char)(step | 1)};
                memset(p, l[nl].fill, n);
                nl++;
            } else if (op < 7 && nl) {
                size_t i = pm_rng_below(&g, nl);
                pm_svc_pages_free(pg, l[i].p, l[i].n);
                l[i] = l[--nl];
            } else if (op < 10 && nl) {
                size_t i = pm_rng_below(&g, nl);
                unsigned char *q = pm_svc_pages_realloc(pg, l[i].p, l[i].n, n);
                if (!q) continue;
                if (n > l[i].n) memset(q + l[i].n, l[i].fill, n - l[i].n);
                l[i].p = q, l[i].n = n;
            } else {
                size_t keep = op == 10 ? 0 : pm_rng_below(&g, 4 * MIB);
                size_t after = pm_svc_pages_trim(pg, keep);
                cr_assert_leq(after, keep, "seed %llu step %d: trimmed to %zu, kept %zu",
                              (unsigned long long)seed, step, keep, after);
                cr_assert_eq(after, pm_svc_pages_retained(pg));
                if (keep == 0)
                    cr_assert_eq(resident_free(base, pm_svc_pages_used(pg), l, nl), 0,
                                 "seed %llu step %d: free pages still resident after a full trim",
                                 (unsigned long long)seed, step);
                trims++;
            }
            size_t real = resident_free(base, pm_svc_pages_used(pg), l, nl);
            cr_assert_geq(pm_svc_pages_retained(pg), real,
                          "seed %llu step %d: %zu free bytes resident, %zu counted",
                          (unsigned long long)seed, step, real, pm_svc_pages_retained(pg));
            if (step % 25 == 0) check_blocks(l, nl);
        }
        check_blocks(l, nl);
        cr_assert_gt(trims, 50);
        while (nl) pm_svc_pages_free(pg, l[nl - 1].p, l[nl - 1].n), nl--;
        cr_assert_eq(pm_svc_pages_held(pg), 0);
        cr_assert_geq(pm_svc_pages_retained(pg), resident_free(base, pm_svc_pages_used(pg), l, 0));
        cr_assert_eq(pm_svc_pages_trim(pg, 0), 0);
        cr_assert_eq(resident_free(base, pm_svc_pages_used(pg), l, 0), 0, "all given back");
        pm_svc_pages_destroy(pg);
    }
}

/* Thousands of free extents (a server's pool holds cached answers between
 * jobs' blocks): every one is used again, none forgotten. */
Test(pages_retain, the_free_list_grows_instead_of_forgetting_space) {
    pm_svc_pages *pg = pm_svc_pages_create(8 * MIB);
    cr_assert_not_null(pg);
    enum { N = 5000 };
    unsigned char **p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++) cr_assert_not_null(p[i] = pm_svc_pages_alloc(pg, 300));
    size_t used = pm_svc_pages_used(pg);
    for (int i = 0; i < N; i += 2) pm_svc_pages_free(pg, p[i], 300);   /* 2,500 holes */
    for (int i = 0; i < N; i += 2) {
        unsigned char *q = pm_svc_pages_alloc(pg, 300);
        cr_assert_eq(q, p[i], "hole %d was forgotten", i);
    }
    cr_assert_eq(pm_svc_pages_used(pg), used, "no fresh space");
    for (int i = 0; i < N; i++) pm_svc_pages_free(pg, p[i], 300);
    cr_assert_eq(pm_svc_pages_held(pg), 0);
    cr_assert_eq(pm_svc_pages_alloc(pg, 8 * MIB), p[0], "all of it free again, in one piece");
    free(p);
    pm_svc_pages_destroy(pg);
}

/* ---- the budget's accounting of it ---- */

static pm_svc_budget *pooled_budget(size_t cap, size_t keep) {
    pm_svc_budget *b = pm_svc_budget_create(cap);
    cr_assert_not_null(b);
    cr_assert_eq(pm_svc_budget_use_pages(b, pm_svc_pages_create(256 * MIB), keep), 0);
    return b;
}

/* A job's arena and encoder buffers on the pool: n MiB in blocks of a few
 * sizes, every page written, then all given back. */
static void run_job(pm_svc_budget *b, size_t mib) {
    pm_svc_meter m;
    pm_svc_meter_init(&m, b, 0);
    pm_arena *a = pm_arena_create_with(0, &m.arena);
    for (size_t done = 0; done < mib * MIB;) {
        size_t n = done % (3 * MIB) + 100000;
        unsigned char *p = pm_arena_alloc(a, n);
        cr_assert_not_null(p);
        memset(p, 1, n);
        done += n;
    }
    unsigned char *out = m.enc.realloc(m.enc.ctx, NULL, 0, 2 * MIB);
    cr_assert_not_null(out);
    memset(out, 2, 2 * MIB);
    out = m.enc.realloc(m.enc.ctx, out, 2 * MIB, 5 * MIB);   /* grows, moves or not */
    cr_assert_not_null(out);
    cr_assert_eq(out[2 * MIB - 1], 2);
    memset(out, 3, 5 * MIB);
    out = m.enc.realloc(m.enc.ctx, out, 5 * MIB, 4 * MIB);   /* trimmed to its length */
    m.enc.free(m.enc.ctx, out, 4 * MIB);
    pm_arena_destroy(a);
    cr_assert_eq(m.held, 0);
    pm_svc_meter_end(&m);
}

Test(pages_retain, a_budget_keeps_what_the_cap_has_room_for_and_gives_it_back) {
    pm_svc_budget *b = pooled_budget(64 * MIB, 16 * MIB);
    run_job(b, 40);
    cr_assert_eq(pm_svc_budget_inflight(b), 0, "retained is not in flight");
    size_t kept = pm_svc_budget_retained(b);
    cr_assert_gt(kept, 8 * MIB, "freed pages kept for the next job: %zu", kept);
    cr_assert_leq(kept, 16 * MIB, "at most keep: %zu", kept);
    /* What is retained counts against the cap: a charge that needs it
     * gets it back instead of a refusal. */
    pm_svc_meter big;
    pm_svc_meter_init(&big, b, 0);
    cr_assert_eq(pm_svc_budget_charge(&big, 64 * MIB - kept + MIB), PM_SVC_REFUSED_NONE);
    cr_assert_eq(pm_svc_budget_retained(b), 0, "given back for the charge");
    pm_svc_meter more;
    pm_svc_meter_init(&more, b, 0);
    cr_assert_eq(pm_svc_budget_charge(&more, 64 * MIB - pm_svc_budget_inflight(b) + 1),
                 PM_SVC_REFUSED_INFLIGHT, "the cap still holds");
    pm_svc_meter_end(&more);
    /* Beside 40 MiB held by another, jobs keep no more than the cap has
     * room for. */
    pm_svc_budget_release(&big, big.held - 40 * MIB);
    cr_assert_eq(pm_svc_budget_inflight(b), 40 * MIB);
    for (int i = 0; i < 3; i++) {
        run_job(b, 12);
        cr_assert_eq(pm_svc_budget_inflight(b), 40 * MIB);
        cr_assert_gt(pm_svc_budget_retained(b), 0);
        cr_assert_leq(pm_svc_budget_retained(b), 16 * MIB);
    }
    pm_svc_meter_end(&big);
    /* Idle: everything goes back after PM_SVC_RETAIN_IDLE_MS. */
    run_job(b, 20);
    cr_assert_gt(pm_svc_budget_retained(b), 0);
    for (int i = 0; i < 1000 && pm_svc_budget_retained(b); i++) usleep(10000);   /* up to 10 s */
    cr_assert_eq(pm_svc_budget_retained(b), 0, "given back once idle");
    pm_svc_budget_destroy(b);
}

Test(pages_retain, an_answer_on_the_pool_goes_back_to_it) {
    pm_svc_budget *b = pooled_budget(0, 32 * MIB);
    pm_svc_meter m;
    pm_svc_meter_init(&m, b, 0);
    unsigned char *out = m.enc.realloc(m.enc.ctx, NULL, 0, 3 * MIB);
    cr_assert_not_null(out);
    memset(out, 9, 3 * MIB);
    pm_svc_blob *blob = pm_svc_meter_blob(&m, out, 3 * MIB);
    cr_assert_not_null(blob);
    cr_assert_eq(blob->pages, b, "the blob knows where its bytes came from");
    pm_svc_meter_give(&m, blob, 3 * MIB);
    pm_svc_meter_end(&m);
    cr_assert_eq(pm_svc_budget_inflight(b), 3 * MIB, "the answer is in flight");
    size_t before = pm_svc_budget_retained(b);
    pm_svc_blob_unref(blob);
    cr_assert_eq(pm_svc_budget_inflight(b), 0);
    cr_assert_geq(pm_svc_budget_retained(b), before + 3 * MIB, "its pages are retained");
    /* A malloc'd answer stays malloc's. */
    void *plain = malloc(100);
    pm_svc_blob *p2 = pm_svc_meter_blob(&m, plain, 100);
    cr_assert_null(p2->pages);
    pm_svc_blob_unref(p2);
    pm_svc_budget_destroy(b);
}

/* The same random arena and encoder steps on a meter whose budget has the
 * pool and on one whose budget has none, under the same limits: the same
 * answers, the same bytes held and the same peak at every step. */
Test(pages_retain, a_meter_on_the_pool_charges_as_one_on_malloc) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t cap = (seed + 3) * 4 * MIB, limit = seed % 2 ? 0 : cap / 2;
        pm_svc_budget *bp = pooled_budget(cap, seed % 3 ? 8 * MIB : 0);
        pm_svc_budget *bm = pm_svc_budget_create(cap);
        pm_svc_meter mp, mm;
        pm_svc_meter_init(&mp, bp, limit);
        pm_svc_meter_init(&mm, bm, limit);
        pm_arena *ap = pm_arena_create_with(0, &mp.arena), *am = pm_arena_create_with(0, &mm.arena);
        pm_rng g;
        pm_rng_seed(&g, seed);
        struct { unsigned char *p, *m; size_t n; } v[16] = {0};
        struct { unsigned char *p, *m; size_t n; } w[4] = {0};
        for (int step = 0; step < 1500; step++) {
            uint32_t op = (uint32_t)pm_rng_below(&g, 10), i = (uint32_t)pm_rng_below(&g, 16);
            size_t n = (size_t)pm_rng_below(&g, 1u << (1 + pm_rng_below(&g, 22)));
            if (op < 4) {
                size_t to = v[i].n + n;
                unsigned char *p = pm_arena_realloc(ap, v[i].p, v[i].n, to);
                unsigned char *q = pm_arena_realloc(am, v[i].m, v[i].n, to);
                cr_assert_eq(p == NULL, q == NULL, "seed %llu step %d", (unsigned long long)seed, step);
                if (p) {
                    memset(p + v[i].n, (int)i, to - v[i].n);
                    memset(q + v[i].n, (int)i, to - v[i].n);
                    v[i].p = p, v[i].m = q, v[i].n = to;
                }
            } else if (op < 6) {
                pm_arena_free(ap, v[i].p, v[i].n);
                pm_arena_free(am, v[i].m, v[i].n);
                v[i].p = v[i].m = NULL, v[i].n = 0;
            } else if (op < 9) {   /* an encoder buffer resized (or made) */
                i %= 4;
                unsigned char *p = mp.enc.realloc(mp.enc.ctx, w[i].p, w[i].n, n);
                unsigned char *q = mm.enc.realloc(mm.enc.ctx, w[i].m, w[i].n, n);
                cr_assert_eq(p == NULL, q == NULL, "seed %llu step %d", (unsigned long long)seed, step);
                if (p) {
                    if (n > w[i].n) memset(p + w[i].n, (int)i, n - w[i].n);
                    if (n > w[i].n) memset(q + w[i].n, (int)i, n - w[i].n);
                    w[i].p = p, w[i].m = q, w[i].n = n;
                }
            } else {
                i %= 4;
                if (w[i].p) mp.enc.free(mp.enc.ctx, w[i].p, w[i].n);
                if (w[i].m) mm.enc.free(mm.enc.ctx, w[i].m, w[i].n);
                w[i].p = w[i].m = NULL, w[i].n = 0;
            }
            cr_assert_eq(mp.held, mm.held, "seed %llu step %d", (unsigned long long)seed, step);
            cr_assert_eq(mp.peak, mm.peak, "seed %llu step %d", (unsigned long long)seed, step);
            cr_assert_eq(mp.refused, mm.refused, "seed %llu step %d", (unsigned long long)seed, step);
            cr_assert_eq(pm_arena_reserved(ap), pm_arena_reserved(am));
            cr_assert_eq(pm_svc_budget_inflight(bp), pm_svc_budget_inflight(bm));
        }
        for (int i = 0; i < 16; i++) cr_assert(v[i].n == 0 || memcmp(v[i].p, v[i].m, v[i].n) == 0);
        for (int i = 0; i < 4; i++) {
            cr_assert(w[i].n == 0 || memcmp(w[i].p, w[i].m, w[i].n) == 0);
            if (w[i].p) mp.enc.free(mp.enc.ctx, w[i].p, w[i].n);
            if (w[i].m) mm.enc.free(mm.enc.ctx, w[i].m, w[i].n);
        }
        pm_arena_destroy(ap);
        pm_arena_destroy(am);
        cr_assert_eq(mp.held, 0);
        cr_assert_eq(mm.held, 0);
        pm_svc_meter_end(&mp);
        pm_svc_meter_end(&mm);
        cr_assert_eq(pm_svc_budget_inflight(bp), 0);
        pm_svc_budget_destroy(bp);
        pm_svc_budget_destroy(bm);
    }
}
