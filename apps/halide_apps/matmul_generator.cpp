// A matrix product written as an RDom reduction: C(x, y) = sum_k A(k, y) B(x, k).
#include <Halide.h>

namespace {

using namespace Halide;

class Matmul : public Generator<Matmul> {
public:
    Input<Buffer<float, 2>> a{"a"};
    Input<Buffer<float, 2>> b{"b"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        const int N = 1024;
        Var x("x"), y("y");
        RDom k(0, N);
        Func prod("prod");
        prod(x, y) = 0.0f;
        prod(x, y) += a(k, y) * b(x, k);
        output(x, y) = prod(x, y);
        a.set_estimates({{0, N}, {0, N}});
        b.set_estimates({{0, N}, {0, N}});
        output.set_estimates({{0, N}, {0, N}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Matmul, matmul)
