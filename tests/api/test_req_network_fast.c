#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "network/network.h"
#include "scene/arena.h"
#include "scene/rng.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_api/request.h"
#include "pm_test_fast.h"
#include "../../api/json_fast.h"

/* The network's fast reader (pm_api_generator.parse_text, api/
 * req_network_fast.c) against the document path (pm_api_parse_body, then
 * parse): on every body it takes, the same result byte for byte: the
 * parameters, the canonical text, the cache key, and the whole
 * problem+json of a request refused after reading. What it does not take
 * goes to the document path, so it must take every plain request. */

extern const pm_api_generator pm_api_gen_network;

static void id_print(pm_test_text *t, const pm_network_id *id) {
    if (id->is_num) pm_test_text_printf(t, "#%lld", (long long)id->num);
    else pm_test_text_printf(t, "'%s'", id->str);
}

/* The parameters a parse gave (the network's are first in its params). */
static char *params_print(const void *params) {
    const pm_network_params *p = params;
    pm_test_text t = {0};
    pm_test_text_printf(&t, "r %a s %u uv %a snap %a err %a seg %a n %zu e %zu\n", p->corner_radius,
                p->corner_segments, p->uv_scale, p->snap, p->max_error, p->max_segment, p->nnodes,
                p->nedges);
    for (size_t i = 0; i < p->nnodes; i++) {
        id_print(&t, &p->ids[i]);
        pm_test_text_printf(&t, " %a %a %a\n", p->nodes[3 * i], p->nodes[3 * i + 1], p->nodes[3 * i + 2]);
    }
    for (size_t i = 0; i < p->nedges; i++) {
        const pm_network_edge *E = &p->edges[i];
        pm_test_text_printf(&t, "%u-%u w %a sw %d %a %a np %zu:", E->from, E->to, E->width,
                    (int)E->has_sidewalk, E->sidewalk.width, E->sidewalk.curb_height, E->npoints);
        for (size_t k = 0; k < 3 * E->npoints; k++) pm_test_text_printf(&t, " %a", E->points[k]);
        pm_test_text_str(&t, "\n");
    }
    return t.s;
}

static pm_api_limits limits(void) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    return lim;
}

/* Both paths on body; returns whether the fast reader took it. */
static bool same_lim(const char *body, const pm_api_limits *lim) {
    return pm_test_fast_same(&pm_api_gen_network, false, params_print, body, lim);
}

static bool same(const char *body) {
    pm_api_limits lim = limits();
    return same_lim(body, &lim);
}

static void taken(const char *body) { cr_expect(same(body), "not taken: %s", body); }
static void left(const char *body) { cr_expect(!same(body), "taken: %s", body); }

#define TWO "\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, {\"id\": \"b\", \"position\": [100, 0]}]"
#define ONE_EDGE "\"edges\": [{\"from\": \"a\", \"to\": \"b\"}]"

Test(req_network_fast, plain_requests_are_taken_with_the_same_result) {
    taken("{" TWO ", " ONE_EDGE "}");
    taken("{" ONE_EDGE ", " TWO "}");
    taken("{\"nodes\":[{\"position\":[0,-0.0,0],\"id\":1},{\"id\":-2,\"position\":[1e2,3.5,-0]}],"
          "\"edges\":[{\"to\":-2,\"from\":1,\"width\":7,\"points\":[[50,10],[60,1,5]]}]}");
    taken("{" TWO ", " ONE_EDGE ", \"sidewalk\": {\"width\": 2}, \"max_segment\": 1000}");
    taken("{" TWO ", " ONE_EDGE ", \"sidewalk\": null, \"width\": 9.25, \"corner_radius\": 0, "
          "\"corner_segments\": 64, \"uv_scale\": 1e-3, \"snap\": 1e-6, \"max_error\": 100, "
          "\"max_segment\": 0.05}");
    taken("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"sidewalk\": null}], "
          "\"sidewalk\": {\"curb_height\": 0.2}}");
    taken("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"sidewalk\": {}}]}");
    taken("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"sidewalk\": {\"width\": 3}}], "
          "\"sidewalk\": {\"curb_height\": 0.25, \"width\": 1}}");
    taken(" \n{\t\"nodes\" : [ { \"id\" : 7 , \"position\" : [ 0 , 0 , 0 ] } , { \"id\" : \"7\" , "
          "\"position\" : [ 5E+1 , 0.5e-1 , 1.25 ] } ] , \"edges\" : [ { \"from\" : 7 , \"to\" : "
          "\"7\" , \"points\" : [ ] } ] }\r\n");
    taken("{\"nodes\": [{\"id\": 9223372036854775807, \"position\": [0.1, 0.2]}, {\"id\": "
          "-9223372036854775808, \"position\": [99999.99999999999, -1e5]}], \"edges\": [{\"from\": "
          "9223372036854775807, \"to\": -9223372036854775808, \"width\": 1000}]}");
    taken("{\"nodes\": [{\"id\": \"0123456789012345678901234567890123456789012345678901234567890123\","
          " \"position\": [0, 0]}, {\"id\": \" ~!#$%&'()*+,-./:;<=>?@[]^_`{|}\", \"position\": "
          "[0, 30]}], \"edges\": [{\"from\": \"0123456789012345678901234567890123456789012345678901234567890123\","
          " \"to\": \" ~!#$%&'()*+,-./:;<=>?@[]^_`{|}\"}]}");
    /* Reals outside the dump's exact path (subnormal heights) too. */
    taken("{\"nodes\": [{\"id\": 1, \"position\": [0, 5e-324, 0]}, {\"id\": 2, \"position\": "
          "[0, 2.2250738585072014e-309, 40]}], \"edges\": [{\"from\": 1, \"to\": 2}]}");
}

