#include "hcompile/fusion.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <numeric>
#include <set>

#include "hcompile/passes.h"
#include "hcompile/printer.h"

namespace hc {

int op_units(const Node &n) {
    switch (n.kind) {
    case OpKind::Exp: case OpKind::Log: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Sin:
    case OpKind::Log2: case OpKind::Log10: case OpKind::Arcsinh: case OpKind::Arccosh: case OpKind::Arctanh:
    case OpKind::Exp2: case OpKind::Cbrt:
    case OpKind::Cos: case OpKind::Tan: case OpKind::Tanh: case OpKind::Sinh: case OpKind::Cosh:
    case OpKind::Arcsin: case OpKind::Arccos: case OpKind::Arctan: case OpKind::Arctan2: case OpKind::Pow:
    case OpKind::Hypot:
        return 10;
    case OpKind::Div: case OpKind::FloorDiv: case OpKind::Mod: case OpKind::Sqrt: case OpKind::Reciprocal:
        return 3;
    default:
        return op_class(n.kind) == OpClass::Layout || op_class(n.kind) == OpClass::Leaf ? 0 : 1;
    }
}

namespace {

// Recomputing an inlined node costs this many op units before we prefer to store it. On CPU a
// pass over memory costs about as much as ~20 cheap vector ops per element.
constexpr int kRecomputeBudget = 24;

// A node the cost rule stores is stored before its layout ops instead when that input has at
// most this fraction of its elements (a broadcast expanding it).
constexpr int64_t kExpansionToStoreBefore = 4;

bool is_layout(OpKind k) {
    return k == OpKind::Broadcast || k == OpKind::Reshape || k == OpKind::Transpose || k == OpKind::Slice;
}

// Inside a row-fused group a stored row stays in cache, so storing beats recomputing sooner:
// any shared transcendental is worth keeping.
constexpr int kRowRecomputeBudget = 8;
// Places are counted exactly up to this many; past it every decision is "store" anyway (a node
// costing at least one unit is stored long before), and the count stops growing, so counting
// stays linear in the graph.
constexpr size_t kMaxCountedPlaces = 64;
// Compile-time bound: Halide substitutes a Func's let-bound (shared) subexpressions one at a
// time, each a walk over the whole definition, so one region costs about the square of its size
// to compile (300 inlined tanh: 40 s). No region inlines more than this many op units; the
// split costs a pass over memory per kMaxRegionUnits units of work, a few percent at most.
constexpr int64_t kMaxRegionUnits = 256;
// Nodes a cone walk visits before calling the cone too large (layout ops cost 0 units).
constexpr int kMaxRegionNodes = 1024;
// A node the cost rule stored is left to the scheduler to inline or store when all its inlined
// copies together cost at most this many op units: a bound on the expression inlining could add
// to its consumers (compile time), not a judgement of speed, which is the cost model's.
constexpr int64_t kMaxInlineChoiceUnits = 64;
// Upper bound kept for a node's per-place work, so the sums cannot overflow.
constexpr int64_t kWorkCap = int64_t{1} << 40;

// The distinct places a node's value is computed at, as hashes of (region root, chain of layout
// ops from the root down to the node). Elementwise ops pass their index through unchanged, so
// reads along elementwise paths share a place (lowering builds the value once there); each layout
// op (slice, transpose, broadcast, reshape) moves the index, so reads through two different
// layout ops are two places, and a chain multiplies them: in a 5-point stencil stage k is read at
// 5 places by stage k+1 and at 25 by stage k+2.
using Places = std::vector<uint64_t>;  // sorted, at most kMaxCountedPlaces

uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

void merge_places(Places &into, const Places &from) {
    Places merged;
    std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
    if (merged.size() > kMaxCountedPlaces) merged.resize(kMaxCountedPlaces);
    into = std::move(merged);
}

// The places at which `user` reads its inputs, given the places `user` itself is computed at.
Places places_read_by(const Node &user, bool user_materialized, const Places &user_places) {
    if (user_materialized) return {mix(0, static_cast<uint64_t>(user.id) + 1)};  // its own root
    if (op_class(user.kind) != OpClass::Layout) return user_places;
    Places moved;
    for (uint64_t h : user_places) moved.push_back(mix(h, static_cast<uint64_t>(user.id) + 1));
    std::sort(moved.begin(), moved.end());
    return moved;
}

// Op units of the region `root` would head if it were stored: itself and every distinct node
// fused into it (each counted once: lowering builds a value once per place, and the places
// rule keeps copies few). Stops early, returning more than `limit`, once past it.
class ConeMeter {
public:
    ConeMeter(const Graph &g, const Partition &p) : g_(g), p_(p), seen_(g.num_nodes(), -1) {}

