/* Metadata as JSON in the three ?metadata= modes. Summary leaves out the
 * generator's bulk paths (pm_api_generator.summary_omit) and says what it
 * left out and how many elements in "omitted". */
#include <string.h>

#include "encode_writer.h"

#define PM_API__META_PATH_MAX 256
#define PM_API__META_OMIT_MAX 16

typedef struct pm_api__meta_filter {
    const char *const *omit;               /* NULL-terminated paths */
    uint64_t counts[PM_API__META_OMIT_MAX];
    bool seen[PM_API__META_OMIT_MAX];
    size_t nomit;
    pm_api__meta_cache *cache;             /* one for the whole write */
} pm_api__meta_filter;

/* The index of path among the omitted paths, or -1. */
static int pm_api__meta_omitted(const pm_api__meta_filter *f, const char *path) {
    for (size_t i = 0; i < f->nomit; i++)
        if (strcmp(f->omit[i], path) == 0) return (int)i;
    return -1;
}

/* True when an omitted path lies below path[0..n): only there is the
 * walk slower than writing the value whole. */
static bool pm_api__meta_below(const pm_api__meta_filter *f, const char *path, size_t n) {
    for (size_t i = 0; i < f->nomit; i++)
        if (strncmp(f->omit[i], path, n) == 0 && (f->omit[i][n] == '.' || f->omit[i][n] == '['))
            return true;
    return false;
}

static void pm_api__meta_table_filtered(pm_api__w *w, const pm_meta *m, char *path, size_t plen,
                                        pm_api__meta_filter *f);

/* path: the member's path in the summary syntax ("terrain.heights",
 * "nodes[].mouths"); a value too deep for the buffer is written whole. */
static void pm_api__meta_filtered(pm_api__w *w, const pm_meta *m, char *path, size_t plen,
                                  pm_api__meta_filter *f) {
    if (m->kind != PM_META_ARR && m->kind != PM_META_OBJ) {
        pm_api__w_meta_cached(w, m, f->cache);
        return;
    }
    bool obj = m->kind == PM_META_OBJ;
    pm_api__w_char(w, obj ? '{' : '[');
    bool first = true;
    for (const pm_meta *k = m->u.kids.first; k; k = k->next) {
        size_t n = plen;
        const char *key = k->key ? k->key : "";
        size_t klen = k->key ? k->key_len : 0, add = obj ? (plen ? 1 : 0) + klen : 2;
        if (add < PM_API__META_PATH_MAX - plen) {
            if (!obj) memcpy(path + plen, "[]", 2);
            else if (plen) path[plen] = '.';
            if (obj) memcpy(path + n + (plen ? 1 : 0), key, klen);
            n = plen + add;
            path[n] = '\0';
        }
        if (obj && n != plen) {
            int o = pm_api__meta_omitted(f, path);
            if (o >= 0) {
                f->seen[o] = true;
                f->counts[o] += k->kind == PM_META_ARR     ? k->u.kids.count
                                : k->kind == PM_META_TABLE ? k->u.table.n
                                                           : 1;
                path[plen] = '\0';
                continue;
            }
        }
        if (!first) pm_api__w_char(w, ',');
        first = false;
        if (obj) {
            pm_api__w_str(w, key);
            pm_api__w_char(w, ':');
        }
        if (n == plen || !pm_api__meta_below(f, path, n)) pm_api__w_meta_cached(w, k, f->cache);
        else if (k->kind == PM_META_TABLE) pm_api__meta_table_filtered(w, k, path, n, f);
        else pm_api__meta_filtered(w, k, path, n, f);
        path[plen] = '\0';
    }
    if (plen == 0 && obj) {   /* the top level: what summary left out */
        bool any = false;
        for (size_t i = 0; i < f->nomit; i++) any |= f->seen[i];
        if (any) {
            if (!first) pm_api__w_char(w, ',');
            pm_api__w_lit(w, "\"omitted\":{");
            bool one = false;
            for (size_t i = 0; i < f->nomit; i++) {
                if (!f->seen[i]) continue;
                if (one) pm_api__w_char(w, ',');
                one = true;
                pm_api__w_str(w, f->omit[i]);
                pm_api__w_char(w, ':');
                pm_api__w_u64(w, f->counts[i]);
            }
            pm_api__w_char(w, '}');
        }
    }
    pm_api__w_char(w, obj ? '}' : ']');
}

/* How many elements member (column col of row) counts for when left
 * out, as its plain copy would: an array's length, else 1; 0 when the
 * row has no such member. */
