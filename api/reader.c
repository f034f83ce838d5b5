#include "pm_api/reader.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fast.h"
#include "pm_api/bulk.h"
#include "pm_api/encode.h"
#include "pm_api/rows.h"

/* Reals up to this magnitude are exactly integral doubles; past it an
 * integer spelled as a real may already have lost digits. */
#define PM_API__EXACT_INT 9007199254740992.0 /* 2^53 */

/* ---- parsing the body ---- */

static bool pm_api__blank(const char *buf, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n') return false;
    return true;
}

/* jansson writes "duplicate object key near '"k"'": keep the quoted key. */
static void pm_api__dup_key(const char *text, char *out, size_t cap) {
    const char *near = strstr(text, "near '");
    if (!near) {
        snprintf(out, cap, "(unknown)");
        return;
    }
    near += 6;
    size_t n = strlen(near);
    if (n > 0 && near[n - 1] == '\'') n--;
    snprintf(out, cap, "%.*s", (int)n, near);
}

static int pm_api__parse_body(const char *buf, size_t len, bool rows, json_t **out,
                              pm_api_problem *p) {
    *out = NULL;
    if (!buf || pm_api__blank(buf, len)) {
        pm_api_problem_set(p, 400, "malformed-json", "Malformed JSON",
                           "the request body is empty; expected a JSON object");
        return -1;
    }
    /* The fast reader takes nearly every valid request; whatever it does
     * not take (every malformed one included) jansson reads, so errors keep
     * jansson's messages. */
    json_t *j = pm_api__json_fast(buf, len, rows);
    if (j) {
        *out = j;
        return 0;
    }
    json_error_t e;
    j = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
    if (!j) {
        if (json_error_code(&e) == json_error_duplicate_key) {
            char key[128];
            pm_api__dup_key(e.text, key, sizeof key);
            pm_api_problem_set(p, 400, "malformed-json", "Malformed JSON",
                               "duplicate key %s at line %d, column %d", key, e.line,
                               e.column);
        } else {
            pm_api_problem_set(p, 400, "malformed-json", "Malformed JSON",
                               "%s at line %d, column %d", e.text, e.line, e.column);
        }
        return -1;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        pm_api_problem_field(p, "", "must be a JSON object");
        return -1;
    }
    *out = j;
    return 0;
}

int pm_api_parse_body(const char *buf, size_t len, json_t **out, pm_api_problem *p) {
    return pm_api__parse_body(buf, len, false, out, p);
}

int pm_api_parse_body_rows(const char *buf, size_t len, json_t **out, pm_api_problem *p) {
    return pm_api__parse_body(buf, len, true, out, p);
}

/* A bulk array or row block: a jansson string that is no request string. */
static bool pm_api__opaque(const json_t *v) { return pm_api_bulk_is(v) || pm_api_rows_is(v); }

/* ---- the cursor ---- */

static void pm_api__oom(pm_api_problem *p) {
    pm_api_problem_set(p, 503, "out-of-memory", "Service Unavailable",
                       "out of memory while reading the request");
}

/* Where one read happens: the input value (NULL when absent) and where it
 * is (member key, or element index, of node n). Its pointer is written
 * only when something needs it (an error, a child node): a valid request
 * formats none for its scalars. */
typedef struct pm_api__slot {
    const json_t *v;
    const pm_api_node *n;
    const char *key;
    size_t index;
    bool formatted;
    char ptr[PM_API_POINTER_MAX];
} pm_api__slot;

/* The slot's JSON pointer written into out (cap bytes). */
static void pm_api__slot_write(const pm_api__slot *s, char *out, size_t cap) {
    if (s->formatted) snprintf(out, cap, "%s", s->ptr);
    else if (s->key) pm_api_pointer_join(out, cap, s->n->ptr, s->key);
    else pm_api_pointer_index(out, cap, s->n->ptr, s->index);
}

/* The slot's JSON pointer. */
static const char *pm_api__slot_ptr(pm_api__slot *s) {
    if (!s->formatted) {
        pm_api__slot_write(s, s->ptr, sizeof s->ptr);
        s->formatted = true;
    }
    return s->ptr;
}

/* Resolves key (objects) or the next element (arrays). Returns false on a
 * dead node: nothing to read, nothing to report. */
