// GPU arg reductions' lanes (LaneParts, core/src/lowering/reduction_rules.cpp): the lowering for
// a GPU, realized on the host (each lane Func stored whole, no GPU schedule), gives NumPy's index
// for every way it cuts a reduction: lanes as a row's threads, stored lanes down columns, stored
// lanes along few long rows, each then combined in levels. The kernels themselves run in
// tests/python/test_cuda.py on a GPU machine.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "hcompile/fusion.h"
#include "hcompile/graph.h"
#include "hcompile/lowering.h"
#include "hcompile/target.h"

using namespace hc;

namespace {

// NumPy's argmax/argmin along `axis` of a row-major (rows, length, inner) array: the first NaN,
// else the first of the extreme values (-0.0 equal to 0.0).
std::vector<int64_t> reference(const std::vector<float> &xs, int64_t outer, int64_t length, int64_t inner, bool is_max) {
    std::vector<int64_t> out;
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            int64_t best = 0;
            for (int64_t k = 1; k < length; ++k) {
                const float v = xs[(o * length + k) * inner + i], b = xs[(o * length + best) * inner + i];
                if (std::isnan(b)) break;
                if (std::isnan(v) || (is_max ? v > b : v < b)) best = k;
            }
            out.push_back(best);
        }
    }
    return out;
}

// Values with ties, zeros of both signs, infinities and (where `nans`) NaNs, deterministic.
std::vector<float> values(int64_t n, bool nans, uint32_t seed) {
    std::vector<float> xs(n);
    uint32_t state = seed;
    for (float &x : xs) {
        state = state * 1664525u + 1013904223u;
        x = static_cast<float>((state >> 8) % 2001) - 1000.0f;
    }
    if (n > 10) {
        xs[n / 3] = 1000.0f, xs[n / 2] = 1000.0f;      // tied maxima
        xs[n / 5] = -1000.0f, xs[n - 1] = -1000.0f;    // tied minima
        xs[n / 7] = -0.0f;
        xs[n / 4] = std::numeric_limits<float>::infinity();
        xs[n / 6] = -std::numeric_limits<float>::infinity();
        if (nans) xs[(2 * n) / 3] = xs[n - 2] = std::numeric_limits<float>::quiet_NaN();
    }
    return xs;
}

// argmax (or argmin) over `axis` of a float32 array of `shape`, lowered for a GPU and realized
// on the host; returns the lane count of its LaneParts (0: none) and checks the indices.
int check_gpu_arg_reduction(const std::vector<int64_t> &shape, int64_t axis, bool is_max, bool nans) {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, shape);
    g.set_outputs({g.add_op(is_max ? OpKind::Argmax : OpKind::Argmin, {x},
                            Attrs{{"axis", axis}, {"keepdims", int64_t{0}}})});
    LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g), {}, {}, {}, /*for_gpu=*/true);
    int lanes = 0;
    for (const RegionFunc &r : lowered.regions) {
        if (!r.lane_parts) continue;
        lanes = r.lane_parts->lanes;
        for (Halide::Func stage : r.lane_parts->stages()) stage.compute_root();
    }
    int64_t n = 1, outer = 1, inner = 1;
    for (size_t a = 0; a < shape.size(); ++a) {
        n *= shape[a];
        if (static_cast<int64_t>(a) < axis) outer *= shape[a];
        if (static_cast<int64_t>(a) > axis) inner *= shape[a];
    }
    std::vector<int> sizes(shape.rbegin(), shape.rend());
    Halide::Buffer<float> in(sizes);
    lowered.inputs[0].param.set(in);
    std::vector<int> out_sizes;
    for (size_t a = shape.size(); a-- > 0;) {
        if (static_cast<int64_t>(a) != axis) out_sizes.push_back(static_cast<int>(shape[a]));
    }
    Halide::Buffer<int64_t> out(out_sizes);
    const int64_t length = shape[axis];
    const float extreme = is_max ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    // The values as they come, then with one winner an output (NaN or an infinity) at positions
    // that reach every lane and level: any lane or level dropped or read twice moves some answer.
    for (int trial = 0; trial < 40; ++trial) {
        std::vector<float> xs = values(n, nans && trial == 0, static_cast<uint32_t>(n + axis));
        if (trial > 0) {
            for (int64_t o = 0; o < outer * inner; ++o) {
                const int64_t at = (trial == 1 ? 0 : trial == 2 ? length - 1 : (trial * 7919 + o * 104729)) % length;
                xs[((o / inner) * length + at) * inner + o % inner] =
                    nans && trial % 2 ? std::numeric_limits<float>::quiet_NaN() : extreme;
            }
        }
        std::copy(xs.begin(), xs.end(), in.data());
        lowered.pipeline.realize(out, ieee_target(parse_target("host")));
        const std::vector<int64_t> got(out.data(), out.data() + out.number_of_elements());
        CHECK(got == reference(xs, outer, length, inner, is_max));
    }
    return lanes;
}

}  // namespace

TEST_CASE("GPU arg reductions give NumPy's index in every cut into lanes") {
    // Many rows: a row's lanes are its block's threads (in levels for a longer row).
    CHECK(check_gpu_arg_reduction({300, 50}, 1, true, true) > 1);
    CHECK(check_gpu_arg_reduction({300, 1000}, 1, false, true) > 8);
    // Few long rows (an odd length: the last lane's steps end early): stored lanes, then levels.
    CHECK(check_gpu_arg_reduction({1, 40001}, 1, true, true) > 32);
    CHECK(check_gpu_arg_reduction({3, 20000}, 1, false, false) > 32);
    CHECK(check_gpu_arg_reduction({2, 30000}, 1, false, true) > 32);
    // Down columns of a tall array, and along a middle axis: stored lanes, levels.
    CHECK(check_gpu_arg_reduction({5000, 3}, 0, true, true) > 32);
    CHECK(check_gpu_arg_reduction({2, 3000, 3}, 1, false, true) > 32);
    CHECK(check_gpu_arg_reduction({4099, 2}, 0, true, false) > 32);
}
