// Stencil fusion, the search's last step: regions that feed a tiled consumer through windows of
// rows (blurs, gradients, stencil chains) are computed per tile of it instead of whole at the
// root, where the cost model predicts the saved memory traffic outweighs the rows recomputed
// at tile edges. Halide's compute_at a tile loop, decided per pipeline.
#pragma once

#include "hcompile/analysis.h"
#include "hcompile/decisions.h"
#include "hcompile/machine.h"

namespace hc {

// Tile sizes tried, in rows.
constexpr int64_t kTileRows[] = {8, 16, 32, 64, 128};

// `schedule` (a whole pipeline's list, every region compute_root or row-fused) with groups of
// regions moved into the tiles of a consumer where the model predicts a gain of at least
// kMinPredictedGain (search.h).
Schedule fuse_stencils(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const MachineModel &machine,
                       Schedule schedule);

}  // namespace hc
