#define _GNU_SOURCE /* memmem */
#include "pm_api/multipart.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest_png.h"
#include "pm_api/bulk.h"
#include "pm_api/reader.h"

/* multipart/form-data (RFC 7578) as browsers' FormData and curl -F send
 * it: a "request" part holding the JSON document, and binary parts named
 * by the JSON pointer of the numeric array they supply (docs/road.md
 * "Binary heightfields"). */

#define PM_MP_BOUNDARY_MAX 70   /* RFC 2046 */
#define PM_MP_MAX_PARTS 16

typedef struct pm_mp_part {
    char name[PM_API_POINTER_MAX];
    char ctype[128];
    const char *data;
    size_t len;
} pm_mp_part;

static void pm_mp__bad(pm_api_problem *p, const char *why) {
    pm_api_problem_set(p, 400, "malformed-multipart", "Malformed multipart body", "%s", why);
}

/* The boundary parameter of a multipart/form-data media type, or false. */
static bool pm_mp__boundary(const char *ct, char *out) {
    const char *b = NULL;
    for (const char *q = strchr(ct, ';'); q; q = strchr(q + 1, ';')) {
        q++;
        while (*q == ' ' || *q == '\t') q++;
        if (strncasecmp(q, "boundary=", 9) == 0) {
            b = q + 9;
            break;
        }
    }
    if (!b) return false;
    size_t n;
    if (*b == '"') {
        const char *e = strchr(++b, '"');
        if (!e) return false;
        n = (size_t)(e - b);
    } else {
        n = strcspn(b, "; \t");
    }
    if (n == 0 || n > PM_MP_BOUNDARY_MAX) return false;
    memcpy(out, b, n);
    out[n] = '\0';
    return true;
}

int pm_api_is_multipart(const char *ct) {
    if (!ct) return 0;
    while (*ct == ' ' || *ct == '\t') ct++;
    return strncasecmp(ct, "multipart/form-data", 19) == 0 &&
           (ct[19] == '\0' || ct[19] == ';' || ct[19] == ' ' || ct[19] == '\t');
}

/* The value of parameter param (name, filename) in a Content-Disposition
 * line [h, e), quoted or not. */
static bool pm_mp__param(const char *h, const char *e, const char *param, char *out, size_t cap) {
    size_t pl = strlen(param);
    for (const char *q = h; q + pl + 1 < e; q++) {
        if ((q[-1] != ';' && q[-1] != ' ' && q[-1] != '\t') || strncasecmp(q, param, pl) != 0 ||
            q[pl] != '=')
            continue;
        const char *v = q + pl + 1, *ve;
        if (*v == '"') {
            v++;
            ve = memchr(v, '"', (size_t)(e - v));
            if (!ve) return false;
        } else {
            for (ve = v; ve < e && *ve != ';' && *ve != ' '; ve++) {}
        }
        if ((size_t)(ve - v) >= cap) return false;
        memcpy(out, v, (size_t)(ve - v));
        out[ve - v] = '\0';
        return true;
    }
    return false;
}

/* Reads the headers of one part, [h, e) (CRLF separated). */
static bool pm_mp__headers(const char *h, const char *e, pm_mp_part *part) {
    part->name[0] = '\0';
    snprintf(part->ctype, sizeof part->ctype, "application/octet-stream");
    while (h < e) {
        const char *le = h;
        while (le + 1 < e && !(le[0] == '\r' && le[1] == '\n')) le++;
        if (le + 1 >= e) le = e;
        if ((size_t)(le - h) > 20 && strncasecmp(h, "Content-Disposition:", 20) == 0) {
            if (!pm_mp__param(h + 20, le, "name", part->name, sizeof part->name)) return false;
        } else if ((size_t)(le - h) > 13 && strncasecmp(h, "Content-Type:", 13) == 0) {
            const char *v = h + 13;
            while (v < le && (*v == ' ' || *v == '\t')) v++;
            size_t n = (size_t)(le - v);
            if (n >= sizeof part->ctype) n = sizeof part->ctype - 1;
            memcpy(part->ctype, v, n);
            part->ctype[n] = '\0';
        }
        h = le + 2;
    }
    return part->name[0] != '\0';
}

/* The first delimiter in [q, e), or NULL. Every delimiter starts with CR:
 * memchr skips the bytes between CRs (most of a binary part) at memory
 * speed, where a general substring search looks at each of them. */
