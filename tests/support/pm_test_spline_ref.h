#ifndef PM_TEST_SPLINE_REF_H
#define PM_TEST_SPLINE_REF_H
/* The plain adaptive sampler (tests/support/spline_ref.c): pm_spline_sample
 * as it was before the fast one, same contract, same arguments. */
#include <stddef.h>

#include "geom/spline.h"

int pm_test_spline_sample_ref(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                              pm_curve_sample **out, size_t *n);
#endif
