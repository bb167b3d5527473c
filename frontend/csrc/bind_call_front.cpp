// `hcompile._C.CallFront`: the base class of CompiledFunction, whose call slot is C++.
//
// A call of positional arguments (trailing parameters left to their defaults filled in) goes
// straight to the function's dispatcher; keywords, a miss or arguments of another shape go to
// the Python method `_call_slow(args, kwargs)`. Why C++: as a Python method, CompiledFunction's
// __call__ took 1.7 µs of a 12.3 µs call of a one-kernel function on CUDA tensors (an H200
// host); a CPU call of one small array went from 1.28 to 0.71 µs without it.
#include <Python.h>

#include "bindings.h"
#include "hcompile/dispatch.h"
#include "hcompile/small_array.h"

namespace nb = nanobind;

namespace hc::bindings {

namespace {

struct CallFront {
    PyObject *dispatcher_object = nullptr;  // the function's _C.Dispatcher (owned)
    Dispatcher *dispatcher = nullptr;       // its C++ object
    PyObject *function = nullptr;           // the user's function (owned): arity and defaults, read per call

    CallFront(nb::handle dispatcher_handle, nb::handle fn)
        : dispatcher_object(dispatcher_handle.inc_ref().ptr()),
          dispatcher(nb::inst_ptr<Dispatcher>(dispatcher_handle)),
          function(fn.inc_ref().ptr()) {}
    ~CallFront() {
        Py_XDECREF(dispatcher_object);
        Py_XDECREF(function);
    }
    CallFront(const CallFront &) = delete;
    CallFront &operator=(const CallFront &) = delete;
};

PyObject *miss() {
    PyObject *m = Dispatcher::miss_sentinel();
    Py_INCREF(m);
    return m;
}

// The number of parameters when all are plain positional-or-keyword ones, else -1 (what
// api._plain_arity says; read per call, as the function's __code__ may be replaced).
Py_ssize_t plain_arity(PyObject *function) {
    const auto *code = reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(function));
    if ((code->co_flags & (CO_VARARGS | CO_VARKEYWORDS)) || code->co_kwonlyargcount) return -1;
    return code->co_argcount;
}

// The number of parameters positional `args` fill with the function's trailing defaults as
// they are now, or -1 where they do not fill them that way.
Py_ssize_t arity_with_defaults(PyObject *function, PyObject *args) {
    const Py_ssize_t given = PyTuple_GET_SIZE(args), arity = plain_arity(function);
    PyObject *defaults = PyFunction_GET_DEFAULTS(function);  // a tuple, or null
    const Py_ssize_t n_defaults = defaults ? PyTuple_GET_SIZE(defaults) : 0;
    return arity >= 0 && given <= arity && given >= arity - n_defaults ? arity : -1;
}

// `args`, then the last defaults, into every[0, arity) (borrowed; arity from arity_with_defaults).
void fill_with_defaults(PyObject *function, PyObject *args, Py_ssize_t arity, PyObject **every) {
    const Py_ssize_t given = PyTuple_GET_SIZE(args);
    PyObject *defaults = PyFunction_GET_DEFAULTS(function);
    const Py_ssize_t n_defaults = defaults ? PyTuple_GET_SIZE(defaults) : 0;
    for (Py_ssize_t i = 0; i < given; ++i) every[i] = PyTuple_GET_ITEM(args, i);
    for (Py_ssize_t i = given; i < arity; ++i) every[i] = PyTuple_GET_ITEM(defaults, n_defaults - (arity - i));
}

// The dispatcher's answer for positional `args`, completed with the function's trailing
// defaults; the miss sentinel where they do not fill its parameters that way.
PyObject *dispatch_positional(const CallFront &front, PyObject *args) {
    const Py_ssize_t given = PyTuple_GET_SIZE(args);
    if (given == plain_arity(front.function)) return front.dispatcher->call(&PyTuple_GET_ITEM(args, 0), given);
    const Py_ssize_t arity = arity_with_defaults(front.function, args);
    if (arity < 0) return miss();
    SmallArray<PyObject *, 16> every(static_cast<size_t>(arity));
    fill_with_defaults(front.function, args, arity, every.data());
    return front.dispatcher->call(every.data(), arity);
}

PyObject *front_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    const bool positional = !kwargs || PyDict_GET_SIZE(kwargs) == 0;
    if (positional && nb::inst_ready(self) && nb::inst_ptr<CallFront>(self)->dispatcher) {
        PyObject *result = dispatch_positional(*nb::inst_ptr<CallFront>(self), args);
        if (result != Dispatcher::miss_sentinel()) return result;  // the answer, or null with the error set
        Py_DECREF(result);
    }
    static PyObject *const slow_name = PyUnicode_InternFromString("_call_slow");
    PyObject *slow = PyObject_GetAttr(self, slow_name);
    if (!slow) return nullptr;
    PyObject *keywords = kwargs ? (Py_INCREF(kwargs), kwargs) : PyDict_New();
    PyObject *result = keywords ? PyObject_CallFunctionObjArgs(slow, args, keywords, nullptr) : nullptr;
    Py_XDECREF(keywords);
    Py_DECREF(slow);
    return result;
}

