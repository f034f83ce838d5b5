/* Content codings: Accept-Encoding parsing and choice (RFC 9110 12.5.3),
 * and the compressed forms of a blob. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compress.h"
#include "pm_test_decode.h"

enum { ID = 1u << PM_SVC_CODING_IDENTITY, GZ = 1u << PM_SVC_CODING_GZIP, BR = 1u << PM_SVC_CODING_BR };
#define ALL (ID | GZ | BR)

static int choose(const char *header, unsigned available) {
    pm_svc_accept_enc ae;
    pm_svc_accept_enc_parse(header, &ae);
    return pm_svc_accept_enc_choose(&ae, available);
}

static void expect_q(const char *header, int qid, int qgz, int qbr) {
    pm_svc_accept_enc ae;
    pm_svc_accept_enc_parse(header, &ae);
    cr_expect_eq(ae.q[PM_SVC_CODING_IDENTITY], qid, "identity of '%s': %d", header,
                 ae.q[PM_SVC_CODING_IDENTITY]);
    cr_expect_eq(ae.q[PM_SVC_CODING_GZIP], qgz, "gzip of '%s': %d", header,
                 ae.q[PM_SVC_CODING_GZIP]);
    cr_expect_eq(ae.q[PM_SVC_CODING_BR], qbr, "br of '%s': %d", header, ae.q[PM_SVC_CODING_BR]);
}

Test(accept_encoding, weights_of_each_coding) {
    expect_q(NULL, 1000, 0, 0);                      /* no header: identity */
    expect_q("", 1, 0, 0);                           /* empty: identity only */
    expect_q("gzip", 1, 1000, 0);
    expect_q("gzip, deflate, br", 1, 1000, 1000);
    expect_q("br;q=0.5, gzip;q=0.8", 1, 800, 500);
    expect_q("GZIP;Q=0.25,BR", 1, 250, 1000);        /* case-insensitive */
    expect_q("x-gzip", 1, 1000, 0);
    expect_q("*", 1000, 1000, 1000);
    expect_q("*;q=0.3, br", 300, 300, 1000);
    expect_q("identity;q=0", 0, 0, 0);
    expect_q("*;q=0", 0, 0, 0);
    expect_q("*;q=0, identity", 1000, 0, 0);
    expect_q("gzip;q=1.000, br;q=0.001", 1, 1000, 1);
    expect_q("  gzip ; q = 0.5 ,\tbr\t", 1, 500, 1000); /* blanks around everything */
    expect_q("gzip, gzip;q=0", 1, 1000, 0);          /* the first mention counts */
}

Test(accept_encoding, malformed_members_are_ignored) {
    expect_q("gzip;q=2", 1, 0, 0);
    expect_q("gzip;q=1.5, br", 1, 0, 1000);
    expect_q("gzip;q=0.1234", 1, 0, 0);              /* at most three decimals */
    expect_q("gzip;q=", 1, 0, 0);
    expect_q("gzip;level=9", 1, 0, 0);               /* no parameter but q exists */
    expect_q("br;q=-1, gzip", 1, 1000, 0);
    expect_q(",,, ,gzip,", 1, 1000, 0);
    expect_q("compress, deflate, zstd", 1, 0, 0);    /* codings we do not make */
}

Test(accept_encoding, choice_prefers_weight_then_the_smaller_form) {
    cr_expect_eq(choose(NULL, ALL), PM_SVC_CODING_IDENTITY);
    cr_expect_eq(choose("gzip, br", ALL), PM_SVC_CODING_BR);
    cr_expect_eq(choose("gzip, br", ID | GZ), PM_SVC_CODING_GZIP);   /* br not worth keeping */
    cr_expect_eq(choose("gzip;q=1, br;q=0.5", ALL), PM_SVC_CODING_GZIP);
    cr_expect_eq(choose("br;q=0, gzip", ALL), PM_SVC_CODING_GZIP);
    cr_expect_eq(choose("gzip;q=0", ALL), PM_SVC_CODING_IDENTITY);
    cr_expect_eq(choose("identity;q=1, gzip;q=0.5", ALL), PM_SVC_CODING_IDENTITY);
    cr_expect_eq(choose("*", ALL), PM_SVC_CODING_BR);
    cr_expect_eq(choose("*", ID), PM_SVC_CODING_IDENTITY);
    /* identity excluded: a coded form or nothing (the caller's 406). */
    cr_expect_eq(choose("gzip, identity;q=0", ALL), PM_SVC_CODING_GZIP);
    cr_expect_eq(choose("gzip, identity;q=0", ID), -1);
    cr_expect_eq(choose("br, *;q=0", ID | GZ), -1);
    cr_expect_eq(choose("identity;q=0", ALL), -1);
}

