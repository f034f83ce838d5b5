#include "http.h"

#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <uuid/uuid.h>

int pm_svc_request_id_ok(const char *s) {
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || c == '.' || c == ':';
        if (!ok || n >= PM_SVC_REQID_MAX) return 0;
    }
    return n > 0;
}

/* libuuid's uuid_generate_random makes six system calls per id (getrandom,
 * then getpid, getppid, gettid, getuid to stir its fallback generator);
 * at tens of thousands of requests a second that shows. The same kernel
 * randomness is drawn here 256 ids at a time per thread, and libuuid
 * writes the text. */
#define PM_SVC_UUID_BATCH 256

void pm_svc_request_id_new(char out[37]) {
    static _Thread_local unsigned char pool[PM_SVC_UUID_BATCH * 16];
    static _Thread_local size_t used = sizeof pool;
    uuid_t u;
    if (used == sizeof pool) {
        if (getrandom(pool, sizeof pool, 0) == (ssize_t)sizeof pool) {
            used = 0;
        } else {   /* no kernel randomness now: libuuid has its fallbacks */
            uuid_generate_random(u);
            uuid_unparse_lower(u, out);
            return;
        }
    }
    memcpy(u, pool + used, 16);
    memset(pool + used, 0, 16);
    used += 16;
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);   /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);   /* RFC 9562 variant */
    uuid_unparse_lower(u, out);
}

static const char *pm_svc__skip_ows(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

int pm_svc_etag_match(const char *inm, const char *key_hex) {
    if (!inm || !key_hex) return 0;
    size_t klen = strlen(key_hex);
    const char *p = pm_svc__skip_ows(inm);
    if (*p == '*' && *pm_svc__skip_ows(p + 1) == '\0') return 1;
    while (*p) {
        p = pm_svc__skip_ows(p);
        if (p[0] == 'W' && p[1] == '/') p += 2;
        if (*p == '"') {
            const char *end = strchr(p + 1, '"');
            if (!end) return 0;
            if ((size_t)(end - p - 1) == klen && memcmp(p + 1, key_hex, klen) == 0) return 1;
            p = end + 1;
        }
        /* Skip to the next member; anything malformed is skipped whole. */
        const char *comma = strchr(p, ',');
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

int pm_svc_is_json_type(const char *ct) {
    if (!ct) return 0;
    ct = pm_svc__skip_ows(ct);
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) n--;
    if (n == 16 && strncasecmp(ct, "application/json", 16) == 0) return 1;
    /* application/<anything>+json, e.g. application/merge-patch+json */
    if (n > 17 && strncasecmp(ct, "application/", 12) == 0 &&
        strncasecmp(ct + n - 5, "+json", 5) == 0)
        return 1;
    return 0;
}

int pm_svc_cors_origin(const char *allowed, const char *origin, char *out, size_t cap) {
    if (!allowed || !*allowed || cap == 0) return 0;
    if (strcmp(allowed, "*") == 0) {
        if (cap < 2) return 0;
        memcpy(out, "*", 2);
        return 1;
    }
    if (!origin || !*origin) return 0;
    size_t olen = strlen(origin);
    for (const char *p = allowed; *p;) {
        p = pm_svc__skip_ows(p);
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t')) m--;
        if (m == olen && strncmp(p, origin, m) == 0 && olen < cap) {
            memcpy(out, origin, olen + 1);
            return 1;
        }
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}
