#include "hcompile/gpu_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "region_plan.h"

namespace hc {

namespace {

// Points a thread keeps loads in flight for in a loop across a row (gpu_directives.cpp unrolls
// those loops by 8).
constexpr double kRowUnroll = 8;
// Shared memory a block takes beyond its rows: a reduction's partial results and the runtime's.
constexpr int64_t kSharedPerReduction = 1024;
// Cycles a thread waits between dependent arithmetic instructions: a multiprocessor's 128 lanes
// need 16 resident warps to stay busy.
constexpr double kCyclesPerDependentOp = 4;
// Instructions per op the analysis counts (analysis.cpp weighs a division as 8 adds, and counts
// casts, reinterprets and selects the GPU gets for free or fuses): tinyops, compute-bound under
// NumPy-exact math, counts 320 ops a point and ran 0.270 ms for 8192² on an H200 (9.0e9 lane
// instructions at 132 x 128 lanes x 1.98 GHz: 135 a point).
constexpr double kInstructionsPerCountedOp = 0.42;
// A warp reading a row each of its threads walks serially (a thread per output of a reduction
// over the innermost axis): each 4-byte load takes a 32-byte sector.
constexpr double kUncoalescedEfficiency = 1.0 / 8;

// A warp reading an array transposed (its threads' elements a row apart), unstaged: x.T * 2 + 1
// over 8192² took 0.285 ms on an H200 where the copy's bandwidth moves its bytes in 0.130, the
// transposed half of them at about 0.3 of it.
constexpr double kTransposedEfficiency = 0.3;

// How a region takes part in the pipeline's kernels.
enum class Role { Kernel, RowMember, Inlined, Library };

struct Work {
    double ops = 0;
    double input_bytes = 0;                  // from the pipeline's input arrays
    std::map<int, double> stored_reads;      // stored region -> bytes read from it
};

Role role_of(const RegionFunc &r, const RegionPlan &plan) {
    if (r.library_call) return Role::Library;
    if (plan.row_of >= 0) return Role::RowMember;
    if (plan.inlined || (r.optional && !r.stored_by_default && !plan.placed)) return Role::Inlined;
    return Role::Kernel;
}

// Region `region` evaluated at `points` points (its reduction domain `rpoints` times each) and at
// `calls` places (arithmetic: an inlined region is recomputed at each), added to `work`; its
// inlined producers recursively. Reads of regions in `kernel_members` stay on the chip.
void add_work(const PipelineAnalysis &analysis, const std::vector<Role> &roles, const std::vector<bool> &kernel_members,
              int region, double points, double calls, Work &work, int depth = 0) {
    const StageAnalysis &s = analysis.stages[region];
    const double rpoints = static_cast<double>(s.reduction_points);
    const bool reduces = s.reduction_points > 1 || s.ops_per_reduction_point > 0;
    work.ops += calls * (s.ops_per_point + (reduces ? rpoints * s.ops_per_reduction_point : 0));
    double producer_bytes = 0, producer_rbytes = 0;
    for (size_t j = 0; j < s.producers.size(); ++j) {
        const int p = s.producers[j];
        producer_bytes += s.producer_bytes[j];
        producer_rbytes += s.producer_reduction_bytes[j];
        const double read = points * (s.producer_bytes[j] + rpoints * s.producer_reduction_bytes[j]);
        const double places = calls * (s.producer_calls[j] + rpoints * s.producer_reduction_calls[j]);
        if (kernel_members[p]) continue;
        if (roles[p] == Role::Inlined && depth < 32) {
            const double scale = s.producer_bytes[j] + s.producer_reduction_bytes[j] > 0
                                     ? read / std::max(1.0, static_cast<double>(analysis.stages[p].store_bytes_per_point))
                                     : points;
            add_work(analysis, roles, kernel_members, p, scale, places, work, depth + 1);
        } else {
            work.stored_reads[p] += read;
        }
    }
    work.input_bytes += points * (std::max(0.0, s.load_bytes_per_point - producer_bytes) +
                                  rpoints * std::max(0.0, s.load_bytes_per_reduction_point - producer_rbytes));
}

double stored_bytes(const StageAnalysis &s) { return static_cast<double>(s.points) * s.store_bytes_per_point; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / std::max<int64_t>(b, 1); }

// Blocks and threads per block of kernel `root` under its plan.
void launch_shape(const RegionFunc &r, const RegionPlan &plan, const StageAnalysis &s, GpuKernelPrediction &k) {
    if (plan.gpu_rows > 0) {
        // A row root: a block per row of its innermost axis, or per block of rows; a reduction or a
        // point-rows root: a block per output, or per block of them.
        const int64_t rows = std::max<int64_t>(plan.gpu_rows_per_block, 1);
        // (A reduction with lanes, a float sum's or an arg reduction's, runs a thread a lane.)
        const int64_t lanes = r.accumulator.defined() ? reduction_lanes(r) : 0;
        k.threads = (lanes > 0 ? lanes : plan.gpu_rows) * rows;
        k.blocks = r.accumulator.defined() || r.point_rows
                       ? ceil_div(s.points, rows)
                       : std::max<int64_t>(1, s.points / std::max<int64_t>(r.extents[0] * rows, 1));
        return;
    }
    if (r.lane_parts && r.lane_parts->stored) {
        // Its reading kernel is its lanes' (a thread a lane and output); the levels and the
        // outputs' own kernel handle few values.
        k.threads = kLaneKernelThreads;
        k.blocks = ceil_div(s.points * r.lane_parts->lanes, k.threads);
        return;
    }
    if (plan.gpu_threads_x > 0 && !r.extents.empty()) {
        const int64_t vector = std::max<int64_t>(plan.gpu_vector, 1);
        const int64_t rows = std::max<int64_t>(plan.gpu_rows_per_thread, 1);
        k.threads = plan.gpu_threads_x * std::max<int64_t>(plan.gpu_threads_y, 1);
        k.blocks = ceil_div(r.extents[0], plan.gpu_threads_x * vector);
        size_t next = 1;
        if (plan.gpu_threads_y > 0 && r.extents.size() > 1) {
            k.blocks *= ceil_div(r.extents[1], plan.gpu_threads_y * rows);
            next = 2;
        }
        for (size_t i = next; i < r.extents.size(); ++i) k.blocks *= std::max<int64_t>(r.extents[i], 1);
        return;
    }
    k.threads = 1;   // a scalar, or a single thread
    k.blocks = 1;
}

// Points each thread has loads in flight for.
double points_in_flight(const RegionPlan &plan) {
    const double vector = std::max<int64_t>(plan.gpu_vector, 1);
    if (plan.gpu_rows > 0) return kRowUnroll * vector;
    return vector * std::max<int64_t>(plan.gpu_rows_per_thread, 1);
}

GpuKernelPrediction predict_kernel(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                                   const std::vector<RegionPlan> &plans, const std::vector<Role> &roles, int root,
                                   const GpuDevice &device) {
    const RegionFunc &r = lowered.regions[root];
    const StageAnalysis &s = analysis.stages[root];
    const RegionPlan &plan = plans[root];
    GpuKernelPrediction k;
    k.region = root;
    launch_shape(r, plan, s, k);

    std::vector<bool> members(lowered.regions.size(), false);
    members[root] = true;
    int reductions = r.accumulator.defined() ? 1 : 0;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        if (roles[i] != Role::RowMember || plans[i].row_of != root) continue;
        members[i] = true;
        const RegionFunc &m = lowered.regions[i];
        if (thread_rows(plan) || plan.gpu_warp_rows) continue;   // (a row in its threads' registers)
        if (m.accumulator.defined()) {
            ++reductions;
            k.shared_bytes += kSharedPerReduction;
        } else if (!m.extents.empty()) {
            k.shared_bytes += m.extents[0] * point_bytes(m.func);   // a row of it per block's row
        }
    }
    k.shared_bytes *= std::max<int64_t>(plan.gpu_rows_per_block, 1);
    if (r.accumulator.defined() && plan.gpu_rows > 0 && !plan.gpu_warp_rows) k.shared_bytes += kSharedPerReduction;
    if (plan.gpu_stage_transposed) {   // each array's tile, its rows padded by one (gpu_directives.cpp)
        const int64_t rows = plan.gpu_threads_y * std::max<int64_t>(plan.gpu_rows_per_thread, 1);
        k.shared_bytes += static_cast<int64_t>(s.transposed_bytes_per_point) * plan.gpu_threads_x * (rows + 1);
    }
    // A staged product's tiles of a and b over its contraction.
    const int64_t staged_bytes = plan.gpu_stage_operands ? staged_operand_bytes(r, plan) : 0;
    k.shared_bytes += staged_bytes;

