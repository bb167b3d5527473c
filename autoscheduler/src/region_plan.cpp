#include "region_plan.h"

#include "hcompile/analysis.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace hc {

int64_t staged_operand_bytes(const RegionFunc &r, int64_t tile_columns, int64_t tile_rows) {
    int64_t bytes = 0;
    for (const Halide::Func &operand : r.product_operands) bytes = std::max<int64_t>(bytes, point_bytes(operand));
    return (tile_columns + tile_rows) * (r.rextents.empty() ? 0 : r.rextents[0]) * bytes;
}

int64_t staged_operand_bytes(const RegionFunc &r, const RegionPlan &p) {
    return staged_operand_bytes(r, p.gpu_threads_x * std::max<int64_t>(p.gpu_vector, 1),
                                p.gpu_threads_y * std::max<int64_t>(p.gpu_rows_per_thread, 1));
}

// Whether `f` computes with any 64-bit value, in its own definitions or in a Func it reads that
// is inlined into it: LLVM's NVPTX back end aborts the process (an assertion, nothing to catch)
// on some vectors of doubles (a vector exp calls libdevice with a bad signature), so a thread's
// vector is for narrower values only.
bool computes_64_bit(const Halide::Func &f) {
    class Find : public Halide::Internal::IRGraphVisitor {
    public:
        bool found = false;
        std::set<std::string> seen;
        void function(const Halide::Internal::Function &g) {
            if (!seen.insert(g.name()).second) return;
            for (const Halide::Expr &v : g.definition().values()) v.accept(this);
            for (const Halide::Type &t : g.output_types()) found = found || t.bits() == 64;
        }

    protected:
        using IRGraphVisitor::visit;
        void include(const Halide::Expr &e) override {
            if (e.defined() && e.type().bits() == 64) found = true;
            IRGraphVisitor::include(e);
        }
        void visit(const Halide::Internal::Call *op) override {
            if (op->call_type == Halide::Internal::Call::Halide && op->func.defined()) {
                function(Halide::Internal::Function(op->func));
            }
            IRGraphVisitor::visit(op);
        }
    } find;
    find.function(f.function());
    return find.found;
}

namespace {

[[noreturn]] void refuse(const Decision &d, const LoweredPipeline &lowered, const std::string &why) {
    throw std::invalid_argument("schedule decision '" + to_string(d, &lowered) + "': " + why);
}

// Sets a plan field once; a second decision of the same kind for the region is refused.
template <typename T>
void set_once(T &field, T value, T unset, const Decision &d, const LoweredPipeline &lowered) {
    if (field != unset) refuse(d, lowered, "the region already has a decision of this kind");
    field = value;
}

}  // namespace

bool plain_elementwise(const RegionFunc &r) {
    return !r.accumulator.defined() && !r.library_call && !r.row_fused() && !r.vars.empty() &&
           r.op_class != OpClass::Matmul;
}

bool own_accumulator(const RegionFunc &r) { return r.accumulator.defined() && r.accumulator.name() == r.func.name(); }

bool tile_member(const RegionFunc &r) {
    return plain_elementwise(r) || (own_accumulator(r) && r.serial_update_axes == 0 && !r.vars.empty() && !r.row_fused() &&
                                    r.func.num_update_definitions() == 1);
}

bool gpu_block_reduction(const RegionFunc &r) {
    return r.accumulator.defined() && !own_accumulator(r) && !r.library_call && r.op_class != OpClass::Matmul &&
           !r.vars.empty() && r.rextents.size() == 1 && r.reduces_innermost && !r.staged_operand.defined() &&
           !(r.lane_parts && r.lane_parts->stored);
}

std::optional<size_t> member_row_axis(const RegionFunc &member, const RegionFunc &root) {
    if (root.point_rows) {
        // The same points past the reduced axis each keeps as 1 (keepdims).
        const size_t axis = row_axis(member), root_axis = row_axis(root);
        // (row_axis is 1 only for two axes or more.)
        if (!member.accumulator.defined() || member.vars.size() - axis != root.vars.size() - root_axis ||
            !std::equal(member.extents.begin() + axis, member.extents.end(), root.extents.begin() + root_axis)) {
            return std::nullopt;
        }
        return axis;
    }
    const bool same_axes =
        member.vars.size() == root.vars.size() && (!member.accumulator.defined() || member.extents[0] == 1);
    const bool dropped = member.accumulator.defined() && member.vars.size() + 1 == root.vars.size();
    const size_t axis = same_axes ? 1 : 0;
    if (!(same_axes || dropped) || root.extents.size() < 2 || member.extents.size() <= axis ||
        member.extents[axis] != root.extents[1]) {
        return std::nullopt;
    }
    return axis;
}

