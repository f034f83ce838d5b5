#ifndef PM_SRC_TRIG_H
#define PM_SRC_TRIG_H
/* Private to core/. cos and sin from arithmetic alone: libm's results
 * may differ between platforms and versions, and output must not. A Taylor
 * series at x/64, then six angle doublings; about 1e-14 accurate for x in
 * [-2 pi, 2 pi], which is all the callers need (directions, thresholds). */
static inline void pm__cos_sin(double x, double *c, double *s) {
    double h = x / 64, h2 = h * h;
    double sv = h * (1 - h2 / 6 * (1 - h2 / 20 * (1 - h2 / 42 * (1 - h2 / 72))));
    double cv = 1 - h2 / 2 * (1 - h2 / 12 * (1 - h2 / 30 * (1 - h2 / 56)));
    for (int i = 0; i < 6; i++) {
        double ns = 2 * sv * cv, nc = cv * cv - sv * sv;
        sv = ns;
        cv = nc;
    }
    *c = cv;
    *s = sv;
}

#define PM__PI 3.14159265358979323846
#endif
