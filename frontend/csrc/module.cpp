// `hcompile._C`: the C++ layers as the Python frontend sees them.
#include <spdlog/spdlog.h>

#include "bindings.h"
#include "hcompile/dispatch.h"

NB_MODULE(_C, m) {
    if (!hc::init_numpy_api()) throw nanobind::python_error();
    spdlog::set_level(spdlog::level::warn);
    // Module-level compiled functions live until interpreter exit; their reference cycles through
    // globals are expected, not leaks worth a report.
    nanobind::set_leak_warnings(false);
    m.def(
        "set_log_level", [](const std::string &level) { spdlog::set_level(spdlog::level::from_str(level)); },
        "Level of the C++ logs: trace, debug, info, warn, error, off.");
    hc::bindings::bind_graph(m);
    hc::bindings::bind_runtime(m);
    hc::bindings::bind_call_front(m);
}
