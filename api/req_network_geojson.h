#ifndef PM_API_REQ_NETWORK_GEOJSON_H
#define PM_API_REQ_NETWORK_GEOJSON_H
/* Private to api/: POST /v1/networks with a GeoJSON FeatureCollection
 * (docs/network.md "GeoJSON in"). The GeoJSON is turned into the
 * equivalent nodes / edges document, read by the ordinary network parser,
 * and its errors are pointed back into the GeoJSON. */
#include <jansson.h>
#include <stdbool.h>

#include "scene/arena.h"
#include "scene/scene.h"
#include "pm_api/generator.h"
#include "pm_api/problem.h"

typedef struct pm_api__geo pm_api__geo;

/* A body is GeoJSON when it has a "type" member (no nodes / edges request has). */
bool pm_api__geojson_is(const json_t *body);

/* parse() of the GeoJSON form: same contract as pm_api_generator.parse. */
int pm_api__geojson_parse(const json_t *body, const pm_api_limits *lim, pm_arena *arena,
                          void **params, json_t **canonical, pm_api_problem *prob);

/* Rewrites the problems of the derived document (pointers /nodes/…,
 * /edges/…, and /edges/n in messages) into pointers of the GeoJSON, from
 * src into dst. src keeps its own errors (free it after). */
void pm_api__geojson_problem(const pm_api__geo *geo, const pm_api_problem *src,
                             pm_api_problem *dst);

/* Adds metadata "geo" (origin, projection, edges back to features) to a
 * generated scene. Returns 0, or -1 out of memory. */
int pm_api__geojson_meta(const pm_api__geo *geo, pm_arena *arena, pm_scene *scene);

/* The snapping alone, for tests: n local positions [x, y, z] into
 * clusters (cluster[i], numbered in (x, z, y) order), positions within
 * tol in plan chained. Returns the number of clusters, 0 out of memory. */
size_t pm_api__geojson_clusters(pm_arena *a, const double *pos, size_t n, double tol,
                                uint32_t *cluster);

/* In req_network.c: the nodes / edges parser on an already built document.
 * geo (may be NULL) rides along in the params so that generate() can add
 * its metadata and point its problems back into the GeoJSON. */
int pm_api__network_parse_doc(const json_t *doc, const pm_api_limits *lim, pm_arena *arena,
                              const pm_api__geo *geo, void **params, json_t **canonical,
                              pm_api_problem *prob);
#endif
