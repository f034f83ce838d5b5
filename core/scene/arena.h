#ifndef PM_ARENA_H
#define PM_ARENA_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A bump allocator for per-request memory: every allocation of one request
 * lives until pm_arena_destroy, which frees everything at once. Not
 * thread-safe: one arena belongs to one thread at a time. */
typedef struct pm_arena pm_arena;

/* Creates an arena whose blocks hold at least block_size bytes (0 = 64 KiB).
 * Returns NULL when out of memory. */
pm_arena *pm_arena_create(size_t block_size);
void pm_arena_destroy(pm_arena *a);

/* Where an arena's blocks come from: by default malloc and free. A caller
 * that accounts memory (a budget shared by many arenas) supplies its own;
 * alloc may refuse (NULL), which the arena treats as out of memory. size is
 * the block's whole size, the same in alloc and free.
 * grow, when set, makes the allocator stand in for malloc itself: grow is
 * its realloc (NULL p: a new block; a NULL answer leaves p as it was), a
 * big allocation grows by it and one given back stays with the arena, as
 * with malloc, so the arena's block sizes, pm_arena_reserved and what fits
 * under a limit are malloc's (a page pool, service/pages.h). Unset, a big
 * allocation grows by alloc, copy and free, and one given back goes back
 * to the allocator at once (a budget that grants it again). */
typedef struct pm_arena_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *p, size_t size);
    void *ctx;
    void *(*grow)(void *ctx, void *p, size_t old_size, size_t new_size);
} pm_arena_allocator;

/* As pm_arena_create, with blocks (not the arena header) from *al, which
 * must outlive the arena. al NULL: malloc. */
pm_arena *pm_arena_create_with(size_t block_size, const pm_arena_allocator *al);

/* An arena for scratch work inside a (a request's) arena: its blocks are
 * taken from parent, so they count against parent's limit and allocator
 * and go with it; reset, it is used again from the start. Destroy it
 * before parent. NULL when out of memory. */
pm_arena *pm_arena_create_scratch(pm_arena *parent);
/* An arena for one stage's data, all given back at once when the stage
 * ends (destroy it before parent): its blocks come from parent's
 * allocator, within parent's limit and counted in parent's reserved bytes
 * while held, and go back to the allocator when it is destroyed. The
 * space is then the allocator's again in one piece (the page pool merges
 * it), which the next big allocation (a chunk of its own) can take, where
 * a scratch arena's blocks would stay parent's free regions, each under
 * 1 MiB. The same on every allocator, so what fits under a limit does not
 * depend on it. NULL when out of memory. */
pm_arena *pm_arena_create_child(pm_arena *parent);
/* pm_arena_create_child with blocks of at most block_max bytes (a bigger
 * allocation still gets a block or chunk of its own size): for a stage's
 * many small pieces whose total is not known ahead, where the unused tail
 * of a last 1 MiB block would lie between them and what the next stage
 * takes (the network's road copies: 0.68 of their last 1.05 MB block
 * unused, above them the stitched asphalt). */
pm_arena *pm_arena_create_child_max(pm_arena *parent, size_t block_max);
/* Forgets every allocation of a at once, keeping its newest block to be
 * used again (the others go back to its allocator: for a scratch arena,
 * to its parent, which uses them again): what was allocated from a before
 * is no longer valid. */
void pm_arena_reset(pm_arena *a);

/* Caps the bytes the arena may take from the system (0 = no cap). Past the
 * cap every allocation returns NULL, so one request cannot take the host. */
void pm_arena_set_limit(pm_arena *a, size_t max_bytes);

/* Internal (arena.c and the inline allocation below): the head block's
 * free space, the first member of every arena. */
typedef struct pm__arena_bump {
    unsigned char *cur, *end;   /* the head block's free bytes (NULL: none) */
    void *last;                 /* the newest allocation, for in-place realloc */
} pm__arena_bump;
void *pm__arena_alloc_slow(pm_arena *a, size_t size);

/* Returns size bytes aligned to 16, or NULL (out of memory, or past the
 * limit). Allocation of 0 bytes returns a valid unique pointer. Inline: a
 * small allocation that fits the head block is a bump of its pointer
 * (networks make hundreds of thousands of metadata nodes); anything else,
 * and size 0 (which wraps around below), goes to arena.c. */
static inline void *pm_arena_alloc(pm_arena *a, size_t size) {
    pm__arena_bump *b = (pm__arena_bump *)(void *)a;
    size_t n = (size + 15) & ~(size_t)15;
    /* as integers: with no head block both pointers are NULL */
    if (__builtin_expect(size - 1 < 4096 - 16 && (uintptr_t)b->end - (uintptr_t)b->cur >= n, 1)) {
        void *p = b->cur;
        b->cur += n;
        b->last = p;
        return p;
    }
    return pm__arena_alloc_slow(a, size);
}
/* Zeroed n*size bytes; NULL on overflow of n*size as well. */
void *pm_arena_calloc(pm_arena *a, size_t n, size_t size);
/* Grows a block from old_size to new_size, keeping its content. Extends in
 * place when p is the last allocation. p may be NULL (old_size 0). An
 * allocation of 1 MiB or more has a chunk of its own, which grows by the
 * system's realloc (its pages moved, not copied, the old chunk freed), so
 * a growing array takes about its own size, not twice. */
void *pm_arena_realloc(pm_arena *a, void *p, size_t old_size, size_t new_size);
/* A copy of the string s. Inline: a primitive's name and material are
 * copied for each of a network's thousands of roads. */
static inline char *pm_arena_strdup(pm_arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = pm_arena_alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}
/* Gives back p, an allocation of size bytes (as allocated or last grown;
 * NULL: nothing), which must not be used again: later allocations of a
 * reuse its memory instead of new pages. A big one (1 MiB or more) goes
 * back to the arena's allocator when it has one (a budget grants it
 * again); with malloc it stays with the arena, as a realloc that moves an
 * allocation gives back the old one. */
void pm_arena_free(pm_arena *a, void *p, size_t size);

/* Gives back to the allocator (with malloc, to free) every big allocation
 * given back earlier that the arena kept as a free region (an allocator
 * with grow, or malloc: pm_arena_free) and that no later allocation has
 * taken any of: for when the arena will take little more but other memory
 * is about to be (a scene's encoder after its generator), which then
 * reuses those pages. pm_arena_reserved drops by them; the arena works on
 * as before. Returns the bytes given back. */
size_t pm_arena_trim(pm_arena *a);

/* Bytes taken from the system so far (blocks, not just what was used). */
size_t pm_arena_reserved(const pm_arena *a);

/* A growable array in an arena: `PM_VEC(double) v = {0};` then
 * pm_vec_push(a, &v, x). Doubles its capacity on growth. */
#define PM_VEC(T) struct { T *data; size_t len, cap; }
int pm__vec_grow(pm_arena *a, void **data, size_t *cap, size_t need, size_t elem);
/* The capacity check inline: most reserves and pushes find room, and a
 * call per push was a measurable share of a network's stitch. */
static inline int pm__vec_reserve(pm_arena *a, void **data, size_t *cap, size_t need,
                                  size_t elem) {
    if (__builtin_expect(need <= *cap, 1)) return 0;
    return pm__vec_grow(a, data, cap, need, elem);
}
#define pm_vec_reserve(a, v, n) \
    pm__vec_reserve((a), (void **)&(v)->data, &(v)->cap, (n), sizeof(*(v)->data))
#define pm_vec_push(a, v, x) \
    (pm_vec_reserve((a), (v), (v)->len + 1) == 0 ? ((v)->data[(v)->len++] = (x), 0) : -1)
#endif
