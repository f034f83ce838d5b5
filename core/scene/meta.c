#include "scene/meta.h"

#include <math.h>
#include <string.h>

static pm_meta *pm__meta_node(pm_arena *a, pm_meta_kind kind) {
    pm_meta *m = pm_arena_alloc(a, sizeof *m);
    if (m) *m = (pm_meta){.kind = kind};
    return m;
}

pm_meta *pm_meta_null(pm_arena *a) { return pm__meta_node(a, PM_META_NULL); }

pm_meta *pm_meta_bool(pm_arena *a, bool b) {
    pm_meta *m = pm__meta_node(a, PM_META_BOOL);
    if (m) m->u.b = b;
    return m;
}

pm_meta *pm_meta_int(pm_arena *a, int64_t i) {
    pm_meta *m = pm__meta_node(a, PM_META_INT);
    if (m) m->u.i = i;
    return m;
}

pm_meta *pm_meta_num(pm_arena *a, double n) {
    if (!isfinite(n)) return pm_meta_null(a);
    pm_meta *m = pm__meta_node(a, PM_META_NUM);
    if (m) m->u.n = n;
    return m;
}

pm_meta *pm_meta_str_lit(pm_arena *a, const char *s) {
    pm_meta *m = pm__meta_node(a, PM_META_STR);
    if (m) m->u.s = s;
    return m;
}

pm_meta *pm_meta_str(pm_arena *a, const char *s) {
    char *copy = pm_arena_strdup(a, s);
    pm_meta *m = copy ? pm__meta_node(a, PM_META_STR) : NULL;
    if (m) m->u.s = copy;
    return m;
}

pm_meta *pm_meta_arr(pm_arena *a) { return pm__meta_node(a, PM_META_ARR); }
pm_meta *pm_meta_obj(pm_arena *a) { return pm__meta_node(a, PM_META_OBJ); }

static void pm__meta_append(pm_meta *parent, pm_meta *v) {
    if (parent->u.kids.last) parent->u.kids.last->next = v;
    else parent->u.kids.first = v;
    parent->u.kids.last = v;
    parent->u.kids.count++;
}

int pm_meta_push(pm_meta *arr, pm_meta *v) {
    if (!arr || !v || arr->kind != PM_META_ARR) return -1;
    pm__meta_append(arr, v);
    return 0;
}

int pm_meta_set(pm_arena *a, pm_meta *obj, const char *key, pm_meta *v) {
    if (!obj || !v || obj->kind != PM_META_OBJ) return -1;
    size_t n = strlen(key);
    if (n > UINT32_MAX) return -1;
    char *copy = pm_arena_alloc(a, n + 1);
    if (!copy) return -1;
    memcpy(copy, key, n + 1);
    v->key = copy;
    v->key_len = (uint32_t)n;
    pm__meta_append(obj, v);
    return 0;
}

int pm_meta_set_keyn(pm_meta *obj, const char *key, size_t n, pm_meta *v) {
    if (!obj || !v || obj->kind != PM_META_OBJ || n > UINT32_MAX) return -1;
    v->key = key;
    v->key_len = (uint32_t)n;
    pm__meta_append(obj, v);
    return 0;
}

pm_meta *pm_meta_get(const pm_meta *obj, const char *key) {
    if (!obj || obj->kind != PM_META_OBJ) return NULL;
    size_t n = strlen(key);   /* members of another length are passed by their key_len */
    for (pm_meta *m = obj->u.kids.first; m; m = m->next)
        if (m->key_len == n && memcmp(m->key, key, n) == 0) return m;
    return NULL;
}

/* An array and its n elements in one allocation, linked as pushes would
 * link them (later pushes and moves work the same). */
static pm_meta *pm__meta_block(pm_arena *a, size_t n) {
    if (n > SIZE_MAX / sizeof(pm_meta) - 1) return NULL;
    pm_meta *arr = pm_arena_alloc(a, (n + 1) * sizeof *arr);
    if (!arr) return NULL;
    *arr = (pm_meta){.kind = PM_META_ARR};
    pm_meta *k = arr + 1;
    /* Field by field: a compound literal per element zeroed and copied
     * all 48 bytes, for arrays that are mostly 2 or 3 numbers long. */
    for (size_t i = 0; i < n; i++) {
        k[i].key = NULL;
        k[i].key_len = 0;
        k[i].next = &k[i + 1];
    }
    if (n) k[n - 1].next = NULL;
    if (n) {
        arr->u.kids.first = k;
        arr->u.kids.last = &k[n - 1];
        arr->u.kids.count = n;
    }
    return arr;
}

pm_meta *pm_meta_nums(pm_arena *a, const double *v, size_t n) {
    pm_meta *arr = pm__meta_block(a, n);
    for (pm_meta *k = arr ? arr->u.kids.first : NULL; k; k = k->next, v++) {
        k->kind = isfinite(*v) ? PM_META_NUM : PM_META_NULL;
        if (k->kind == PM_META_NUM) k->u.n = *v;
    }
    return arr;
}