static bool pm_api__slot_open(pm_api_node *n, const char *key, pm_api__slot *s) {
    s->v = NULL;
    s->n = n;
    s->key = key;
    s->formatted = n->dead;
    s->ptr[0] = '\0';
    if (n->dead) return false;
    if (n->is_array) {
        assert(!key && n->next < n->len);
        s->index = n->next++;
        s->v = json_array_get(n->in, s->index);
    } else {
        assert(key);
        s->v = key == n->peek_key ? n->peek_v : n->in ? json_object_get(n->in, key) : NULL;
        n->read_present = s->v != NULL;
    }
    n->peek_key = NULL;   /* one read only: the input may change after it */
    return true;
}

const json_t *pm_api_peek(pm_api_node *n, const char *key) {
    n->peek_key = NULL;
    if (n->dead || n->is_array || !n->in) return NULL;
    n->peek_key = key;
    n->peek_v = json_object_get(n->in, key);
    return n->peek_v;
}

/* Stores val (a new reference, consumed) in the canonical form of n. An
 * array stores it as the element just read, an object under key. */
static int pm_api__put(pm_api_node *n, const char *key, json_t *val) {
    if (!val) {
        pm_api__oom(n->prob);
        return -1;
    }
    if (!n->canon) {
        json_decref(val);
        return -1;
    }
    if (n->is_array) {
        int r = json_array_append_new(n->canon, val);
        if (r < 0) pm_api__oom(n->prob);
        return r;
    }
    /* An input member stored under a new key is counted: when all of them
     * are, pm_api_end has no unknown member to look for. */
    bool present = n->read_present;
    n->read_present = false;
    size_t before = json_object_size(n->canon);
    int r = json_object_set_new_nocheck(n->canon, key, val);   /* keys: the parse's own literals */
    if (r < 0) pm_api__oom(n->prob);
    else if (present && json_object_size(n->canon) > before) n->known++;
    return r;
}