int64_t reduction_lanes(const RegionFunc &r) {
    return r.blocked_sum ? r.blocked_sum->lanes : r.lane_parts ? r.lane_parts->lanes : 0;
}

int64_t thread_row_length(const RegionFunc &member) {
    if (member.accumulator.defined()) return member.rextents.empty() ? 0 : member.rextents[0];
    return member.extents.empty() ? 0 : member.extents[0];
}

bool warp_row_member(const RegionFunc &r, int64_t lanes) {
    // (Halide 21 has no warp shuffles of 64-bit values: an arg reduction's are its lanes' 32-bit
    // indices, its int64 answer cast by lane 0 alone. Extents estimated, a Halide pipeline's,
    // are not stated to Halide, whose lanes' partial results then go to a scratch buffer.)
    const bool butterfly = r.lane_parts && r.lane_parts->butterfly;
    if (r.vars.empty() || r.estimated || computes_64_bit(butterfly ? r.accumulator : r.func)) return false;
    if (!r.accumulator.defined()) return true;
    if (!gpu_block_reduction(r) || !symbolic_only_in_grid(r) || !fits_lane_steps(r.rextents[0], lanes)) return false;
    if (r.lane_parts) return butterfly && r.lane_parts->lanes == lanes;
    return r.blocked_sum ? r.blocked_sum->lanes == lanes : r.associative_vectorizable && r.rdom.defined();
}

bool thread_reads_row_in_vectors(const RegionFunc &r) {
    if (!r.accumulator.defined() || !r.reduces_innermost || r.symbolic || r.lane_parts || r.rextents.size() != 1) {
        return false;
    }
    const std::vector<Halide::Type> types = r.accumulator.types();
    if (!std::all_of(types.begin(), types.end(), [](const Halide::Type &t) { return t.bits() <= 32; })) return false;
    if (r.blocked_sum) {
        const int64_t lanes = r.blocked_sum->lanes;
        return (lanes == 2 || lanes == kVectorReadLanes) && r.rextents[0] % lanes == 0;
    }
    return r.associative_vectorizable && r.rextents[0] >= 2 * kVectorReadLanes && r.rextents[0] % kVectorReadLanes == 0;
}

size_t row_axis(const RegionFunc &root) {
    if (!root.accumulator.defined() && !root.point_rows) return 1;
    return root.extents.size() >= 2 && root.extents[0] == 1 ? 1 : 0;
}

bool symbolic_past(const RegionFunc &r, size_t first) {
    return first + 1 < 64 && (r.symbolic_axes >> (first + 1)) != 0;
}

bool block_loops_fit_grid(const RegionFunc &r, size_t first) {
    if (r.vars.size() <= first) return false;
    // The grid's x (axis `first`) holds 2^31 - 1 blocks: any size there, and all the block loops
    // fused where a later one has a symbolic size; else y and z up to 65535 each.
    if (symbolic_past(r, first)) return true;
    int64_t z = 1;
    for (size_t i = first + 2; i < r.vars.size(); ++i) z *= std::max<int64_t>(r.extents[i], 1);
    return (r.vars.size() <= first + 1 || r.extents[first + 1] <= kGridLimit) && z <= kGridLimit;
}

size_t first_block_axis(const RegionFunc &root, int64_t rows_a_block) {
    const bool point_a_row = root.accumulator.defined() || root.point_rows;
    return rows_a_block > 1 || root.point_rows ? row_axis(root) : point_a_row ? 0 : 1;
}

bool symbolic_only_along(const RegionFunc &r, size_t axis) {
    return axis >= 64 ? r.symbolic_axes == 0 : (r.symbolic_axes & ~(uint64_t{1} << axis)) == 0;
}

