#ifndef PM_META_H
#define PM_META_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"

/* Generator metadata: a small JSON-shaped tree built in the scene's arena.
 * core/ knows no JSON; api/ turns this tree into JSON for the JSON mesh and
 * into scene.extras for glTF. Object keys keep insertion order, so output
 * is deterministic. Every constructor returns NULL when out of memory, and
 * every setter accepts a NULL value and then returns -1, so a generator can
 * build a tree and check for failure once at the end. */
typedef enum pm_meta_kind {
    PM_META_NULL, PM_META_BOOL, PM_META_INT, PM_META_NUM, PM_META_STR,
    PM_META_ARR, PM_META_OBJ,
    PM_META_TABLE   /* an array of objects held as rows of a C struct (below) */
} pm_meta_kind;

typedef struct pm_meta pm_meta;

/* A table: an array of objects that all have the same members, held as n
 * rows of a C struct (a column per member: its key, its type, its offset
 * in the row) instead of a node per value. Big generators (networks) list
 * thousands of such objects; written, a table is the same JSON as the
 * array of objects pm_meta_copy turns it into. */
typedef enum pm_meta_col_kind {
    PM_META_COL_I64,    /* int64_t */
    PM_META_COL_U32,    /* uint32_t */
    PM_META_COL_F64,    /* double; non-finite is null */
    PM_META_COL_BOOL,   /* bool */
    PM_META_COL_STR,    /* const char * that outlives the tree (NULL: null) */
    PM_META_COL_VAL,    /* pm_meta_val: null, bool, int, number or string */
    PM_META_COL_U32X2,  /* uint32_t[2], as [a, b] */
    PM_META_COL_F64X3,  /* double[3], as [x, y, z] (non-finite: null) */
    PM_META_COL_U32S,   /* pm_meta_u32s: a list of integers */
    PM_META_COL_BOOLS,  /* pm_meta_bools: a list of true / false */
    PM_META_COL_META    /* pm_meta *: any value (its key unused); NULL leaves
                         * the member out of that row */
} pm_meta_col_kind;

typedef struct pm_meta_val {
    pm_meta_kind kind;   /* PM_META_NULL .. PM_META_STR */
    union { bool b; int64_t i; double n; const char *s; } u;
} pm_meta_val;
typedef struct pm_meta_u32s { const uint32_t *v; size_t n; } pm_meta_u32s;
typedef struct pm_meta_bools { const bool *v; size_t n; } pm_meta_bools;

typedef struct pm_meta_col {
    const char *key;      /* a literal: kept, not copied */
    uint32_t key_len;
    pm_meta_col_kind kind;
    size_t offset;        /* of the value in the row */
} pm_meta_col;
/* A column for member `field` of row struct `type` under key `key`. */
#define PM_META_COL(key, kind, type, field) \
    {"" key, sizeof(key) - 1, PM_META_COL_##kind, offsetof(type, field)}

typedef struct pm_meta_shape {
    const pm_meta_col *cols;   /* the members in order */
    size_t ncols, row_size;
} pm_meta_shape;
struct pm_meta {
    pm_meta_kind kind;
    uint32_t key_len;         /* strlen(key), so writers need not measure it */
    const char *key;          /* set when this node is an object member */
    pm_meta *next;            /* next sibling */
    union {
        bool b;
        int64_t i;
        double n;
        const char *s;
        struct { pm_meta *first, *last; size_t count; } kids;
        struct { const pm_meta_shape *shape; const void *rows; size_t n; } table;
    } u;
};

pm_meta *pm_meta_null(pm_arena *a);
pm_meta *pm_meta_bool(pm_arena *a, bool b);
pm_meta *pm_meta_int(pm_arena *a, int64_t i);
pm_meta *pm_meta_num(pm_arena *a, double n);   /* non-finite becomes null */
pm_meta *pm_meta_str(pm_arena *a, const char *s);  /* copies s */
/* s kept, not copied: it must outlive the tree (a literal). Writers keep
 * a string's text by its address, so one literal is escaped once. */
pm_meta *pm_meta_str_lit(pm_arena *a, const char *s);
pm_meta *pm_meta_arr(pm_arena *a);
pm_meta *pm_meta_obj(pm_arena *a);
/* Arrays of numbers, the common case (points, indices). */
pm_meta *pm_meta_nums(pm_arena *a, const double *v, size_t n);
pm_meta *pm_meta_ints(pm_arena *a, const int64_t *v, size_t n);

/* A table of n rows (rows[0 .. n * shape->row_size), not copied: shape
 * and rows must outlive the tree, strings too). NULL when out of memory. */
pm_meta *pm_meta_table(pm_arena *a, const pm_meta_shape *shape, const void *rows, size_t n);

/* Appends v to array arr; returns 0, or -1 when v or arr is NULL. */
int pm_meta_push(pm_meta *arr, pm_meta *v);
/* Adds member key (copied) = v to object obj; returns 0 or -1. Keys are
 * not checked for duplicates: the generator owns its key set. */
int pm_meta_set(pm_arena *a, pm_meta *obj, const char *key, pm_meta *v);
/* The same for a string literal key, which is not copied (it outlives
 * the tree) nor measured at run time: no copy per member in big trees. */
#define pm_meta_set_lit(obj, key, v) pm_meta_set_keyn((obj), "" key, sizeof(key) - 1, (v))
/* key[0..n) (with key[n] == '\0') is kept as it is, not copied. */
int pm_meta_set_keyn(pm_meta *obj, const char *key, size_t n, pm_meta *v);
/* A deep copy of m (keys, strings and children) in a; NULL when out of
 * memory. The copy's own key is m's. A table is copied as the plain
 * array of objects it stands for (readers that walk u.kids see every
 * value as a node). */
pm_meta *pm_meta_copy(pm_arena *a, const pm_meta *m);
/* Looks up a member (linear); NULL when absent. Not inside a table: read
 * a table's pm_meta_copy. */
pm_meta *pm_meta_get(const pm_meta *obj, const char *key);
#endif
