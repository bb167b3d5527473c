// The HCompile plugin's parameters (autoscheduler.KEY=VALUE in a generator's arguments, or
// AutoschedulerParams' extra map in Halide's bindings), parsed and checked.
#pragma once

#include <map>
#include <string>

namespace hc {

struct PluginParams {
    int parallelism = 0;   // cores the schedule is for; 0: this machine's
    int variant = 0;       // 0: the search's list; N >= 1: its Nth alternative (tuning)
    std::string db;        // a tuning database whose best record for the pipeline is used
};

// Throws std::invalid_argument for an unknown key, a count that is not one, an empty path.
PluginParams parse_plugin_params(const std::map<std::string, std::string> &extra);

}  // namespace hc
