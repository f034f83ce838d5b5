#ifndef PM_TEST_FAST_H
#define PM_TEST_FAST_H
#include <stdbool.h>
#include <stddef.h>

#include "pm_api/generator.h"
#include "scene/rng.h"

/* A route's fast reader (pm_api_generator.parse_text) held against its
 * document path, for tests/api/test_req_*_fast.c. */

/* Growing text (NUL-terminated; free s). */
typedef struct pm_test_text { char *s; size_t len; } pm_test_text;
void pm_test_text_add(pm_test_text *t, const char *buf, size_t n);
void pm_test_text_str(pm_test_text *t, const char *s);
void pm_test_text_printf(pm_test_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A json_dump_callback_t appending to the pm_test_text at data. */
int pm_test_text_cb(const char *buf, size_t n, void *data);

/* Every parameter of a parse, printed exactly (a new string). */
typedef char *(*pm_test_params_print)(const void *params);

/* body through both of gen's readers under lim: the fast one, and the
 * document path (pm_api_parse_body, or pm_api_parse_body_rows when rows,
 * as the route reads its documents, then parse). When the fast reader
 * takes it, expects the same result byte for byte: rc, canonical dump,
 * cache key, problem+json and the parameters print gives; when it does
 * not, that it set no problem. Returns whether it took the body. */
bool pm_test_fast_same(const pm_api_generator *gen, bool rows, pm_test_params_print print,
                       const char *body, const pm_api_limits *lim);

/* x as a number token of any spelling a reader meets: 1 to 17
 * significant digits ("%.*g", which writes exponents too), fixed
 * decimals, exponents of either case and sign, and for 0 every spelling
 * of (negative) zero. */
void pm_test_fast_real(pm_test_text *t, pm_rng *r, double x);

/* A coordinate as a map editor writes it: to the mm most often, else to
 * a random number of decimals, or any spelling (pm_test_fast_real). */
void pm_test_fast_coord(pm_test_text *t, pm_rng *r, double x);
/* A height: 0 in any spelling, the extremes a double has (subnormal, the
 * smallest normal, tiny exponents), or a small real. */
void pm_test_fast_height(pm_test_text *t, pm_rng *r);
/* No blank, one space (which the one-step reader takes), or blanks it
 * leaves to the general path. */
const char *pm_test_fast_blank(pm_rng *r);

/* Number tokens a coordinate must not be: kept in range by the document
 * path's 422 (the last, -1E+5, is the bound itself: in range), or
 * malformed JSON (400). */
#define PM_TEST_FAST_REFUSED 10
#define PM_TEST_FAST_MALFORMED 19
extern const char *const pm_test_fast_refused[PM_TEST_FAST_REFUSED];
extern const char *const pm_test_fast_malformed[PM_TEST_FAST_MALFORMED];

/* body, holding the bad coordinate token tok at byte at, whose pointer is
 * ptr; taken: whether the fast reader took it (pm_test_fast_same). Expects
 * the fast reader to have left it and the route (fast reader, then the
 * document path, as the service runs it) to answer a 422 with one error,
 * at ptr, or a 400 whose column lies within the token; the bound itself
 * taken, with no error at ptr. */
void pm_test_fast_bad_token(const pm_api_generator *gen, const char *body, size_t at,
                            const char *tok, const char *ptr, bool taken);
#endif
