// libOpenDRIVE's side of bench/opendrive.sh (built against a checkout
// outside this repository; never part of the build): an .xodr file parsed
// and meshed (get_road_network_mesh, eps from the command line) PM_WARMUP
// untimed times, then PM_RUNS timed ones, in thread CPU time, under the
// allocator thresholds procmesh's side runs under (the service's malloc
// policy; bench_road_peer --malloc-policy prints them).
//   opendrive_peer FILE EPS MMAP_THRESHOLD TRIM_THRESHOLD
// prints "median_ms us_per_vertex vertices triangles lane_vertices
// sections": lane_vertices leaves out the centre lane (id 0), which
// libOpenDRIVE meshes as a strip of zero width (two vertices per section,
// degenerate triangles); sections = lane_vertices / (2 per lane) / lanes.
#include <OpenDriveMap.h>
#include <malloc.h>
#include <RoadNetworkMesh.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <vector>

static double thread_ms() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int env_int(const char* name, int def) {
    const char* v = std::getenv(name);
    return v ? std::atoi(v) : def;
}

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
    for (int w = 0; w < env_int("PM_WARMUP", 2); w++) once();
    const int runs = std::max(1, env_int("PM_RUNS", 5));
    std::vector<double> ms;
    for (int r = 0; r < runs; r++) {
        double t0 = thread_ms();
        once();
        ms.push_back(thread_ms() - t0);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[runs / 2];
    std::printf("%.3f %.4f %zu %zu %zu %zu\n", med, 1e3 * med / (double)verts, verts, tris, lane_verts,
                lanes ? lane_verts / 2 / lanes : 0);
    return 0;
}