    // Each computed region's work; a stored array read more than once in the kernel (a row's
    // input by each pass over the row) comes from DRAM once, from cache after.
    Work work;
    double widest_input_pass = 0;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        if (!members[i]) continue;
        const double points = static_cast<double>(analysis.stages[i].points);
        const double before = work.input_bytes;
        add_work(analysis, roles, members, static_cast<int>(i), points, points, work);
        widest_input_pass = std::max(widest_input_pass, work.input_bytes - before);
    }
    k.ops = work.ops;
    k.dram_bytes = stored_bytes(s) + widest_input_pass;
    k.cache_bytes = work.input_bytes - widest_input_pass;
    for (const auto &[producer, bytes] : work.stored_reads) {
        const double once = std::min(bytes, stored_bytes(analysis.stages[producer]));
        k.dram_bytes += once;
        k.cache_bytes += bytes - once;
    }

    if (plan.gpu_stage_operands) {
        // A staged product reads its operands' tiles from memory once a block; its contraction's
        // reads come from shared memory, not from the caches (a register tile's reuse).
        k.dram_bytes = stored_bytes(s) + static_cast<double>(k.blocks) * static_cast<double>(staged_bytes);
        k.cache_bytes = 0;
    }
    if (k.blocks <= 0 || s.points <= 0) {
        k.seconds = device.kernel_gap_seconds;   // an empty array: nothing but the launch
        return k;
    }
    // Occupancy: blocks resident on a multiprocessor, within its thread, block and shared limits.
    const int64_t threads = std::max<int64_t>(k.threads, 1);
    int64_t per_sm = std::min<int64_t>(device.max_blocks_per_multiprocessor, device.max_threads_per_multiprocessor / threads);
    if (k.shared_bytes > 0) per_sm = std::min<int64_t>(per_sm, device.shared_bytes_per_multiprocessor / k.shared_bytes);
    if (per_sm < 1) {
        k.seconds = std::numeric_limits<double>::infinity();   // does not fit a multiprocessor
        return k;
    }
    const double sms = device.multiprocessors;
    const double capacity = sms * static_cast<double>(per_sm);
    const double waves = std::ceil(static_cast<double>(k.blocks) / capacity);
    const double resident = std::min(static_cast<double>(k.blocks), capacity);
    k.blocks_per_multiprocessor = resident / sms;
    const double resident_threads = resident * static_cast<double>(threads);

