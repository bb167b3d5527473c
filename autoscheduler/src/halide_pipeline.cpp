#include "hcompile/halide_pipeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "schedule_writer.h"

namespace hc {

namespace {

using Halide::Expr;
using Halide::Internal::Box;
using Halide::Internal::Call;
using Halide::Internal::Definition;
using Halide::Internal::Function;
using Halide::Internal::Interval;

[[noreturn]] void refuse(const std::string &why) { throw std::invalid_argument("HCompile autoscheduler: " + why); }

// Parameters replaced by their estimates: a scalar Param's set_estimate, a buffer's
// dim(d).set_estimate (its `.min.d` and `.extent.d`), so that bounds reduce to constants.
class SubstituteEstimates : public Halide::Internal::IRMutator {
protected:
    using IRMutator::visit;
    Expr visit(const Halide::Internal::Variable *op) override {
        if (!op->param.defined()) return op;
        Expr estimate;
        if (!op->param.is_buffer()) {
            estimate = op->param.estimate();
        } else {
            const std::string prefix = op->param.name() + ".";
            const std::string field = op->name.substr(std::min(prefix.size(), op->name.size()));
            for (int d = 0; d < op->param.dimensions() && !estimate.defined(); ++d) {
                if (field == "min." + std::to_string(d)) estimate = op->param.min_constraint_estimate(d);
                if (field == "extent." + std::to_string(d)) estimate = op->param.extent_constraint_estimate(d);
            }
        }
        return estimate.defined() ? Halide::cast(op->type, estimate) : Expr(op);
    }
};

Expr with_estimates(const Expr &e) {
    if (!e.defined()) return e;
    SubstituteEstimates substitute;
    return Halide::Internal::simplify(substitute.mutate(e));
}

std::optional<int64_t> constant(const Expr &e) {
    return e.defined() ? Halide::Internal::as_const_int(with_estimates(e)) : std::nullopt;
}

// Every Expr of a definition: its values, its args (an update's may index other Funcs) and the
// predicates of its reduction domain.
std::vector<Expr> exprs_of(const Definition &d) {
    std::vector<Expr> out = d.values();
    out.insert(out.end(), d.args().begin(), d.args().end());
    for (const Expr &p : d.split_predicate()) out.push_back(p);
    return out;
}

std::vector<const Definition *> definitions_of(const Function &f) {
    std::vector<const Definition *> out{&f.definition()};
    for (const Definition &u : f.updates()) out.push_back(&u);
    return out;
}

// The calls a definition makes to its own Func (a reduction reading its accumulator).
class SelfCalls : public Halide::Internal::IRVisitor {
public:
    explicit SelfCalls(std::string name) : name_(std::move(name)) {}
    std::vector<const Call *> calls;

protected:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->call_type == Call::Halide && op->name == name_) calls.push_back(op);
        IRVisitor::visit(op);
    }

private:
    std::string name_;
};

bool is_var(const Expr &e, const std::string &name) {
    const auto *v = e.as<Halide::Internal::Variable>();
    return v && v->name == name;
}

// Whether every update of `f` writes and reads its own values at pure axis `d`'s index alone:
// then the update's loop over that axis may run in parallel or as a vector.
bool update_axis_free(const Function &f, int d) {
    const std::string &var = f.args()[d];
    for (const Definition &u : f.updates()) {
        if (!is_var(u.args()[d], var)) return false;
        SelfCalls self(f.name());
        for (const Expr &e : exprs_of(u)) e.accept(&self);
        for (const Call *c : self.calls) {
            if (!is_var(c->args[d], var)) return false;
        }
    }
    return true;
}

// Whether `f` only reads an input buffer at its own indices, directly or through such Funcs (the
// Func an ImageParam becomes when used as one, `name_im`, and the one a boundary condition wraps
// around that): Halide inlines it into a plain load, which it is left as; as a region the model
// would price inlining it like a computed value.
bool input_wrapper(const Function &f, const std::map<std::string, Function> &env) {
    if (f.has_update_definition() || f.outputs() != 1) return false;
    const auto *load = f.definition().values()[0].as<Call>();
    if (!load || load->args.size() != f.args().size()) return false;
    for (size_t a = 0; a < load->args.size(); ++a) {
        if (!is_var(load->args[a], f.args()[a])) return false;
    }
    if (load->call_type == Call::Image) return true;
    auto callee = env.find(load->name);
    return load->call_type == Call::Halide && callee != env.end() && input_wrapper(callee->second, env);
}

