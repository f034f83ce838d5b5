#ifndef PM_API_JSON_FAST_H
#define PM_API_JSON_FAST_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The fast path of pm_api_parse_body (api/json_fast.c): the document in
 * buf when it is an object that the fast reader takes (arrays of at least
 * PM_API_BULK_PARSE_MIN numbers as bulk arrays; with rows, arrays of
 * equally long short numeric arrays as row blocks, pm_api/rows.h), else
 * NULL: then json_loadb decides, so every error message is jansson's. */
json_t *pm_api__json_fast(const char *buf, size_t len, bool rows);
#endif
