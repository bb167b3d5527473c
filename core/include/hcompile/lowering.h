// Lowering: one Halide Func per graph node, one Halide pipeline per graph.
#pragma once

#include <Halide.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "hcompile/fusion.h"
#include "hcompile/graph.h"
#include "hcompile/symbols.h"

namespace hc {

// How an input array is laid out in memory; the compiled code is specialised on it and the
// runtime guards check it on every call.
enum class InputLayout : int {
    CContiguous = 0,  // row-major dense: every stride is a compile-time constant
    InnerDense = 1,   // innermost stride is one element; outer strides arbitrary
    Strided = 2,      // any element-multiple strides (transposed, reversed, stepped views)
};

struct LoweredInput {
    int arg_index = -1;
    DType dtype = DType::Float32;
    Halide::ImageParam param;
};

// A float constant of the graph, handed to the pipeline as a scalar argument. Halide folds
// literal float constants at compile time and refuses some results (a division by a constant
// 0.0), where NumPy gives inf or NaN; as arguments they keep IEEE run-time semantics.
struct LoweredScalar {
    DType dtype = DType::Float32;
    double value = 0;
    Halide::Param<> param;
};

// How a float sum is computed (lower_reduction; core/OPS.md, "Summation"): the accumulator
// keeps `lanes` compensated partial sums along `lane` (one lane: the vector runs across the
// outputs instead). Its update stage `block_stage` walks `block_domain` (the blocks of the
// innermost reduced axis, then the other reduced axes) and reads one block sum of `blocks`
// per iteration; stage `tail_stage` walks `tail_domain` and reads `tail`. Stages and Funcs
// are absent (-1, undefined) when the axis has no full block / no remainder.
struct BlockedSum {
    Halide::Var lane;
    int lanes = 1;
    // On a GPU, more lanes than a warp's 32: the lanes' sums added in groups (`groups`, over
    // `group`), a thread each; undefined elsewhere (the lanes are then added where the sum's value
    // is computed).
    Halide::Func groups;
    Halide::Var group;
    // On a GPU, 2 to 32 lanes: the lanes' pairwise sum as levels over `lane`, each
    // lane's value at level k + 1 its own at level k plus its partner's, lane l ^ 2^k (level 0:
    // the lane's compensated pair as one value). Every lane ends with the whole sum, each pair
    // added in the same order as the tree the sum's value reads (lane 0 of the last level), so
    // where the lanes are a warp's each level is one shuffle and one add (GpuWarpRows), and
    // elsewhere they are inlined into that tree.
    std::vector<Halide::Func> levels;
    Halide::Func blocks, tail;
    Halide::RDom block_domain, tail_domain;
    int block_stage = -1, tail_stage = -1;
};

// A GPU arg reduction (argmax, argmin) in `lanes` lanes: `func` (lane, outputs...) holds each
// lane's best value and its index, over elements lane, lane + lanes, ... (its update walks
// `steps`); the accumulator then takes the best of the lanes (the first index among equal values,
// NaN before any number), through `levels`, each the best of up to 16 lanes of the level before
// (lane m of those of m, m + lanes left, ...), until few are left, or a butterfly (below),
// the accumulator then reading lane 0's. Over rows of many outputs,
// the lanes are threads of the row's block, and so are each level's. `stored` (down the columns
// of a tall array, or along few long rows) they are a kernel of their own, a thread a lane and
// output, and so is each level. Down columns the lane is the last axis (outputs..., lane):
// neighbouring threads then read neighbouring outputs' elements.
struct LaneParts {
    Halide::Func func;
    Halide::Var lane;
    int lanes = 1;
    Halide::RVar steps;
    bool stored = false;
    std::vector<Halide::Func> levels;   // each the best of some lanes of the one before
    // Over a row in at most a warp's lanes: the index in 32 bits and `levels` a butterfly, each
    // over every lane (lane l the better of its own and lane l ^ 2^k's), the accumulator reading
    // lane 0's; in a warp's lanes each level is two shuffles (GpuWarpRows).
    bool butterfly = false;