// The garbage collector's view: the dispatcher and the function (a compiled closure that refers
// to itself is a cycle through them, collected only where both it and the dispatcher say so).
int front_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self)) return 0;
    const CallFront &front = *nb::inst_ptr<CallFront>(self);
    Py_VISIT(front.dispatcher_object);
    Py_VISIT(front.function);
    return 0;
}

int front_clear(PyObject *self) {
    if (!nb::inst_ready(self)) return 0;
    CallFront &front = *nb::inst_ptr<CallFront>(self);
    front.dispatcher = nullptr;  // later calls take the slow path
    Py_CLEAR(front.dispatcher_object);
    Py_CLEAR(front.function);
    return 0;
}

PyType_Slot call_front_slots[] = {{Py_tp_call, reinterpret_cast<void *>(front_call)},
                                  {Py_tp_traverse, reinterpret_cast<void *>(front_traverse)},
                                  {Py_tp_clear, reinterpret_cast<void *>(front_clear)},
                                  {0, nullptr}};

}  // namespace

void bind_call_front(nb::module_ &m) {
    nb::class_<CallFront>(m, "CallFront", nb::type_slots(call_front_slots),
                          "Base class of CompiledFunction: calls go to its dispatcher from C++, and to its\n"
                          "`_call_slow(args, kwargs)` where the dispatcher has no entry for them.")
        .def(
            "__init__",
            [](CallFront *front, nb::handle dispatcher, nb::handle function) {
                if (!nb::isinstance<Dispatcher>(dispatcher)) throw nb::type_error("dispatcher: a _C.Dispatcher");
                if (!PyFunction_Check(function.ptr())) throw nb::type_error("function: a Python function");
                new (front) CallFront(dispatcher, function);
            },
            nb::arg("dispatcher"), nb::arg("function"))
        .def(
            "_with_trailing_defaults",
            [](const CallFront &front, nb::tuple args) -> nb::object {
                if (!front.function) throw std::runtime_error("hcompile: the compiled function was collected");
                const Py_ssize_t arity = arity_with_defaults(front.function, args.ptr());
                if (arity < 0) return nb::none();
                SmallArray<PyObject *, 16> every(static_cast<size_t>(arity));
                fill_with_defaults(front.function, args.ptr(), arity, every.data());
                PyObject *out = PyTuple_New(arity);
                if (!out) throw nb::python_error();
                for (Py_ssize_t i = 0; i < arity; ++i) PyTuple_SET_ITEM(out, i, Py_NewRef(every[i]));
                return nb::steal(out);
            },
            nb::arg("args"),
            "The positional `args` with the function's trailing parameters at their defaults as they are\n"
            "now, or None where they do not fill its parameters that way (what the call slot dispatches).");
}

}  // namespace hc::bindings
