// libOpenDRIVE's side of bench/opendrive.sh (built against a checkout
// outside this repository; never part of the build): an .xodr file parsed
// and meshed (get_road_network_mesh, eps from the command line): PM_WARMUP
// untimed samples, then PM_RUNS timed ones (a sample: a batch of runs of
// PM_SAMPLE_MS, one run when a run is that long), in thread CPU time, under the
// allocator thresholds procmesh's side runs under (the service's malloc
// policy; bench_road_peer --malloc-policy prints them).
//   opendrive_peer FILE EPS MMAP_THRESHOLD TRIM_THRESHOLD
// prints "median_ms us_per_vertex vertices triangles lane_vertices
// sections": lane_vertices leaves out the centre lane (id 0), which
// libOpenDRIVE meshes as a strip of zero width (two vertices per section,
// degenerate triangles); sections = lane_vertices / (2 per lane) / lanes.
#include <OpenDriveMap.h>
#include "pm_bench.h"
#include <malloc.h>
#include <RoadNetworkMesh.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: opendrive_peer FILE.xodr EPS MMAP_THRESHOLD TRIM_THRESHOLD\n");
        return 2;
    }
    mallopt(M_MMAP_THRESHOLD, std::atoi(argv[3]));
    mallopt(M_TRIM_THRESHOLD, std::atoi(argv[4]));
    const double eps = std::atof(argv[2]);
    size_t verts = 0, tris = 0, lane_verts = 0, lanes = 0;
    auto once = [&]() {
        odr::OpenDriveMap map(argv[1], false, false, false, false);
        odr::RoadNetworkMesh mesh = map.get_road_network_mesh(eps);
        // The lanes' surface: the road procmesh builds (no marks or objects
        // in the file, so the other meshes are empty).
        verts = mesh.lanes_mesh.vertices.size();
        tris = mesh.lanes_mesh.indices.size() / 3;
        lane_verts = lanes = 0;
        const auto& starts = mesh.lanes_mesh.lane_start_indices;
        for (auto it = starts.begin(); it != starts.end(); ++it) {
            auto next = std::next(it);
            size_t end = next == starts.end() ? verts : next->first;
            if (it->second == 0) continue;
            lane_verts += end - it->first;
            lanes++;
        }
    };
    // The sampling rule procmesh's side follows, from the same header
    // (bench/pm_bench.h): a first run sizes the samples, each a batch of k
    // runs taking PM_SAMPLE_MS (default 1 ms) of thread CPU time (k = 1 for
    // a run that long; PM_SAMPLE_MS=0: no first run, single-run samples),
    // PM_WARMUP untimed samples, PM_RUNS timed ones.
    int k = 1;
    if (pm_bench_sample_ms() > 0) {
        double t_first = pm_bench_thread_ms();
        once();
        k = pm_bench_batch(pm_bench_thread_ms() - t_first);
    }
    for (int w = 0; w < pm_bench_warmup() * k; w++) once();
    const int runs = pm_bench_runs();
    std::vector<double> ms;
    for (int r = 0; r < runs; r++) {
        double t0 = pm_bench_thread_ms();
        for (int j = 0; j < k; j++) once();
        ms.push_back((pm_bench_thread_ms() - t0) / k);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[runs / 2];
    std::printf("%.3f %.4f %zu %zu %zu %zu\n", med, 1e3 * med / (double)verts, verts, tris, lane_verts,
                lanes ? lane_verts / 2 / lanes : 0);
    return 0;
}