    int64_t units(NodeId root, int64_t limit) {
        ++epoch_;
        int64_t total = 0;
        int visited = 0;
        std::vector<NodeId> stack{root};
        seen_[root] = epoch_;
        while (!stack.empty()) {
            const Node &x = g_.node(stack.back());
            stack.pop_back();
            total += op_units(x);
            if (total > limit || ++visited > kMaxRegionNodes) return limit + 1;
            for (NodeId in : x.inputs) {
                if (seen_[in] == epoch_ || p_.materialized[in] || op_class(g_.node(in).kind) == OpClass::Leaf) continue;
                seen_[in] = epoch_;
                stack.push_back(in);
            }
        }
        return total;
    }

private:
    const Graph &g_;
    const Partition &p_;
    std::vector<int> seen_;
    int epoch_ = 0;
};

// The size rule, forwards (producers first): where a node's region would pass kMaxRegionUnits,
// its largest fused inputs are stored until it fits. Every node's cone then fits, so the
// region of each root does.
void bound_region_sizes(const Graph &graph, Partition &p) {
    ConeMeter meter(graph, p);
    for (const Node &node : graph.nodes()) {
        if (op_class(node.kind) == OpClass::Leaf) continue;
        int64_t size;
        while ((size = meter.units(node.id, kMaxRegionUnits)) > kMaxRegionUnits) {
            NodeId largest = -1;
            int64_t largest_units = -1;
            for (NodeId in : node.inputs) {
                if (p.materialized[in] || op_class(graph.node(in).kind) == OpClass::Leaf) continue;
                int64_t u = meter.units(in, kMaxRegionUnits);
                if (u > largest_units) largest = in, largest_units = u;
            }
            if (largest < 0) break;  // its own units alone: nothing to split off
            p.materialized[largest] = true;
            p.budget_stores.push_back({largest, BudgetStore::RegionSize, 0, largest_units, kMaxRegionUnits});
        }
    }
}

// The regions of `p`'s materialized nodes, each with the nodes fused into it.
void build_regions(const Graph &graph, Partition &p) {
    p.regions.clear();
    for (const Node &node : graph.nodes()) {
        if (!p.materialized[node.id] || op_class(node.kind) == OpClass::Leaf) continue;
        Region region;
        region.root = node.id;
        std::set<NodeId> fused;
        std::vector<NodeId> stack(node.inputs.begin(), node.inputs.end());
        while (!stack.empty()) {
            NodeId id = stack.back();
            stack.pop_back();
            const Node &x = graph.node(id);
            if (p.materialized[id] || op_class(x.kind) == OpClass::Leaf || !fused.insert(id).second) continue;
            stack.insert(stack.end(), x.inputs.begin(), x.inputs.end());
        }
        region.fused.assign(fused.begin(), fused.end());
        p.regions.push_back(std::move(region));
    }
}

Partition partition_with_budget(const Graph &graph, int budget) {
    const int n = graph.num_nodes();
    Partition p;
    p.materialized.assign(n, false);

    for (NodeId out : graph.outputs()) p.materialized[out] = true;
    for (const Node &node : graph.nodes()) {
        OpClass cls = op_class(node.kind);
        if (cls == OpClass::Reduction || cls == OpClass::Matmul) p.materialized[node.id] = true;
        // An integer power is a chain of up to 64 squarings and products. Inlined into a
        // consumer that reads its operand several times (tanh of it), Halide's bounds
        // inference expanded the chain's symbolic bounds as a tree: `np.tanh(b ** 4095)`
        // compiled for 24 s, `** 65535` for hours. Stored, its consumers see a Func's range.
        if (node.kind == OpKind::Pow && !is_float(node.dtype)) p.materialized[node.id] = true;
        if (cls == OpClass::Matmul) {
            // Each operand element is read once per output row or column; matmul_sum's addend
            // (input 0) once per output element, so it may fuse.
            for (size_t i = node.kind == OpKind::MatmulSum ? 1 : 0; i < node.inputs.size(); ++i) {
                // A widened float16 operand (widen_float16) is stored as float16, half the bytes,
                // and widened as the product reads it; cuBLAS takes the float16 array itself.
                const NodeId half = widened_float16_source(graph, node.inputs[i]);
                const NodeId operand = half >= 0 ? half : node.inputs[i];
                if (op_class(graph.node(operand).kind) == OpClass::Elementwise) p.materialized[operand] = true;
            }
        }
    }

    // Work of one inlined copy of a node: its own units plus its inputs', as a tree, where an input
    // stored already (a reduction, a product, an output: stored above whatever the budget says)
    // is a load and counts nothing: a residual add of a matrix product is two adds, not the
    // attention before the product. An upper bound otherwise (an input may be stored later, or
    // shared along elementwise paths), decided before the inputs are, so that one backward pass
    // settles every node.
    std::vector<int64_t> work(n, 0);
    for (const Node &node : graph.nodes()) {
        if (op_class(node.kind) == OpClass::Leaf) continue;
        int64_t w = op_units(node);
        for (NodeId in : node.inputs) w += p.materialized[in] ? 0 : work[in];
        work[node.id] = std::min(w, kWorkCap);
    }

    // Backwards, consumers before producers: a node's places are known once its users are decided.
    std::vector<Places> places(n);
    p.places.assign(n, 0);
    for (int id = n - 1; id >= 0; --id) {
        const Node &node = graph.node(id);
        if (op_class(node.kind) == OpClass::Leaf) continue;
        int64_t count = static_cast<int64_t>(places[id].size());
        p.places[id] = count;
        // The cost rule: inlining computes the node once per place, storing it once; store when
        // the copies beyond the first would cost more than a pass over memory. This also bounds
        // the size of every inlined expression: no node is copied into more than a few places
        // unless it is nearly free, so copies cannot multiply along a chain.
        if (!p.materialized[id] && count >= 2 && (count - 1) * work[id] > budget) {
            // A broadcast (or a reshape or transpose of one) repeats its input's values: storing
            // the input instead keeps the work and stores a fraction of the bytes (a bilateral
            // grid's slices read one 540k-point grid up-sampled to 35M points: stored after the
            // broadcast, 138 MB went to memory and back). The layout ops stay inlined.
            NodeId source = id;
            while (is_layout(graph.node(source).kind) && graph.node(source).inputs.size() == 1) {
                source = graph.node(source).inputs[0];
            }
            const Node &s = graph.node(source);
            const bool expanded = source != id && op_class(s.kind) != OpClass::Leaf &&
                                  s.size() * kExpansionToStoreBefore <= node.size();
            const NodeId stored = expanded ? source : id;
            p.materialized[stored] = true;
            p.budget_stores.push_back({stored, BudgetStore::Recompute, count, work[id], budget});
        }
        Places read = places_read_by(node, p.materialized[id], places[id]);
        for (NodeId in : node.inputs) merge_places(places[in], read);
    }

    bound_region_sizes(graph, p);

    build_regions(graph, p);
    return p;
}

// The shape whose rows a row group's root computes: its own, or for a reshape root (below) its
// input's.
const Shape &row_shape(const Graph &g, const Node &root) {
    return root.kind == OpKind::Reshape ? g.node(root.inputs[0]).shape : root.shape;
}

// Whether every path from node `from` to another region passes only through nodes (not stored)
// that `passes` accepts, and ends at stored nodes that `may_end` accepts. Each node is visited
// once: a walk of the paths themselves is exponential.
template <typename Passes, typename MayEnd>
bool paths_pass_only(const Graph &g, const Partition &p, const std::vector<std::vector<NodeId>> &users, NodeId from,
                     Passes passes, MayEnd may_end) {
    std::vector<NodeId> stack(users[from].begin(), users[from].end());
    std::vector<bool> seen(g.num_nodes(), false);
    while (!stack.empty()) {
        const Node &u = g.node(stack.back());
        stack.pop_back();
        if (seen[u.id]) continue;
        seen[u.id] = true;
        if (!(p.materialized[u.id] ? may_end(u) : passes(u))) return false;
        if (!p.materialized[u.id]) stack.insert(stack.end(), users[u.id].begin(), users[u.id].end());
    }
    return true;
}

// Whether node `r` (a reduction) keeps axis 0 with the same extent as `root`'s rows (row_shape)
// and every path from it to another region passes only through elementwise ops and same-rank
// broadcasts, ending at `root` or at other reductions; those keep axis 0 aligned with root's
// axis 0.
bool row_aligned(const Graph &g, const Partition &p, const std::vector<std::vector<NodeId>> &users,
                 const Node &r, const Node &root) {
    bool storable = op_class(r.kind) == OpClass::Reduction || op_class(r.kind) == OpClass::Elementwise;
    const Shape &rows = row_shape(g, root);
    if (!storable || r.ndim() != static_cast<int>(rows.size()) || r.shape[0] != rows[0]) return false;
    if (op_class(r.kind) == OpClass::Elementwise) {
        // keeps every axis; only its consumers' paths matter
    } else if (r.kind == OpKind::Argmax || r.kind == OpKind::Argmin) {
        if (r.int_attr("axis") == 0) return false;
    } else {
        for (int64_t a : r.ints_attr("axes")) {
            if (a == 0) return false;
        }
    }
    const auto passes = [&](const Node &u) {
        const bool same_rank_broadcast = u.kind == OpKind::Broadcast && g.node(u.inputs[0]).ndim() == u.ndim();
        return op_class(u.kind) == OpClass::Elementwise || same_rank_broadcast;
    };
    const auto may_end = [&](const Node &u) {
        return u.id == root.id || op_class(u.kind) == OpClass::Reduction || op_class(u.kind) == OpClass::Elementwise;
    };
    return paths_pass_only(g, p, users, r.id, passes, may_end);
}

}  // namespace

namespace {

// The stored nodes `from`'s value reaches first on each path from it (through nodes not stored).
std::vector<NodeId> first_stores_reached(const Graph &g, const Partition &p, const std::vector<std::vector<NodeId>> &users,
                                         NodeId from) {
    std::vector<NodeId> stores;
    paths_pass_only(g, p, users, from, [](const Node &) { return true; }, [&](const Node &s) {
        stores.push_back(s.id);
        return true;
    });
    return stores;
}

// Whether `root`, a region stored whole, can root a row group: elementwise, or (`reshapes`, the
// GPU's) a reshape of an elementwise value that regroups only the axes before the innermost (a
// layer norm's rows of (batch * tokens, width) returned as (batch, tokens, width)): its rows are
// its input's, one to one.
bool row_root_candidate(const Graph &g, const Node &root, bool reshapes) {
    if (root.kind == OpKind::Reshape) {
        const Node &in = g.node(root.inputs[0]);
        // (A 0-d input has no innermost axis: `np.linalg.norm(a, keepdims=True)` reshapes one.)
        if (!reshapes || op_class(in.kind) != OpClass::Elementwise || root.ndim() < 2 || in.ndim() < 1 ||
            root.shape.back() != in.shape.back()) {
            return false;
        }
    } else if (op_class(root.kind) != OpClass::Elementwise) {
        return false;
    }
    const Shape &rows = row_shape(g, root);
    return rows.size() >= 2 && rows[0] >= 2;
}

// A node's points as a point-rows group (Partition::point_rows) sees them: its shape without
// trailing axes of 1 (a reduction's keepdims).
Shape point_shape(const Node &n) {
    Shape s = n.shape;
    while (!s.empty() && s.back() == 1) s.pop_back();
    return s;
}

// Whether `shape` starts with the axes `rows`.
bool starts_with(const Shape &shape, const Shape &rows) {
    return shape.size() >= rows.size() && std::equal(rows.begin(), rows.end(), shape.begin());
}

// Whether reduction `r` reduces its input's innermost axis alone, of more than one point: each of
// its points one row. (Rows of one point are a row group's own rows: a softmax over an axis of 1,
// whose root's points are its rows, keeps its group of rows.)
bool reduces_rows(const Graph &g, const Node &r) {
    if (op_class(r.kind) != OpClass::Reduction) return false;
    const Node &in = g.node(r.inputs[0]);
    const int innermost = in.ndim() - 1;
    if (innermost < 1 || in.shape.back() <= 1) return false;
    if (r.kind == OpKind::Argmax || r.kind == OpKind::Argmin) return r.int_attr("axis") == innermost;
    const std::vector<int64_t> &axes = r.ints_attr("axes");
    return axes.size() == 1 && axes[0] == innermost;
}

// Whether `root` (a region stored whole, the GPU's) can root a point-rows group: elementwise, or a
// reduction of rows, with two points or more.
bool point_root_candidate(const Graph &g, const Node &root) {
    const Shape rows = point_shape(root);
    const bool kind = op_class(root.kind) == OpClass::Elementwise || reduces_rows(g, root);
    return kind && !rows.empty() && std::accumulate(rows.begin(), rows.end(), int64_t{1}, std::multiplies<>()) >= 2;
}

// Whether reduction `r` can be a member of `root`'s point-rows group: it reduces rows into points
// of root's (point_shape), and every path from it to another region passes only through nodes
// whose leading axes are those points (elementwise ops, broadcasts of the same rank, reshapes
// keeping them: a row-major reshape that keeps the leading axes keeps each point's index), ending
// at `root` or other reductions.
bool point_aligned(const Graph &g, const Partition &p, const std::vector<std::vector<NodeId>> &users, const Node &r,
                   const Node &root) {
    const Shape rows = point_shape(root);
    if (!reduces_rows(g, r) || point_shape(r) != rows) return false;
    const auto passes = [&](const Node &u) {
        const bool kind = op_class(u.kind) == OpClass::Elementwise || u.kind == OpKind::Reshape ||
                          (u.kind == OpKind::Broadcast && g.node(u.inputs[0]).ndim() == u.ndim());
        return kind && starts_with(u.shape, rows);
    };
    const auto may_end = [&](const Node &u) { return u.id == root.id || op_class(u.kind) == OpClass::Reduction; };
    return paths_pass_only(g, p, users, r.id, passes, may_end);
}

// Drops the members whose value reaches a store outside the group (`root` and the members),
// until none does: a member is computed per row inside the root's loop, where no region outside
// it can read it (a matrix product computed once, before the rows, that reads a member). A
// member whose value reaches no store at all is dropped too. Returns whether any member is left.
bool close_group(const Graph &g, const Partition &p, const std::vector<std::vector<NodeId>> &users, NodeId root,
                 std::vector<bool> &member) {
    for (bool changed = true; changed;) {
        changed = false;
        for (const Region &region : p.regions) {
            if (!member[region.root]) continue;
            const std::vector<NodeId> stores = first_stores_reached(g, p, users, region.root);
            const bool inside = !stores.empty() && std::all_of(stores.begin(), stores.end(), [&](NodeId s) {
                return s == root || member[s];
            });
            if (!inside) {
                member[region.root] = false;
                changed = true;
            }
        }
    }
    return std::any_of(member.begin(), member.end(), [](bool m) { return m; });
}

void add_row_group(Partition &p, NodeId root, const std::vector<bool> &member, bool point_rows) {
    for (size_t id = 0; id < member.size(); ++id) {
        if (member[id]) p.row_root_of[id] = root;
    }
    p.point_rows[root] = point_rows;
}

}  // namespace

void find_row_fusion(const Graph &graph, Partition &partition, bool producers_outside) {
    partition.row_root_of.assign(graph.num_nodes(), -1);
    partition.point_rows.assign(graph.num_nodes(), false);
    std::vector<std::vector<NodeId>> users(graph.num_nodes());
    for (const Node &n : graph.nodes()) {
        for (NodeId in : n.inputs) users[in].push_back(n.id);
    }
    if (!producers_outside) {
        // One group, rooted at the single output, every other region in it.
        if (graph.outputs().size() != 1) return;
        const Node &root = graph.node(graph.outputs()[0]);
        if (!row_root_candidate(graph, root, false)) return;
        std::vector<bool> member(graph.num_nodes(), false);
        for (const Region &region : partition.regions) {
            if (region.root == root.id) continue;
            if (!row_aligned(graph, partition, users, graph.node(region.root), root)) return;
            member[region.root] = true;
        }
        if (close_group(graph, partition, users, root.id, member)) add_row_group(partition, root.id, member, false);
        return;
    }
    // Groups rooted at regions stored whole, the latest first: each takes the row-aligned regions
    // before it (no output: an output is stored whole) that nothing outside the group reads; a
    // region taken is neither a later candidate's member nor a root. A point-rows group first
    // (its members reduce rows into the root's own points), then a group of rows of the root's.
    std::vector<bool> taken(graph.num_nodes(), false), is_output(graph.num_nodes(), false);
    for (NodeId out : graph.outputs()) is_output[out] = true;
    for (auto it = partition.regions.rbegin(); it != partition.regions.rend(); ++it) {
        const Node &root = graph.node(it->root);
        if (taken[root.id]) continue;
        for (const bool point_rows : {true, false}) {
            if (point_rows ? !point_root_candidate(graph, root) : !row_root_candidate(graph, root, true)) continue;
            std::vector<bool> member(graph.num_nodes(), false);
            for (auto before = std::next(it); before != partition.regions.rend(); ++before) {
                const Node &r = graph.node(before->root);
                if (taken[r.id] || is_output[r.id]) continue;
                member[r.id] = point_rows ? point_aligned(graph, partition, users, r, root)
                                          : row_aligned(graph, partition, users, r, root);
            }
            if (!close_group(graph, partition, users, root.id, member)) continue;
            taken[root.id] = true;
            for (size_t id = 0; id < member.size(); ++id) taken[id] = taken[id] || member[id];
            add_row_group(partition, root.id, member, point_rows);
            break;
        }
    }
}

std::vector<NodeId> row_roots(const Partition &p) {
    std::vector<bool> root(p.row_root_of.size(), false);
    for (NodeId r : p.row_root_of) {
        if (r >= 0) root[r] = true;
    }
    std::vector<NodeId> out;
    for (const Region &region : p.regions) {
        if (root[region.root]) out.push_back(region.root);
    }
    return out;
}

namespace {

// Where inlined copies start to multiply: an elementwise node the cost rule inlined that is
// computed at more places than any node reading it (a separable blur's horizontal pass read
// through three slices, a stencil chain's stages, a value two reductions read). Each becomes a
// region of its own, marked optional: the baseline schedule inlines it again (what the cost rule
// chose, with its producers decided as if it were inlined), and the search may store it instead,
// whole or per tile of its consumer. Nodes further up the same elementwise path are computed at
// the same places and stay fused into it. Not with row fusion, whose rows are its own way of
// keeping intermediates in cache.
void mark_optional_regions(const Graph &graph, Partition &p) {
    std::vector<int64_t> most_places_of_a_reader(graph.num_nodes(), 0);
    for (const Node &n : graph.nodes()) {
        const int64_t at = p.materialized[n.id] ? 1 : p.places[n.id];
        for (NodeId in : n.inputs) most_places_of_a_reader[in] = std::max(most_places_of_a_reader[in], at);
    }
    p.optional.assign(graph.num_nodes(), false);
    bool any = false;
    for (const Node &n : graph.nodes()) {
        if (p.materialized[n.id] || op_class(n.kind) != OpClass::Elementwise || n.ndim() < 1) continue;
        if (p.places[n.id] < 2 || p.places[n.id] <= most_places_of_a_reader[n.id]) continue;
        p.materialized[n.id] = p.optional[n.id] = true;
        any = true;
    }
    if (any) build_regions(graph, p);
}

// Stores the cost rule made that inlining would keep small: elementwise nodes (not outputs)
// whose copies at every place cost at most kMaxInlineChoiceUnits. The scheduler decides them.
void mark_store_choices(const Graph &graph, Partition &p) {
    p.optional.resize(graph.num_nodes(), false);
    p.stored_by_default.assign(graph.num_nodes(), false);
    std::vector<bool> is_output(graph.num_nodes(), false);
    for (NodeId out : graph.outputs()) is_output[out] = true;
    for (const BudgetStore &b : p.budget_stores) {
        const Node &n = graph.node(b.node);
        if (b.rule != BudgetStore::Recompute || is_output[b.node] || op_class(n.kind) != OpClass::Elementwise ||
            n.ndim() < 1 || b.places * b.work > kMaxInlineChoiceUnits) {
            continue;
        }
        p.optional[b.node] = p.stored_by_default[b.node] = true;
    }
}

// Regions no row group computes per row: its roots and the regions outside every group.
size_t regions_outside_rows(const Partition &p) {
    return static_cast<size_t>(std::count_if(p.regions.begin(), p.regions.end(),
                                             [&](const Region &r) { return row_root_of(p, r.root) < 0; }));
}

Partition choose_partition(const Graph &graph, bool producers_outside_rows) {
    Partition p = partition_with_budget(graph, kRecomputeBudget);
    find_row_fusion(graph, p, producers_outside_rows);
    if (row_roots(p).empty()) {
        mark_optional_regions(graph, p);
        mark_store_choices(graph, p);
        return p;
    }
    // The row budget stores more; taken where that adds no region outside the groups (a kernel of
    // its own on the GPU).
    Partition stored = partition_with_budget(graph, kRowRecomputeBudget);
    find_row_fusion(graph, stored, producers_outside_rows);
    return !row_roots(stored).empty() && regions_outside_rows(stored) <= regions_outside_rows(p) ? stored : p;
}

std::string describe(const Graph &graph, const BudgetStore &b) {
    const Node &n = graph.node(b.node);
    std::string what = "%" + std::to_string(b.node) + " (" + op_name(n.kind) + (n.loc.empty() ? "" : " at " + n.loc) + ") stored: ";
    if (b.rule == BudgetStore::RegionSize) {
        return what + "a region inlining it would exceed " + std::to_string(b.budget) + " op units (" +
               (b.work > b.budget ? "more than " + std::to_string(b.budget) : std::to_string(b.work)) +
               " units of it come through this node)";
    }
    return what + "inlined it would be computed at " + std::to_string(b.places) +
           (b.places >= static_cast<int64_t>(kMaxCountedPlaces) ? " or more" : "") + " places of up to " +
           std::to_string(b.work) + " op units each (recompute budget " + std::to_string(b.budget) + ")";
}

}  // namespace

Partition partition_into_regions(const Graph &graph, bool producers_outside_rows) {
    Partition p = choose_partition(graph, producers_outside_rows);
    for (const BudgetStore &b : p.budget_stores) spdlog::info("hcompile: {}", describe(graph, b));
    return p;
}

std::string print_partition(const Graph &graph, const Partition &partition) {
    std::string out;
    int index = 0;
    for (const Region &r : partition.regions) {
        out += "region " + std::to_string(index++) + " -> %" + std::to_string(r.root) + " (" +
               op_name(graph.node(r.root).kind) + ")";
        if (!r.fused.empty()) {
            out += " fuses";
            for (NodeId id : r.fused) out += " %" + std::to_string(id) + ":" + op_name(graph.node(id).kind);
        }
        if (row_root_of(partition, r.root) >= 0) {
            out += " [computed per row of %" + std::to_string(row_root_of(partition, r.root)) + "]";
        }
        if (marks(partition.stored_by_default, r.root)) {
            out += " [optional: stored by the cost rule; the schedule may inline it]";
        } else if (marks(partition.optional, r.root)) {
            out += " [optional: inlined by the cost rule; the schedule may store it]";
        }
        out += "\n";
    }
    for (const BudgetStore &b : partition.budget_stores) out += describe(graph, b) + "\n";
    return out;
}

}  // namespace hc
