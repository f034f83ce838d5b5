#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "road/road.h"
#include "scene/arena.h"
#include "scene/rng.h"
#include "pm_api/bulk.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_api/request.h"
#include "pm_test_fast.h"
#include "../../api/canon_short.h"
#include "../../api/canon_text.h"
#include "../../api/req_road.h"

/* The road's fast reader (pm_api_generator.parse_text, api/
 * req_road_fast.c) against the document path (pm_api_parse_body_rows, as
 * the service reads a road body, then parse): on every body it takes, the
 * same result byte for byte: the parameters, the canonical text, the cache
 * key, and the whole problem+json of a request refused after reading.
 * What it does not take goes to the document path, so it must take every
 * plain request. */

extern const pm_api_generator pm_api_gen_road;

static void reals_print(pm_test_text *t, const char *what, const double *v, size_t n) {
    pm_test_text_printf(t, "%s %zu:", what, v ? n : 0);
    for (size_t i = 0; v && i < n; i++) pm_test_text_printf(t, " %a", v[i]);
    pm_test_text_str(t, "\n");
}

/* Every parameter a parse gave, printed exactly. */
static char *params_print(const void *params) {
    const pm__road_req *q = params;
    const pm_road_params *p = &q->p;
    pm_test_text t = {0};
    pm_test_text_printf(&t, "closed %d curve %d alpha %a err %a seg %a w %a sh %a cs %u\n", p->closed,
                (int)p->curve, p->alpha, p->max_error, p->max_segment, p->width, p->shoulder,
                p->cross_segments);
    pm_test_text_printf(&t, "bank %a %a %a roll %d mesh %d conform %d up %d flatten %d %a %a %a uv %a\n",
                p->bank_max_degrees, p->bank_radius, p->bank_transition, p->roll != NULL,
                p->terrain_mesh, (int)p->conform, (int)p->up, p->flatten, p->flatten_opts.margin,
                p->flatten_opts.falloff, p->flatten_opts.depth, p->uv_scale);
    reals_print(&t, "points", p->points, 3 * p->npoints);
    if (p->roll) reals_print(&t, "roll", p->roll, p->npoints);
    reals_print(&t, "lods", p->lods, p->nlods);
    pm_test_text_printf(&t, "props %zu %d\n", p->nprops, p->props != NULL);
    for (size_t i = 0; i < p->nprops; i++)
        pm_test_text_printf(&t, "'%s' %a %a %d %d\n", p->props[i].name, p->props[i].spacing,
                    p->props[i].offset, (int)p->props[i].side, (int)p->props[i].align);
    pm_test_text_printf(&t, "terrain %d noise %d %a %a %a %u %u %d %d\n", q->has_terrain, q->noise,
                q->hf.origin[0], q->hf.origin[1], q->hf.cell, q->hf.cols, q->hf.rows,
                q->hf.h != NULL, q->hf.h32 != NULL);
    if (q->hf.h) reals_print(&t, "heights", q->hf.h, (size_t)q->hf.cols * q->hf.rows);
    pm_test_text_printf(&t, "nz %llu %a %a %u\n", (unsigned long long)q->nz.seed, q->nz.amplitude,
                q->nz.wavelength, q->nz.octaves);
    pm_test_text_printf(&t, "terrain ptr %d\n", p->terrain != NULL);
    return t.s;
}

static pm_api_limits limits(void) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    return lim;
}

/* Both paths on body; returns whether the fast reader took it. */
static bool same_lim(const char *body, const pm_api_limits *lim) {
    return pm_test_fast_same(&pm_api_gen_road, true, params_print, body, lim);
}

static bool same(const char *body) {
    pm_api_limits lim = limits();
    return same_lim(body, &lim);
}

static void taken(const char *body) { cr_expect(same(body), "not taken: %.300s", body); }
static void left(const char *body) { cr_expect(!same(body), "taken: %.300s", body); }

#define PTS "\"points\": [[0, 0, 0], [50, 1, 0], [100, 0, 30]]"