bool symbolic_only_in_grid(const RegionFunc &r) {
    // (Axes from the rows' on are block loops: a symbolic one past them fuses them all into the
    // grid's x, block_loops_fit_grid.)
    const size_t axis = row_axis(r);
    return axis >= 64 || (r.symbolic_axes & ((uint64_t{1} << axis) - 1)) == 0;
}

bool rows_may_share_blocks(const LoweredPipeline &lowered, const RegionFunc &r) {
    // (Symbolic rows need an entry allowed them; a symbolic batch past them does not: with the
    // rows' count static, a block's rows are never more.)
    return symbolic_only_in_grid(r) && (lowered.symbolic_row_blocks || !r.symbolic_axis(row_axis(r)));
}

int64_t point_row_length(const LoweredPipeline &lowered, int root_region) {
    const RegionFunc &root = lowered.regions[root_region];
    if (!root.point_rows) return 0;
    int64_t length = 0;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        if (r.row_root != root_region && static_cast<int>(i) != root_region) continue;
        if (!r.accumulator.defined()) continue;   // the root's own points (elementwise)
        std::optional<int64_t> row;
        if (r.rdom.defined() && r.rdom.dimensions() == 1) row = Halide::Internal::as_const_int(r.rdom[0].extent());
        if (!row || r.rextents.size() != 1 || (length > 0 && *row != length)) return 0;
        length = *row;
    }
    return length;
}

bool gpu_rows_reduction(const RegionFunc &r) {
    return gpu_block_reduction(r) && (r.symbolic || block_loops_fit_grid(r, 0));
}

bool update_axis_serial(const RegionFunc &r, int axis) { return axis >= 0 && axis < 64 && ((r.serial_update_axes >> axis) & 1); }

bool is_output(const LoweredPipeline &lowered, int region) {
    const std::string &name = lowered.regions[region].func.name();
    return std::any_of(lowered.outputs.begin(), lowered.outputs.end(),
                       [&](const Halide::Func &f) { return f.name() == name; });
}

