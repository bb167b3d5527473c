#include "hcompile/kernel.h"

#include <cstring>

#include "hcompile/block_pool.h"
#include "hcompile/small_array.h"

namespace hc {

KernelScalar KernelScalar::of(DType dtype, double value) {
    KernelScalar s;
    if (dtype == DType::Float32) {
        float f = static_cast<float>(value);
        std::memcpy(&s.storage, &f, sizeof f);
    } else if (dtype == DType::Float16) {
        uint16_t bits = Halide::float16_t(value).to_bits();
        std::memcpy(&s.storage, &bits, sizeof bits);
    } else if (dtype == DType::BFloat16) {
        uint16_t bits = bfloat16_bits(value);
        std::memcpy(&s.storage, &bits, sizeof bits);
    } else {
        std::memcpy(&s.storage, &value, sizeof value);
    }
    return s;
}

halide_type_t halide_runtime_type(DType t) {
    if (is_bool(t)) return halide_type_t(halide_type_uint, 1);
    if (t == DType::BFloat16) return halide_type_t(halide_type_bfloat, 16);
    if (is_float(t)) return halide_type_t(halide_type_float, dtype_bits(t));
    return halide_type_t(is_signed_int(t) ? halide_type_int : halide_type_uint, dtype_bits(t));
}

int Kernel::run(halide_buffer_t *const *buffers, std::string *error, Halide::JITUserContext *context) const {
    // The JIT reports pipeline errors by throwing; callers may hold no GIL, so nothing escapes.
    try {
        // The unchecked argv path: argv[0] is a JITUserContext**, the rest are buffer pointers
        // and scalar values, as many as the kernel has (no fixed limit).
        Halide::JITUserContext host_context;
        // Intermediates come from the block pool: the same sizes every call, so no page faults.
        host_context.handlers.custom_malloc = pool_halide_malloc;
        host_context.handlers.custom_free = pool_halide_free;
        Halide::JITUserContext *context_ptr = context ? context : &host_context;
        SmallArray<const void *, 64> argv(1 + inputs.size() + scalars.size() + outputs.size());
        size_t a = 0;
        argv[a++] = &context_ptr;
        for (size_t i = 0; i < inputs.size(); ++i) argv[a++] = buffers[i];
        for (const KernelScalar &s : scalars) argv[a++] = &s.storage;
        for (size_t j = 0; j < outputs.size(); ++j) argv[a++] = buffers[inputs.size() + j];
        return callable.call_argv_fast(static_cast<int>(a), argv.data());
    } catch (const Halide::Error &e) {
        *error = e.what();
    } catch (const std::exception &e) {
        *error = e.what();
    }
    return -1;
}

}  // namespace hc
