#ifndef PM_GEOM_F32_H
#define PM_GEOM_F32_H
/* Private to core/. x rounded to the nearest float, as a double: how a
 * double that must hold exactly what the output's float will hold gets its
 * value. Never write (double)(float)x, or (float)x stored into a double:
 * GCC 12's SLP vectorizer (on at -O2) drops that round trip when two such
 * conversions sit side by side (e.g. a point's x and y), so -O0 and -O2
 * builds computed different numbers from it (issue 13). The volatile float
 * is a real float object; no optimizer may skip storing to it. */
static inline double pm_f32(double x) {
    volatile float f = (float)x;
    return f;
}
#endif