std::vector<RegionPlan> plan_regions(const LoweredPipeline &lowered, const Schedule &schedule, bool whole_pipeline) {
    std::vector<RegionPlan> plans(lowered.regions.size());
    std::vector<bool> decided(lowered.regions.size(), false);
    for (const Decision &d : schedule) {
        if (d.region < 0 || d.region >= static_cast<int>(plans.size())) refuse(d, lowered, "no such region");
        const RegionFunc &r = lowered.regions[d.region];
        RegionPlan &p = plans[d.region];
        decided[d.region] = true;
        const bool reduction = r.accumulator.defined() && !r.rextents.empty() && !r.library_call;
        const bool matmul = r.op_class == OpClass::Matmul && r.vars.size() >= 2 && !r.library_call;
        auto need_axis = [&] {
            if (d.axis < 0 || d.axis >= static_cast<int>(r.vars.size())) refuse(d, lowered, "no such axis");
        };
        auto need_width = [&] {
            if (d.value < 1) refuse(d, lowered, "a width or count must be at least 1");
        };
        auto need = [&](bool ok, const char *why) {
            if (!ok) refuse(d, lowered, why);
        };
        switch (d.choice) {
        case Choice::ComputeRoot:
            set_once(p.placed, true, false, d, lowered);
            break;
        case Choice::ComputeAtRow:
            set_once(p.placed, true, false, d, lowered);
            need(d.value >= 0 && d.value < static_cast<int64_t>(plans.size()) && d.value != d.region,
                 "the row loop must be another region's");
            need(!lowered.regions[d.value].vars.empty(), "that region has no rows");
            p.row_of = static_cast<int>(d.value);
            break;
        case Choice::Vectorize:
            need_axis();
            need_width();
            need(!matmul, "a matrix product vectorizes through its register tile");
            set_once(p.vector_axis, d.axis, -1, d, lowered);
            p.vector_width = d.value;
            break;
        case Choice::Parallel:
            need_axis();
            need(d.value >= 0, "a task runs at least one iteration");
            need(!matmul || d.value <= 1, "a matrix product's tasks are its tiles");
            set_once(p.parallel_axis, d.axis, -1, d, lowered);
            p.parallel_grain = d.value;
            break;
        case Choice::ParallelChunks:
            need(r.vars.size() == 1 && d.axis == 0, "chunks split a 1-D region's axis 0");
            need_width();
            set_once(p.chunks, d.value, int64_t{0}, d, lowered);
            break;
        case Choice::StageOperand:
            need(r.staged_operand.defined() && !reduction && !matmul, "the region stages no operand");
            set_once(p.stage_operand, true, false, d, lowered);
            break;
        case Choice::ReduceAcrossOutputs:
            need(reduction && !r.blocked_sum && !matmul, "not a reduction with an update to vectorize");
            need(d.axis == 0, "outputs are vectorized along axis 0");
            need_axis();
            need(!update_axis_serial(r, 0), "the update reads its own values at other indices of axis 0");
            need_width();
            set_once(p.across_outputs, d.value, int64_t{0}, d, lowered);
            break;
        case Choice::ReduceInLanes:
            need(reduction && !r.blocked_sum && !matmul && r.reduces_innermost && r.associative_vectorizable,
                 "not an associative reduction over the innermost axis");
            need_width();
            set_once(p.lanes, d.value, int64_t{0}, d, lowered);
            break;
        case Choice::ParallelUpdate:
            need((reduction || r.blocked_sum) && !matmul, "the region has no reduction update");
            need_axis();
            need(!update_axis_serial(r, d.axis), "the update reads its own values at other indices of that axis");
            need(d.value >= 0, "a task runs at least one iteration");
            set_once(p.parallel_update_axis, d.axis, -1, d, lowered);
            p.parallel_update_grain = d.value;
            break;
        case Choice::SumVector:
            need(r.blocked_sum.has_value(), "not a blocked float sum");
            need_width();
            need(r.blocked_sum->lanes == 1 ? !r.vars.empty() : d.value == r.blocked_sum->lanes,
                 "a sum's vector is its lanes (as many as it has) or, with one lane, its outputs");
            set_once(p.sum_vector, d.value, int64_t{0}, d, lowered);
            break;
        case Choice::CallLibrary:
            need(r.library_call, "the region was not lowered as a library call");
            need_width();
            need((d.axis == 0 || d.axis == 1) && d.value2 >= 1, "tiles of axis 0 or 1, at least one");
            need(!lowered.for_gpu || d.value2 == 1, "cuBLAS computes the whole product in one call");
            set_once(p.library, d.value, int64_t{0}, d, lowered);
            p.library_axis = d.axis;
            p.library_tiles = d.value2;
            break;
        case Choice::TileRows:
            need_axis();
            need_width();
            need(plain_elementwise(r), "only a plain elementwise region is tiled");
            need(d.value2 == 0 || (d.value2 == 1 && d.axis == static_cast<int>(r.vars.size()) - 1),
                 "regions slide down the rows of a tile of the outermost axis only (no loop between)");
            set_once(p.tile_axis, d.axis, -1, d, lowered);
            p.tile_rows = d.value;
            p.tile_slides = d.value2 == 1;
            break;
        case Choice::ComputeAtTile:
            set_once(p.placed, true, false, d, lowered);
            need(d.value >= 0 && d.value < static_cast<int64_t>(plans.size()) && d.value != d.region,
                 "the tile loop must be another region's");
            need(tile_member(r), "only a plain elementwise region, or a window reduction, is computed in a tile");
            need(!is_output(lowered, d.region), "an output is stored whole, not per tile");
            p.tile_of = static_cast<int>(d.value);
            break;
        case Choice::Inline:
            set_once(p.placed, true, false, d, lowered);
            need(r.optional || (lowered.for_gpu && !is_output(lowered, d.region) &&
                                (r.library_call || (r.row_fused() && !r.accumulator.defined()))),
                 "only an optional region (a stencil intermediate, or a store the scheduler may undo), a cuBLAS "
                 "call's copy that is no output, or an elementwise row member on the GPU is inlined");
            p.inlined = true;
            break;
        case Choice::GpuTile:
            need(!r.library_call || lowered.for_gpu, "a library call of the host's BLAS runs on the CPU");
            need(!own_accumulator(r), "a Halide pipeline's own reductions are not scheduled for the GPU");
            need(r.vars.empty() ? d.value == 1 && d.value2 == 0 : d.value >= 1 && d.value <= 1024,
                 "a block has 1 to 1024 threads along axis 0 (one thread for a region with no axes)");
            need(d.value2 == 0 || (r.vars.size() >= 2 && d.value * d.value2 <= 1024),
                 "blocks of two axes need a region of two axes and at most 1024 threads");
            set_once(p.gpu_threads_x, d.value, int64_t{0}, d, lowered);
            p.gpu_threads_y = d.value2;
            break;
        case Choice::GpuVector:
            need(!r.vars.empty(), "a region with no axes has no vector");
            need(d.value == 1 || d.value == 2 || d.value == 4, "a thread's vector has 1, 2 or 4 points");
            need(d.value == 1 || !lowered.for_gpu || !computes_64_bit(r.func),
                 "a GPU thread's vector is for values narrower than 64 bits");
            need(d.value2 == 0 || (r.vars.size() >= 2 && (d.value2 == 2 || d.value2 == 4)),
                 "a thread computes 2 or 4 rows of a region of two axes");
            set_once(p.gpu_vector, d.value, int64_t{0}, d, lowered);
            p.gpu_rows_per_thread = d.value2;
            break;
        case Choice::GpuRows:
            // (A thread a row fuses every row axis into the grid's x: any number of rows.)
            need((is_row_root(lowered, static_cast<int>(d.region)) && r.vars.size() >= 2 && !r.accumulator.defined() &&
                  (block_loops_fit_grid(r, 1) || d.value == 1)) ||
                     (r.point_rows && d.value > 1 && point_row_length(lowered, static_cast<int>(d.region)) > 0 &&
                      block_loops_fit_grid(r, row_axis(r))) ||
                     gpu_rows_reduction(r) || (d.value2 > 1 && gpu_block_reduction(r) && block_loops_fit_grid(r, row_axis(r))),
                 "only the row root (elementwise, two axes or more; a point-rows root of rows of a static length), "
                 "or a reduction over its innermost axis alone, runs in blocks of rows, where its block loops fit a "
                 "CUDA grid");
            if (d.value == 1) {
                // A thread a row: each row's points in the thread's registers, a row of a static
                // length; its rows any number (a last block's threads past them compute nothing).
                need(!r.accumulator.defined() && !r.symbolic_axis(0) && r.extents[0] <= kMaxThreadRow &&
                         d.value2 >= 32 && d.value2 <= kMaxThreadRowsPerBlock && (d.value2 & (d.value2 - 1)) == 0,
                     ("a thread a row (gpu_rows of 1) is for an elementwise row root whose rows have a static "
                      "length up to " + std::to_string(kMaxThreadRow) + ", a power of two from 32 to " +
                      std::to_string(kMaxThreadRowsPerBlock) + " of them a block")
                         .c_str());
            } else {
                // Rows a block: a power of two up to the root's static rows (axis 1; a
                // reduction's axis 0). The last block, where they do not divide the rows, is
                // shifted inwards to end at the last row (rows past the end its regions computed
                // per row would read; its idle lanes would miss a warp's shuffles).
                // Their axis may be symbolic (a batch of any size: the frontend's guard then asks
                // for a block's rows, least_symbol_sizes), and the axes past it (a batch over
                // them: the block loops fused into the grid's x); a row's own size is static.
                need(d.value2 <= 1 || (d.value2 <= kMaxRowsPerBlock && (d.value2 & (d.value2 - 1)) == 0 &&
                                       rows_may_share_blocks(lowered, r) && r.extents.size() > row_axis(r) &&
                                       r.extents[row_axis(r)] >= d.value2),
                     "a block's rows (gpu_rows' value2) are a power of two up to 32, at most the root's rows (axis 1; "
                     "a reduction's axis 0), a row's size static (and the rows' count too in an entry for fewer rows "
                     "than a block's: LoweredPipeline::symbolic_row_blocks)");
            }
            // A row's threads: fewer than a warp only where the block has several rows. (A
            // reduction's lanes are its threads.)
            need(d.value >= 1 && d.value * std::max<int64_t>(d.value2, 1) >= 32 &&
                     std::max<int64_t>(d.value, reduction_lanes(r)) * std::max<int64_t>(d.value2, 1) <= 1024,
                 "a block has at least 32 and up to 1024 threads (a row's, or its reduction's lanes, times its rows)");
            set_once(p.gpu_rows, d.value, int64_t{0}, d, lowered);
            p.gpu_rows_per_block = d.value2;
            break;
        case Choice::GpuStageTransposed: {
            const std::vector<TransposedRead> reads = transposed_read_arrays(lowered, r);
            need(lowered.for_gpu && plain_elementwise(r) && r.vars.size() >= 2 && !r.symbolic_axis(0) &&
                     (reads.empty() || !r.symbolic_axis(static_cast<size_t>(reads[0].region_axis))),
                 "only a plain elementwise region on the GPU, static along the axes its transposed reads walk, "
                 "stages them");
            set_once(p.gpu_stage_transposed, true, false, d, lowered);
            break;
        }
        case Choice::GpuStageOperands:
            need(lowered.for_gpu && r.product_operands.size() == 2 && !r.library_call && r.accumulator.defined() &&
                     !own_accumulator(r) && r.vars.size() >= 2 && !r.rextents.empty() &&
                     !r.symbolic && !computes_64_bit(r.func),
                 "only a batched product lowered as Halide loops on the GPU (its operands Funcs of their own), of "
                 "static sizes and 32-bit values or narrower, stages its operands");
            set_once(p.gpu_stage_operands, true, false, d, lowered);
            break;
        case Choice::GpuRegisters:
            // (CUDA's cap is a multiple of 8 from 24 to 255 a thread: ptxas rounds others.)
            need(lowered.for_gpu && d.value >= kMinGpuRegisters && d.value <= kMaxGpuRegisters,
                 "only a region on the GPU caps its registers, at 24 to 255 a thread");
            set_once(p.gpu_registers, d.value, int64_t{0}, d, lowered);
            break;
        case Choice::GpuWarpRows: {
            // (A reduction's row: its reduced axis; an elementwise root's: its axis 0.)
            // (A point-rows root's row: its members' reductions'.)
            const bool point_root = r.point_rows && !r.accumulator.defined() && is_row_root(lowered, static_cast<int>(d.region));
            const bool elementwise_root = is_row_root(lowered, static_cast<int>(d.region)) && r.vars.size() >= 2 &&
                                          !r.accumulator.defined() && !r.point_rows;
            need(elementwise_root || point_root || (gpu_block_reduction(r) && warp_row_member(r, d.value)),
                 "only an elementwise row root (two axes or more, or a point-rows root), or a reduction over its "
                 "innermost axis that rfactors or whose float sum has as many lanes, runs its rows in a warp's lanes");
            need(d.value >= 2 && d.value <= 32 && 32 % d.value == 0, "a row's lanes divide a warp's 32");
            const int64_t length = point_root         ? point_row_length(lowered, static_cast<int>(d.region))
                                   : elementwise_root ? r.extents[0]
                                                      : r.rextents[0];
            need(symbolic_only_in_grid(r) && !r.estimated && fits_lane_steps(length, d.value),
                 ("a row in a warp's lanes has a static length (not an estimate), up to " +
                  std::to_string(kMaxWarpRowSteps) + " points a lane, in whole steps of its lanes or a last step of " +
                  std::to_string(kMinLastStepLanes) + " lanes or more")
                     .c_str());
            set_once(p.gpu_warp_rows, d.value, int64_t{0}, d, lowered);
            break;
        }
        case Choice::RegisterTile:
            need(matmul, "not a matrix product");
            need(d.value >= 1 && d.value2 >= 1, "a tile is at least 1x1");
            set_once(p.tile_n, d.value, int64_t{0}, d, lowered);
            p.tile_m = d.value2;
            break;
        }
        if (p.across_outputs && p.lanes) refuse(d, lowered, "a reduction vectorizes across outputs or in lanes, not both");
        if (p.chunks && p.parallel_axis >= 0) refuse(d, lowered, "chunks are the region's parallel loop already");
        if (p.tile_axis >= 0 && (p.chunks || p.parallel_axis >= 0)) refuse(d, lowered, "the tile loop is the region's parallel loop");
        if (p.tile_of >= 0 && (p.chunks || p.parallel_axis >= 0 || p.tile_axis >= 0 || p.parallel_update_axis >= 0)) {
            refuse(d, lowered, "a region computed per tile runs in its tile's loop, in no loop of its own");
        }
        if (p.tile_axis >= 0 && p.tile_axis == p.vector_axis) refuse(d, lowered, "the tiled axis is not the vector's");
        const bool cpu_loops = p.vector_axis >= 0 || p.parallel_axis >= 0 || p.chunks || p.stage_operand || p.across_outputs ||
                               p.lanes || p.parallel_update_axis >= 0 || p.sum_vector || p.tile_n || p.tile_axis >= 0 ||
                               p.tile_of >= 0;
        if ((p.gpu_threads_x || p.gpu_rows) && (cpu_loops || p.inlined)) {
            refuse(d, lowered, "a region on the GPU is computed at the root, in GPU blocks alone (no CPU loops, no inlining)");
        }
        if (p.inlined && (p.vector_axis >= 0 || p.parallel_axis >= 0 || p.chunks || p.tile_axis >= 0 || p.stage_operand)) {
            refuse(d, lowered, "an inlined region has no loops of its own");
        }
    }
    const bool on_gpu =
        std::any_of(plans.begin(), plans.end(), [](const RegionPlan &p) { return p.gpu_threads_x > 0 || p.gpu_rows > 0; });
    std::vector<int64_t> shared_rows(plans.size(), 0);   // per row root of several rows a block: its bytes stored per row
    for (size_t i = 0; i < plans.size(); ++i) {
        if (!whole_pipeline && !decided[i]) continue;
        const RegionPlan &p = plans[i];
        std::string region = "region " + std::to_string(i) + " (" + lowered.regions[i].func.name() + ")";
        if (!p.placed) throw std::invalid_argument("schedule: " + region + " is not placed (compute_root, compute_at_row, compute_at_tile or inline)");
        if (whole_pipeline && p.row_of >= 0 && (plans[p.row_of].row_of >= 0 || plans[p.row_of].tile_of >= 0)) {
            throw std::invalid_argument("schedule: " + region + " is placed in a row of a region placed in another's");
        }
        const RegionFunc &r = lowered.regions[i];
        if (r.library_call != (p.library > 0)) {
            throw std::invalid_argument("schedule: " + region + (r.library_call ? " is a library call without call_library"
                                                                                 : " is not a library call"));
        }
        if (whole_pipeline && p.tile_of >= 0) {
            const RegionPlan &root = plans[p.tile_of];
            if (root.tile_axis < 0 || root.tile_of >= 0 || root.row_of >= 0 || root.inlined) {
                throw std::invalid_argument("schedule: " + region + " is computed in the tiles of region " +
                                            std::to_string(p.tile_of) + ", which is not tiled at the root");
            }
        }
        if (whole_pipeline && p.gpu_threads_x && p.row_of >= 0 && plans[p.row_of].gpu_rows != p.gpu_threads_x) {
            throw std::invalid_argument("schedule: " + region + " is computed per row on the GPU: its row root needs "
                                        "gpu_rows of as many threads");
        }
        if (whole_pipeline && p.row_of >= 0 && plans[p.row_of].gpu_rows_per_block > 1) {
            if (!member_row_axis(r, lowered.regions[p.row_of])) {
                throw std::invalid_argument("schedule: " + region + " is computed per row of a root of several rows a "
                                            "block, and its axes are not the root's rows");
            }
            // Stored per row, each of the block's rows (in shared memory; a thread's row, or a
            // warp's lanes', in their registers).
            const bool in_threads = thread_rows(plans[p.row_of]) || plans[p.row_of].gpu_warp_rows > 0;
            if (thread_rows(plans[p.row_of]) && !p.inlined && thread_row_length(r) > kMaxThreadRow) {
                throw std::invalid_argument("schedule: " + region + " is computed per row of a root of a thread a row, "
                                            "and its own row is longer than " + std::to_string(kMaxThreadRow) +
                                            " points (or of any length): a thread's registers hold it");
            }
            if (!r.accumulator.defined() && !p.inlined && !in_threads) {
                shared_rows[p.row_of] += r.extents[0] * point_bytes(r.func) * plans[p.row_of].gpu_rows_per_block;
                if (shared_rows[p.row_of] > kSharedBytesPerBlock) {
                    throw std::invalid_argument("schedule: " + region + " is stored per row of a root of " +
                                                std::to_string(plans[p.row_of].gpu_rows_per_block) +
                                                " rows a block: over a block's 48 KiB of shared memory");
                }
            }
            // A blocked sum's lanes (an arg reduction's) are threads of each row too.
            const int64_t lanes = reduction_lanes(r);
            if (!in_threads && lanes * plans[p.row_of].gpu_rows_per_block > 1024) {
                throw std::invalid_argument("schedule: " + region + ": its reduction's " + std::to_string(lanes) +
                                            " lanes for each of a block's rows are over 1024 threads");
            }
        }
        if (whole_pipeline && p.gpu_threads_x && p.row_of >= 0 && !r.accumulator.defined() &&
            lowered.regions[p.row_of].symbolic_axis(0)) {
            throw std::invalid_argument("schedule: " + region + " is stored per row of a row of any length: no shared "
                                        "memory is sized for it (inline it: recomputed where read)");
        }
        // (Several rows a block: each row's members are computed in its thread's loop, inside which
        // its lanes run. A block of one row computed them at the block, outside any thread loop,
        // and 32 lanes a row came out wrong.)
        if (p.gpu_warp_rows && (p.gpu_rows != p.gpu_warp_rows || p.gpu_vector || p.gpu_rows_per_block < 2)) {
            throw std::invalid_argument("schedule: " + region + ": gpu_warp_rows takes the root's gpu_rows of as many "
                                        "threads a row, several rows a block, a point a lane a step (no gpu_vector)");
        }
        if (whole_pipeline && p.row_of >= 0 && plans[p.row_of].gpu_warp_rows && !p.inlined &&
            (!warp_row_member(r, plans[p.row_of].gpu_warp_rows) || p.gpu_vector)) {
            throw std::invalid_argument("schedule: " + region + " is computed per row of a warp's lanes (gpu_warp_rows), "
                                        "and is no elementwise region, nor a reduction over the row that rfactors or "
                                        "whose float sum has the row's lanes; or it takes a gpu_vector");
        }
        const bool in_rows = p.gpu_rows || p.row_of >= 0;
        if (p.gpu_vector && (!(p.gpu_threads_x || p.gpu_rows) ||
                             (in_rows && (r.accumulator.defined() || p.gpu_rows_per_thread > 0)))) {
            throw std::invalid_argument("schedule: " + region + ": gpu_vector is for a region tiled on the GPU (gpu_tile), "
                                        "or an elementwise region of rows (gpu_rows, or computed per row), one row a thread");
        }
        if (p.gpu_stage_transposed && (!p.gpu_threads_y || p.row_of >= 0)) {
            throw std::invalid_argument("schedule: " + region + ": gpu_stage_transposed is for a region in blocks of "
                                        "two axes (gpu_tile x by y), computed at the root");
        }
        if (p.gpu_stage_operands &&
            (!p.gpu_threads_y || p.row_of >= 0 || p.inlined || staged_operand_bytes(r, p) > kMaxStagedOperandBytes)) {
            throw std::invalid_argument("schedule: " + region + ": gpu_stage_operands is for a product in blocks of two "
                                        "axes (gpu_tile x by y), computed at the root, whose tiles of its operands "
                                        "over the whole contraction fit in " + std::to_string(kMaxStagedOperandBytes) +
                                        " bytes of shared memory");
        }
        if (whole_pipeline && p.gpu_rows && p.gpu_threads_x) {
            throw std::invalid_argument("schedule: " + region + " runs in blocks of rows or in tiles, not both");
        }
        if (whole_pipeline && on_gpu && !p.inlined && !p.gpu_threads_x && !p.gpu_rows) {
            // Halide would compute it on the host, from buffers that live on the GPU.
            throw std::invalid_argument("schedule: " + region + " is not on the GPU, and other regions are: " +
                                        "a pipeline runs wholly on the GPU or wholly on the CPU");
        }
        if (whole_pipeline && r.library_call && lowered.for_gpu && !p.gpu_threads_x && !p.inlined) {
            throw std::invalid_argument("schedule: " + region + " calls cuBLAS: its copy out of the call is a GPU kernel "
                                        "(gpu_tile) or inlined into its readers");
        }
        if (r.op_class == OpClass::Matmul && r.vars.size() >= 2 && !r.library_call && !p.tile_n && !p.gpu_threads_x) {
            throw std::invalid_argument("schedule: " + region + " is a matrix product without a register tile");
        }
    }
    return plans;
}

}  // namespace hc
