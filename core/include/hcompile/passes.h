// Graph-to-graph passes. Each is a free function returning a new graph with the same outputs
// (by meaning); none mutates its argument. The order they run in is in compile_graph().
#pragma once

#include "hcompile/graph.h"

namespace hc {

// Rewrites every float16 and bfloat16 computation as float32 with its operands widened and its
// results rounded back, as NumPy's float16 loops compute; only casts and layout ops (and inputs,
// constants) keep the 16-bit floats. Later passes and lowering compute in float32 and float64
// only.
Graph widen_float16(const Graph &graph);

// The float16 or bfloat16 node that node `id` widens to float32 (a cast widen_float16 made), or -1.
NodeId widened_float16_source(const Graph &graph, NodeId id);

// Evaluates elementwise ops whose operands are all constants (exactly, in the node's dtype), and
// drops no-op layout/casts (cast to the same dtype, reshape/broadcast to the same shape, identity
// transpose).
Graph fold_constants(const Graph &graph);

// Merges nodes with the same kind, attributes and (already merged) inputs.
Graph eliminate_common_subexpressions(const Graph &graph);

// Drops nodes no output depends on.
Graph eliminate_dead_code(const Graph &graph);

// Folds sums of matrix products, `c + a0 @ b0 + a1 @ b1 + ...` (an add chain whose products are
// read nowhere else), into one matmul_sum node (OPS.md), which accumulates every product into
// one tile of the result. Products over more than 256 contracted elements stay matmuls.
Graph combine_matmul_sums(const Graph &graph);

// Replaces every computed node with no elements by a broadcast zero of its dtype and shape (its
// inputs then die). An empty array has no values to compute, but the layout rules' index
// arithmetic over zero-sized axes (divisions and remainders by 0) reads element 0 of an empty
// input, which Halide's bounds checks refuse at run time (`x[None]` on a (0, 3) array). Inputs
// stay; a reduction over an empty axis reads its operand over an empty domain, which is fine.
Graph replace_empty_arrays(const Graph &graph);

// For a GPU target: neighbouring axes of a reduction over several (of a known shape) are first
// merged into one by a reshape. A reduction over several axes to fewer than 4096 outputs, over
// at least 2^16 elements per output, becomes one reduction per axis, innermost first, so that the first has an
// output per row for the GPU's threads; a 1-D one of 2^16 elements or more is read as rows of up
// to 8192 first (a power of two dividing its size). A reduction to one value of 256 elements or
// more ends in a step that keeps an axis of 1 (then reshaped to 0-d), which the GPU schedule gives
// a block of threads instead of one thread. The same values: sums, products, extrema and logic
// reduce in any grouping; float sums stay within NumPy's rounding of blocked partial sums.
// A reduction over one axis to few outputs (a column sum of a tall array: a GPU thread a column;
// a row sum of few long rows: a block a row) first reduces that axis in chunks, the elements past
// the last whole chunk apart. Axes of symbolic extents (`symbol_values`: symbols.h) stay whole.
// An argmax or argmin of a 1-D array of 256 elements or more reads it as one row, (1, n), which
// the GPU lowering reduces in stored lanes (LaneParts) instead of one thread.
Graph split_reductions_for_gpu(const Graph &graph, const std::vector<int64_t> &symbol_values = {});

// The chunks a GPU reduction to `outputs` values cuts an axis of `extent` into, down columns (the
// axis not the innermost): a power of two making about 2^17 threads (a chunk and an output each)
// of at least 32 elements each; 1 where the axis is too short. split_reductions_for_gpu's chunks,
// and an arg reduction's lanes down columns (LaneParts::stored).
int64_t gpu_column_chunks(int64_t outputs, int64_t extent);

}  // namespace hc