/* Records an error at the slot and marks the field as read (null). */
static int pm_api__fail(pm_api_node *n, const char *key, pm_api__slot *s,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int pm_api__fail(pm_api_node *n, const char *key, pm_api__slot *s,
                        const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pm_api_problem_field(n->prob, pm_api__slot_ptr(s), "%s", msg);
    pm_api__put(n, key, json_null());
    return -1;
}

static void pm_api__child_init(pm_api_node *n, pm_api_node *c, const pm_api__slot *s) {
    memset(c, 0, sizeof *c);
    c->prob = n->prob;
    c->dead = true;
    pm_api__slot_write(s, c->ptr, sizeof c->ptr);
}

void pm_api_begin(pm_api_node *root, const json_t *doc, pm_api_problem *p) {
    memset(root, 0, sizeof *root);
    root->prob = p;
    if (!doc || !json_is_object(doc)) {
        pm_api_problem_field(p, "", "must be a JSON object");
        root->dead = true;
        return;
    }
    root->in = doc;
    root->canon = json_object();
    if (!root->canon) {
        pm_api__oom(p);
        root->dead = true;
    }
}

json_t *pm_api_finish(pm_api_node *root) {
    pm_api_end(root);
    json_t *c = root->canon;
    root->canon = NULL;
    if (pm_api_problem_failed(root->prob)) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* Attaches a fresh canonical container to the parent and the child. */
static int pm_api__child_open(pm_api_node *n, const char *key, pm_api_node *c, json_t *in,
                              json_t *canon) {
    if (pm_api__put(n, key, canon) < 0) return -1;
    c->in = in;
    c->canon = canon;    /* borrowed: the parent's canonical form holds it */
    c->dead = false;
    return 0;
}

int pm_api_object(pm_api_node *n, const char *key, unsigned flags, pm_api_node *child) {
    pm_api__slot s;
    bool live = pm_api__slot_open(n, key, &s);
    pm_api__child_init(n, child, &s);
    if (!live) return -1;
    bool nullable = flags & PM_API_NULLABLE;
    if (!s.v) {
        if (flags & PM_API_REQUIRED) return pm_api__fail(n, key, &s, "is required");
        if (nullable && (flags & PM_API_ABSENT_OFF)) {
            pm_api__put(n, key, json_null());
            return 0;
        }
        return pm_api__child_open(n, key, child, NULL, json_object()) < 0 ? -1 : 1;
    }
    if (json_is_null(s.v) && nullable) {
        pm_api__put(n, key, json_null());
        return 0;
    }
    if (!json_is_object(s.v))
        return pm_api__fail(n, key, &s, nullable ? "must be an object or null"
                                                 : "must be an object");
    return pm_api__child_open(n, key, child, (json_t *)s.v, json_object()) < 0 ? -1 : 1;
}

/* A bulk array read element by element (pm_api_array) is replaced, in the
 * input document, by a JSON array of the same numbers: the rare path
 * (bulk arrays are meant for pm_api_vec) stays the ordinary one. Returns
 * the replacement (borrowed from the document), or NULL when out of memory. */
static const json_t *pm_api__expand_in_place(pm_api_node *n, const char *key, const json_t *v) {
    json_t *a = pm_api_rows_is(v) ? pm_api_rows_expand(v) : pm_api_bulk_expand(v);
    json_t *parent = (json_t *)n->in;
    int r = !a ? -1
            : n->is_array ? json_array_set(parent, n->next - 1, a)
                          : json_object_set(parent, key, a);
    json_decref(a);
    if (r < 0) {
        pm_api__oom(n->prob);
        return NULL;
    }
    return a;
}

static void pm_api__limit_suffix(char *out, size_t cap, const char *limit) {
    if (limit) snprintf(out, cap, " (limit %s)", limit);
    else out[0] = '\0';
}

size_t pm_api_array(pm_api_node *n, const char *key, unsigned flags, pm_api_irange len,
                    pm_api_node *child) {
    pm_api__slot s;
    bool live = pm_api__slot_open(n, key, &s);
    pm_api__child_init(n, child, &s);
    child->is_array = true;
    if (!live) return 0;
    if (!s.v && (flags & PM_API_REQUIRED)) {
        pm_api__fail(n, key, &s, "is required");
        return 0;
    }
    if (pm_api__opaque(s.v)) s.v = pm_api__expand_in_place(n, key, s.v);
    if (s.v && !json_is_array(s.v)) {
        pm_api__fail(n, key, &s, "must be an array");
        return 0;
    }
    size_t size = s.v ? json_array_size(s.v) : 0;
    char lim[96];
    /* A bad length is reported, and the elements (up to the maximum, so
     * caller buffers sized by it hold them) are still read: their errors
     * go into the same response. The canonical form is dropped anyway. */
    if (len.lo > 0 && size < (uint64_t)len.lo) {
        pm_api_problem_field(n->prob, pm_api__slot_ptr(&s), "must have at least %" PRId64 " item%s", len.lo,
                             len.lo == 1 ? "" : "s");
    } else if (len.hi >= 0 && size > (uint64_t)len.hi) {
        pm_api__limit_suffix(lim, sizeof lim, len.limit);
        pm_api_problem_field(n->prob, pm_api__slot_ptr(&s), "must have at most %" PRId64 " items%s", len.hi,
                             lim);
        size = (size_t)len.hi;
    }
    if (pm_api__child_open(n, key, child, (json_t *)s.v, json_array()) < 0) return 0;
    child->len = size;
    return size;
}

void pm_api_end(pm_api_node *c) {
    if (c->dead || !c->in || !c->canon) return;
    if (c->is_array) {
        assert(c->next == c->len && "read every element of an array before pm_api_end");
        return;
    }
    if (c->known == json_object_size(c->in)) return;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)c->in, k, v) {
        if (json_object_get(c->canon, k)) continue;
        char ptr[PM_API_POINTER_MAX];
        pm_api_pointer_join(ptr, sizeof ptr, c->ptr, k);
        pm_api_problem_field(c->prob, ptr, "unknown field");
    }
}

void pm_api_fail(pm_api_node *n, const char *key, const char *fmt, ...) {
    if (n->dead) return;
    char ptr[PM_API_POINTER_MAX], msg[256];
    if (key) pm_api_pointer_join(ptr, sizeof ptr, n->ptr, key);
    else snprintf(ptr, sizeof ptr, "%s", n->ptr);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pm_api_problem_field(n->prob, ptr, "%s", msg);
}

/* ---- scalar readers ---- */

/* The shortest of %.15g / %.17g that reads back as x, for messages. */
static void pm_api__fmt_num(char *out, size_t cap, double x) {
    snprintf(out, cap, "%.15g", x);
    if (strtod(out, NULL) != x) snprintf(out, cap, "%.17g", x);
}

