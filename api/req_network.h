#ifndef PM_API_REQ_NETWORK_H
#define PM_API_REQ_NETWORK_H
/* What api/req_network.c and its fast reader (api/req_network_fast.c)
 * share: the parsed request, and the checks that follow reading. */
#include "junction/junction.h"
#include "network/network.h"
#include "pm_api/reader.h"
#include "pm_api/generator.h"
#include "req_network_geojson.h"

#define PM__NCOORD 1e5             /* |coordinate| bound, metres */
#define PM__NID_MAX 64             /* longest string id */
#define PM__POS(hi) ((pm_api_range){0, (hi), true, false, NULL})   /* (0, hi] */

/* A sidewalk's defaults (width, curb height). */
static const pm_junction_sidewalk pm__sidewalk_def = {2.0, 0.15};

typedef struct pm__nreq {
    pm_network_params p;
    double *nodes;
    pm_network_id *ids;
    pm_network_edge *edges;
    const pm_api__geo *geo;    /* GeoJSON in: its projection and pointers, else NULL */
} pm__nreq;

/* An edge's ids as read, before they are resolved to node indices. */
typedef struct pm__raw_edge {
    pm_network_id from, to;
    bool ids_ok, resolved;
    bool *known;               /* per interior point: given with its height */
} pm__raw_edge;

/* The checks after every field was read without error: ids resolved
 * (duplicates, unknown ids), heights of 2D interior points filled, then
 * self-loops, duplicate edges, close points, widths, angles and crossings,
 * each into prob. */
void pm_api__network_check(pm__nreq *q, pm__raw_edge *raw, pm_arena *arena, pm_api_problem *prob);
/* The same checks after the ids: for edges whose from / to are already
 * resolved to node indices (raw[e].resolved) in a network whose node ids
 * are all different, as pm_api__network_check would resolve them. */
void pm_api__network_check_resolved(pm__nreq *q, const pm__raw_edge *raw, pm_arena *arena,
                                    pm_api_problem *prob);

/* The fast reader (pm_api_generator.parse_text) of a network body. */
int pm_api__network_parse_text(const char *body, size_t len, const pm_api_limits *lim,
                               pm_arena *arena, void **params, json_t **canonical,
                               pm_api_problem *prob);
#endif
