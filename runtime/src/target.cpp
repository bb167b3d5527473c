#include "hcompile/target.h"

#include <stdexcept>
#include <vector>

namespace hc {

namespace {

using F = Halide::Target::Feature;

// Features that select CPU instructions: code using them traps on a CPU without them.
const std::vector<F> kInstructionSetFeatures = {
    F::SSE41, F::AVX, F::AVX2, F::AVXVNNI, F::FMA, F::FMA4, F::F16C, F::AVX512, F::AVX512_KNL,
    F::AVX512_Skylake, F::AVX512_Cannonlake, F::AVX512_SapphireRapids, F::AVX512_Zen4,
    F::AVX512_Zen5, F::AVX10_1, F::X86APX, F::ARMv7s, F::VSX, F::POWER_ARCH_2_07, F::SVE,
    F::SVE2, F::ARMDotProd, F::ARMFp16, F::ARMv8a, F::ARMv81a, F::ARMv82a, F::ARMv83a,
    F::ARMv84a, F::ARMv85a, F::ARMv86a, F::ARMv87a, F::ARMv88a, F::ARMv89a, F::RVV,
    F::WasmSimd128, F::WasmThreads, F::WasmBulkMemory, F::WasmMvpOnly};

// Features that offload to a device runtime hcompile does not drive (CUDA it does).
const std::vector<F> kDeviceFeatures = {
    F::OpenCL, F::CLDoubles, F::CLHalf, F::CLAtomics64, F::EGL, F::Metal,
    F::HVX_128, F::HVX_v62, F::HVX_v65, F::HVX_v66, F::HVX_v68, F::HexagonDma, F::D3D12Compute,
    F::WebGPU, F::SPIRV, F::Vulkan, F::VulkanInt8, F::VulkanInt16, F::VulkanInt64,
    F::VulkanFloat16, F::VulkanFloat64, F::VulkanV10, F::VulkanV12, F::VulkanV13};

// Features whose code needs something a JIT-compiled pipeline in this process does not have.
const std::vector<F> kNotForJitFeatures = {F::ASAN, F::MSAN, F::TSAN, F::SanitizerCoverage, F::NoRuntime,
                                           F::SoftFloatABI, F::Semihosting, F::Simulator};

// The names of the features in `features` that `target` has and `host` does not (all of them
// when `host` is null).
std::string missing(const Halide::Target &target, const Halide::Target *host, const std::vector<F> &features) {
    std::string names;
    for (F f : features) {
        if (!target.has_feature(f) || (host && host->has_feature(f))) continue;
        names += (names.empty() ? "" : ", ") + Halide::Target::feature_to_name(f);
    }
    return names;
}

std::string platform(const Halide::Target &t) {
    return Halide::Target(t.os, t.arch, t.bits).to_string();  // arch-bits-os
}

}  // namespace

Halide::Target parse_target(const std::string &name) {
    Halide::Target host = Halide::get_host_target();
    if (name.empty() || name == "host" || name == "auto") return host;
    if (name == "cuda") return host.with_feature(F::CUDA).with_feature(F::CUDACapability70);
    if (!Halide::Target::validate_target_string(name)) {
        throw std::invalid_argument("target '" + name + "' is not a Halide target string (e.g. 'host', 'host-" +
                                    "no_asserts', '" + platform(host) + "-avx2')");
    }
    Halide::Target target;
    try {
        target = Halide::Target(name);  // also checks that the features suit the architecture
    } catch (const Halide::Error &e) {
        std::string message = e.what();
        message.erase(message.find_last_not_of(" \n") + 1);
        throw std::invalid_argument("target '" + name + "' is not valid: " + message);
    }
    return target;
}

Halide::Target jit_target(const std::string &name) {
    Halide::Target host = Halide::get_host_target();
    Halide::Target target = parse_target(name);
    if (target.os != host.os || target.arch != host.arch || target.bits != host.bits) {
        throw std::invalid_argument("target '" + name + "' is for " + platform(target) +
                                    "; kernels run in this process, on " + platform(host));
    }
    if (std::string names = missing(target, nullptr, kDeviceFeatures); !names.empty()) {
        throw std::invalid_argument("target '" + name + "' asks for a GPU or device runtime (" + names +
                                    "): hcompile runs kernels on the CPU or through CUDA only");
    }
    if (std::string names = missing(target, &host, kInstructionSetFeatures); !names.empty()) {
        throw std::invalid_argument("target '" + name + "' needs CPU features this host lacks: " + names +
                                    " (the host is " + host.to_string() + ")");
    }
    if (std::string names = missing(target, nullptr, kNotForJitFeatures); !names.empty()) {
        throw std::invalid_argument("target '" + name + "' has features a JIT-compiled kernel cannot use: " + names);
    }
    return target;
}

}  // namespace hc
