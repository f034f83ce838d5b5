#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "road/road.h"
#include "scene/arena.h"
#include "scene/rng.h"
#include "pm_api/reader.h"
#include "pm_api/request.h"
#include "pm_test_fast.h"
#include "../../api/canon_short.h"
#include "../../api/canon_text.h"
#include "../../api/req_road.h"

/* The short token's digits read in SSSE3 lanes (pm_api__short_scan_ssse3,
 * the road reader's points on a CPU that has them) against the SWAR scan
 * (pm_api__short_scan_swar): the same answer on every input, down to the
 * token's value and canonical text and a whole road's parameters and
 * canonical form. */

#if PM_API_SHORT_SCAN_SSSE3
__attribute__((target("ssse3"))) static bool scan_ssse3(const char *q, int *n1, int *n2, uint64_t *w) {
    return pm_api__short_scan_ssse3(q, n1, n2, w);
}
__attribute__((target("ssse3"))) static const char *real_ssse3(const char *p, double *v, char *out, size_t *n) {
    return pm_api__real_short_with(p, v, out, n, pm_api__short_scan_ssse3);
}
#endif

#if PM_API_SHORT_SCAN_SSSE3
/* The value alone (pm_api__real_short_value, the road reader's points)
 * by either scan. */
static const char *value_swar(const char *p, double *v, char *out, size_t *n) {
    *n = 0;
    (void)out;
    return pm_api__real_short_value(p, v, pm_api__short_scan_swar);
}
__attribute__((target("ssse3"))) static const char *value_ssse3(const char *p, double *v, char *out,
                                                                size_t *n) {
    *n = 0;
    (void)out;
    return pm_api__real_short_value(p, v, pm_api__short_scan_ssse3);
}
#endif

static int rnd(pm_rng *r, int n) { return (int)(pm_rng_u64(r) % (uint64_t)n); }

#if PM_API_SHORT_SCAN_SSSE3

/* A byte near a token's: digits mostly, the bytes either side of '0'..'9'
 * ('/', ':'), '.', 'e', separators, NUL, high bytes and any other. */
static char any_byte(pm_rng *r) {
    static const char odd[] = {'/', ':', '.', 'e', 'E', ',', ']', ' ', '-', '+', '\0', (char)0xFF,
                               (char)0xFA, (char)0x80, (char)0xB0, (char)0xB9};
    int k = rnd(r, 10);
    if (k < 6) return (char)('0' + rnd(r, 10));
    if (k < 9) return odd[rnd(r, (int)sizeof odd)];
    return (char)rnd(r, 256);
}

/* 32 bytes: digits runs of any length around a '.', or any bytes. */
static void random_digits(pm_rng *r, char *b) {
    int i = 0, shape = rnd(r, 8);
    if (shape < 6) {
        int n1 = rnd(r, 4) ? 1 + rnd(r, 8) : rnd(r, 17), n2 = rnd(r, 4) ? 1 + rnd(r, 8) : rnd(r, 17);
        for (int k = 0; k < n1 && i < 32; k++) b[i++] = (char)('0' + rnd(r, 10));
        if (shape < 5 && i < 32) b[i++] = '.';
        for (int k = 0; k < n2 && i < 32; k++) b[i++] = (char)('0' + rnd(r, 10));
    }
    while (i < 32) b[i++] = any_byte(r);
}

Test(req_road_scan, ssse3_scan_is_the_swar_scan_on_any_bytes) {
    if (!__builtin_cpu_supports("ssse3")) cr_skip_test("no SSSE3 on this CPU");
    pm_rng r;
    pm_rng_seed(&r, 41);
    int bad = 0, both = 0, dotted = 0, seven = 0;
    for (int n = 0; n < 4000000 && bad < 10; n++) {
        char b[32];
        random_digits(&r, b);
        int a1 = -1, a2 = -1, b1 = -1, b2 = -1;
        uint64_t aw = 1, bw = 2;
        bool a = pm_api__short_scan_swar(b, &a1, &a2, &aw), s = scan_ssse3(b, &b1, &b2, &bw);
        bool same = a == s && (!a || (a1 == b1 && a2 == b2 && aw == bw));
        if (!same) {
            bad++;
            cr_log_error("'%.16s': swar %d %d %d %llu, ssse3 %d %d %d %llu", b, a, a1, a2,
                         (unsigned long long)aw, s, b1, b2, (unsigned long long)bw);
        }
        if (a && s) {
            both++;
            dotted += a2 > 0;
            seven += a1 == 7 && a2 == 7;
        }
    }
    cr_expect_eq(bad, 0);
    cr_expect_gt(both, 1000000, "%d read", both);
    cr_expect_gt(dotted, 800000, "%d with a '.'", dotted);
    cr_expect_gt(seven, 5000, "%d of 7 + 7 digits", seven);
}

