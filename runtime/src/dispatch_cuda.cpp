#include "dispatch_cuda.h"

#include <string>
#include <vector>

#include "hcompile/cuda_call.h"

namespace hc {

namespace {

// Interned attribute and method names of PyTorch's tensors (made on first use, kept for the
// life of the process).
struct Names {
    PyObject *dtype = PyUnicode_InternFromString("dtype");
    PyObject *shape = PyUnicode_InternFromString("shape");
    PyObject *get_device = PyUnicode_InternFromString("get_device");
    PyObject *is_contiguous = PyUnicode_InternFromString("is_contiguous");
    PyObject *data_ptr = PyUnicode_InternFromString("data_ptr");
};

const Names &names() {
    static const Names n;
    return n;
}

// `method()` of `object` as an integer; -1 with `*failed` set on a Python error.
int64_t call_for_int(PyObject *object, PyObject *method, bool *failed) {
    PyObject *r = PyObject_CallMethodNoArgs(object, method);
    if (!r) return *failed = true, -1;
    const int64_t v = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) *failed = true;
    return v;
}

}  // namespace

int check_cuda_tensor(const ArgGuard &g, PyObject *arg) {
    const Names &n = names();
    PyObject *dtype = PyObject_GetAttr(arg, n.dtype);
    if (!dtype) return -1;
    const bool same_dtype = dtype == g.value;
    Py_DECREF(dtype);
    if (!same_dtype) return 0;
    PyObject *shape = PyObject_GetAttr(arg, n.shape);  // a torch.Size: a tuple
    if (!shape) return -1;
    bool same_shape = PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == static_cast<Py_ssize_t>(g.shape.size());
    for (size_t i = 0; same_shape && i < g.shape.size(); ++i) {
        same_shape = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i)) == g.shape[i];
    }
    Py_DECREF(shape);
    if (PyErr_Occurred()) return -1;
    if (!same_shape) return 0;
    bool failed = false;
    if (call_for_int(arg, n.get_device, &failed) != g.typenum) return failed ? -1 : 0;
    if (call_for_int(arg, n.is_contiguous, &failed) != 1) return failed ? -1 : 0;
    const int64_t pointer = call_for_int(arg, n.data_ptr, &failed);
    if (failed) return -1;
    return static_cast<uint64_t>(pointer) % kDeviceAlignment == 0;
}

PyObject *run_cuda_entry(const Entry &entry, PyObject *const *args) {
    const Kernel &k = *entry.kernel;
    const CudaCall &c = *entry.cuda;
    const Names &n = names();
    bool failed = false;
    std::vector<DeviceArray> inputs(k.inputs.size()), outputs(k.outputs.size());
    for (size_t i = 0; i < k.inputs.size(); ++i) {
        const ArgGuard &g = entry.args[k.inputs[i].arg_index];  // a CudaTensor (add_cuda_entry checks)
        inputs[i].pointer = static_cast<uint64_t>(call_for_int(args[k.inputs[i].arg_index], n.data_ptr, &failed));
        inputs[i].shape = g.shape;
    }
    if (failed) return nullptr;
    PyObject *made = PyTuple_New(static_cast<Py_ssize_t>(k.outputs.size()));
    if (!made) return nullptr;
    for (size_t j = 0; j < k.outputs.size(); ++j) {
        PyObject *o = PyObject_Call(c.empty, c.output_args[j], c.output_options[j]);
        if (!o) {
            Py_DECREF(made);
            return nullptr;
        }
        PyTuple_SET_ITEM(made, j, o);  // steals
        outputs[j].pointer = static_cast<uint64_t>(call_for_int(o, n.data_ptr, &failed));
        outputs[j].shape = k.outputs[j].shape;
    }
    PyObject *stream_object = failed ? nullptr : PyObject_CallOneArg(c.current_stream, c.device_index);
    const uint64_t stream = stream_object ? PyLong_AsUnsignedLongLong(stream_object) : 0;
    Py_XDECREF(stream_object);
    if (failed || !stream_object || PyErr_Occurred()) {
        Py_DECREF(made);
        return nullptr;
    }
    std::string error;
    int status;
    Py_BEGIN_ALLOW_THREADS;
    status = run_on_cuda(k, inputs, outputs, c.device, stream, &error);
    Py_END_ALLOW_THREADS;
    if (status != 0) {
        Py_DECREF(made);
        PyErr_Format(PyExc_RuntimeError, "hcompile: CUDA kernel failed (Halide error %d): %s", status, error.c_str());
        return nullptr;
    }
    return entry_result(entry, made, args);
}

}  // namespace hc
