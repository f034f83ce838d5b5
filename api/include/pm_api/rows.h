#ifndef PM_API_ROWS_H
#define PM_API_ROWS_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Row blocks: an array of equally long short arrays of numbers (a road's
 * control points, [[x, y, z], ...]) held as one block of doubles instead
 * of a jansson array and a node per number.
 *
 * A row block is a jansson string: an 8-byte tag (first byte 0xFF, never
 * in UTF-8, so no request text can forge one), the column count as 8
 * little-endian bytes, then the rows' doubles in host (little-endian)
 * order, -0 stored as 0. Only pm_api_parse_body_rows makes them, for
 * generators that take them (pm_api_generator.row_arrays); the readers
 * (reader.h) accept one wherever an array is accepted, with the same
 * messages and pointers, and pm_api_rows shares it as its canonical form.
 * A road's points are always a row block in the canonical form (read from
 * JSON arrays too), which the canonical dump writes in binary:
 * pm_api_rows_canon_head's 24 bytes (the tag, the column count and the
 * row count, 8 little-endian bytes each), then the doubles, -0 as 0. The
 * cache key hashes the values, not their spelling (docs/api.md). */

/* Rows of at most this many columns are read into row blocks. */
#define PM_API_ROWS_MAX_COLS 16
#define PM_API_ROWS_HEAD 16   /* tag + column count */

bool pm_api_rows_is(const json_t *j);
/* Columns and rows of row block j (0 when j is not one). */
size_t pm_api_rows_cols(const json_t *j);
size_t pm_api_rows_count(const json_t *j);
/* Value c of row i of row block j. */
double pm_api_rows_at(const json_t *j, size_t i, size_t c);
/* A new row block from buf, whose first PM_API_ROWS_HEAD bytes are scratch
 * (the tag and count are written there) followed by rows x cols doubles;
 * NULL when out of memory. */
json_t *pm_api_rows_adopt(char *buf, size_t rows, size_t cols);
/* A new row block of rows x cols doubles copied from v (-0 stored as 0),
 * or NULL when out of memory. */
json_t *pm_api_rows_new(const double *v, size_t rows, size_t cols);
/* The head of a row block's canonical bytes at out (PM_API_ROWS_CANON_HEAD
 * bytes: the tag, cols, rows); returns that length. */
#define PM_API_ROWS_CANON_HEAD 24
size_t pm_api_rows_canon_head(char *out, size_t rows, size_t cols);
/* A JSON array of arrays of reals with the same values, or NULL. */
json_t *pm_api_rows_expand(const json_t *j);
#endif