/* Writes the violated bound of r into msg, or returns false when x fits. */
static bool pm_api__range_msg(pm_api_range r, double x, char *msg, size_t cap) {
    char b[40], lim[96];
    if (r.lo_open ? !(x > r.lo) : !(x >= r.lo)) {
        pm_api__fmt_num(b, sizeof b, r.lo);
        snprintf(msg, cap, "must be %s %s", r.lo_open ? ">" : ">=", b);
        return true;
    }
    if (r.hi_open ? !(x < r.hi) : !(x <= r.hi)) {
        pm_api__fmt_num(b, sizeof b, r.hi);
        pm_api__limit_suffix(lim, sizeof lim, r.limit);
        snprintf(msg, cap, "must be %s %s%s", r.hi_open ? "<" : "<=", b, lim);
        return true;
    }
    return false;
}

/* A field that is absent: required is an error, else the default. Returns
 * 1 when the caller should store def, -1 on error. */
static int pm_api__absent(pm_api_node *n, const char *key, pm_api__slot *s,
                          unsigned flags) {
    if (flags & PM_API_REQUIRED) return pm_api__fail(n, key, s, "is required");
    return 1;
}

static double pm_api__canon_real(double x) { return x == 0 ? 0.0 : x; }

int pm_api_num(pm_api_node *n, const char *key, unsigned flags, pm_api_range r, double def,
               double *out) {
    *out = def;
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        return pm_api__put(n, key, json_real(pm_api__canon_real(def)));
    }
    if (!json_is_number(s.v)) return pm_api__fail(n, key, &s, "must be a number");
    double x = json_number_value(s.v);
    if (!isfinite(x)) return pm_api__fail(n, key, &s, "must be finite");
    char msg[160];
    if (pm_api__range_msg(r, x, msg, sizeof msg)) return pm_api__fail(n, key, &s, "%s", msg);
    *out = pm_api__canon_real(x);
    return pm_api__put(n, key, json_real(*out));
}

/* Reads an integer value, also from an integral real up to 2^53. */
static bool pm_api__as_int(const json_t *v, int64_t *out) {
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (!json_is_real(v)) return false;
    double x = json_real_value(v);
    if (!(fabs(x) <= PM_API__EXACT_INT) || x != floor(x)) return false;
    *out = (int64_t)x;
    return true;
}

int pm_api_int(pm_api_node *n, const char *key, unsigned flags, pm_api_irange r, int64_t def,
               int64_t *out) {
    *out = def;
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        return pm_api__put(n, key, json_integer(def));
    }
    int64_t i;
    if (!pm_api__as_int(s.v, &i)) return pm_api__fail(n, key, &s, "must be an integer");
    if (i < r.lo) return pm_api__fail(n, key, &s, "must be >= %" PRId64, r.lo);
    if (i > r.hi) {
        char lim[96];
        pm_api__limit_suffix(lim, sizeof lim, r.limit);
        return pm_api__fail(n, key, &s, "must be <= %" PRId64 "%s", r.hi, lim);
    }
    *out = i;
    return pm_api__put(n, key, json_integer(i));
}

/* Parses a decimal string of 1..20 digits that fits in uint64. */
static bool pm_api__parse_u64(const char *t, uint64_t *out) {
    size_t len = strlen(t);
    if (len == 0 || len > 20 || strspn(t, "0123456789") != len) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static json_t *pm_api__u64_json(uint64_t v) {
    if (v <= (uint64_t)INT64_MAX) return json_integer((json_int_t)v);
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return json_string(buf);
}

int pm_api_u64(pm_api_node *n, const char *key, unsigned flags, uint64_t def, uint64_t *out) {
    *out = def;
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        return pm_api__put(n, key, pm_api__u64_json(def));
    }
    uint64_t v;
    int64_t i;
    if (json_is_string(s.v) && !pm_api__opaque(s.v)) {
        if (!pm_api__parse_u64(json_string_value(s.v), &v))
            return pm_api__fail(n, key, &s,
                                "must be a decimal string of digits up to 18446744073709551615");
    } else if (pm_api__as_int(s.v, &i)) {
        if (i < 0) return pm_api__fail(n, key, &s, "must be >= 0");
        v = (uint64_t)i;
    } else {
        return pm_api__fail(n, key, &s,
                            "must be an integer >= 0 (or a decimal string above 2^63-1)");
    }
    *out = v;
    return pm_api__put(n, key, pm_api__u64_json(v));
}

