#ifndef PM_TEST_MULTIPART_H
#define PM_TEST_MULTIPART_H
#include <stdio.h>
#include <string.h>

/* A multipart/form-data body (boundary "XyZ", as curl -F or a browser's
 * FormData send it): the JSON request part, then n float32 values as an
 * application/octet-stream part named name (a JSON pointer such as
 * "/terrain/heights"). Returns the body's length; cap must hold it. */
#define PM_TEST_MULTIPART_TYPE "multipart/form-data; boundary=XyZ"
/* The same with any part: len bytes of data, of Content-Type ctype. */
static inline size_t pm_test_multipart_part(char *out, size_t cap, const char *request,
                                            const void *data, size_t len, const char *name,
                                            const char *ctype) {
    size_t n = (size_t)snprintf(out, cap,
                                "--XyZ\r\nContent-Disposition: form-data; name=\"request\"\r\n"
                                "Content-Type: application/json\r\n\r\n%s\r\n--XyZ\r\n"
                                "Content-Disposition: form-data; name=\"%s\"; filename=\"h\"\r\n"
                                "Content-Type: %s\r\n\r\n",
                                request, name, ctype);
    memcpy(out + n, data, len);
    n += len;
    n += (size_t)snprintf(out + n, cap - n, "\r\n--XyZ--\r\n");
    return n;
}
/* Little-endian hosts only, as api/bulk.c checks: the floats' bytes are
 * the part. */
static inline size_t pm_test_multipart(char *out, size_t cap, const char *request, const float *h,
                                       size_t n, const char *name) {
    return pm_test_multipart_part(out, cap, request, h, n * sizeof *h, name,
                                  "application/octet-stream");
}
#endif
