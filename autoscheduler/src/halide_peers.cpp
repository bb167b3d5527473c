#include "hcompile/halide_peers.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace hc {

namespace {

const char *const kPeers[] = {"Adams2019", "Mullapudi2016", "Li2018", "Anderson2021"};

// The folder of the libHalide.so this process runs: the wheel puts the plugins beside it.
std::string halide_library_folder() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void *>(&Halide::load_plugin), &info) || !info.dli_fname) {
        throw std::runtime_error("cannot find the folder of libHalide.so (dladdr failed)");
    }
    std::string path = info.dli_fname;
    return path.substr(0, path.find_last_of('/'));
}

Halide::Region region_of(const std::vector<int64_t> &numpy_shape) {
    Halide::Region r;
    for (auto it = numpy_shape.rbegin(); it != numpy_shape.rend(); ++it) {
        r.emplace_back(0, static_cast<int>(std::max<int64_t>(*it, 1)));
    }
    return r;
}

}  // namespace

bool is_halide_autoscheduler(const std::string &name) {
    return std::find(std::begin(kPeers), std::end(kPeers), name) != std::end(kPeers);
}

void load_halide_autoscheduler(const std::string &name) {
    static std::mutex mutex;
    static std::set<std::string> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    if (loaded.count(name)) return;
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    Halide::load_plugin(halide_library_folder() + "/libautoschedule_" + lower + ".so");
    loaded.insert(name);
}

std::string apply_halide_autoscheduler(LoweredPipeline &lowered, const Halide::Target &target, const std::string &name,
                                       const PipelineEstimates &estimates,
                                       const std::vector<std::pair<std::string, std::string>> &params) {
    if (!is_halide_autoscheduler(name)) throw std::invalid_argument("not a Halide autoscheduler: " + name);
    const bool gpu = target.has_gpu_feature();
    if (gpu && name == "Adams2019") throw std::invalid_argument("Halide's Adams2019 schedules CPUs only (Anderson2021 is its GPU version)");
    if (!gpu && name == "Anderson2021") throw std::invalid_argument("Halide's Anderson2021 schedules GPUs only");
    // A reduction to one value (a 0-d output), measured on an H200: Anderson2021's plugin crashes
    // the process (a segmentation fault, nothing to catch), and Li2018's GPU schedule leaves the
    // value on the host, where the call finds no host buffer. Refused here with that reason.
    const bool scalar_output = std::any_of(lowered.outputs.begin(), lowered.outputs.end(),
                                           [](const Halide::Func &f) { return f.dimensions() == 0; });
    if (gpu && scalar_output && (name == "Anderson2021" || name == "Li2018")) {
        throw std::invalid_argument("Halide's " + name + " does not schedule a GPU pipeline with a 0-d output (a "
                                    "reduction to one value): measured, " +
                                    (name == "Anderson2021" ? std::string("its plugin crashed the process")
                                                            : std::string("its schedule left the value on the host")));
    }
    load_halide_autoscheduler(name);
    for (size_t i = 0; i < lowered.inputs.size(); ++i) {
        lowered.inputs[i].param.set_estimates(region_of(estimates.input_shapes.at(i)));
    }
    for (LoweredScalar &s : lowered.scalars) {
        // A float constant travels as its bits in an unsigned integer (LoweredScalar).
        const int bits = s.param.type().bits();
        if (bits == 16) {
            s.param.set_estimate(Halide::float16_t(s.value).to_bits());
        } else if (bits == 32) {
            float f = static_cast<float>(s.value);
            uint32_t word;
            std::memcpy(&word, &f, sizeof word);
            s.param.set_estimate(word);
        } else {
            uint64_t word;
            std::memcpy(&word, &s.value, sizeof word);
            s.param.set_estimate(word);
        }
    }
    for (size_t j = 0; j < lowered.outputs.size(); ++j) {
        lowered.outputs[j].set_estimates(region_of(estimates.output_shapes.at(j)));
    }
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::map<std::string, std::string> chosen{{"parallelism", std::to_string(cores)}};
    if (gpu && name == "Mullapudi2016") chosen["experimental_gpu_schedule"] = "1";
    if (name == "Anderson2021") {
        chosen.insert({{"shared_memory_limit_kb", "48"}, {"shared_memory_sm_limit_kb", "164"},
                       {"active_block_limit", "32"}, {"active_warp_limit", "64"}});
    }
    for (const auto &[key, value] : params) chosen[key] = value;
    Halide::AutoschedulerParams autoscheduler(name, {chosen.begin(), chosen.end()});
    Halide::AutoSchedulerResults results = lowered.pipeline.apply_autoscheduler(target, autoscheduler);
    return results.schedule_source;
}

}  // namespace hc
