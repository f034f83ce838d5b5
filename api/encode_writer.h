#ifndef PM_API_ENCODE_WRITER_H
#define PM_API_ENCODE_WRITER_H
/* Internal to the encoders (api/encode_*.c): a byte writer for JSON text,
 * deterministic number printing, the metadata -> JSON conversion both
 * formats share, and the scene view both encoders read. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scene/scene.h"
#include "pm_api/encode.h"

typedef struct pm_api__w {
    char *data;
    size_t len, cap;
    bool oom;              /* sticky: every later write is a no-op */
    const pm_api_alloc *al;   /* NULL: realloc and free */
} pm_api__w;

/* A block from al (NULL: realloc/free), as pm_api_alloc describes. */
void *pm_api__mem_realloc(const pm_api_alloc *al, void *p, size_t old_size, size_t new_size);
void pm_api__mem_free(const pm_api_alloc *al, void *p, size_t size);

/* Starts with cap bytes reserved (the caller's estimate of the output). */
void pm_api__w_init(pm_api__w *w, size_t cap);
/* The same with the buffer from al. When al refuses the estimate, starts
 * small; when it refuses doubling, grows by what is needed plus a little:
 * the output stops exactly where al's limit is. */
void pm_api__w_init_al(pm_api__w *w, size_t cap, const pm_api_alloc *al);
/* Hands the text to out, trimmed to its length (0 or -1 out of memory). */
int pm_api__w_take(pm_api__w *w, pm_api_buf *out);
void pm_api__w_free(pm_api__w *w);
/* Makes room for n more bytes; false (and oom set) when that fails. The
 * check is inline (writers call it per token); growing is not. */
bool pm_api__w_grow(pm_api__w *w, size_t n);
static inline bool pm_api__w_reserve(pm_api__w *w, size_t n) {
    if (w->oom) return false;
    return n <= w->cap - w->len || pm_api__w_grow(w, n);
}
/* Inline: the glTF text is mostly short literals, whose length and copy
 * fold to constants here. */
static inline void pm_api__w_raw(pm_api__w *w, const void *s, size_t n) {
    if (!pm_api__w_reserve(w, n)) return;
    memcpy(w->data + w->len, s, n);
    w->len += n;
}
static inline void pm_api__w_lit(pm_api__w *w, const char *s) {   /* unquoted text */
    pm_api__w_raw(w, s, strlen(s));
}
static inline void pm_api__w_char(pm_api__w *w, char c) {
    if (!pm_api__w_reserve(w, 1)) return;
    w->data[w->len++] = c;
}
void pm_api__w_str(pm_api__w *w, const char *s);            /* a JSON string */
void pm_api__w_u64(pm_api__w *w, uint64_t v);
/* v's digits at o (room for 20 bytes, checked by the caller); the end. */
char *pm_api__put_u64(char *o, uint64_t v);
void pm_api__w_i64(pm_api__w *w, int64_t v);
/* The shortest "%.Ng" text (N = 6..9 significant digits) that reads back
 * as the same float32, whether parsed straight to float or to double and
 * then rounded to float; integers below 1e6 print as integers, -0 as 0.
 * f must be finite. fmt writes at most 16 bytes to o and returns the
 * length; fmt_ref is the slow reference (snprintf + strtof) it matches. */
int pm_api__fmt_f32(char *o, float f);
int pm_api__fmt_f32_ref(char *o, float f);
void pm_api__w_f32(pm_api__w *w, float f);
/* Comma-separated floats / indices (no brackets). */
void pm_api__w_f32s(pm_api__w *w, const float *v, size_t n);
void pm_api__w_u32s(pm_api__w *w, const uint32_t *v, size_t n);
/* The shortest "%.Ng" (N = 15..17) that reads back as the same double;
 * non-finite prints null. Used for metadata and for accessor min/max, whose
 * float32 values are exact doubles. fmt writes the text of a finite d (at
 * most 32 bytes) and returns its length; fmt_ref is the slow reference
 * (snprintf + strtod) it matches byte for byte. */