int pm_api_bool(pm_api_node *n, const char *key, unsigned flags, bool def, bool *out) {
    *out = def;
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        return pm_api__put(n, key, json_boolean(def));
    }
    if (!json_is_boolean(s.v)) return pm_api__fail(n, key, &s, "must be a boolean");
    *out = json_is_true(s.v);
    return pm_api__put(n, key, json_boolean(*out));
}

int pm_api_enum(pm_api_node *n, const char *key, unsigned flags, const char *const *names,
                int def, int *out) {
    *out = def;
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        return pm_api__put(n, key, json_string(names[def]));
    }
    const char *str = pm_api__opaque(s.v) ? NULL : json_string_value(s.v);
    for (int i = 0; str && names[i]; i++) {
        if (strcmp(str, names[i]) == 0) {
            *out = i;
            return pm_api__put(n, key, json_string(names[i]));
        }
    }
    char list[200];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; names[i] && len + 1 < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
    return pm_api__fail(n, key, &s, "must be one of: %s", list);
}

int pm_api_str(pm_api_node *n, const char *key, unsigned flags, size_t max_len,
               const char *def, char *out, size_t cap) {
    assert(cap > max_len);
    size_t dl = def ? strlen(def) : 0;
    if (dl >= cap) dl = cap - 1;
    if (dl) memcpy(out, def, dl);
    out[dl] = '\0';
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        return pm_api__put(n, key, json_string(out));
    }
    if (!json_is_string(s.v) || pm_api__opaque(s.v))
        return pm_api__fail(n, key, &s, "must be a string");
    if (json_string_length(s.v) > max_len)
        return pm_api__fail(n, key, &s, "must be at most %zu bytes long", max_len);
    memcpy(out, json_string_value(s.v), json_string_length(s.v) + 1);
    /* The input string is the canonical one (checked UTF-8, no NUL):
     * shared, not copied; canonical forms are never modified. */
    return pm_api__put(n, key, json_incref((json_t *)s.v));
}

static void pm_api__vec_default(const double *def, size_t n, double *out, size_t *count) {
    if (def) memcpy(out, def, n * sizeof *out);
    if (count) *count = n;
}

/* A canonical array of reals; NULL when out of memory. */
static json_t *pm_api__reals(const double *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, json_real(pm_api__canon_real(v[i]))) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* The canonical array of the input array in, whose n elements were read
 * into v. An input real that is already canonical (not -0) is shared, not
 * copied: large arrays then cost no allocation per number. Canonical forms
 * are never modified, so sharing with the input document is safe. */
