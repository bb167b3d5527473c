#include "hcompile/decisions.h"

#include <stdexcept>
#include <tuple>

#include "hcompile/lowering.h"

namespace hc {

const char *choice_name(Choice c) {
    switch (c) {
    case Choice::ComputeRoot: return "compute_root";
    case Choice::ComputeAtRow: return "compute_at_row";
    case Choice::Vectorize: return "vectorize";
    case Choice::Parallel: return "parallel";
    case Choice::ParallelChunks: return "parallel_chunks";
    case Choice::StageOperand: return "stage_operand";
    case Choice::ReduceAcrossOutputs: return "reduce_across_outputs";
    case Choice::ReduceInLanes: return "reduce_in_lanes";
    case Choice::ParallelUpdate: return "parallel_update";
    case Choice::SumVector: return "sum_vector";
    case Choice::RegisterTile: return "register_tile";
    case Choice::CallLibrary: return "call_library";
    case Choice::TileRows: return "tile_rows";
    case Choice::ComputeAtTile: return "compute_at_tile";
    case Choice::Inline: return "inline";
    case Choice::GpuTile: return "gpu_tile";
    case Choice::GpuRows: return "gpu_rows";
    case Choice::GpuVector: return "gpu_vector";
    case Choice::GpuStageTransposed: return "gpu_stage_transposed";
    case Choice::GpuWarpRows: return "gpu_warp_rows";
    case Choice::GpuStageOperands: return "gpu_stage_operands";
    case Choice::GpuRegisters: return "gpu_registers";
    }
    return "?";
}

Choice choice_from_name(const std::string &name) {
    for (int c = 0; c <= static_cast<int>(Choice::GpuRegisters); ++c) {
        if (name == choice_name(static_cast<Choice>(c))) return static_cast<Choice>(c);
    }
    throw std::invalid_argument("unknown schedule choice '" + name + "'");
}

bool Decision::operator<(const Decision &o) const {
    return std::tie(region, choice, axis, value, value2) < std::tie(o.region, o.choice, o.axis, o.value, o.value2);
}

std::string to_string(const Decision &d, const LoweredPipeline *lowered) {
    std::string s = "region " + std::to_string(d.region);
    if (lowered && d.region >= 0 && d.region < static_cast<int>(lowered->regions.size())) {
        s += " (" + lowered->regions[d.region].func.name() + ")";
    }
    s += ": ";
    std::string axis = "axis " + std::to_string(d.axis);
    std::string value = std::to_string(d.value);
    std::string tasks = d.value > 1 ? " in tasks of " + value : "";
    switch (d.choice) {
    case Choice::ComputeRoot: return s + "compute_root";
    case Choice::ComputeAtRow: return s + "compute_at_row of region " + value;
    case Choice::Vectorize: return s + "vectorize " + axis + " by " + value;
    case Choice::Parallel: return s + "parallel " + axis + tasks;
    case Choice::ParallelChunks: return s + "parallel_chunks " + axis + " in " + value + " chunks";
    case Choice::StageOperand: return s + "stage_operand per vector";
    case Choice::ReduceAcrossOutputs: return s + "reduce_across_outputs " + axis + " by " + value;
    case Choice::ReduceInLanes: return s + "reduce_in_lanes of " + value;
    case Choice::ParallelUpdate: return s + "parallel_update " + axis + tasks;
    case Choice::SumVector: return s + "sum_vector of " + value;
    case Choice::RegisterTile: return s + "register_tile " + value + "x" + std::to_string(d.value2);
    case Choice::CallLibrary:
        return s + "call_library (BLAS) " +
               (d.value2 == 1 ? std::string("in one call") : "in " + std::to_string(d.value2) + " parallel tiles of " + axis) +
               ", operands stored in vectors of " + value;
    case Choice::TileRows:
        return s + "tile_rows " + axis + " in tiles of " + value + " (tiles in parallel" +
               (d.value2 ? ", its regions sliding down each tile's rows)" : ")");
    case Choice::ComputeAtTile: return s + "compute_at_tile of region " + value;
    case Choice::Inline: return s + "inline into its consumers";
    case Choice::GpuTile:
        return s + "gpu_tile in blocks of " + value + (d.value2 ? "x" + std::to_string(d.value2) : "") + " threads";
    case Choice::GpuRows:
        if (d.value == 1) return s + "gpu_rows: a thread a row, " + std::to_string(d.value2) + " rows a block";
        return s + "gpu_rows: a block of " + value + " threads per row" +
               (d.value2 > 1 ? ", " + std::to_string(d.value2) + " rows a block" : "");
    case Choice::GpuVector:
        return s + "gpu_vector of " + value + " points" + (d.value2 ? " x " + std::to_string(d.value2) + " rows" : "") +
               " per thread";
    case Choice::GpuStageTransposed: return s + "gpu_stage_transposed: arrays read transposed staged per block in shared memory";
    case Choice::GpuWarpRows:
        return s + "gpu_warp_rows: each row's " + value + " threads a warp's lanes, its members in their registers, "
                   "its reductions combined by shuffles";
    case Choice::GpuStageOperands:
        return s + "gpu_stage_operands: each block's tiles of the product's operands staged in shared memory";
    case Choice::GpuRegisters: return s + "gpu_registers: at most " + value + " registers a thread";
    }
    return s + "?";
}

std::string print_schedule(const Schedule &schedule, const LoweredPipeline *lowered) {
    std::string text;
    for (const Decision &d : schedule) text += to_string(d, lowered) + "\n";
    return text;
}

namespace {
size_t combine(size_t h, size_t part) { return h ^ (part + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
}  // namespace

size_t hash_value(const Decision &d) {
    size_t h = std::hash<int64_t>()(d.region);
    for (int64_t part : {int64_t(d.choice), int64_t(d.axis), d.value, d.value2}) h = combine(h, std::hash<int64_t>()(part));
    return h;
}

size_t hash_value(const Schedule &s) {
    size_t h = s.size();
    for (const Decision &d : s) h = combine(h, hash_value(d));
    return h;
}

}  // namespace hc
