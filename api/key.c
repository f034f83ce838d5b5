#include "pm_api/key.h"

#include <stdio.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack: no allocation */
#include <xxhash.h>

#include "key_simd.h"

/* XXH3_128bits_update, with AVX2 for long blocks (exported for the test
 * that checks both give the same digest). */
void pm_api__hash_update(XXH3_state_t *st, const void *buf, size_t size);

#ifndef PM_VERSION
#define PM_VERSION "0"
#endif

/* Each part is hashed as (length as 8 little-endian bytes, bytes), so no
 * two different tuples can produce the same byte stream. */
static void pm_api__hash_part(XXH3_state_t *st, const char *s, size_t n) {
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    XXH3_128bits_update(st, len, sizeof len);
    XXH3_128bits_update(st, s, n);
}

static void pm_api__hash_str(XXH3_state_t *st, const char *s) {
    pm_api__hash_part(st, s ? s : "", s ? strlen(s) : 0);
}

typedef struct pm_api__dump_ctx { XXH3_state_t *st; size_t len; } pm_api__dump_ctx;

/* Long blocks (bulk arrays) through the AVX2 build of XXH3 when the CPU
 * has it (key_simd.c): the same digest, four times the speed. */
#define PM_API__SIMD_MIN 4096

static int pm_api__simd_ok(void) {
    static int ok = -1;   /* racy first use is harmless: every thread finds the same */
    if (ok < 0) {
#if defined(__x86_64__)
        ok = pm_api__xxh3_avx2() && __builtin_cpu_supports("avx2");
#else
        ok = 0;
#endif
    }
    return ok;
}

void pm_api__hash_update(XXH3_state_t *st, const void *buf, size_t size) {
    if (size >= PM_API__SIMD_MIN && pm_api__simd_ok() &&
        pm_api__xxh3_update_avx2(st, buf, size) == 0)
        return;
    XXH3_128bits_update(st, buf, size);
}

static int pm_api__dump_cb(const char *buf, size_t size, void *data) {
    pm_api__dump_ctx *c = data;
    pm_api__hash_update(c->st, buf, size);
    c->len += size;
    return 0;
}

/* The canonical form is streamed into the hash, then its length, so the
 * framing stays unambiguous without a buffer. -0 is written as 0 by the
 * dump (both are canonical zero). */
static int pm_api__hash_canonical(XXH3_state_t *st, const json_t *canonical) {
    pm_api__dump_ctx c = {st, 0};
    int r = pm_api_canonical_dump(canonical, pm_api__dump_cb, &c);
    char len[24], *o = len + sizeof len;   /* "%zu", without printf's parsing */
    size_t v = c.len;
    do *--o = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    pm_api__hash_part(st, o, (size_t)(len + sizeof len - o));
    return r;
}

pm_api_key pm_api_cache_key(const pm_api_generator *gen, const json_t *canonical,
                            pm_api_format f) {
    pm_api_output o = pm_api_output_default(f);
    return pm_api_cache_key_output(gen, canonical, &o);
}

pm_api_key pm_api_cache_key_output(const pm_api_generator *gen, const json_t *canonical,
                                   const pm_api_output *o) {
    pm_api_key k = {0, 0};
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    if (XXH3_128bits_reset(&st) != XXH_OK) return k;
    pm_api__hash_str(&st, "procmesh-key-1");
    pm_api__hash_str(&st, PM_VERSION);
    pm_api__hash_str(&st, gen->name);
    pm_api__hash_str(&st, gen->version);
    pm_api__hash_str(&st, gen->path);
    if (pm_api__hash_canonical(&st, canonical) < 0) return k;
    pm_api__hash_str(&st, pm_api_format_name(o->format));
    /* The default options add nothing, so keys from before the options
     * existed stay valid; any other choice adds one more framed part. */
    uint32_t code = pm_api_output_code(o);
    if (code != (uint32_t)o->format) {
        char opt[80];
        snprintf(opt, sizeof opt, "compress=%d;quantize=%d;metadata=%d", (int)o->compress,
                 (int)o->quantize, (int)o->metadata);
        /* The compact encoder's bytes changed with its version (2: strip
         * order, filters, lattice floats): new keys, so no cache serves
         * the old bytes under the new tag. */
        if (o->compress != PM_API_COMPRESS_NONE || o->quantize)
            strcat(opt, ";compact=" PM_API_COMPACT_VERSION);
        pm_api__hash_str(&st, opt);
    }
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    k.hi = h.high64;
    k.lo = h.low64;
    /* {0,0} means failure; a real digest of zero is remapped. */
    if (k.hi == 0 && k.lo == 0) k.lo = 1;
    return k;
}

void pm_api_key_hex(pm_api_key k, char out[33]) {
    /* "%016" PRIx64 twice: sixteen lowercase hex digits of each half. */
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[i] = hex[(k.hi >> (60 - 4 * i)) & 15];
        out[16 + i] = hex[(k.lo >> (60 - 4 * i)) & 15];
    }
    out[32] = '\0';
}
