// Which Halide targets kernels may be JIT-compiled for: code runs in this process, on this CPU
// or on a CUDA GPU.
#pragma once

#include <Halide.h>

#include <string>

namespace hc {

// A user's target string as a Halide target: "host", "auto" or "" is the host CPU; "cuda" the
// host with CUDA for devices of compute capability 7.0 and later (the frontend names the
// device's own capability, up to the 8.6 Halide 21 knows); anything else is parsed by Halide. Throws std::invalid_argument naming the problem when the string is not a
// valid Halide target. Says nothing about whether its code can run here (see jit_target).
Halide::Target parse_target(const std::string &name);

// The target for a user's target string: "host", "auto" or "" is the host CPU; anything else is
// parsed by Halide (so "host-no_asserts" or "x86-64-linux-avx2" work). Throws std::invalid_argument
// naming the problem when the string is not a Halide target, or when its code could not run here:
// another architecture, bit width or OS; an instruction-set feature this CPU lacks (which would
// die with SIGILL on the first call); a device runtime other than CUDA; or a
// feature that needs support outside a JIT-compiled pipeline (sanitizer hooks, no runtime).
Halide::Target jit_target(const std::string &name);

}  // namespace hc
