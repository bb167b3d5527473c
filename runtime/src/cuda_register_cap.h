// A kernel's register cap (Kernel::gpu_registers), given to CUDA when its module loads.
//
// Halide's CUDA runtime compiles a pipeline's PTX when the pipeline first runs in a context, every
// kernel of it under one cap on a thread's registers: 64, or what HL_CUDA_JIT_MAX_REGISTERS names
// at that moment (Halide reads the variable there and nowhere else). A schedule that asks for
// another cap has it set for that first run on each device, and removed after; a caller who set
// the variable keeps theirs. The first runs of such kernels take a lock, so two of them never see
// each other's value. Another pipeline loading its module on another thread in that moment would
// compile under the cap too: that costs it speed, never an answer.
#pragma once

#include "hcompile/kernel.h"

namespace hc {

class FirstRunRegisterCap {
public:
    FirstRunRegisterCap(const Kernel &kernel, int device);
    ~FirstRunRegisterCap();
    FirstRunRegisterCap(const FirstRunRegisterCap &) = delete;
    FirstRunRegisterCap &operator=(const FirstRunRegisterCap &) = delete;

private:
    const Kernel *kernel_ = nullptr;   // null: nothing to set (no cap, or not this kernel's first run)
    uint64_t device_bit_ = 0;
    bool set_ = false;                 // whether this run set the variable (and removes it)
};

}  // namespace hc
