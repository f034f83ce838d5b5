#include <string.h>

#include "pm_api/generator.h"

extern const pm_api_generator pm_api_gen_junction;
extern const pm_api_generator pm_api_gen_road;
extern const pm_api_generator pm_api_gen_dungeon;
extern const pm_api_generator pm_api_gen_grid;
extern const pm_api_generator pm_api_gen_network;

/* The route table: one line per generator. */
const pm_api_generator *const pm_api_generators[] = {
    &pm_api_gen_junction,
    &pm_api_gen_road,
    &pm_api_gen_dungeon,
    &pm_api_gen_grid,
    &pm_api_gen_network,
    NULL,
};

const pm_api_generator *pm_api_find_generator(const char *path) {
    for (size_t i = 0; pm_api_generators[i]; i++)
        if (strcmp(pm_api_generators[i]->path, path) == 0) return pm_api_generators[i];
    return NULL;
}

void pm_api_limits_default(pm_api_limits *l) {
    l->max_arms = 16;
    l->max_points = 10000;
    l->max_rooms = 500;
    l->max_grid_size = 64;
    l->max_vertices = 4000000;
    l->max_arena_bytes = (size_t)256 << 20;
}