static uint64_t pm_api__col_count(const pm_meta_col *col, const char *row) {
    const void *v = row + col->offset;
    switch (col->kind) {
    case PM_META_COL_U32X2: return 2;
    case PM_META_COL_F64X3: return 3;
    case PM_META_COL_U32S: return ((const pm_meta_u32s *)v)->n;
    case PM_META_COL_BOOLS: return ((const pm_meta_bools *)v)->n;
    case PM_META_COL_META: {
        const pm_meta *m = *(const pm_meta *const *)v;
        return !m ? 0 : m->kind == PM_META_ARR ? m->u.kids.count : m->kind == PM_META_TABLE ? m->u.table.n : 1;
    }
    default: return 1;
    }
}

/* A table with omitted members below it. When each is a column (the
 * usual case: "nodes[].mouths"), the table is written without them and
 * they are counted from the rows; otherwise each row is filtered as the
 * plain object it stands for, made one at a time in a scratch arena (the
 * memory is one row's). */
static void pm_api__meta_table_filtered(pm_api__w *w, const pm_meta *m, char *path, size_t plen,
                                        pm_api__meta_filter *f) {
    const pm_meta_shape *sh = m->u.table.shape;
    if (2 >= PM_API__META_PATH_MAX - plen) {   /* as pm_api__meta_filtered: too deep, whole */
        pm_api__w_meta_cached(w, m, f->cache);
        return;
    }
    memcpy(path + plen, "[]", 3);
    size_t n = plen + 2;
    uint64_t skip = 0;
    int omit[64];
    bool columns = sh->ncols <= 64;
    for (size_t i = 0; columns && i < sh->ncols; i++) {
        const pm_meta_col *col = &sh->cols[i];
        omit[i] = -1;
        if (1 + col->key_len >= PM_API__META_PATH_MAX - n) continue;   /* written whole */
        path[n] = '.';
        memcpy(path + n + 1, col->key, col->key_len);
        path[n + 1 + col->key_len] = '\0';
        if ((omit[i] = pm_api__meta_omitted(f, path)) >= 0) skip |= 1ull << i;
        else columns = !pm_api__meta_below(f, path, n + 1 + col->key_len);
    }
    path[n] = '\0';
    if (columns) {
        for (size_t r = 0; r < m->u.table.n; r++) {
            const char *row = (const char *)m->u.table.rows + r * sh->row_size;
            for (size_t i = 0; i < sh->ncols; i++) {
                if (!(skip >> i & 1)) continue;
                const pm_meta_col *col = &sh->cols[i];
                if (col->kind == PM_META_COL_META && !*(const pm_meta *const *)(row + col->offset)) continue;
                f->seen[omit[i]] = true;
                f->counts[omit[i]] += pm_api__col_count(col, row);
            }
        }
        pm_api__w_table_skip(w, m, skip, f->cache);
        path[plen] = '\0';
        return;
    }
    pm_arena *a = pm_arena_create(0);
    if (!a) {
        w->oom = true;
        return;
    }
    pm_api__w_char(w, '[');
    pm_meta one = *m;
    one.u.table.n = 1;
    for (size_t r = 0; r < m->u.table.n && !w->oom; r++) {
        one.u.table.rows = (const char *)m->u.table.rows + r * sh->row_size;
        pm_meta *row = pm_meta_copy(a, &one);
        if (!row) {
            w->oom = true;
            break;
        }
        if (r) pm_api__w_char(w, ',');
        pm_api__meta_filtered(w, row->u.kids.first, path, n, f);
        path[n] = '\0';
        pm_arena_reset(a);
        pm_api__meta_cache_init(f->cache);   /* the row's memory is used again */
    }
    path[plen] = '\0';
    pm_api__w_char(w, ']');
    pm_arena_destroy(a);
}

void pm_api__w_meta_mode(pm_api__w *w, const pm_meta *m, const pm_api_generator *gen,
                         pm_api_metadata mode) {
    if (mode != PM_API_META_SUMMARY || !gen->summary_omit) {
        pm_api__w_meta(w, m);
        return;
    }
    pm_api__meta_filter f = {.omit = gen->summary_omit};
    while (f.nomit < PM_API__META_OMIT_MAX && gen->summary_omit[f.nomit]) f.nomit++;
    pm_api__meta_cache cache;
    pm_api__meta_cache_init(&cache);
    f.cache = &cache;
    char path[PM_API__META_PATH_MAX] = "";
    pm_api__meta_filtered(w, m, path, 0, &f);
}
