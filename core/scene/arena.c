#include "scene/arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_ARENA_ALIGN 16u

typedef struct pm__block {
    struct pm__block *prev;
    size_t size, used;
    /* payload follows, aligned */
} pm__block;

/* An allocation of PM__BIG bytes or more has a chunk of its own, so that
 * growing it (a scene's vertex arrays, a long vector) is a realloc, which
 * for large chunks moves pages instead of copying them into fresh memory
 * and leaving the old copy behind: the bytes touched, and with them the
 * page faults, stay about the data's size. */
#define PM__BIG ((size_t)1 << 20)

/* The largest block an arena takes for small allocations (unless one
 * allocation needs more). */
#define PM__BLOCK_MAX (4 * PM__BIG)

typedef struct pm__chunk {
    struct pm__chunk *prev, *next;
    size_t size;
    /* payload follows, aligned */
} pm__chunk;

struct pm_arena {
    pm__block *head;
    pm__chunk *big;      /* the chunks of big allocations, newest first */
    size_t block_size;
    size_t reserved, limit;
    void *last;          /* last allocation, for in-place realloc */
    size_t last_size;
    pm_arena_allocator al;   /* al.alloc NULL: malloc and free */
};

static size_t pm__align_up(size_t n) { return (n + PM_ARENA_ALIGN - 1) & ~(size_t)(PM_ARENA_ALIGN - 1); }
static size_t pm__header(void) { return pm__align_up(sizeof(pm__block)); }
static unsigned char *pm__payload(pm__block *b) { return (unsigned char *)b + pm__header(); }
static size_t pm__chunk_header(void) { return pm__align_up(sizeof(pm__chunk)); }
static unsigned char *pm__chunk_payload(pm__chunk *c) { return (unsigned char *)c + pm__chunk_header(); }

pm_arena *pm_arena_create(size_t block_size) { return pm_arena_create_with(block_size, NULL); }

pm_arena *pm_arena_create_with(size_t block_size, const pm_arena_allocator *al) {
    pm_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->block_size = block_size ? block_size : 64u * 1024u;
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

void pm_arena_destroy(pm_arena *a) {
    if (!a) return;
    for (pm__chunk *c = a->big, *next; c; c = next) {
        next = c->next;
        pm__block_free(a, c, pm__chunk_header() + c->size);
    }
    pm__block *b = a->head;
    while (b) {
        pm__block *prev = b->prev;
        pm__block_free(a, b, pm__header() + b->size);
        b = prev;
    }
    free(a);
}

static void *pm__from_parent(void *ctx, size_t size) { return pm_arena_alloc(ctx, size); }
static void pm__to_parent(void *ctx, void *p, size_t size) { (void)ctx, (void)p, (void)size; }

pm_arena *pm_arena_create_scratch(pm_arena *parent) {
    const pm_arena_allocator al = {pm__from_parent, pm__to_parent, parent};
    return pm_arena_create_with(0, &al);
}

void pm_arena_reset(pm_arena *a) {
    for (pm__chunk *c = a->big, *next; c; c = next) {
        next = c->next;
        pm__block_free(a, c, pm__chunk_header() + c->size);
    }
    a->big = NULL;
    pm__block *keep = a->head;
    if (keep) {
        for (pm__block *b = keep->prev, *prev; b; b = prev) {
            prev = b->prev;
            pm__block_free(a, b, pm__header() + b->size);
        }
        keep->prev = NULL;
        keep->used = 0;
    }
    a->reserved = keep ? pm__header() + keep->size : 0;
    a->last = NULL;
    a->last_size = 0;
}

void pm_arena_set_limit(pm_arena *a, size_t max_bytes) { a->limit = max_bytes; }

size_t pm_arena_reserved(const pm_arena *a) { return a->reserved; }

static pm__block *pm__new_block(pm_arena *a, size_t need) {
    size_t size = a->block_size;
    /* Grow block sizes with the arena so many requests take few blocks, up
     * to PM__BLOCK_MAX: a block is charged whole to a metered allocator
     * however little of it is used, and one of half a big arena (30 MB for
     * a town network) pushed a job past its budget while it needed far
     * less. Allocations of PM__BIG and more have chunks of their own. */
    if (size < a->reserved / 2) size = a->reserved / 2;
    if (size > PM__BLOCK_MAX) size = PM__BLOCK_MAX;
    if (size < need) size = need;
    if (size > SIZE_MAX - pm__header()) return NULL;
    size_t total = pm__header() + size;
    if (a->limit && (a->reserved > a->limit || total > a->limit - a->reserved)) {
        /* Retry with the exact need before giving up on the limit. */
        total = pm__header() + need;
        if (a->reserved > a->limit || total > a->limit - a->reserved) return NULL;
        size = need;
    }
    pm__block *b = pm__block_alloc(a, total);
    if (!b && size > need) {
        /* A refusing allocator (a budget) may still grant the exact need. */
        size = need;
        total = pm__header() + need;
        b = pm__block_alloc(a, total);
    }
    if (!b) return NULL;
    b->prev = a->head;
    b->size = size;
    b->used = 0;
    a->head = b;
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
        if (pm__chunk_payload(c) == (const unsigned char *)p) return c;
    return NULL;
}

/* Grows chunk c to n bytes: the allocator's realloc when it is malloc,
 * else a new chunk, the copy, and the old one back to the allocator. */
static void *pm__big_grow(pm_arena *a, pm__chunk *c, size_t n) {
    size_t h = pm__chunk_header(), old_total = h + c->size;
    if (n > SIZE_MAX - h) return NULL;
    size_t total = h + n;
    if (!pm__within_limit(a, total - old_total)) return NULL;
    pm__chunk *g;
    if (a->al.alloc) {
        g = a->al.alloc(a->al.ctx, total);
        if (!g) return NULL;
        memcpy(g, c, h + c->size);
        pm__block_free(a, c, old_total);
    } else {
        g = realloc(c, total);
        if (!g) return NULL;
    }
    g->size = n;
    if (g->prev) g->prev->next = g;
    else a->big = g;
    if (g->next) g->next->prev = g;
    a->reserved += total - old_total;
    return pm__chunk_payload(g);
}

void *pm_arena_alloc(pm_arena *a, size_t size) {
    if (size > SIZE_MAX - PM_ARENA_ALIGN) return NULL;
    size_t n = pm__align_up(size ? size : 1);
    if (n >= PM__BIG) {
        a->last = NULL;
        return pm__big_alloc(a, n);
    }
    pm__block *b = a->head;
    if (!b || b->size - b->used < n) {
        b = pm__new_block(a, n);
        if (!b) return NULL;
    }
    void *p = pm__payload(b) + b->used;
    b->used += n;
    a->last = p;
    a->last_size = n;
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
    if (p == a->last && b && new_size <= SIZE_MAX - PM_ARENA_ALIGN) {
        size_t n = pm__align_up(new_size);
        size_t start = (size_t)((unsigned char *)p - pm__payload(b));
        if (n <= b->size - start) {
            b->used = start + n;
            a->last_size = n;
            return p;
        }
    }
    void *q = pm_arena_alloc(a, new_size);
    if (q) memcpy(q, p, old_size);
    return q;
}

char *pm_arena_strdup(pm_arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = pm_arena_alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
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
