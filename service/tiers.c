#include "tiers.h"

int pm_svc_tier_open(const pm_svc_config *cfg, pm_svc_tier **out, char *err, size_t errcap) {
    (void)cfg;
    (void)err;
    (void)errcap;
    /* No second tier is built into this version; the Redis tier adds its
     * branch here (if its URL is set: connect, or fail with err). */
    *out = NULL;
    return 0;
}
