// The per-call fast path: guards checked in C++ over the argument vector, then the cached kernel.
// One Dispatcher per decorated function; one Entry per guard set (compiled or run as Python).
#pragma once

#include <Python.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hcompile/kernel.h"

namespace hc {

// Must run once (at module import) before any Dispatcher is used: imports NumPy's C API.
bool init_numpy_api();

// What one call argument must look like for an entry to apply.
struct ArgGuard {
    enum Kind : uint8_t { Array, NumpyScalar, Int, Float, Bool, None, Str, TypeOnly };
    Kind kind = TypeOnly;
    PyObject *type = nullptr;     // exact type required (strong reference)
    int typenum = -1;             // Array/NumpyScalar: NumPy type number
    int layout = 0;               // Array: hc::InputLayout as classified by classify_layout()
    std::vector<int64_t> shape;   // Array: exact sizes
    PyObject *value = nullptr;    // Int/Float/Str: the specialised value (strong reference)
};

// A Python value read by the traced code from outside the arguments that the graph depends on:
// a global, a closure cell, a module's dict entry, or an attribute such as a helper's __code__.
struct ValueGuard {
    // Function*: that attribute of a plain Python function, read from the function object
    // directly (a pointer load instead of an attribute lookup; a missing one reads as None).
    enum Source : uint8_t { DictItem, CellContents, Attribute, FunctionCode, FunctionDefaults, FunctionKwDefaults };
    // Equal: same type and value (floats by bits), for specialised scalars. Identical: the same
    // object (one pointer compare), for functions, modules, classes, code objects. Absent: the
    // key or attribute is missing (a global that resolved to a builtin).
    enum Check : uint8_t { Equal, Identical, Absent };
    Source source = DictItem;
    Check check = Equal;
    PyObject *container = nullptr;  // a dict, a cell, or any object for Attribute (strong reference)
    PyObject *key = nullptr;        // dict key or attribute name; null for a cell
    PyObject *expected = nullptr;   // strong reference; null for Absent
};

// Arguments `a` and `b` must be (same) or must not be (!same) one object: the traced code
// compared them with `is`.
struct IdentityGuard {
    int32_t a = 0, b = 0;
    bool same = false;
};

struct Entry {
    std::vector<ArgGuard> args;
    std::vector<ValueGuard> values;
    std::vector<IdentityGuard> identities;
    KernelPtr kernel;                  // null: call `runner`, or else the original function
    PyObject *runner = nullptr;        // optional callable(*args) used when there is no kernel
    std::vector<bool> as_scalar;       // per kernel output: 0-d result becomes a NumPy scalar
    PyObject *result_builder = nullptr;  // optional callable(outputs_tuple, args_tuple)
    uint64_t hits = 0;
};

class Dispatcher {
public:
    explicit Dispatcher(PyObject *function);
    ~Dispatcher();
    Dispatcher(const Dispatcher &) = delete;
    Dispatcher &operator=(const Dispatcher &) = delete;

    // Returns a new reference: the result; the miss sentinel (no entry applies); or null with a
    // Python error set.
    PyObject *call(PyObject *const *args, Py_ssize_t nargs);
    // Runs one entry's kernel on the given arguments (the guards are assumed to hold).
    PyObject *run_kernel(const Entry &entry, PyObject *const *args);

    void add_entry(std::unique_ptr<Entry> entry) { entries_.push_back(std::move(entry)); }
    void clear();
    size_t num_entries() const { return entries_.size(); }
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

    static PyObject *miss_sentinel();

private:
    PyObject *function_;
    std::vector<std::unique_ptr<Entry>> entries_;
    uint64_t hits_ = 0;
    uint64_t misses_ = 0;
};

// The layout class of an array (an InputLayout value), or -1 when hcompile cannot pass it to a
// kernel as is (misaligned, byte-swapped, strides not a multiple of the item size).
int classify_layout(PyObject *array);
// NumPy's type number for an hcompile dtype.
int numpy_typenum(DType dtype);

}  // namespace hc