static const char *pm_mp__find(const char *q, const char *e, const char *delim, size_t dl) {
    while ((size_t)(e - q) >= dl) {
        const char *c = memchr(q, '\r', (size_t)(e - q) - dl + 1);
        if (!c) return NULL;
        if (memcmp(c, delim, dl) == 0) return c;
        q = c + 1;
    }
    return NULL;
}

/* Splits body into parts. Returns the count, or -1 with p set. */
static int pm_mp__split(const char *body, size_t len, const char *boundary, pm_mp_part *parts,
                        pm_api_problem *p) {
    char delim[PM_MP_BOUNDARY_MAX + 5];
    int dl = snprintf(delim, sizeof delim, "\r\n--%s", boundary);
    const char *e = body + len;
    /* The first delimiter may open the body (no preamble, no CRLF). */
    const char *q;
    if (len >= (size_t)dl - 2 && memcmp(body, delim + 2, (size_t)dl - 2) == 0) q = body + dl - 2;
    else if ((q = pm_mp__find(body, e, delim, (size_t)dl))) q += dl;
    else return pm_mp__bad(p, "no part starts with the boundary of the Content-Type"), -1;
    int n = 0;
    for (;;) {
        if (e - q >= 2 && q[0] == '-' && q[1] == '-') return n;   /* the closing delimiter */
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        if (e - q < 2 || q[0] != '\r' || q[1] != '\n') break;
        q += 2;
        const char *he = memmem(q, (size_t)(e - q), "\r\n\r\n", 4);
        if (q + 2 <= e && q[0] == '\r' && q[1] == '\n') he = q - 2;   /* no headers */
        if (!he) break;
        if (n == PM_MP_MAX_PARTS) {
            pm_mp__bad(p, "more than 16 parts");
            return -1;
        }
        if (!pm_mp__headers(q, he, &parts[n])) {
            pm_mp__bad(p, "a part has no Content-Disposition: form-data; name=\"...\"");
            return -1;
        }
        const char *d = he + 4;
        const char *de = pm_mp__find(d, e, delim, (size_t)dl);
        if (!de) break;
        parts[n].data = d;
        parts[n].len = (size_t)(de - d);
        n++;
        q = de + dl;
    }
    pm_mp__bad(p, "the body does not end with the closing boundary delimiter");
    return -1;
}

/* Finds the parent object of pointer ptr in doc and the member's name
 * (unescaped). NULL when the parent is not an object of the request. */
static json_t *pm_mp__parent(json_t *doc, const char *ptr, char *member, size_t cap) {
    json_t *cur = doc;
    const char *t = ptr + 1;
    for (;;) {
        size_t n = 0;
        const char *q = t;
        for (; *q && *q != '/'; q++) {
            if (n + 1 >= cap) return NULL;
            if (*q == '~' && (q[1] == '0' || q[1] == '1')) member[n++] = q[1] == '0' ? '~' : '/', q++;
            else member[n++] = *q;
        }
        member[n] = '\0';
        if (!*q) return json_is_object(cur) ? cur : NULL;
        if (json_is_object(cur)) cur = json_object_get(cur, member);
        else if (json_is_array(cur)) cur = json_array_get(cur, strtoul(member, NULL, 10));
        else return NULL;
        t = q + 1;
    }
}

static bool pm_mp__is_type(const char *ct, const char *want) {
    size_t n = strlen(want);
    return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* The integer member key of obj, or -1. */
static long long pm_mp__int(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v)) return json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) == (double)(long long)json_real_value(v))
        return (long long)json_real_value(v);
    return -1;
}

static const char *pm_mp__color_name(int t) {
    switch (t) {
    case 2: return "RGB";
    case 3: return "palette";
    case 4: return "grayscale with alpha";
    case 6: return "RGBA";
    default: return "unknown";
    }
}

/* An image/png part as a bulk array: a grayscale image whose width and
 * height are the cols and rows beside it in parent. NULL with p set. */
