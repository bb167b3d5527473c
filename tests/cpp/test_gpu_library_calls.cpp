// A GPU product through cuBLAS: lowered as an extern stage on the device and scheduled around it.
// Compiled to a module for a CUDA target (PTX from LLVM), not run: CI has no GPU. The call
// itself is tested on the GPU machine (tests/python/test_cuda.py).
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "hcompile/apply_schedule.h"
#include "hcompile/fusion.h"
#include "hcompile/gpu_schedule.h"
#include "hcompile/graph.h"
#include "hcompile/in_place.h"
#include "hcompile/library_calls.h"
#include "hcompile/lowering.h"
#include "hcompile/passes.h"
#include "hcompile/target.h"

#include "gemm_operands.h"

using namespace hc;

namespace {

// The host code of `lowered` (already scheduled) compiled for CUDA: Halide's statement of each
// function, where its extern calls and device allocations show.
std::string cuda_host_code(LoweredPipeline &lowered, const std::string &name) {
    std::vector<Halide::Argument> args;
    for (const LoweredInput &in : lowered.inputs) args.push_back(in.param);
    Halide::Module module = lowered.pipeline.compile_to_module(args, name, ieee_target(parse_target("host-cuda")));
    std::ostringstream code;
    for (const auto &f : module.functions()) code << f.body;
    return code.str();
}

}  // namespace

TEST_CASE("GPU products call cuBLAS on the device; their stored operands and copies are GPU kernels") {
    using Ints = std::vector<int64_t>;
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {64, 512});
    NodeId w = g.add_input(1, DType::Float32, {1024, 512});
    NodeId b = g.add_input(2, DType::Float32, {64, 1024});
    NodeId wt = g.add_op(OpKind::Transpose, {w}, Attrs{{"perm", Ints{1, 0}}});
    NodeId mm = g.add_op(OpKind::Matmul, {x, wt});
    NodeId y = g.add_op(OpKind::Add, {mm, b});
    NodeId w2 = g.add_input(3, DType::Float32, {1024, 256});
    NodeId mm2 = g.add_op(OpKind::Matmul, {y, w2});
    g.set_outputs({mm2});

    // Both products are large enough for cuBLAS on the GPU; the host's BLAS is not loaded here.
    const std::vector<NodeId> calls = choose_library_calls(g, true, true);
    CHECK(calls == std::vector<NodeId>{mm, mm2});
    CHECK(choose_library_calls(g, false, true).empty());

    // (Both stages take the one user context: two would be two parameters of one name.)
    LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g), {}, {}, calls, true);
    auto call = std::find_if(lowered.regions.begin(), lowered.regions.end(), [](const RegionFunc &r) { return r.library_call; });
    REQUIRE(call != lowered.regions.end());
    CHECK(call->library_operands.size() == 1);  // w transposed is stored; x is passed as it is
    CHECK(std::count_if(lowered.regions.begin(), lowered.regions.end(), [](const RegionFunc &r) { return r.library_call; }) == 2);

    Schedule schedule = gpu_schedule(lowered, analyze_pipeline(lowered));
    const int region = static_cast<int>(call - lowered.regions.begin());
    CHECK(std::count(schedule.begin(), schedule.end(), Decision{region, Choice::CallLibrary, 1, 1, 1}) == 1);
    CHECK(std::count_if(schedule.begin(), schedule.end(), [](const Decision &d) { return d.choice == Choice::CallLibrary; }) == 2);
    // The first product's copy is inlined into the bias add's kernel; the second product, returned
    // as it is, writes the output itself: the pipeline's output is its extern stage, and its copy
    // is read by nothing (inlined).
    CHECK(std::count(schedule.begin(), schedule.end(), Decision{region, Choice::Inline}) == 1);
    CHECK(std::count_if(schedule.begin(), schedule.end(), [](const Decision &d) { return d.choice == Choice::Inline; }) == 2);
    auto last_call = std::find_if(lowered.regions.rbegin(), lowered.regions.rend(), [](const RegionFunc &r) { return r.library_call; });
    REQUIRE(lowered.outputs.size() == 1);
    CHECK(lowered.outputs[0].name() == last_call->accumulator.name());
    const std::string source = apply_schedule(lowered, schedule);
    CHECK(source.find("gpu_blocks") != std::string::npos);

    // Halide accepts it for CUDA: the stages are called with device buffers (a device allocation
    // for the first one's output), after the operand's kernel; two kernels in all (the stored
    // operand and the bias add), none copying the output.
    const std::string text = cuda_host_code(lowered, "product");
    CHECK(text.find(kCublasGemmName) != std::string::npos);
    CHECK(text.find("halide_device_malloc") != std::string::npos);
    CHECK(text.find("halide_copy_to_host") == std::string::npos);  // nothing crosses to the host
    size_t kernels = 0;
    for (size_t at = text.find("halide_cuda_run("); at != std::string::npos; at = text.find("halide_cuda_run(", at + 1)) ++kernels;
    CHECK(kernels == 2);

    // The host's BLAS call is not scheduled on the GPU, and a cuBLAS call is one call.
    LoweredPipeline host = lower_to_halide(g, partition_into_regions(g), {}, {}, calls, false);
    CHECK_THROWS_AS(apply_schedule(host, gpu_schedule(host, analyze_pipeline(host))), std::invalid_argument);
    Schedule split = schedule;
    for (Decision &d : split) {
        if (d.choice == Choice::CallLibrary) d.value2 = 2;
    }
    CHECK_THROWS_WITH_AS(apply_schedule(lowered, split), doctest::Contains("one call"), std::invalid_argument);
}

