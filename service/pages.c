#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MAP_NORESERVE, MADV_HUGEPAGE */
#include "pages.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define PM_SVC__HUGE ((size_t)2 << 20)

/* Free space is kept as extents sorted by address, merged with their
 * neighbours, none ending at top (that space simply lowers top). A job
 * holds a few hundred blocks at most; a server's pool also holds cached
 * answers, so the list grows past PM_SVC__EXTENTS when it must; only when
 * it cannot (out of memory) is a freed block's space forgotten until the
 * pool is empty again (never wrong, only wasted; its pages go back to the
 * system at once). */
#define PM_SVC__EXTENTS 1024

/* dirty: an upper bound on the bytes of the extent's whole pages (those
 * no block shares) that may be resident, touched since they were last
 * given back; where in the extent they lie is not known, so taking bytes
 * from its front leaves min(dirty, the whole pages left). */
typedef struct pm_svc__extent { size_t off, len, dirty; } pm_svc__extent;

struct pm_svc_pages {
    unsigned char *base;       /* 2 MiB-aligned */
    size_t cap;                /* bytes mapped at base */
    size_t top;                /* bytes below it handed out at least once */
    size_t high;               /* the highest top so far */
    size_t touched;            /* the highest top since the last trim */
    size_t live;               /* bytes held (rounded sizes) */
    size_t lost;               /* may be resident in forgotten space's pages */
    size_t nfree, maxfree;
    pm_svc__extent *free;
};

static size_t pm_svc__round(size_t n) {
    return (n ? n + PM_SVC_PAGES_GRAIN - 1 : PM_SVC_PAGES_GRAIN) & ~(PM_SVC_PAGES_GRAIN - 1);
}

pm_svc_pages *pm_svc_pages_create(size_t reserve) {
    if (reserve == 0 || reserve > SIZE_MAX / 2) return NULL;
    size_t cap = (reserve + PM_SVC__HUGE - 1) & ~(PM_SVC__HUGE - 1);
    pm_svc_pages *pg = malloc(sizeof *pg);
    pm_svc__extent *ext = malloc(PM_SVC__EXTENTS * sizeof *ext);
    if (!pg || !ext) {
        free(pg);
        free(ext);
        return NULL;
    }
    /* One huge page more than asked, so the part kept can start on a
     * 2 MiB boundary: THP backs only whole aligned 2 MiB ranges. */
    size_t span = cap + PM_SVC__HUGE;
    unsigned char *m = mmap(NULL, span, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        free(pg);
        free(ext);
        return NULL;
    }
    unsigned char *base = (unsigned char *)(((uintptr_t)m + PM_SVC__HUGE - 1) & ~(uintptr_t)(PM_SVC__HUGE - 1));
    if (base > m) munmap(m, (size_t)(base - m));
    size_t tail = span - (size_t)(base - m) - cap;
    if (tail) munmap(base + cap, tail);
#ifdef MADV_HUGEPAGE
    /* Advice only: refused (THP "never", an old kernel), the pages are
     * 4 KiB ones, as malloc's are. A huge page touched for a few bytes is
     * zeroed whole, yet for a network it still costs far less than 4 KiB
     * pages: the 40x40 town turned 30 degrees, 30 runs under perf
     * cpu-clock, took 16.5k samples with 26.8% in the kernel (485 page
     * faults, 50 MB max RSS) on huge pages and 26.2k samples with 47% in
     * the kernel (9,900 faults, 43 MB) with the pool advised
     * MADV_NOHUGEPAGE (session 13). */
    (void)madvise(base, cap, MADV_HUGEPAGE);
#endif
    pg->base = base;
    pg->cap = cap;
    pg->top = pg->high = pg->touched = pg->live = pg->lost = 0;
    pg->nfree = 0;
    pg->maxfree = PM_SVC__EXTENTS;
    pg->free = ext;
    return pg;
}

void pm_svc_pages_small(pm_svc_pages *pg) {
#ifdef MADV_NOHUGEPAGE
    (void)madvise(pg->base, pg->cap, MADV_NOHUGEPAGE);
#endif
}

