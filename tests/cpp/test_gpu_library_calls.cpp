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
#include "hcompile/library_calls.h"
#include "hcompile/lowering.h"
#include "hcompile/passes.h"
#include "hcompile/target.h"

using namespace hc;

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

    Schedule schedule = gpu_schedule(lowered);
    const int region = static_cast<int>(call - lowered.regions.begin());
    CHECK(std::count(schedule.begin(), schedule.end(), Decision{region, Choice::CallLibrary, 1, 1, 1}) == 1);
    CHECK(std::count_if(schedule.begin(), schedule.end(), [](const Decision &d) { return d.choice == Choice::CallLibrary; }) == 2);
    // The first product's copy is inlined into the bias add's kernel; the second's result is the
    // output, copied out by a kernel.
    CHECK(std::count(schedule.begin(), schedule.end(), Decision{region, Choice::Inline}) == 1);
    CHECK(std::count_if(schedule.begin(), schedule.end(), [](const Decision &d) { return d.choice == Choice::Inline; }) == 1);
    const std::string source = apply_schedule(lowered, schedule);
    CHECK(source.find("gpu_blocks") != std::string::npos);

    // Halide accepts it for CUDA: the stage is called with device buffers (a device allocation
    // for its output), between the operand's kernel and the copy's.
    std::vector<Halide::Argument> args;
    for (const LoweredInput &in : lowered.inputs) args.push_back(in.param);
    Halide::Module module = lowered.pipeline.compile_to_module(args, "product", ieee_target(parse_target("host-cuda")));
    std::ostringstream code;
    for (const auto &f : module.functions()) code << f.body;
    const std::string text = code.str();
    CHECK(text.find(kCublasGemmName) != std::string::npos);
    CHECK(text.find("halide_device_malloc") != std::string::npos);
    CHECK(text.find("halide_copy_to_host") == std::string::npos);  // nothing crosses to the host

    // The host's BLAS call is not scheduled on the GPU, and a cuBLAS call is one call.
    LoweredPipeline host = lower_to_halide(g, partition_into_regions(g), {}, {}, calls, false);
    CHECK_THROWS_AS(apply_schedule(host, gpu_schedule(host)), std::invalid_argument);
    Schedule split = schedule;
    for (Decision &d : split) {
        if (d.choice == Choice::CallLibrary) d.value2 = 2;
    }
    CHECK_THROWS_WITH_AS(apply_schedule(lowered, split), doctest::Contains("one call"), std::invalid_argument);
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
    std::vector<Halide::Argument> args;
    for (const LoweredInput &in : lowered.inputs) args.push_back(in.param);
    apply_schedule(lowered, gpu_schedule(lowered));
    Halide::Module module = lowered.pipeline.compile_to_module(args, "half_product", ieee_target(parse_target("host-cuda")));
    std::ostringstream code;
    for (const auto &f : module.functions()) code << f.body;
    CHECK(code.str().find(kCublasGemmName) != std::string::npos);
}
