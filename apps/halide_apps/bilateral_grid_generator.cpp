// The bilateral grid: a histogram of the image splatted into a coarse 3-D grid (an RDom update
// whose z index is data-dependent), blurred along each axis, sliced back by trilinear
// interpolation (after Halide's apps/bilateral_grid, float input in [0, 1]).
#include <Halide.h>

namespace {

using namespace Halide;

class BilateralGrid : public Generator<BilateralGrid> {
public:
    GeneratorParam<int> s_sigma{"s_sigma", 8};
    Input<Buffer<float, 2>> input{"input"};
    Input<float> r_sigma{"r_sigma"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y"), z("z"), c("c");
        const int s = s_sigma;
        Func clamped = BoundaryConditions::repeat_edge(input);
        RDom r(0, s, 0, s);
        Expr val = clamp(clamped(x * s + r.x - s / 2, y * s + r.y - s / 2), 0.0f, 1.0f);
        Expr zi = cast<int>(val * (1.0f / r_sigma) + 0.5f);
        Func histogram("histogram");
        histogram(x, y, z, c) = 0.0f;
        histogram(x, y, zi, c) += select(c == 0, val, 1.0f);
        Func blurz("blurz"), blurx("blurx"), blury("blury");
        blurz(x, y, z, c) = histogram(x, y, z - 2, c) + histogram(x, y, z - 1, c) * 4 + histogram(x, y, z, c) * 6 +
                            histogram(x, y, z + 1, c) * 4 + histogram(x, y, z + 2, c);
        blurx(x, y, z, c) = blurz(x - 2, y, z, c) + blurz(x - 1, y, z, c) * 4 + blurz(x, y, z, c) * 6 +
                            blurz(x + 1, y, z, c) * 4 + blurz(x + 2, y, z, c);
        blury(x, y, z, c) = blurx(x, y - 2, z, c) + blurx(x, y - 1, z, c) * 4 + blurx(x, y, z, c) * 6 +
                            blurx(x, y + 1, z, c) * 4 + blurx(x, y + 2, z, c);
        Expr v = clamp(input(x, y), 0.0f, 1.0f);
        Expr zv = v * (1.0f / r_sigma);
        Expr zj = cast<int>(zv);
        Expr zf = zv - zj;
        Expr xf = cast<float>(x % s) / s, yf = cast<float>(y % s) / s;
        Expr xi = x / s, yi = y / s;
        Func interpolated("interpolated");
        interpolated(x, y, c) =
            lerp(lerp(lerp(blury(xi, yi, zj, c), blury(xi + 1, yi, zj, c), xf),
                      lerp(blury(xi, yi + 1, zj, c), blury(xi + 1, yi + 1, zj, c), xf), yf),
                 lerp(lerp(blury(xi, yi, zj + 1, c), blury(xi + 1, yi, zj + 1, c), xf),
                      lerp(blury(xi, yi + 1, zj + 1, c), blury(xi + 1, yi + 1, zj + 1, c), xf), yf),
                 zf);
        output(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);
        input.set_estimates({{0, 1536}, {0, 2560}});
        r_sigma.set_estimate(0.1f);
        output.set_estimates({{0, 1536}, {0, 2560}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(BilateralGrid, bilateral_grid)