/* Refused after reading (ids, edges, angles, crossings): the fast reader's
 * problem is the document path's, message for message. */
Test(req_network_fast, checks_after_reading_give_the_same_problem) {
    taken("{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, {\"id\": \"a\", \"position\": [9, 0]}, "
          "{\"id\": 1, \"position\": [0, 9]}, {\"id\": 1, \"position\": [9, 9]}], " ONE_EDGE "}");
    taken("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"c\"}, {\"from\": 3, \"to\": \"b\"}]}");
    taken("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"a\"}]}");
    taken("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": \"a\"}, "
          "{\"from\": \"a\", \"to\": \"b\"}]}");
    taken("{" TWO ", \"snap\": 0.5, \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"width\": 4, "
          "\"points\": [[0, 0], [50, 0, 3], [50, 0.0001]]}]}");
    taken("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": [100, 0]}, "
          "{\"id\": 3, \"position\": [100, 1]}], \"edges\": [{\"from\": 1, \"to\": 2}, {\"from\": 1, "
          "\"to\": 3}]}");
    taken("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": [100, 100]}, "
          "{\"id\": 3, \"position\": [0, 100]}, {\"id\": 4, \"position\": [100, 0]}], \"edges\": "
          "[{\"from\": 1, \"to\": 2}, {\"from\": 3, \"to\": 4}]}");
    taken("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": [100, -40]}], "
          "\"edges\": [{\"from\": 1, \"to\": 2, \"points\": [[80, 0], [80, 40], [40, 40], [40, -40]]}]}");
    /* More crossings than are listed one by one: 6 x 6 streets with no node. */
    pm_test_text t = {0};
    pm_test_text_str(&t, "{\"nodes\": [");
    for (int k = 0; k < 6; k++)
        pm_test_text_printf(&t, "%s{\"id\": \"w%d\", \"position\": [0, %d]}, {\"id\": \"e%d\", \"position\": "
                    "[100, %d]}, {\"id\": \"s%d\", \"position\": [%d, -20]}, {\"id\": \"n%d\", "
                    "\"position\": [%d, 90]}", k ? ", " : "", k, 12 * k, k, 12 * k, k, 10 + 15 * k, k,
                    10 + 15 * k);
    pm_test_text_str(&t, "], \"edges\": [");
    for (int k = 0; k < 6; k++)
        pm_test_text_printf(&t, "%s{\"from\": \"w%d\", \"to\": \"e%d\"}, {\"from\": \"s%d\", \"to\": \"n%d\"}",
                    k ? ", " : "", k, k, k, k);
    pm_test_text_str(&t, "]}");
    taken(t.s);
    free(t.s);
}

/* Anything unusual is left to the document path (whose answers these are:
 * every error of reading, escapes, unknown members, GeoJSON). */
