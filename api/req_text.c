/* The canonical text writer of api/req_text.h: what is not inline. */
#include <stdlib.h>

#include "req_text.h"

char *pm_api__tx_grow(pm__tx_out *o, size_t n) {
    if (o->failed) return NULL;
    /* 64 bytes short of a power of two: jansson copies the finished text
     * into a block glibc often places right after this one
     * (json_stringn_nocheck), and after a power-of-two block that copy's
     * destination lies 16 bytes past its source modulo 4096, where rep
     * movsb runs some 20 times slower on Zen 3 (scene/copy.h). */
    size_t c = o->cap ? o->cap : 4096 - 64;
    while (c < o->len + n) c = 2 * c + 64;
    char *b = realloc(o->b, c);
    if (!b) {
        o->failed = true;
        return NULL;
    }
    o->b = b;
    o->cap = c;
    return o->b + o->len;
}

void pm_api__tx_real(pm__tx_out *o, double x) {
    char *w = pm__tx_room(o, PM_API_CANON_REAL_ROOM);
    if (!w) return;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    for (unsigned i = 0; i < PM__TX_MEMO; i++) {
        if (o->memo_len[i] && o->memo_bits[i] == bits) {
            memcpy(w, o->memo[i], PM_API_CANON_REAL_ROOM);   /* whole: fixed size */
            o->len += o->memo_len[i];
            return;
        }
    }
    size_t n = pm_api__canon_real_text(x, w);
    if (!n) {
        o->failed = true;
        return;
    }
    o->len += n;
    unsigned k = o->memo_next++ % PM__TX_MEMO;
    o->memo_bits[k] = bits;
    o->memo_len[k] = (uint8_t)n;
    memcpy(o->memo[k], w, n);
}

void pm_api__tx_integer(pm__tx_out *o, int64_t v) {
    char tmp[24], *e = tmp + sizeof tmp, *b = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--b = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0) *--b = '-';
    pm__tx_put(o, b, (size_t)(e - b));
}
