// Internal to the extension module: each bind_*.cpp registers its part of `hcompile._C`.
#pragma once

#include <nanobind/nanobind.h>

namespace hc::bindings {

void bind_graph(nanobind::module_ &m);
void bind_runtime(nanobind::module_ &m);
void bind_call_front(nanobind::module_ &m);  // after bind_runtime: it takes a Dispatcher

}  // namespace hc::bindings
