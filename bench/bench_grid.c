/* Grid quality and speed.
 *   bench_grid                      the report: 1,000 seeds of the defaults with
 *                                   square vs Laplacian relaxation (same grids
 *                                   up to relaxation), every shape and point
 *                                   mode, and a size-20 hexagon end to end
 *   bench_grid key=value ...        one configuration over the seeds, e.g.
 *       seeds=200 shape=disk points=poisson mode=laplacian iterations=40
 *       strength=0.5 size=8 merge=1 min=45 max=135 lock=1
 *   bench_grid glb=FILE key=value   writes that configuration's GLB (first
 *                                   seed) for tools/render.sh */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid/grid.h"
#include "scene/result.h"
#include "pm_api/encode.h"
#include "pm_bench.h"

extern const pm_api_generator pm_api_gen_grid;

typedef struct summary {
    double worst_p05, mean_p05, worst_min, mean_min, mean_outside, mean_sj;
    unsigned seeds_p05_ok, inverted, failures;
    double ms, cpu;
} summary;

static summary run(const pm_grid_params *base, unsigned seeds) {
    summary s = {.worst_p05 = INFINITY, .worst_min = INFINITY};
    double t0 = pm_bench_wall_ms(), c0 = pm_bench_cpu_ms();
    for (unsigned i = 0; i < seeds; i++) {
        pm_grid_params p = *base;
        p.seed = base->seed + i;
        pm_arena *a = pm_arena_create(0);
        pm_grid g;
        if (pm_grid_build(a, &p, NULL, &g) < 0) {
            s.failures++;
            pm_arena_destroy(a);
            continue;
        }
        const pm_grid_quality *q = &g.quality;
        if (q->p05_scaled_jacobian < s.worst_p05) s.worst_p05 = q->p05_scaled_jacobian;
        if (q->min_scaled_jacobian < s.worst_min) s.worst_min = q->min_scaled_jacobian;
        s.mean_p05 += q->p05_scaled_jacobian / seeds;
        s.mean_min += q->min_scaled_jacobian / seeds;
        s.mean_sj += q->mean_scaled_jacobian / seeds;
        s.mean_outside += q->angles_outside_45_135 / seeds;
        s.seeds_p05_ok += q->p05_scaled_jacobian >= 0.8;
        s.inverted += q->inverted_quads;
        pm_arena_destroy(a);
    }
    s.ms = (pm_bench_wall_ms() - t0) / seeds;
    s.cpu = (pm_bench_cpu_ms() - c0) / seeds;
    return s;
}

static void print(const char *label, const summary *s, unsigned seeds) {
    printf("%-34s p05 SJ worst %.3f mean %.3f | min SJ worst %.3f mean %.3f | mean SJ %.3f | "
           "outside 45-135 %.2f%% | p05>=0.8 in %u/%u | inverted %u | failed %u | %.2f ms/grid "
           "(%.2f CPU)\n",
           label, s->worst_p05, s->mean_p05, s->worst_min, s->mean_min, s->mean_sj,
           100 * s->mean_outside, s->seeds_p05_ok, seeds, s->inverted, s->failures, s->ms, s->cpu);
}

static const char *glb_path;

static int encode_glb(const pm_scene *s, pm_api_buf *out) {
    return pm_api_encode(s, &pm_api_gen_grid, "00000000000000000000000000000000", PM_API_FMT_GLB, out);
}

static int write_glb(const pm_grid_params *p) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s;
    pm_api_buf b;
    if (pm_grid_generate(a, p, NULL, &s) < 0 || encode_glb(s, &b) < 0) return 1;
    FILE *f = fopen(glb_path, "wb");
    if (!f || fwrite(b.data, 1, b.len, f) != b.len) return 1;
    fclose(f);
    free(b.data);
    pm_arena_destroy(a);
    return 0;
}

static int parse_arg(pm_grid_params *p, unsigned *seeds, const char *arg) {
    const char *eq = strchr(arg, '=');
    if (!eq) return -1;
    size_t n = (size_t)(eq - arg);
    const char *v = eq + 1;
#define KEY(k) (n == strlen(k) && strncmp(arg, k, n) == 0)
    if (KEY("seeds")) *seeds = (unsigned)atoi(v);
    else if (KEY("seed")) p->seed = strtoull(v, NULL, 10);
    else if (KEY("size")) p->size = (uint32_t)atoi(v);
    else if (KEY("spacing")) p->spacing = atof(v);
    else if (KEY("shape")) p->shape = !strcmp(v, "square") ? PM_GRID_SQUARE : !strcmp(v, "disk") ? PM_GRID_DISK : PM_GRID_HEXAGON;
    else if (KEY("points")) p->points = !strcmp(v, "poisson") ? PM_GRID_POISSON : PM_GRID_LATTICE;
    else if (KEY("mode")) p->relax.mode = !strcmp(v, "laplacian") ? PM_GRID_RELAX_LAPLACIAN : PM_GRID_RELAX_SQUARE;
    else if (KEY("iterations")) p->relax.iterations = (uint32_t)atoi(v);
    else if (KEY("strength")) p->relax.strength = atof(v);
    else if (KEY("lock")) p->relax.lock_boundary = atoi(v) != 0;
    else if (KEY("merge")) p->merge = atof(v);
    else if (KEY("min")) p->merge_min_angle = atof(v);
    else if (KEY("max")) p->merge_max_angle = atof(v);
    else if (KEY("glb")) glb_path = v;
    else return -1;
#undef KEY
    return 0;
}