Test(req_network_fast, anything_unusual_is_left_to_the_document_path) {
    static const char *const bodies[] = {
        "", "   ", "[]", "{}", "{" TWO "}", "{" ONE_EDGE "}", "{" TWO ", " ONE_EDGE "} x",
        "{" TWO ", " ONE_EDGE ",}", "{" TWO ", " ONE_EDGE ", \"typo\": 1}",
        "{" TWO ", " ONE_EDGE ", \"width\": 1, \"width\": 1}",
        "{" TWO ", " ONE_EDGE ", \"width\": 0}", "{" TWO ", " ONE_EDGE ", \"width\": 1000.0001}",
        "{" TWO ", " ONE_EDGE ", \"width\": \"7\"}", "{" TWO ", " ONE_EDGE ", \"width\": null}",
        "{" TWO ", " ONE_EDGE ", \"width\": 1e999}", "{" TWO ", " ONE_EDGE ", \"width\": 07}",
        "{" TWO ", " ONE_EDGE ", \"corner_segments\": 4.0}",
        "{" TWO ", " ONE_EDGE ", \"corner_segments\": 65}",
        "{" TWO ", " ONE_EDGE ", \"corner_radius\": -0.5}", "{" TWO ", " ONE_EDGE ", \"snap\": 2}",
        "{" TWO ", " ONE_EDGE ", \"max_error\": 0}", "{" TWO ", " ONE_EDGE ", \"max_segment\": 0.01}",
        "{" TWO ", " ONE_EDGE ", \"uv_scale\": 0}", "{" TWO ", " ONE_EDGE ", \"sidewalk\": 1}",
        "{" TWO ", " ONE_EDGE ", \"sidewalk\": {\"width\": 101}}",
        "{" TWO ", " ONE_EDGE ", \"sidewalk\": {\"curb_height\": 0}}",
        "{" TWO ", " ONE_EDGE ", \"sidewalk\": {\"kerb\": 0.1}}",
        "{" TWO ", " ONE_EDGE ", \"sidewalk\": {\"width\": 1, \"width\": 1}}",
        "{" TWO ", " ONE_EDGE ", \"sidew\\u0061lk\": null}",
        "{" TWO ", " ONE_EDGE ", \"type\": \"FeatureCollection\"}",
        "{\"type\": \"FeatureCollection\", \"features\": []}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}], " ONE_EDGE "}",
        "{" TWO ", \"edges\": []}", "{" TWO ", \"edges\": {}}", "{\"nodes\": null, " ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, {\"id\": \"\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, {\"id\": \"b\\n\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, {\"id\": \"\xc3\xa9\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, {\"id\": "
        "\"01234567890123456789012345678901234567890123456789012345678901234\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": 1.0, \"position\": [0, 0]}, {\"id\": 2, \"position\": [1, 0]}], "
        "\"edges\": [{\"from\": 1, \"to\": 2}]}",
        "{\"nodes\": [{\"id\": 99999999999999999999, \"position\": [0, 0]}, {\"id\": 2, \"position\": "
        "[1, 0]}], \"edges\": [{\"from\": 2, \"to\": 2}]}",
        "{\"nodes\": [{\"id\": true, \"position\": [0, 0]}, {\"id\": 2, \"position\": [1, 0]}], "
        "\"edges\": [{\"from\": 2, \"to\": 2}]}",
        "{\"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\", \"position\": [1, 0]}], " ONE_EDGE "}",
        "{\"nodes\": [{\"position\": [0, 0]}, {\"id\": \"b\", \"position\": [1, 0]}], " ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0]}, {\"id\": \"b\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0, 0, 0]}, {\"id\": \"b\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 100001]}, {\"id\": \"b\", \"position\": [1, 0]}], "
        ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0], \"z\": 1}, {\"id\": \"b\", \"position\": "
        "[1, 0]}], " ONE_EDGE "}",
        "{\"nodes\": [{\"id\": \"a\", \"position\": [0, 0]}, 5], " ONE_EDGE "}",
        "{" TWO ", \"edges\": [{\"from\": \"a\"}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"lanes\": 2}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"points\": [[1]]}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"points\": null}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"points\": [1, 2]}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"sidewalk\": true}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"width\": -1}]}",
        "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"to\": \"b\"}]}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) left(bodies[i]);
}

Test(req_network_fast, limits_are_left_to_the_document_path) {
    pm_api_limits lim = limits();
    lim.max_points = 2;
    const char *pts = "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"points\": "
                      "[[10, 1], [20, 1]]}]}";
    cr_expect(same_lim(pts, &lim));
    cr_expect(!same_lim("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": "
                        "[9, 0]}, {\"id\": 3, \"position\": [0, 9]}], \"edges\": [{\"from\": 1, "
                        "\"to\": 2}]}", &lim));
    cr_expect(!same_lim("{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"points\": "
                        "[[10, 1], [20, 1], [30, 1]]}]}", &lim));
    cr_expect(!same_lim("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": "
                        "[90, 0]}, {\"id\": 3, \"position\": [0, 90]}], \"edges\": [{\"from\": 1, "
                        "\"to\": 2, \"points\": [[30, 1], [60, 1]]}, {\"from\": 1, \"to\": 3, "
                        "\"points\": [[1, 45]]}]}", &lim));
}

/* Member names that differ from a known one by a byte, a length or an
 * escape are unknown members: left to the document path. */
