#ifndef PM_SVC_PAGES_H
#define PM_SVC_PAGES_H
/* A page pool for one process's big memory: arena blocks, big arrays and
 * the encoder's buffers carved from one large anonymous mapping advised for
 * transparent huge pages, with the space given back used again. Fresh
 * memory costs a page fault per 4 KiB on first touch (about 5 us on a VM):
 * a 40x40 network touches ~28 MB, ~7,000 faults, half its CPU time. From
 * one 2 MiB-aligned mapping advised MADV_HUGEPAGE the kernel backs each
 * 2 MiB with one fault where THP is allowed ("always" or "madvise"), and
 * with 4 KiB pages, as malloc would, where it is not or the advice fails.
 * Only address space is reserved (MAP_NORESERVE); nothing is touched up
 * front. Not thread-safe: one pool belongs to one thread at a time. */
#include <stddef.h>

#include "pm_api/encode.h"
#include "scene/arena.h"

typedef struct pm_svc_pages pm_svc_pages;

/* The alignment of every block, and the unit sizes are rounded up to. */
#define PM_SVC_PAGES_GRAIN ((size_t)64)
/* The space a block of n bytes takes. */
static inline size_t pm_svc_pages_block(size_t n) {
    return (n ? n + PM_SVC_PAGES_GRAIN - 1 : PM_SVC_PAGES_GRAIN) & ~(PM_SVC_PAGES_GRAIN - 1);
}

/* A pool of up to reserve bytes of address space (rounded up to 2 MiB),
 * or NULL when the mapping (or memory for the pool) is refused. */
pm_svc_pages *pm_svc_pages_create(size_t reserve);
/* Advises pg's mapping for 4 KiB pages only (MADV_NOHUGEPAGE), before
 * anything is taken from it: for a pool that lives long and keeps count of
 * its resident free pages (pm_svc_pages_retained). A huge page part of
 * which is free would be resident whole, and khugepaged would fill a huge
 * page part of which was trimmed back in. */
void pm_svc_pages_small(pm_svc_pages *pg);
/* Unmaps everything the pool gave out, at once. NULL: nothing. */
void pm_svc_pages_destroy(pm_svc_pages *pg);

/* n bytes (0 counts as 1) aligned to PM_SVC_PAGES_GRAIN, or NULL when the
 * pool has no room for them. The lowest free space that holds them first,
 * then fresh space. */
void *pm_svc_pages_alloc(pm_svc_pages *pg, size_t n);
/* p (from this pool, of old_size bytes; NULL: a new block) grown or shrunk
 * to n bytes, in place when the space after it is free, else moved with
 * its first min(old_size, n) bytes. NULL when there is no room: p is then
 * untouched and still held. */
void *pm_svc_pages_realloc(pm_svc_pages *pg, void *p, size_t old_size, size_t n);
/* How far p, a block of size bytes, can grow in place: its own space and
 * the free space right after it (at the top: up to the mapping's end). */
size_t pm_svc_pages_room(const pm_svc_pages *pg, const void *p, size_t size);
/* Gives back p, a block of size bytes (as allocated or last resized);
 * NULL: nothing. Its space is used again by later allocations. */
void pm_svc_pages_free(pm_svc_pages *pg, void *p, size_t size);
/* Whether p lies in the pool's mapping. */
int pm_svc_pages_owns(const pm_svc_pages *pg, const void *p);
/* Bytes of the mapping handed out at least once (the touched high-water
 * mark), and the mapping's size. */
size_t pm_svc_pages_used(const pm_svc_pages *pg);
size_t pm_svc_pages_reserved(const pm_svc_pages *pg);
/* Bytes held: the blocks handed out and not given back (each rounded up
 * to PM_SVC_PAGES_GRAIN). When none is held the pool starts again from its
 * base (space it had to forget included). */
size_t pm_svc_pages_held(const pm_svc_pages *pg);

/* Space given back stays resident until trimmed, for the next blocks to
 * take without a page fault. retained: an upper bound on the free bytes
 * that may still be resident (touched since they were last trimmed), at
 * page granularity plus the partly used huge page at the end.
 * pm_svc_pages_trim gives free pages back to the system (MADV_DONTNEED),
 * the highest first, until at most keep bytes are retained or only the
 * pages shared with held blocks are left; returns the retained bytes
 * after. Blocks held are never touched. */
size_t pm_svc_pages_retained(const pm_svc_pages *pg);
size_t pm_svc_pages_trim(pm_svc_pages *pg, size_t keep);

/* Allocators over pg for an arena (pm_arena_create_with) and for the
 * encoder (pm_api_alloc), which fall back on malloc, realloc and free when
 * the pool is full, so a job that fits in memory never fails for the
 * pool's sake. The arena's has pm_svc_pages_arena_realloc as its grow, so
 * it stands in for malloc: the arena's block sizes, accounting and limit
 * are those of an arena on malloc. The encoder's has pm_svc_pages_room as
 * its room: a growing output takes the free space after it first. pg must
 * outlive every arena and buffer using them. */
pm_arena_allocator pm_svc_pages_arena(pm_svc_pages *pg);
void *pm_svc_pages_arena_realloc(void *ctx, void *p, size_t old_size, size_t n);
pm_api_alloc pm_svc_pages_output(pm_svc_pages *pg);

/* The pool for `procmesh generate`: as much address space as the process
 * may map without crowding out malloc (a quarter of RLIMIT_AS when that is
 * set, else 64 GiB, halved on refusal down to 64 MiB), or NULL (then the
 * caller uses malloc). NULL too where the kernel accounts every mapping
 * against its commit limit (pm_svc_pages_strict_commit): there
 * MAP_NORESERVE is ignored and the reservation would take commit that
 * malloc, and other processes, need. */
pm_svc_pages *pm_svc_pages_create_for_process(void);
/* Whether the vm.overcommit_memory file at path (normally
 * /proc/sys/vm/overcommit_memory) says 2, strict accounting. A missing or
 * unreadable file: not strict (the kernel's default, heuristic). */
int pm_svc_pages_strict_commit(const char *path);
#endif