static json_t *pm_api__reals_of(const json_t *in, const double *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *e = json_array_get(in, i);
        int r = json_is_real(e) && !(v[i] == 0 && signbit(json_real_value(e)))
                    ? json_array_append(a, e)
                    : json_array_append_new(a, json_real(v[i]));
        if (r < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Why element e is not a finite number in r (msg holds a range message),
 * or NULL when it is one. Formats nothing for a good element. */
static const char *pm_api__num_why(const json_t *e, pm_api_range r, char *msg, size_t cap) {
    if (!json_is_number(e)) return "must be a number";
    double x = json_number_value(e);
    if (!isfinite(x)) return "must be finite";
    return pm_api__range_msg(r, x, msg, cap) ? msg : NULL;
}

/* Reads the n elements of array in into out (canonical values) and
 * reports every bad one at its own pointer below the slot at. The pointer is
 * only formatted for an error: a large valid array costs no formatting. */
static bool pm_api__read_nums(const json_t *in, size_t n, pm_api_range r, pm_api__slot *at,
                              pm_api_problem *prob, double *out) {
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(in, i);
        char msg[160];
        const char *why = pm_api__num_why(e, r, msg, sizeof msg);
        if (!why) {
            out[i] = pm_api__canon_real(json_number_value(e));
            continue;
        }
        char ptr[PM_API_POINTER_MAX];
        pm_api_pointer_index(ptr, sizeof ptr, pm_api__slot_ptr(at), i);
        pm_api_problem_field(prob, ptr, "%s", why);
        ok = false;
    }
    return ok;
}

/* The closed finite bounds of r for the one-pass check: an open bound is
 * the closed one at the next double inwards, and the bounds are made
 * finite so that the range check is the finiteness check too. */
static void pm_api__bulk_bounds(pm_api_range r, double *lo, double *hi) {
    double l = r.lo_open ? nextafter(r.lo, HUGE_VAL) : r.lo;
    double h = r.hi_open ? nextafter(r.hi, -HUGE_VAL) : r.hi;
    *lo = l < -DBL_MAX ? -DBL_MAX : l;
    *hi = h > DBL_MAX ? DBL_MAX : h;
}

/* Element i (value x) of a bulk array below the slot at: true when it is finite
 * and in r, else reported at its own pointer. */
static bool pm_api__bulk_elem_ok(double x, size_t i, pm_api_range r, pm_api__slot *at,
                                 pm_api_problem *prob) {
    bool in_range = (r.lo_open ? x > r.lo : x >= r.lo) && (r.hi_open ? x < r.hi : x <= r.hi);
    if (in_range && isfinite(x)) return true;
    char msg[160], ptr[PM_API_POINTER_MAX];
    const char *why = !isfinite(x) ? "must be finite"
                      : pm_api__range_msg(r, x, msg, sizeof msg) ? msg : "is out of range";
    pm_api_pointer_index(ptr, sizeof ptr, pm_api__slot_ptr(at), i);
    pm_api_problem_field(prob, ptr, "%s", why);
    return false;
}

/* The bulk counterpart of pm_api__read_nums: the values are converted,
 * checked (finite, in r) and -0 made 0 in one pass (pm_api/bulk.h); only
 * when one fails are they walked again to name each bad one. *neg0 tells
 * whether the input held a -0. */
static bool pm_api__read_bulk(const json_t *in, size_t n, pm_api_range r, pm_api__slot *at,
                              pm_api_problem *prob, double *out, bool *neg0) {
    double lo, hi;
    pm_api__bulk_bounds(r, &lo, &hi);
    unsigned got = pm_api_bulk_get_checked(in, 0, n, lo, hi, out);
    *neg0 = (got & PM_API_BULK_NEG_ZERO) != 0;
    if (got & PM_API_BULK_IN_RANGE) return true;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (pm_api__bulk_elem_ok(out[i], i, r, at, prob)) out[i] = pm_api__canon_real(out[i]);
        else ok = false;
    }
    return ok;
}

/* pm_api__read_nums with pm_api__read_bulk's signature. */
static bool pm_api__read_array(const json_t *in, size_t n, pm_api_range r, pm_api__slot *at,
                               pm_api_problem *prob, double *out, bool *neg0) {
    *neg0 = true;   /* nothing to share */
    return pm_api__read_nums(in, n, r, at, prob, out);
}

/* The canonical array of the n values v read from in: a bulk array from
 * PM_API_BULK_CANON_MIN numbers on (the cache key hashes its doubles),
 * whether the input was JSON text or binary. A bulk input holds exactly
 * the canonical values once its -0 are 0, and is shared, not copied
 * (canonical forms are never modified), unless it refers to values it does
 * not hold (pm_api_bulk_f32_ref: the request body's). */
static json_t *pm_api__vec_canon(const json_t *in, const double *v, size_t n, bool neg0) {
    if (n >= PM_API_BULK_CANON_MIN && pm_api_bulk_is(in) && !pm_api_bulk_is_ref(in)) {
        if (neg0) pm_api_bulk_zero_neg0(in);   /* rare: then it is canonical */
        return json_incref((json_t *)in);
    }
    if (n >= PM_API_BULK_CANON_MIN) return pm_api_bulk_new(v, n);
    return pm_api_bulk_is(in) ? pm_api__reals(v, n) : pm_api__reals_of(in, v, n);
}

