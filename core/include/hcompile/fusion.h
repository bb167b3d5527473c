// The fusion partitioner: which nodes become materialized region roots, and which are inlined
// (fused) into the regions that consume them.
#pragma once

#include <string>
#include <vector>

#include "hcompile/graph.h"

namespace hc {

struct Region {
    NodeId root = -1;              // the node this region materializes
    std::vector<NodeId> fused;     // non-leaf nodes computed inline inside it, topological order
};

// A node the cost rule stored although nothing else required it (logged and printed).
struct BudgetStore {
    enum Rule { Recompute, RegionSize };
    NodeId node = -1;
    Rule rule = Recompute;
    int64_t places = 0;   // Recompute: distinct places inlining would compute it at (capped count)
    int64_t work = 0;     // op units of one inlined copy (upper bound) / of its fused cone
    int64_t budget = 0;   // the budget it exceeded
};

struct Partition {
    std::vector<Region> regions;       // topological order of roots
    std::vector<bool> materialized;    // per node: true for region roots
    // Row fusion: when every other region is a reduction that keeps axis 0 (or an elementwise
    // node of the same rank) and reaches the single output only through elementwise ops and
    // same-rank broadcasts, each row of the output needs just the same row of each of them; they
    // are then computed row by row inside the output's loop while the row is in cache, and a
    // shared transcendental is stored per row rather than recomputed (kRowRecomputeBudget). On the
    // GPU a pipeline may hold several such groups, each rooted at an elementwise region stored
    // whole (an output, or a value other regions read: a layer norm whose rows a matrix product
    // reads, a softmax over attention scores); regions outside every group are computed once,
    // before or after, and read no group's members.
    std::vector<NodeId> row_root_of;   // per node: the root a member is computed per row of, or -1
    // Per node: a root whose every point is a row (the GPU's): its members reduce rows of some
    // array, each into a point of the root's shape (trailing axes of 1 aside), and the root reads
    // those points alone (x.var(axis=-1), a log-sum-exp, argmax of a softmax): each row's chain of
    // reductions runs in one block or warp while the row is in cache, the root's point last.
    std::vector<bool> point_rows;
    std::vector<BudgetStore> budget_stores;  // roots chosen by the cost rule, in node order
    std::vector<int64_t> places;       // per node: the distinct places the cost rule counted
    // Per node: a region whose inline-or-store the scheduler chooses (empty when there are none,
    // and with row fusion, whose rows are its own way of keeping values in cache). Two kinds:
    // a node the cost rule inlined where copies start to multiply (computed at more places than
    // any node that reads it: a stencil intermediate read through several slices, a value read
    // by several reductions), materialized so that the scheduler can store it, whole or per tile
    // of its consumer; the baseline inlines it. And, `stored_by_default`, a node the cost rule
    // stored whose inlined copies would stay small (at most kMaxInlineChoiceUnits op units in
    // all); the baseline stores it, the search may inline it. The search weighs recomputing
    // against the pass over memory with its cost model.
    std::vector<bool> optional;
    std::vector<bool> stored_by_default;
};

// Whether per-node flags of a Partition mark `id` (an empty vector marks none).
inline bool marks(const std::vector<bool> &flags, NodeId id) { return !flags.empty() && flags[id]; }

// The row root node `id` is computed per row of, or -1 (not a row group's member).
inline NodeId row_root_of(const Partition &p, NodeId id) { return p.row_root_of.empty() ? -1 : p.row_root_of[id]; }

// The row groups' roots, in topological order (none: empty).
std::vector<NodeId> row_roots(const Partition &p);

// Op units one evaluation of a node's own expression costs: a transcendental 10, a division or
// square root 3, other arithmetic 1, layout ops and leaves 0.
int op_units(const Node &node);

// Rules, in order: graph outputs, reductions and matmuls are roots; elementwise producers of a
// matmul are roots (a matmul reads each operand element many times). Every other elementwise or
// layout node is fused (inlined) into its consumers unless the cost rule stores it:
//
//   store v  when  places(v) >= 2  and  (places(v) - 1) * work(v) > kRecomputeBudget
//
// places(v) is the number of distinct places inlining would compute v at: one per region that
// reads it and, within a region, one per distinct chain of layout ops (slice, transpose,
// broadcast, reshape) between the region's root and v, so reuse multiplies along chains (in a
// 5-point stencil stage k is read at 5 places by stage k+1, 25 by stage k+2). Reads along
// elementwise paths share a place: lowering builds the value once there. work(v) is the op
// units of one inlined copy of v with its inputs (an upper bound). The rule is decided
// consumers first, so a stored consumer resets the count for its producers; it bounds the size
// of every inlined expression as well as the recomputation.
//
// A second rule bounds compile time: no region inlines more than kMaxRegionUnits op units
// (counting each fused node once). Halide compiles one Func in time about quadratic in its size,
// so a long unrolled loop kept in one region compiled for minutes; split into bounded regions it
// compiles in time linear in its length. Forwards, where a node's region would pass the bound,
// its largest fused inputs are stored.
//
// Stores either rule forces are listed in `budget_stores`, logged (spdlog, info) and printed by
// print_partition.
//
// `producers_outside_rows` (the GPU's): row groups also where other regions are not row-aligned
// (a matrix product a softmax reads), those computed once before or after the rows, and a group
// per elementwise region stored whole that has row-aligned producers; without it, one group at
// most, rooted at the single output, and every other region must be row-aligned (the CPU's
// measured rule).
Partition partition_into_regions(const Graph &graph, bool producers_outside_rows = false);

// Fills partition.row_root_of where the graph qualifies (see Partition).
void find_row_fusion(const Graph &graph, Partition &partition, bool producers_outside = false);

std::string print_partition(const Graph &graph, const Partition &partition);

}  // namespace hc