Test(accept_encoding, names_and_tags) {
    cr_expect_null(pm_svc_coding_name(PM_SVC_CODING_IDENTITY));
    cr_expect_str_eq(pm_svc_coding_name(PM_SVC_CODING_GZIP), "gzip");
    cr_expect_str_eq(pm_svc_coding_name(PM_SVC_CODING_BR), "br");
    cr_expect_str_eq(pm_svc_coding_tag_suffix(PM_SVC_CODING_IDENTITY), "");
    cr_expect_str_eq(pm_svc_coding_tag_suffix(PM_SVC_CODING_GZIP), ".gz");
    cr_expect_str_eq(pm_svc_coding_tag_suffix(PM_SVC_CODING_BR), ".br");
}

/* ---- compressed forms ---- */

static unsigned char *text_body(size_t n) {
    unsigned char *s = malloc(n);
    for (size_t i = 0; i < n; i++) s[i] = (unsigned char)("vertex 0.125 0.5 -3.25\n"[i % 23]);
    return s;
}

/* Fails unless z decodes (with dec) to the n bytes of want. */
static void expect_decodes(unsigned char *(*dec)(const unsigned char *, size_t, size_t *),
                           const unsigned char *z, size_t zlen, const unsigned char *want,
                           size_t n) {
    size_t got = 0;
    unsigned char *out = dec(z, zlen, &got);
    cr_assert_not_null(out, "not one whole stream");
    cr_assert_eq(got, n);
    cr_assert_eq(memcmp(out, want, n), 0);
    free(out);
}

Test(compress, blob_gets_both_forms_that_decode_to_the_body) {
    size_t n = 100000;
    unsigned char *body = text_body(n), *copy = text_body(n);
    pm_svc_blob *b = pm_svc_blob_wrap(body, body, n);
    pm_svc_zlevels lv = {.gzip = 6, .br = 5, .min_len = 512};
    cr_assert_eq(pm_svc_blob_compress(b, &lv, 0, PM_SVC_CODINGS_ALL), 0);
    cr_assert_eq(pm_svc_blob_codings(b), ALL);
    size_t gl, bl, il;
    const unsigned char *g = pm_svc_blob_form(b, PM_SVC_CODING_GZIP, &gl);
    const unsigned char *r = pm_svc_blob_form(b, PM_SVC_CODING_BR, &bl);
    cr_assert_eq(pm_svc_blob_form(b, PM_SVC_CODING_IDENTITY, &il), body);
    cr_assert_eq(il, n);
    cr_assert_lt(gl, n / 10);
    cr_assert_lt(bl, n / 10);
    expect_decodes(pm_test_gunzip, g, gl, copy, n);
    expect_decodes(pm_test_unbrotli, r, bl, copy, n);
    /* Deterministic: the same body gives the same bytes. */
    unsigned char *again = NULL;
    size_t al = 0;
    cr_assert_eq(pm_svc_gzip(copy, n, 6, &again, &al), 0);
    cr_assert_eq(al, gl);
    cr_assert_eq(memcmp(again, g, gl), 0);
    free(again);
    pm_svc_blob_unref(b);
    free(copy);
}

Test(compress, small_or_incompressible_bodies_keep_identity_only) {
    pm_svc_zlevels lv = {.gzip = 6, .br = 5, .min_len = 512};
    unsigned char *small = text_body(511);
    pm_svc_blob *b = pm_svc_blob_wrap(small, small, 511);
    cr_assert_eq(pm_svc_blob_compress(b, &lv, 0, PM_SVC_CODINGS_ALL), 0);
    cr_expect_eq(pm_svc_blob_codings(b), ID, "under min_len: not compressed");
    pm_svc_blob_unref(b);

    /* Random bytes do not shrink: no form is kept. */
    size_t n = 20000;
    unsigned char *noise = malloc(n);
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (unsigned char)(x >> 23);
    }
    b = pm_svc_blob_wrap(noise, noise, n);
    cr_assert_eq(pm_svc_blob_compress(b, &lv, 0, PM_SVC_CODINGS_ALL), 0);
    cr_expect_eq(pm_svc_blob_codings(b), ID, "no gain: not kept");
    size_t len;
    cr_expect_eq(pm_svc_blob_form(b, PM_SVC_CODING_BR, &len), noise, "absent form: identity");
    cr_expect_eq(len, n);
    pm_svc_blob_unref(b);
}

Test(compress, only_the_wanted_forms_are_made) {
    size_t n = 5000;
    unsigned char *body = text_body(n);
    pm_svc_blob *b = pm_svc_blob_wrap(body, body, n);
    pm_svc_zlevels lv = {.gzip = 1, .br = 1, .min_len = 512};
    cr_assert_eq(pm_svc_blob_compress(b, &lv, 1, GZ), 0);
    cr_expect_eq(pm_svc_blob_codings(b), ID | GZ);
    pm_svc_blob_unref(b);
}