int pm_api_vec(pm_api_node *n, const char *key, unsigned flags, size_t min_n, size_t max_n,
               pm_api_range r, const double *def, double *out, size_t *count) {
    assert(min_n <= max_n && max_n > 0);
    pm_api__vec_default(def, min_n, out, count);
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    if (!s.v) {
        if (pm_api__absent(n, key, &s, flags) < 0) return -1;
        assert(def);
        return pm_api__put(n, key, pm_api__reals(def, min_n));
    }
    if (pm_api_rows_is(s.v) && !(s.v = pm_api__expand_in_place(n, key, s.v))) return -1;
    bool bulk = pm_api_bulk_is(s.v), arr = bulk || json_is_array(s.v);
    size_t len = bulk ? pm_api_bulk_len(s.v) : json_is_array(s.v) ? json_array_size(s.v) : 0;
    bool (*read)(const json_t *, size_t, pm_api_range, pm_api__slot *, pm_api_problem *, double *,
                 bool *) = bulk ? pm_api__read_bulk : pm_api__read_array;
    bool neg0;
    if (!arr || len < min_n || len > max_n) {
        if (min_n == max_n)
            pm_api__fail(n, key, &s, "must be an array of %zu numbers", min_n);
        else
            pm_api__fail(n, key, &s, "must be an array of %zu to %zu numbers", min_n, max_n);
        /* The elements there are still checked (all errors in one response). */
        read(s.v, len < max_n ? len : max_n, r, &s, n->prob, out, &neg0);
        pm_api__vec_default(def, min_n, out, count);
        return -1;
    }
    if (!read(s.v, len, r, &s, n->prob, out, &neg0)) {
        pm_api__vec_default(def, min_n, out, count);
        pm_api__put(n, key, json_null());
        return -1;
    }
    if (count) *count = len;
    return pm_api__put(n, key, pm_api__vec_canon(s.v, out, len, neg0));
}

int pm_api_vec_f32(pm_api_node *n, const char *key, size_t count, pm_api_range r, float *out) {
    pm_api__slot s;
    if (!pm_api__slot_open(n, key, &s)) return -1;
    assert(pm_api_bulk_is_f32(s.v));
    size_t len = pm_api_bulk_len(s.v);
    double lo, hi;
    pm_api__bulk_bounds(r, &lo, &hi);
    unsigned got = len == count ? pm_api_bulk_f32_checked(s.v, lo, hi, out) : 0;
    if (len != count) pm_api__fail(n, key, &s, "must be an array of %zu numbers", count);
    if (!(got & PM_API_BULK_IN_RANGE)) {   /* every bad element named, as pm_api_vec does */
        for (size_t i = 0; i < len && i < count; i++)
            pm_api__bulk_elem_ok(pm_api_bulk_at(s.v, i), i, r, &s, n->prob);
        if (len == count) pm_api__put(n, key, json_null());
        return -1;
    }
    /* pm_api__vec_canon's choice, without doubles: the values checked
     * into out (-0 made 0), referred to, not copied. out outlives the
     * canonical form: the caller's arena, which a job frees last. */
    if (count >= PM_API_BULK_CANON_MIN) return pm_api__put(n, key, pm_api_bulk_f32_ref(out, count));
    double v[PM_API_BULK_CANON_MIN];
    for (size_t i = 0; i < count; i++) v[i] = out[i];
    return pm_api__put(n, key, pm_api__reals(v, count));
}

double *pm_api_rows(pm_api_node *n, const char *key, unsigned flags, pm_api_irange len,
                    size_t cols, pm_api_range r, pm_arena *arena, size_t *count) {
    assert(key && !n->is_array && cols > 0);
    *count = 0;
    const json_t *v = n->dead ? NULL : json_object_get(n->in, key);
    size_t rows = pm_api_rows_count(v);
    if (pm_api_rows_cols(v) == cols && (len.hi < 0 || rows <= (uint64_t)len.hi) &&
        (len.lo <= 0 || rows >= (uint64_t)len.lo)) {
        /* The row block as read: every value checked in one pass, the
         * block itself the canonical form (its -0 are 0 already). */
        double *out = pm_arena_alloc(arena, rows * cols * sizeof(double));
        const char *data = json_string_value(v) + PM_API_ROWS_HEAD;
        double lo, hi;
        pm_api__bulk_bounds(r, &lo, &hi);
        bool ok = out != NULL;
        for (size_t i = 0; ok && i < rows * cols; i++) {
            memcpy(&out[i], data + i * sizeof(double), sizeof(double));
            ok = out[i] >= lo && out[i] <= hi;
        }
        if (ok) {
            *count = rows;
            return pm_api__put(n, key, json_incref((json_t *)v)) == 0 ? out : NULL;
        }
    }
    /* Anything else (a bad value, length or shape, JSON arrays): element by
     * element, with every error at its own pointer. */
    pm_api_node arr;
    size_t m = pm_api_array(n, key, flags, len, &arr);
    double *out = pm_arena_alloc(arena, (m ? m : 1) * cols * sizeof(double));
    if (!out) {
        pm_api__oom(n->prob);
        return NULL;
    }
    for (size_t i = 0; i < m; i++)
        pm_api_vec(&arr, NULL, PM_API_REQUIRED, cols, cols, r, NULL, out + cols * i, NULL);
    pm_api_end(&arr);
    *count = m;
    /* The canonical form is a row block however the rows came (the cache
     * key hashes their values in binary): the arrays just put are
     * replaced. With an error there is no canonical form to keep. */
    if (!pm_api_problem_failed(n->prob) && pm_api__put(n, key, pm_api_rows_new(out, m, cols)) < 0)
        return NULL;
    return out;
}

