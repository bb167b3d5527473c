#include "hcompile/compile.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "hcompile/analysis.h"
#include "hcompile/apply_schedule.h"
#include "hcompile/baseline_schedule.h"
#include "hcompile/blas.h"
#include "hcompile/cublas.h"
#include "hcompile/cuda_device_probe.h"
#include "hcompile/fusion.h"
#include "hcompile/gpu_cost_model.h"
#include "hcompile/gpu_schedule.h"
#include "hcompile/halide_peers.h"
#include "hcompile/in_place.h"
#include "hcompile/library_calls.h"
#include "hcompile/machine.h"
#include "hcompile/passes.h"
#include "hcompile/printer.h"
#include "hcompile/search.h"
#include "hcompile/symbols.h"
#include "hcompile/target.h"
#include "hcompile/verify.h"

namespace hc {

namespace {

// Times and logs one step of the driver.
class StepTimer {
public:
    explicit StepTimer(CompileReport &report) : report_(report) {}
    template <typename F>
    auto operator()(const std::string &step, F &&fn) {
        auto start = std::chrono::steady_clock::now();
        auto finish = [&] {
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            report_.step_ms.emplace_back(step, ms);
            spdlog::debug("hcompile: {} took {:.2f} ms", step, ms);
        };
        if constexpr (std::is_void_v<decltype(fn())>) {
            fn();
            finish();
        } else {
            auto result = fn();
            finish();
            return result;
        }
    }

private:
    CompileReport &report_;
};

// Runs `write(path)` on a private temporary file, which is removed afterwards (Halide writes
// statements and objects only to files); returns the file's contents when `read_back` is set.
template <typename Write>
std::string through_temporary_file(const char *path_template_in, bool read_back, Write &&write) {
    std::string path = path_template_in;
    int fd = mkstemp(path.data());
    if (fd < 0) throw std::runtime_error("could not create a temporary file " + path);
    close(fd);
    std::string text;
    try {
        write(path);
        if (read_back) {
            std::ifstream in(path);
            text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
    } catch (...) {
        std::remove(path.c_str());
        throw;
    }
    std::remove(path.c_str());
    return text;
}

// For logs and debug dumps only: a statement that cannot be written says so, and the compile goes on.
std::string lowered_statement(LoweredPipeline &lowered, const std::vector<Halide::Argument> &args,
                              const Halide::Target &target) {
    try {
        return through_temporary_file("/tmp/hcompile_stmt_XXXXXX", true, [&](const std::string &path) {
            lowered.pipeline.compile_to_lowered_stmt(path, args, Halide::StmtOutputFormat::Text, target);
        });
    } catch (const std::runtime_error &e) {
        return std::string("(no lowered statement: ") + e.what() + ")";
    }
}

// Generates `target`'s machine code for the pipeline, then discards it.
void compile_and_discard(LoweredPipeline &lowered, const std::vector<Halide::Argument> &args,
                         const Halide::Target &target) {
    through_temporary_file("/tmp/hcompile_object_XXXXXX", false, [&](const std::string &path) {
        lowered.pipeline.compile_to_object(path, args, "kernel", target);
    });
}

// Compile-time bound for a whole graph, in op units (fusion.h). Halide lowers a pipeline into
// one function and LLVM's time on it grows faster than its size: measured on 2 cores, 300
// unrolled loop iterations of np.tanh on a scalar (3300 units) compile in 6 s, 1000 iterations
// of np.exp (11000 units) in 47 s. Past the bound the graph runs as Python, said once in the
// graph-break log, rather than compiling for minutes.
constexpr int64_t kMaxGraphUnits = 4096;

// Compile-time bound on stored regions: LLVM's time grows with the stages of a pipeline, and a
// stage's vector loop with guarded tails is the costly part (measured on 2 cores: a loop storing
// 92 rows one by one into a 23 x 31 array, 103 stages, took 27 s with AVX-512 vectors, 15 s with
// AVX2's, 3.3 s unvectorized; 29 stages of a local Laplacian filter take 2 s). Past the bound
// the graph runs as Python, said once in the graph-break log.
constexpr int kMaxRegions = 64;

void check_region_budget(const Graph &graph, const Partition &partition) {
    int stages = 0;
    for (const Region &r : partition.regions) {
        // A stencil intermediate is inlined unless stencil fusion computes it in a tile: no stage.
        const bool inlined = marks(partition.optional, r.root) && !marks(partition.stored_by_default, r.root);
        stages += op_class(graph.node(r.root).kind) != OpClass::Leaf && !inlined;
    }
    if (stages > kMaxRegions) {
        throw GraphError("graph past the compile-size budget: " + std::to_string(stages) +
                         " stored stages (at most " + std::to_string(kMaxRegions) +
                         "; a loop storing into an array element by element or row by row is the usual " +
                         "cause), so it is not compiled");
    }
}

// Variants of the chosen schedule the report lists (apps/cost_model_ranking.py times them).
constexpr int kReportedVariants = 24;
// The GPU cost model replaces the GPU rule's list with an alternative only where it predicts it
// this much faster (its ranking of near-equal lists is noise: apps/gpu_cost_model_ranking.py).
constexpr double kGpuModelMargin = 0.9;

// `fixed` (the GPU rule's list, or the one given) predicted by the GPU cost model on the caller's
// device, its alternatives one region away ranked (report.variants; report.candidates for
// max-autotune to measure); the model's favourite replaces the rule's list where it predicts it
// kGpuModelMargin faster. Throws std::invalid_argument for a list that does not fit.
Schedule predicted_gpu_schedule(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const Schedule &fixed,
                                const CompileOptions &options, CompileReport &report) {
    std::string probe_failure;
    const GpuDevice device = cuda_device_model(options.cuda_device, &probe_failure);
    const GpuPrediction predicted = predict_gpu(lowered, analysis, fixed, device);
    report.analysis += "device: " + device.print() + "\n" + (probe_failure.empty() ? "" : "(" + probe_failure + ")\n") +
                       predicted.print(lowered);
    report.predicted_seconds = predicted.seconds;
    if (options.schedule) return fixed;
    report.variants = gpu_schedule_candidates(lowered, fixed, kReportedVariants, analysis, device);
    Schedule chosen = fixed;
    if (!report.variants.empty() && report.variants[0].second < kGpuModelMargin * predicted.seconds) {
        chosen = report.variants[0].first;
        report.predicted_seconds = report.variants[0].second;
        report.analysis += "the model's favourite alternative replaces the rule's list: " +
                           predict_gpu(lowered, analysis, chosen, device).print(lowered);
    }
    if (options.tuning_candidates > 0) {
        report.candidates = gpu_schedule_candidates(lowered, chosen, options.tuning_candidates, analysis, device);
    }
    return chosen;
}

void check_compile_budget(const Graph &graph) {
    int64_t units = 0;
    for (const Node &n : graph.nodes()) units += op_units(n);
    if (units > kMaxGraphUnits) {
        throw GraphError("graph past the compile-size budget: " + std::to_string(units) + " op units (at most " +
                         std::to_string(kMaxGraphUnits) + "; an unrolled loop of " +
                         "array code is the usual cause), so it is not compiled");
    }
}

// The arrays of `graph` whose bytes depend on the symbols, each once, for the dispatcher's
// check of a call's sizes against Halide's buffer limit (kernel.h).
std::vector<SymbolicArrayBytes> symbolic_arrays(const Graph &graph, const SymbolicExtents &symbols) {
    std::vector<SymbolicArrayBytes> arrays;
    for (const Node &n : graph.nodes()) {
        SymbolicArrayBytes a;
        a.static_bytes = std::max(1, dtype_bits(n.dtype) / 8);  // a bool is a byte
        for (int64_t extent : n.shape) {
            int k = symbols.symbol_of(extent);
            if (k < 0) {
                a.static_bytes *= extent;
            } else {
                a.symbol_terms.emplace_back(k, symbols.offset_of(extent));
            }
        }
        bool seen = std::any_of(arrays.begin(), arrays.end(), [&](const SymbolicArrayBytes &b) {
            return b.static_bytes == a.static_bytes && b.symbol_terms == a.symbol_terms;
        });
        if (!a.symbol_terms.empty() && !seen) arrays.push_back(std::move(a));
    }
    return arrays;
}

// Whether the call compiled for (`sizes` of the symbols; none: any call) has at least what a
// schedule needs of each (`least`, least_symbol_sizes).
bool fits_symbol_sizes(const std::vector<int64_t> &least, const std::vector<int64_t> &sizes) {
    for (size_t k = 0; k < least.size() && k < sizes.size(); ++k) {
        if (sizes[k] < least[k]) return false;
    }
    return true;
}

// The shapes Halide's autoschedulers are told to expect: the graph's (static: the call's).
PipelineEstimates estimates_for(const Graph &graph, const LoweredPipeline &lowered) {
    PipelineEstimates e;
    for (const LoweredInput &in : lowered.inputs) {
        for (const Node &n : graph.nodes()) {
            if (n.kind == OpKind::Input && n.int_attr("arg") == in.arg_index) {
                e.input_shapes.push_back(n.shape);
                break;
            }
        }
    }
    for (NodeId id : graph.outputs()) e.output_shapes.push_back(graph.node(id).shape);
    return e;
}

}  // namespace

Halide::Target resolve_target(const std::string &name) {
    return jit_target(name);
}

KernelPtr compile_graph(const Graph &input, const CompileOptions &options, CompileReport *report_out) {
    CompileReport local;
    CompileReport &report = report_out ? *report_out : local;
    StepTimer step(report);
    if (!options.autoscheduler.empty() && options.autoscheduler != "hcompile" && options.autoscheduler != "baseline" &&
        !is_halide_autoscheduler(options.autoscheduler)) {
        throw std::invalid_argument("unknown autoscheduler '" + options.autoscheduler +
                                    "' (hcompile, baseline, Adams2019, Mullapudi2016, Li2018 or Anderson2021)");
    }
    Halide::Target target = ieee_target(resolve_target(options.target));
    report.target = target.to_string();
    report.captured_graph = print_graph(input);

    // The lowering order, one step per line.
    step("verify", [&] { verify(input); });
    Graph graph = step("bind_extent_values", [&] { return bind_extent_values(input, options.extent_values); });
    graph = step("replace_empty_arrays", [&] { return replace_empty_arrays(graph); });
    graph = step("widen_float16", [&] { return widen_float16(graph); });
    graph = step("fold_constants", [&] { return fold_constants(graph); });
    graph = step("eliminate_common_subexpressions", [&] { return eliminate_common_subexpressions(graph); });
    // Algorithm choices (sums of products in one accumulator, BLAS calls) are hcompile's own:
    // the baseline heuristic and Halide's peers get the graph as written (Adams2019 scheduled
    // a 9-product matmul_sum 10x slower than the nine products it was given apart).
    const bool ours = options.autoscheduler.empty() || options.autoscheduler == "hcompile";
    graph = step("combine_matmul_sums", [&] { return ours ? combine_matmul_sums(graph) : graph; });
    const bool gpu = target.has_gpu_feature();
    graph = step("split_reductions_for_gpu", [&] { return gpu ? split_reductions_for_gpu(graph, options.symbol_values) : graph; });
    graph = step("eliminate_dead_code", [&] { return eliminate_dead_code(graph); });
    step("verify_optimized", [&] { verify(graph); });
    step("check_compile_budget", [&] { check_compile_budget(graph); });
    SymbolicExtents symbols = step("resolve_symbolic_extents", [&] {
        return resolve_symbolic_extents(graph, options.symbol_values, options.symbol_sources);
    });
    Partition partition = step("partition_into_regions", [&] { return partition_into_regions(graph, gpu); });
    step("check_region_budget", [&] { check_region_budget(graph, partition); });
    // On the GPU, inputs live in device memory: products there call cuBLAS, not the host's BLAS.
    std::vector<NodeId> library_calls = step("choose_library_calls", [&] {
        return choose_library_calls(graph, ours && (gpu ? cublas_available() : blas_available()), gpu, &symbols);
    });
    LoweredPipeline lowered = step("lower_to_halide", [&] {
        return lower_to_halide(graph, partition, options.layouts, symbols, library_calls, gpu, options.fast_math);
    });
    if (!library_calls.empty()) {
        const Halide::JITExtern gemm = gpu ? Halide::JITExtern(&hc_cublas_gemm) : Halide::JITExtern(&hc_blas_gemm);
        lowered.pipeline.set_jit_externs({{gpu ? kCublasGemmName : kBlasGemmName, gemm}});
    }
    if (is_halide_autoscheduler(options.autoscheduler) && !symbols.values.empty()) {
        // Their schedules are for the sizes estimated; measured on symbolic extents: Li2018's
        // tiles read before the start of a 2-row input, and Adams2019's plugin ends the process
        // with an internal error nothing catches. The frontend compiles the exact shapes instead.
        throw std::invalid_argument("Halide's " + options.autoscheduler + " autoscheduler is not given symbolic extents");
    }
    const bool empty_array = std::any_of(graph.nodes().begin(), graph.nodes().end(), [](const Node &n) {
        return std::find(n.shape.begin(), n.shape.end(), 0) != n.shape.end();
    });
    if (is_halide_autoscheduler(options.autoscheduler) && !empty_array) {
        // A peer for comparisons: Halide's own autoscheduler on this very pipeline. (An empty
        // array, estimated as one element, leaves it tiles past the array's end: Li2018 wrote
        // an empty output at index 0. Nothing to compare there: hcompile's own schedule runs it.)
        report.schedule = "Halide's " + options.autoscheduler + " autoscheduler (its schedule source below)\n";
        report.schedule_source = step("apply_halide_autoscheduler", [&] {
            return apply_halide_autoscheduler(lowered, target, options.autoscheduler, estimates_for(graph, lowered),
                                              options.autoscheduler_params);
        });
    } else {
        // The rule's list (or the one given), predicted by the GPU cost model on the caller's
        // device, with the alternatives one region away ranked by it (max-autotune measures them).
        auto choose_gpu_schedule = [&] {
            const PipelineAnalysis analysis = analyze_pipeline(lowered);
            Schedule fixed = options.schedule ? *options.schedule : gpu_schedule(lowered, analysis);
            report.analysis = options.schedule ? "GPU target: the list given\n" : "GPU target: the GPU rule (gpu_schedule.h)\n";
            try {
                return predicted_gpu_schedule(lowered, analysis, fixed, options, report);
            } catch (const std::invalid_argument &e) {
                // A list the directives refuse: apply_schedule says why, below.
                report.analysis += std::string("GPU cost model: no prediction (") + e.what() + ")\n";
                return fixed;
            }
        };
        report.decisions = step("choose_schedule", [&] {
            if (gpu) return choose_gpu_schedule();
            if (options.schedule) return *options.schedule;
            if (options.autoscheduler == "baseline") return baseline_schedule(lowered, target);
            PipelineAnalysis analysis = analyze_pipeline(lowered);
            MachineModel machine = machine_model(target);
            for (const auto &[choice, weight] : options.choice_weights) {
                machine.choice_weights.emplace_back(choice_from_name(choice), weight);
            }
            SearchResult found = search_schedule(lowered, analysis, machine, target);
            report.analysis = analysis.print() + "machine: " + machine.print() + "\n" + found.print() + "\n";
            if (!machine.choice_weights.empty()) {
                report.analysis += "ranked with the learned correction (" + std::to_string(machine.choice_weights.size()) +
                                   " choice weights, hcompile db fit)\n";
            }
            report.variants = schedule_variants(lowered, analysis, machine, target, found.schedule, kReportedVariants);
            report.predicted_seconds = found.predicted_seconds;
            if (options.tuning_candidates > 0) {
                report.candidates = schedule_variants(lowered, analysis, machine, target, found.schedule,
                                                      options.tuning_candidates, VariantPick::BestPerRegion);
            }
            return found.schedule;
        });
        report.symbol_least = least_symbol_sizes(lowered, report.decisions, symbols.values.size());
        if (!fits_symbol_sizes(report.symbol_least, options.symbol_sizes)) {
            // Blocks of more rows than this call has: the entry for the calls below them runs
            // a row a block (a larger call compiles the entry for them).
            lowered.symbolic_row_blocks = false;
            report.symbol_below = report.symbol_least;
            report.decisions = step("choose_schedule_below_row_blocks", choose_gpu_schedule);
            report.symbol_least = least_symbol_sizes(lowered, report.decisions, symbols.values.size());
        }
        report.schedule = print_schedule(report.decisions, &lowered);
        if (is_halide_autoscheduler(options.autoscheduler)) {
            report.schedule = "Halide's " + options.autoscheduler + " autoscheduler was not run (an empty array): " +
                              "hcompile's schedule\n" + report.schedule;
        }
        report.schedule_source = step("apply_schedule", [&] { return apply_schedule(lowered, report.decisions); });
    }

    std::vector<Halide::Argument> args;
    auto kernel = std::make_shared<Kernel>();
    for (const LoweredInput &in : lowered.inputs) {
        args.push_back(in.param);
        kernel->inputs.push_back({in.arg_index, in.dtype, in.param.dimensions()});
    }
    for (const LoweredScalar &s : lowered.scalars) {
        args.push_back(s.param);
        kernel->scalars.push_back(KernelScalar::of(s.dtype, s.value));
    }
    for (NodeId id : graph.outputs()) {
        KernelOutput out{graph.node(id).dtype, graph.node(id).shape};
        out.offsets.assign(out.shape.size(), 0);
        for (size_t d = 0; d < out.shape.size(); ++d) {
            int k = symbols.symbol_of(out.shape[d]);
            if (k < 0) continue;
            out.offsets[d] = symbols.offset_of(out.shape[d]);
            out.shape[d] = -1 - k;
        }
        kernel->outputs.push_back(out);
    }
    for (const SymbolSource &source : symbols.sources) kernel->symbol_sources.emplace_back(source.arg, source.axis);
    kernel->symbolic_arrays = symbolic_arrays(graph, symbols);
    if (options.want_lowered_stmt) {
        report.lowered_stmt = step("lowered_stmt", [&] { return lowered_statement(lowered, args, target); });
    }
    kernel->callable = step("jit_compile", [&] { return lowered.pipeline.compile_to_callable(args, target); });
    if (gpu) {
        kernel->device_interface =
            Halide::get_device_interface_for_device_api(Halide::DeviceAPI::CUDA, target, "hcompile kernel");
        // (Halide's autoschedulers leave the decisions empty: their kernels keep Halide's cap.)
        if (!report.decisions.empty()) kernel->gpu_registers = report.gpu_registers = gpu_register_cap(lowered, report.decisions);
        if (report.gpu_registers) {
            report.schedule += "the pipeline's kernels: at most " + std::to_string(report.gpu_registers) + " registers a thread\n";
        }
    }
    for (const std::string &name : options.also_compile_for) {
        step("also_compile_for " + name, [&] { compile_and_discard(lowered, args, ieee_target(parse_target(name))); });
    }
    std::vector<int> alias = step("outputs_written_in_place", [&] {
        return outputs_written_in_place(graph, lowered, options.writebacks, options.layouts);
    });
    for (size_t j = 0; j < alias.size(); ++j) {
        kernel->outputs[j].alias_arg = alias[j];
        if (alias[j] >= 0) report.in_place_outputs.push_back(static_cast<int>(j));
    }

    report.optimized_graph = print_graph(graph);
    report.regions = print_partition(graph, partition);
    return kernel;
}

}  // namespace hc
