#include "pm_api/bulk.h"

#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bulk arrays store doubles in host order, which the cache key takes as little-endian"
#endif

const char pm_api_bulk_tag[PM_API_BULK_TAG_LEN] = {'\xff', 'p', 'm', 'b', 'u', 'l', 'k', '1'};
const char pm_api_bulk_tag_f32[PM_API_BULK_TAG_LEN] = {'\xff', 'p', 'm', 'b', 'u', 'l', 'k', 'f'};

/* Bytes per value of j, or 0 when j is no bulk array. */
static size_t pm_api__bulk_esize(const json_t *j) {
    if (!json_is_string(j)) return 0;
    size_t len = json_string_length(j);
    const char *s = json_string_value(j);
    if (len < PM_API_BULK_TAG_LEN) return 0;
    size_t e = memcmp(s, pm_api_bulk_tag, PM_API_BULK_TAG_LEN) == 0       ? sizeof(double)
               : memcmp(s, pm_api_bulk_tag_f32, PM_API_BULK_TAG_LEN) == 0 ? sizeof(float)
                                                                           : 0;
    return e && (len - PM_API_BULK_TAG_LEN) % e == 0 ? e : 0;
}

json_t *pm_api_bulk_adopt_f32(char *buf, size_t n) {
    memcpy(buf, pm_api_bulk_tag_f32, PM_API_BULK_TAG_LEN);
    return json_stringn_nocheck(buf, PM_API_BULK_TAG_LEN + n * sizeof(float));
}

json_t *pm_api_bulk_adopt(char *buf, size_t n) {
    memcpy(buf, pm_api_bulk_tag, PM_API_BULK_TAG_LEN);
    return json_stringn_nocheck(buf, PM_API_BULK_TAG_LEN + n * sizeof(double));
}

json_t *pm_api_bulk_new(const double *v, size_t n) {
    char *buf = malloc(PM_API_BULK_TAG_LEN + n * sizeof(double));
    if (!buf) return NULL;
    if (n) memcpy(buf + PM_API_BULK_TAG_LEN, v, n * sizeof(double));
    json_t *j = pm_api_bulk_adopt(buf, n);
    free(buf);
    return j;
}

bool pm_api_bulk_is(const json_t *j) { return pm_api__bulk_esize(j) != 0; }

bool pm_api_bulk_is_f32(const json_t *j) { return pm_api__bulk_esize(j) == sizeof(float); }

size_t pm_api_bulk_len(const json_t *j) {
    size_t e = pm_api__bulk_esize(j);
    return e ? (json_string_length(j) - PM_API_BULK_TAG_LEN) / e : 0;
}

void pm_api_bulk_get(const json_t *j, size_t first, size_t n, double *out) {
    const unsigned char *d = pm_api_bulk_data(j);
    if (!pm_api_bulk_is_f32(j)) {
        memcpy(out, d + first * sizeof(double), n * sizeof(double));
        return;
    }
    /* Four at a time (GCC and clang vector extensions). */
    typedef float v4f __attribute__((vector_size(16)));
    typedef double v4d __attribute__((vector_size(32)));
    d += first * sizeof(float);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f f;
        memcpy(&f, d + i * sizeof(float), sizeof f);
        v4d x = __builtin_convertvector(f, v4d);
        memcpy(out + i, &x, sizeof x);
    }
    for (; i < n; i++) {
        float f;
        memcpy(&f, d + i * sizeof f, sizeof f);
        out[i] = f;
    }
}

const unsigned char *pm_api_bulk_data(const json_t *j) {
    return (const unsigned char *)json_string_value(j) + PM_API_BULK_TAG_LEN;
}

double pm_api_bulk_at(const json_t *j, size_t i) {
    double x;
    pm_api_bulk_get(j, i, 1, &x);
    return x;
}

json_t *pm_api_bulk_expand(const json_t *j) {
    size_t n = pm_api_bulk_len(j);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, json_real(pm_api_bulk_at(j, i))) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