// The reduction domain an update walks (the RDom its Exprs name).
class FindDomain : public Halide::Internal::IRGraphVisitor {
public:
    Halide::Internal::ReductionDomain domain;

protected:
    using IRGraphVisitor::visit;
    void visit(const Halide::Internal::Variable *op) override {
        if (op->reduction_domain.defined()) domain = op->reduction_domain;
    }
};

// How one Func's definitions read another: how many calls, whether every call is at the
// reader's own indices (a pointwise read), and whether each of the callee's points is read at most
// once per reader point: at the reader's own indices followed by constants that differ between
// calls (the bilateral grid's output reading interpolated(x, y, 0) and interpolated(x, y, 1)).
struct Reads {
    int calls = 0;
    bool pointwise = true;
    bool each_point_once = true;
    std::set<std::vector<int64_t>> constant_tails;
};

// For each Func of `env`, the Funcs that read it (itself excluded) and how.
using Readers = std::map<std::string, std::map<std::string, Reads>>;

Readers readers_of(const std::map<std::string, Function> &env) {
    class Calls : public Halide::Internal::IRVisitor {
    public:
        explicit Calls(const Function &reader) : args_(reader.args()), name_(reader.name()) {}
        std::map<std::string, Reads> by_callee;

    protected:
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->call_type == Call::Halide && op->name != name_) {
                Reads &reads = by_callee[op->name];
                ++reads.calls;
                bool own_indices = op->args.size() >= args_.size();
                for (size_t a = 0; own_indices && a < args_.size(); ++a) own_indices = is_var(op->args[a], args_[a]);
                std::vector<int64_t> tail;
                for (size_t a = args_.size(); own_indices && a < op->args.size(); ++a) {
                    std::optional<int64_t> k = Halide::Internal::as_const_int(op->args[a]);
                    if (k) tail.push_back(*k);
                    own_indices = k.has_value();
                }
                reads.pointwise = reads.pointwise && own_indices && tail.empty();
                reads.each_point_once = reads.each_point_once && own_indices && reads.constant_tails.insert(tail).second;
            }
            IRVisitor::visit(op);
        }

    private:
        std::vector<std::string> args_;
        std::string name_;
    };
    Readers readers;
    for (const auto &[name, f] : env) {
        Calls calls(f);
        for (const Definition *d : definitions_of(f)) {
            for (const Expr &e : exprs_of(*d)) e.accept(&calls);
        }
        for (const auto &[callee, reads] : calls.by_callee) readers[callee][name] = reads;
    }
    return readers;
}

// The one Func that reads `f` and reads it only at its own point, or null.
const std::string *sole_pointwise_reader(const Readers &readers, const std::string &f) {
    auto it = readers.find(f);
    if (it == readers.end() || it->second.size() != 1 || !it->second.begin()->second.pointwise) return nullptr;
    return &it->second.begin()->first;
}

// A contraction is the shape of a matrix product (Halide's matmul and conv_layer apps): one
// update that adds to every output point at its own indices over a long domain, read at those
// same indices by one pure consumer. The pair becomes one Matmul region, the consumer holding
// the accumulator, so that the accumulator is computed per register tile of the consumer
// (schedule_matmul) rather than stored whole and streamed through once per reduced point.
constexpr int64_t kMinContraction = 16;

bool accumulates_in_place(const Function &f) {
    if (f.updates().size() != 1) return false;
    const Definition &u = f.update(0);
    for (size_t a = 0; a < f.args().size(); ++a) {
        if (!is_var(u.args()[a], f.args()[a])) return false;
    }
    return true;
}

