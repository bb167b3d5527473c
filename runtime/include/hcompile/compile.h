// The compile driver: graph in, runnable kernel out. The whole order of steps is in one function.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hcompile/decisions.h"
#include "hcompile/graph.h"
#include "hcompile/kernel.h"
#include "hcompile/lowering.h"
#include "hcompile/symbols.h"

namespace hc {

struct CompileOptions {
    std::string target = "host";            // "host" or a Halide target string
    std::vector<InputLayout> layouts;       // by argument index
    // The schedule to apply (decisions.h), in place of the baseline's choice; regions are
    // numbered as the lowering orders them (CompileReport::schedule lists them). The first
    // level of the precedence "explicit option, then tuned record, then search".
    std::optional<Schedule> schedule;
    // "hcompile" (or empty) and "baseline": hcompile's schedule; "Adams2019", "Mullapudi2016",
    // "Li2018", "Anderson2021": Halide's own autoscheduler on the lowered pipeline (halide_peers.h), told to
    // expect the graph's shapes (static shapes only).
    std::string autoscheduler = "hcompile";
    // Parameters for a Halide autoscheduler, over halide_peers.h's defaults (the GPU's SM count
    // as "parallelism").
    std::vector<std::pair<std::string, std::string>> autoscheduler_params;
    bool want_lowered_stmt = false;         // also produce Halide's lowered statement (slower)
    // GPU kernels compute float32 exp, tanh and division with the GPU's approximate instructions
    // (a few ulp, lowering.h's add_gpu_fast_math_pass) instead of NumPy-exact; host code is exact
    // either way.
    bool fast_math = false;
    // (output index, argument index): the output holds the written argument's final contents;
    // where safe (in_place.h) the kernel writes it straight into the argument.
    std::vector<std::pair<int, int>> writebacks;
    // Targets to also generate machine code for, then discard: a code-generation failure for a
    // CPU this machine lacks (AVX-512 on an AVX2 host) shows up here, in tests and fuzzing.
    std::vector<std::string> also_compile_for;
    // Symbolic extents (symbols.h): the placeholder value of each, and the (argument, axis) a
    // call supplies it from; empty for static shapes.
    std::vector<int64_t> symbol_values;
    std::vector<SymbolSource> symbol_sources;
    std::vector<ExtentValue> extent_values;  // constants that are sizes of symbols
    // The call's size of each symbol (empty: unchecked). Where the schedule's blocks of rows need
    // more of one (CompileReport::symbol_least), the entry is for the calls below that instead
    // (CompileReport::symbol_below): a row a block.
    std::vector<int64_t> symbol_sizes;
    // How many alternatives to the search's list to report for max-autotune to measure
    // (CompileReport::candidates); 0: none.
    int tuning_candidates = 0;
    // The CUDA device whose measured parameters the GPU cost model predicts for (gpu_device.h);
    // -1: the reference device (compiling without one).
    int cuda_device = -1;
    // The learned correction the search ranks with (MachineModel::choice_weights), by choice name.
    std::vector<std::pair<std::string, double>> choice_weights;
};

// What each step produced, for explain(), logs and debug dumps.
struct CompileReport {
    std::string captured_graph;
    std::string optimized_graph;
    std::string regions;
    Schedule decisions;           // the schedule applied (decisions.h)
    std::string schedule;         // the decisions, one per line
    std::string schedule_source;  // the same as Halide C++ schedule directives
    std::string analysis;         // what the search saw and predicted (hcompile's own schedule)
    // Lists one region away from the search's, with their predicted seconds (search.h).
    std::vector<std::pair<Schedule, double>> variants;
    // The search's prediction for its list, and the alternatives max-autotune measures: lists
    // one region away, each region's best first (VariantPick::BestPerRegion), with predictions.
    double predicted_seconds = 0;
    std::vector<std::pair<Schedule, double>> candidates;
    std::string lowered_stmt;
    std::string target;
    std::vector<int> in_place_outputs;                    // outputs written into their argument
    int gpu_registers = 0;        // the register cap its CUDA module loads under (gpu_register_cap; 0: Halide's 64)
    // Per symbol, the least size the schedule serves (least_symbol_sizes; 0: any) and, where
    // non-zero, the size it serves only calls below (a larger call's entry runs blocks of rows
    // that need that many): the frontend's guard for the entry asks for both. Empty: none.
    std::vector<int64_t> symbol_least, symbol_below;
    std::vector<std::pair<std::string, double>> step_ms;  // (step, milliseconds), in order
};

// Throws GraphError for malformed graphs and Halide::CompileError (or other Halide errors) when
// Halide refuses the pipeline.
KernelPtr compile_graph(const Graph &graph, const CompileOptions &options, CompileReport *report = nullptr);

// The target a kernel is compiled for (see jit_target(): throws std::invalid_argument for
// targets whose code cannot run in this process).
Halide::Target resolve_target(const std::string &name);

}  // namespace hc
