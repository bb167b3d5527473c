// The GPU's schedule (a CUDA target): one producer of decision lists (decisions.h). Every region
// the partitioner stores runs as a kernel of its own, in blocks of threads over its two innermost
// axes, one thread per output point; optional regions are inlined as the baseline inlines them.
// Where the partitioner fused regions per row of a root (softmax, layer norm), each row is one
// block instead (Choice::GpuRows): its members in shared memory, its reductions by the block's
// threads. A fixed rule, no GPU cost model yet; other reductions reduce serially inside their
// output's thread (a reduction to one value runs as one thread).
#pragma once

#include "hcompile/decisions.h"
#include "hcompile/lowering.h"

namespace hc {

Schedule gpu_schedule(const LoweredPipeline &lowered);

}  // namespace hc
