#include "scene/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_ARENA_ALIGN 16u

typedef struct pm__block {
    struct pm__block *prev;
    size_t size, used;
    /* payload follows, aligned */
} pm__block;

struct pm_arena {
    pm__block *head;
    size_t block_size;
    size_t reserved, limit;
    void *last;          /* last allocation, for in-place realloc */
    size_t last_size;
};

static size_t pm__align_up(size_t n) { return (n + PM_ARENA_ALIGN - 1) & ~(size_t)(PM_ARENA_ALIGN - 1); }
static size_t pm__header(void) { return pm__align_up(sizeof(pm__block)); }
static unsigned char *pm__payload(pm__block *b) { return (unsigned char *)b + pm__header(); }

pm_arena *pm_arena_create(size_t block_size) {
    pm_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->block_size = block_size ? block_size : 64u * 1024u;
    return a;
}

void pm_arena_destroy(pm_arena *a) {
    if (!a) return;
    pm__block *b = a->head;
    while (b) {
        pm__block *prev = b->prev;
        free(b);
        b = prev;
    }
    free(a);
}

void pm_arena_set_limit(pm_arena *a, size_t max_bytes) { a->limit = max_bytes; }

size_t pm_arena_reserved(const pm_arena *a) { return a->reserved; }

static pm__block *pm__new_block(pm_arena *a, size_t need) {
    size_t size = a->block_size;
    /* Grow block sizes with the arena so large requests take few blocks. */
    if (size < a->reserved / 2) size = a->reserved / 2;
    if (size < need) size = need;
    if (size > SIZE_MAX - pm__header()) return NULL;
    size_t total = pm__header() + size;
    if (a->limit && (a->reserved > a->limit || total > a->limit - a->reserved)) {
        /* Retry with the exact need before giving up on the limit. */
        total = pm__header() + need;
        if (a->reserved > a->limit || total > a->limit - a->reserved) return NULL;
        size = need;
    }
    pm__block *b = malloc(total);
    if (!b) return NULL;
    b->prev = a->head;
    b->size = size;
    b->used = 0;
    a->head = b;
    a->reserved += total;
    return b;
}

void *pm_arena_alloc(pm_arena *a, size_t size) {
    if (size > SIZE_MAX - PM_ARENA_ALIGN) return NULL;
    size_t n = pm__align_up(size ? size : 1);
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

void *pm_arena_realloc(pm_arena *a, void *p, size_t old_size, size_t new_size) {
    if (!p) return pm_arena_alloc(a, new_size);
    if (new_size <= old_size) return p;
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