void pm_svc_pages_destroy(pm_svc_pages *pg) {
    if (!pg) return;
    munmap(pg->base, pg->cap);
    free(pg->free);
    free(pg);
}

int pm_svc_pages_owns(const pm_svc_pages *pg, const void *p) {
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)pg->base;
    return a >= b && a - b < pg->cap;
}

size_t pm_svc_pages_used(const pm_svc_pages *pg) { return pg->high; }
size_t pm_svc_pages_reserved(const pm_svc_pages *pg) { return pg->cap; }

/* Fresh space of r bytes at top, or SIZE_MAX. */
static size_t pm_svc__bump(pm_svc_pages *pg, size_t r) {
    if (r > pg->cap - pg->top) return SIZE_MAX;
    size_t off = pg->top;
    pg->top += r;
    if (pg->top > pg->high) pg->high = pg->top;
    if (pg->top > pg->touched) pg->touched = pg->top;
    return off;
}

static size_t pm_svc__page(void) {
    static size_t page;
    if (!page) {
        long n = sysconf(_SC_PAGESIZE);
        page = n > 0 ? (size_t)n : 4096;
    }
    return page;
}

static size_t pm_svc__page_up(size_t n) {
    size_t ps = pm_svc__page();
    return (n + ps - 1) & ~(ps - 1);
}

/* Bytes of the whole pages inside [off, off + len), and of the pages it
 * touches at all. */
static size_t pm_svc__inner(size_t off, size_t len) {
    size_t a = pm_svc__page_up(off), b = (off + len) & ~(pm_svc__page() - 1);
    return b > a ? b - a : 0;
}
static size_t pm_svc__span(size_t off, size_t len) {
    return pm_svc__page_up(off + len) - (off & ~(pm_svc__page() - 1));
}

/* Gives the whole pages inside [off, off + len), free space, back to the
 * system. Returns 0 when it did. */
static int pm_svc__discard(pm_svc_pages *pg, size_t off, size_t len) {
    size_t a = pm_svc__page_up(off), n = pm_svc__inner(off, len);
    return n ? madvise(pg->base + a, n, MADV_DONTNEED) : 0;
}

static void pm_svc__drop(pm_svc_pages *pg, size_t i) {
    memmove(&pg->free[i], &pg->free[i + 1], (pg->nfree - i - 1) * sizeof pg->free[0]);
    pg->nfree--;
}

/* Marks [off, off + len) free: merged with the extents beside it, or
 * lowering top when it ends there. */
static void pm_svc__release(pm_svc_pages *pg, size_t off, size_t len) {
    size_t i = 0, dirty = pm_svc__span(off, len);   /* the pages it was written to */
    while (i < pg->nfree && pg->free[i].off < off) i++;
    /* Never freed twice, never overlapping free space (the caller's
     * contract). */
    assert(i == 0 || pg->free[i - 1].off + pg->free[i - 1].len <= off);
    assert(i == pg->nfree || off + len <= pg->free[i].off);
    assert(off + len <= pg->top);
    if (i > 0 && pg->free[i - 1].off + pg->free[i - 1].len == off) {
        i--;
        off = pg->free[i].off;
        len += pg->free[i].len;
        dirty += pg->free[i].dirty;
        pm_svc__drop(pg, i);
    }
    if (i < pg->nfree && off + len == pg->free[i].off) {
        len += pg->free[i].len;
        dirty += pg->free[i].dirty;
        pm_svc__drop(pg, i);
    }
    if (off + len == pg->top) {
        pg->top = off;   /* [top, touched) counts as resident */
        return;
    }
    if (dirty > pm_svc__inner(off, len)) dirty = pm_svc__inner(off, len);
    if (pg->nfree == pg->maxfree) {
        pm_svc__extent *more = pg->maxfree <= SIZE_MAX / 2 / sizeof *more
                                   ? realloc(pg->free, 2 * pg->maxfree * sizeof *more) : NULL;
        if (!more) {   /* forgotten: see PM_SVC__EXTENTS */
            if (pm_svc__discard(pg, off, len) != 0) pg->lost += dirty;
            return;
        }
        pg->free = more;
        pg->maxfree *= 2;
    }
    memmove(&pg->free[i + 1], &pg->free[i], (pg->nfree - i) * sizeof pg->free[0]);
    pg->free[i] = (pm_svc__extent){off, len, dirty};
    pg->nfree++;
}

