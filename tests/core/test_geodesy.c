/* WGS84 geodetic -> local tangent plane: ECEF of known points, local
 * coordinates against references computed at 40 digits (mpmath, the same
 * closed formulas with exact trig), the radii of curvature for small
 * steps, the house axes, and the origin itself. */
#include <criterion/criterion.h>
#include <math.h>

#include "geom/geodesy.h"

static void near3(const double *got, const double *want, double tol, const char *what) {
    for (int i = 0; i < 3; i++)
        cr_assert(fabs(got[i] - want[i]) <= tol, "%s[%d]: %.12f, want %.12f", what, i, got[i], want[i]);
}

Test(geodesy, ecef_of_known_points) {
    double p[3];
    pm_geo_ecef(0, 0, 0, p);
    near3(p, (double[]){6378137.0, 0, 0}, 1e-8, "equator, Greenwich");
    pm_geo_ecef(90, 0, 100, p);
    near3(p, (double[]){0, 6378237.0, 0}, 1e-8, "equator, 90 E, 100 m up");
    pm_geo_ecef(0, 90, 0, p);
    near3(p, (double[]){0, 0, 6356752.314245179}, 1e-6, "north pole: the semi-minor axis");
    pm_geo_ecef(10.1792, 49.37705, 430, p);
    near3(p, (double[]){4095482.875346826, 735358.86802365801, 4818291.319754995}, 1e-6,
          "Rothenburg");
}

/* Reference: 40-digit evaluation of the same geodetic -> ECEF -> ENU chain,
 * house axes [east, up, -north]. */
Test(geodesy, local_matches_high_precision_references) {
    static const struct { double o[3], p[3], want[3]; } c[] = {
        {{10.1792, 49.37705, 430}, {10.18120, 49.37730, 436.5},
         {145.24492128796605, 6.4982888515191848, -27.808088448749307}},
        {{10.1792, 49.37705, 430}, {10.17560, 49.37658, 425},
         {-261.44420684327592, -5.0055620485414918, 52.269257237647072}},
        {{10.1792, 49.37705, 430}, {10.6792, 49.87705, 430},
         {35941.176930867121, -344.77149618865094, -55733.01122491908}},
        {{-73.9857, 40.7484, 0}, {-73.9772, 40.7527, 12},
         {717.81670683967481, 11.941743947876516, -477.54673943033734}},
        {{151.2153, -33.8568, 5}, {151.2093, -33.8688, 40},
         {-555.16294074107759, 34.836473774650689, 1331.0634858115751}},
        {{179.9990, 0.0, 0}, {-179.9990, 0.0010, 0},     /* across the antimeridian */
         {222.63898150871422, -0.0048507258615515196, -110.5742758160933}},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        pm_geo_frame f;
        pm_geo_frame_init(&f, c[i].o[0], c[i].o[1], c[i].o[2]);
        double got[3];
        pm_geo_local(&f, c[i].p[0], c[i].p[1], c[i].p[2], got);
        near3(got, c[i].want, 1e-6, "local");     /* a micrometre */
    }
}

/* Small steps: north by the meridian radius M, east by N cos(lat). */
Test(geodesy, small_steps_follow_the_radii_of_curvature) {
    const double a = PM_GEO_WGS84_A, fl = 1 / PM_GEO_WGS84_INV_F, e2 = fl * (2 - fl);
    const double lat = 49.37705, pi = 3.14159265358979323846, phi = lat * pi / 180;
    const double s = sin(phi), w = 1 - e2 * s * s;
    const double M = a * (1 - e2) / (w * sqrt(w)), N = a / sqrt(w);
    const double d = 1e-5;     /* degrees: about 1.1 m */
    pm_geo_frame f;
    pm_geo_frame_init(&f, 10.1792, lat, 0);
    double p[3];
    pm_geo_local(&f, 10.1792, lat + d, 0, p);
    cr_assert_float_eq(p[2], -M * d * pi / 180, 1e-6, "north is -z: %.9f", p[2]);
    cr_assert(fabs(p[0]) < 1e-6);
    pm_geo_local(&f, 10.1792 + d, lat, 0, p);
    cr_assert_float_eq(p[0], N * cos(phi) * d * pi / 180, 1e-6, "east is +x: %.9f", p[0]);
    cr_assert(fabs(p[2]) < 1e-6);
    pm_geo_local(&f, 10.1792, lat, 12.5, p);
    near3(p, (double[]){0, 12.5, 0}, 1e-7, "up is +y");
}

Test(geodesy, origin_maps_to_zero_and_the_plane_drops_with_distance) {
    pm_geo_frame f;
    pm_geo_frame_init(&f, 2.3522, 48.8566, 35);
    double p[3];
    pm_geo_local(&f, 2.3522, 48.8566, 35, p);
    near3(p, (double[]){0, 0, 0}, 1e-9, "origin");
    cr_assert(!signbit(p[0]) && !signbit(p[1]) && !signbit(p[2]), "no -0 at the origin");
    /* 1 km north on the ellipsoid's surface lies about d^2 / 2R below the plane */
    pm_geo_local(&f, 2.3522, 48.8566 + 0.009, 35, p);
    cr_assert(p[1] < -0.07 && p[1] > -0.09, "drop %.4f m at %.0f m", p[1], -p[2]);
}