Test(req_network_fast, near_miss_member_names_are_left) {
    static const char *const keys[] = {"fro", "fromm", "From", "fr\\u006fm", "t", "too", "widt",
                                       "widths", "point", "sidewalks", "", "\\\"from"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        pm_test_text t = {0};
        pm_test_text_printf(&t, "{" TWO ", \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"%s\": 1}]}",
                    keys[i]);
        left(t.s);
        free(t.s);
        t = (pm_test_text){0};
        pm_test_text_printf(&t, "{\"nodes\": [{\"id\": \"a\", \"%s\": [0, 0]}, {\"id\": \"b\", "
                    "\"position\": [100, 0]}], " ONE_EDGE "}", keys[i]);
        left(t.s);
        free(t.s);
    }
    left("{\"nodes\": [{\"i\": \"a\", \"position\": [0, 0]}, {\"id\": \"b\", \"position\": "
         "[100, 0]}], " ONE_EDGE "}");
    left("{\"nodes\": [{\"id\": \"a\", \"positio\": [0, 0]}, {\"id\": \"b\", \"position\": "
         "[100, 0]}], " ONE_EDGE "}");
    left("{" TWO ", " ONE_EDGE ", \"max_segmen\": 5}");
    left("{" TWO ", " ONE_EDGE ", \"max_segment\" 5}");
    left("{" TWO ", " ONE_EDGE ", \"max_segment");
}

/* ---- random towns ---- */

static int rnd(pm_rng *r, int n) { return (int)(pm_rng_u64(r) % (uint64_t)n); }

/* The inline reader of short number tokens (json_fast.h) against the full
 * one, and its reals against strtod, on random tokens and what follows
 * them: the same verdict, end, kind and bits. */
static void put_token(pm_test_text *t, pm_rng *r) {
    static const char *const tails[] = {"", ",", "]", " ", "e5", "E-2", ".5", "x", "-", "0", "."};
    if (rnd(r, 2)) pm_test_text_str(t, "-");
    int nint = rnd(r, 8) == 0 ? 0 : 1 + rnd(r, rnd(r, 4) ? 6 : 20);
    for (int i = 0; i < nint; i++) pm_test_text_printf(t, "%d", i == 0 && rnd(r, 4) ? 1 + rnd(r, 9) : rnd(r, 10));
    if (rnd(r, 2)) {
        pm_test_text_str(t, ".");
        int nfrac = rnd(r, 8) == 0 ? 0 : 1 + rnd(r, rnd(r, 4) ? 6 : 20);
        for (int i = 0; i < nfrac; i++) pm_test_text_printf(t, "%d", rnd(r, 3) ? rnd(r, 10) : 0);
    }
    pm_test_text_str(t, tails[rnd(r, sizeof tails / sizeof *tails)]);
}

Test(req_network_fast, short_number_tokens_read_as_the_full_reader) {
    pm_rng r;
    pm_rng_seed(&r, 11);
    int bad = 0, inline_ok = 0;
    for (int n = 0; n < 300000 && bad < 10; n++) {
        pm_test_text t = {0};
        put_token(&t, &r);
        const char *a = t.s, *b = t.s, *end = t.s + t.len;
        bool ia = false, ib = false;
        int64_t va = 0, vb = 0;
        double da = 0, db = 0;
        bool oka = pm_api__json_number(&a, end, &ia, &va, &da);
        bool okb = pm_api__json_number_short(&b, end, &ib, &vb, &db);
        uint64_t ba, bb;
        memcpy(&ba, &da, 8);
        memcpy(&bb, &db, 8);
        bool same = oka == okb && (!oka || (a == b && ia == ib && va == vb && ba == bb));
        if (okb && !ib) {   /* an independent reference for reals: strtod */
            char tok[64] = {0};
            size_t len = (size_t)(b - t.s);
            if (len < sizeof tok) {
                memcpy(tok, t.s, len);
                double x = strtod(tok, NULL);
                uint64_t bx;
                memcpy(&bx, &x, 8);
                same = same && bx == bb;
            }
        }
        inline_ok += okb && (size_t)(b - t.s) <= 16;
        if (!same) {
            bad++;
            cr_log_error("'%s': full %d %d %lld %a, short %d %d %lld %a", t.s, oka, ia,
                         (long long)va, da, okb, ib, (long long)vb, db);
        }
        free(t.s);
    }
    cr_expect_eq(bad, 0);
    cr_expect_gt(inline_ok, 50000);
}

static void put_num(pm_test_text *t, pm_rng *r, double x) {
    switch (rnd(r, 5)) {
    case 0: pm_test_text_printf(t, "%.17g", x); break;
    case 1: pm_test_text_printf(t, "%.3f", x); break;
    case 2: pm_test_text_printf(t, "%.6e", x); break;
    case 3: pm_test_text_printf(t, "%.0f", x); break;   /* an integer token */
    default: pm_test_text_printf(t, "%g", x); break;
    }
}

static void put_id(pm_test_text *t, int node, int style) {
    if (style == 0) pm_test_text_printf(t, "%d", node);
    else if (style == 1) pm_test_text_printf(t, "\"n%d\"", node);
    else if (node % 2) pm_test_text_printf(t, "%d", node * 7 - 100);
    else pm_test_text_printf(t, "\"%d\"", node * 7 - 100);
}