    // `func`, then each level: every Func the lanes make, in the order they are computed.
    std::vector<Halide::Func> stages() const {
        std::vector<Halide::Func> all{func};
        all.insert(all.end(), levels.begin(), levels.end());
        return all;
    }
};

// The lanes of a GPU float sum over a row of `length` elements (a length known when compiling):
// a power of two, each lane about the square root of the row's elements, from 4 to 16 (then up
// to 256 lanes). They are also the threads a row of a GPU row group takes (gpu_schedule.cpp), so
// that a row's steps run on as few threads as its sums.
int gpu_sum_lanes(int64_t length);

// One materialized region, as the scheduler sees it. Dimensions are in Halide order: index 0 is
// the innermost (NumPy's last) axis.
struct RegionFunc {
    NodeId node = -1;
    OpClass op_class = OpClass::Elementwise;
    Halide::Func func;
    std::vector<Halide::Var> vars;
    std::vector<int64_t> extents;       // static; a symbolic one (symbols.h) kScheduledSymbolicExtent
    std::vector<Halide::Expr> extent_exprs;  // the same as Exprs, symbolic ones read from the call
    bool symbolic = false;              // some extent is symbolic
    uint64_t symbolic_axes = 0;         // bit i: extents[i] is symbolic
    bool symbolic_axis(size_t i) const { return i < 64 && ((symbolic_axes >> i) & 1); }
    // Per axis, the symbol (symbols.h) whose size plus the offset its extent is; symbol -1 for a
    // static extent (or none recorded: a pipeline built outside hcompile).
    std::vector<std::pair<int, int64_t>> extent_symbols;
    std::pair<int, int64_t> extent_symbol(size_t i) const {
        return i < extent_symbols.size() ? extent_symbols[i] : std::pair<int, int64_t>{-1, 0};
    }
    bool estimated = false;             // the extents are estimates (a Halide pipeline's,
                                        // halide_pipeline.h): the schedule must fit any size
    Halide::RDom rdom;                  // reductions and matmul: the reduction domain
    std::vector<int64_t> rextents;      // its extents, innermost first (matmul_sum: all products')
    std::vector<Halide::RDom> product_rdoms;  // matmul: each product's domain, update i of `accumulator`
    bool reduces_innermost = false;     // the reduced axes include the input's innermost axis
    bool associative_vectorizable = false;  // safe to rfactor (plain sum/prod/max/min/any/all)
    uint64_t serial_update_axes = 0;    // bit a: the update reads its own values at other indices of
                                        // output axis a, so its loop over a stays serial (a scan
                                        // written in Halide, halide_pipeline.h)
    Halide::Func accumulator;           // the Func with the update (reductions, matmul); `func` reads
                                        // it, or is it (a Halide pipeline's reduction, halide_pipeline.h)
    int row_root = -1;                  // the region (index in `regions`) it is computed per row of
                                        // (a row group's member, Partition), or -1
    bool row_fused() const { return row_root >= 0; }
    bool point_rows = false;            // a row root whose every point is a row (Partition's
                                        // point_rows): its members reduce rows into its points
    bool optional = false;              // the schedule chooses inline or store (Partition)
    bool stored_by_default = false;     // ... and the baseline stores it (else inlines it)
    std::optional<BlockedSum> blocked_sum;  // float sums: the accumulator's structure
    std::optional<LaneParts> lane_parts;    // GPU arg reductions: their lanes
    Halide::Func staged_operand;        // an integer power's base: computed per vector of `func`
    bool library_call = false;          // a matmul whose `accumulator` is a BLAS extern stage
    std::vector<Halide::Func> library_operands;  // the operands it stores for that call
    // A batched product on the GPU lowered as Halide loops (lower_matmul): its operands a and b,
    // each a Func of its own (a[..., m, k] and b[..., k, n] as the product reads them: an
    // attention's heads split out of one product's rows, a bias added), inlined unless the
    // schedule copies each block's tiles of them into shared memory (GpuStageOperands).
    std::vector<Halide::Func> product_operands;
};

// The names of the extern stages a matmul lowered as a library call calls: BLAS on the host
// (runtime/blas.h), cuBLAS for a GPU pipeline (runtime/cublas.h, its first argument the call's
// user context); the compile driver binds them to the functions.
constexpr const char *kBlasGemmName = "hc_blas_gemm";
constexpr const char *kCublasGemmName = "hc_cublas_gemm";

struct LoweredPipeline {
    std::vector<Halide::Func> node_funcs;  // region roots and leaves, by node id; fused nodes have none
    std::vector<LoweredInput> inputs;      // Halide argument order: inputs, scalars, outputs
    std::vector<LoweredScalar> scalars;
    std::vector<Halide::Func> outputs;     // one per graph output
    std::vector<RegionFunc> regions;       // materialized funcs, including outputs
    // Loads at constant indices, one Func per input (LowerContext::PointLoads): hcompile's
    // schedules compute them at root; Halide's autoschedulers refuse pre-scheduled Funcs and
    // place them themselves.
    std::vector<Halide::Func> point_load_funcs;
    // A pipeline built outside hcompile (halide_pipeline.h): Funcs it leaves inlined that are not
    // regions (an input's pass-through Funcs, a value read at its own point by one Func), in
    // realization order. The analysis reads its regions' definitions with these inlined. (Also
    // hcompile's own product operands, RegionFunc::product_operands: inlined unless staged.)
    std::vector<Halide::Internal::Function> see_through;
    bool for_gpu = false;  // lowered for a GPU target (its library calls are cuBLAS's)
    // GPU blocks of several rows may run along a symbolic axis (a batch of any size): the entry
    // then serves only calls with a block's rows or more (least_symbol_sizes). False for the
    // entry that serves the smaller ones, a row a block.
    bool symbolic_row_blocks = true;
    Halide::Pipeline pipeline;
};

// Whether region `region` of `lowered` roots a row group (some region is computed per row of it).
inline bool is_row_root(const LoweredPipeline &lowered, int region) {
    return std::any_of(lowered.regions.begin(), lowered.regions.end(),
                       [&](const RegionFunc &r) { return r.row_root == region; });
}

// The target a lowered pipeline must be compiled for: `target` with IEEE float semantics
// (Halide's strict_float feature). Halide's default float mode gives LLVM "no NaN, no inf, no
// signed zero" flags, under which it folds isnan(a + b) to false, drops a NaN sum's whole loop,
// and loses -0.0. Strictness is a compile-target property rather than a wrapper on each Func
// so that it also covers the Funcs scheduling creates (rfactor's partial reductions) and
// leaves rfactor able to prove a plain sum associative. Matmul keeps its speed through
// explicit fused multiply-adds (lower_matmul), which strict mode does not split.
Halide::Target ieee_target(const Halide::Target &target);

// Makes `pipeline` divide floats by a constant zero as IEEE does (x * +-inf) instead of failing
// in Halide's code generator, which rejects such divisions; they appear when Halide's simplifier
// folds a divisor the lowering could not see was constant. Done by lower_to_halide.
void add_ieee_zero_division_pass(Halide::Pipeline &pipeline);

// Makes `pipeline` widen bfloat16 to float32 by shifting its bits (src/lowering/bfloat16_casts.cpp)
// instead of through Halide's emulated conversion. Done by lower_to_halide.
void add_bfloat16_widening_pass(Halide::Pipeline &pipeline);

// For a GPU pipeline: each float product rounded on its own (src/lowering/gpu_rounding.cpp),
// as NumPy does, instead of fused with an addition by Halide's CUDA back end.
void add_gpu_rounding_pass(Halide::Pipeline &pipeline);

// For a GPU pipeline lowered with fast_math: the marked float32 exp, tanh and divisions on the
// GPU's approximate instructions inside kernels, exact on the host (src/lowering/gpu_fast_math.cpp).
void add_gpu_fast_math_pass(Halide::Pipeline &pipeline);

// For a GPU pipeline: the marked exact float32 divisions by a scalar with the divisor's
// reciprocal once and a fused correction a point inside kernels, plain divisions on the host
// (src/lowering/gpu_scalar_division.cpp).
void add_gpu_scalar_division_pass(Halide::Pipeline &pipeline);

// For a GPU pipeline: the marked float32 tanh inside kernels with a refined reciprocal estimate,
// math::tanh on the host (src/lowering/gpu_tanh.cpp).
void add_gpu_tanh_pass(Halide::Pipeline &pipeline);

// For a GPU pipeline: C library calls in kernels made to CUDA's libdevice instead
// (src/lowering/gpu_libm_calls.cpp): a kernel has no libm.
void add_gpu_libm_calls_pass(Halide::Pipeline &pipeline);

// For a GPU pipeline: dense vectors of 8- and 16-bit values (float16, bfloat16, uint8) in
// kernels loaded and stored as one access where aligned, as Halide does for float32's
// (src/lowering/gpu_narrow_vectors.cpp); Halide's CUDA back end split them into single accesses.
void add_gpu_narrow_vectors_pass(Halide::Pipeline &pipeline);

// `layouts[arg]` is the layout of argument `arg` (missing entries mean CContiguous).
// `symbols`: the graph's symbolic extents (none: every shape is static).
// `library_calls`: the matmul nodes to lower as BLAS calls (choose_library_calls).
// `for_gpu`: for a GPU target (a float max or min keeps its NaN flag as a float, see
// lower_reduction). `fast_math`: on a GPU target, float32 exp, tanh and division inside kernels
// on the GPU's approximate instructions (add_gpu_fast_math_pass); ignored for the host.
LoweredPipeline lower_to_halide(const Graph &graph, const Partition &partition,
                                const std::vector<InputLayout> &layouts, const SymbolicExtents &symbols = {},
                                const std::vector<NodeId> &library_calls = {}, bool for_gpu = false,
                                bool fast_math = false);

}  // namespace hc