    // Memory: the bytes the resident threads keep in flight, one DRAM round trip each (Little's
    // law), up to the copy bandwidth; a fraction of it where a warp's loads are not coalesced.
    const double read_per_point = s.points > 0 ? (k.dram_bytes + k.cache_bytes) / static_cast<double>(s.points) : 0;
    const double in_flight = resident_threads * points_in_flight(plan) * std::max(read_per_point, 1.0);
    double bandwidth = std::min(device.copy_bandwidth, in_flight / device.memory_latency_seconds);
    // (Not where a thread reads its short row a vector a step, nor stored lanes: neighbouring
    // threads read neighbouring elements. A row group a thread a row: only without vectors.)
    const bool stored_lanes = r.lane_parts && r.lane_parts->stored;
    if ((r.accumulator.defined() && plan.gpu_rows == 0 && r.reduces_innermost && s.reduction_points > 1 &&
         !stored_lanes && !thread_reads_row_in_vectors(r)) ||
        (thread_rows(plan) && plan.gpu_vector < kVectorReadLanes)) {
        bandwidth *= kUncoalescedEfficiency;
    }
    k.memory_efficiency = bandwidth / device.copy_bandwidth;
    k.memory_seconds = (k.dram_bytes + k.cache_bytes / device.cache_bandwidth_factor) / bandwidth;
    if (!plan.gpu_stage_transposed && s.transposed_bytes_per_point > 0) {
        const double transposed = static_cast<double>(s.points) * s.transposed_bytes_per_point;
        k.memory_seconds += transposed * (1 / kTransposedEfficiency - 1) / bandwidth;
    }

