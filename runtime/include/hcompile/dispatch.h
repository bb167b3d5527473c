// The per-call fast path: guards checked in C++ over the argument vector, then the cached kernel.
// One Dispatcher per decorated function; one Entry per guard set (compiled or run as Python).
#pragma once

#include <Python.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hcompile/kernel.h"
#include "hcompile/lowering.h"

namespace hc {

// Must run once (at module import) before any Dispatcher is used: imports NumPy's C API.
bool init_numpy_api();

// What one call argument must look like for an entry to apply.
struct ArgGuard {
    // Equal: an immutable constant compared by value (tuples of ints/strings, dtypes); Identity: a
    // code-like object (function, builtin, module, class) that must be the same object.
    // DynamicFloat: any Python float, handed to the kernel as a float64 scalar (a float argument
    // the capture kept symbolic instead of specialising on its value).
    // CudaTensor: a PyTorch tensor on CUDA device `typenum` of dtype `value` (the torch.dtype
    // object, compared by identity) and exactly `shape`, C-contiguous at a 16-byte aligned
    // address (anything else misses: the frontend's CUDA path copies it, dispatch_cuda.h).
    // CupyArray: the same for a CuPy array (`value` its NumPy dtype, compared by identity, then
    // by equality).
    enum Kind : uint8_t { Array, NumpyScalar, DynamicFloat, Int, Float, Bool, None, Str, Equal, Identity, TypeOnly,
                          CudaTensor, CupyArray };
    Kind kind = TypeOnly;
    PyObject *type = nullptr;     // exact type required (strong reference)
    int typenum = -1;             // Array/NumpyScalar: NumPy type number; CudaTensor: the device
    int layout = 0;               // Array: its layout class (classify_layout())
    std::vector<int64_t> shape;   // Array: exact sizes; -m: any size from m up (a symbolic extent, symbols.h)
    PyObject *value = nullptr;    // Int/Float/Str/Equal/Identity: the specialised value (strong ref)
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

// A fact about arguments that must hold (`expected`) or not for the entry: Same, that `a` and
// `b` are one object (the traced code compared them with `is`); Overlap, that the arrays `a` and
// `b` may share memory (their byte ranges intersect; a written argument must not alias another);
// Writeable, that array `a` is writeable (a written argument); SameExtent, that axis `a_axis`
// of array `a` and axis `b_axis` of array `b` have one size (two uses of one symbolic extent);
// ExtentBelow, that axis `a_axis` of array `a` is smaller than `limit` (an entry for any size
// below a larger call's blocks of rows).
struct ArgRelationGuard {
    enum Kind : uint8_t { Same, Overlap, Writeable, SameExtent, ExtentBelow };
    Kind kind = Same;
    int32_t a = 0, b = 0;
    bool expected = false;
    int32_t a_axis = 0, b_axis = 0;  // SameExtent; ExtentBelow: a_axis
    int64_t limit = 0;               // ExtentBelow only
};

// How an entry whose kernel runs on a CUDA device makes its outputs and finds its stream: the
// array library's own calls (PyTorch's or CuPy's), given when the entry is added. Strong references.
struct CudaCall {
    int device = 0;
    ArgGuard::Kind arrays = ArgGuard::CudaTensor;  // the library's arrays: CudaTensor or CupyArray
    PyObject *empty = nullptr;                 // callable(*output_args[j], **options) -> a new array
    std::vector<PyObject *> output_args;       // per kernel output: a tuple (shape and strides; CuPy: shape)
    std::vector<PyObject *> output_options;    // per kernel output: a dict (dtype, device)
    PyObject *current_stream = nullptr;        // callable(device) -> the stream handle, an int
    PyObject *device_index = nullptr;          // `device` as a Python int

