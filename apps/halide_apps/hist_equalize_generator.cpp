// Histogram equalization of an 8-bit image: a histogram (an RDom update at data-dependent
// bins), its running sum (a scan), and a lookup per pixel.
#include <Halide.h>

namespace {

using namespace Halide;

class HistEqualize : public Generator<HistEqualize> {
public:
    Input<Buffer<uint8_t, 2>> input{"input"};
    Output<Buffer<uint8_t, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y"), i("i");
        RDom pixels(0, input.width(), 0, input.height());
        Func hist("hist");
        hist(i) = 0;
        hist(cast<int>(input(pixels.x, pixels.y))) += 1;
        Func cdf("cdf");
        cdf(i) = hist(0);
        RDom bins(1, 255);
        cdf(bins) = cdf(bins - 1) + hist(bins);
        Expr total = input.width() * input.height();
        output(x, y) = cast<uint8_t>(cast<int64_t>(cdf(cast<int>(input(x, y)))) * 255 / total);
        input.set_estimates({{0, 1536}, {0, 2560}});
        output.set_estimates({{0, 1536}, {0, 2560}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(HistEqualize, hist_equalize)
