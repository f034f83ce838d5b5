#ifndef PM_TEST_MULTIPART_H
#define PM_TEST_MULTIPART_H
#include <stdio.h>
#include <string.h>

/* A multipart/form-data body (boundary "XyZ", as curl -F or a browser's
 * FormData send it): the JSON request part, then n float32 values as an
 * application/octet-stream part named name (a JSON pointer such as
 * "/terrain/heights"). Returns the body's length; cap must hold it. */
#define PM_TEST_MULTIPART_TYPE "multipart/form-data; boundary=XyZ"
static inline size_t pm_test_multipart(char *out, size_t cap, const char *request, const float *h,
                                       size_t n, const char *name) {
    size_t len = (size_t)snprintf(out, cap,
                                  "--XyZ\r\nContent-Disposition: form-data; name=\"request\"\r\n"
                                  "Content-Type: application/json\r\n\r\n%s\r\n--XyZ\r\n"
                                  "Content-Disposition: form-data; name=\"%s\"; filename=\"h.f32\"\r\n"
                                  "Content-Type: application/octet-stream\r\n\r\n",
                                  request, name);
    memcpy(out + len, h, n * sizeof *h);   /* little-endian hosts only, as api/bulk.c checks */
    len += n * sizeof *h;
    len += (size_t)snprintf(out + len, cap - len, "\r\n--XyZ--\r\n");
    return len;
}
#endif
