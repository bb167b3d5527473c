#include "cuda_register_cap.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace hc {

namespace {

constexpr const char *kHalideCapVariable = "HL_CUDA_JIT_MAX_REGISTERS";

std::mutex &first_runs() {
    static std::mutex mutex;
    return mutex;
}

}  // namespace

FirstRunRegisterCap::FirstRunRegisterCap(const Kernel &kernel, int device) {
    // Devices past the 64th share the last bit: once one of them has run, the others load without the cap.
    device_bit_ = uint64_t{1} << (device < 0 ? 0 : device > 63 ? 63 : device);
    if (kernel.gpu_registers <= 0 || (kernel.devices_loaded.load(std::memory_order_acquire) & device_bit_)) return;
    first_runs().lock();
    kernel_ = &kernel;
    if (!std::getenv(kHalideCapVariable)) {
        setenv(kHalideCapVariable, std::to_string(kernel.gpu_registers).c_str(), 1);
        set_ = true;
    }
}

FirstRunRegisterCap::~FirstRunRegisterCap() {
    if (!kernel_) return;
    if (set_) unsetenv(kHalideCapVariable);
    kernel_->devices_loaded.fetch_or(device_bit_, std::memory_order_release);
    first_runs().unlock();
}

}  // namespace hc
