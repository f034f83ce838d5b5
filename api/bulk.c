#include "pm_api/bulk.h"

#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bulk arrays store doubles in host order, which the cache key takes as little-endian"
#endif

const char pm_api_bulk_tag[PM_API_BULK_TAG_LEN] = {'\xff', 'p', 'm', 'b', 'u', 'l', 'k', '1'};

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

bool pm_api_bulk_is(const json_t *j) {
    if (!json_is_string(j)) return false;
    size_t len = json_string_length(j);
    return len >= PM_API_BULK_TAG_LEN && (len - PM_API_BULK_TAG_LEN) % sizeof(double) == 0 &&
           memcmp(json_string_value(j), pm_api_bulk_tag, PM_API_BULK_TAG_LEN) == 0;
}

size_t pm_api_bulk_len(const json_t *j) {
    return pm_api_bulk_is(j) ? (json_string_length(j) - PM_API_BULK_TAG_LEN) / sizeof(double)
                             : 0;
}

const unsigned char *pm_api_bulk_data(const json_t *j) {
    return (const unsigned char *)json_string_value(j) + PM_API_BULK_TAG_LEN;
}

double pm_api_bulk_at(const json_t *j, size_t i) {
    double x;
    memcpy(&x, pm_api_bulk_data(j) + i * sizeof x, sizeof x);
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