Test(req_road_fast, plain_requests_are_taken_with_the_same_result) {
    taken("{" PTS "}");
    taken("{\"width\": 8, \"shoulder\": 0, \"cross_segments\": 2, " PTS ", \"max_error\": 0.05, "
          "\"max_segment\": 1000}");
    taken(" \n{\t\"points\" : [ [ 0.0 , -0 , -0.0 ] , [ 1E+1 , 0.5e-1 , 1.25 ] ] , \"closed\" : "
          "false }\r\n");
    taken("{" PTS ", \"closed\": true, \"curve\": \"linear\", \"alpha\": 1, \"max_error\": 100, "
          "\"max_segment\": 0.05, \"width\": 200, \"shoulder\": 100, \"cross_segments\": 64.0, "
          "\"conform\": \"bank\", \"up\": \"terrain\", \"uv_scale\": 1e-6}");
    taken("{" PTS ", \"banking\": null, \"flatten\": null, \"terrain\": null, \"props\": [], "
          "\"lods\": []}");
    taken("{" PTS ", \"banking\": {}, \"lods\": [0.1, 0.5, 1e3]}");
    taken("{" PTS ", \"banking\": {\"max_degrees\": 45, \"radius\": 0.1, \"transition\": 0, "
          "\"roll\": [0, -45, 12.5]}}");
    taken("{" PTS ", \"props\": [{\"name\": \"lamp\", \"spacing\": 25}, {\"spacing\": 0.1, "
          "\"name\": \" ~!#$%&'()*+,-./:;<=>?@[]^_`{|}\", \"offset\": 1000, \"side\": \"left\", "
          "\"align\": \"terrain\"}, {\"name\": "
          "\"0123456789012345678901234567890123456789012345678901234567890123\", \"spacing\": 1e6, "
          "\"side\": \"right\"}]}");
    taken("{" PTS ", \"terrain\": {\"cell\": 10, \"cols\": 20, \"rows\": 5, \"noise\": {}}}");
    taken("{" PTS ", \"terrain\": {\"origin\": [-50, -20], \"cell\": 10, \"cols\": 20.0, \"rows\": "
          "5, \"mesh\": false, \"noise\": {\"seed\": \"18446744073709551615\", \"amplitude\": 0, "
          "\"wavelength\": 0.01, \"octaves\": 8}}, \"flatten\": {}, \"conform\": \"bank\"}");
    taken("{" PTS ", \"terrain\": {\"cell\": 10, \"cols\": 2, \"rows\": 2, \"noise\": {\"seed\": "
          "9223372036854775807}}, \"flatten\": {\"margin\": 0, \"falloff\": 1e4, \"depth\": 10}}");
    taken("{" PTS ", \"terrain\": {\"cell\": 100, \"cols\": 3, \"rows\": 2, \"heights\": [0, 1.5, "
          "-2, 1e5, -1e5, 0.1]}}");
    /* Reals outside the dump's exact path (subnormal, tiny) too. */
    taken("{\"points\": [[0, 5e-324, 0], [0, 2.2250738585072014e-309, 40], [1e-5, 1.5e-7, 80]]}");
}

/* Refused after reading (points that coincide, a closed road of two, a
 * road over max_vertices): the same problem, message for message. */
Test(req_road_fast, checks_after_reading_give_the_same_problem) {
    taken("{\"points\": [[0, 0, 0], [0, 5, 0.0001], [10, 0, 0]]}");
    taken("{\"points\": [[0, 0, 0], [10, 0, 0], [20, 0, 0], [0.0001, 3, 0]], \"closed\": true}");
    taken("{\"points\": [[0, 0, 0], [10, 0, 0]], \"closed\": true}");
    pm_api_limits lim = limits();
    lim.max_vertices = 50;
    cr_expect(same_lim("{\"points\": [[0, 0, 0], [1000, 0, 0]], \"max_segment\": 0.05}", &lim));
}

/* Anything unusual is left to the document path (whose answers these are:
 * every error of reading, escapes, unknown members). */