static const char *ws(pm_rng *r) {
    static const char *const w[] = {"", "", " ", "\n  ", "\t"};
    return w[rnd(r, 5)];
}

/* A random grid town, sometimes with one fault: a value out of range, an
 * unknown or repeated member, a bad id, a self-loop, a crossing. */
static char *town(pm_rng *r, int *fault) {
    int w = 2 + rnd(r, 5), h = 1 + rnd(r, 4), style = rnd(r, 3);
    double cell = 20 + rnd(r, 100), jit = rnd(r, 2) ? cell * 0.2 : 0;
    *fault = rnd(r, 3) == 0 ? 1 + rnd(r, 9) : 0;
    pm_test_text t = {0};
    pm_test_text_printf(&t, "{%s\"nodes\":%s[", ws(r), ws(r));
    for (int i = 0; i < w * h; i++) {
        double x = (i % w) * cell + pm_rng_range(r, -jit, jit), z = (i / w) * cell + pm_rng_range(r, -jit, jit);
        pm_test_text_printf(&t, "%s{\"id\":%s", i ? "," : "", ws(r));
        put_id(&t, *fault == 1 && i == 1 ? 0 : i, style);
        pm_test_text_printf(&t, ",%s\"position\": [", ws(r));
        put_num(&t, r, x);
        if (rnd(r, 3) == 0) {
            pm_test_text_str(&t, ", ");
            put_num(&t, r, pm_rng_range(r, -5, 5));
        }
        pm_test_text_str(&t, ",");
        put_num(&t, r, *fault == 2 && i == 0 ? 2e5 : z);
        pm_test_text_printf(&t, "]%s}", ws(r));
    }
    pm_test_text_printf(&t, "],%s\"edges\": [", ws(r));
    int ne = 0;
    for (int i = 0; i < w * h; i++) {
        for (int d = 0; d < 2; d++) {
            int j = d ? i + w : i + 1;
            if ((d == 0 && i % w == w - 1) || j >= w * h) continue;
            if (*fault == 3 && ne == 0) j = i;
            pm_test_text_printf(&t, "%s{\"from\": ", ne++ ? "," : "");
            put_id(&t, i, style);
            pm_test_text_str(&t, ", \"to\": ");
            put_id(&t, *fault == 4 && ne == 2 ? 999 : j, style);
            if (rnd(r, 3) == 0 || (*fault == 5 && ne == 1)) {
                pm_test_text_str(&t, ", \"width\": ");
                put_num(&t, r, *fault == 5 && ne == 1 ? 0 : 3 + rnd(r, 12) * 0.5);
            }
            int sw = rnd(r, 5);
            if (sw == 1) pm_test_text_str(&t, ", \"sidewalk\": null");
            if (sw == 2) pm_test_text_printf(&t, ", \"sidewalk\": {\"width\": %g}", 1 + rnd(r, 8) * 0.25);
            if (sw == 3) pm_test_text_printf(&t, ", \"sidewalk\": {\"curb_height\": %g, \"width\": 2}", 0.1 + rnd(r, 3) * 0.05);
            if (rnd(r, 4) == 0) {
                double ax = (i % w) * cell, az = (i / w) * cell;
                double bx = (j % w) * cell, bz = (j / w) * cell;
                pm_test_text_str(&t, ", \"points\": [[");
                put_num(&t, r, (ax + bx) / 2 + (d ? cell * 0.05 : 0));
                if (rnd(r, 2)) pm_test_text_printf(&t, ", %g", pm_rng_range(r, 0, 3));
                pm_test_text_str(&t, ", ");
                put_num(&t, r, (az + bz) / 2 + (d ? 0 : cell * 0.05));
                pm_test_text_str(&t, "]]");
            }
            if (*fault == 6 && ne == 1) pm_test_text_str(&t, ", \"lanes\": 2");
            pm_test_text_str(&t, "}");
        }
    }
    pm_test_text_str(&t, "]");
    if (*fault == 7) pm_test_text_str(&t, ", \"width\": 5, \"width\": 6");
    if (*fault == 8) pm_test_text_str(&t, ", \"corner_segments\": 1");
    if (*fault == 9 && ne >= 2) pm_test_text_str(&t, ", \"snap\": 0.9");
    if (rnd(r, 2)) pm_test_text_printf(&t, ", \"sidewalk\": {\"width\": %g}", 1 + rnd(r, 4) * 0.5);
    else if (rnd(r, 2)) pm_test_text_str(&t, ", \"sidewalk\": null");
    if (rnd(r, 2)) pm_test_text_printf(&t, ", \"max_segment\": %d", 1 + rnd(r, 1000));
    if (rnd(r, 3) == 0) pm_test_text_printf(&t, ", \"width\":%s7", ws(r));
    if (rnd(r, 3) == 0) pm_test_text_printf(&t, ", \"corner_radius\": %g, \"corner_segments\": %d", rnd(r, 20) * 0.5, 2 + rnd(r, 10));
    if (rnd(r, 4) == 0) pm_test_text_printf(&t, ", \"max_error\": %g, \"uv_scale\": %g", 0.01 + rnd(r, 10) * 0.01, 0.05 + rnd(r, 4) * 0.05);
    pm_test_text_printf(&t, "%s}", ws(r));
    return t.s;
}

