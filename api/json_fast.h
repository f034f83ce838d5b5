#ifndef PM_API_JSON_FAST_H
#define PM_API_JSON_FAST_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fast path of pm_api_parse_body (api/json_fast.c): the document in
 * buf when it is an object that the fast reader takes (arrays of at least
 * PM_API_BULK_PARSE_MIN numbers as bulk arrays; with rows, arrays of
 * equally long short numeric arrays as row blocks, pm_api/rows.h), else
 * NULL: then json_loadb decides, so every error message is jansson's. */
json_t *pm_api__json_fast(const char *buf, size_t len, bool rows);

/* One JSON number token at *p (before end), read as pm_api__json_fast and
 * jansson read it: *is_int for a token with no fraction or exponent (then
 * *i its value), *d the value as a double (reals exactly strtod's). Returns
 * false, *p unspecified, at anything that is not a number jansson takes. */
bool pm_api__json_number(const char **p, const char *end, bool *is_int, int64_t *i, double *d);
#endif
