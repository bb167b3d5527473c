// The fusion partitioner (core/src/fusion.cpp): which nodes are region roots and which are fused.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hcompile/fusion.h"
#include "hcompile/graph.h"

using namespace hc;

namespace {

using Ints = std::vector<int64_t>;

Attrs reduce_attrs(Ints axes, int64_t keepdims) {
    return Attrs{{"axes", std::move(axes)}, {"keepdims", keepdims}};
}

std::vector<NodeId> roots(const Partition &p) {
    std::vector<NodeId> out;
    for (const Region &r : p.regions) out.push_back(r.root);
    return out;
}

const Region &region_of(const Partition &p, NodeId root) {
    for (const Region &r : p.regions) {
        if (r.root == root) return r;
    }
    FAIL("no region rooted at %" << root);
    return p.regions.front();
}

}  // namespace

TEST_SUITE("fusion") {

// softmax over rows of a 4x8 input; `extra_output` adds the row max as a second output.
struct Softmax {
    Graph g;
    NodeId x, m, bm, d, e, s, bs, y;
    explicit Softmax(bool extra_output) {
        x = g.add_input(0, DType::Float32, {4, 8});                        // %0
        m = g.add_op(OpKind::Max, {x}, reduce_attrs({1}, 1));              // %1
        bm = g.add_op(OpKind::Broadcast, {m}, Attrs{{"shape", Ints{4, 8}}});  // %2
        d = g.add_op(OpKind::Sub, {x, bm});                                // %3
        e = g.add_op(OpKind::Exp, {d});                                    // %4
        s = g.add_op(OpKind::Sum, {e}, reduce_attrs({1}, 1));              // %5
        bs = g.add_op(OpKind::Broadcast, {s}, Attrs{{"shape", Ints{4, 8}}});  // %6
        y = g.add_op(OpKind::Div, {e, bs});                                // %7
        g.set_outputs(extra_output ? std::vector<NodeId>{y, m} : std::vector<NodeId>{y});
    }
};

TEST_CASE("softmax without row fusion: reductions are roots, elementwise work is fused") {
    Softmax sm(/*extra_output=*/true);  // two outputs: no single row root
    Partition p = partition_into_regions(sm.g);
    REQUIRE(p.materialized.size() == static_cast<size_t>(sm.g.num_nodes()));
    CHECK(row_roots(p).empty());
    // The exp is read by two regions: the cost rule inlines it into both (2 places, 11 units),
    // and it is an optional region, which the baseline inlines and the search may store.
    CHECK(roots(p) == std::vector<NodeId>{sm.m, sm.e, sm.s, sm.y});
    CHECK(p.optional[sm.e]);
    CHECK_FALSE(p.stored_by_default[sm.e]);
    for (NodeId id : {sm.x, sm.bm, sm.d, sm.bs}) {
        INFO("node %", id);
        CHECK_FALSE(p.materialized[id]);
    }
    CHECK(region_of(p, sm.m).fused.empty());  // the input is a leaf: never listed
    CHECK(region_of(p, sm.e).fused == std::vector<NodeId>{sm.bm, sm.d});
    CHECK(region_of(p, sm.s).fused.empty());
    CHECK(region_of(p, sm.y).fused == std::vector<NodeId>{sm.bs});
    CHECK(print_partition(sm.g, p) ==
          "region 0 -> %1 (max)\n"
          "region 1 -> %4 (exp) fuses %2:broadcast %3:sub [optional: inlined by the cost rule; the schedule may store it]\n"
          "region 2 -> %5 (sum)\n"
          "region 3 -> %7 (div) fuses %6:broadcast\n");
}

TEST_CASE("softmax with row fusion: reductions and the shared exp are computed per output row") {
    Softmax sm(/*extra_output=*/false);
    Partition p = partition_into_regions(sm.g);
    CHECK(row_roots(p) == std::vector<NodeId>{sm.y});
    CHECK(roots(p) == std::vector<NodeId>{sm.m, sm.e, sm.s, sm.y});
    for (NodeId id : {sm.m, sm.e, sm.s}) {
        INFO("node %", id);
        CHECK(p.row_root_of[id] == sm.y);
    }
    CHECK(p.row_root_of[sm.y] == -1);
    CHECK(print_partition(sm.g, p) ==
          "region 0 -> %1 (max) [computed per row of %7]\n"
          "region 1 -> %4 (exp) fuses %2:broadcast %3:sub [computed per row of %7]\n"
          "region 2 -> %5 (sum) [computed per row of %7]\n"
          "region 3 -> %7 (div) fuses %6:broadcast\n"
          "%4 (exp) stored: inlined it would be computed at 2 places of up to 11 op units each (recompute budget 8)\n");
}

// Softmax rows appended to `g` after `x` (rows x cols): max, exp, sum and the division.
struct SoftmaxRows {
    NodeId m, e, s, y;
    SoftmaxRows(Graph &g, NodeId x, int64_t rows, int64_t cols) {
        m = g.add_op(OpKind::Max, {x}, reduce_attrs({1}, 1));
        NodeId d = g.add_op(OpKind::Sub, {x, g.add_op(OpKind::Broadcast, {m}, Attrs{{"shape", Ints{rows, cols}}})});
        e = g.add_op(OpKind::Exp, {d});
        s = g.add_op(OpKind::Sum, {e}, reduce_attrs({1}, 1));
        y = g.add_op(OpKind::Div, {e, g.add_op(OpKind::Broadcast, {s}, Attrs{{"shape", Ints{rows, cols}}})});
    }
};

TEST_CASE("on the GPU, each softmax read by a product roots a row group of its own") {
    // softmax(softmax(x) @ w): the first softmax is stored whole for the product, its reductions
    // computed per row of it; the second's per row of the output.
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {6, 8});
    NodeId w = g.add_input(1, DType::Float32, {8, 5});
    SoftmaxRows first(g, x, 6, 8);
    NodeId mm = g.add_op(OpKind::Matmul, {first.y, w});
    SoftmaxRows second(g, mm, 6, 5);
    g.set_outputs({second.y});

    Partition gpu = partition_into_regions(g, /*producers_outside_rows=*/true);
    CHECK(row_roots(gpu) == std::vector<NodeId>{first.y, second.y});
    for (NodeId id : {first.m, first.e, first.s}) CHECK(gpu.row_root_of[id] == first.y);
    for (NodeId id : {second.m, second.e, second.s}) CHECK(gpu.row_root_of[id] == second.y);
    for (NodeId id : {first.y, mm, second.y}) CHECK(gpu.row_root_of[id] == -1);
    // The CPU's rule: every region row-aligned with the single output (the product is not).
    CHECK(row_roots(partition_into_regions(g)).empty());
}

