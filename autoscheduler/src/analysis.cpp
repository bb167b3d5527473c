#include "hcompile/analysis.h"

#include "region_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace hc {

namespace {

// Weights of ops in units of one vector add: a division and a math library call take many.
constexpr double kDivideWeight = 8, kCallWeight = 12;

// Counts the arithmetic of an expression DAG, each shared node once (the lowering builds
// fused values as shared subexpressions), and the arrays it reads.
class WorkCounter : public Halide::Internal::IRGraphVisitor {
public:
    double ops = 0;
    std::map<std::string, int> array_bytes;  // array read -> bytes of one element
    std::map<std::string, int> call_sites;   // array read -> distinct places it is read at

    void count(const Halide::Expr &e) { e.accept(this); }

protected:
    using IRGraphVisitor::visit;
    template <typename Node>
    void arithmetic(const Node *op, double weight) {
        ops += weight;
        IRGraphVisitor::visit(op);
    }
    void visit(const Halide::Internal::Add *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Sub *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Mul *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Div *op) override { arithmetic(op, kDivideWeight); }
    void visit(const Halide::Internal::Mod *op) override { arithmetic(op, kDivideWeight); }
    void visit(const Halide::Internal::Min *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Max *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::EQ *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::NE *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::LT *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::LE *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::GT *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::GE *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::And *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Or *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Not *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Select *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Cast *op) override { arithmetic(op, 1); }
    void visit(const Halide::Internal::Call *op) override {
        if (op->call_type == Halide::Internal::Call::Halide || op->call_type == Halide::Internal::Call::Image) {
            array_bytes[op->name] = op->type.bytes();
            ++call_sites[op->name];
        } else if (op->call_type == Halide::Internal::Call::PureExtern || op->call_type == Halide::Internal::Call::Extern) {
            ops += kCallWeight;
        } else {
            ops += 1;   // bit operations, fused multiply-adds, shifts, ...
        }
        IRGraphVisitor::visit(op);
    }
};

// The widest type among the values of an expression DAG (booleans aside: they are masks).
class WidestType : public Halide::Internal::IRGraphVisitor {
public:
    int bits = 8;

protected:
    using IRGraphVisitor::visit;
    void include(const Halide::Expr &e) {
        if (!e.type().is_bool()) bits = std::max(bits, e.type().bits());
    }
    void visit(const Halide::Internal::Add *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Sub *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Mul *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Div *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Mod *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Min *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Max *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Select *op) override { include(op); IRGraphVisitor::visit(op); }
    void visit(const Halide::Internal::Cast *op) override {
        include(op);
        include(op->value);
        IRGraphVisitor::visit(op);
    }
    void visit(const Halide::Internal::Call *op) override { include(op); IRGraphVisitor::visit(op); }
};

// Bytes per point read from `arrays` (those not in `skip`) over `points` points: an element
// per point, but no array more than once in all (a broadcast row is read from cache).
double bytes_of(const std::map<std::string, int> &arrays, const std::set<std::string> &skip,
                const std::map<std::string, double> &array_sizes, double points) {
    double bytes = 0;
    for (const auto &[name, size] : arrays) {
        if (skip.count(name)) continue;
        auto it = array_sizes.find(name);
        bytes += it == array_sizes.end() ? size : std::min<double>(size, it->second / std::max(points, 1.0));
    }
    return bytes;
}

// Calls of a pure Func replaced by its value at the call's indices (Halide's inline_function
// asks for a locked schedule, which a pipeline being scheduled does not have yet).
class InlineCalls : public Halide::Internal::IRGraphMutator {
public:
    explicit InlineCalls(const Halide::Internal::Function &f) : f_(f) {}

protected:
    using IRGraphMutator::visit;
    Halide::Expr visit(const Halide::Internal::Call *op) override {
        if (op->call_type != Halide::Internal::Call::Halide || op->name != f_.name()) return IRGraphMutator::visit(op);
        std::map<std::string, Halide::Expr> at;
        for (size_t a = 0; a < op->args.size() && a < f_.args().size(); ++a) at[f_.args()[a]] = mutate(op->args[a]);
        return Halide::Internal::substitute(at, f_.values()[op->value_index]);
    }

private:
    const Halide::Internal::Function &f_;
};

// The values of a Func's definition (pure, or update `u`), with the args of an update (its
// self-reference is the accumulator, not a load), and the calls of `see_through` Funcs inlined.
std::vector<Halide::Expr> definition_values(const Halide::Func &f, int update,
                                           const std::vector<Halide::Internal::Function> *see_through = nullptr) {
    const Halide::Internal::Definition &d = update < 0 ? f.function().definition() : f.function().update(update);
    std::vector<Halide::Expr> values = d.values();
    for (const Halide::Expr &a : d.args()) values.push_back(a);
    if (see_through) {
        // Consumers first, so that a see-through Func's own calls of another are inlined next.
        for (auto it = see_through->rbegin(); it != see_through->rend(); ++it) {
            InlineCalls inline_calls(*it);
            for (Halide::Expr &v : values) v = inline_calls.mutate(v);
        }
    }
    return values;
}

// The bits of a Func's widest value.
int point_bits(const Halide::Func &f) {
    int bits = 0;
    for (const Halide::Type &t : f.types()) bits = std::max(bits, t.bits());
    return bits;
}

// The input buffers a pipeline built outside hcompile reads (halide_pipeline.h; its pass-through
// Funcs inlined, LoweredPipeline::see_through): their sizes from the estimates on their dimensions.
class InputBuffers : public Halide::Internal::IRGraphVisitor {
public:
    std::map<std::string, double> sizes;

protected:
    using IRGraphVisitor::visit;
    void visit(const Halide::Internal::Call *op) override {
        if (op->call_type == Halide::Internal::Call::Image && op->param.defined() && !sizes.count(op->name)) {
            double bytes = op->param.type().bytes();
            for (int d = 0; d < op->param.dimensions(); ++d) {
                const Halide::Expr e = op->param.extent_constraint_estimate(d);
                auto extent = e.defined() ? Halide::Internal::as_const_int(e) : std::nullopt;
                bytes *= extent ? double(*extent) : double(kScheduledSymbolicExtent);
            }
            sizes[op->name] = bytes;
        }
        IRGraphVisitor::visit(op);
    }
};

// Bytes of each stored array the regions read: the inputs and the regions themselves.
std::map<std::string, double> array_sizes(const LoweredPipeline &lowered) {
    std::map<std::string, double> sizes;
    for (const LoweredInput &in : lowered.inputs) {
        double bytes = in.param.type().bytes();
        for (int d = 0; d < in.param.dimensions(); ++d) {
            const Halide::Expr bound = in.param.parameter().extent_constraint(d);   // set by the lowering
            auto extent = bound.defined() ? Halide::Internal::as_const_int(bound) : std::nullopt;
            bytes *= extent ? double(*extent) : double(kScheduledSymbolicExtent);
        }
        sizes[Halide::Func(in.param).name()] = bytes;   // the name its loads call
    }
    InputBuffers others;
    for (const RegionFunc &r : lowered.regions) {
        double bytes = point_bytes(r.func);
        for (int64_t e : r.extents) bytes *= double(std::max<int64_t>(e, 1));
        sizes[r.func.name()] = bytes;
        for (const Halide::Func &f : {r.func, r.accumulator}) {
            if (!lowered.inputs.empty() || !f.defined()) continue;
            for (const Halide::Expr &v : definition_values(f, -1, &lowered.see_through)) v.accept(&others);
            for (int u = 0; u < f.num_update_definitions(); ++u) {
                for (const Halide::Expr &v : definition_values(f, u, &lowered.see_through)) v.accept(&others);
            }
        }
    }
    sizes.insert(others.sizes.begin(), others.sizes.end());
    return sizes;
}

// Stencil windows of a tile member's definitions (StageAnalysis::reaches).
std::vector<StageAnalysis::Reach> stencil_reaches(const RegionFunc &r, const std::map<std::string, int> &region_of_func,
                                                  int self, const std::vector<Halide::Internal::Function> &see_through) {
    using namespace Halide::Internal;
    std::map<std::pair<int, int>, StageAnalysis::Reach> found;  // (producer, axis) -> reach
    auto add = [&](const std::map<std::string, Box> &boxes) {
        for (const auto &[name, box] : boxes) {
            auto it = region_of_func.find(name);
            if (it == region_of_func.end() || it->second == self) continue;
            for (size_t a = 0; a < r.vars.size(); ++a) {
                const Halide::Expr y = r.vars[a];
                for (size_t d = 0; d < box.size(); ++d) {
                    if (!box[d].is_bounded()) continue;
                    auto lo = as_const_int(simplify(box[d].min - y)), hi = as_const_int(simplify(box[d].max - y));
                    if (!lo || !hi) continue;
                    auto key = std::make_pair(it->second, static_cast<int>(a));
                    auto old = found.find(key);
                    if (old == found.end()) {
                        found[key] = {it->second, static_cast<int>(a), static_cast<int>(d), *lo, *hi};
                    } else if (old->second.producer_axis == static_cast<int>(d)) {
                        old->second.lo = std::min(old->second.lo, *lo);
                        old->second.hi = std::max(old->second.hi, *hi);
                    }
                    break;
                }
            }
        }
    };
    // The pure definition's reads, then each update's (a window reduction's) over its domain.
    for (int u = -1; u < r.func.num_update_definitions(); ++u) {
        Scope<Interval> domain;
        if (u >= 0) {
            for (const ReductionVariable &rv : r.func.function().update(u).schedule().rvars()) {
                domain.push(rv.var, Interval(rv.min, simplify(rv.min + rv.extent - 1)));
            }
        }
        for (const Halide::Expr &v : definition_values(r.func, u, &see_through)) add(boxes_required(v, domain));
    }
    std::vector<StageAnalysis::Reach> out;
    for (const auto &[key, reach] : found) out.push_back(reach);
    return out;
}

// Every call of a plain elementwise region's definition, by callee name: its arguments.
class CallArguments : public Halide::Internal::IRGraphVisitor {
public:
    std::map<std::string, std::vector<std::vector<Halide::Expr>>> calls;

protected:
    using IRGraphVisitor::visit;
    void visit(const Halide::Internal::Call *op) override {
        if (op->call_type == Halide::Internal::Call::Halide || op->call_type == Halide::Internal::Call::Image) {
            calls[op->name].push_back(op->args);
        }
        IRGraphVisitor::visit(op);
    }
};

// Whether `arg` is `var` plus a constant.
bool walks(const Halide::Expr &arg, const Halide::Var &var) {
    return Halide::Internal::as_const_int(Halide::Internal::simplify(arg - var)).has_value();
}

// The regions a library call reads (its extern stage's arguments: none through its Func's
// definition): those it passes as they are, and those its stored operand copies read. A region
// an extern stage reads must be stored whole before the call; placed in another region's tiles,
// Halide refused the pipeline (a transformer layer's first layer norm, read by the next product
// and by the residual add, on the CPU).
std::set<int> library_call_producers(const LoweredPipeline &lowered, const RegionFunc &r,
                                     const std::map<std::string, int> &region_of_func) {
    std::set<int> out;
    std::map<std::string, Halide::Func> copies;
    for (const Halide::Func &copy : r.library_operands) copies[copy.name()] = copy;
    for (const Halide::ExternFuncArgument &arg : r.accumulator.function().extern_arguments()) {
        if (!arg.is_func()) continue;
        const std::string name = Halide::Internal::Function(arg.func).name();
        if (auto region = region_of_func.find(name); region != region_of_func.end()) {
            out.insert(region->second);
        } else if (auto copy = copies.find(name); copy != copies.end()) {
            CallArguments calls;
            for (const Halide::Expr &v : definition_values(copy->second, -1, &lowered.see_through)) v.accept(&calls);
            for (const auto &[callee, args] : calls.calls) {
                if (auto read = region_of_func.find(callee); read != region_of_func.end()) out.insert(read->second);
            }
        }
    }
    return out;
}

}  // namespace