int pm_api__fmt_f64(char *o, double d);
int pm_api__fmt_f64_ref(char *o, double d);
void pm_api__w_f64(pm_api__w *w, double d);
/* Metadata as JSON, object keys in insertion order. */
void pm_api__w_meta(pm_api__w *w, const pm_meta *m);
/* Object keys ("key":) and strings ("text") as written, kept by address
 * while one tree is written (the tree must not change, nor its memory be
 * used again, meanwhile). */
#define PM_API__KEY_BITS 8
#define PM_API__KEYS (1 << PM_API__KEY_BITS)
/* ids: a network names each node in its row and again in its edges' rows,
 * written after all the nodes: 2048 slots keep most of a 40 x 40 grid's
 * 1600 ids until then (1024 missed 3624 times, 2048 2589; a miss costs
 * about 160 instructions) */
#define PM_API__STR_BITS 11
#define PM_API__STRS (1 << PM_API__STR_BITS)
#define PM_API__KEY_TEXT 32

typedef struct pm_api__key_slot {
    const char *key;
    uint32_t len;                  /* keys: the key's length; strings: 0 */
    uint32_t text_len;             /* of text: "key": or "string" */
    char text[PM_API__KEY_TEXT];   /* that, and what the copy may carry past it */
} pm_api__key_slot;

/* A table's column as the planned row writer takes it: its ,"key": text
 * (32 bytes readable), where its value is in the row and what it is. */
#define PM_API__TABLE_KEYS 16
typedef struct pm_api__tcol {
    const char *key;
    size_t offset;
    uint32_t key_len;   /* of the text: the key's and 4 */
    pm_meta_col_kind kind;
} pm_api__tcol;

/* The plan of a table shape written (with skip): its columns' key texts
 * and where their values are, made once for all the tables of that shape
 * (a network's thousands of small mouths and corners tables). */
typedef struct pm_api__plan {
    const pm_meta_shape *shape;   /* NULL: free */
    uint64_t skip;
    size_t n, fixed;
    size_t nlists;                /* the shape's list columns (U32S, BOOLS), skipped or not */
    bool busy;                    /* its rows are being written: not to be replaced */
    pm_api__tcol cols[PM_API__TABLE_KEYS];
    pm_api__tcol lists[PM_API__TABLE_KEYS];   /* their offsets and kinds (no key) */
    char keys[PM_API__TABLE_KEYS][PM_API__KEY_TEXT];
} pm_api__plan;
#define PM_API__PLANS 4

/* A number's text by its bits: metadata repeats its values (a grid's
 * coordinates, widths, radii, angles), and a copy is cheaper than the
 * digits. A miss on a slot that holds another number replaces it only
 * when the number missed there just before was this one (the slot's
 * pending bits): values written once (a turned grid's mouths and
 * corners) pass by without pushing out the repeated ones, which come in
 * on their second miss. */
#define PM_API__NUM_BITS 10   /* 1024: a turned 40x40 grid repeats some 750 values */
#define PM_API__NUMS (1 << PM_API__NUM_BITS)
typedef struct pm_api__meta_cache {
    /* The numbers' bits and their texts in two arrays: clearing the bits
     * (pm_api__meta_cache_init) is 8 KiB of stores in a row, not a store
     * in each of a combined table's 512 cache lines (32 KiB, the whole
     * L1D, for every tree written, however small). */
    uint64_t num_bits[PM_API__NUMS];
    /* The text (1..23 bytes, then what the copy carries past it) and its
     * length in the last byte: one 24-byte copy on a hit. */
    char num_text[PM_API__NUMS][24];
    uint64_t num_pending[PM_API__NUMS];   /* read only once the slot is not empty */
    uint64_t strs_live[PM_API__STRS / 64];   /* strs slots written (keys: key NULL when free) */
    pm_api__key_slot keys[PM_API__KEYS], strs[PM_API__STRS];
    /* The keys' slots' owners (NULL: free), apart from the slots, whose
     * key member keys leave unused: clearing them is 2 KiB of stores in a
     * row, not one in each of the 48-byte slots' 192 cache lines. */
    const char *key_at[PM_API__KEYS];
    /* Plans of the last few shapes written: a table's rows may hold
     * tables of other shapes (a network's nodes hold mouths and corners),
     * each planned once. */
    pm_api__plan plans[PM_API__PLANS];
    unsigned plan_next;           /* the slot to replace next */
} pm_api__meta_cache;
void pm_api__meta_cache_init(pm_api__meta_cache *c);
/* pm_api__w_meta with a cache the caller keeps across calls. */
void pm_api__w_meta_cached(pm_api__w *w, const pm_meta *m, pm_api__meta_cache *c);
/* Table m with the columns whose bit is set in skip (the first 64) left
 * out of every row. */