Test(req_road_fast, anything_unusual_is_left_to_the_document_path) {
    static const char *const bodies[] = {
        "", "   ", "[]", "{}", "{" PTS "} x", "{" PTS ",}", "{" PTS ", \"typo\": 1}",
        "{" PTS ", \"width\": 1, \"width\": 1}", "{" PTS ", " PTS "}",
        "{\"points\": [[0, 0], [10, 0]]}", "{\"points\": [[0, 0, 0, 0], [10, 0, 0, 0]]}",
        "{\"points\": [[0, 0, 0]]}", "{\"points\": []}", "{\"points\": null}",
        "{\"points\": [[0, 0, 0], [100001, 0, 0]]}", "{\"points\": [[0, 0, 0], \"a\"]}",
        "{" PTS ", \"width\": 0}", "{" PTS ", \"width\": 200.0001}", "{" PTS ", \"width\": \"7\"}",
        "{" PTS ", \"width\": null}", "{" PTS ", \"width\": 1e999}", "{" PTS ", \"width\": 07}",
        "{" PTS ", \"cross_segments\": 4.5}", "{" PTS ", \"cross_segments\": 65}",
        "{" PTS ", \"cross_segments\": 0}", "{" PTS ", \"alpha\": -0.5}",
        "{" PTS ", \"closed\": 1}", "{" PTS ", \"closed\": null}", "{" PTS ", \"curve\": \"cubic\"}",
        "{" PTS ", \"curve\": \"line\\u0061r\"}", "{" PTS ", \"conform\": null}",
        "{" PTS ", \"banking\": 1}", "{" PTS ", \"banking\": {\"max_degrees\": 46}}",
        "{" PTS ", \"banking\": {\"radius\": 0}}", "{" PTS ", \"banking\": {\"roll\": [0, 0]}}",
        "{" PTS ", \"banking\": {\"roll\": null}}", "{" PTS ", \"banking\": {\"roll\": [0, 0, 46]}}",
        "{" PTS ", \"banking\": {\"kind\": 1}}", "{" PTS ", \"flatten\": {}}",
        "{" PTS ", \"flatten\": {\"depth\": 11}}", "{" PTS ", \"lods\": [0.01]}",
        "{" PTS ", \"lods\": [0.5, 0.5]}", "{" PTS ", \"lods\": null}",
        "{" PTS ", \"lods\": [1, 2, 3, 4, 5, 6, 7, 8, 9]}", "{" PTS ", \"props\": {}}",
        "{" PTS ", \"props\": [{}]}", "{" PTS ", \"props\": [{\"name\": \"a\"}]}",
        "{" PTS ", \"props\": [{\"name\": \"\", \"spacing\": 10}]}",
        "{" PTS ", \"props\": [{\"name\": \"a\\n\", \"spacing\": 10}]}",
        "{" PTS ", \"props\": [{\"name\": \"\xc3\xa9\", \"spacing\": 10}]}",
        "{" PTS ", \"props\": [{\"name\": \"a\", \"spacing\": 10, \"side\": \"up\"}]}",
        "{" PTS ", \"props\": [{\"name\": \"a\", \"spacing\": 10, \"color\": 1}]}",
        "{" PTS ", \"props\": [{\"name\": "
        "\"01234567890123456789012345678901234567890123456789012345678901234\", \"spacing\": 1}]}",
        "{" PTS ", \"terrain\": {}}", "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": null}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"heights\": [0, 0, 0]}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"heights\": [0, 0, 0, 0], "
        "\"noise\": {}}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"heights\": null}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {\"seed\": -1}}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {\"seed\": "
        "\"18446744073709551616\"}}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {\"seed\": "
        "\"12a\"}}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {\"octaves\": 9}}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {}, \"origin\": "
        "[0]}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 1, \"rows\": 2, \"noise\": {}}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {}, \"mesh\": 0}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {}, \"cell\": 1}}",
        "{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2, \"noise\": {}, \"size\": 1}}",
        "{\"point\\u0073\": [[0, 0, 0], [50, 1, 0]]}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) left(bodies[i]);
}

Test(req_road_fast, limits_are_left_to_the_document_path) {
    pm_api_limits lim = limits();
    lim.max_points = 3;
    cr_expect(same_lim("{" PTS "}", &lim));
    cr_expect(!same_lim("{\"points\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]}", &lim));
    lim = limits();
    lim.max_vertices = 100;
    cr_expect(!same_lim("{" PTS ", \"terrain\": {\"cell\": 1, \"cols\": 11, \"rows\": 10, "
                        "\"noise\": {}}}", &lim));
}

/* Member names that differ from a known one by a byte, a length or an
 * escape are unknown members: left to the document path. */
Test(req_road_fast, near_miss_member_names_are_left) {
    static const char *const keys[] = {"widt", "widths", "Width", "wid\\u0074h", "", "\\\"width",
                                       "max_erro", "max_errors", "lod", "prop", "up_", "u"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        pm_test_text t = {0};
        pm_test_text_printf(&t, "{" PTS ", \"%s\": 1}", keys[i]);
        left(t.s);
        free(t.s);
    }
    left("{" PTS ", \"width\" 5}");
    left("{" PTS ", \"width");
    left("{" PTS ", \"width\": 5");
}

/* ---- random roads ---- */

static int rnd(pm_rng *r, int n) { return (int)(pm_rng_u64(r) % (uint64_t)n); }

static const char *ws(pm_rng *r) {
    static const char *const w[] = {"", "", " ", "\n  ", "\t", "\r\n"};
    return w[rnd(r, 6)];
}

/* x in one of several spellings (the same value or its nearest double). */
static void put_num(pm_test_text *t, pm_rng *r, double x) {
    if (x == 0) {
        static const char *const zeros[] = {"0", "0.0", "-0", "-0.0", "0e0", "0E+3", "-0.000"};
        pm_test_text_str(t, zeros[rnd(r, 7)]);
        return;
    }
    if (x == floor(x) && fabs(x) < 1e6) {
        switch (rnd(r, 4)) {
        case 0: pm_test_text_printf(t, "%.0f", x); return;
        case 1: pm_test_text_printf(t, "%.1f", x); return;
        case 2: pm_test_text_printf(t, "%.0fe0", x); return;
        default: break;
        }
    }
    switch (rnd(r, 6)) {
    case 0: pm_test_text_printf(t, "%.17g", x); break;
    case 1: pm_test_text_printf(t, "%.3f", x); break;
    case 2: pm_test_text_printf(t, "%.6e", x); break;
    case 3: pm_test_text_printf(t, "%.6f", x); break;
    case 4: pm_test_text_printf(t, "%.9g", x); break;
    default: pm_test_text_printf(t, "%g", x); break;
    }
}

