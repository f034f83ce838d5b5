#ifndef PM_API_INGEST_PNG_H
#define PM_API_INGEST_PNG_H
/* Internal to api/multipart.c: grayscale PNG heightmaps (as terrain tools
 * export them) read with libpng, strictly: one image, grayscale without
 * alpha (colour type 0), 8 or 16 bits per sample, of the shape the request
 * gives. docs/road.md "PNG heightmaps". */
#include <stddef.h>
#include <stdint.h>

typedef struct pm_api__png_info {
    uint32_t width, height;
    int depth;        /* bits per sample */
    int color_type;   /* PNG colour type: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA */
} pm_api__png_info;

/* Reads the signature and the IHDR chunk only (no decoding). Returns 0, or
 * -1 when the bytes do not start as a PNG does. */
int pm_api__png_info_read(const unsigned char *png, size_t len, pm_api__png_info *info);

/* Bytes that decoding an image of info's size takes at most (the samples
 * and the doubles made of them). */
size_t pm_api__png_decode_bytes(const pm_api__png_info *info);

/* Decodes png, whose IHDR was read into info and checked by the caller
 * (grey, 8 or 16 bits, the expected size), into width x height doubles,
 * row by row from the top row of the image: out[i] = offset + scale *
 * sample (the sample as stored: 0..255 or 0..65535). Returns 0, or -1 with
 * libpng's reason in why (a corrupt or truncated image). */
int pm_api__png_decode(const unsigned char *png, size_t len, const pm_api__png_info *info,
                       double scale, double offset, double *out, char *why, size_t cap);
#endif