Test(req_network_fast, random_towns_give_the_same_answer) {
    pm_rng r;
    pm_rng_seed(&r, 7);
    int plain = 0, plain_taken = 0, faulty_taken = 0;
    for (int i = 0; i < 400; i++) {
        int fault;
        char *body = town(&r, &fault);
        bool took = same(body);
        if (!fault) plain++, plain_taken += took;
        else faulty_taken += took;
        /* The faults found after reading (ids, self-loops, snap against
         * widths) stay on the fast path; the others leave it. */
        if (fault && fault != 1 && fault != 3 && fault != 4 && fault != 9)
            cr_expect(!took, "fault %d taken: %.300s", fault, body);
        free(body);
    }
    cr_expect_eq(plain_taken, plain, "%d of %d plain towns taken", plain_taken, plain);
    cr_expect_gt(faulty_taken, 20);
}

/* The bench's town (bench/netconvert.sh: a 40x40 grid at 100 m, string
 * ids), whole: the same canonical text and key. */
Test(req_network_fast, the_bench_town_gives_the_same_key) {
    pm_test_text t = {0};
    pm_test_text_str(&t, "{\"nodes\": [");
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++)
            pm_test_text_printf(&t, "%s{\"id\": \"n%d_%d\", \"position\": [%.1f, %.1f]}", i || j ? ", " : "", i,
                        j, i * 100.0, -j * 100.0);
    pm_test_text_str(&t, "], \"edges\": [");
    int ne = 0;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++) {
            if (j + 1 < 40)
                pm_test_text_printf(&t, "%s{\"from\": \"n%d_%d\", \"to\": \"n%d_%d\", \"width\": 7}",
                            ne++ ? ", " : "", i, j, i, j + 1);
            if (i + 1 < 40)
                pm_test_text_printf(&t, "%s{\"from\": \"n%d_%d\", \"to\": \"n%d_%d\", \"width\": 7}",
                            ne++ ? ", " : "", i, j, i + 1, j);
        }
    pm_test_text_str(&t, "], \"sidewalk\": {\"width\": 2}, \"max_segment\": 1000}");
    cr_expect(same(t.s));
    free(t.s);
}

/* ---- turned towns, any spelling of their numbers ---- */


/* A w x h grid turned by a random angle, placed anywhere up to the
 * coordinate bound (huge values), ids of every kind (0 and -0 too), edges
 * sometimes with a bent interior point. */
