#ifndef PM_TEST_SPLINE_REF_H
#define PM_TEST_SPLINE_REF_H
/* The plain adaptive sampler (tests/support/spline_ref.c): pm_spline_sample
 * as it was before the fast one, same contract, same arguments; and the
 * plain curve set-up. */
#include <stddef.h>

#include "geom/spline.h"

int pm_test_spline_sample_ref(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                              pm_curve_sample **out, size_t *n);

/* pm_spline_init as it was before its quotients were carried from segment
 * to segment: each segment's four control points, three knot intervals and
 * the Catmull-Rom tangents straight from the formula, scalar. */
int pm_test_spline_init_ref(pm_arena *a, pm_spline *s, const double *pts, size_t n, bool closed,
                            pm_curve_kind kind, double alpha);
#endif