/* Takes r bytes from the front of free extent i. */
static size_t pm_svc__take(pm_svc_pages *pg, size_t i, size_t r) {
    pm_svc__extent *e = &pg->free[i];
    size_t off = e->off;
    e->off += r;
    e->len -= r;
    if (e->dirty > pm_svc__inner(e->off, e->len)) e->dirty = pm_svc__inner(e->off, e->len);
    if (!e->len) pm_svc__drop(pg, i);
    return off;
}

/* Called after every change of live: an empty pool starts again from its
 * base, forgotten space included (all of it below touched). */
static void pm_svc__settle(pm_svc_pages *pg) {
    if (pg->live) return;
    pg->top = 0;
    pg->nfree = 0;
    pg->lost = 0;
}

void *pm_svc_pages_alloc(pm_svc_pages *pg, size_t n) {
    if (n > SIZE_MAX - PM_SVC_PAGES_GRAIN) return NULL;
    size_t r = pm_svc__round(n);
    for (size_t i = 0; i < pg->nfree; i++) {
        if (pg->free[i].len < r) continue;
        pg->live += r;
        return pg->base + pm_svc__take(pg, i, r);
    }
    size_t off = pm_svc__bump(pg, r);
    if (off == SIZE_MAX) return NULL;
    pg->live += r;
    return pg->base + off;
}

void pm_svc_pages_free(pm_svc_pages *pg, void *p, size_t size) {
    if (!p) return;
    assert(pm_svc_pages_owns(pg, p));
    size_t r = pm_svc__round(size);
    assert(r <= pg->live);
    pm_svc__release(pg, (size_t)((unsigned char *)p - pg->base), r);
    pg->live -= r;
    pm_svc__settle(pg);
}

/* Grows the block at off from ro to rn bytes where it lies; 0 when the
 * space after it is not free. */
static int pm_svc__grow_in_place(pm_svc_pages *pg, size_t off, size_t ro, size_t rn) {
    size_t end = off + ro, more = rn - ro;
    if (end == pg->top) return pm_svc__bump(pg, more) != SIZE_MAX;   /* live: the caller's */
    size_t i = 0;
    while (i < pg->nfree && pg->free[i].off < end) i++;
    if (i == pg->nfree || pg->free[i].off != end || pg->free[i].len < more) return 0;
    pm_svc__take(pg, i, more);
    return 1;
}

void *pm_svc_pages_realloc(pm_svc_pages *pg, void *p, size_t old_size, size_t n) {
    if (!p) return pm_svc_pages_alloc(pg, n);
    if (n > SIZE_MAX - PM_SVC_PAGES_GRAIN) return NULL;
    size_t off = (size_t)((unsigned char *)p - pg->base);
    size_t ro = pm_svc__round(old_size), rn = pm_svc__round(n);
    if (rn <= ro) {
        if (rn < ro) {
            pm_svc__release(pg, off + rn, ro - rn);
            pg->live -= ro - rn;
        }
        return p;
    }
    if (pm_svc__grow_in_place(pg, off, ro, rn)) {
        pg->live += rn - ro;
        return p;
    }
    void *q = pm_svc_pages_alloc(pg, n);
    if (!q) return NULL;
    memcpy(q, p, old_size);
    pm_svc_pages_free(pg, p, old_size);
    return q;
}

size_t pm_svc_pages_room(const pm_svc_pages *pg, const void *p, size_t size) {
    size_t off = (size_t)((const unsigned char *)p - pg->base), end = off + pm_svc__round(size);
    if (end == pg->top) return pg->cap - off;
    size_t i = 0;
    while (i < pg->nfree && pg->free[i].off < end) i++;
    return end - off + (i < pg->nfree && pg->free[i].off == end ? pg->free[i].len : 0);
}

size_t pm_svc_pages_held(const pm_svc_pages *pg) { return pg->live; }