    // Arithmetic: the device's lanes, or what the resident threads issue (one op per dependent-op
    // latency each) where they are too few to fill them; 64-bit values at the device's ratio.
    // (A staged product's register tile: each of a thread's points an accumulator of its own, that
    // many independent operations in flight; points_in_flight.)
    const double independent = plan.gpu_stage_operands ? points_in_flight(plan) : 1.0;
    double rate = std::min(device.lane_ops_per_second(),
                           resident_threads * independent * device.clock_hz / kCyclesPerDependentOp);
    if (s.widest_bits >= 64) rate /= std::max(device.single_to_double_ratio, 1);
    k.arithmetic_seconds = k.ops * kInstructionsPerCountedOp / std::max(rate, 1.0);

    // A row block's passes wait on each other (each reduction ends in a barrier): a DRAM round
    // trip per pass per wave of blocks. A thread a row reads its row once (its later passes from
    // registers or L1): one.
    // A warp's lanes a row likewise: no barrier, the row read once into its lanes' registers.
    const bool one_pass = thread_rows(plan) || plan.gpu_warp_rows > 0;
    k.latency_seconds = plan.gpu_rows > 0 ? waves * (one_pass ? 1 : reductions) * device.memory_latency_seconds : 0;
    k.seconds = device.kernel_gap_seconds + std::max(k.memory_seconds, k.arithmetic_seconds) + k.latency_seconds;
    // Stored lanes launch kernels of their own: their initial values, each level, the outputs'.
    if (stored_lanes) k.seconds += static_cast<double>(r.lane_parts->levels.size() + 2) * device.kernel_gap_seconds;
    return k;
}

// A cuBLAS product: its multiply-adds at the device's rate (fused multiply-adds of float32
// lanes; tensor cores for 16-bit types), or its operands' and result's bytes, the longer. The
// result is (batch..., M, N) in NumPy's order, the contraction K long; the second operand counted
// per batch (an attention's), an upper bound for a shared weight.
GpuKernelPrediction predict_library_call(const RegionFunc &r, const StageAnalysis &s, const GpuDevice &device) {
    GpuKernelPrediction k;
    k.region = s.region;
    const double n = r.extents.empty() ? 1 : static_cast<double>(std::max<int64_t>(r.extents[0], 1));
    const double m = r.extents.size() < 2 ? 1 : static_cast<double>(std::max<int64_t>(r.extents[1], 1));
    const double batch = static_cast<double>(s.points) / (n * m);
    const double depth = static_cast<double>(s.reduction_points);
    k.ops = 2.0 * static_cast<double>(s.points) * depth;
    double rate = 2 * device.lane_ops_per_second();
    if (s.type_bits <= 16) rate *= 8;
    if (s.widest_bits >= 64) rate /= std::max(device.single_to_double_ratio, 1);
    k.dram_bytes = batch * (m * depth + depth * n + m * n) * s.store_bytes_per_point;
    k.memory_efficiency = 1;
    k.memory_seconds = k.dram_bytes / device.copy_bandwidth;
    k.arithmetic_seconds = k.ops / rate;
    k.seconds = std::max(k.memory_seconds, k.arithmetic_seconds);
    return k;
}

}  // namespace