TEST_CASE("on the GPU a reshape that regroups only the outer axes roots the rows it reshapes") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {6, 8});
    SoftmaxRows sm(g, x, 6, 8);
    NodeId out = g.add_op(OpKind::Reshape, {sm.y}, Attrs{{"shape", Ints{2, 3, 8}}});
    g.set_outputs({out});
    Partition gpu = partition_into_regions(g, /*producers_outside_rows=*/true);
    CHECK(row_roots(gpu) == std::vector<NodeId>{out});
    for (NodeId id : {sm.m, sm.e, sm.s}) CHECK(gpu.row_root_of[id] == out);
    CHECK(row_roots(partition_into_regions(g)).empty());   // the CPU's rule: an elementwise output

    Graph h;   // a reshape that splits the rows themselves: their members would not line up
    NodeId hx = h.add_input(0, DType::Float32, {6, 8});
    SoftmaxRows hs(h, hx, 6, 8);
    h.set_outputs({h.add_op(OpKind::Reshape, {hs.y}, Attrs{{"shape", Ints{6, 2, 4}}})});
    CHECK(row_roots(partition_into_regions(h, /*producers_outside_rows=*/true)).empty());
}

TEST_CASE("a row group takes no output and no region read outside it") {
    // softmax(x) with its max returned too and the exp's column sums: the max is an output
    // (stored whole) and the exp is read by a region outside the rows, so the row sum is the
    // only member.
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {6, 8});
    SoftmaxRows sm(g, x, 6, 8);
    NodeId col = g.add_op(OpKind::Sum, {sm.e}, reduce_attrs({0}, 0));
    g.set_outputs({sm.y, sm.m, col});
    Partition gpu = partition_into_regions(g, /*producers_outside_rows=*/true);
    CHECK(row_roots(gpu) == std::vector<NodeId>{sm.y});
    CHECK(gpu.row_root_of[sm.s] == sm.y);
    for (NodeId id : {sm.m, sm.e, col}) CHECK(gpu.row_root_of[id] == -1);
}

TEST_CASE("row fusion refuses reductions whose rows do not line up with the output's") {
    // x - x.sum(axis=1) without keepdims broadcasts the row sums along columns: output row i
    // needs every sum, so computing sums per output row would redo the whole reduction.
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {6, 6});
    NodeId s = g.add_op(OpKind::Sum, {x}, reduce_attrs({1}, 0));
    NodeId bs = g.add_op(OpKind::Broadcast, {s}, Attrs{{"shape", Ints{6, 6}}});
    g.set_outputs({g.add_op(OpKind::Sub, {x, bs})});
    CHECK(row_roots(partition_into_regions(g)).empty());

    Graph h;  // a column reduction (axis 0) with keepdims: rows do not line up either
    NodeId hx = h.add_input(0, DType::Float32, {6, 6});
    NodeId hs = h.add_op(OpKind::Sum, {hx}, reduce_attrs({0}, 1));
    NodeId hb = h.add_op(OpKind::Broadcast, {hs}, Attrs{{"shape", Ints{6, 6}}});
    h.set_outputs({h.add_op(OpKind::Sub, {hx, hb})});
    CHECK(row_roots(partition_into_regions(h)).empty());
}