std::pair<int, int> transposed_axes(const std::vector<Halide::Expr> &args, const RegionFunc &r) {
    if (args.size() < 2) return {-1, -1};
    int region_axis = -1, array_axis = -1;
    for (size_t a = 1; a < r.vars.size() && region_axis < 0; ++a) {
        if (walks(args[0], r.vars[a])) region_axis = static_cast<int>(a);
    }
    for (size_t i = 0; i < args.size() && array_axis < 0; ++i) {
        if (walks(args[i], r.vars[0])) array_axis = static_cast<int>(i);
    }
    return {region_axis, array_axis};
}

std::vector<TransposedRead> transposed_read_arrays(const LoweredPipeline &lowered, const RegionFunc &r) {
    std::vector<TransposedRead> out;
    if (!plain_elementwise(r) || r.vars.size() < 2) return out;
    std::map<std::string, Halide::Func> stored;   // by the name their loads call
    for (const LoweredInput &in : lowered.inputs) stored[Halide::Func(in.param).name()] = Halide::Func(in.param);
    for (const RegionFunc &p : lowered.regions) {
        if (p.func.name() != r.func.name()) stored[p.func.name()] = p.func;
    }
    CallArguments found;
    for (const Halide::Expr &v : definition_values(r.func, -1, &lowered.see_through)) v.accept(&found);
    // The region's own calls (no pass-through Func inlined): an array read both ways has only
    // these of its transposed reads rerouted to its copy (gpu_directives.cpp).
    std::optional<CallArguments> own;
    for (const auto &[name, calls] : found.calls) {
        auto array = stored.find(name);
        if (array == stored.end()) continue;
        // Its reads across its rows, all the same way (the region axis that walks the array's
        // axis 0, the array's axis that region axis 0 walks); its other reads, none across.
        std::optional<std::pair<int, int>> across;
        int across_calls = 0, other_calls = 0;
        bool one_way = true;
        for (const std::vector<Halide::Expr> &args : calls) {
            const std::pair<int, int> axes = transposed_axes(args, r);
            if (axes.first > 0 && axes.second > 0) {
                one_way = one_way && (!across || *across == axes);
                across = axes;
                ++across_calls;
            } else {
                ++other_calls;
            }
        }
        if (!across || !one_way || (!out.empty() && out[0].region_axis != across->first)) continue;
        if (other_calls > 0) {
            // Read both ways (a + a.T): only where every read across is the region's own.
            if (!own) {
                own.emplace();
                for (const Halide::Expr &v : definition_values(r.func, -1)) v.accept(&*own);
            }
            int own_across = 0;
            if (auto o = own->calls.find(name); o != own->calls.end()) {
                for (const std::vector<Halide::Expr> &args : o->second) own_across += transposed_axes(args, r) == *across;
            }
            if (own_across != across_calls) continue;
        }
        out.push_back({array->second, across_calls, across->first, across->second, other_calls > 0});
    }
    return out;
}