/* The members of one body, each as its own text, joined in a random order. */
typedef struct members { pm_test_text m[24]; int n; } members;

static pm_test_text *member(members *ms, pm_rng *r, const char *name) {
    pm_test_text *t = &ms->m[ms->n++];
    *t = (pm_test_text){0};
    pm_test_text_printf(t, "\"%s\"%s:%s", name, ws(r), ws(r));
    return t;
}

static char *join(members *ms, pm_rng *r) {
    for (int i = ms->n - 1; i > 0; i--) {
        int j = rnd(r, i + 1);
        pm_test_text s = ms->m[i];
        ms->m[i] = ms->m[j];
        ms->m[j] = s;
    }
    pm_test_text t = {0};
    pm_test_text_printf(&t, "%s{%s", ws(r), ws(r));
    for (int i = 0; i < ms->n; i++) {
        pm_test_text_printf(&t, "%s%s", i ? "," : "", ws(r));
        pm_test_text_str(&t, ms->m[i].s);
        free(ms->m[i].s);
    }
    pm_test_text_printf(&t, "%s}%s", ws(r), ws(r));
    return t.s;
}

static void put_heights(pm_test_text *t, pm_rng *r, size_t n, int kind) {
    pm_test_text_str(t, "[");
    for (size_t i = 0; i < n; i++) {
        double h = kind == 0 ? (double)(float)pm_rng_range(r, -20, 20)   /* float32 exact */
                   : kind == 1 ? rnd(r, 40) * 0.25 - 5                  /* quarters: exact */
                               : pm_rng_range(r, -20, 20);
        if (i) pm_test_text_str(t, rnd(r, 4) ? "," : ", ");
        if (kind == 1 || rnd(r, 2)) put_num(t, r, h);
        else pm_test_text_printf(t, "%.17g", h);
    }
    pm_test_text_str(t, "]");
}

/* A random road: straights and arcs, optional members of every kind,
 * sometimes one fault (a value out of range, an unknown or repeated
 * member, a wrong type, a bad count). */
