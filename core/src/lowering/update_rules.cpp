// slice_update: an array with one basic slice replaced, as one select per element.
//
// out[i] = v[k] where i lies on the slice (i = start + k * step on every axis), else x[i]. Both
// operands are read through the context, so x and v stay fused into the consumer's loop: an
// interior update `u[1:-1, 1:-1] = f(u)` is one pass that computes f inside and copies the border.
#include "rules.h"

namespace hc::lowering {

Halide::Expr slice_update(const LowerContext &ctx, const Node &n, const std::vector<Halide::Expr> &index) {
    const Node &value = ctx.graph.node(n.inputs[1]);
    const auto &starts = n.ints_attr("starts");
    const auto &steps = n.ints_attr("steps");
    Halide::Expr inside = Halide::Internal::const_true();
    std::vector<Halide::Expr> value_index;
    for (size_t i = 0; i < index.size(); ++i) {
        const int start = static_cast<int>(starts[i]);
        const int step = static_cast<int>(std::abs(steps[i]));
        const Halide::Expr count = ctx.extent(value, static_cast<int>(i));
        // Distance from the slice's first element along its own direction.
        Halide::Expr d = steps[i] > 0 ? index[i] - start : start - index[i];
        inside = inside && d >= 0 && d < count * step;
        if (step > 1) inside = inside && d % step == 0;
        Halide::Expr k = step > 1 ? d / step : d;
        // A select computes both sides: the value is read at an index clamped into its shape, so
        // elements outside the slice never read past it.
        value_index.push_back(Halide::clamp(k, 0, Halide::max(count - 1, 0)));
    }
    // likely(): Halide splits the loop where the slice starts and ends, and inside it the clamp
    // folds away, so the value is read with dense vector loads rather than gathers.
    return Halide::select(Halide::likely(inside), ctx.at(n.inputs[1], value_index), ctx.at(n.inputs[0], index));
}

}  // namespace hc::lowering