/* ---- GET query strings ---- */

static bool pm_api__is_int_text(const char *t) {
    const char *d = t + (*t == '-');
    return *d && strspn(d, "0123456789") == strlen(d);
}

/* A decimal number literal (no hex, no inf/nan, no blanks). */
static bool pm_api__parse_num_text(const char *t, double *out) {
    if (!*t || strspn(t, "0123456789+-.eE") != strlen(t)) return false;
    char *end;
    errno = 0;
    double x = strtod(t, &end);
    if (*end || errno == ERANGE || !isfinite(x)) return false;
    *out = x;
    return true;
}

/* One number of a query value: an integer literal stays an integer. */
static json_t *pm_api__query_number(const char *t) {
    if (pm_api__is_int_text(t)) {
        errno = 0;
        char *end;
        long long v = strtoll(t, &end, 10);
        if (errno == ERANGE) return NULL;
        return json_integer((json_int_t)v);
    }
    double x;
    return pm_api__parse_num_text(t, &x) ? json_real(x) : NULL;
}

static json_t *pm_api__query_pair(const char *t) {
    const char *x = strpbrk(t, "xX");
    if (!x || x == t || !x[1]) return NULL;
    char left[64];
    if ((size_t)(x - t) >= sizeof left) return NULL;
    memcpy(left, t, (size_t)(x - t));
    left[x - t] = '\0';
    json_t *a = pm_api__query_number(left), *b = pm_api__query_number(x + 1);
    if (!a || !b) {
        json_decref(a);
        json_decref(b);
        return NULL;
    }
    return json_pack("[o, o]", a, b);
}

/* Converts one value by type; NULL with *why set when it has the wrong shape. */
static json_t *pm_api__query_value(pm_api_qtype type, const char *t, const char **why) {
    uint64_t u;
    double x;
    switch (type) {
    case PM_API_Q_INT:
        *why = "must be an integer";
        return pm_api__is_int_text(t) ? pm_api__query_number(t) : NULL;
    case PM_API_Q_U64:
        *why = "must be an integer from 0 to 18446744073709551615";
        return pm_api__parse_u64(t, &u) ? pm_api__u64_json(u) : NULL;
    case PM_API_Q_NUM:
        *why = "must be a number";
        return pm_api__parse_num_text(t, &x) ? json_real(x) : NULL;
    case PM_API_Q_STR:
        *why = "must be a string";
        return json_string(t);
    case PM_API_Q_PAIR:
        *why = "must be two numbers written WxD, such as 10x20";
        return pm_api__query_pair(t);
    }
    *why = "has an unknown type";
    return NULL;
}

json_t *pm_api_query_doc(const pm_api_qparam *table, size_t nt, const pm_api_query_pair *q,
                         size_t n, pm_api_problem *p) {
    json_t *doc = json_object();
    if (!doc) {
        pm_api__oom(p);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (pm_api_output_param(q[i].key)) continue;   /* the service reads these */
        char ptr[PM_API_POINTER_MAX];
        pm_api_pointer_join(ptr, sizeof ptr, "", q[i].key);
        const pm_api_qparam *e = NULL;
        for (size_t j = 0; j < nt && !e; j++)
            if (strcmp(table[j].name, q[i].key) == 0) e = &table[j];
        if (!e) {
            pm_api_problem_field(p, ptr, "unknown query parameter");
            continue;
        }
        if (json_object_get(doc, e->name)) {
            pm_api_problem_field(p, ptr, "is given more than once");
            continue;
        }
        const char *why = NULL;
        json_t *v = pm_api__query_value(e->type, q[i].value ? q[i].value : "", &why);
        if (!v) pm_api_problem_field(p, ptr, "%s", why);
        else if (json_object_set_new(doc, e->name, v) < 0) pm_api__oom(p);
    }
    if (pm_api_problem_failed(p)) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}
