#include "hcompile/gpu_schedule.h"

namespace hc {

namespace {

// Threads of a block: 32 along the innermost axis (a warp reads 32 neighbouring elements: one
// coalesced transaction), 8 rows of them where the region has a second axis; 256 along one axis.
constexpr int64_t kWarp = 32;
constexpr int64_t kRowsPerBlock = 8;
constexpr int64_t kThreadsPerBlock = kWarp * kRowsPerBlock;

}  // namespace

Schedule gpu_schedule(const LoweredPipeline &lowered) {
    Schedule schedule;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        const int region = static_cast<int>(i);
        if (r.optional && !r.stored_by_default) {
            schedule.push_back({region, Choice::Inline});
            continue;
        }
        schedule.push_back({region, Choice::ComputeRoot});
        if (r.vars.empty()) {
            schedule.push_back({region, Choice::GpuTile, -1, 1, 0});
        } else if (r.vars.size() >= 2 && r.extents[1] > 1) {
            schedule.push_back({region, Choice::GpuTile, -1, kWarp, kRowsPerBlock});
        } else {
            schedule.push_back({region, Choice::GpuTile, -1, kThreadsPerBlock, 0});
        }
    }
    return schedule;
}

}  // namespace hc
