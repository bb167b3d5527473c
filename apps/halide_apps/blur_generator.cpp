// A 3x3 box blur as two separable passes, edges repeated (after Halide's apps/blur).
#include <Halide.h>

namespace {

using namespace Halide;

class Blur : public Generator<Blur> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func blur_x("blur_x");
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
        input.set_estimates({{0, 4096}, {0, 3072}});
        output.set_estimates({{0, 4096}, {0, 3072}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Blur, blur)
