#include "pm_api/rows.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char pm_api__rows_tag[8] = {'\xff', 'p', 'm', 'r', 'o', 'w', 's', '1'};

bool pm_api_rows_is(const json_t *j) {
    if (!json_is_string(j) || json_string_length(j) < PM_API_ROWS_HEAD) return false;
    return memcmp(json_string_value(j), pm_api__rows_tag, sizeof pm_api__rows_tag) == 0;
}

size_t pm_api_rows_cols(const json_t *j) {
    if (!pm_api_rows_is(j)) return 0;
    uint64_t c;
    memcpy(&c, json_string_value(j) + 8, sizeof c);
    return (size_t)c;
}

size_t pm_api_rows_count(const json_t *j) {
    size_t c = pm_api_rows_cols(j);
    return c ? (json_string_length(j) - PM_API_ROWS_HEAD) / (c * sizeof(double)) : 0;
}

double pm_api_rows_at(const json_t *j, size_t i, size_t c) {
    double x;
    memcpy(&x, json_string_value(j) + PM_API_ROWS_HEAD + (i * pm_api_rows_cols(j) + c) * sizeof x,
           sizeof x);
    return x;
}

json_t *pm_api_rows_adopt(char *buf, size_t rows, size_t cols) {
    uint64_t c = cols;
    memcpy(buf, pm_api__rows_tag, sizeof pm_api__rows_tag);
    memcpy(buf + 8, &c, sizeof c);
    return json_stringn_nocheck(buf, PM_API_ROWS_HEAD + rows * cols * sizeof(double));
}

json_t *pm_api_rows_new(const double *v, size_t rows, size_t cols) {
    size_t n = rows * cols;
    char *buf = malloc(PM_API_ROWS_HEAD + n * sizeof(double));
    if (!buf) return NULL;
    for (size_t i = 0; i < n; i++) {
        double x = v[i] + 0.0;   /* -0 as 0 */
        memcpy(buf + PM_API_ROWS_HEAD + i * sizeof x, &x, sizeof x);
    }
    json_t *j = pm_api_rows_adopt(buf, rows, cols);
    free(buf);
    return j;
}

size_t pm_api_rows_canon_head(char *out, size_t rows, size_t cols) {
    memcpy(out, pm_api__rows_tag, sizeof pm_api__rows_tag);
    for (int i = 0; i < 8; i++) {   /* little-endian whatever the host */
        out[8 + i] = (char)(unsigned char)((uint64_t)cols >> (8 * i));
        out[16 + i] = (char)(unsigned char)((uint64_t)rows >> (8 * i));
    }
    return PM_API_ROWS_CANON_HEAD;
}

json_t *pm_api_rows_expand(const json_t *j) {
    size_t n = pm_api_rows_count(j), cols = pm_api_rows_cols(j);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *row = json_array();
        for (size_t c = 0; row && c < cols; c++)
            if (json_array_append_new(row, json_real(pm_api_rows_at(j, i, c))) < 0) {
                json_decref(row);
                row = NULL;
            }
        if (json_array_append_new(a, row) < 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}
