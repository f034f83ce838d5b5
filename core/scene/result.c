#include "scene/result.h"

const char *pm_result_name(pm_result r) {
    switch (r) {
    case PM_OK: return "ok";
    case PM_ERR_NOMEM: return "out of memory";
    case PM_ERR_GEOMETRY: return "no valid geometry for these parameters";
    case PM_ERR_LIMIT: return "output over a configured limit";
    case PM_ERR_CANCELLED: return "cancelled";
    }
    return "unknown";
}
