#include "hcompile/halide_peers.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace hc {

namespace {

const char *const kPeers[] = {"Adams2019", "Mullapudi2016", "Li2018"};

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
                                       const PipelineEstimates &estimates) {
    if (!is_halide_autoscheduler(name)) throw std::invalid_argument("not a Halide CPU autoscheduler: " + name);
    load_halide_autoscheduler(name);
    for (size_t i = 0; i < lowered.inputs.size(); ++i) {
        lowered.inputs[i].param.set_estimates(region_of(estimates.input_shapes.at(i)));
    }
    for (LoweredScalar &s : lowered.scalars) {
        // A float constant travels as its bits in an unsigned integer (LoweredScalar).
        if (s.param.type().bits() == 32) {
            float f = static_cast<float>(s.value);
            uint32_t bits;
            std::memcpy(&bits, &f, sizeof bits);
            s.param.set_estimate(bits);
        } else {
            uint64_t bits;
            std::memcpy(&bits, &s.value, sizeof bits);
            s.param.set_estimate(bits);
        }
    }
    for (size_t j = 0; j < lowered.outputs.size(); ++j) {
        lowered.outputs[j].set_estimates(region_of(estimates.output_shapes.at(j)));
    }
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    Halide::AutoschedulerParams params(name, {{"parallelism", std::to_string(cores)}});
    Halide::AutoSchedulerResults results = lowered.pipeline.apply_autoscheduler(target, params);
    return results.schedule_source;
}

}  // namespace hc