std::vector<Halide::Func> inputs_read_along_rows(const LoweredPipeline &lowered, const RegionFunc &r) {
    std::vector<Halide::Func> out;
    if (r.vars.empty()) return out;
    CallArguments own;
    for (const Halide::Expr &v : definition_values(r.func, -1)) v.accept(&own);
    for (const LoweredInput &in : lowered.inputs) {
        auto calls = own.calls.find(Halide::Func(in.param).name());
        if (calls == own.calls.end()) continue;
        const std::vector<Halide::Expr> &first = calls->second.front();
        const bool along_row = !first.empty() && Halide::Internal::equal(first[0], r.vars[0]) &&
                               std::none_of(first.begin() + 1, first.end(), [&](const Halide::Expr &a) {
                                   return Halide::Internal::expr_uses_var(a, r.vars[0].name());
                               }) &&
                               std::all_of(calls->second.begin(), calls->second.end(), [&](const auto &args) {
                                   return args.size() == first.size() &&
                                          std::equal(args.begin(), args.end(), first.begin(), [](const auto &a, const auto &b) {
                                              return Halide::Internal::equal(a, b);
                                          });
                               });
        if (along_row) out.push_back(Halide::Func(in.param));
    }
    return out;
}

std::set<std::string> arrays_read(const LoweredPipeline &lowered, const RegionFunc &r) {
    std::set<std::string> regions, inputs;
    for (const RegionFunc &other : lowered.regions) regions.insert(other.func.name());
    for (const LoweredInput &in : lowered.inputs) inputs.insert(Halide::Func(in.param).name());
    std::set<std::string> out, seen{r.func.name()};
    std::vector<Halide::Internal::Function> pending{r.func.function()};
    while (!pending.empty()) {
        const Halide::Internal::Function f = pending.back();
        pending.pop_back();
        CallArguments calls;
        for (int u = -1; u < static_cast<int>(f.updates().size()); ++u) {
            const Halide::Internal::Definition &d = u < 0 ? f.definition() : f.update(u);
            for (const Halide::Expr &v : d.values()) v.accept(&calls);
            for (const Halide::Expr &a : d.args()) a.accept(&calls);
        }
        const std::map<std::string, Halide::Internal::Function> direct = Halide::Internal::find_direct_calls(f);
        for (const auto &[name, args] : calls.calls) {
            if ((regions.count(name) && name != r.func.name()) || inputs.count(name)) {
                out.insert(name);
            } else if (seen.insert(name).second) {
                if (auto g = direct.find(name); g != direct.end()) pending.push_back(g->second);
            }
        }
    }
    return out;
}

