#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MAP_NORESERVE, MADV_HUGEPAGE */
#include "pages.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define PM_SVC__HUGE ((size_t)2 << 20)

/* Free space is kept as extents sorted by address, merged with their
 * neighbours, none ending at top (that space simply lowers top). A job
 * holds a few hundred blocks at most; past PM_SVC__EXTENTS free extents a
 * freed block's space is forgotten until the pool goes (never wrong, only
 * wasted). */
#define PM_SVC__EXTENTS 1024

typedef struct pm_svc__extent { size_t off, len; } pm_svc__extent;

struct pm_svc_pages {
    unsigned char *base;       /* 2 MiB-aligned */
    size_t cap;                /* bytes mapped at base */
    size_t top;                /* bytes below it handed out at least once */
    size_t high;               /* the highest top so far */
    size_t nfree;
    pm_svc__extent free[PM_SVC__EXTENTS];
};

static size_t pm_svc__round(size_t n) {
    return (n ? n + PM_SVC_PAGES_GRAIN - 1 : PM_SVC_PAGES_GRAIN) & ~(PM_SVC_PAGES_GRAIN - 1);
}

pm_svc_pages *pm_svc_pages_create(size_t reserve) {
    if (reserve == 0 || reserve > SIZE_MAX / 2) return NULL;
    size_t cap = (reserve + PM_SVC__HUGE - 1) & ~(PM_SVC__HUGE - 1);
    pm_svc_pages *pg = malloc(sizeof *pg);
    if (!pg) return NULL;
    /* One huge page more than asked, so the part kept can start on a
     * 2 MiB boundary: THP backs only whole aligned 2 MiB ranges. */
    size_t span = cap + PM_SVC__HUGE;
    unsigned char *m = mmap(NULL, span, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        free(pg);
        return NULL;
    }
    unsigned char *base = (unsigned char *)(((uintptr_t)m + PM_SVC__HUGE - 1) & ~(uintptr_t)(PM_SVC__HUGE - 1));
    if (base > m) munmap(m, (size_t)(base - m));
    size_t tail = span - (size_t)(base - m) - cap;
    if (tail) munmap(base + cap, tail);
#ifdef MADV_HUGEPAGE
    /* Advice only: refused (THP "never", an old kernel), the pages are
     * 4 KiB ones, as malloc's are. */
    (void)madvise(base, cap, MADV_HUGEPAGE);
#endif
    pg->base = base;
    pg->cap = cap;
    pg->top = pg->high = 0;
    pg->nfree = 0;
    return pg;
}

void pm_svc_pages_destroy(pm_svc_pages *pg) {
    if (!pg) return;
    munmap(pg->base, pg->cap);
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
    return off;
}

static void pm_svc__drop(pm_svc_pages *pg, size_t i) {
    memmove(&pg->free[i], &pg->free[i + 1], (pg->nfree - i - 1) * sizeof pg->free[0]);
    pg->nfree--;
}

/* Marks [off, off + len) free: merged with the extents beside it, or
 * lowering top when it ends there. */
static void pm_svc__release(pm_svc_pages *pg, size_t off, size_t len) {
    size_t i = 0;
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
        pm_svc__drop(pg, i);
    }
    if (i < pg->nfree && off + len == pg->free[i].off) {
        len += pg->free[i].len;
        pm_svc__drop(pg, i);
    }
    if (off + len == pg->top) {
        pg->top = off;
        return;
    }
    if (pg->nfree == PM_SVC__EXTENTS) return;   /* forgotten: see PM_SVC__EXTENTS */
    memmove(&pg->free[i + 1], &pg->free[i], (pg->nfree - i) * sizeof pg->free[0]);
    pg->free[i] = (pm_svc__extent){off, len};
    pg->nfree++;
}

void *pm_svc_pages_alloc(pm_svc_pages *pg, size_t n) {
    if (n > SIZE_MAX - PM_SVC_PAGES_GRAIN) return NULL;
    size_t r = pm_svc__round(n);
    for (size_t i = 0; i < pg->nfree; i++) {
        pm_svc__extent *e = &pg->free[i];
        if (e->len < r) continue;
        size_t off = e->off;
        e->off += r;
        e->len -= r;
        if (!e->len) pm_svc__drop(pg, i);
        return pg->base + off;
    }
    size_t off = pm_svc__bump(pg, r);
    return off == SIZE_MAX ? NULL : pg->base + off;
}

void pm_svc_pages_free(pm_svc_pages *pg, void *p, size_t size) {
    if (!p) return;
    assert(pm_svc_pages_owns(pg, p));
    pm_svc__release(pg, (size_t)((unsigned char *)p - pg->base), pm_svc__round(size));
}

/* Grows the block at off from ro to rn bytes where it lies; 0 when the
 * space after it is not free. */
static int pm_svc__grow_in_place(pm_svc_pages *pg, size_t off, size_t ro, size_t rn) {
    size_t end = off + ro, more = rn - ro;
    if (end == pg->top) return pm_svc__bump(pg, more) != SIZE_MAX;
    size_t i = 0;
    while (i < pg->nfree && pg->free[i].off < end) i++;
    if (i == pg->nfree || pg->free[i].off != end || pg->free[i].len < more) return 0;
    pg->free[i].off += more;
    pg->free[i].len -= more;
    if (!pg->free[i].len) pm_svc__drop(pg, i);
    return 1;
}

void *pm_svc_pages_realloc(pm_svc_pages *pg, void *p, size_t old_size, size_t n) {
    if (!p) return pm_svc_pages_alloc(pg, n);
    if (n > SIZE_MAX - PM_SVC_PAGES_GRAIN) return NULL;
    size_t off = (size_t)((unsigned char *)p - pg->base);
    size_t ro = pm_svc__round(old_size), rn = pm_svc__round(n);
    if (rn <= ro) {
        if (rn < ro) pm_svc__release(pg, off + rn, ro - rn);
        return p;
    }
    if (pm_svc__grow_in_place(pg, off, ro, rn)) return p;
    void *q = pm_svc_pages_alloc(pg, n);
    if (!q) return NULL;
    memcpy(q, p, old_size);
    pm_svc_pages_free(pg, p, old_size);
    return q;
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

pm_api_alloc pm_svc_pages_output(pm_svc_pages *pg) {
    return (pm_api_alloc){pm_svc_pages_arena_realloc, pm_svc__any_free, pg};
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