TEST_CASE("A cuBLAS product returned as it is writes in place only an argument it does not read") {
    // out[...] = a @ b (argument 2, never read) and a[...] = a @ b (argument 0, an operand).
    Graph g;
    NodeId a = g.add_input(0, DType::Float32, {256, 256});
    NodeId b = g.add_input(1, DType::Float32, {256, 256});
    NodeId mm = g.add_op(OpKind::Matmul, {a, b});
    g.set_outputs({mm});
    const std::vector<NodeId> calls = choose_library_calls(g, true, true);
    REQUIRE(calls == std::vector<NodeId>{mm});
    const std::vector<InputLayout> layouts(3, InputLayout::CContiguous);
    for (int written : {2, 0}) {
        LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g), layouts, {}, calls, true);
        REQUIRE(lowered.outputs.size() == 1);
        CHECK(lowered.outputs[0].function().has_extern_definition());   // the call is the output
        apply_schedule(lowered, gpu_schedule(lowered, analyze_pipeline(lowered)));
        cuda_host_code(lowered, "product_in_place");
        const std::vector<int> alias = outputs_written_in_place(g, lowered, {{0, written}}, layouts);
        // cuBLAS would read `a` while writing it: the product gets a new array, copied after.
        CHECK(alias == std::vector<int>{written == 2 ? 2 : -1});
    }
}

TEST_CASE("A product of float16 arrays calls cuBLAS on the float16 arrays themselves") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float16, {64, 512});
    NodeId w = g.add_input(1, DType::Float16, {512, 256});
    NodeId h = g.add_op(OpKind::Tanh, {x});   // a computed float16 operand, stored as float16
    NodeId mm = g.add_op(OpKind::Matmul, {h, w});
    g.set_outputs({mm});
    Graph widened = widen_float16(g);
    const std::vector<NodeId> calls = choose_library_calls(widened, true, true);
    REQUIRE(calls.size() == 1);
    Partition partition = partition_into_regions(widened, true);
    LoweredPipeline lowered = lower_to_halide(widened, partition, {}, {}, calls, true);
    auto call = std::find_if(lowered.regions.begin(), lowered.regions.end(), [](const RegionFunc &r) { return r.library_call; });
    REQUIRE(call != lowered.regions.end());
    CHECK(call->library_operands.empty());  // tanh's float16 region and w are passed as they are
    // The stored tanh region is float16; no region stores a float32 copy of an operand.
    for (const RegionFunc &r : lowered.regions) {
        if (r.library_call) continue;
        const Node &root = widened.node(r.node);
        CHECK(!(root.kind == OpKind::Cast && root.dtype == DType::Float32));
    }
    apply_schedule(lowered, gpu_schedule(lowered, analyze_pipeline(lowered)));
    CHECK(cuda_host_code(lowered, "half_product").find(kCublasGemmName) != std::string::npos);
}