static char *turned_town(pm_rng *r) {
    int w = 2 + rnd(r, 4), h = 1 + rnd(r, 4), style = rnd(r, 3);
    double cell = 30 + rnd(r, 90), a = pm_rng_range(r, 0, 6.283185307179586);
    double c = cos(a), s = sin(a), ext = (w + h) * cell;
    double ox = rnd(r, 3) == 0 ? pm_rng_range(r, -1, 1) * (1e5 - ext) : pm_rng_range(r, -500, 500);
    double oz = rnd(r, 3) == 0 ? pm_rng_range(r, -1, 1) * (1e5 - ext) : pm_rng_range(r, -500, 500);
    if (rnd(r, 6) == 0) ox = oz = 0;   /* the first node at 0 (a zero token) */
    pm_test_text t = {0};
    pm_test_text_printf(&t, "{%s\"nodes\":%s[", pm_test_fast_blank(r), pm_test_fast_blank(r));
    for (int i = 0; i < w * h; i++) {
        double u = (i % w) * cell, v = (i / w) * cell;
        pm_test_text_printf(&t, "%s{\"id\":%s", i ? "," : "", pm_test_fast_blank(r));
        if (style == 2 && i < 2) pm_test_text_str(&t, i ? "-0" : "1");   /* 0 written as -0 */
        else put_id(&t, i, style);
        pm_test_text_printf(&t, ",%s\"position\":%s[%s", pm_test_fast_blank(r), pm_test_fast_blank(r), pm_test_fast_blank(r));
        pm_test_fast_coord(&t, r, ox + c * u - s * v);
        if (rnd(r, 3) == 0) {
            pm_test_text_printf(&t, ",%s", pm_test_fast_blank(r));
            pm_test_fast_height(&t, r);
        }
        pm_test_text_printf(&t, ",%s", pm_test_fast_blank(r));
        pm_test_fast_coord(&t, r, oz + s * u + c * v);
        pm_test_text_printf(&t, "%s]}", pm_test_fast_blank(r));
    }
    pm_test_text_printf(&t, "],%s\"edges\": [", pm_test_fast_blank(r));
    int ne = 0;
    for (int i = 0; i < w * h; i++) {
        for (int d = 0; d < 2; d++) {
            int j = d ? i + w : i + 1;
            if ((d == 0 && i % w == w - 1) || j >= w * h) continue;
            pm_test_text_printf(&t, "%s{\"from\": ", ne++ ? "," : "");
            if (style == 2 && i < 2) pm_test_text_str(&t, i ? "0" : "1");
            else put_id(&t, i, style);
            pm_test_text_str(&t, ", \"to\": ");
            if (style == 2 && j < 2) pm_test_text_str(&t, j ? "0" : "1");
            else put_id(&t, j, style);
            if (rnd(r, 3) == 0) {
                pm_test_text_str(&t, ", \"width\": ");
                pm_test_fast_real(&t, r, 3 + rnd(r, 12) * 0.5);
            }
            if (rnd(r, 3) == 0) {
                double u = ((i % w) + (d ? 0.05 : 0.5)) * cell, v = ((i / w) + (d ? 0.5 : 0.05)) * cell;
                pm_test_text_printf(&t, ", \"points\": [%s[", pm_test_fast_blank(r));
                pm_test_fast_coord(&t, r, ox + c * u - s * v);
                if (rnd(r, 2)) {
                    pm_test_text_printf(&t, ",%s", pm_test_fast_blank(r));
                    pm_test_fast_height(&t, r);
                }
                pm_test_text_printf(&t, ",%s", pm_test_fast_blank(r));
                pm_test_fast_coord(&t, r, oz + s * u + c * v);
                pm_test_text_printf(&t, "]%s]", pm_test_fast_blank(r));
            }
            pm_test_text_str(&t, "}");
        }
    }
    pm_test_text_str(&t, "]");
    if (rnd(r, 3) == 0) pm_test_text_printf(&t, ", \"sidewalk\": {\"width\": %g}", 1 + rnd(r, 4) * 0.5);
    if (rnd(r, 3) == 0) pm_test_text_str(&t, ", \"max_segment\": 1000");
    pm_test_text_printf(&t, "%s}", pm_test_fast_blank(r));
    return t.s;
}

/* Every turned town is taken, with the document path's parameters (bit
 * for bit), canonical text and key. The positions' and points' text is
 * written from their tokens: short ones in one step, long ones, exponents
 * and blanks the other way; both are held against the dump here. */
Test(req_network_fast, turned_towns_with_any_number_spelling_give_the_same_answer) {
    pm_rng r;
    pm_rng_seed(&r, 12);
    int n = 600, took = 0;
    for (int i = 0; i < n; i++) {
        char *body = turned_town(&r);
        took += same(body);
        free(body);
    }
    cr_expect_eq(took, n, "%d of %d turned towns taken", took, n);
}

/* A town with one coordinate spelled badly: the fast reader leaves it
 * (setting no problem), and the route answers the document path's 422
 * naming that coordinate by its exact pointer, or its 400 saying where
 * the token is (malformed JSON has no pointer: line and column, a column
 * within the token). The bound itself is in range. */
Test(req_network_fast, bad_number_tokens_are_left_and_named_exactly) {
    pm_rng r;
    pm_rng_seed(&r, 13);
    for (int i = 0; i < 300; i++) {
        bool bad422 = i % 2 == 0;
        const char *tok = bad422 ? pm_test_fast_refused[rnd(&r, PM_TEST_FAST_REFUSED)]
                                 : pm_test_fast_malformed[rnd(&r, PM_TEST_FAST_MALFORMED)];
        int nodes = 4 + rnd(&r, 4), bad = rnd(&r, nodes), bad_k = rnd(&r, 2);
        bool in_edge = rnd(&r, 2);
        if (in_edge) bad %= nodes - 1;
        size_t at = 0;
        pm_test_text t = {0};
        pm_test_text_str(&t, "{\"nodes\": [");
        for (int k = 0; k < nodes + nodes - 1; k++) {
            bool edge = k >= nodes;
            int e = k - nodes;
            double u = 40.0 * (edge ? e + 0.5 : k), x = u * 0.8660254037844387,
                   z = u * 0.5 + (edge ? 3.625 : (k % 2) * 7.25);
            if (k == nodes) pm_test_text_str(&t, "], \"edges\": [");
            if (edge) pm_test_text_printf(&t, "%s{\"from\": %d, \"to\": %d, \"points\": [[", e ? ", " : "", e, e + 1);
            else pm_test_text_printf(&t, "%s{\"id\": %d, \"position\": [", k ? ", " : "", k);
            for (int c = 0; c < 2; c++) {
                if (c) pm_test_text_str(&t, ", ");
                if (edge == in_edge && (edge ? e : k) == bad && c == bad_k) {
                    at = t.len;
                    pm_test_text_str(&t, tok);
                } else {
                    pm_test_fast_coord(&t, &r, c ? z : x);
                }
            }
            pm_test_text_str(&t, edge ? "]]}" : "]}");
        }
        pm_test_text_str(&t, "]}");
        char ptr[64];
        if (in_edge) snprintf(ptr, sizeof ptr, "/edges/%d/points/0/%d", bad, bad_k);
        else snprintf(ptr, sizeof ptr, "/nodes/%d/position/%d", bad, bad_k);
        pm_test_fast_bad_token(&pm_api_gen_network, t.s, at, tok, ptr, same(t.s));
        free(t.s);
    }
}

