/* Dungeon benchmark.
 *   bench_dungeon            the three sections below
 *   bench_dungeon --time layout|full N   bench/dungeon_vs_rot.sh's side (median ms per map)
 * 1. Invariants (tests/support/pm_test_dungeon.h) over 10,000 seeds with
 *    mixed parameters, and the time per dungeon (layout + mesh).
 * 2. The rot.js comparison set-up: extent 200 x 200, 170 rooms of 5..11
 *    cells (rot's default 3..9 interior plus walls), spacing 1.
 * Times are wall-clock per map, as the peer (bench/rot_uniform.mjs)
 * measures; bench/dungeon_vs_rot.sh runs rot.js's ROT.Map.Uniform beside
 * it, pinned to one CPU.
 * 3. Growth from 50 to 800 rooms at that density. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "../tests/support/pm_test_dungeon.h"
#include "pm_bench.h"
#include "dungeon/dungeon.h"
#include "scene/result.h"

/* Counts 2..120, extents 24..200, 1..4 floors, sizes 3..17, spacing 1..4. */
static const pm_tdg_mix mix = {.stream = 0xBE7C4, .max_count = 120, .max_extent = 200, .max_floors = 4,
                               .max_extra_size = 10, .max_spacing = 4};

static int invariants(int seeds) {
    int bad = 0, crowded = 0, built = 0;
    uint64_t detours = 0, breaks = 0, astar = 0, shafts = 0, cells = 0;
    pm_test_dungeon_stats st = {0};
    double gen_ms = 0;
    for (int k = 0; k < seeds; k++) {
        pm_dungeon_params p;
        pm_tdg_mixed_params(&mix, (uint64_t)k, &p);
        pm_arena *a = pm_arena_create(0);
        pm_dungeon_layout l;
        pm_dungeon_failure f;
        pm_scene *s;
        double t0 = pm_bench_cpu_ms();
        int r = pm_dungeon_generate(a, &p, NULL, &s, &l, &f);
        gen_ms += pm_bench_cpu_ms() - t0;
        char err[256];
        if (r == PM_ERR_GEOMETRY && (f.kind == PM_DUNGEON_FAIL_PLACEMENT || f.kind == PM_DUNGEON_FAIL_PACKING)) {
            crowded++;
        } else if (r != 0) {
            printf("  case %d: error %d (failure kind %d)\n", k, r, f.kind);
            bad++;
        } else if (!pm_test_dungeon_check(&l, err, sizeof err)) {
            printf("  case %d: %s\n", k, err);
            bad++;
        } else {
            built++;
            detours += l.detours;
            breaks += l.breaks;
            astar += l.astar;
            shafts += l.nshafts;
            for (uint32_t c = 0; c < l.ncorridors; c++) cells += l.corridors[c].ncells;
            pm_test_dungeon_tally(&l, &st);
        }
        pm_arena_destroy(a);
    }
    printf("invariants: %d seeds, %d built, %d too crowded (422), %d violations\n", seeds, built, crowded, bad);
    printf("  obstacles: %lu detours, %lu breaks, %lu A* searches; %lu shafts; %lu corridor cells\n",
           (unsigned long)detours, (unsigned long)breaks, (unsigned long)astar, (unsigned long)shafts,
           (unsigned long)cells);
    printf("  graph: branch %.4f of %lu chances, dead end %.4f of branches, extend %.4f of %lu chances "
           "(probabilities vary per case)\n",
           (double)st.branches / (double)(st.branch_chances ? st.branch_chances : 1), (unsigned long)st.branch_chances,
           (double)st.dead_ends / (double)(st.branches ? st.branches : 1),
           (double)st.extends / (double)(st.extend_chances ? st.extend_chances : 1), (unsigned long)st.extend_chances);
    printf("  time: %.3f ms per dungeon (layout + mesh + metadata)\n", gen_ms / seeds);
    return bad;
}