    CudaCall() = default;
    CudaCall(const CudaCall &) = delete;
    CudaCall &operator=(const CudaCall &) = delete;
    ~CudaCall();
};

// One guard set and what runs when it holds. It owns strong references to Python objects, so it
// is created and destroyed with the GIL held.
struct Entry {
    std::vector<ArgGuard> args;
    std::vector<ValueGuard> values;
    std::vector<ArgRelationGuard> relations;
    KernelPtr kernel;                  // null: call `runner`, or else the original function
    PyObject *runner = nullptr;        // optional callable(*args) used when there is no kernel
    std::vector<bool> as_scalar;       // per kernel output: 0-d result becomes a NumPy scalar
    PyObject *result_builder = nullptr;  // optional callable(outputs_tuple, args_tuple)
    std::unique_ptr<CudaCall> cuda;    // the kernel runs on a CUDA device (its arguments CudaTensor)
    uint64_t hits = 0;

    Entry() = default;
    Entry(const Entry &) = delete;
    Entry &operator=(const Entry &) = delete;
    ~Entry();
    // Visits every Python object the entry holds (a garbage collector's traversal).
    int traverse(visitproc visit, void *arg) const;
};

using EntryPtr = std::shared_ptr<Entry>;

// All methods are called with the GIL held. Entries are published copy-on-write: a call works on
// a snapshot of the list, so `clear()` or `add_entry()` from another thread (while this call has
// released the GIL inside a kernel, or while a guard ran Python code) never frees or moves an
// entry, kernel or runner that the call still uses; the last call using them drops them.
class Dispatcher {
public:
    explicit Dispatcher(PyObject *function);
    ~Dispatcher();
    Dispatcher(const Dispatcher &) = delete;
    Dispatcher &operator=(const Dispatcher &) = delete;

    // Returns a new reference: the result; the miss sentinel (no entry applies); or null with a
    // Python error set.
    PyObject *call(PyObject *const *args, Py_ssize_t nargs);
    // 1 when some entry applies to the arguments, 0 when none does, -1 with a Python error set.
    // Runs nothing and counts nothing.
    int matches(PyObject *const *args, Py_ssize_t nargs);

    // `first`: ahead of the entries already there (a CUDA entry, which only CUDA tensors match,
    // goes before a type-only entry that would run Python for any tensor).
    void add_entry(EntryPtr entry, bool first = false);
    void clear();
    // For the garbage collector (the _C type's tp_traverse and tp_clear), so that a compiled
    // function its own code refers to (a closure, a function attribute) is collected: visits
    // every Python object the dispatcher holds, the function's and its entries'; drops them all
    // (every later call misses).
    int traverse(visitproc visit, void *arg) const;
    void drop_references();
    size_t num_entries() const { return entries_->size(); }
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

    static PyObject *miss_sentinel();

private:
    using EntryList = std::vector<EntryPtr>;
    // The first entry of `entries` whose guards hold (null if none; *error set on a Python error).
    static Entry *find(const EntryList &entries, PyObject *const *args, Py_ssize_t nargs, bool *error);
    // Runs one entry's kernel on the given arguments (the guards hold; the caller keeps the
    // entry alive).
    static PyObject *run_kernel(const Entry &entry, PyObject *const *args);

    PyObject *function_;
    std::shared_ptr<const EntryList> entries_;
    uint64_t hits_ = 0;
    uint64_t misses_ = 0;
};

// Layout classes the dispatcher guards arrays on: the InputLayout values, plus two for arrays a
// kernel cannot read in place. Those are copied at call time into a native, aligned, C-contiguous
// array, so their kernels are compiled for InputLayout::CContiguous.
// - kLayoutCopied: misaligned, strides not a multiple of the item size (fields of packed
//   records), or spanning past Halide's 32-bit indexing.
// - kLayoutByteSwapped: non-native byte order; its own class because NumPy's results keep the
//   byte order (a view of the argument is '>i2'), so it never shares an entry with native arrays.
constexpr int kLayoutCopied = 3;
constexpr int kLayoutByteSwapped = 4;

// The layout class of an array: an InputLayout value, kLayoutCopied or kLayoutByteSwapped.
int classify_layout(PyObject *array);
// The InputLayout a kernel is compiled for, given the layout class of its argument.
InputLayout kernel_layout(int layout_class);
// NumPy's type number for an hcompile dtype.
int numpy_typenum(DType dtype);

}  // namespace hc
