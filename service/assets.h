#ifndef PM_SVC_ASSETS_H
#define PM_SVC_ASSETS_H
#include <stddef.h>

/* Static files compiled into the binary (cmake/assets.cmake): the
 * playground page at / and the pinned three.js modules it imports, so the
 * page works on a machine with no network. */
typedef struct pm_svc_asset {
    const char *path;               /* "/", "/playground/app.js", … */
    const char *ctype;              /* "text/html; charset=utf-8", … */
    const unsigned char *data, *end;
} pm_svc_asset;

extern const pm_svc_asset pm_svc_assets[];
extern const size_t pm_svc_nassets;

static inline size_t pm_svc_asset_len(const pm_svc_asset *a) { return (size_t)(a->end - a->data); }
#endif
