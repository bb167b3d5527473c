// The GPU's schedule (a CUDA target): one producer of decision lists (decisions.h). Every region
// the partitioner stores runs as a kernel of its own, in blocks of threads over its two innermost
// axes, one thread per output point; optional regions are inlined as the baseline inlines them.
// A first version: a fixed rule, no GPU cost model, no shared-memory staging, and reductions
// reduce serially inside their output's thread (a reduction to one value runs as one thread).
#pragma once

#include "hcompile/decisions.h"
#include "hcompile/lowering.h"

namespace hc {

Schedule gpu_schedule(const LoweredPipeline &lowered);

}  // namespace hc
