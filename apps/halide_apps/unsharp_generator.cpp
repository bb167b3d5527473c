// Unsharp masking of a colour image: a 7-tap Gaussian blur of its luminance, the sharpened
// luminance's ratio applied to every channel (after Halide's apps/unsharp).
#include <Halide.h>

namespace {

using namespace Halide;

class Unsharp : public Generator<Unsharp> {
public:
    Input<Buffer<float, 3>> input{"input"};
    Output<Buffer<float, 3>> output{"output"};

    void generate() {
        Var x("x"), y("y"), c("c");
        const float sigma = 1.5f;
        Func kernel("kernel");
        kernel(x) = exp(-x * x / (2 * sigma * sigma)) / (std::sqrt(2 * 3.14159265f) * sigma);
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func gray("gray");
        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);
        Func blur_y("blur_y");
        blur_y(x, y) = kernel(0) * gray(x, y) + kernel(1) * (gray(x, y - 1) + gray(x, y + 1)) +
                       kernel(2) * (gray(x, y - 2) + gray(x, y + 2)) + kernel(3) * (gray(x, y - 3) + gray(x, y + 3));
        Func blur_x("blur_x");
        blur_x(x, y) = kernel(0) * blur_y(x, y) + kernel(1) * (blur_y(x - 1, y) + blur_y(x + 1, y)) +
                       kernel(2) * (blur_y(x - 2, y) + blur_y(x + 2, y)) + kernel(3) * (blur_y(x - 3, y) + blur_y(x + 3, y));
        Func sharpen("sharpen");
        sharpen(x, y) = 2 * gray(x, y) - blur_x(x, y);
        Func ratio("ratio");
        ratio(x, y) = sharpen(x, y) / gray(x, y);
        output(x, y, c) = ratio(x, y) * input(x, y, c);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Unsharp, unsharp)
