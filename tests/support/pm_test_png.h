#ifndef PM_TEST_PNG_H
#define PM_TEST_PNG_H
/* PNG images made in the tests with libpng's writer (PNG heightmaps,
 * docs/road.md): any size, bit depth, colour type and interlacing. */
#include <png.h>
#include <stdlib.h>
#include <string.h>

typedef struct pm_test_png {
    unsigned char *data;
    size_t len, cap;
} pm_test_png;

static inline void pm_test_png__write(png_structp png, png_bytep b, size_t n) {
    pm_test_png *o = png_get_io_ptr(png);
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2;
        o->data = realloc(o->data, o->cap);
    }
    memcpy(o->data + o->len, b, n);
    o->len += n;
}
static inline void pm_test_png__flush(png_structp png) { (void)png; }

/* A w x h PNG of colour type ctype (PNG_COLOR_TYPE_GRAY, _RGB, ...) and
 * depth bits per sample; samples are the row-major values of its channels
 * (channels per pixel by ctype), each below 2^depth. Free o->data. */
static inline void pm_test_png_make(pm_test_png *o, unsigned w, unsigned h, int depth,
                                    int ctype, int interlace, const unsigned *samples) {
    memset(o, 0, sizeof *o);
    int ch = ctype == PNG_COLOR_TYPE_RGB ? 3 : ctype == PNG_COLOR_TYPE_RGBA ? 4
             : ctype == PNG_COLOR_TYPE_GRAY_ALPHA ? 2 : 1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_set_write_fn(png, o, pm_test_png__write, pm_test_png__flush);
    png_set_compression_level(png, 1);   /* fast: the tests make large ones */
    png_set_IHDR(png, info, w, h, depth, ctype,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (ctype == PNG_COLOR_TYPE_PALETTE) {
        png_color pal[256];
        for (int i = 0; i < 256; i++) pal[i].red = pal[i].green = pal[i].blue = (png_byte)i;
        png_set_PLTE(png, info, pal, 1 << depth);
    }
    png_write_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    unsigned char *img = calloc(h, rowbytes);
    png_bytep *rows = malloc(sizeof(png_bytep) * h);
    for (unsigned y = 0; y < h; y++) {
        rows[y] = img + (size_t)y * rowbytes;
        for (unsigned x = 0; x < w * (unsigned)ch; x++) {
            unsigned v = samples[(size_t)y * w * (unsigned)ch + x];
            if (depth == 16) {
                rows[y][2 * x] = (png_byte)(v >> 8);
                rows[y][2 * x + 1] = (png_byte)v;
            } else if (depth == 8) {
                rows[y][x] = (png_byte)v;
            } else {   /* packed, most significant bits first */
                unsigned per = 8u / (unsigned)depth, sh = 8u - (unsigned)depth * (x % per + 1);
                rows[y][x / per] |= (png_byte)(v << sh);
            }
        }
    }
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(img);
}
#endif
