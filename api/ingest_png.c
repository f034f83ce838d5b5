#include "ingest_png.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t pm_api__be32(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

int pm_api__png_info_read(const unsigned char *png, size_t len, pm_api__png_info *info) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    /* signature, then the IHDR chunk: length 13, "IHDR", width, height,
     * depth, colour type, ... */
    if (len < 8 + 8 + 13 || memcmp(png, sig, 8) != 0 || pm_api__be32(png + 8) != 13 ||
        memcmp(png + 12, "IHDR", 4) != 0)
        return -1;
    info->width = pm_api__be32(png + 16);
    info->height = pm_api__be32(png + 20);
    info->depth = png[24];
    info->color_type = png[25];
    return 0;
}

size_t pm_api__png_decode_bytes(const pm_api__png_info *info) {
    size_t px = (size_t)info->width * info->height;
    return px * (2 + 2 * sizeof(double));   /* samples, doubles, the bulk copy */
}

/* libpng reads from memory through this. */
typedef struct pm_api__png_src {
    const unsigned char *p;
    size_t len, at;
    char *why;
    size_t cap;
} pm_api__png_src;

static void pm_api__png_read(png_structp png, png_bytep out, size_t n) {
    pm_api__png_src *s = png_get_io_ptr(png);
    if (n > s->len - s->at) png_error(png, "the image ends before its last chunk");
    memcpy(out, s->p + s->at, n);
    s->at += n;
}

static void pm_api__png_fail(png_structp png, png_const_charp msg) {
    pm_api__png_src *s = png_get_error_ptr(png);
    snprintf(s->why, s->cap, "%s", msg);
    png_longjmp(png, 1);
}

static void pm_api__png_warn(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;   /* ancillary chunks libpng skips do not matter to heights */
}

int pm_api__png_decode(const unsigned char *data, size_t len, const pm_api__png_info *info,
                       double scale, double offset, double *out, char *why, size_t cap) {
    pm_api__png_src src = {data, len, 0, why, cap};
    size_t bpp = info->depth == 16 ? 2 : 1, stride = (size_t)info->width * bpp;
    size_t bytes = stride * info->height;
    unsigned char *volatile pix = malloc(bytes ? bytes : 1);
    png_bytep *volatile rows = malloc(sizeof(png_bytep) * (info->height ? info->height : 1));
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, pm_api__png_fail,
                                             pm_api__png_warn);
    png_infop pi = png ? png_create_info_struct(png) : NULL;
    int rc = -1;
    if (!pix || !rows || !png || !pi) {
        snprintf(why, cap, "out of memory");
        goto done;
    }
    if (setjmp(png_jmpbuf(png))) goto done;
    png_set_read_fn(png, &src, pm_api__png_read);
    /* The caller checked the size against the request: nothing bigger. */
    png_set_user_limits(png, info->width, info->height);
    png_read_info(png, pi);
    png_set_interlace_handling(png);
    png_read_update_info(png, pi);
    if (png_get_rowbytes(png, pi) != stride) png_error(png, "unexpected row size");
    for (uint32_t y = 0; y < info->height; y++) rows[y] = pix + (size_t)y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);   /* the chunks after the image are checked too */
    size_t n = (size_t)info->width * info->height;
    if (bpp == 2)
        for (size_t i = 0; i < n; i++)
            out[i] = offset + scale * (double)((unsigned)pix[2 * i] << 8 | pix[2 * i + 1]);
    else
        for (size_t i = 0; i < n; i++) out[i] = offset + scale * (double)pix[i];
    rc = 0;
done:
    if (png) png_destroy_read_struct(&png, pi ? &pi : NULL, NULL);
    free(rows);
    free(pix);
    return rc;
}
