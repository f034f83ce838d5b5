/* WGS84 geodetic -> ECEF -> local tangent plane (geom/geodesy.h). */
#include "geom/geodesy.h"

#include <assert.h>
#include <math.h>

#include "geom/trig.h"
#include "geom/vec.h"

static void pm__rad_cos_sin(double deg, double *c, double *s) {
    pm__cos_sin(deg * (PM__PI / 180.0), c, s);
}

void pm_geo_ecef(double lon, double lat, double height, double out[3]) {
    assert(fabs(lat) <= 90 && fabs(lon) <= 180 && isfinite(height));
    const double f = 1.0 / PM_GEO_WGS84_INV_F, e2 = f * (2.0 - f);
    double cl, sl, cp, sp;
    pm__rad_cos_sin(lon, &cl, &sl);
    pm__rad_cos_sin(lat, &cp, &sp);
    /* N: the prime vertical radius of curvature (sqrt is exact in IEEE). */
    double n = PM_GEO_WGS84_A / sqrt(1.0 - e2 * sp * sp);
    out[0] = (n + height) * cp * cl;
    out[1] = (n + height) * cp * sl;
    out[2] = (n * (1.0 - e2) + height) * sp;
}

void pm_geo_frame_init(pm_geo_frame *f, double lon, double lat, double height) {
    f->lon = lon;
    f->lat = lat;
    f->height = height;
    pm_geo_ecef(lon, lat, height, f->ecef);
    double cl, sl, cp, sp;
    pm__rad_cos_sin(lon, &cl, &sl);
    pm__rad_cos_sin(lat, &cp, &sp);
    f->east[0] = -sl, f->east[1] = cl, f->east[2] = 0.0;
    f->north[0] = -sp * cl, f->north[1] = -sp * sl, f->north[2] = cp;
    f->up[0] = cp * cl, f->up[1] = cp * sl, f->up[2] = sp;
}

void pm_geo_local(const pm_geo_frame *f, double lon, double lat, double height, double out[3]) {
    double p[3];
    pm_geo_ecef(lon, lat, height, p);
    double d[3] = {p[0] - f->ecef[0], p[1] - f->ecef[1], p[2] - f->ecef[2]};
    out[0] = pm_v3_dot(f->east, d);
    out[1] = pm_v3_dot(f->up, d);
    out[2] = -pm_v3_dot(f->north, d);
    for (int i = 0; i < 3; i++)
        if (out[i] == 0.0) out[i] = 0.0;    /* no -0 in output */
}
