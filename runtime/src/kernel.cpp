#include "hcompile/kernel.h"

#include <cstring>

namespace hc {

KernelScalar KernelScalar::of(DType dtype, double value) {
    KernelScalar s;
    if (dtype == DType::Float32) {
        float f = static_cast<float>(value);
        std::memcpy(&s.storage, &f, sizeof f);
    } else {
        std::memcpy(&s.storage, &value, sizeof value);
    }
    return s;
}

int Kernel::run(halide_buffer_t *const *buffers, std::string *error) const {
    // The unchecked argv path: argv[0] is a JITUserContext**, the rest are buffer pointers.
    constexpr size_t kMaxArgs = 64;
    const size_t count = inputs.size() + scalars.size() + outputs.size();
    if (count + 1 > kMaxArgs) {
        *error = "too many kernel arguments";
        return -1;
    }
    Halide::JITUserContext context;
    Halide::JITUserContext *context_ptr = &context;
    const void *argv[kMaxArgs];
    size_t a = 0;
    argv[a++] = &context_ptr;
    for (size_t i = 0; i < inputs.size(); ++i) argv[a++] = buffers[i];
    for (const KernelScalar &s : scalars) argv[a++] = &s.storage;
    for (size_t j = 0; j < outputs.size(); ++j) argv[a++] = buffers[inputs.size() + j];
    // The JIT reports pipeline errors by throwing; callers may hold no GIL, so nothing escapes.
    try {
        return callable.call_argv_fast(a, argv);
    } catch (const Halide::Error &e) {
        *error = e.what();
    } catch (const std::exception &e) {
        *error = e.what();
    }
    return -1;
}

}  // namespace hc