pm_meta *pm_meta_ints(pm_arena *a, const int64_t *v, size_t n) {
    pm_meta *arr = pm__meta_block(a, n);
    for (pm_meta *k = arr ? arr->u.kids.first : NULL; k; k = k->next, v++) {
        k->kind = PM_META_INT;
        k->u.i = *v;
    }
    return arr;
}

pm_meta *pm_meta_table(pm_arena *a, const pm_meta_shape *shape, const void *rows, size_t n) {
    pm_meta *m = pm__meta_node(a, PM_META_TABLE);
    if (m) m->u.table.shape = shape, m->u.table.rows = rows, m->u.table.n = n;
    return m;
}

/* Column c of a row as a plain node, NULL when out of memory; *absent
 * when a META column holds no value. */
static pm_meta *pm__col_node(pm_arena *a, const pm_meta_col *c, const char *row, bool *absent) {
    const void *f = row + c->offset;
    *absent = false;
    switch (c->kind) {
    case PM_META_COL_I64: return pm_meta_int(a, *(const int64_t *)f);
    case PM_META_COL_U32: return pm_meta_int(a, *(const uint32_t *)f);
    case PM_META_COL_F64: return pm_meta_num(a, *(const double *)f);
    case PM_META_COL_BOOL: return pm_meta_bool(a, *(const bool *)f);
    case PM_META_COL_STR: {
        const char *str = *(const char *const *)f;
        return str ? pm_meta_str(a, str) : pm_meta_null(a);
    }
    case PM_META_COL_VAL: {
        const pm_meta_val *v = f;
        switch (v->kind) {
        case PM_META_BOOL: return pm_meta_bool(a, v->u.b);
        case PM_META_INT: return pm_meta_int(a, v->u.i);
        case PM_META_NUM: return pm_meta_num(a, v->u.n);
        case PM_META_STR: return v->u.s ? pm_meta_str(a, v->u.s) : pm_meta_null(a);
        default: return pm_meta_null(a);
        }
    }
    case PM_META_COL_U32X2: {
        const uint32_t *u = f;
        int64_t v[2] = {u[0], u[1]};
        return pm_meta_ints(a, v, 2);
    }
    case PM_META_COL_F64X3: return pm_meta_nums(a, f, 3);
    case PM_META_COL_U32S:
    case PM_META_COL_BOOLS: {
        const pm_meta_u32s *u = f;
        const pm_meta_bools *b = f;
        bool ints = c->kind == PM_META_COL_U32S;
        pm_meta *arr = pm__meta_block(a, ints ? u->n : b->n);
        size_t i = 0;
        for (pm_meta *k = arr ? arr->u.kids.first : NULL; k; k = k->next, i++) {
            k->kind = ints ? PM_META_INT : PM_META_BOOL;
            if (ints) k->u.i = u->v[i];
            else k->u.b = b->v[i];
        }
        return arr;
    }
    case PM_META_COL_META: {
        const pm_meta *v = *(const pm_meta *const *)f;
        if (!v) {
            *absent = true;
            return NULL;
        }
        return pm_meta_copy(a, v);
    }
    }
    return NULL;
}

/* A table's rows as a plain array of objects. */
static pm_meta *pm__table_copy(pm_arena *a, const pm_meta *m) {
    pm_meta *arr = pm_meta_arr(a);
    const pm_meta_shape *sh = m->u.table.shape;
    for (size_t r = 0; arr && r < m->u.table.n; r++) {
        const char *row = (const char *)m->u.table.rows + r * sh->row_size;
        pm_meta *o = pm_meta_obj(a);
        if (!o) return NULL;
        for (size_t c = 0; c < sh->ncols; c++) {
            bool absent;
            pm_meta *v = pm__col_node(a, &sh->cols[c], row, &absent);
            if (absent) continue;
            if (pm_meta_set(a, o, sh->cols[c].key, v)) return NULL;
        }
        pm__meta_append(arr, o);
    }
    return arr;
}

pm_meta *pm_meta_copy(pm_arena *a, const pm_meta *m) {
    pm_meta *c = m->kind == PM_META_TABLE ? pm__table_copy(a, m) : pm__meta_node(a, m->kind);
    if (!c) return NULL;
    if (m->key && !(c->key = pm_arena_strdup(a, m->key))) return NULL;
    c->key_len = m->key_len;
    if (m->kind == PM_META_STR) {
        c->u.s = pm_arena_strdup(a, m->u.s);
        return c->u.s ? c : NULL;
    }
    if (m->kind == PM_META_TABLE) return c;
    if (m->kind != PM_META_ARR && m->kind != PM_META_OBJ) {
        c->u = m->u;
        return c;
    }
    for (const pm_meta *k = m->u.kids.first; k; k = k->next) {
        pm_meta *kc = pm_meta_copy(a, k);
        if (!kc) return NULL;
        pm__meta_append(c, kc);
    }
    return c;
}