// A pure non-output Func read by exactly one Func, each of its points at most once (a link of a
// pointwise chain: unsharp's sharpen and ratio, a wrapper around a sum(); the bilateral grid's
// interpolated, read at two constant channels): inlining it recomputes nothing, so it is left
// inlined and the analysis reads through it (LoweredPipeline::see_through).
bool pointwise_link(const Function &f, const Readers &readers, const std::map<std::string, Function> &env,
                    const std::set<std::string> &outputs) {
    if (f.has_update_definition() || f.has_extern_definition() || outputs.count(f.name()) || f.outputs() != 1) return false;
    auto it = readers.find(f.name());
    if (it == readers.end() || it->second.size() != 1 || !it->second.begin()->second.each_point_once) return false;
    return !env.at(it->second.begin()->first).has_update_definition();
}

void merge_contractions(LoweredPipeline &lowered, const Readers &readers, const std::set<std::string> &outputs) {
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &acc = lowered.regions[i];
        int64_t reduced = 1;
        for (int64_t e : acc.rextents) reduced *= e;
        if (acc.op_class != OpClass::Reduction || acc.serial_update_axes != 0 || acc.vars.size() < 2 ||
            reduced < kMinContraction || outputs.count(acc.func.name()) || !accumulates_in_place(acc.func.function())) {
            continue;
        }
        const std::string *reader = sole_pointwise_reader(readers, acc.func.name());
        auto consumer = !reader ? lowered.regions.end()
                                : std::find_if(lowered.regions.begin(), lowered.regions.end(),
                                               [&](const RegionFunc &r) { return r.func.name() == *reader; });
        if (consumer == lowered.regions.end()) continue;
        RegionFunc &c = *consumer;
        if (c.func.function().has_update_definition() || c.extents != acc.extents) continue;
        FindDomain find;
        for (const Expr &e : exprs_of(acc.func.function().update(0))) e.accept(&find);
        if (!find.domain.defined()) continue;
        c.op_class = OpClass::Matmul;
        c.accumulator = acc.func;
        c.rdom = Halide::RDom(find.domain);
        c.product_rdoms = {c.rdom};
        c.rextents = acc.rextents;
        c.optional = false;
        lowered.regions.erase(lowered.regions.begin() + static_cast<std::ptrdiff_t>(i));
        --i;
    }
}

// Whether any stage of `f` has loop directives (its placement is replaced either way).
bool scheduled(const Function &f) {
    for (const Definition *d : definitions_of(f)) {
        if (d->schedule().touched()) return true;
    }
    return false;
}

// The region of each Func its consumers require, from the outputs' estimates inwards.
std::map<std::string, Box> required_regions(const std::vector<Function> &outputs, const std::vector<std::string> &order,
                                            const std::map<std::string, Function> &env) {
    std::map<std::string, Box> boxes;
    for (const Function &out : outputs) {
        const auto &estimates = out.schedule().estimates();
        Box box;
        for (const std::string &arg : out.args()) {
            auto e = std::find_if(estimates.begin(), estimates.end(), [&](const auto &b) { return b.var == arg; });
            if (e == estimates.end()) refuse("output " + out.name() + " has no estimate for " + arg + " (Func::set_estimates)");
            auto min = constant(e->min), extent = constant(e->extent);
            if (!min || !extent) refuse("output " + out.name() + "'s estimate for " + arg + " is not a constant");
            box.push_back(Interval(Expr(static_cast<int>(*min)), Expr(static_cast<int>(*min + *extent - 1))));
        }
        boxes[out.name()] = box;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Function &f = env.at(*it);
        auto own = boxes.find(f.name());
        if (own == boxes.end()) continue;   // called by nothing that is computed
        for (const Definition *d : definitions_of(f)) {
            Halide::Internal::Scope<Interval> scope;
            for (size_t a = 0; a < f.args().size(); ++a) scope.push(f.args()[a], own->second[a]);
            for (const auto &rv : d->schedule().rvars()) {
                Expr min = with_estimates(rv.min), extent = with_estimates(rv.extent);
                scope.push(rv.var, Interval(min, Halide::Internal::simplify(min + extent - 1)));
            }
            for (const Expr &e : exprs_of(*d)) {
                for (const auto &[callee, box] : Halide::Internal::boxes_required(e, scope)) {
                    if (callee == f.name() || !env.count(callee)) continue;
                    auto at = boxes.find(callee);
                    if (at == boxes.end()) {
                        boxes[callee] = box;
                    } else {
                        Halide::Internal::merge_boxes(at->second, box);
                    }
                }
            }
        }
    }
    return boxes;
}

}  // namespace

