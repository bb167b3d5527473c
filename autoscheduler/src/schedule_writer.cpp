#include "schedule_writer.h"

#include <algorithm>
#include <sstream>

namespace hc {

namespace {

std::string text(const Halide::Expr &e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

std::string text(Halide::TailStrategy t) {
    switch (t) {
    case Halide::TailStrategy::GuardWithIf: return "TailStrategy::GuardWithIf";
    case Halide::TailStrategy::Auto: return "TailStrategy::Auto";
    case Halide::TailStrategy::ShiftInwards: return "TailStrategy::ShiftInwards";
    case Halide::TailStrategy::RoundUp: return "TailStrategy::RoundUp";
    default: return "TailStrategy(" + std::to_string(static_cast<int>(t)) + ")";
    }
}

std::string name_of(const Halide::VarOrRVar &v) { return ScheduleWriter::cpp_name(v.name()); }

}  // namespace

std::string ScheduleWriter::cpp_name(const std::string &halide_name) {
    std::string s = halide_name;
    std::replace(s.begin(), s.end(), '$', '_');
    std::replace(s.begin(), s.end(), '.', '_');
    return s;
}

StageRef ScheduleWriter::pure(const Halide::Func &f) { return {Halide::Stage(f), cpp_name(f.name())}; }

StageRef ScheduleWriter::update(const Halide::Func &f, int index) {
    Halide::Func g = f;  // update() is not const
    return {g.update(index), cpp_name(f.name()) + ".update(" + std::to_string(index) + ")"};
}

void ScheduleWriter::line(const StageRef &s, const std::string &call) { line(s.name, call); }

void ScheduleWriter::line(const std::string &name, const std::string &call) { source_ += name + "." + call + ";\n"; }

void ScheduleWriter::declare(const Halide::VarOrRVar &v) {
    std::string name = name_of(v);
    if (std::find(declared_.begin(), declared_.end(), name) != declared_.end()) return;
    declared_.push_back(name);
    source_ += std::string(v.is_rvar ? "RVar " : "Var ") + name + "(\"" + v.name() + "\");\n";
}

void ScheduleWriter::declare_split_loop(const Halide::Func &at, const Halide::VarOrRVar &loop) {
    const auto &pure = at.function().args();
    if (loop.is_rvar || std::find(pure.begin(), pure.end(), loop.name()) == pure.end()) declare(loop);
}

void ScheduleWriter::compute_inline(Halide::Func f) {
    f.compute_inline();
    line(cpp_name(f.name()), "compute_inline()");
}

void ScheduleWriter::compute_root(Halide::Func f) {
    f.compute_root();
    line(cpp_name(f.name()), "compute_root()");  // (an extern stage is a Func but no Stage)
}

void ScheduleWriter::compute_at(Halide::Func f, const Halide::Func &at, const Halide::VarOrRVar *loop) {
    if (loop) {
        f.compute_at(loop->is_rvar ? Halide::LoopLevel(at, loop->rvar) : Halide::LoopLevel(at, loop->var));
        declare_split_loop(at, *loop);
        line(cpp_name(f.name()), "compute_at(" + cpp_name(at.name()) + ", " + name_of(*loop) + ")");
    } else {
        f.compute_at(Halide::LoopLevel(at, Halide::Var::outermost()));
        line(cpp_name(f.name()), "compute_at(" + cpp_name(at.name()) + ", Var::outermost())");
    }
}

void ScheduleWriter::store_at(Halide::Func f, const Halide::Func &at, const Halide::Var &loop) {
    f.store_at(Halide::LoopLevel(at, loop));
    declare_split_loop(at, loop);
    line(cpp_name(f.name()), "store_at(" + cpp_name(at.name()) + ", " + name_of(loop) + ")");
}

void ScheduleWriter::bound(Halide::Func f, const Halide::Var &v, const Halide::Expr &min, const Halide::Expr &extent) {
    f.bound(v, min, extent);
    line(cpp_name(f.name()), "bound(" + name_of(v) + ", " + text(min) + ", " + text(extent) + ")");
}

void ScheduleWriter::bound_storage(Halide::Func f, const Halide::Var &v, const Halide::Expr &extent) {
    f.bound_storage(v, extent);
    line(cpp_name(f.name()), "bound_storage(" + name_of(v) + ", " + text(extent) + ")");
}

StageRef ScheduleWriter::specialize(const StageRef &s, const Halide::Expr &condition) {
    Halide::Stage stage = s.stage;
    return {stage.specialize(condition), s.name + ".specialize(" + text(condition) + ")"};
}

void ScheduleWriter::vectorize(const StageRef &s, const Halide::VarOrRVar &v, const Halide::Expr &width,
                               Halide::TailStrategy tail) {
    on_stage(s, "vectorize(" + name_of(v) + ", " + text(width) + ", " + text(tail) + ")",
             [&](Halide::Stage &stage) { stage.vectorize(v, width, tail); });
}

void ScheduleWriter::vectorize(const StageRef &s, const Halide::VarOrRVar &v) {
    on_stage(s, "vectorize(" + name_of(v) + ")", [&](Halide::Stage &stage) { stage.vectorize(v); });
}

void ScheduleWriter::parallel(const StageRef &s, const Halide::VarOrRVar &v) {
    on_stage(s, "parallel(" + name_of(v) + ")", [&](Halide::Stage &stage) { stage.parallel(v); });
}

void ScheduleWriter::unroll(const StageRef &s, const Halide::VarOrRVar &v, const Halide::Expr &factor,
                            Halide::TailStrategy tail) {
    on_stage(s, "unroll(" + name_of(v) + ", " + text(factor) + ", " + text(tail) + ")",
             [&](Halide::Stage &stage) { stage.unroll(v, factor, tail); });
}

void ScheduleWriter::unroll(const StageRef &s, const Halide::VarOrRVar &v) {
    on_stage(s, "unroll(" + name_of(v) + ")", [&](Halide::Stage &stage) { stage.unroll(v); });
}

void ScheduleWriter::split(const StageRef &s, const Halide::VarOrRVar &v, const Halide::VarOrRVar &outer,
                           const Halide::VarOrRVar &inner, const Halide::Expr &factor, Halide::TailStrategy tail) {
    declare(outer);
    declare(inner);
    on_stage(s, "split(" + name_of(v) + ", " + name_of(outer) + ", " + name_of(inner) + ", " + text(factor) + ", " +
                    text(tail) + ")",
             [&](Halide::Stage &stage) { stage.split(v, outer, inner, factor, tail); });
}

void ScheduleWriter::tile(const StageRef &s, const Halide::VarOrRVar &x, const Halide::VarOrRVar &y,
                          const Halide::VarOrRVar &xo, const Halide::VarOrRVar &yo, const Halide::VarOrRVar &xi,
                          const Halide::VarOrRVar &yi, const Halide::Expr &xfactor, const Halide::Expr &yfactor,
                          Halide::TailStrategy tail) {
    for (const Halide::VarOrRVar *v : {&xo, &yo, &xi, &yi}) declare(*v);
    on_stage(s, "tile(" + name_of(x) + ", " + name_of(y) + ", " + name_of(xo) + ", " + name_of(yo) + ", " + name_of(xi) +
                    ", " + name_of(yi) + ", " + text(xfactor) + ", " + text(yfactor) + ", " + text(tail) + ")",
             [&](Halide::Stage &stage) { stage.tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail); });
}

void ScheduleWriter::fuse(const StageRef &s, const Halide::VarOrRVar &inner, const Halide::VarOrRVar &outer,
                          const Halide::VarOrRVar &fused) {
    declare(fused);
    on_stage(s, "fuse(" + name_of(inner) + ", " + name_of(outer) + ", " + name_of(fused) + ")",
             [&](Halide::Stage &stage) { stage.fuse(inner, outer, fused); });
}

void ScheduleWriter::gpu_blocks(const StageRef &s, const Halide::VarOrRVar &v) {
    on_stage(s, "gpu_blocks(" + name_of(v) + ")", [&](Halide::Stage &stage) { stage.gpu_blocks(v); });
}

void ScheduleWriter::gpu_threads(const StageRef &s, const Halide::VarOrRVar &v) {
    on_stage(s, "gpu_threads(" + name_of(v) + ")", [&](Halide::Stage &stage) { stage.gpu_threads(v); });
}

void ScheduleWriter::gpu_lanes(const StageRef &s, const Halide::VarOrRVar &v) {
    on_stage(s, "gpu_lanes(" + name_of(v) + ")", [&](Halide::Stage &stage) { stage.gpu_lanes(v); });
}

void ScheduleWriter::gpu_single_thread(const StageRef &s) {
    on_stage(s, "gpu_single_thread()", [&](Halide::Stage &stage) { stage.gpu_single_thread(); });
}

void ScheduleWriter::reorder(const StageRef &s, const std::vector<Halide::VarOrRVar> &order) {
    std::string names;
    for (const Halide::VarOrRVar &v : order) names += (names.empty() ? "" : ", ") + name_of(v);
    on_stage(s, "reorder(" + names + ")", [&](Halide::Stage &stage) { stage.reorder(order); });
}

Halide::Func ScheduleWriter::split_and_rfactor(const StageRef &s, const Halide::RVar &r, const Halide::RVar &outer,
                                               const Halide::RVar &inner, int factor, const Halide::Var &lane,
                                               bool rfactor_outer) {
    declare(outer);
    declare(inner);
    declare(lane);
    Halide::Stage stage = s.stage;
    const Halide::RVar &pure = rfactor_outer ? outer : inner;
    Halide::Func intermediate = stage.split(r, outer, inner, factor).rfactor(pure, lane);
    source_ += "Func " + cpp_name(intermediate.name()) + " = " + s.name + ".split(" + name_of(r) + ", " +
               name_of(outer) + ", " + name_of(inner) + ", " + std::to_string(factor) + ").rfactor(" + name_of(pure) +
               ", " + name_of(lane) + ");\n";
    return intermediate;
}

Halide::Func ScheduleWriter::in_wrapper(const Halide::Func &f, const Halide::Func &consumer) {
    Halide::Func wrapper = Halide::Func(f).in(consumer);
    source_ += "Func " + cpp_name(wrapper.name()) + " = " + cpp_name(f.name()) + ".in(" + cpp_name(consumer.name()) + ");\n";
    return wrapper;
}

Halide::Func ScheduleWriter::rerouted_copy(const Halide::Func &f, const Halide::Func &consumer,
                                           const std::function<bool(const std::vector<Halide::Expr> &)> &rerouted) {
    Halide::Func copy(f.name() + "_copy_in_" + consumer.name());
    const std::vector<Halide::Var> args = f.args();
    copy(args) = Halide::Func(f)(args);
    class Reroute : public Halide::Internal::IRGraphMutator {
    public:
        Reroute(const Halide::Func &from, const Halide::Func &to,
                const std::function<bool(const std::vector<Halide::Expr> &)> &picks)
            : from_(from.name()), to_(to), picks_(picks) {}

    protected:
        using IRGraphMutator::visit;
        Halide::Expr visit(const Halide::Internal::Call *op) override {
            if (op->name != from_ || !(op->call_type == Halide::Internal::Call::Halide ||
                                       op->call_type == Halide::Internal::Call::Image) || !picks_(op->args)) {
                return IRGraphMutator::visit(op);
            }
            return Halide::Func(to_)(op->args);
        }

    private:
        std::string from_;
        Halide::Func to_;
        const std::function<bool(const std::vector<Halide::Expr> &)> &picks_;
    } reroute(f, copy, rerouted);
    Halide::Internal::Function(consumer.function()).mutate(&reroute);
    // No directive makes it (Func::in takes every call): said as a definition and a comment.
    source_ += "Func " + cpp_name(copy.name()) + ";  // (_) = " + cpp_name(f.name()) + "(_), read by " +
               cpp_name(consumer.name()) + " at its calls across " + cpp_name(f.name()) +
               "'s rows only (its definition rewritten)\n";
    return copy;
}

void ScheduleWriter::unscheduled(const StageRef &s) {
    on_stage(s, "unscheduled()", [](Halide::Stage &stage) { stage.unscheduled(); });
}

}  // namespace hc