/* An id of a small set built to collide: integers near 0 (with -0 for
 * 0), their digits as strings, and strings of 1 to 64 bytes that share
 * long prefixes (8-byte words the same, the tail different). */
static void put_collider(pm_test_text *t, pm_rng *r, int k) {
    static const char *const stem[] = {"", "n", "aaaaaaa", "aaaaaaaa", "aaaaaaaab",
                                       "0123456789abcdef", "0123456789abcdeg"};
    switch (k % 4) {
    case 0: {
        long long v = k / 4 % 3 == 2 ? -(k / 4) : k / 4;
        if (k / 4 % 5 == 4) v = v < 0 ? INT64_MIN + k : INT64_MAX - k;
        if (v == 0) pm_test_text_str(t, rnd(r, 2) ? "-0" : "0");   /* one id, two spellings */
        else pm_test_text_printf(t, "%lld", v);
        break;
    }
    case 1: pm_test_text_printf(t, "\"%d\"", k / 4); break;
    case 2: pm_test_text_printf(t, "\"%s%d\"", stem[(k / 4) % 7], k / 28); break;
    default: {
        int n = 1 + (k * 37) % 64;   /* 1..64 bytes: the same but for the last */
        pm_test_text_str(t, "\"");
        for (int i = 0; i + 1 < n; i++) pm_test_text_str(t, "z");
        pm_test_text_printf(t, "%c\"", 'a' + (k / 4) % 26);
    }
    }
}

/* Edges' ids resolved by the fast reader (by their text) against the
 * document path's table of strings: towns whose ids are drawn from a
 * small colliding set, so that some repeat and some edges name no node,
 * others are all distinct; every one is taken with the same answer. */
Test(req_network_fast, ids_resolved_by_their_text_as_the_document_path) {
    pm_rng r;
    pm_rng_seed(&r, 14);
    int n = 3000, took = 0, clean = 0;
    for (int i = 0; i < n; i++) {
        int nodes = 2 + rnd(&r, 6), pool = nodes + rnd(&r, 3) * rnd(&r, 6);
        int kind = rnd(&r, 3);   /* 0 distinct ids, 1 from a pool, 2 distinct, edges from the pool */
        int id[8];
        for (int k = 0; k < nodes; k++) id[k] = kind == 1 ? rnd(&r, pool * 4) : k * 4 + rnd(&r, 4) + 4 * rnd(&r, 8) * 8;
        pm_test_text t = {0};
        pm_test_text_str(&t, "{\"nodes\": [");
        for (int k = 0; k < nodes; k++) {
            pm_test_text_printf(&t, "%s{\"id\": ", k ? ", " : "");
            put_collider(&t, &r, id[k]);
            pm_test_text_printf(&t, ", \"position\": [%d, %d]}", 40 * k, (k % 2) * 25);
        }
        pm_test_text_str(&t, "], \"edges\": [");
        for (int k = 0; k + 1 < nodes; k++) {
            pm_test_text_printf(&t, "%s{\"from\": ", k ? ", " : "");
            put_collider(&t, &r, kind == 2 && rnd(&r, 8) == 0 ? rnd(&r, 4 * 64) : id[k]);
            pm_test_text_str(&t, ", \"to\": ");
            put_collider(&t, &r, kind == 2 && rnd(&r, 8) == 0 ? rnd(&r, 4 * 64) : id[k + 1]);
            pm_test_text_str(&t, "}");
        }
        pm_test_text_str(&t, "]}");
        bool ok = same(t.s);
        took += ok;
        cr_expect(ok, "not taken: %s", t.s);
        free(t.s);
        clean += kind == 0;
    }
    cr_expect_eq(took, n);
    cr_expect_gt(clean, 500);
}