static char *random_road(pm_rng *r, int *fault, bool *bulk) {
    *fault = rnd(r, 4) == 0 ? 1 + rnd(r, 10) : 0;
    members ms = {.n = 0};
    int n = 2 + rnd(r, rnd(r, 4) ? 12 : 60);
    pm_test_text *t = member(&ms, r, "points");
    pm_test_text_str(t, "[");
    double x = pm_rng_range(r, -100, 100), z = pm_rng_range(r, -100, 100), dir = 0;
    int style = rnd(r, 3);
    for (int i = 0; i < n; i++) {
        double y = style == 0 ? 0 : style == 1 ? pm_rng_range(r, -3, 3) : rnd(r, 5);
        pm_test_text_printf(t, "%s[", i ? "," : "");
        put_num(t, r, style == 2 ? round(x) : x);
        pm_test_text_printf(t, ",%s", ws(r));
        put_num(t, r, *fault == 1 && i == 1 ? 1e5 + 1 : y);
        pm_test_text_str(t, ", ");
        put_num(t, r, style == 2 ? round(z) : z);
        pm_test_text_str(t, "]");
        dir += pm_rng_range(r, -0.5, 0.5);
        double step = 5 + rnd(r, 30);
        x += step * cos(dir);
        z += step * sin(dir);
    }
    pm_test_text_str(t, "]");
    if (rnd(r, 3) == 0) pm_test_text_str(member(&ms, r, "closed"), rnd(r, 4) ? "false" : "true");
    if (rnd(r, 3) == 0) pm_test_text_str(member(&ms, r, "curve"), rnd(r, 2) ? "\"linear\"" : "\"catmull-rom\"");
    if (rnd(r, 3) == 0) put_num(member(&ms, r, "alpha"), r, rnd(r, 5) * 0.25);
    double err = rnd(r, 2) ? 0.05 : 0.01 + rnd(r, 20) * 0.01;
    if (rnd(r, 2)) put_num(member(&ms, r, "max_error"), r, err);
    if (rnd(r, 2)) put_num(member(&ms, r, "max_segment"), r, *fault == 2 ? 0.01 : 1 + rnd(r, 1000));
    if (rnd(r, 2)) put_num(member(&ms, r, "width"), r, 2 + rnd(r, 30) * 0.5);
    if (rnd(r, 2)) put_num(member(&ms, r, "shoulder"), r, rnd(r, 8) * 0.5);
    if (rnd(r, 2)) put_num(member(&ms, r, "cross_segments"), r, *fault == 3 ? 2.5 : 1 + rnd(r, 8));
    int bank = rnd(r, 4);
    if (bank == 1) pm_test_text_str(member(&ms, r, "banking"), "null");
    if (bank >= 2) {
        t = member(&ms, r, "banking");
        pm_test_text_str(t, "{");
        int k = 0;
        if (rnd(r, 2)) pm_test_text_printf(t, "%s\"max_degrees\": %d", k++ ? "," : "", rnd(r, 46));
        if (rnd(r, 2)) pm_test_text_printf(t, "%s\"radius\": %g", k++ ? "," : "", 0.5 + rnd(r, 100));
        if (rnd(r, 2)) pm_test_text_printf(t, "%s\"transition\": %d", k++ ? "," : "", rnd(r, 40));
        if (bank == 3) {
            pm_test_text_printf(t, "%s\"roll\": [", k++ ? "," : "");
            int m = *fault == 4 ? n + 1 : n;
            for (int i = 0; i < m; i++) {
                if (i) pm_test_text_str(t, ",");
                put_num(t, r, rnd(r, 3) ? 0 : pm_rng_range(r, -10, 10));
            }
            pm_test_text_str(t, "]");
        }
        pm_test_text_str(t, "}");
    }
    int terrain = rnd(r, 5), cols = 2 + rnd(r, 40), rows = 2 + rnd(r, 40);
    if (terrain == 4 && rnd(r, 2)) cols = 40 + rnd(r, 30), rows = 30 + rnd(r, 10);   /* bulk */
    *bulk = terrain == 4 && (size_t)(cols * rows) >= PM_API_BULK_CANON_MIN;
    if (terrain == 1) pm_test_text_str(member(&ms, r, "terrain"), "null");
    if (terrain >= 2) {
        t = member(&ms, r, "terrain");
        members tm = {.n = 0};
        if (rnd(r, 2)) {
            pm_test_text *o = member(&tm, r, "origin");
            pm_test_text_str(o, "[");
            put_num(o, r, -150 + rnd(r, 10));
            pm_test_text_str(o, ", ");
            put_num(o, r, -150.5);
            pm_test_text_str(o, "]");
        }
        put_num(member(&tm, r, "cell"), r, 5 + rnd(r, 4) * 2.5);
        pm_test_text_printf(member(&tm, r, "cols"), "%d", cols);
        pm_test_text_printf(member(&tm, r, "rows"), rnd(r, 2) ? "%d" : "%d.0", rows);
        if (rnd(r, 3) == 0) pm_test_text_str(member(&tm, r, "mesh"), rnd(r, 2) ? "true" : "false");
        if (terrain == 4) {
            put_heights(member(&tm, r, "heights"), r,
                        (size_t)(cols * rows - (*fault == 5 ? 1 : 0)), rnd(r, 3));
        } else {
            pm_test_text *o = member(&tm, r, "noise");
            pm_test_text_str(o, "{");
            if (terrain == 3) {
                pm_test_text_printf(o, "\"seed\": %s, ",
                            *fault == 6 ? "\"123456789012345678901\""   /* past uint64 */
                            : rnd(r, 2) ? "\"12345678901234567890\""    /* past int64 */
                                        : "42");
                pm_test_text_printf(o, "\"octaves\": %d, \"amplitude\": 5, \"wavelength\": 150", 1 + rnd(r, 8));
            }
            pm_test_text_str(o, "}");
        }
        char *body = join(&tm, r);
        pm_test_text_str(t, body);
        free(body);
    }
    if (rnd(r, 4) == 0) pm_test_text_str(member(&ms, r, "conform"), rnd(r, 2) ? "\"bank\"" : "\"drape\"");
    if (rnd(r, 4) == 0) pm_test_text_str(member(&ms, r, "up"), rnd(r, 2) ? "\"terrain\"" : "\"world\"");
    int flat = rnd(r, 4);
    if (flat == 1) pm_test_text_str(member(&ms, r, "flatten"), "null");
    if (flat >= 2 && (terrain >= 2 || *fault == 7))
        pm_test_text_printf(member(&ms, r, "flatten"), "{\"margin\": %d, \"depth\": 0.25}", rnd(r, 5));
    if (rnd(r, 3) == 0) {
        t = member(&ms, r, "props");
        pm_test_text_str(t, "[");
        int np = rnd(r, 4);
        for (int i = 0; i < np; i++)
            pm_test_text_printf(t, "%s{\"name\": \"p%d\", \"spacing\": %d%s%s}", i ? "," : "", i, 5 + rnd(r, 50),
                        rnd(r, 2) ? ", \"side\": \"left\"" : "",
                        rnd(r, 2) ? ", \"offset\": 1.5, \"align\": \"terrain\"" : "");
        pm_test_text_str(t, "]");
    }
    if (rnd(r, 3) == 0) {
        t = member(&ms, r, "lods");
        pm_test_text_str(t, "[");
        int nl = rnd(r, 4);
        for (int i = 0; i < nl; i++) {
            if (i) pm_test_text_str(t, ",");
            put_num(t, r, *fault == 8 ? 0.001 : 0.5 * (i + 1) + 0.125);
        }
        pm_test_text_str(t, "]");
    }
    if (rnd(r, 4) == 0) put_num(member(&ms, r, "uv_scale"), r, 0.125 * (1 + rnd(r, 8)));
    if (*fault == 9) pm_test_text_str(member(&ms, r, rnd(r, 2) ? "lanes" : "width"), "2");
    if (*fault == 10) pm_test_text_str(member(&ms, r, "width"), rnd(r, 2) ? "\"8\"" : "null");
    return join(&ms, r);
}

