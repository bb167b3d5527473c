// libautoschedule_hcompile.so: hcompile's autoscheduler as a Halide plugin named "HCompile", for
// pipelines written in Halide (generators: `-p libautoschedule_hcompile.so autoscheduler=HCompile`;
// Python: `hl.load_plugin(path)` then `Pipeline.apply_autoscheduler(target,
// hl.AutoschedulerParams("HCompile", {...}))`). The pipeline's Funcs become regions
// (halide_pipeline.h); the analysis, the search and apply_schedule() are hcompile's own.
//
// Parameters (autoscheduler.KEY=VALUE): parallelism (cores the schedule is for; default this
// machine's), variant (0: the search's list; N: its Nth alternative one region away, for tuning),
// db (a tuning database: its best record for this pipeline, target, versions and machine is used
// instead of the search; hcompile.tuning.tune_halide writes such records).
#include <Halide.h>

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "hcompile/analysis.h"
#include "hcompile/apply_schedule.h"
#include "hcompile/halide_pipeline.h"
#include "hcompile/machine.h"
#include "hcompile/plugin_params.h"
#include "hcompile/search.h"
#include "hcompile/tuning_records.h"
#include "hcompile/cost_model.h"

namespace hc {
namespace {

void autoschedule(const Halide::Pipeline &pipeline, const Halide::Target &target, const Halide::AutoschedulerParams &params,
                  Halide::AutoSchedulerResults *results) {
    const PluginParams options = parse_plugin_params(params.extra);
    if (target.has_gpu_feature()) {
        throw std::invalid_argument("HCompile autoscheduler: " + target.to_string() +
                                    " is a GPU target; its schedules are for the CPU (GPU schedules are not written yet)");
    }
    LoweredPipeline lowered = adapt_halide_pipeline(pipeline);
    const PipelineAnalysis analysis = analyze_pipeline(lowered);
    MachineModel machine = machine_model(target);
    if (options.parallelism > 0) machine.cores = options.parallelism;
    const std::string key = halide_workload_key(lowered, target);
    SearchResult search = search_schedule(lowered, analysis, machine, target);
    Schedule schedule = search.schedule;
    std::string origin = "search";
    if (options.variant > 0) {
        auto variants = schedule_variants(lowered, analysis, machine, target, schedule, options.variant,
                                          VariantPick::BestPerRegion);
        if (options.variant > static_cast<int>(variants.size())) {
            throw std::invalid_argument("HCompile autoscheduler: variant " + std::to_string(options.variant) + " of " +
                                        std::to_string(variants.size()));
        }
        schedule = variants[options.variant - 1].first;
        origin = "variant " + std::to_string(options.variant);
    }
    std::string source;
    if (!options.db.empty() && options.variant == 0) {
        if (auto recorded = best_recorded_schedule(options.db, key)) {
            try {
                source = apply_schedule(lowered, *recorded);   // checks the whole list before applying any of it
                schedule = *recorded;
                origin = "record";
            } catch (const std::invalid_argument &) {
                origin = "search (the record no longer fits the pipeline)";
            }
        }
    }
    if (source.empty()) source = apply_schedule(lowered, schedule);
    std::ostringstream out;
    out << "// HCompile autoscheduler: " << lowered.regions.size() << " Funcs, " << machine.cores << " cores, "
        << predict_seconds(lowered, analysis, {schedule}, machine)[0] * 1e3 << " ms predicted\n";
    out << "// hcompile workload: " << key << "\n";
    out << "// hcompile schedule: " << origin << "\n";
    out << "// hcompile decisions: " << decisions_to_json(schedule) << "\n";
    std::istringstream decisions(print_schedule(schedule, &lowered));
    for (std::string line; std::getline(decisions, line);) out << "//   " << line << "\n";
    out << halide_schedule_prelude(lowered) << source;
    results->schedule_source = out.str();
}

// Registers the plugin with the libHalide.so that loads it (the host's: this library links the
// shared libHalide, so the registry is the host's own).
struct RegisterHCompile {
    RegisterHCompile() { Halide::Pipeline::add_autoscheduler("HCompile", autoschedule); }
} register_hcompile;

}  // namespace
}  // namespace hc
