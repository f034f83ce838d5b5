#include "scene/arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_ARENA_ALIGN 16u

typedef struct pm__block {
    struct pm__block *prev;
    size_t size;         /* the head block's used part is a->bump.cur - its payload */
    bool borrowed;       /* a free region of another block or chunk: not freed itself */
    /* payload follows, aligned */
} pm__block;

/* An allocation of PM__BIG bytes or more has a chunk of its own, so that
 * growing it (a scene's vertex arrays, a long vector) is a realloc, which
 * for large chunks moves pages instead of copying them into fresh memory
 * and leaving the old copy behind: the bytes touched, and with them the
 * page faults, stay about the data's size. */
#define PM__BIG ((size_t)1 << 20)

/* The largest block an arena takes for small allocations (unless one
 * allocation needs more): allocations of PM__BIG and more have chunks of
 * their own, so a block never needs to be bigger, and what a block holds
 * unused (its tail, until the next block retires it to a free region) stays
 * under 1 MiB. */
#define PM__BLOCK_MAX PM__BIG

typedef struct pm__chunk {
    struct pm__chunk *prev, *next;
    size_t size;
    bool dead;           /* given back; its payload is a free region */
    /* payload follows, aligned */
} pm__chunk;

/* Memory given back (pm_arena_free, a realloc that moved, a scratch
 * arena's blocks) is kept as free regions of at least PM__REGION_MIN bytes
 * and used again as blocks, so the bytes an arena touches stay near what
 * it holds at once instead of the sum of all it ever allocated: fresh
 * memory costs a page fault per 4 KiB. Smaller pieces are not worth the
 * bookkeeping. */
#define PM__REGION_MIN ((size_t)4096)
#define PM__BINS 64

typedef struct pm__region {
    struct pm__region *next;
    size_t size;
} pm__region;

struct pm_arena {
    pm__arena_bump bump;     /* first: read by the inline pm_arena_alloc (arena.h) */
    pm__block *head;
    pm__chunk *big;      /* the chunks of big allocations, newest first */
    size_t block_size, block_max;
    size_t reserved, limit;
    pm_arena_allocator al;   /* al.alloc NULL: malloc and free */
    pm__region *bins[PM__BINS];   /* free regions by size class (floor log2) */
    uint64_t binmask;             /* bit k: bins[k] not empty */
};

static size_t pm__align_up(size_t n) { return (n + PM_ARENA_ALIGN - 1) & ~(size_t)(PM_ARENA_ALIGN - 1); }
static size_t pm__header(void) { return pm__align_up(sizeof(pm__block)); }
static unsigned char *pm__payload(pm__block *b) { return (unsigned char *)b + pm__header(); }
static size_t pm__chunk_header(void) { return pm__align_up(sizeof(pm__chunk)); }
static unsigned char *pm__chunk_payload(pm__chunk *c) { return (unsigned char *)c + pm__chunk_header(); }

/* Makes b (NULL: none) the head block with its first used bytes taken. */
static void pm__set_head(pm_arena *a, pm__block *b, size_t used) {
    a->head = b;
    a->bump.cur = b ? pm__payload(b) + used : NULL;
    a->bump.end = b ? pm__payload(b) + b->size : NULL;
}

pm_arena *pm_arena_create(size_t block_size) { return pm_arena_create_with(block_size, NULL); }

pm_arena *pm_arena_create_with(size_t block_size, const pm_arena_allocator *al) {
    pm_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->block_size = block_size ? block_size : 64u * 1024u;
    a->block_max = PM__BLOCK_MAX;
    if (al) a->al = *al;
    return a;
}

static void *pm__block_alloc(pm_arena *a, size_t total) {
    return a->al.alloc ? a->al.alloc(a->al.ctx, total) : malloc(total);
}

static void pm__block_free(pm_arena *a, void *p, size_t total) {
    if (a->al.free) a->al.free(a->al.ctx, p, total);
    else free(p);
}