static json_t *pm_mp__png(const json_t *parent, const pm_mp_part *part, const pm_api_ingest *o,
                          pm_api_problem *p) {
    pm_api__png_info info;
    const unsigned char *d = (const unsigned char *)part->data;
    if (pm_api__png_info_read(d, part->len, &info) < 0) {
        pm_api_problem_field(p, part->name, "is image/png but not a PNG image (no PNG "
                             "signature and IHDR chunk)");
        return NULL;
    }
    if (info.color_type != 0) {
        pm_api_problem_field(p, part->name, "must be a grayscale PNG without alpha (colour "
                             "type 0), not %s (colour type %d)",
                             pm_mp__color_name(info.color_type), info.color_type);
        return NULL;
    }
    if (info.depth != 8 && info.depth != 16) {
        pm_api_problem_field(p, part->name, "must have 8 or 16 bits per sample, not %d",
                             info.depth);
        return NULL;
    }
    long long cols = pm_mp__int(parent, "cols"), rows = pm_mp__int(parent, "rows");
    if (cols < 0 || rows < 0) {
        pm_api_problem_field(p, part->name, "an image needs integer cols and rows beside it "
                             "in the request part (its width and height)");
        return NULL;
    }
    if (info.width != (unsigned long long)cols || info.height != (unsigned long long)rows) {
        pm_api_problem_field(p, part->name, "is a %u x %u image, but cols x rows in the request "
                             "is %lld x %lld (width = cols, height = rows)",
                             info.width, info.height, cols, rows);
        return NULL;
    }
    size_t n = (size_t)info.width * info.height;
    char *buf = malloc(PM_API_BULK_TAG_LEN + n * sizeof(double));
    char why[160];
    if (!buf) {
        pm_api_problem_set(p, 503, "out-of-memory", "Service Unavailable",
                           "out of memory while reading the request");
        return NULL;
    }
    if (pm_api__png_decode(d, part->len, &info, o->png_scale, o->png_offset,
                           (double *)(void *)(buf + PM_API_BULK_TAG_LEN), why, sizeof why) < 0) {
        pm_api_problem_field(p, part->name, "is not a readable PNG: %s", why);
        free(buf);
        return NULL;
    }
    json_t *j = pm_api_bulk_adopt(buf, n);
    free(buf);
    if (!j)
        pm_api_problem_set(p, 503, "out-of-memory", "Service Unavailable",
                           "out of memory while reading the request");
    return j;
}

/* Places the binary part in doc at its pointer; 422 at the pointer when
 * it cannot go there. Returns 1 when the part was an image. */
static int pm_mp__place(json_t *doc, const pm_mp_part *part,
                        const pm_api_ingest *o, pm_api_problem *p) {
    char member[PM_API_POINTER_MAX];
    if (part->name[0] != '/') {
        pm_api_problem_field(p, "", "multipart part \"%s\" is neither \"request\" nor a JSON "
                             "pointer such as /terrain/heights", part->name);
        return 0;
    }
    bool png = pm_mp__is_type(part->ctype, "image/png");
    if (!png && !pm_mp__is_type(part->ctype, "application/octet-stream")) {
        pm_api_problem_field(p, part->name, "a binary part must be application/octet-stream "
                             "(float32 little-endian) or image/png (a grayscale heightmap), "
                             "not %s", part->ctype);
        return 0;
    }
    json_t *parent = pm_mp__parent(doc, part->name, member, sizeof member);
    if (!parent) {
        pm_api_problem_field(p, part->name, "has no object to go into in the request part");
        return png;
    }
    if (json_object_get(parent, member)) {
        pm_api_problem_field(p, part->name, "is given both in the request part and as a part");
        return png;
    }
    if (png) {
        json_t *v = pm_mp__png(parent, part, o, p);
        if (v && json_object_set_new(parent, member, v) < 0)
            pm_api_problem_set(p, 503, "out-of-memory", "Service Unavailable",
                               "out of memory while reading the request");
        return 1;
    }
    if (part->len % 4) {
        pm_api_problem_field(p, part->name, "must be float32 little-endian: %zu bytes is not "
                             "a multiple of 4", part->len);
        return 0;
    }
    /* A float32 bulk array that refers to the part's bytes in the body, not
     * a copy: the reader checks them into the job's memory in one pass, and
     * the body outlives that (pm_api/request.h). */
    json_t *v = pm_api_bulk_f32_ref(part->data, part->len / 4);
    if (!v || json_object_set_new(parent, member, v) < 0)
        pm_api_problem_set(p, 503, "out-of-memory", "Service Unavailable",
                           "out of memory while reading the request");
    return 0;
}

/* Options given for images the body does not have. */
static void pm_mp__unused_options(const pm_api_ingest *o, pm_api_problem *p) {
    if (!o->given) return;
    pm_api_problem_field(p, o->given & 1 ? "/png_scale" : "/png_offset",
                         "applies only to an image/png part of a multipart/form-data body "
                         "(a PNG heightmap), and the body has none");
}