int point_bytes(const Halide::Func &f) {
    int bytes = 0;
    for (const Halide::Type &t : f.types()) bytes += t.bytes();
    return bytes;
}

std::optional<std::map<int, TileSpan>> tile_spans(const PipelineAnalysis &analysis, int root, int axis,
                                                 const std::vector<int> &members) {
    std::map<int, TileSpan> spans{{root, TileSpan{axis, 0, 0}}};
    std::vector<int> order = members;
    std::sort(order.rbegin(), order.rend());  // consumers (later regions) first
    for (int m : order) {
        TileSpan span;
        for (int c : analysis.stages[m].consumers) {
            auto at = spans.find(c);
            if (at == spans.end()) return std::nullopt;  // read outside the group
            const auto &reaches = analysis.stages[c].reaches;
            auto reach = std::find_if(reaches.begin(), reaches.end(), [&](const StageAnalysis::Reach &e) {
                return e.producer == m && e.axis == at->second.axis;
            });
            if (reach == reaches.end()) return std::nullopt;
            if (span.axis >= 0 && span.axis != reach->producer_axis) return std::nullopt;
            const int64_t lo = at->second.lo + reach->lo, hi = at->second.hi + reach->hi;
            span.lo = span.axis < 0 ? lo : std::min(span.lo, lo);
            span.hi = span.axis < 0 ? hi : std::max(span.hi, hi);
            span.axis = reach->producer_axis;
        }
        if (span.axis < 0) return std::nullopt;
        spans[m] = span;
    }
    return spans;
}

