// The GPU cost model's device (autoscheduler gpu_device.h) for a CUDA device ordinal: its
// attributes from the CUDA driver and a device-to-device copy timed with CUDA events, measured
// once per process and device.
#pragma once

#include "hcompile/gpu_device.h"

namespace hc {

// Device `ordinal`'s parameters; the reference device (not measured) for an ordinal below 0, or
// where there is no driver or the probe fails (`why` says what failed, when given).
GpuDevice cuda_device_model(int ordinal, std::string *why = nullptr);

}  // namespace hc
