#ifndef PM_API_REQ_ROAD_H
#define PM_API_REQ_ROAD_H
/* Internal to api/: what the road's two readers share (api/req_road.c, the
 * document path, and api/req_road_fast.c, straight from the bytes). */
#include "road/road.h"
#include "pm_api/generator.h"
#include "pm_api/problem.h"

#define PM_ROAD_COORD_MAX 1e5       /* |x|, |y|, |z|: float output keeps mm */
#define PM_ROAD_MAX_PROPS 32
#define PM_ROAD_MAX_LODS 8
#define PM_ROAD_NAME_MAX 64

typedef struct pm__road_req {
    pm_road_params p;
    bool has_terrain, noise;
    pm_heightfield hf;          /* heights filled at parse or by noise */
    pm_noise nz;
    double lods[PM_ROAD_MAX_LODS];
} pm__road_req;

/* The checks after reading that need several fields (distinct points,
 * closed loops of three, the output's size against max_vertices): errors
 * into prob, as the document path gives them. */
void pm_api__road_check(pm__road_req *q, const pm_api_limits *lim, pm_api_problem *prob);

/* The fast reader (pm_api_generator.parse_text) of a road body. */
int pm_api__road_parse_text(const char *body, size_t len, const pm_api_limits *lim,
                            pm_arena *arena, void **params, json_t **canonical,
                            pm_api_problem *prob);
/* pm_api__road_parse_text with the points' digits read by path: -1 the
 * fastest scan this CPU has, 0 the SWAR one, 1 SSSE3 lanes (the same
 * answer either way). -2 for a path the CPU lacks. */
int pm_api__road_parse_text_path(const char *body, size_t len, const pm_api_limits *lim,
                                 pm_arena *arena, void **params, json_t **canonical,
                                 pm_api_problem *prob, int path);
#endif