void pm_api__w_table_skip(pm_api__w *w, const pm_meta *m, uint64_t skip, pm_api__meta_cache *c);
/* Metadata in a ?metadata= mode: full writes it all (pm_api__w_meta);
 * summary leaves out gen->summary_omit and adds "omitted" (path -> elements
 * left out). NONE is the caller's business (it writes no member). */
void pm_api__w_meta_mode(pm_api__w *w, const pm_meta *m, const pm_api_generator *gen,
                         pm_api_metadata mode);
/* Standard base64 (RFC 4648, with padding). */
void pm_api__w_base64(pm_api__w *w, const unsigned char *b, size_t n);

/* The scene as the encoders write it. Normals that are not unit length
 * (squared length off by more than 1e-4, or zero) are renormalized (zero becomes +Y), and
 * colours are clamped to [0, 1], in private copies, so every output passes
 * the glTF validator and all formats carry the same numbers. */
typedef struct pm_api__prim_view {
    const pm_prim *p;
    const float *normals, *colors;
    float *own_normals, *own_colors;   /* malloc'd fixes, or NULL */
} pm_api__prim_view;

typedef struct pm_api__view {
    const pm_scene *s;
    const pm_api_alloc *al;            /* the encoders' big buffers (NULL: malloc) */
    pm_api__prim_view *prims;          /* s->nprims entries: local, or calloc'd when more */
    pm_api__prim_view local[4];
} pm_api__view;

/* Returns 0, -1 out of memory, -2 when the scene breaks its contract: a
 * non-finite number, an index past its primitive's vertices, or an index
 * count that is not a multiple of 3. A scene with s->validated set
 * (pm_scene_validate: checked and fixed where it was made) is taken as it
 * is, with no pass over its numbers. The view must not be copied (its
 * prims may point into it). */
int pm_api__view_init(pm_api__view *v, const pm_scene *s);
void pm_api__view_free(pm_api__view *v);

/* min and max per axis of n finite xyz points, exactly as a plain scalar
 * "if (x < min) min = x" pass finds them, the same zero too (-0 or 0);
 * INFINITY / -INFINITY for none. */
void pm_api__f32_bounds3(const float *p, uint32_t n, double mn[3], double mx[3]);

/* A malloc'd (free()able) output buffer of n bytes the encoder is about to
 * write in full: big ones come 2 MiB aligned with transparent huge pages
 * asked for, so writing them takes a few dozen page faults, not one per
 * 4 KiB. NULL when out of memory. */
void *pm_api__out_alloc(size_t n);
/* Whether every page of [p, p + n) is resident (mincore): memory written
 * before, which stores need not have the kernel fault in and zero. */
bool pm_api__resident(const void *p, size_t n);

/* The format encoders, over a checked view. 0 or -1 (out of memory). */
int pm_api__encode_json(const pm_api__view *v, const pm_api_generator *gen,
                        const char *key_hex, pm_api_metadata meta, pm_api_buf *out);
int pm_api__encode_gltf(const pm_api__view *v, const pm_api_generator *gen,
                        const char *key_hex, const pm_api_output *o, pm_api_buf *out);
/* Whether the glTF encoder's material texts (written out in its source)
 * are what printing their colours gives (tests/api/test_encode.c). */
bool pm_api__gltf_material_texts_ok(void);
/* A GLB straight to sink, never assembled (encode_gltf.c): 0, -1 out of
 * memory, -3 the sink failed. */
int pm_api__stream_glb(const pm_api__view *v, const pm_api_generator *gen, const char *key_hex,
                       const pm_api_output *o, const pm_api_sink *sink);
#endif
