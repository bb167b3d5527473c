#include "hcompile/kernel.h"

namespace hc {

int Kernel::run(halide_buffer_t *const *buffers, std::string *error) const {
    // The unchecked argv path: argv[0] is a JITUserContext**, the rest are buffer pointers.
    constexpr size_t kMaxArgs = 64;
    const size_t count = inputs.size() + outputs.size();
    if (count + 1 > kMaxArgs) return -1;
    Halide::JITUserContext context;
    Halide::JITUserContext *context_ptr = &context;
    const void *argv[kMaxArgs];
    argv[0] = &context_ptr;
    for (size_t i = 0; i < count; ++i) argv[i + 1] = buffers[i];
    // The JIT reports pipeline errors by throwing; callers may hold no GIL, so nothing escapes.
    try {
        return callable.call_argv_fast(count + 1, argv);
    } catch (const Halide::Error &e) {
        *error = e.what();
    } catch (const std::exception &e) {
        *error = e.what();
    }
    return -1;
}

}  // namespace hc
