#ifndef PM_FUZZ_PIPELINE_H
#define PM_FUZZ_PIPELINE_H
#include <stddef.h>

#include "pm_api/encode.h"
#include "pm_api/generator.h"

/* One request through the service's pipeline without HTTP: reader ->
 * gen->parse under lim -> generate -> for each of the nf formats fmt[i],
 * its cache key and the encoding in that format,
 * everything in one arena capped at lim->max_arena_bytes (as
 * service/server.c does). Used by the fuzzers (fuzz_route.c), their corpus
 * replay (replay.c) and the two-build comparison (golden_dump.c).
 *
 * in is a POST body, or, when it starts with '?', a GET query string
 * ("?seed=1&size=10": pairs split at '&' and '=', not percent-decoded)
 * read by the generator's from_query (a route without GET refuses it as a
 * 405 would).
 *
 * Returns 0 with out[0 .. nf - 1] set (the caller frees each data); 1 when
 * the request
 * was refused with a problem (its status in *status: a 4xx, or a 503 for a
 * job past its memory limit); -1 on a broken contract the fuzzers report: a
 * refusal without a problem or with a 500, a parse without a canonical
 * form, or an encoder that rejects a generator's scene. */
int pm_pipeline_run(const pm_api_generator *gen, const char *in, size_t len,
                    const pm_api_limits *lim, size_t nf, const pm_api_format *fmt,
                    pm_api_buf *out, int *status);

/* The generator of a route's last path segment ("junctions", "grids" …),
 * or NULL. */
const pm_api_generator *pm_pipeline_generator(const char *route);
#endif
