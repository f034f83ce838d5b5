#include "tiers.h"

#include <stdio.h>

#include "redis_tier.h"

int pm_svc_tier_open(const pm_svc_config *cfg, pm_svc_tier **out, char *err, size_t errcap) {
    *out = NULL;
    if (!cfg->redis_url[0]) return 0;
    /* A malformed URL is a configuration error (exit 2); an unreachable
     * Redis is not: the tier starts degraded and reconnects by itself. */
    pm_svc_redis_url u;
    char why[256];
    if (pm_svc_redis_url_parse(cfg->redis_url, &u, why, sizeof why) != 0) {
        snprintf(err, errcap, "--redis/PROCMESH_REDIS_URL: %s", why);
        return -1;
    }
    *out = pm_svc_redis_tier_create(cfg->redis_url, cfg->redis_ttl_s, "procmesh",
                                    cfg->redis_timeout_ms);
    if (!*out) {
        snprintf(err, errcap, "--redis: cannot set up the Redis tier (out of memory)");
        return -1;
    }
    return 0;
}