TEST_CASE("on the GPU a chain of reductions over the same rows roots a point-rows group") {
    // x.var(axis=1) of a 6x8 input: the mean's sum (keepdims) and the squared deviations' sum
    // (not) are computed per row of the division, each row a point of it.
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {6, 8});
    NodeId mean = g.add_op(OpKind::Sum, {x}, reduce_attrs({1}, 1));
    NodeId bm = g.add_op(OpKind::Broadcast, {mean}, Attrs{{"shape", Ints{6, 8}}});
    NodeId d = g.add_op(OpKind::Sub, {x, bm});
    NodeId sq = g.add_op(OpKind::Sum, {g.add_op(OpKind::Mul, {d, d})}, reduce_attrs({1}, 0));
    NodeId n = g.add_op(OpKind::Broadcast, {g.add_constant(8.0, DType::Float32)}, Attrs{{"shape", Ints{6}}});
    NodeId var = g.add_op(OpKind::Div, {sq, n});
    g.set_outputs({var});
    Partition gpu = partition_into_regions(g, /*producers_outside_rows=*/true);
    CHECK(row_roots(gpu) == std::vector<NodeId>{var});
    CHECK(gpu.point_rows[var]);
    for (NodeId id : {mean, sq}) CHECK(gpu.row_root_of[id] == var);
    CHECK(row_roots(partition_into_regions(g)).empty());   // the CPU's rule: rows of two axes or more

    // The same sums down the columns: their points are not rows.
    Graph h;
    NodeId hx = h.add_input(0, DType::Float32, {6, 8});
    NodeId hm = h.add_op(OpKind::Sum, {hx}, reduce_attrs({0}, 1));
    NodeId hd = h.add_op(OpKind::Sub, {hx, h.add_op(OpKind::Broadcast, {hm}, Attrs{{"shape", Ints{6, 8}}})});
    h.set_outputs({h.add_op(OpKind::Sum, {h.add_op(OpKind::Mul, {hd, hd})}, reduce_attrs({0}, 0))});
    CHECK(row_roots(partition_into_regions(h, /*producers_outside_rows=*/true)).empty());
}

TEST_CASE("matmul: elementwise producers are materialized, layout producers are not") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {5, 7});
    NodeId w = g.add_input(1, DType::Float32, {3, 7});
    NodeId b = g.add_input(2, DType::Float32, {5, 3});
    NodeId ex = g.add_op(OpKind::Exp, {x});
    NodeId wt = g.add_op(OpKind::Transpose, {w}, Attrs{{"perm", Ints{1, 0}}});
    NodeId mm = g.add_op(OpKind::Matmul, {ex, wt});
    NodeId y = g.add_op(OpKind::Add, {mm, b});
    NodeId t = g.add_op(OpKind::Tanh, {y});
    g.set_outputs({t});

    Partition p = partition_into_regions(g);
    CHECK(roots(p) == std::vector<NodeId>{ex, mm, t});
    CHECK(p.materialized[ex]);
    CHECK_FALSE(p.materialized[wt]);
    CHECK_FALSE(p.materialized[y]);
    CHECK(region_of(p, ex).fused.empty());
    CHECK(region_of(p, mm).fused == std::vector<NodeId>{wt});
    CHECK(region_of(p, t).fused == std::vector<NodeId>{y});
    CHECK(print_partition(g, p) ==
          "region 0 -> %3 (exp)\n"
          "region 1 -> %5 (matmul) fuses %4:transpose\n"
          "region 2 -> %7 (tanh) fuses %6:add\n");
}

TEST_CASE("outputs are roots even when another region consumes them") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float64, {6});
    NodeId a = g.add_op(OpKind::Neg, {x});
    NodeId b = g.add_op(OpKind::Abs, {a});
    NodeId c = g.add_op(OpKind::Square, {b});
    g.set_outputs({c, b});
    Partition p = partition_into_regions(g);
    CHECK(roots(p) == std::vector<NodeId>{b, c});
    CHECK(region_of(p, b).fused == std::vector<NodeId>{a});
    CHECK(region_of(p, c).fused.empty());  // reads the materialized b
    CHECK_FALSE(p.materialized[a]);
}

