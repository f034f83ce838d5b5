#ifndef PM_TEST_JSONTEXT_H
#define PM_TEST_JSONTEXT_H
/* A growing text and JSON strings escaped as the encoders promise ('"'
 * and '\\' backslashed, bytes below 0x20 as \u00xx, every other byte as
 * it is): the reference printers of the encoder tests build their
 * expected text with these. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pm_test_text { char *s; size_t len, cap; } pm_test_text;

static inline void pm_test_put(pm_test_text *r, const char *s, size_t n) {
    if (r->len + n + 1 > r->cap) {
        r->cap = 2 * (r->len + n + 1);
        r->s = realloc(r->s, r->cap);
        cr_assert_not_null(r->s);
    }
    memcpy(r->s + r->len, s, n);
    r->len += n;
}

static inline void pm_test_put_str(pm_test_text *r, const char *s, size_t n) {
    pm_test_put(r, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[8];
        if (c == '"' || c == '\\') pm_test_put(r, (char[]){'\\', (char)c}, 2);
        else if (c < 0x20) pm_test_put(r, e, (size_t)snprintf(e, sizeof e, "\\u%04x", c));
        else pm_test_put(r, (const char *)&c, 1);
    }
    pm_test_put(r, "\"", 1);
}
#endif