LoweredPipeline adapt_halide_pipeline(const Halide::Pipeline &pipeline) {
    LoweredPipeline lowered;
    lowered.pipeline = pipeline;
    std::vector<Function> outputs;
    std::map<std::string, Function> env;
    for (const Halide::Func &out : pipeline.outputs()) {
        outputs.push_back(out.function());
        lowered.outputs.push_back(out);
        env[out.name()] = out.function();
        for (const auto &[name, f] : Halide::Internal::find_transitive_calls(out.function())) env[name] = f;
    }
    const std::vector<std::string> order = Halide::Internal::topological_order(outputs, env);
    const std::map<std::string, Box> boxes = required_regions(outputs, order, env);
    const Readers readers = readers_of(env);
    std::set<std::string> output_names;
    for (const Function &f : outputs) output_names.insert(f.name());
    for (const std::string &name : order) {
        const Function &f = env.at(name);
        if (f.has_extern_definition()) refuse("the extern stage " + name + " cannot be scheduled by it");
        if (scheduled(f)) refuse("Func " + name + " is already scheduled; autoschedulers start from an unscheduled pipeline");
        auto box = boxes.find(name);
        if (box == boxes.end()) continue;
        if ((input_wrapper(f, env) && !output_names.count(name)) || pointwise_link(f, readers, env, output_names)) {
            lowered.see_through.push_back(f);
            continue;
        }
        RegionFunc r;
        r.node = static_cast<NodeId>(&name - order.data());   // Pipeline::get_func's index
        r.func = Halide::Func(f);
        for (size_t a = 0; a < f.args().size(); ++a) {
            const Interval &span = box->second[a];
            auto extent = span.is_bounded() ? constant(span.max - span.min + 1) : std::nullopt;
            if (!extent) {
                refuse("the region of " + name + " its consumers read along " + f.args()[a] +
                       " is not bounded by a constant (clamp the index, or set estimates on the inputs and parameters)");
            }
            r.vars.emplace_back(f.args()[a]);
            r.extents.push_back(std::max<int64_t>(*extent, 1));
            // An output's extents at run time are its buffer's: the schedule may specialize on them.
            r.extent_exprs.push_back(output_names.count(name)
                                         ? r.func.output_buffers()[0].dim(static_cast<int>(a)).extent()
                                         : Expr(static_cast<int>(r.extents.back())));
        }
        if (f.has_update_definition()) {
            r.op_class = OpClass::Reduction;
            r.accumulator = r.func;   // the Func holds its own update
            for (const auto &rv : f.update(0).schedule().rvars()) {
                auto extent = constant(rv.extent);
                r.rextents.push_back(extent ? std::max<int64_t>(*extent, 1) : 1);
            }
            for (size_t a = 0; a < r.vars.size() && a < 64; ++a) {
                if (!update_axis_free(f, static_cast<int>(a))) r.serial_update_axes |= uint64_t{1} << a;
            }
            // Its update runs along axis 0 unless that axis is free, as a sum over rows is.
            r.reduces_innermost = r.vars.empty() || (r.serial_update_axes & 1);
        } else {
            r.optional = !output_names.count(name);   // Halide inlines it unless scheduled
        }
        r.estimated = true;
        lowered.regions.push_back(std::move(r));
    }
    merge_contractions(lowered, readers, output_names);
    return lowered;
}

std::string halide_schedule_prelude(const LoweredPipeline &lowered) {
    std::string out;
    std::set<std::string> vars;
    for (const RegionFunc &r : lowered.regions) {
        out += "Func " + ScheduleWriter::cpp_name(r.func.name()) + " = pipeline.get_func(" + std::to_string(r.node) + ");\n";
        for (const Halide::Var &v : r.vars) vars.insert(v.name());
    }
    for (const std::string &v : vars) out += "Var " + ScheduleWriter::cpp_name(v) + "(\"" + v + "\");\n";
    return out;
}

}  // namespace hc
