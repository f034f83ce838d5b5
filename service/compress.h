#ifndef PM_SVC_COMPRESS_H
#define PM_SVC_COMPRESS_H
#include <stddef.h>

#include "buf.h"
#include "cache.h"

/* Content codings (RFC 9110 8.4): which forms of a body exist, which one a
 * request accepts, and the compression that makes them. Each form of a
 * generated result is compressed at most once, at a high level, when a
 * request first negotiates it (its miss, or a later hit that the cached
 * entry lacks the form for); a hit then only picks one of the stored forms. */

typedef enum pm_svc_coding {
    PM_SVC_CODING_IDENTITY = 0,
    PM_SVC_CODING_GZIP = 1,
    PM_SVC_CODING_BR = 2,
} pm_svc_coding;
#define PM_SVC_CODINGS 3

/* What an Accept-Encoding header allows: the weight (q-value in
 * thousandths, 0..1000) of each coding the service can send. */
typedef struct pm_svc_accept_enc {
    int q[PM_SVC_CODINGS];
} pm_svc_accept_enc;

/* Parses Accept-Encoding (RFC 9110 12.5.3). NULL (no header): identity
 * only, our choice among "anything goes". A listed coding gets its q
 * (default 1); "x-gzip" is gzip; "*" gives its q to every coding not
 * listed, identity included; identity not listed and not covered by "*"
 * stays acceptable with the lowest weight (0.001). Codings are
 * case-insensitive; a member with a malformed q is ignored. */
void pm_svc_accept_enc_parse(const char *header, pm_svc_accept_enc *out);

/* The coding to send among the available ones (bit 1 << coding): the
 * highest weight above 0, ties going to the smaller form (br, then gzip,
 * then identity). -1 when none is acceptable. */
int pm_svc_accept_enc_choose(const pm_svc_accept_enc *ae, unsigned available);

/* "gzip", "br", or NULL for identity. */
const char *pm_svc_coding_name(int coding);
/* The ETag suffix of a coding's representation: "", ".gz", ".br". */
const char *pm_svc_coding_tag_suffix(int coding);

/* Which forms b holds (bit 1 << coding; identity always). */
unsigned pm_svc_blob_codings(const pm_svc_blob *b);
/* The bytes of one form of b (identity when that form is absent). */
const unsigned char *pm_svc_blob_form(const pm_svc_blob *b, int coding, size_t *len);

/* Compression effort. Bodies under min_len are not compressed; a form is
 * kept only when it saves at least one sixteenth of the body. Bodies over
 * 2 MiB get brotli 5 at most, over 8 MiB gzip 1 and brotli 4 at most. */
typedef struct pm_svc_zlevels {
    int gzip;        /* zlib level 1..9 */
    int br;          /* brotli quality 0..11 */
    size_t min_len;
} pm_svc_zlevels;

/* Results are compressed once and kept, so effort pays back over many
 * hits: their levels are the server's --gzip-level and --br-quality. */
#define PM_SVC_ZMIN_LEN 512
/* Bodies made per response (metrics, problems): cheap levels. */
extern const pm_svc_zlevels pm_svc_zlevels_dynamic;

/* Adds the forms in want (bit 1 << coding) worth keeping to b, which must
 * hold only its identity form and no other reference (it is being built).
 * Counts the compressions under kind (0 result, 1 dynamic). Returns 0; -1
 * when out of memory (b is then left as it was: identity only, valid). */
int pm_svc_blob_compress(pm_svc_blob *b, const pm_svc_zlevels *lv, int kind, unsigned want);
/* A new blob (one reference, unshared, uncharged): a's identity bytes
 * copied, a's forms and those of b's that a lacks, what either tried.
 * NULL when out of memory. */
pm_svc_blob *pm_svc_blob_merge(const pm_svc_blob *a, const pm_svc_blob *b);
/* A new blob like b plus its form in coding (gzip or br) when that pays,
 * compressed at lv (counted as a result's compression). NULL when out of
 * memory. */
pm_svc_blob *pm_svc_blob_with_form(const pm_svc_blob *b, const pm_svc_zlevels *lv, int coding);
/* Frees b's compressed forms (only before anyone else sees b): it is then
 * served as identity, e.g. when the memory budget has no room for them. */
void pm_svc_blob_drop_coded(pm_svc_blob *b);
#define PM_SVC_CODINGS_ALL 7u

/* One coding of src into a malloc'd *out. Returns 0 or -1. */
int pm_svc_gzip(const void *src, size_t len, int level, unsigned char **out, size_t *out_len);
int pm_svc_brotli(const void *src, size_t len, int quality, unsigned char **out,
                  size_t *out_len);

/* Appends the compression counters (Prometheus text). */
void pm_svc_compress_render(pm_svc_buf *b);
#endif
