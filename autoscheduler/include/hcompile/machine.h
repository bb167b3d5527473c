// The machine the cost model predicts for: core count and vector width from the target, rates
// measured once per machine by a short probe (three small Halide pipelines) and cached in a
// file under $HCOMPILE_CACHE_DIR (default ~/.cache/hcompile).
#pragma once

#include <Halide.h>

#include <string>
#include <utility>
#include <vector>

#include "hcompile/decisions.h"

namespace hc {

struct MachineModel {
    int cores = 2;
    int vector_bits = 256;                 // of the target's widest vector registers
    double vector_ops_per_second = 4e9;    // one core, dependent-free vector arithmetic
    double core_bandwidth = 8e9;           // bytes/s one core streams (read + write)
    double machine_bandwidth = 12e9;       // bytes/s all cores stream together
    double parallel_launch_seconds = 5e-6; // one parallel loop: waking the pool and joining it
    // Bytes per core that stay in cache (not probed: L2-sized); a region whose traffic fits runs
    // at cache bandwidth, kCacheBandwidthFactor times the memory's.
    double cache_bytes_per_core = 1 << 20;
    static constexpr double kCacheBandwidthFactor = 4;
    // The learned correction (`hcompile db fit`, fitted on this machine's tuning records): a
    // log-weight per decision choice; the search ranks a region's candidates by the prediction
    // times exp(the sum of its decisions' weights). Empty: none. Not part of the probe's cache.
    std::vector<std::pair<Choice, double>> choice_weights;

    std::string print() const;
    std::string serialize() const;
    static bool parse(const std::string &text, MachineModel *out);
};

// Fixed rates for tests and golden decision lists (a 2-core AVX2 machine).
MachineModel reference_machine();

// This machine for `target`: read from the cache file, or measured (about half a second) and
// written there. A probe that fails gives the reference rates with this machine's cores.
MachineModel machine_model(const Halide::Target &target);

// Runs the probe now (no cache).
MachineModel measure_machine(const Halide::Target &target);

}  // namespace hc
