// Which written arguments the kernel may write in place: the output holding an argument's final
// contents is given the argument's own buffer, instead of a new array copied into it afterwards.
//
// NumPy computes a store's right-hand side before it writes, so a kernel reading the old values
// while it writes the new ones is only right when no read can see a written element. For the
// output Func F of argument buffer I that holds when:
//   * F reads I only at the point it writes (I(x, y) in F(x, y)), or, where it reads elsewhere,
//     only under select conditions that prove the index is the point written (a slice update's
//     value read through an index clamped into the slice); F has one pure definition whose
//     splits guard their tails (ShiftInwards would compute the last vector twice, the second time
//     from values already written);
//   * every other Func that reads I is computed whole, at the root, before F starts: one F calls
//     (Halide realizes a Func's producers first). A Func that reads I and is inlined, computed
//     inside another, or not a producer of F (another output, a copy of I returned) keeps F out.
// The argument must be C-contiguous (the layout its strides were compiled for) and not empty.
// An extern F (a library call, which reads its operands as it writes) writes only an argument
// the pipeline does not read.
#include <Halide.h>

#include <map>
#include <set>
#include <string>

#include "hcompile/in_place.h"

namespace hc {

namespace {

using Halide::Internal::Call;
using Halide::Internal::Function;

// An input argument as the pipeline reads it: its buffer directly, or through the Func an
// ImageParam wraps itself in (inlined; it reads the buffer at the point it is called at).
struct InputNames {
    std::string buffer, wrapper;
};

// The reads of an input in one Func's definition, each with the condition under which its
// value is used: the conjunction of the select conditions on the way down to it. A slice
// update's value is read at an index clamped into the slice (for bounds), which is the point
// written only inside the slice, the only place the select uses it.
class GuardedReads : public Halide::Internal::IRGraphVisitor {
public:
    explicit GuardedReads(const InputNames &input) : input_(input) {}
    struct Read {
        std::vector<Halide::Expr> index;
        Halide::Expr used_if;
    };
    std::vector<Read> reads;
    bool too_big = false;

private:
    static constexpr size_t kMaxVisits = 200000;
    using Halide::Internal::IRGraphVisitor::include;
    using Halide::Internal::IRGraphVisitor::visit;
    // Shared subexpressions are visited once per path condition, not once in all.
    void include(const Halide::Expr &e) override {
        if (too_big || !seen_.insert({e.get(), used_if_.get()}).second) return;
        too_big = seen_.size() > kMaxVisits;
        e.accept(this);
    }
    void visit(const Halide::Internal::Select *op) override {
        include(op->condition);
        Halide::Expr outer = used_if_, condition = Halide::Internal::remove_likelies(op->condition);
        used_if_ = outer && condition;
        include(op->true_value);
        used_if_ = outer && !condition;
        include(op->false_value);
        used_if_ = outer;
    }
    // Indices and conditions are kept with the Let values they name substituted in.
    void visit(const Halide::Internal::Let *op) override {
        include(op->value);
        lets_[op->name] = Halide::Internal::substitute(lets_, op->value);
        include(op->body);
        lets_.erase(op->name);
    }
    void visit(const Call *call) override {
        if ((call->call_type == Call::Image && call->name == input_.buffer) ||
            (call->call_type == Call::Halide && call->name == input_.wrapper)) {
            std::vector<Halide::Expr> index;
            for (const Halide::Expr &e : call->args) index.push_back(Halide::Internal::substitute(lets_, e));
            reads.push_back({index, Halide::Internal::substitute(lets_, used_if_)});
        }
        Halide::Internal::IRGraphVisitor::visit(call);
    }
    const InputNames &input_;
    std::map<std::string, Halide::Expr> lets_;
    Halide::Expr used_if_ = Halide::Internal::const_true();
    std::set<std::pair<const Halide::Internal::IRNode *, const Halide::Internal::IRNode *>> seen_;
};

// Whether `claim` holds wherever `fact` does, over the variables `vars`. The simplifier alone
// does not use a fact beside it (!(2 <= x && x < 10) || clamp(x, 2, 9) == x); given the
// intervals the fact confines each variable to, it folds the clamp.
bool proven_where(const Halide::Expr &fact, const Halide::Expr &claim, const std::vector<std::string> &vars) {
    if (Halide::Internal::can_prove(!fact || claim)) return true;
    Halide::Internal::Scope<Halide::Internal::Interval> bounds;
    for (const std::string &v : vars) {
        Halide::Internal::Interval range = Halide::Internal::solve_for_outer_interval(fact, v);
        if (range.is_bounded()) bounds.push(v, range);
    }
    Halide::Expr folded = Halide::Internal::simplify(claim, true, bounds,
                                                     Halide::Internal::Scope<Halide::Internal::ModulusRemainder>::empty_scope(),
                                                     {fact});
    return Halide::Internal::is_const_one(folded);
}

// Whether `f`'s definitions read the input at all (a definition too big to walk counts as one).
bool reads_input(const Function &f, const InputNames &input) {
    GuardedReads visitor(input);
    f.accept(&visitor);
    return visitor.too_big || !visitor.reads.empty();
}

// Whether every read of the input in `f` is, wherever its value is used, at the point `f`
// writes (an axis of extent 1 is read at 0).
bool reads_only_own_point(const Function &f, const InputNames &input, const std::vector<int64_t> &halide_extents) {
    GuardedReads visitor(input);
    f.accept(&visitor);
    if (visitor.too_big) return false;
    const std::vector<std::string> args = f.args();
    for (const GuardedReads::Read &read : visitor.reads) {
        if (read.index.size() != args.size()) return false;
        for (size_t d = 0; d < args.size(); ++d) {
            const Halide::Expr &at = read.index[d];
            const auto *var = at.as<Halide::Internal::Variable>();
            if (var && var->name == args[d]) continue;
            if (halide_extents[d] == 1 && Halide::Internal::is_const_zero(at)) continue;
            Halide::Expr own = Halide::Internal::Variable::make(at.type(), args[d]);
            if (!proven_where(read.used_if, at == own, args)) return false;
        }
    }
    return true;
}

bool tails_guarded(const Function &f) {
    for (const Halide::Internal::Split &split : f.definition().schedule().splits()) {
        if (split.split_type == Halide::Internal::Split::SplitVar && split.tail != Halide::TailStrategy::GuardWithIf) {
            return false;
        }
    }
    return true;
}

// Asked after the pipeline was compiled, when its schedule is final: locking the loop levels
// (which Halide's compile does on its own copy) only lets them be read.
bool computed_at_root(Function f) {
    f.lock_loop_levels();
    return f.schedule().compute_level().is_root();
}

}  // namespace

std::vector<int> outputs_written_in_place(const Graph &graph, LoweredPipeline &lowered,
                                          const std::vector<std::pair<int, int>> &writebacks,
                                          const std::vector<InputLayout> &layouts) {
    std::vector<int> alias(lowered.outputs.size(), -1);
    // Every Func of the pipeline, by name, and each output's producers.
    std::map<std::string, Function> env;
    for (Halide::Func &out : lowered.outputs) {
        env.emplace(out.name(), out.function());
        for (const auto &[name, f] : Halide::Internal::find_transitive_calls(out.function())) env.emplace(name, f);
    }
    std::map<int, InputNames> input_of_arg;
    for (LoweredInput &in : lowered.inputs) input_of_arg[in.arg_index] = {in.param.name(), Halide::Func(in.param).name()};

    std::set<int> taken;  // an argument is written by one output only
    for (const auto &[output, arg] : writebacks) {
        if (output < 0 || output >= static_cast<int>(lowered.outputs.size()) || taken.count(arg)) continue;
        if (arg < static_cast<int>(layouts.size()) && layouts[arg] != InputLayout::CContiguous) continue;
        const Node &node = graph.node(graph.outputs()[output]);
        if (node.size() == 0) continue;
        Function f = lowered.outputs[output].function();
        // An extern stage (a cuBLAS product returned as it is) has no definition of ours.
        const bool extern_stage = f.has_extern_definition();
        if (!extern_stage && (f.has_update_definition() || !tails_guarded(f))) continue;
        // An argument the kernel never reads (its old values are all overwritten) is no input.
        auto input = input_of_arg.find(arg);
        if (input == input_of_arg.end()) {
            alias[output] = arg;
            taken.insert(arg);
            continue;
        }
        // The extern stage writes its output while it reads its operands, which may be this
        // argument: it gets a new array, copied into the argument after the call.
        if (extern_stage) continue;
        const InputNames &names = input->second;
        const std::vector<int64_t> extents(node.shape.rbegin(), node.shape.rend());  // Halide order
        if (!reads_only_own_point(f, names, extents)) continue;
        std::map<std::string, Function> producers = Halide::Internal::find_transitive_calls(f);
        bool safe = true;
        for (const auto &[name, g] : env) {
            if (name == f.name() || name == names.wrapper || !reads_input(g, names)) continue;
            if (!producers.count(name) || !computed_at_root(g)) {
                safe = false;
                break;
            }
        }
        if (!safe) continue;
        alias[output] = arg;
        taken.insert(arg);
    }
    return alias;
}

}  // namespace hc
