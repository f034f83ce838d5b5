#ifndef PM_GEODESY_H
#define PM_GEODESY_H
/* Geodetic longitude / latitude / height on the WGS84 ellipsoid to local
 * metres on the tangent plane at an origin (geodetic -> ECEF -> ENU), in
 * the house axes: +X east, +Y up, +Z south (north is -Z), so the ground
 * plane XZ is right-handed with +Y up. Pure arithmetic (no libm trig), so
 * results are the same on every build. */

#define PM_GEO_WGS84_A 6378137.0               /* semi-major axis, metres */
#define PM_GEO_WGS84_INV_F 298.257223563       /* 1 / flattening */

typedef struct pm_geo_frame {
    double lon, lat, height;   /* the origin: degrees, degrees, metres */
    double ecef[3];            /* the origin in ECEF, metres */
    double east[3], north[3], up[3];   /* unit vectors of ENU in ECEF */
} pm_geo_frame;

/* The tangent plane at (lon, lat) degrees and height metres above the
 * ellipsoid. Preconditions: |lat| <= 90, |lon| <= 180, heights finite. */
void pm_geo_frame_init(pm_geo_frame *f, double lon, double lat, double height);

/* (lon, lat) degrees and height metres above the ellipsoid to ECEF metres. */
void pm_geo_ecef(double lon, double lat, double height, double out[3]);

/* A point to local metres: out = [east, up, -north] relative to f's origin.
 * The plane is tangent at the origin, so a point d metres away lies about
 * d^2 / 12.7e6 m below it (0.08 m at 1 km). */
void pm_geo_local(const pm_geo_frame *f, double lon, double lat, double height, double out[3]);
#endif
