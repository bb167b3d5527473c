// How many iterations of a parallel loop one task of Halide's thread pool runs: the one rule
// that the baseline and the search share for the grain of `parallel` and `parallel_update`.
#pragma once

#include <algorithm>
#include <cstdint>

namespace hc {

// Halide's pool hands a parallel loop out one iteration at a time, each claimed under a lock the
// workers share. A loop over thousands of short rows then spends more time claiming than working:
// measured on 2 cores (AMD EPYC, Halide 21), row sums of 2048 x 2048 floats took 0.31 ms with a
// task per row, 0.17 with 4 rows a task and 0.12 with 16 or more (one thread: 0.23-0.29).
// Eight tasks per core keep the claims rare and still even out a core that falls behind.
constexpr int64_t kTasksPerCore = 8;

// Wall time of one claim, as the cost model charges it: (0.31 - 0.12) ms / 2048 claims above.
constexpr double kTaskClaimSeconds = 0.09e-6;

// Iterations of a parallel loop over `axis` of `extent`: over vectors of `width` where the
// loop is axis 0 vectorized (across outputs), else one per element of the axis.
inline int64_t parallel_iterations(int64_t extent, int axis, int64_t width) {
    const int64_t step = axis == 0 ? std::max<int64_t>(width, 1) : 1;
    return (std::max<int64_t>(extent, 0) + step - 1) / step;
}

// Iterations per task for a parallel loop of `iterations` on `cores` cores (1: a task each).
inline int64_t parallel_grain(int64_t iterations, int64_t cores) {
    return std::max<int64_t>(1, iterations / (std::max<int64_t>(cores, 1) * kTasksPerCore));
}

// The tasks a loop of `iterations` runs in at `grain` iterations each (a grain of 0 is 1).
inline int64_t parallel_tasks(int64_t iterations, int64_t grain) {
    grain = std::max<int64_t>(grain, 1);
    return (std::max<int64_t>(iterations, 0) + grain - 1) / grain;
}

}  // namespace hc