namespace {

// An attention's scores: q and k are heads split out of one (tokens, 2 x heads x hd) array, k
// transposed; then the scores times a weight broadcast over the batch. Returns {scores, mixed}.
std::pair<NodeId, NodeId> attention_products(Graph &g, int64_t tokens, int64_t hd, DType dtype) {
    using Ints = std::vector<int64_t>;
    const int64_t batch = 8, heads = 2;
    NodeId qkv = g.add_input(0, dtype, {batch * tokens, 2 * heads * hd});
    NodeId w = g.add_input(1, dtype, {tokens, 48});
    auto head_view = [&](int64_t start, Ints perm) {
        NodeId part = g.add_op(OpKind::Slice, {qkv}, Attrs{{"starts", Ints{0, start}}, {"stops", Ints{batch * tokens, start + heads * hd}},
                                                           {"steps", Ints{1, 1}}});
        NodeId split = g.add_op(OpKind::Reshape, {part}, Attrs{{"shape", Ints{batch, tokens, heads, hd}}});
        return g.add_op(OpKind::Transpose, {split}, Attrs{{"perm", perm}});
    };
    NodeId q = head_view(0, {0, 2, 1, 3});
    NodeId kt = head_view(heads * hd, {0, 2, 3, 1});
    NodeId scores = g.add_op(OpKind::Matmul, {q, kt});
    NodeId wb = g.add_op(OpKind::Broadcast, {w}, Attrs{{"shape", Ints{batch, heads, tokens, 48}}});
    NodeId mixed = g.add_op(OpKind::Matmul, {scores, wb});
    g.set_outputs({mixed});
    return {scores, mixed};
}

}  // namespace

TEST_CASE("Batched products call cuBLAS once: views are stored, a matrix broadcast over the batch is passed alone") {
    // Contractions of 128 (hd, then tokens): past what the staged Halide kernel takes.
    Graph g;
    const auto [scores, mixed] = attention_products(g, 128, 128, DType::Float32);

    // Batched products on the GPU; none on the host, whose BLAS takes 2-D.
    const std::vector<NodeId> calls = choose_library_calls(g, true, true);
    CHECK(calls == std::vector<NodeId>{scores, mixed});
    CHECK(choose_library_calls(g, true, false).empty());

    LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g, true), {}, {}, calls, true);
    size_t stored = 0, calls_lowered = 0;
    for (const RegionFunc &r : lowered.regions) {
        if (!r.library_call) continue;
        ++calls_lowered;
        for (const Halide::Func &operand : r.library_operands) {
            CHECK(operand.dimensions() == 4);   // q and k^T, each a copy of its batch of matrices
            ++stored;
        }
        CHECK(r.accumulator.dimensions() == 4);
        CHECK(r.product_operands.empty());
    }
    CHECK(calls_lowered == 2);
    CHECK(stored == 2);   // w goes as the 2-D input it is

    apply_schedule(lowered, gpu_schedule(lowered, analyze_pipeline(lowered)));
    const std::string code = cuda_host_code(lowered, "attention");
    CHECK(code.find(kCublasGemmName) != std::string::npos);
    CHECK(code.find("halide_copy_to_host") == std::string::npos);
}