/* A token pm_api__real_short takes, or one near it: a sign, 1..9 integer
 * digits (leading zeros sometimes), a fraction of 1..9 digits or none, an
 * exponent now and then; followed by a separator or anything. */
static void random_token(pm_rng *r, char *b) {
    int i = 0;
    if (rnd(r, 2)) b[i++] = '-';
    int n1 = 1 + rnd(r, rnd(r, 6) ? 7 : 9);
    bool zero = rnd(r, 8) == 0;
    for (int k = 0; k < n1; k++) b[i++] = (char)('0' + (zero && k == 0 ? 0 : k == 0 ? 1 + rnd(r, 9) : rnd(r, 10)));
    if (rnd(r, 6)) {
        b[i++] = '.';
        int n2 = 1 + rnd(r, rnd(r, 6) ? 7 : 9), zeros = rnd(r, 3) == 0 ? rnd(r, 6) : 0;
        for (int k = 0; k < n2; k++) b[i++] = (char)('0' + (k < zeros ? 0 : rnd(r, 4) ? rnd(r, 10) : 9 * rnd(r, 2)));
    }
    if (rnd(r, 20) == 0) b[i++] = rnd(r, 2) ? 'e' : 'E';
    b[i++] = rnd(r, 4) ? ",]"[rnd(r, 2)] : any_byte(r);
    while (i < 48) b[i++] = any_byte(r);
}

/* 3 M random tokens (random_token, from seed) read by the plain reader
 * and by other: the same end, value and canonical text (value_only: the
 * same end and value, -0 as 0), or both refusing; half or more must be
 * taken. */
typedef const char *(*short_reader)(const char *p, double *v, char *out, size_t *n);
static void same_as_plain(uint64_t seed, short_reader other, const char *name, bool value_only) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    int bad = 0, taken = 0;
    for (int n = 0; n < 3000000 && bad < 10; n++) {
        char b[48];
        random_token(&r, b);
        char x[PM_API_CANON_REAL_ROOM + 16], y[PM_API_CANON_REAL_ROOM + 16];
        memset(x, '#', sizeof x);
        memset(y, '#', sizeof y);
        double vx = 1, vy = 2;
        size_t nx = 0, ny = 0;
        const char *ex = pm_api__real_short(b, &vx, x, &nx), *ey = other(b, &vy, y, &ny);
        if (value_only && !ex && ey) {
            /* Tokens whose text the plain reader leaves ("0.0000095":
             * "%.17g" writes an exponent there) are taken: their value is
             * strtod's, their end the token's. */
            char *end;
            vx = strtod(b, &end) + 0.0;
            ex = end;
        }
        if (value_only) {   /* no text, and -0 read as 0 */
            vx += 0.0;
            nx = 0;
        }
        bool same = ex == ey && (!ex || (memcmp(&vx, &vy, 8) == 0 && nx == ny && memcmp(x, y, nx) == 0));
        if (!same) {
            bad++;
            cr_log_error("'%.20s': plain %td '%.*s', %s %td '%.*s'", b, ex ? ex - b : -1, (int)nx, x, name,
                         ey ? ey - b : -1, (int)ny, y);
        }
        taken += ex != NULL;
    }
    cr_expect_eq(bad, 0);
    cr_expect_gt(taken, 1500000, "%d taken", taken);
}

Test(req_road_scan, short_reals_read_by_either_scan_are_the_same) {
    if (!__builtin_cpu_supports("ssse3")) cr_skip_test("no SSSE3 on this CPU");
    same_as_plain(43, real_ssse3, "ssse3", false);
}

Test(req_road_scan, short_values_are_the_short_reals_values) {
    same_as_plain(59, value_swar, "value (swar)", true);
    if (!__builtin_cpu_supports("ssse3")) cr_skip_test("no SSSE3 on this CPU");
    same_as_plain(61, value_ssse3, "value (ssse3)", true);
}