/* The whole pages above top that may be resident. */
static size_t pm_svc__above(const pm_svc_pages *pg) {
    size_t a = pm_svc__page_up(pg->top), b = pm_svc__page_up(pg->touched);
    return b > a ? b - a : 0;
}

size_t pm_svc_pages_retained(const pm_svc_pages *pg) {
    size_t n = pg->lost + pm_svc__above(pg);
    for (size_t i = 0; i < pg->nfree; i++) n += pg->free[i].dirty;
    return n;
}

size_t pm_svc_pages_trim(pm_svc_pages *pg, size_t keep) {
    size_t have = pm_svc_pages_retained(pg);
    if (have <= keep) return have;
    size_t excess = have - keep, above = pm_svc__above(pg);
    /* The highest space first: the lowest is what the next blocks take. */
    if (above) {
        size_t end = pm_svc__page_up(pg->touched);
        size_t from = excess < above ? end - pm_svc__page_up(excess) : end - above;
        if (from < pm_svc__page_up(pg->top)) from = pm_svc__page_up(pg->top);
        /* To the end of its huge page: a huge page split by the advice
         * would keep its tail resident. */
        size_t to = (pg->touched + PM_SVC__HUGE - 1) & ~(PM_SVC__HUGE - 1);
        if (from < end && madvise(pg->base + from, to - from, MADV_DONTNEED) == 0) {
            excess -= excess < end - from ? excess : end - from;
            pg->touched = from > pg->top ? from : pg->top;
        }
    }
    for (size_t i = pg->nfree; i-- > 0 && excess;) {
        pm_svc__extent *e = &pg->free[i];
        if (!e->dirty || pm_svc__discard(pg, e->off, e->len) != 0) continue;
        excess -= excess < e->dirty ? excess : e->dirty;
        e->dirty = 0;
    }
    return pm_svc_pages_retained(pg);
}

/* ---- the allocators, with malloc behind the pool ---- */

void *pm_svc_pages_arena_realloc(void *ctx, void *p, size_t old_size, size_t n) {
    pm_svc_pages *pg = ctx;
    if (!p || pm_svc_pages_owns(pg, p)) {
        void *q = pm_svc_pages_realloc(pg, p, old_size, n);
        if (q) return q;
        q = malloc(n ? n : 1);
        if (q && p) {
            memcpy(q, p, old_size < n ? old_size : n);
            pm_svc_pages_free(pg, p, old_size);
        }
        return q;
    }
    return realloc(p, n ? n : 1);
}

static void *pm_svc__any_alloc(void *ctx, size_t n) { return pm_svc_pages_arena_realloc(ctx, NULL, 0, n); }

static void pm_svc__any_free(void *ctx, void *p, size_t size) {
    pm_svc_pages *pg = ctx;
    if (p && pm_svc_pages_owns(pg, p)) pm_svc_pages_free(pg, p, size);
    else free(p);
}

pm_arena_allocator pm_svc_pages_arena(pm_svc_pages *pg) {
    return (pm_arena_allocator){pm_svc__any_alloc, pm_svc__any_free, pg, pm_svc_pages_arena_realloc};
}

static size_t pm_svc__any_room(void *ctx, const void *p, size_t size) {
    pm_svc_pages *pg = ctx;
    return p && pm_svc_pages_owns(pg, p) ? pm_svc_pages_room(pg, p, size) : 0;
}

pm_api_alloc pm_svc_pages_output(pm_svc_pages *pg) {
    return (pm_api_alloc){pm_svc_pages_arena_realloc, pm_svc__any_free, pg, pm_svc__any_room};
}

int pm_svc_pages_strict_commit(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int mode = fgetc(f);
    fclose(f);
    return mode == '2';
}

pm_svc_pages *pm_svc_pages_create_for_process(void) {
    if (pm_svc_pages_strict_commit("/proc/sys/vm/overcommit_memory")) return NULL;
    size_t want = (size_t)64 << 30;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < want)
        want = (size_t)(rl.rlim_cur / 4);
    for (; want >= ((size_t)64 << 20); want /= 2) {
        pm_svc_pages *pg = pm_svc_pages_create(want);
        if (pg) return pg;
    }
    return NULL;
}