TEST_CASE("Batched float32 products of short contractions run as Halide kernels that stage their operands' tiles") {
    // Contractions of 32 (hd) and 64 (tokens); the second product's 48 columns are no whole tile.
    Graph g;
    const auto [scores, mixed] = attention_products(g, 64, 32, DType::Float32);
    CHECK(choose_library_calls(g, true, true).empty());

    LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g, true), {}, {}, {}, true);
    const Schedule schedule = gpu_schedule(lowered, analyze_pipeline(lowered));
    size_t staged = 0;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        if (r.op_class != OpClass::Matmul) continue;
        CHECK(r.product_operands.size() == 2);   // a and b, each a Func the accumulator reads
        const bool stages = std::any_of(schedule.begin(), schedule.end(), [&](const Decision &d) {
            return d.region == static_cast<int>(i) && d.choice == Choice::GpuStageOperands;
        });
        CHECK(stages);
        staged += stages;
    }
    CHECK(staged == 2);
    apply_schedule(lowered, schedule);
    const std::string code = cuda_host_code(lowered, "staged_attention");
    CHECK(code.find(kCublasGemmName) == std::string::npos);

    // float64 (no staged kernel: Halide's CUDA vectors of doubles) and the 2-D host path keep
    // their libraries.
    Graph doubles;
    const auto [scores64, mixed64] = attention_products(doubles, 64, 32, DType::Float64);
    CHECK(choose_library_calls(doubles, true, true) == std::vector<NodeId>{scores64, mixed64});
}

TEST_CASE("A batch is one stride per buffer, or refused where its matrices are not a fixed stride apart") {
    // Halide order: (n, m, batch0, batch1); dense buffers of 2 x 3 batches of 4 x 5 matrices.
    halide_dimension_t out_dims[4] = {{0, 5, 1, 0}, {0, 4, 5, 0}, {0, 3, 20, 0}, {0, 2, 60, 0}};
    halide_dimension_t a_dims[4] = {{0, 7, 1, 0}, {0, 4, 7, 0}, {0, 3, 28, 0}, {0, 2, 84, 0}};
    halide_dimension_t matrix_dims[2] = {{0, 5, 1, 0}, {0, 7, 5, 0}};
    halide_buffer_t out{}, a{}, b{};
    out.dimensions = 4;
    out.dim = out_dims;
    a.dimensions = 4;
    a.dim = a_dims;
    b.dimensions = 2;
    b.dim = matrix_dims;
    gemm::Batch batch = gemm::batch_of(&a, &b, &out);
    CHECK(batch.ok);
    CHECK(batch.count == 6);
    CHECK(batch.a_stride == 28);
    CHECK(batch.b_stride == 0);     // one matrix for every product
    CHECK(batch.out_stride == 20);
    // Heads a row apart inside each batch's rows (a view): not one stride.
    a_dims[2].stride = 7 * 4 * 2;
    CHECK_FALSE(gemm::batch_of(&a, &b, &out).ok);
    // A part of the batch asked for: the operand's offset to it.
    a_dims[2].stride = 28;
    out_dims[3].min = 1;
    out_dims[3].extent = 1;
    batch = gemm::batch_of(&a, &b, &out);
    CHECK(batch.ok);
    CHECK(batch.count == 3);
    CHECK(batch.a_offset == 84);
    // Part of an inner batch dim asked for: its outer dim does not step past that part alone.
    out_dims[2] = {1, 2, 20, 0};
    out_dims[3] = {0, 2, 40, 0};
    CHECK_FALSE(gemm::batch_of(&a, &b, &out).ok);
    // Part of the outer batch dim only: still one stride, from the operand's second batch.
    a_dims[3].extent = 4;
    out_dims[2] = {0, 3, 20, 0};
    out_dims[3] = {1, 2, 60, 0};
    batch = gemm::batch_of(&a, &b, &out);
    CHECK(batch.ok);
    CHECK(batch.count == 6);
    CHECK(batch.a_stride == 28);
    CHECK(batch.a_offset == 84);
    // A batch the operand does not hold is refused.
    out_dims[3] = {3, 2, 60, 0};
    CHECK_FALSE(gemm::batch_of(&a, &b, &out).ok);
}