/* A size-20 hexagon, points to GLB bytes, timed over repeats (median). */
static void end_to_end(pm_grid_points pts) {
    pm_grid_params p;
    pm_grid_defaults(&p);
    p.size = 20;
    p.points = pts;
    double t[15], te[15], tc[15];
    uint64_t verts = 0, tris = 0;
    size_t glb = 0;
    for (int i = 0; i < 15; i++) {
        p.seed = (uint64_t)i + 1;
        pm_arena *a = pm_arena_create(0);
        pm_scene *s;
        pm_api_buf b;
        double t0 = pm_bench_wall_ms(), c0 = pm_bench_cpu_ms();
        if (pm_grid_generate(a, &p, NULL, &s) < 0) {
            printf("size-20 hexagon failed\n");
            pm_arena_destroy(a);
            return;
        }
        double t1 = pm_bench_wall_ms();
        if (encode_glb(s, &b) < 0) {
            printf("size-20 hexagon: encoding failed\n");
            pm_arena_destroy(a);
            return;
        }
        t[i] = pm_bench_wall_ms() - t0;
        tc[i] = pm_bench_cpu_ms() - c0;
        te[i] = pm_bench_wall_ms() - t1;
        glb = b.len;
        free(b.data);
        verts = pm_scene_vertex_count(s);
        tris = pm_scene_triangle_count(s);
        pm_arena_destroy(a);
    }
    qsort(t, 15, sizeof *t, pm_bench_cmp_double);
    qsort(te, 15, sizeof *te, pm_bench_cmp_double);
    qsort(tc, 15, sizeof *tc, pm_bench_cmp_double);
    printf("size-20 hexagon, %s points, defaults, end to end (points -> GLB): median %.2f ms wall "
           "(min %.2f), %.2f ms CPU; GLB encoding median %.2f ms wall (%llu vertices, %llu "
           "triangles, %zu-byte GLB)\n",
           pm_grid_points_name(pts), t[7], t[0], tc[7], te[7], (unsigned long long)verts,
           (unsigned long long)tris, glb);
}

int main(int argc, char **argv) {
    pm_grid_params p;
    pm_grid_defaults(&p);
    p.seed = 1;
    unsigned seeds = 1000;
    if (argc > 1) {
        seeds = 200;
        for (int i = 1; i < argc; i++)
            if (parse_arg(&p, &seeds, argv[i]) < 0) {
                fprintf(stderr, "bench_grid: bad argument %s\n", argv[i]);
                return 2;
            }
        if (glb_path) return write_glb(&p);
        summary s = run(&p, seeds);
        print("configuration", &s, seeds);
        return s.inverted || s.failures ? 1 : 0;
    }
    int status = 0;
    printf("Quality over %u seeds (scaled Jacobian per quad = its worst corner; p05 = 5th "
           "percentile of a grid's quads)\n", seeds);
    pm_grid_shape shapes[] = {PM_GRID_HEXAGON, PM_GRID_SQUARE, PM_GRID_DISK};
    pm_grid_points modes[] = {PM_GRID_LATTICE, PM_GRID_POISSON};
    for (int s = 0; s < 3; s++)
        for (int m = 0; m < 2; m++)
            for (int r = 0; r < 2; r++) {
                pm_grid_params q = p;
                q.shape = shapes[s];
                q.points = modes[m];
                q.relax.mode = r ? PM_GRID_RELAX_LAPLACIAN : PM_GRID_RELAX_SQUARE;
                unsigned n = s == 0 && m == 0 ? seeds : seeds / 5;
                char label[96];
                snprintf(label, sizeof label, "%s %s %s%s", pm_grid_shape_name(q.shape),
                         pm_grid_points_name(q.points), pm_grid_relax_name(q.relax.mode),
                         s == 0 && m == 0 && r == 0 ? " (defaults)" : "");
                summary sum = run(&q, n);
                print(label, &sum, n);
                if (sum.inverted || sum.failures) status = 1;
            }
    end_to_end(PM_GRID_LATTICE);
    end_to_end(PM_GRID_POISSON);
    return status;
}
