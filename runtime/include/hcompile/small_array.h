// A run-time sized array kept on the stack up to N elements and on the heap past that. The per-call
// argument arrays (Halide buffers, dimensions, argv) are sized per kernel, so no kernel has an
// argument limit, and the common case costs no heap allocation on the fast path.
#pragma once

#include <cstddef>
#include <memory>

namespace hc {

template <typename T, size_t N>
class SmallArray {
public:
    // Elements are left uninitialised (the fast path fills every one it uses) unless `fill` is given.
    explicit SmallArray(size_t size) : size_(size) {
        if (size > N) heap_.reset(new T[size]);
        data_ = size > N ? heap_.get() : inline_;
    }
    SmallArray(size_t size, const T &fill) : SmallArray(size) {
        for (size_t i = 0; i < size; ++i) data_[i] = fill;
    }
    SmallArray(const SmallArray &) = delete;
    SmallArray &operator=(const SmallArray &) = delete;

    T &operator[](size_t i) { return data_[i]; }
    const T &operator[](size_t i) const { return data_[i]; }
    T *data() { return data_; }
    size_t size() const { return size_; }

private:
    T inline_[N];
    std::unique_ptr<T[]> heap_;
    T *data_;
    size_t size_;
};

}  // namespace hc
