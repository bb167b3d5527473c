// The runtime pieces that need no Python: kernels with many arguments (no fixed argv limit),
// per-call arrays, the JIT target check, and graphs with empty arrays.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "hcompile/compile.h"
#include "hcompile/graph.h"
#include "hcompile/passes.h"
#include "hcompile/small_array.h"
#include "hcompile/target.h"

using namespace hc;

namespace {

// Runs `k` with `buffers` (inputs then outputs) and requires success.
void run_kernel(const KernelPtr &k, std::vector<halide_buffer_t *> buffers) {
    std::string error;
    REQUIRE_MESSAGE(k->run(buffers.data(), &error) == 0, "kernel failed: ", error);
}

// The message of the std::invalid_argument `jit_target(name)` throws ("" if it does not).
std::string target_error(const std::string &name) {
    try {
        jit_target(name);
    } catch (const std::invalid_argument &e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("SmallArray keeps small sizes inline and larger ones on the heap") {
    SmallArray<int, 4> small(3, 7);
    SmallArray<int, 4> large(100, 7);
    for (size_t i = 0; i < large.size(); ++i) large[i] += static_cast<int>(i);
    CHECK(small[2] == 7);
    CHECK(large.size() == 100);
    CHECK(large[99] == 106);
    CHECK(reinterpret_cast<const char *>(small.data()) >= reinterpret_cast<const char *>(&small));
    CHECK(reinterpret_cast<const char *>(small.data()) < reinterpret_cast<const char *>(&small) + sizeof small);
    SmallArray<int, 4> empty(0);
    CHECK(empty.size() == 0);
}

TEST_CASE("a kernel with more scalar and buffer arguments than any fixed argv size") {
    // 60 inputs, 100 float constants (each a scalar argument), 60 outputs: 221 arguments.
    constexpr int kInputs = 60, kConstants = 100;
    Graph g;
    std::vector<NodeId> outputs;
    NodeId acc = -1;
    for (int c = 0; c < kConstants; ++c) {
        NodeId k = g.add_constant(c + 0.5, DType::Float64);
        acc = acc < 0 ? k : g.add_op(OpKind::Add, {acc, k});
    }
    for (int i = 0; i < kInputs; ++i) {
        NodeId x = g.add_input(i, DType::Float64, {3});
        outputs.push_back(g.add_op(OpKind::Add, {x, g.add_op(OpKind::Broadcast, {acc}, Attrs{{"shape", std::vector<int64_t>{3}}})}));
    }
    g.set_outputs(outputs);
    KernelPtr k = compile_graph(g, CompileOptions{});
    REQUIRE(k->inputs.size() == kInputs);
    REQUIRE(k->outputs.size() == kInputs);

    std::vector<Halide::Runtime::Buffer<double>> bufs;
    for (int i = 0; i < 2 * kInputs; ++i) {
        bufs.emplace_back(3);
        bufs.back().fill(i < kInputs ? double(i) : -1.0);
    }
    std::vector<halide_buffer_t *> raw;
    for (auto &b : bufs) raw.push_back(b.raw_buffer());
    run_kernel(k, raw);
    double sum = 0;
    for (int c = 0; c < kConstants; ++c) sum += c + 0.5;  // the same order as the graph's adds
    for (int i = 0; i < kInputs; ++i) CHECK(bufs[kInputs + i](1) == double(i) + sum);
}

TEST_CASE("jit_target accepts the host and refuses what cannot run in this process") {
    Halide::Target host = Halide::get_host_target();
    CHECK(jit_target("host") == host);
    CHECK(jit_target("") == host);
    CHECK(jit_target(host.to_string()) == host);
    CHECK(jit_target("host-no_asserts").has_feature(Halide::Target::NoAsserts));
    CHECK(target_error("not-a-target").find("not a Halide target") != std::string::npos);
    CHECK(jit_target("host-cuda").has_feature(Halide::Target::CUDA));
    CHECK(jit_target("cuda").has_feature(Halide::Target::CUDACapability70));
    CHECK(target_error("host-opencl").find("CUDA only") != std::string::npos);
    CHECK(target_error("host-asan").find("asan") != std::string::npos);
    if (host.arch == Halide::Target::X86) {
        CHECK(target_error("arm-64-linux").find("arm-64-linux") != std::string::npos);
        CHECK(target_error("host-sve2").find("incompatible") != std::string::npos);
        for (const char *feature : {"fma4", "avx512_knl", "avx10_1", "x86apx"}) {
            if (host.has_feature(Halide::Target::feature_from_name(feature))) continue;
            std::string message = target_error(std::string("host-") + feature);
            CHECK(message.find("lacks") != std::string::npos);
            CHECK(message.find(feature) != std::string::npos);
        }
    }
}

TEST_CASE("empty computed arrays become constants; the kernel runs on empty inputs") {
    // x[None] + 1 and x.reshape(-1).sum() for x of shape (0, 3): the reshapes' index arithmetic
    // divides by zero extents, which made Halide require element 0 of the empty input.
    Graph g;
    NodeId x = g.add_input(0, DType::Int32, {0, 3});
    NodeId one = g.add_op(OpKind::Broadcast, {g.add_constant_int(1, DType::Int32)}, Attrs{{"shape", std::vector<int64_t>{1, 0, 3}}});
    NodeId lifted = g.add_op(OpKind::Add, {g.add_op(OpKind::Reshape, {x}, Attrs{{"shape", std::vector<int64_t>{1, 0, 3}}}), one});
    NodeId flat = g.add_op(OpKind::Reshape, {x}, Attrs{{"shape", std::vector<int64_t>{0}}});
    NodeId total = g.add_op(OpKind::Sum, {flat}, Attrs{{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}});
    g.set_outputs({lifted, total});

    Graph replaced = replace_empty_arrays(g);
    for (const Node &n : replaced.nodes()) {
        if (n.kind == OpKind::Input || n.size() > 0) continue;
        CHECK(n.kind == OpKind::Broadcast);
        CHECK(replaced.node(n.inputs[0]).kind == OpKind::Constant);
    }

    KernelPtr k = compile_graph(g, CompileOptions{});
    CHECK(k->inputs.empty());  // nothing reads the input any more
    // Empty buffers need a host pointer (as NumPy's have): a null one makes the call a bounds query.
    // Strides as the dispatcher gives them (an empty axis counted as 1, lower.cpp's describe_buffer).
    int32_t storage = 0;
    halide_dimension_t dims[] = {{0, 3, 1, 0}, {0, 0, 3, 0}, {0, 1, 3, 0}};
    Halide::Runtime::Buffer<int32_t> out_lifted(&storage, 3, dims);
    auto out_total = Halide::Runtime::Buffer<int32_t>::make_scalar();
    out_total() = -1;
    run_kernel(k, {out_lifted.raw_buffer(), out_total.raw_buffer()});
    CHECK(out_total() == 0);
}
