#include "pm_test_decode.h"

#include <brotli/decode.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Doubles the capacity of *buf (its bytes kept). Returns 0 or -1. */
static int pm_test__grow(unsigned char **buf, size_t *cap) {
    unsigned char *b = realloc(*buf, *cap * 2);
    if (!b) return -1;
    *buf = b;
    *cap *= 2;
    return 0;
}

unsigned char *pm_test_gunzip(const unsigned char *z, size_t zlen, size_t *n) {
    size_t cap = zlen * 4 + 1024;
    unsigned char *out = malloc(cap);
    z_stream s;
    memset(&s, 0, sizeof s);
    if (!out || inflateInit2(&s, 16 + 15) != Z_OK) {
        free(out);
        return NULL;
    }
    s.next_in = (unsigned char *)z;
    s.avail_in = (uInt)zlen;
    int rc;
    do {
        if (s.total_out == cap && pm_test__grow(&out, &cap) < 0) break;
        s.next_out = out + s.total_out;
        s.avail_out = (uInt)(cap - s.total_out);
        rc = inflate(&s, Z_NO_FLUSH);
    } while (rc == Z_OK || (rc == Z_BUF_ERROR && s.avail_out == 0));
    *n = s.total_out;
    int whole = rc == Z_STREAM_END && s.avail_in == 0;   /* nothing after the stream */
    inflateEnd(&s);
    if (!whole) {
        free(out);
        return NULL;
    }
    return out;
}

unsigned char *pm_test_unbrotli(const unsigned char *z, size_t zlen, size_t *n) {
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    size_t cap = zlen * 4 + 1024, used = 0, in_left = zlen;
    unsigned char *out = malloc(cap);
    const uint8_t *in = z;
    BrotliDecoderResult rc = BROTLI_DECODER_RESULT_ERROR;
    while (d && out) {
        size_t out_left = cap - used;
        uint8_t *next = out + used;
        rc = BrotliDecoderDecompressStream(d, &in_left, &in, &out_left, &next, NULL);
        used = (size_t)(next - out);
        if (rc != BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT || pm_test__grow(&out, &cap) < 0) break;
    }
    if (d) BrotliDecoderDestroyInstance(d);
    if (rc != BROTLI_DECODER_RESULT_SUCCESS || in_left != 0) {
        free(out);
        return NULL;
    }
    *n = used;
    return out;
}