TEST_CASE("shared producers: recomputed while cheap, materialized when costly") {
    // Two reductions read the same elementwise chain.
    auto build = [](int n_exps, NodeId &shared) {
        Graph g;
        NodeId x = g.add_input(0, DType::Float32, {16, 16});
        NodeId v = x;
        for (int i = 0; i < n_exps; ++i) v = g.add_op(OpKind::Exp, {v});
        shared = v;
        NodeId s0 = g.add_op(OpKind::Sum, {v}, reduce_attrs({0}, 0));
        NodeId s1 = g.add_op(OpKind::Max, {v}, reduce_attrs({1}, 0));
        g.set_outputs({s0, s1});
        return g;
    };
    NodeId shared = -1;
    SUBCASE("two exps (cost 20) are recomputed in both reductions, unless the scheduler stores them") {
        Graph g = build(2, shared);
        Partition p = partition_into_regions(g);
        // Inlined by the cost rule, where copies start: an optional region the baseline inlines.
        CHECK(p.materialized[shared]);
        CHECK(p.optional[shared]);
        CHECK_FALSE(p.stored_by_default[shared]);
        CHECK(roots(p) == std::vector<NodeId>{shared, 3, 4});
        CHECK(region_of(p, shared).fused == std::vector<NodeId>{1});
        CHECK_FALSE(p.optional[1]);  // the first exp is computed at the same places as the second
    }
    SUBCASE("three exps (cost 30) are stored once") {
        Graph g = build(3, shared);
        Partition p = partition_into_regions(g);
        CHECK(p.materialized[shared]);
        // 2 copies of 30 units stay small: the baseline stores it, the search may inline it.
        CHECK(p.optional[shared]);
        CHECK(p.stored_by_default[shared]);
        CHECK(roots(p) == std::vector<NodeId>{shared, 4, 5});
        CHECK(region_of(p, shared).fused == std::vector<NodeId>{1, 2});
        CHECK(region_of(p, 4).fused.empty());
        CHECK(region_of(p, 5).fused.empty());
    }
    SUBCASE("a costly producer read by only one region stays fused") {
        Graph g;
        NodeId x = g.add_input(0, DType::Float32, {16});
        NodeId v = x;
        for (int i = 0; i < 5; ++i) v = g.add_op(OpKind::Sin, {v});
        NodeId a = g.add_op(OpKind::Add, {v, v});  // read twice, but inside one region
        g.set_outputs({a});
        Partition p = partition_into_regions(g);
        CHECK(roots(p) == std::vector<NodeId>{a});
        CHECK(p.regions[0].fused.size() == 5);
    }
}

TEST_CASE("leaf outputs make no region; every non-leaf node lands in some region") {
    Graph g;
    NodeId x = g.add_input(0, DType::Int32, {3, 4});
    NodeId c = g.add_constant_int(2, DType::Int32);
    NodeId bc = g.add_op(OpKind::Broadcast, {c}, Attrs{{"shape", Ints{3, 4}}});
    NodeId mo = g.add_op(OpKind::Mod, {x, bc});
    NodeId sl = g.add_op(OpKind::Slice, {mo}, Attrs{{"starts", Ints{2, 0}}, {"stops", Ints{-1, 4}}, {"steps", Ints{-1, 2}}});
    NodeId r = g.add_op(OpKind::Reshape, {sl}, Attrs{{"shape", Ints{6}}});
    g.set_outputs({r, x});
    Partition p = partition_into_regions(g);
    CHECK(roots(p) == std::vector<NodeId>{r});
    CHECK(p.materialized[x]);  // outputs are marked, but leaves never become regions
    CHECK(region_of(p, r).fused == std::vector<NodeId>{bc, mo, sl});
    CHECK(print_partition(g, p) == "region 0 -> %5 (reshape) fuses %2:broadcast %3:mod %4:slice\n");
}


TEST_CASE("a costly value read through a broadcast is stored before the broadcast, not after") {
    // tanh(exp(tanh(x))) over 4 x 5, broadcast to 64 x 4 x 5 and read through two slices: the
    // cost rule stores it, at 20 elements rather than the broadcast's 1280.
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {4, 5});
    NodeId t = g.add_op(OpKind::Tanh, {g.add_op(OpKind::Exp, {g.add_op(OpKind::Tanh, {x})})});
    NodeId b = g.add_op(OpKind::Broadcast, {g.add_op(OpKind::Reshape, {t}, Attrs{{"shape", Ints{1, 4, 5}}})},
                        Attrs{{"shape", Ints{64, 4, 5}}});
    auto half = [&](int64_t first) {
        return g.add_op(OpKind::Slice, {b},
                        Attrs{{"starts", Ints{first, 0, 0}}, {"stops", Ints{first + 32, 4, 5}}, {"steps", Ints{1, 1, 1}}});
    };
    g.set_outputs({g.add_op(OpKind::Add, {half(0), half(32)})});
    Partition p = partition_into_regions(g);
    CHECK(p.materialized[t]);
    CHECK_FALSE(p.materialized[b]);
}

}  // TEST_SUITE