/* Times maps of n rooms at the rot.js set-up's density; returns ms per map
 * and counts violations. */
static double timed(uint32_t n, int maps, bool mesh, int *bad, double *rooms_ok, double *tris) {
    double side = 200.0;
    if (n != 170) side = 200.0 * sqrt((double)n / 170.0);
    double total = 0;
    *rooms_ok = 0;
    *tris = 0;
    for (int k = 0; k < maps; k++) {
        pm_dungeon_params p;
        pm_dungeon_params_default(&p);
        p.seed = (uint64_t)k * 2654435761u + n;
        p.gen = (pm_dungeon_placement){n, (int32_t)side, (int32_t)side, 1, 5, 11, 1};
        pm_arena *a = pm_arena_create(1 << 20);
        pm_dungeon_layout l;
        pm_dungeon_failure f;
        pm_scene *s = NULL;
        double t0 = pm_bench_wall_ms();
        int r = mesh ? pm_dungeon_generate(a, &p, NULL, &s, &l, &f) : pm_dungeon_layout_build(a, &p, NULL, &l, &f);
        total += pm_bench_wall_ms() - t0;
        char err[256];
        if (r != 0) {
            (*bad)++;
        } else if (!pm_test_dungeon_check(&l, err, sizeof err)) {
            printf("  seed %lu: %s\n", (unsigned long)p.seed, err);
            (*bad)++;
        } else {
            *rooms_ok += l.nrooms;
            if (s) *tris += (double)pm_scene_triangle_count(s);
        }
        pm_arena_destroy(a);
    }
    *rooms_ok /= maps;
    *tris /= maps;
    return total / maps;
}

static int peer(int maps) {
    int bad = 0;
    double rooms, tris;
    double layout = timed(170, maps, false, &bad, &rooms, &tris);
    double full = timed(170, maps, true, &bad, &rooms, &tris);
    printf("procmesh 200x200, 170 rooms: %d maps, %.3f ms layout, %.3f ms layout+mesh, %.0f triangles, "
           "%d with corridors through rooms or errors\n",
           maps, layout, full, tris, bad);
    return bad;
}

/* `bench_dungeon --time layout|full MAPS`: bench/dungeon_vs_rot.sh's side,
 * timed like rot_uniform.mjs: PM_WARMUP untimed runs, then the median of
 * PM_RUNS runs, each the wall-clock mean over MAPS seeded maps (the
 * generator call alone: the invariant check after it is not timed). */
static int time_mode(const char *mode, int maps) {
    bool mesh = strcmp(mode, "full") == 0;
    int bad = 0, runs = pm_bench_runs();
    double rooms, tris, *ms = malloc((size_t)runs * sizeof *ms);
    for (int w = 0; w < pm_bench_warmup(); w++) timed(170, maps, mesh, &bad, &rooms, &tris);
    for (int r = 0; r < runs; r++) ms[r] = timed(170, maps, mesh, &bad, &rooms, &tris);
    printf("%.4f ms per map (%s, %.1f rooms)\n", pm_bench_median(ms, runs), mode, rooms);
    free(ms);
    return bad;
}

static int growth(void) {
    static const uint32_t sizes[] = {50, 100, 200, 400, 800};
    int bad = 0;
    double prev = 0;
    printf("growth (same density, 1 floor; layout + mesh):\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double rooms, tris;
        int maps = sizes[i] >= 400 ? 20 : 100;
        double ms = timed(sizes[i], maps, true, &bad, &rooms, &tris);
        printf("  %4u rooms: %8.3f ms per map%s", sizes[i], ms, i ? "" : "\n");
        if (i) printf("  (x%.2f for x2 rooms)\n", ms / prev);
        prev = ms;
    }
    return bad;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--time") == 0) return time_mode(argv[2], atoi(argv[3])) ? 1 : 0;
    int bad = invariants(10000);
    bad += peer(200);
    bad += growth();
    return bad ? 1 : 0;
}