Test(req_road_fast, random_roads_give_the_same_answer) {
    pm_rng r;
    pm_rng_seed(&r, 17);
    int plain = 0, plain_taken = 0, faulty_left = 0, bulk_n = 0, bulk_taken = 0;
    for (int i = 0; i < 3000; i++) {
        int fault;
        bool bulk;
        char *body = random_road(&r, &fault, &bulk);
        bool took = same(body);
        if (bulk) bulk_n++, bulk_taken += took;   /* long heights: the document path's */
        else if (!fault) plain++, plain_taken += took;
        else faulty_left += !took;
        free(body);
    }
    cr_expect_gt(plain, 1500);
    cr_expect_eq(plain_taken, plain, "%d of %d plain roads taken", plain_taken, plain);
    cr_expect_gt(bulk_n, 100);
    cr_expect_eq(bulk_taken, 0, "%d of %d roads with %d heights or more taken", bulk_taken, bulk_n,
                 PM_API_BULK_CANON_MIN);
    /* Most faults are errors of reading (some, such as a member repeated
     * that was absent, are none): those are the document path's. */
    cr_expect_gt(faulty_left, 300, "%d faulty roads left", faulty_left);
}

/* ---- number tokens and their canonical text ---- */

/* A random short token: a sign, 0 or 1..15 integer digits, a fraction
 * with leading or trailing zeros; sometimes longer or with an exponent. */
static void put_token(pm_test_text *t, pm_rng *r) {
    if (rnd(r, 2)) pm_test_text_str(t, "-");
    int nint = rnd(r, 3) == 0 ? 1 : 1 + rnd(r, rnd(r, 3) ? 6 : 16);
    for (int i = 0; i < nint; i++)
        pm_test_text_printf(t, "%d", nint == 1 && rnd(r, 3) == 0 ? 0 : i == 0 ? 1 + rnd(r, 9) : rnd(r, 10));
    if (rnd(r, 4)) {
        pm_test_text_str(t, ".");
        int nfrac = 1 + rnd(r, rnd(r, 3) ? 7 : 16), zeros = rnd(r, 3) == 0 ? rnd(r, 6) : 0;
        for (int i = 0; i < nfrac; i++)
            pm_test_text_printf(t, "%d", i < zeros ? 0 : rnd(r, 4) ? rnd(r, 10) : rnd(r, 2) * 9);
    }
    if (rnd(r, 20) == 0) pm_test_text_printf(t, "e%d", rnd(r, 7) - 3);
}

/* pm_api__json_number_tok (eight digits at a time where the text has
 * room, byte by byte near its end) against pm_api__json_number, and
 * pm_api__canon_real_tok (the text from the token's digits) against
 * pm_api__canon_real_text (the general print): the same verdict, end and
 * bits, and the same canonical text, on a million random tokens. */
Test(req_road_fast, number_tokens_and_their_text_match_the_general_path) {
    static const char *const tails[] = {"", ",", "]", " ", ", 1.5]]", "}", "e", "x", "."};
    pm_rng r;
    pm_rng_seed(&r, 23);
    int bad = 0, plain = 0;
    for (int n = 0; n < 1000000 && bad < 10; n++) {
        pm_test_text t = {0};
        put_token(&t, &r);
        size_t toklen = t.len;
        pm_test_text_str(&t, tails[rnd(&r, sizeof tails / sizeof *tails)]);
        if (rnd(&r, 2)) pm_test_text_str(&t, "                ");   /* room to read ahead */
        const char *a = t.s, *b = t.s, *end = t.s + t.len;
        bool ia = false, ib = false;
        int64_t va = 0, vb = 0;
        double da = 0, db = 0;
        pm_api_numtok tok;
        bool oka = pm_api__json_number(&a, end, &ia, &va, &da);
        bool okb = pm_api__json_number_tok(&b, end, &ib, &vb, &db, &tok);
        uint64_t ba, bb;
        memcpy(&ba, &da, 8);
        memcpy(&bb, &db, 8);
        bool same = oka == okb && (!oka || (a == b && ia == ib && va == vb && ba == bb));
        if (okb && same) {
            char x[64] = {0}, y[64] = {0};
            double v = db + 0.0;
            size_t nx = pm_api__canon_real_text(v, x), ny = pm_api__canon_real_tok(v, &tok, y);
            plain += tok.plain && (size_t)(b - t.s) == toklen;
            if (nx != ny || memcmp(x, y, nx) != 0) {
                same = false;
                cr_log_error("'%.*s': text '%.*s', from the token '%.*s'", (int)toklen, t.s, (int)nx, x,
                             (int)ny, y);
            }
        }
        if (!same) {
            bad++;
            cr_log_error("'%s': full %d %d %lld %a, tok %d %d %lld %a", t.s, oka, ia, (long long)va,
                         da, okb, ib, (long long)vb, db);
        }
        free(t.s);
    }
    cr_expect_eq(bad, 0);
    cr_expect_gt(plain, 500000);
}

