// Stencil fusion, the search's last step: regions that feed a tiled consumer through windows of
// rows (blurs, gradients, stencil chains) are computed per tile of it instead of whole at the
// root, where the cost model predicts the saved memory traffic outweighs the rows recomputed
// at tile edges. Halide's compute_at a tile loop, decided per pipeline.
#pragma once

#include "hcompile/analysis.h"
#include "hcompile/decisions.h"
#include "hcompile/machine.h"

namespace hc {

// What the analytical model misses about a group: its members' rows and the consumers' stencil
// loads stay in L1/L2 within a tile, where at the root every stencil load comes from L2 or
// beyond. Measured on 2 cores (AVX-512), per tile against every region at the root: Harris
// 3.9 / 10.6 ms, unsharp mask 4.2 / 8.1, 3x3 blur 1.8 / 4.1, 5x5 box blur 1.9 / 5.2, 9x9 max
// filter 2.9 / 10.3, where the model predicted 0.9-1.3x. A group is taken when its predicted
// seconds, divided by this, beat the regions apart by kMinPredictedGain.
constexpr double kTileLocality = 2.0;

// Tile sizes tried, in rows.
constexpr int64_t kTileRows[] = {8, 16, 32, 64, 128, 256};

// `schedule` (a whole pipeline's list, every region compute_root or row-fused) with groups of
// regions moved into the tiles of a consumer where the model predicts a gain of at least
// kMinPredictedGain (search.h).
Schedule fuse_stencils(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const MachineModel &machine,
                       const Halide::Target &target, Schedule schedule);

}  // namespace hc