static int pm_mp__parse(const char *buf, size_t len, const char *content_type,
                        const pm_api_ingest *o, json_t **out, pm_api_problem *p) {
    *out = NULL;
    char boundary[PM_MP_BOUNDARY_MAX + 1];
    if (!pm_mp__boundary(content_type, boundary)) {
        pm_mp__bad(p, "multipart/form-data needs a boundary parameter of 1 to 70 characters");
        return -1;
    }
    pm_mp_part parts[PM_MP_MAX_PARTS];
    int n = pm_mp__split(buf ? buf : "", buf ? len : 0, boundary, parts, p);
    if (n < 0) return -1;
    const pm_mp_part *req = NULL;
    for (int i = 0; i < n; i++) {
        if (strcmp(parts[i].name, "request") != 0) continue;
        if (req) {
            pm_mp__bad(p, "more than one part is named \"request\"");
            return -1;
        }
        req = &parts[i];
    }
    if (!req) {
        pm_mp__bad(p, "no part is named \"request\" (the JSON document)");
        return -1;
    }
    json_t *doc;
    if (pm_api_parse_body(req->data, req->len, &doc, p) < 0) return -1;
    int images = 0;
    for (int i = 0; i < n && !pm_api_problem_failed(p); i++) {
        if (&parts[i] == req) continue;
        for (int k = 0; k < i; k++)
            if (strcmp(parts[k].name, parts[i].name) == 0)
                pm_api_problem_field(p, parts[i].name, "is given as more than one part");
        if (!pm_api_problem_failed(p)) images += pm_mp__place(doc, &parts[i], o, p);
    }
    if (!images && !pm_api_problem_failed(p)) pm_mp__unused_options(o, p);
    if (pm_api_problem_failed(p)) {
        json_decref(doc);
        return -1;
    }
    *out = doc;
    return 0;
}

int pm_api_parse_multipart(const char *buf, size_t len, const char *content_type, json_t **out,
                           pm_api_problem *p) {
    pm_api_ingest o = PM_API_INGEST_DEFAULT;
    return pm_mp__parse(buf, len, content_type, &o, out, p);
}

long long pm_api_multipart_request_len(const char *buf, size_t len, const char *content_type,
                                       size_t *decoded) {
    char boundary[PM_MP_BOUNDARY_MAX + 1];
    if (!pm_mp__boundary(content_type, boundary)) return -1;
    pm_mp_part parts[PM_MP_MAX_PARTS];
    pm_api_problem p;
    pm_api_problem_init(&p);
    int n = pm_mp__split(buf ? buf : "", buf ? len : 0, boundary, parts, &p);
    pm_api_problem_free(&p);
    long long json = -1;
    size_t more = 0;
    for (int i = 0; i < n; i++) {
        pm_api__png_info info;
        if (strcmp(parts[i].name, "request") == 0) json = (long long)parts[i].len;
        else if (pm_mp__is_type(parts[i].ctype, "image/png") &&
                 pm_api__png_info_read((const unsigned char *)parts[i].data, parts[i].len, &info) == 0)
            more += pm_api__png_decode_bytes(&info);
        else more += parts[i].len * 4;   /* at most doubles read from it, and their canonical copy */
    }
    if (decoded) *decoded = more;
    return json;
}

int pm_api_ingest_query(const char *png_scale, const char *png_offset, pm_api_ingest *o,
                        pm_api_problem *p) {
    *o = PM_API_INGEST_DEFAULT;
    const char *v[2] = {png_scale, png_offset};
    double *dst[2] = {&o->png_scale, &o->png_offset};
    for (int i = 0; i < 2; i++) {
        if (!v[i]) continue;
        o->given |= 1u << i;
        char *end;
        double x = strtod(v[i], &end);
        const char *ptr = i ? "/png_offset" : "/png_scale";
        if (!*v[i] || *end || !isfinite(x))
            pm_api_problem_field(p, ptr, "must be a finite number, not \"%.40s\"", v[i]);
        else if (i == 0 && x == 0.0)
            pm_api_problem_field(p, ptr, "must not be 0 (height = png_offset + png_scale x sample)");
        else *dst[i] = x;
    }
    return pm_api_problem_failed(p) ? -1 : 0;
}

int pm_api_parse_request_with(const char *buf, size_t len, const char *content_type,
                              const pm_api_ingest *o, json_t **out, pm_api_problem *p) {
    if (pm_api_is_multipart(content_type)) return pm_mp__parse(buf, len, content_type, o, out, p);
    *out = NULL;
    if (o->given) {
        pm_mp__unused_options(o, p);
        return -1;
    }
    return pm_api_parse_body(buf, len, out, p);
}

int pm_api_parse_request(const char *buf, size_t len, const char *content_type, json_t **out,
                         pm_api_problem *p) {
    pm_api_ingest o = PM_API_INGEST_DEFAULT;
    return pm_api_parse_request_with(buf, len, content_type, &o, out, p);
}