/* A random token for pm_api__real_short: mostly its own shape at every
 * length (leading and trailing zeros, -0, values that round up or down to
 * 17 digits), else the spellings it must leave (8+ digits in a part,
 * exponents, leading zeros, "1.", "-", long or tiny values). */
static void put_short_token(pm_test_text *t, pm_rng *r) {
    static const char *const odd[] = {"-", ".5", "-.5", "1.", "00", "01.5", "-00.5", "0e1",
                                      "1E5", "1.5e-3", "1.5E+2", "-0", "0", "-0.0", "+1",
                                      "0.0000001", "0.00001234", "1e-320", "4.9e-324",
                                      "2.2250738585072014e-308", "1.7976931348623157e308",
                                      "123456789012345678", "9007199254740993", "0.1", "-x"};
    if (rnd(r, 12) == 0) {
        pm_test_text_str(t, odd[rnd(r, sizeof odd / sizeof *odd)]);
        return;
    }
    if (rnd(r, 2)) pm_test_text_str(t, "-");
    int nint = 1 + rnd(r, rnd(r, 8) ? 7 : 10);
    bool zero_lead = nint == 1 && rnd(r, 3) == 0;
    for (int i = 0; i < nint; i++)
        pm_test_text_printf(t, "%d", zero_lead ? 0 : i == 0 ? 1 + rnd(r, 9) : rnd(r, 10));
    if (rnd(r, 6)) {
        pm_test_text_str(t, ".");
        int nfrac = 1 + rnd(r, rnd(r, 8) ? 7 : 10), zeros = rnd(r, 3) == 0 ? rnd(r, 7) : 0;
        for (int i = 0; i < nfrac; i++)
            pm_test_text_printf(t, "%d", i < zeros ? 0 : rnd(r, 4) ? rnd(r, 10) : rnd(r, 2) * 9);
    }
    if (rnd(r, 30) == 0) pm_test_text_printf(t, "%ce%d", rnd(r, 2) ? 'e' : 'E', rnd(r, 7) - 3);
}

/* pm_api__real_short (the reading and the canonical text in one step)
 * against the plain reader pm_api__json_number and the general print
 * pm_api__canon_real_text, and the value against strtod: where it takes a
 * token, the same end, bits and text; where it leaves one, nothing
 * consumed (the general path reads it). Millions of random tokens. */
Test(req_road_fast, short_reals_in_one_step_match_the_reader_and_the_print) {
    static const char *const tails[] = {"", ",", "]", " ", ", 1.5]]", "}", "e", "E", "x", ".",
                                        "0", "5", ".5", "-"};
    pm_rng r;
    pm_rng_seed(&r, 29);
    int bad = 0, taken_n = 0, below = 0, tailed = 0;
    for (int n = 0; n < 3000000 && bad < 10; n++) {
        pm_test_text t = {0};
        put_short_token(&t, &r);
        size_t toklen = t.len;
        pm_test_text_str(&t, tails[rnd(&r, sizeof tails / sizeof *tails)]);
        /* The room the step reads (arbitrary bytes past the text). */
        pm_test_text_str(&t, rnd(&r, 2) ? "                                "
                                        : "9999999999999999999999999999999e");
        char y[PM_API_CANON_REAL_ROOM + 8];
        memset(y, '#', sizeof y);
        double vy = 0;
        size_t ny = 0;
        const char *e = pm_api__real_short(t.s, &vy, y, &ny);
        if (!e) {
            free(t.s);
            continue;
        }
        taken_n++;
        const char *a = t.s;
        bool ia;
        int64_t va;
        double vx = 0;
        bool ok = pm_api__json_number(&a, t.s + t.len, &ia, &va, &vx);
        char x[64] = {0};
        size_t nx = ok ? pm_api__canon_real_text(vx + 0.0, x) : 0;
        char tok[64] = {0};   /* the token read: a tail may extend it */
        toklen = (size_t)(e - t.s);
        memcpy(tok, t.s, toklen < 63 ? toklen : 63);
        double vs = ia ? (double)strtoll(tok, NULL, 10) : strtod(tok, NULL);   /* -0: 0 as jansson */
        bool same = ok && a == e && memcmp(&vx, &vy, 8) == 0 && memcmp(&vs, &vy, 8) == 0 &&
                    nx == ny && memcmp(x, y, nx) == 0;
        if (same && nx > toklen) tailed++;   /* digits past the token's */
        if (same && nx > toklen && memcmp(y, t.s, toklen) != 0) below++;   /* and its own lowered */
        if (!same) {
            bad++;
            cr_log_error("'%.*s': reader %d end %td %a '%.*s'; one step end %td %a '%.*s'", (int)toklen,
                         t.s, ok, a - t.s, vx, (int)nx, x, e - t.s, vy, (int)ny, y);
        }
        free(t.s);
    }
    cr_expect_eq(bad, 0);
    cr_expect_gt(taken_n, 1500000, "%d taken", taken_n);
    cr_expect_gt(tailed, 100000, "%d with a tail", tailed);
    cr_expect_gt(below, 10000, "%d below", below);
    cr_log_info("%d taken, %d with a tail, %d below", taken_n, tailed, below);
}

