// Symbolic extents (dynamic shapes): one compiled kernel for every size of some array axes.
//
// The frontend captures the function with each dynamic extent set to a placeholder value that
// no static extent of the graph has (and checks that captures at other placeholder values give
// the same graph). Symbol k is then every extent equal to values[k]: static code (typing,
// fusion, schedule heuristics) keeps working on plain integers, and an equality between a
// symbolic and a static extent can never hold by accident. The lowering reads a symbol's value
// from the call's argument (its `source`), and the dispatcher sizes outputs from it.
//
// An extent within kMaxSymbolOffset of a placeholder is that symbol plus the difference (a
// slice `x[1:-1]` of an axis of size n has n - 2 elements): the frontend spaces placeholders so
// that these windows hold no static extent and do not overlap.
#pragma once

#include <cstdint>
#include <vector>

#include "hcompile/graph.h"

namespace hc {

// The size the schedule's heuristics assume of a symbolic extent (RegionFunc::extents): large,
// so that a kernel serving every size is vectorized and parallel where the static one would be
// for big arrays; guarded tails keep small sizes correct, at the cost of a thread-pool wake-up.
constexpr int64_t kScheduledSymbolicExtent = int64_t{1} << 16;

constexpr int64_t kMaxSymbolOffset = 64;

struct SymbolSource {
    int arg = -1;   // call argument
    int axis = -1;  // NumPy axis of it
};

// A constant the frontend found to be scale * extent + offset of a symbol (a mean's count, a
// size the code read from `x.shape`): it becomes an `extent` leaf, its value read at run time.
struct ExtentValue {
    NodeId node = -1;
    int symbol = -1;
    int64_t scale = 1, offset = 0;
};

struct SymbolicExtents {
    std::vector<int64_t> values;         // placeholder extent of each symbol in the graph
    std::vector<SymbolSource> sources;   // where a call supplies each symbol's value (sizes outputs)
    // An input the graph loads with each symbol (where the kernel reads it); none (arg -1) when
    // only empty nodes have the symbol (the empty-array pass left no load of it).
    std::vector<SymbolSource> loaded;

    // The symbol an extent stands for (it is that symbol's size plus offset_of(extent)), or -1
    // for a static extent.
    int symbol_of(int64_t extent) const;
    int64_t offset_of(int64_t extent) const;
    // Whether any extent of `shape` is symbolic.
    bool any_symbolic(const std::vector<int64_t> &shape) const;
};

// Finds where the graph loads each symbol and checks that every node computes the
// same function of the symbols for every value from 2 up: symbolic axes flow through
// elementwise ops, broadcasts, transposes, reshapes that only add or drop unit axes, full
// slices and updates along them that start at a static index with step 1 (`x[1:-1]`, `x[2:]`),
// reductions and matmuls over any axes. Anything else (a slice of a fixed length, `x[:5]`; a
// reshape that merges one with others) throws GraphError naming the node: the caller then
// compiles for the exact shapes instead.
SymbolicExtents resolve_symbolic_extents(const Graph &graph, const std::vector<int64_t> &values,
                                         const std::vector<SymbolSource> &sources);

// The graph with each listed constant node replaced by its `extent` leaf (same dtype).
Graph bind_extent_values(const Graph &graph, const std::vector<ExtentValue> &extents);

}  // namespace hc
