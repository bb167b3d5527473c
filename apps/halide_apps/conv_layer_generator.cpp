// A 3x3 convolution layer with bias and ReLU over a batch, channels innermost: an RDom over
// input channels and the filter window (after Halide's apps/conv_layer). The input carries the
// border: it is (C, W + 2, H + 2, N).
#include <Halide.h>

namespace {

using namespace Halide;

class ConvLayer : public Generator<ConvLayer> {
public:
    Input<Buffer<float, 4>> input{"input"};
    Input<Buffer<float, 4>> filter{"filter"};   // (CO, CI, 3, 3)
    Input<Buffer<float, 1>> bias{"bias"};
    Output<Buffer<float, 4>> output{"output"};

    void generate() {
        const int N = 4, CI = 64, CO = 64, W = 56, H = 56;
        Var c("c"), x("x"), y("y"), n("n");
        RDom r(0, CI, 0, 3, 0, 3);
        Func conv("conv");
        conv(c, x, y, n) = bias(c);
        conv(c, x, y, n) += filter(c, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z, n);
        output(c, x, y, n) = max(0.0f, conv(c, x, y, n));
        input.set_estimates({{0, CI}, {0, W + 2}, {0, H + 2}, {0, N}});
        filter.set_estimates({{0, CO}, {0, CI}, {0, 3}, {0, 3}});
        bias.set_estimates({{0, CO}});
        output.set_estimates({{0, CO}, {0, W}, {0, H}, {0, N}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(ConvLayer, conv_layer)
