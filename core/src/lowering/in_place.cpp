// Which written arguments the kernel may write in place: the output holding an argument's final
// contents is given the argument's own buffer, instead of a new array copied into it afterwards.
//
// NumPy computes a store's right-hand side before it writes, so a kernel reading the old values
// while it writes the new ones is only right when no read can see a written element. For the
// output Func F of argument buffer I that holds when:
//   * F reads I only at the point it writes (I(x, y) in F(x, y)), with one pure definition whose
//     splits guard their tails (ShiftInwards would compute the last vector twice, the second time
//     from values already written);
//   * every other Func that reads I is computed whole, at the root, before F starts: one F calls
//     (Halide realizes a Func's producers first). A Func that reads I and is inlined, computed
//     inside another, or not a producer of F (another output, a copy of I returned) keeps F out.
// The argument must be C-contiguous (the layout its strides were compiled for) and not empty.
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

// The index lists at which a set of expressions reads an input.
class InputReads : public Halide::Internal::IRGraphVisitor {
public:
    explicit InputReads(const InputNames &input) : input_(input) {}
    std::vector<std::vector<Halide::Expr>> reads;

private:
    using Halide::Internal::IRGraphVisitor::visit;
    void visit(const Call *call) override {
        if ((call->call_type == Call::Image && call->name == input_.buffer) ||
            (call->call_type == Call::Halide && call->name == input_.wrapper)) {
            reads.push_back(call->args);
        }
        Halide::Internal::IRGraphVisitor::visit(call);
    }
    const InputNames &input_;
};

std::vector<std::vector<Halide::Expr>> reads_of(const Function &f, const InputNames &input) {
    InputReads visitor(input);
    f.accept(&visitor);
    return visitor.reads;
}

bool reads_only_own_point(const Function &f, const std::vector<std::vector<Halide::Expr>> &reads,
                          const std::vector<int64_t> &halide_extents) {
    const std::vector<std::string> args = f.args();
    for (const auto &index : reads) {
        if (index.size() != args.size()) return false;
        for (size_t d = 0; d < index.size(); ++d) {
            const auto *var = index[d].as<Halide::Internal::Variable>();
            bool own = var && var->name == args[d];
            bool unit_axis = halide_extents[d] == 1 && Halide::Internal::is_const_zero(index[d]);
            if (!own && !unit_axis) return false;
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
        if (f.has_update_definition() || !tails_guarded(f)) continue;
        // An argument the kernel never reads (its old values are all overwritten) is no input.
        auto input = input_of_arg.find(arg);
        if (input == input_of_arg.end()) {
            alias[output] = arg;
            taken.insert(arg);
            continue;
        }
        const InputNames &names = input->second;
        const std::vector<int64_t> extents(node.shape.rbegin(), node.shape.rend());  // Halide order
        if (!reads_only_own_point(f, reads_of(f, names), extents)) continue;
        std::map<std::string, Function> producers = Halide::Internal::find_transitive_calls(f);
        bool safe = true;
        for (const auto &[name, g] : env) {
            if (name == f.name() || name == names.wrapper || reads_of(g, names).empty()) continue;
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