/* ---- roads drawn at any angle, any spelling of their numbers ---- */


/* Every such road is taken, with the document path's parameters (bit for
 * bit), canonical text and key: points in any direction, placed up to the
 * coordinate bound, their text written from their tokens (one step for
 * the short ones, the general way for long ones, exponents and blanks). */
Test(req_road_fast, roads_at_any_angle_with_any_number_spelling_give_the_same_answer) {
    pm_rng r;
    pm_rng_seed(&r, 19);
    int n = 1500, took = 0;
    for (int i = 0; i < n; i++) {
        double dir = pm_rng_range(&r, 0, 6.283185307179586), far = 1e5 - 2000;
        double x = rnd(&r, 3) == 0 ? pm_rng_range(&r, -far, far) : pm_rng_range(&r, -300, 300);
        double z = rnd(&r, 3) == 0 ? pm_rng_range(&r, -far, far) : pm_rng_range(&r, -300, 300);
        pm_test_text t = {0};
        pm_test_text_printf(&t, "{%s\"points\":%s[", pm_test_fast_blank(&r), pm_test_fast_blank(&r));
        int np = 2 + rnd(&r, 12);
        for (int k = 0; k < np; k++) {
            pm_test_text_printf(&t, "%s[%s", k ? "," : "", pm_test_fast_blank(&r));
            pm_test_fast_coord(&t, &r, x);
            pm_test_text_printf(&t, ",%s", pm_test_fast_blank(&r));
            pm_test_fast_height(&t, &r);
            pm_test_text_printf(&t, ",%s", pm_test_fast_blank(&r));
            pm_test_fast_coord(&t, &r, z);
            pm_test_text_printf(&t, "%s]", pm_test_fast_blank(&r));
            dir += pm_rng_range(&r, -0.4, 0.4);
            x += (10 + rnd(&r, 40)) * cos(dir);
            z += (10 + rnd(&r, 40)) * sin(dir);
        }
        pm_test_text_str(&t, "]");
        if (rnd(&r, 2)) pm_test_text_printf(&t, ", \"width\": %d", 4 + rnd(&r, 8));
        pm_test_text_printf(&t, "%s}", pm_test_fast_blank(&r));
        took += same(t.s);
        free(t.s);
    }
    cr_expect_eq(took, n, "%d of %d roads taken", took, n);
}

/* A road with one coordinate spelled badly: left by the fast reader, and
 * the route's 422 names /points/i/k exactly (its 400, the token's column). */
Test(req_road_fast, bad_number_tokens_are_left_and_named_exactly) {
    pm_rng r;
    pm_rng_seed(&r, 23);
    for (int i = 0; i < 300; i++) {
        const char *tok = i % 2 ? pm_test_fast_refused[rnd(&r, PM_TEST_FAST_REFUSED)]
                                : pm_test_fast_malformed[rnd(&r, PM_TEST_FAST_MALFORMED)];
        int np = 2 + rnd(&r, 6), bad = rnd(&r, np), bad_k = rnd(&r, 3);
        size_t at = 0;
        pm_test_text t = {0};
        pm_test_text_str(&t, "{\"points\": [");
        for (int k = 0; k < np; k++) {
            double v[3] = {k * 25.980762113533157, 0.5 * k, k * 15.0 + (k % 2) * 3.25};
            pm_test_text_str(&t, k ? ", [" : "[");
            for (int c = 0; c < 3; c++) {
                if (c) pm_test_text_str(&t, ", ");
                if (k == bad && c == bad_k) {
                    at = t.len;
                    pm_test_text_str(&t, tok);
                } else {
                    pm_test_fast_coord(&t, &r, v[c]);
                }
            }
            pm_test_text_str(&t, "]");
        }
        pm_test_text_str(&t, "], \"width\": 6}");
        char ptr[32];
        snprintf(ptr, sizeof ptr, "/points/%d/%d", bad, bad_k);
        pm_test_fast_bad_token(&pm_api_gen_road, t.s, at, tok, ptr, same(t.s));
        free(t.s);
    }
}
