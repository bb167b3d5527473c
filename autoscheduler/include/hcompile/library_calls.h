// Which matrix products call a BLAS library instead of running as Halide loops: an algorithm
// choice, so it is made on the graph, before lowering (lower_to_halide takes the list); the
// schedule then records it as a `call_library` decision for the region.
#pragma once

#include <vector>

#include "hcompile/graph.h"
#include "hcompile/symbols.h"

namespace hc {

// Below this many multiply-adds the register-tiled Halide loop ties or wins: it fuses the
// operands' elementwise producers and stores nothing. Measured on 2 cores in one process each
// (BLAS in one single-threaded call per core, against the Halide tiles; best of three): 64^3
// 0.010 against 0.007 ms, 100^3 0.017 / 0.016, 128^3 0.029 / 0.028, 192^3 0.087 / 0.120,
// 256^3 0.205 / 0.247, 384^3 0.66 / 0.75, 32x512x1024 0.31 / 0.36.
constexpr int64_t kMinLibraryMultiplyAdds = int64_t{1} << 22;

// On a CUDA device, cuBLAS from kMinCublasMultiplyAdds multiply-adds where the contraction is at
// least kMinCublasContraction long. Halide's kernel is a thread per output (or a 4x4 register tile)
// whose serial loop is the contraction: it wins where that loop is short, however many the
// outputs, and cuBLAS's call costs more on the host than one of our kernels' launches. Measured
// on an H100 (apps/gpu_matmul.py: float32, CUDA events, Halide's kernel against hcompile through
// cuBLAS, m x k x n): 100^3 19.7 /
// 20.5 us, 128^3 24.7 / 36.9, 256^3 47 / 45, 512^3 94 / 41, 1024^3 122 / 63, 32x512x1024 92 / 26;
// short contractions: 4096x64x64 14 / 15, 1024x64x1024 11 / 22, 2048x32x2048 16 / 30,
// 4096x16x4096 31 / 86, 4096x32x4096 52 / 99, 4096x64x4096 96 / 121, but 2048x128x2048 52 / 41.
// (Outputs of 2^20 or more once called cuBLAS at any contraction: Halide's register tiles were
// then in shared memory, 2048x32x2048 343 us.)
constexpr int64_t kMinCublasMultiplyAdds = int64_t{1} << 21;
constexpr int64_t kMinCublasContraction = 128;
// A batched product (3-D or more) on a CUDA device: cuBLAS's strided batched call from
// kMinCublasMultiplyAdds multiply-adds in all where the contraction is a warp long or more, and
// past kMaxStagedContraction for float32 of static sizes (not float16 widened: cuBLAS's tensor
// cores take those), whose shorter contractions Halide's
// kernel reads through tiles staged in shared memory (GpuStageOperands). The batched call
// needs each operand's matrices a fixed stride apart: an attention's heads split out of one
// product's rows are not, and were copied for it first. Measured on an H200 (16x8 heads of
// 64x64x64 read from one product's rows with its bias; kernel times): Halide's staged kernel
// 6.2 us; PyTorch's bias add, copies and batched cuBLAS call 18.4 (the call alone 5.9); Halide's
// thread per output, unstaged, 10.7 (reading k^T a row apart per thread; in the transformer
// layer with its 4-D views, 157 us before register tiles).
constexpr int64_t kMinCublasBatchedContraction = 32;
// (80: a block's tiles of 64 rows of a and 64 columns of b, float32 over the whole contraction,
// take 40 KiB of shared memory, region_plan.h's kMaxStagedOperandBytes: an attention's p @ v
// over 77 tokens stages too.)
constexpr int64_t kMaxStagedContraction = 80;

// The float32/float64 matmul nodes of `graph` large enough to call BLAS: 2-D ones, and on the GPU
// (`for_gpu`: cuBLAS) batched ones too. Empty when no such library is loaded (`available`).
// `symbols` (where given): the graph's symbolic extents; a batched product of any symbolic size
// calls cuBLAS at any contraction from a warp (the staged kernel's tiles need static sizes).
std::vector<NodeId> choose_library_calls(const Graph &graph, bool available, bool for_gpu = false,
                                         const SymbolicExtents *symbols = nullptr);

}  // namespace hc