int widest_value_bits(const RegionFunc &r) {
    WidestType widest;
    widest.bits = std::max(8, point_bits(r.func));
    for (const Halide::Func &f : {r.func, r.accumulator, r.staged_operand}) {
        if (!f.defined() || !f.function().has_pure_definition()) continue;
        for (const Halide::Expr &v : definition_values(f, -1)) v.accept(&widest);
        for (int u = 0; u < f.num_update_definitions(); ++u) {
            for (const Halide::Expr &v : definition_values(f, u)) v.accept(&widest);
        }
    }
    return widest.bits;
}

int natural_lanes(const RegionFunc &r, const Halide::Target &target) {
    return std::max(1, target.natural_vector_size(Halide::UInt(widest_value_bits(r))));
}

PipelineAnalysis analyze_pipeline(const LoweredPipeline &lowered) {
    PipelineAnalysis a;
    const std::map<std::string, double> sizes = array_sizes(lowered);
    std::map<std::string, int> region_of_func;
    for (size_t i = 0; i < lowered.regions.size(); ++i) region_of_func[lowered.regions[i].func.name()] = static_cast<int>(i);
    // (stencil_reaches' producers: here the inputs' indices, by the names of the Funcs Halide reads them through)
    std::map<std::string, int> input_of_name;
    for (size_t i = 0; i < lowered.inputs.size(); ++i) {
        input_of_name[Halide::Func(lowered.inputs[i].param).name()] = static_cast<int>(i);
    }
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        StageAnalysis s;
        s.region = static_cast<int>(i);
        s.name = r.func.name();
        s.op_class = r.op_class;
        s.extents = r.extents;
        s.symbolic = r.symbolic;
        s.type_bits = point_bits(r.func);
        s.widest_bits = widest_value_bits(r);
        s.library_call = r.library_call;
        for (int64_t e : r.extents) s.points *= std::max<int64_t>(e, 1);
        for (int64_t e : r.rextents) s.reduction_points *= std::max<int64_t>(e, 1);
        if (r.serial_update_axes && own_accumulator(r)) {
            // A Halide update that writes at computed indices along some axes (a histogram's
            // bins, a scan's rows) does not run its domain once per output point: once per
            // point of the axes it keeps, so per output point its domain over those axes' extent.
            int64_t scattered = 1;
            for (size_t a = 0; a < r.extents.size() && a < 64; ++a) {
                if ((r.serial_update_axes >> a) & 1) scattered *= std::max<int64_t>(r.extents[a], 1);
            }
            s.reduction_points = std::max<int64_t>(1, (s.reduction_points + scattered / 2) / scattered);
        }
        s.store_bytes_per_point = point_bytes(r.func);
        // The region's own Funcs: their calls to each other are not loads from memory.
        std::set<std::string> own{r.func.name()};
        std::vector<Halide::Func> parts;
        if (r.accumulator.defined()) parts.push_back(r.accumulator);
        if (r.blocked_sum) {
            if (r.blocked_sum->blocks.defined()) parts.push_back(r.blocked_sum->blocks);
            if (r.blocked_sum->tail.defined()) parts.push_back(r.blocked_sum->tail);
        }
        if (r.lane_parts) {
            for (const Halide::Func &stage : r.lane_parts->stages()) parts.push_back(stage);
        }
        if (r.staged_operand.defined()) parts.push_back(r.staged_operand);
        for (const Halide::Func &p : parts) own.insert(p.name());
        WorkCounter pure, reduction;
        if (!r.library_call) {
            for (const Halide::Expr &v : definition_values(r.func, -1, &lowered.see_through)) pure.count(v);
            if (r.staged_operand.defined()) {
                for (const Halide::Expr &v : definition_values(r.staged_operand, -1)) pure.count(v);
            }
            for (const Halide::Func &p : parts) {
                if (p.name() == r.staged_operand.name() || !p.function().has_pure_definition()) continue;
                // A blocked sum's accumulator adds one block sum per block: its parts (blocks,
                // tail) hold the work per element.
                if ((r.blocked_sum || r.lane_parts) && p.name() == r.accumulator.name()) continue;
                for (int u = 0; u < p.num_update_definitions(); ++u) {
                    for (const Halide::Expr &v : definition_values(p, u, &lowered.see_through)) reduction.count(v);
                }
            }
        }
        s.ops_per_point = pure.ops;
        s.load_bytes_per_point = bytes_of(pure.array_bytes, own, sizes, double(s.points));
        s.ops_per_reduction_point = reduction.ops;
        s.load_bytes_per_reduction_point =
            bytes_of(reduction.array_bytes, own, sizes, double(s.points) * double(s.reduction_points));
        std::set<int> producers;
        for (const auto *arrays : {&pure.array_bytes, &reduction.array_bytes}) {
            for (const auto &[name, size] : *arrays) {
                auto it = region_of_func.find(name);
                if (it != region_of_func.end() && it->second != s.region) producers.insert(it->second);
            }
        }
        if (r.library_call) {
            for (int p : library_call_producers(lowered, r, region_of_func)) producers.insert(p);
        }
        s.producers.assign(producers.begin(), producers.end());
        for (int p : s.producers) {
            const std::string &name = lowered.regions[p].func.name();
            auto it = pure.array_bytes.find(name);
            s.producer_bytes.push_back(it == pure.array_bytes.end()
                                           ? 0.0
                                           : bytes_of({{name, it->second}}, own, sizes, double(s.points)));
            auto in_reduction = reduction.array_bytes.find(name);
            s.producer_reduction_bytes.push_back(
                in_reduction == reduction.array_bytes.end()
                    ? 0.0
                    : bytes_of({{name, in_reduction->second}}, own, sizes, double(s.points) * double(s.reduction_points)));
            auto calls = pure.call_sites.find(name);
            auto reduction_calls = reduction.call_sites.find(name);
            const bool in_update = reduction_calls != reduction.call_sites.end();
            s.producer_calls.push_back(calls != pure.call_sites.end() ? calls->second : in_update ? 0 : 1);
            s.producer_reduction_calls.push_back(in_update ? reduction_calls->second : 0);
        }
        if (tile_member(r)) s.reaches = stencil_reaches(r, region_of_func, s.region, lowered.see_through);
        if (lowered.for_gpu && plain_elementwise(r)) {
            for (const StageAnalysis::Reach &reach : stencil_reaches(r, input_of_name, -1, lowered.see_through)) {
                if (reach.axis == 1 && reach.hi > reach.lo) s.input_row_window = std::max(s.input_row_window, reach.hi - reach.lo + 1);
            }
        }
        if (lowered.for_gpu) {
            for (const TransposedRead &read : transposed_read_arrays(lowered, r)) {
                s.transposed_reads.push_back(read.array.name());
                s.transposed_bytes_per_point += static_cast<double>(point_bytes(read.array) * read.calls);
                s.transposed_axis = read.region_axis;
            }
        }
        a.stages.push_back(std::move(s));
    }
    for (const StageAnalysis &s : a.stages) {
        for (int p : s.producers) a.stages[p].consumers.push_back(s.region);
    }
    return a;
}

std::string PipelineAnalysis::print() const {
    std::ostringstream os;
    for (const StageAnalysis &s : stages) {
        os << "region " << s.region << " (" << s.name << "): " << s.points << " points";
        if (s.reduction_points > 1) os << " x " << s.reduction_points << " reduced";
        os << (s.symbolic ? " (symbolic extents assumed " + std::to_string(kScheduledSymbolicExtent) + ")" : "");
        if (s.library_call) {
            os << ", a BLAS call";
        } else {
            os << ", " << s.ops_per_point << " ops and " << s.load_bytes_per_point << " bytes read per point";
            if (s.reduction_points > 1) {
                os << ", " << s.ops_per_reduction_point << " ops and " << s.load_bytes_per_reduction_point
                   << " bytes per reduced point";
            }
        }
        if (!s.producers.empty()) {
            os << ", reads region";
            for (int p : s.producers) os << " " << p;
        }
        os << "\n";
    }
    return os.str();
}

}  // namespace hc