#endif

/* A road of 2..60 points, each coordinate spelled any way
 * (pm_test_fast_coord: short tokens mostly, sometimes long or with an
 * exponent), one space or none between. */
static char *random_road(pm_rng *r) {
    pm_test_text t = {0};
    pm_test_text_str(&t, "{\"width\": 8, \"points\": [");
    int n = 2 + rnd(r, 59);
    double x = pm_rng_range(r, -1e5, 1e5), z = pm_rng_range(r, -1e5, 1e5), h = pm_rng_range(r, 0, 6.28);
    for (int i = 0; i < n; i++) {
        if (i) pm_test_text_str(&t, rnd(r, 2) ? ", " : ",");
        pm_test_text_str(&t, "[");
        pm_test_fast_coord(&t, r, x);
        pm_test_text_str(&t, rnd(r, 2) ? ", " : ",");
        if (rnd(r, 2)) pm_test_text_str(&t, "0");
        else pm_test_fast_coord(&t, r, pm_rng_range(r, -50, 50));
        pm_test_text_str(&t, rnd(r, 2) ? ", " : ",");
        pm_test_fast_coord(&t, r, z);
        pm_test_text_str(&t, "]");
        h += pm_rng_range(r, -0.3, 0.3);
        double step = pm_rng_range(r, 10, 40);
        x += step * cos(h);
        z += step * sin(h);
    }
    pm_test_text_str(&t, "], \"max_error\": 0.05}");
    return t.s;
}

/* The parameters' points and the canonical text, as read by path. */
typedef struct read {
    int rc;
    size_t npoints;
    double *points;
    char *canon;        /* binary: the points' doubles are in it */
    size_t canon_len;
} read;

static read read_by(const char *body, int path) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_arena *a = pm_arena_create(0);
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    void *params = NULL;
    json_t *canon = NULL;
    read o = {0};
    o.rc = pm_api__road_parse_text_path(body, strlen(body), &lim, a, &params, &canon, &prob, path);
    if (o.rc == 0) {
        const pm__road_req *q = params;
        o.npoints = q->p.npoints;
        o.points = malloc(3 * o.npoints * sizeof *o.points);
        memcpy(o.points, q->p.points, 3 * o.npoints * sizeof *o.points);
        o.canon_len = json_string_length(canon);
        o.canon = malloc(o.canon_len);
        memcpy(o.canon, json_string_value(canon), o.canon_len);
    }
    json_decref(canon);
    pm_api_problem_free(&prob);
    pm_arena_destroy(a);
    return o;
}

Test(req_road_scan, roads_read_by_either_scan_are_the_same) {
    pm_rng r;
    pm_rng_seed(&r, 47);
#if PM_API_SHORT_SCAN_SSSE3
    bool ssse3 = __builtin_cpu_supports("ssse3");
#else
    bool ssse3 = false;
#endif
    int bad = 0, taken = 0;
    for (int i = 0; i < 3000 && bad < 5; i++) {
        char *body = random_road(&r);
        read a = read_by(body, 0), b = read_by(body, ssse3 ? 1 : 0), c = read_by(body, -1);
        bool same = a.rc == b.rc && a.rc == c.rc &&
                    (a.rc != 0 || (a.npoints == b.npoints && a.npoints == c.npoints &&
                                   memcmp(a.points, b.points, 3 * a.npoints * sizeof(double)) == 0 &&
                                   memcmp(a.points, c.points, 3 * a.npoints * sizeof(double)) == 0 &&
                                   a.canon_len == b.canon_len && a.canon_len == c.canon_len &&
                                   memcmp(a.canon, b.canon, a.canon_len) == 0 &&
                                   memcmp(a.canon, c.canon, a.canon_len) == 0));
        if (!same) {
            bad++;
            cr_log_error("%.300s: rc %d / %d / %d", body, a.rc, b.rc, c.rc);
        }
        taken += a.rc == 0;
        free(a.points), free(b.points), free(c.points);
        free(a.canon), free(b.canon), free(c.canon);
        free(body);
    }
    cr_expect_eq(bad, 0);
    cr_expect_gt(taken, 2500, "%d taken", taken);
    if (!ssse3) cr_log_warn("no SSSE3 on this CPU: the SWAR scan against itself");
}
