#ifndef PM_SVC_TIERS_H
#define PM_SVC_TIERS_H
#include <stddef.h>

#include "config.h"
#include "tier.h"

/* Builds the second cache tier the configuration asks for. Returns 0 with
 * *out set (NULL when no tier is configured: memory only), or -1 with a
 * message in err when a configured tier cannot be set up (the server then
 * refuses to start, exit 2). Each tier implementation adds one branch here
 * and its options to the table in config.c. */
int pm_svc_tier_open(const pm_svc_config *cfg, pm_svc_tier **out, char *err, size_t errcap);
#endif
