#ifndef PM_TEST_DECODE_H
#define PM_TEST_DECODE_H
#include <stddef.h>

/* Decoders for checking compressed bodies against their identity bytes.
 * Each returns a malloc'd buffer (caller frees) with *n set, or NULL when
 * z is not one whole stream of its coding. */
unsigned char *pm_test_gunzip(const unsigned char *z, size_t zlen, size_t *n);
unsigned char *pm_test_unbrotli(const unsigned char *z, size_t zlen, size_t *n);
#endif