TEST_CASE("An operand given as an array is the matrix its dims make by stride, columns first, where they chain") {
    // Halide order: a (k, tokens, batch) input of 3 x 4 rows of 8, read by a 2-D product of 12 x 5.
    halide_dimension_t out_dims[2] = {{0, 5, 1, 0}, {0, 12, 5, 0}};
    halide_dimension_t a_dims[3] = {{0, 8, 1, 0}, {0, 4, 8, 0}, {0, 3, 32, 0}};
    halide_buffer_t out{}, a{}, view{};
    out.dimensions = 2;
    out.dim = out_dims;
    a.dimensions = 3;
    a.dim = a_dims;
    halide_dimension_t dims[2];
    CHECK(gemm::read_as_matrix(&a, &out));
    const halide_buffer_t *m = gemm::as_matrix(&a, &out, 8, &view, dims);
    REQUIRE(m == &view);
    CHECK(m->dimensions == 2);
    CHECK(m->dim[0].extent == 8);
    CHECK(m->dim[1].extent == 12);
    CHECK(m->dim[1].stride == 8);
    CHECK(gemm::operand(m, 0, 0).lead == 8);
    // The rows asked for start at the sixth: the offset is five rows.
    CHECK(gemm::operand(m, 0, 5).offset == 40);
    // The same memory as 3 rows of 32 columns (`x.reshape(3, -1)`); no matrix of 12 columns, which
    // would split a dim.
    m = gemm::as_matrix(&a, &out, 32, &view, dims);
    REQUIRE(m != nullptr);
    CHECK(m->dim[1].extent == 3);
    CHECK(m->dim[1].stride == 32);
    CHECK(gemm::as_matrix(&a, &out, 12, &view, dims) == nullptr);
    // Tokens of one element step anywhere; the batch's rows still follow each other.
    a_dims[1] = {0, 1, 999, 0};
    a_dims[2] = {0, 12, 8, 0};
    m = gemm::as_matrix(&a, &out, 8, &view, dims);
    REQUIRE(m != nullptr);
    CHECK(m->dim[1].extent == 12);
    CHECK(m->dim[1].stride == 8);
    // Batches further apart than their tokens (a stepped view): no one matrix.
    a_dims[1] = {0, 4, 8, 0};
    a_dims[2] = {0, 3, 64, 0};
    CHECK(gemm::as_matrix(&a, &out, 8, &view, dims) == nullptr);
    // A region (d, tokens, heads, batch) stored heads inside tokens, as the lowering reorders it for
    // (p @ v).transpose(0, 2, 1, 3).reshape(batch * tokens, heads * d): columns (d, heads), rows
    // (tokens, batch).
    halide_dimension_t r_dims[4] = {{0, 4, 1, 0}, {0, 5, 8, 0}, {0, 2, 4, 0}, {0, 3, 40, 0}};
    halide_buffer_t r{};
    r.dimensions = 4;
    r.dim = r_dims;
    m = gemm::as_matrix(&r, &out, 8, &view, dims);
    REQUIRE(m != nullptr);
    CHECK(m->dim[0].stride == 1);
    CHECK(m->dim[1].extent == 15);
    CHECK(m->dim[1].stride == 8);
    // As a right operand of 15 rows: 8 columns.
    CHECK(gemm::columns_of(&r, 15) == 8);
    // The query leaves an array read as a matrix as it is (needed whole); a matrix operand is told.
    a_dims[2] = {0, 3, 32, 0};
    halide_dimension_t b_dims[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    halide_buffer_t b{};
    b.dimensions = 2;
    b.dim = b_dims;
    CHECK(gemm::answer_bounds_query(&a, &b, 8, &out));
    CHECK(a_dims[0].extent == 8);
    CHECK(a_dims[1].extent == 4);
    CHECK(a_dims[2].extent == 3);
    CHECK(b_dims[0].extent == 5);
    CHECK(b_dims[1].extent == 8);
    // A batched product's operands are no matrices read whole: their own.
    halide_dimension_t batched_dims[3] = {{0, 5, 1, 0}, {0, 4, 5, 0}, {0, 3, 20, 0}};
    out.dimensions = 3;
    out.dim = batched_dims;
    CHECK_FALSE(gemm::read_as_matrix(&a, &out));
    CHECK(gemm::as_matrix(&a, &out, 8, &view, dims) == &a);
}