/* Frees every chunk, dead or alive, to the allocator. */
static void pm__free_chunks(pm_arena *a) {
    for (pm__chunk *c = a->big, *next; c; c = next) {
        next = c->next;
        pm__block_free(a, c, pm__chunk_header() + c->size);
    }
    a->big = NULL;
}

/* Blocks before chunks: a borrowed block may lie in a dead chunk. The
 * chain runs newest first, so a borrowed block is read before the block
 * it lies in is freed. */
void pm_arena_destroy(pm_arena *a) {
    if (!a) return;
    pm__block *b = a->head;
    while (b) {
        pm__block *prev = b->prev;
        if (!b->borrowed) pm__block_free(a, b, pm__header() + b->size);
        b = prev;
    }
    pm__free_chunks(a);
    free(a);
}

static bool pm__within_limit(const pm_arena *a, size_t total);

static void *pm__from_parent(void *ctx, size_t size) { return pm_arena_alloc(ctx, size); }
static void pm__to_parent(void *ctx, void *p, size_t size) { pm_arena_free(ctx, p, size); }

pm_arena *pm_arena_create_scratch(pm_arena *parent) {
    const pm_arena_allocator al = {pm__from_parent, pm__to_parent, parent, NULL};
    pm_arena *a = pm_arena_create_with(0, &al);
    /* Its blocks stay small allocations of the parent, which come from the
     * parent's free regions: the blocks it gives back on reset are used
     * again (a big allocation would be a fresh chunk each time). */
    if (a) a->block_max = PM__BIG - pm__header() - PM_ARENA_ALIGN;
    return a;
}

/* A child's blocks: from its parent's allocator, within the parent's
 * limit and counted in its reserved bytes while held. */
static void *pm__child_alloc(void *ctx, size_t size) {
    pm_arena *parent = ctx;
    if (!pm__within_limit(parent, size)) return NULL;
    void *p = pm__block_alloc(parent, size);
    if (p) parent->reserved += size;
    return p;
}

static void pm__child_free(void *ctx, void *p, size_t size) {
    pm_arena *parent = ctx;
    pm__block_free(parent, p, size);
    parent->reserved -= size;
}

pm_arena *pm_arena_create_child(pm_arena *parent) { return pm_arena_create_child_max(parent, PM__BLOCK_MAX); }

pm_arena *pm_arena_create_child_max(pm_arena *parent, size_t block_max) {
    const pm_arena_allocator al = {pm__child_alloc, pm__child_free, parent, NULL};
    pm_arena *a = pm_arena_create_with(0, &al);
    if (a && block_max < a->block_max) a->block_max = block_max;
    return a;
}

void pm_arena_reset(pm_arena *a) {
    /* Borrowed blocks and free regions lie in the memory freed here or in
     * the block kept: they are simply forgotten. */
    pm__block *keep = NULL;
    for (pm__block *b = a->head, *prev; b; b = prev) {
        prev = b->prev;
        if (b->borrowed) continue;
        if (!keep) keep = b;
        else pm__block_free(a, b, pm__header() + b->size);
    }
    pm__free_chunks(a);
    /* A bin is non-empty exactly when its bit is set: only those need
     * emptying (a scratch arena is reset once per road and side). */
    for (uint64_t m = a->binmask; m; m &= m - 1) a->bins[__builtin_ctzll(m)] = NULL;
    a->binmask = 0;
    if (keep) keep->prev = NULL;
    pm__set_head(a, keep, 0);
    a->reserved = keep ? pm__header() + keep->size : 0;
    a->bump.last = NULL;
}

void pm_arena_set_limit(pm_arena *a, size_t max_bytes) { a->limit = max_bytes; }

size_t pm_arena_reserved(const pm_arena *a) { return a->reserved; }

