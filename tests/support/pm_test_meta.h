#ifndef PM_TEST_META_H
#define PM_TEST_META_H
/* Reading a generator's metadata (scene/meta.h) in Criterion tests: a
 * member or an array element, asserted present. */
#include <criterion/criterion.h>
#include <stddef.h>

#include "scene/meta.h"

/* Member k of object o. */
static inline const pm_meta *pm_test_meta_get(const pm_meta *o, const char *k) {
    const pm_meta *m = pm_meta_get(o, k);
    cr_assert_not_null(m, "metadata %s", k);
    return m;
}

/* Element i of array arr. */
static inline const pm_meta *pm_test_meta_at(const pm_meta *arr, size_t i) {
    const pm_meta *m = arr->u.kids.first;
    while (m && i--) m = m->next;
    cr_assert_not_null(m);
    return m;
}
#endif
