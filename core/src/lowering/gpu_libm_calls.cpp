// C library calls inside GPU kernels, made to CUDA's device library.
//
// The lowering calls libm where NumPy's answer is libm's and no Halide expression matches it
// exactly: float floor_divide and remainder are built on C's fmod (elementwise_rules.cpp). A GPU
// kernel has no libm: the PTX named an undefined `fmodf` and the driver refused the module
// (CUDA_ERROR_INVALID_PTX, found by the differential suite run for the GPU). Inside GPU loops
// this pass calls libdevice's exact fmod instead, which Halide's CUDA back end links into every
// kernel module; host code keeps libm's. float32 goes through the float64 function: libdevice's
// __nv_fmodf, as Halide links it, gave NaN for fmod(x, 1e-40) where C gives a number (its
// flush-to-zero variant, presumably), and fmod's result, exact, is the same in either width.
#include <Halide.h>

#include <string>

#include "hcompile/lowering.h"
#include "kernel_mutator.h"

namespace hc {
namespace {

using namespace Halide::Internal;

class CallLibdeviceInKernels : public lowering::KernelAwareMutator {
    using KernelAwareMutator::visit;

    Halide::Expr visit(const Call *op) override {
        Halide::Expr e = IRMutator::visit(op);
        if (!in_kernel() || op->call_type != Call::PureExtern || (op->name != "fmodf" && op->name != "fmod")) return e;
        const Call *call = e.as<Call>();
        const Halide::Type wide = Halide::Float(64, call->type.lanes());
        Halide::Expr fmod = Call::make(wide, "__nv_fmod", {Halide::cast(wide, call->args[0]), Halide::cast(wide, call->args[1])},
                                       Call::PureExtern);
        return Halide::cast(call->type, fmod);
    }
};

}  // namespace

void add_gpu_libm_calls_pass(Halide::Pipeline &pipeline) {
    pipeline.add_custom_lowering_pass(new CallLibdeviceInKernels);
}

}  // namespace hc