static int pm__bin(size_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

/* Keeps n bytes at p (16-aligned, unused) as a free region. */
static void pm__region_put(pm_arena *a, void *p, size_t n) {
    if (n < PM__REGION_MIN) return;
    pm__region *r = p;
    int k = pm__bin(n);
    r->size = n;
    r->next = a->bins[k];
    a->bins[k] = r;
    a->binmask |= (uint64_t)1 << k;
}

/* The size classes of regions under 2 * PM__BIG bytes: bit k of a
 * binmask is the class [2^k, 2^(k+1)). Bigger regions can only be big
 * allocations' chunks given back. */
#define PM__BLOCK_BINS (((uint64_t)PM__BIG << 1) - 1)

/* A free region of at least n bytes from the largest class in mask, or
 * NULL. */
static pm__region *pm__region_take_in(pm_arena *a, uint64_t mask, size_t n) {
    if (!mask) return NULL;
    int k = pm__bin(mask);
    pm__region *r = a->bins[k];
    if (r->size < n) return NULL;
    a->bins[k] = r->next;
    if (!r->next) a->binmask &= ~((uint64_t)1 << k);
    return r;
}

/* A free region of at least n bytes for a new block, or NULL: from the
 * largest class (a big region makes a long-lived block), but one of a
 * block's size first, so that a chunk given back (the network's overlap
 * scratch) stays whole for pm_arena_trim to return to the allocator. */
static pm__region *pm__region_take(pm_arena *a, size_t n) {
    pm__region *r = pm__region_take_in(a, a->binmask & PM__BLOCK_BINS, n);
    return r ? r : pm__region_take_in(a, a->binmask, n);
}

/* n bytes (at least PM__REGION_MIN, 16-aligned) from a free region that
 * holds them, the rest kept as a region; NULL when none does. Its own
 * size class first, then the smallest class sure to hold n, so big
 * regions stay whole. */
static void *pm__region_fit(pm_arena *a, size_t n) {
    int k = pm__bin(n);
    uint64_t above = k >= PM__BINS - 1 ? 0 : a->binmask & ~(((uint64_t)2 << k) - 1);
    pm__region **at = NULL;
    if (a->binmask & ((uint64_t)1 << k)) {
        /* Its own class: the closest fit of the first few (a block given
         * back is asked for again at the same size). */
        pm__region **p = &a->bins[k];
        for (int tries = 0; *p && tries < 8; tries++, p = &(*p)->next)
            if ((*p)->size >= n && (!at || (*p)->size < (*at)->size)) at = p;
    }
    if (!at && above) at = &a->bins[__builtin_ctzll(above)];
    if (!at) return NULL;
    pm__region *r = *at;
    int rk = pm__bin(r->size);
    *at = r->next;
    if (!a->bins[rk]) a->binmask &= ~((uint64_t)1 << rk);
    size_t rest = r->size - n;
    if (rest) pm__region_put(a, (unsigned char *)r + n, rest);
    return r;
}

/* The head block's unused tail, when big enough, becomes a free region
 * before another block takes its place. */
static void pm__retire_head(pm_arena *a) {
    pm__block *h = a->head;
    a->bump.last = NULL;   /* no longer extended in place: the tail may be reused */
    if (!h) return;
    size_t used = pm__align_up((size_t)(a->bump.cur - pm__payload(h)));
    if (used < h->size && h->size - used >= PM__REGION_MIN) {
        pm__region_put(a, pm__payload(h) + used, h->size - used);
        a->bump.cur = a->bump.end;
    }
}

static pm__block *pm__new_block(pm_arena *a, size_t need) {
    if (need > SIZE_MAX - pm__header()) return NULL;
    pm__retire_head(a);
    pm__region *r = pm__region_take(a, pm__header() + need);
    if (r) {
        size_t whole = r->size;
        pm__block *b = (pm__block *)r;
        b->prev = a->head;
        b->size = whole - pm__header();
        b->borrowed = true;
        pm__set_head(a, b, 0);
        return b;
    }
    /* Block sizes grow with the arena so many requests take few blocks,
     * up to block_max. They depend on the arena's history only, never on
     * its limit or on its allocator's answers: a block refused at that
     * size is not retried smaller. A retry would make the sizes taken
     * depend on how much room the cap leaves, and then whether a job fits
     * would not be monotonic in the cap: a bigger block granted by a
     * higher cap could leave no room for a later need that a lower cap,
     * with its smaller retried block, had room for. With sizes fixed by
     * the requests alone, the bytes held at each step are the same under
     * any cap, and a job fits exactly when its cap reaches their peak. */
    size_t size = a->block_size;
    if (size < a->reserved / 2) size = a->reserved / 2;
    if (size > a->block_max) size = a->block_max;
    if (size < need) size = need;
    if (size > SIZE_MAX - pm__header()) return NULL;
    size_t total = pm__header() + size;
    if (a->limit && (a->reserved > a->limit || total > a->limit - a->reserved)) return NULL;
    pm__block *b = pm__block_alloc(a, total);
    if (!b) return NULL;
    b->prev = a->head;
    b->size = size;
    b->borrowed = false;
    pm__set_head(a, b, 0);
    a->reserved += total;
    return b;
}

/* Whether total more bytes stay within the limit. */
static bool pm__within_limit(const pm_arena *a, size_t total) {
    return !a->limit || (a->reserved <= a->limit && total <= a->limit - a->reserved);
}

static void *pm__big_alloc(pm_arena *a, size_t n) {
    if (n > SIZE_MAX - pm__chunk_header()) return NULL;
    size_t total = pm__chunk_header() + n;
    if (!pm__within_limit(a, total)) return NULL;
    pm__chunk *c = pm__block_alloc(a, total);
    if (!c) return NULL;
    c->size = n;
    c->dead = false;
    c->prev = NULL;
    c->next = a->big;
    if (a->big) a->big->prev = c;
    a->big = c;
    a->reserved += total;
    return pm__chunk_payload(c);
}

/* The chunk whose payload is p, or NULL when p lives in a block. */
static pm__chunk *pm__big_find(const pm_arena *a, const void *p) {
    for (pm__chunk *c = a->big; c; c = c->next)
        if (!c->dead && pm__chunk_payload(c) == (const unsigned char *)p) return c;
    return NULL;
}

/* Grows chunk c to n bytes: realloc (or what stands in for it), else a
 * new chunk, the copy, and the old one back to the allocator. */
static void *pm__big_grow(pm_arena *a, pm__chunk *c, size_t n) {
    size_t h = pm__chunk_header(), old_total = h + c->size;
    if (n > SIZE_MAX - h) return NULL;
    size_t total = h + n;
    if (!pm__within_limit(a, total - old_total)) return NULL;
    pm__chunk *g;
    if (a->al.alloc && !a->al.grow) {
        g = a->al.alloc(a->al.ctx, total);
        if (!g) return NULL;
        memcpy(g, c, h + c->size);
        pm__block_free(a, c, old_total);
    } else {
        g = a->al.grow ? a->al.grow(a->al.ctx, c, old_total, total) : realloc(c, total);
        if (!g) return NULL;
    }
    g->size = n;
    if (g->prev) g->prev->next = g;
    else a->big = g;
    if (g->next) g->next->prev = g;
    a->reserved += total - old_total;
    return pm__chunk_payload(g);
}

/* Everything but a small allocation that fits the head block (the
 * inline pm_arena_alloc in arena.h), so that the common case (metadata
 * nodes, small arrays: hundreds of thousands per network) takes no call. */
void *pm__arena_alloc_slow(pm_arena *a, size_t size) {
    if (size > SIZE_MAX - PM_ARENA_ALIGN) return NULL;
    size_t n = pm__align_up(size ? size : 1);
    if (n >= PM__BIG) {
        a->bump.last = NULL;
        return pm__big_alloc(a, n);
    }
    if (n >= PM__REGION_MIN && a->binmask) {
        void *r = pm__region_fit(a, n);
        if (r) {
            a->bump.last = NULL;
            return r;
        }
    }
    if (!a->head || (size_t)(a->bump.end - a->bump.cur) < n) {
        if (!pm__new_block(a, n)) return NULL;
    }
    void *p = a->bump.cur;
    a->bump.cur += n;
    a->bump.last = p;
    return p;
}

void *pm_arena_calloc(pm_arena *a, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = pm_arena_alloc(a, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

/* The chunk of p when p is a big allocation (one of old_size bytes can be
 * one only when old_size is big). */
static pm__chunk *pm__pick_chunk(const pm_arena *a, const void *p, size_t old_size) {
    return pm__align_up(old_size) >= PM__BIG ? pm__big_find(a, p) : NULL;
}

void *pm_arena_realloc(pm_arena *a, void *p, size_t old_size, size_t new_size) {
    if (!p) return pm_arena_alloc(a, new_size);
    if (new_size <= old_size) return p;
    if (new_size > SIZE_MAX - PM_ARENA_ALIGN) return NULL;
    pm__chunk *c = pm__pick_chunk(a, p, old_size);
    if (c) return pm__align_up(new_size) <= c->size ? p : pm__big_grow(a, c, pm__align_up(new_size));
    pm__block *b = a->head;
    if (p == a->bump.last && b && new_size <= SIZE_MAX - PM_ARENA_ALIGN) {
        size_t n = pm__align_up(new_size);
        size_t start = (size_t)((unsigned char *)p - pm__payload(b));
        if (n <= b->size - start) {
            a->bump.cur = pm__payload(b) + start + n;
            return p;
        }
    }
    void *q = pm_arena_alloc(a, new_size);
    if (!q) return NULL;
    memcpy(q, p, old_size);
    pm_arena_free(a, p, old_size);
    return q;
}

/* Unlinks chunk c and gives it back: to the caller's allocator, which may
 * grant it again (a budget); with malloc, its pages stay with the arena
 * as a free region (free would unmap them, and the next block would fault
 * fresh ones in). */
static void pm__chunk_give_back(pm_arena *a, pm__chunk *c) {
    if (!a->al.alloc || a->al.grow) {   /* malloc, or what stands in for it */
        c->dead = true;
        pm__region_put(a, pm__chunk_payload(c), c->size);
        return;
    }
    if (c->prev) c->prev->next = c->next;
    else a->big = c->next;
    if (c->next) c->next->prev = c->prev;
    size_t total = pm__chunk_header() + c->size;
    a->reserved -= total;
    pm__block_free(a, c, total);
}

void pm_arena_free(pm_arena *a, void *p, size_t size) {
    if (!p) return;
    pm__chunk *c = pm__pick_chunk(a, p, size);
    if (c) {
        pm__chunk_give_back(a, c);
        return;
    }
    if (p == a->bump.last && a->head) {
        /* The newest allocation: the head block takes it back. */
        a->bump.cur = p;
        a->bump.last = NULL;
        return;
    }
    pm__region_put(a, p, pm__align_up(size ? size : 1));
}

/* Takes the free region at p of n bytes out of its bin; false when there
 * is none (some of its space was taken since, or it was never one). */
static bool pm__region_unput(pm_arena *a, const void *p, size_t n) {
    int k = pm__bin(n);
    for (pm__region **at = &a->bins[k]; *at; at = &(*at)->next) {
        if ((const void *)*at != p || (*at)->size != n) continue;
        *at = (*at)->next;
        if (!a->bins[k]) a->binmask &= ~((uint64_t)1 << k);
        return true;
    }
    return false;
}

size_t pm_arena_trim(pm_arena *a) {
    size_t given = 0;
    for (pm__chunk *c = a->big, *next; c; c = next) {
        next = c->next;
        if (!c->dead || !pm__region_unput(a, pm__chunk_payload(c), c->size)) continue;
        if (c->prev) c->prev->next = c->next;
        else a->big = c->next;
        if (c->next) c->next->prev = c->prev;
        size_t total = pm__chunk_header() + c->size;
        a->reserved -= total;
        given += total;
        pm__block_free(a, c, total);
    }
    return given;
}

int pm__vec_grow(pm_arena *a, void **data, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return -1;
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem) return -1;
    void *p = pm_arena_realloc(a, *data, *cap * elem, ncap * elem);
    if (!p) return -1;
    *data = p;
    *cap = ncap;
    return 0;
}