GpuPrediction predict_gpu(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const Schedule &schedule,
                          const GpuDevice &device) {
    const std::vector<RegionPlan> plans = plan_regions(lowered, schedule);
    std::vector<Role> roles;
    for (size_t i = 0; i < lowered.regions.size(); ++i) roles.push_back(role_of(lowered.regions[i], plans[i]));
    GpuPrediction out;
    int launches = 0, library_calls = 0;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const int region = static_cast<int>(i);
        if (roles[i] == Role::Library) {
            out.kernels.push_back(predict_library_call(lowered.regions[i], analysis.stages[i], device));
            ++library_calls;
            // A stored call's result is copied into its region's Func by a kernel of its own.
            if (!plans[i].inlined) {
                GpuKernelPrediction copy;
                copy.region = region;
                copy.dram_bytes = 2 * stored_bytes(analysis.stages[i]);
                copy.memory_efficiency = 1;
                copy.memory_seconds = copy.dram_bytes / device.copy_bandwidth;
                copy.seconds = device.kernel_gap_seconds + copy.memory_seconds;
                out.kernels.push_back(copy);
                ++launches;
            }
        } else if (roles[i] == Role::Kernel) {
            out.kernels.push_back(predict_kernel(lowered, analysis, plans, roles, region, device));
            ++launches;
        }
    }
    // The host's work per call (the dispatcher, Halide's runtime, each launch) overlaps the
    // device's: a call takes the longer of the two.
    out.host_seconds = device.call_seconds + launches * device.launch_seconds + library_calls * device.library_call_seconds;
    for (const GpuKernelPrediction &k : out.kernels) out.device_seconds += k.seconds;
    out.seconds = std::max(out.host_seconds, out.device_seconds);
    return out;
}

std::string GpuPrediction::print(const LoweredPipeline &lowered) const {
    std::ostringstream os;
    os << "GPU cost model: " << seconds * 1e6 << " us predicted (device " << device_seconds * 1e6 << " us, host "
       << host_seconds * 1e6 << " us)\n";
    for (const GpuKernelPrediction &k : kernels) {
        os << "  " << (lowered.regions[k.region].library_call ? "cuBLAS call" : "kernel") << " of region " << k.region
           << " (" << lowered.regions[k.region].func.name() << "): " << k.blocks << " blocks of " << k.threads << " threads";
        if (k.shared_bytes > 0) os << ", " << k.shared_bytes << " B shared";
        os << ", " << k.blocks_per_multiprocessor << " blocks/SM; " << k.dram_bytes / 1e6 << " MB DRAM + "
           << k.cache_bytes / 1e6 << " MB cache at " << static_cast<int>(100 * k.memory_efficiency)
           << "% of copy bandwidth, " << k.ops / 1e6 << " M lane ops: memory " << k.memory_seconds * 1e6
           << " us, arithmetic " << k.arithmetic_seconds * 1e6 << " us, latency " << k.latency_seconds * 1e6
           << " us, total " << k.seconds * 1e6 << " us\n";
    }
    return os.str();
}

std::string GpuDevice::print() const {
    std::ostringstream os;
    os << name << ": " << multiprocessors << " SMs (" << max_threads_per_multiprocessor << " threads, "
       << max_blocks_per_multiprocessor << " blocks, " << shared_bytes_per_multiprocessor / 1024 << " KiB shared each), "
       << clock_hz / 1e9 << " GHz, L2 " << l2_bytes / (1 << 20) << " MiB, copy " << copy_bandwidth / 1e12 << " TB/s"
       << (measured ? " (measured)" : "");
    return os.str();
}

}  // namespace hc
