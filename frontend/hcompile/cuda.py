"""CUDA arrays in, CUDA arrays out.

A call whose arrays are CUDA arrays (PyTorch tensors or CuPy arrays on a GPU), or any call of a
function compiled with a CUDA target, runs here on its first call with those types, shapes and
devices: the function is captured on NumPy stand-ins of the arrays' shapes and dtypes (one per
distinct array object), compiled for the device's CUDA target (the fixed GPU schedule of
``autoscheduler/include/hcompile/gpu_schedule.h``), and run on the arrays' own device memory
(``runtime/include/hcompile/cuda_call.h``): wrapped, never copied, on the device's primary context
and the array library's current stream. Outputs are new arrays of the same library on the same
device; another DLPack producer's arrays (JAX's) are read zero-copy as PyTorch's or CuPy's and the
results handed back through the first array's namespace (``from_dlpack``). NumPy arguments under
a CUDA target are copied to the device and back (logged). An entry
for PyTorch tensors or CuPy arrays is also added to the function's C++ dispatcher
(``runtime/src/dispatch_cuda.h``), so later calls like it skip this module; arrays the kernels
cannot read in place (strided, or not 16-byte aligned: copied here first) keep coming here.

A function that writes into its arguments (``x *= 2``, ``out[...] = ...``) computes the written
values as outputs and copies them into the caller's arrays after the kernel, as the CPU path does;
such calls always come through here, which checks that a written argument shares no memory with
another (else the call runs as Python). JAX's arrays cannot be written: such calls run as Python.

NumPy scalar arguments are read at run time, as on the CPU: each call copies them to the device
as 0-d arrays (such calls stay on this path).

A graph break resumes as on the CPU (resume.py): the graph before it runs here, the instruction
runs as Python on the library's arrays, and the code after it is a resume function compiled in
turn (a branch on an array's value reads it from the device).

Dynamic shapes as on the CPU (cuda_shapes.py): an axis whose size alone changed between calls
(every axis, under ``dynamic=True``) gets an entry compiled for any size, its outputs sized from
the call's arrays. Such entries run through here, not the C++ dispatcher.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import _C, blas, cuda_graphs, cuda_shapes, debug_dump, dynamic_shapes, guards, logs, tuning
from .capture import assemble, capture, returns_outputs, scalar_outputs
from .config import config
from .errors import CompileError, Unsupported

# DLPack's device type of CUDA memory (dlpack.h: kDLCUDA).
_DLPACK_CUDA = 2

# The alignment a kernel needs of its device arrays (runtime/include/hcompile/cuda_call.h).
_DEVICE_ALIGNMENT = 16

# The CUDA compute capabilities Halide 21 generates code for; a newer device runs the newest of
# them (its driver compiles the PTX).
_HALIDE_CAPABILITIES = (30, 32, 35, 50, 61, 70, 75, 80, 86)


def cuda_device(a):
    """The CUDA device ordinal ``a`` lives on, or None (NumPy arrays, scalars, host tensors)."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return None
    try:
        kind, ordinal = a.__dlpack_device__()
    except Exception:       # a producer that cannot say (a CPU-only build) is not on a GPU
        return None
    return int(ordinal) if int(kind) == _DLPACK_CUDA else None


def is_cuda_target(target):
    return target == "cuda" or "cuda" in target.split("-")


def any_cuda_array(args):
    return any(cuda_device(a) is not None for a in args)


_LIBRARIES = {}     # module name -> _Library


def _bfloat16():
    """NumPy's bfloat16 (ml_dtypes'): the stand-in of a torch.bfloat16 tensor, which the
    function is captured on as any tensor is on a NumPy array of its dtype."""
    try:
        import ml_dtypes
    except ImportError:
        raise Unsupported("torch.bfloat16 tensors need the ml_dtypes package "
                          "(pip install ml_dtypes): NumPy knows bfloat16 through it") from None
    return np.dtype(ml_dtypes.bfloat16)


class _Library:
    """How one array library's CUDA arrays are read, made and ordered: PyTorch or CuPy."""

    def __init__(self, name):
        self.name = name
        self._torch_types = {}           # (NumPy dtype, device) -> (torch dtype, torch device)
        if name == "torch":
            import torch
            self.module = torch
        else:
            import cupy
            self.module = cupy

    @staticmethod
    def of(a):
        """PyTorch's or CuPy's _Library for their arrays; None for another DLPack producer."""
        module = type(a).__module__.split(".")[0]
        if module in ("torch", "cupy"):
            library = _LIBRARIES.get(module)
            if library is None:
                library = _LIBRARIES[module] = _Library(module)
            return library
        return None

    def from_dlpack(self, a):
        """Another DLPack producer's CUDA array as this library's, zero-copy (DLPack orders the
        producer's stream with this library's current one)."""
        return self.module.from_dlpack(a)

    def dtype(self, a):
        if self.name != "torch":
            return np.dtype(a.dtype)
        if a.dtype == self.module.bfloat16:
            return _bfloat16()
        return np.dtype(str(a.dtype).replace("torch.", ""))

    def describe(self, a):
        """(device pointer, shape) of a C-contiguous array."""
        return self.pointer(a), tuple(a.shape)

    def pointer(self, a):
        return a.data_ptr() if self.name == "torch" else a.data.ptr

    def readable(self, a):
        """``a`` as a kernel reads it: C-contiguous at a 16-byte aligned address (the kernels'
        vector loads; a view that starts mid-vector, such as ``x.view(-1)[1:]``, is copied)."""
        torch = self.name == "torch"
        if (a.is_contiguous() if torch else a.flags.c_contiguous) and self.pointer(a) % _DEVICE_ALIGNMENT == 0:
            return a
        if torch:
            return a.clone(memory_format=self.module.contiguous_format)
        return self.module.array(a, order="C", copy=True)

    def torch_type(self, dtype, device):
        """(torch dtype, torch device) for a NumPy dtype on CUDA device ``device``."""
        key = (dtype, device)
        made = self._torch_types.get(key)
        if made is None:
            torch_dtype = self.module.bool if dtype == np.bool_ else getattr(self.module, np.dtype(dtype).name)
            made = self._torch_types[key] = (torch_dtype, self.module.device("cuda", device))
        return made

    def empty(self, shape, dtype, device):
        """A new C-contiguous array on CUDA device ``device`` (CuPy's: the C++ dispatcher's
        outputs too, so entering the device only where it is not the current one)."""
        if self.name == "torch":
            torch_dtype, torch_device = self.torch_type(dtype, device)
            return self.module.empty(shape, dtype=torch_dtype, device=torch_device)
        cuda = self.module.cuda
        if cuda.runtime.getDevice() == device:
            return self.module.empty(shape, dtype=dtype)
        with cuda.Device(device):
            return self.module.empty(shape, dtype=dtype)

    def stream(self, device):
        """The handle of the library's current stream on ``device``, an int (CuPy's: the C++
        dispatcher's stream too)."""
        if self.name == "torch":
            return self.module.cuda.current_stream(device).cuda_stream
        cuda = self.module.cuda
        if cuda.runtime.getDevice() == device:
            return cuda.get_current_stream().ptr
        with cuda.Device(device):
            return cuda.get_current_stream().ptr

    def synchronize(self, device):
        if self.name == "torch":
            self.module.cuda.synchronize(device)
        else:
            with self.module.cuda.Device(device):
                self.module.cuda.get_current_stream().synchronize()

    def device_name(self, device):
        if self.name == "torch":
            return self.module.cuda.get_device_name(device)
        return self.module.cuda.runtime.getDeviceProperties(device)["name"].decode()

    def capability(self, device):
        if self.name == "torch":
            major, minor = self.module.cuda.get_device_capability(device)
            return 10 * major + minor
        return int(self.module.cuda.Device(device).compute_capability)

    def multiprocessors(self, device):
        if self.name == "torch":
            return self.module.cuda.get_device_properties(device).multi_processor_count
        return int(self.module.cuda.Device(device).attributes["MultiProcessorCount"])

    def to_device(self, array, device):
        if self.name == "torch":
            # (np.ascontiguousarray makes a 0-d array 1-d: the shape is put back)
            return self.module.from_numpy(np.ascontiguousarray(array).reshape(np.shape(array))).to(f"cuda:{device}")
        with self.module.cuda.Device(device):
            return self.module.asarray(array)

    def to_host(self, a):
        return a.detach().cpu().numpy() if self.name == "torch" else self.module.asnumpy(a)

    def byte_range(self, a):
        """[first, last) device addresses of the bytes ``a`` covers (any strides; empty: (0, 0))."""
        torch = self.name == "torch"
        item = a.element_size() if torch else a.itemsize
        strides = [s * item for s in a.stride()] if torch else list(a.strides)
        if 0 in tuple(a.shape):
            return 0, 0
        lo = hi = self.pointer(a)
        for n, stride in zip(a.shape, strides):
            if stride < 0:
                lo += (n - 1) * stride
            else:
                hi += (n - 1) * stride
        return lo, hi + item

    def clone(self, a):
        return a.clone() if self.name == "torch" else a.copy()

    def capture_graph(self, device, run):
        """A CUDA graph of the work ``run()`` puts on the library's current stream (a capturing
        one meanwhile), in relaxed mode (a first cuBLAS call may allocate its workspace); returns
        a function that replays it on the current stream."""
        if self.name == "torch":
            graph = self.module.cuda.CUDAGraph()
            with self.module.cuda.graph(graph, capture_error_mode="relaxed"):
                run()
            return graph.replay
        cupy = self.module
        relaxed = getattr(cupy.cuda.runtime, "streamCaptureModeRelaxed", None)
        with cupy.cuda.Device(device):
            stream = cupy.cuda.Stream(non_blocking=True)
            stream.wait_event(cupy.cuda.get_current_stream().record())   # after the work before it
            with stream:
                if relaxed is None:
                    stream.begin_capture()
                else:
                    stream.begin_capture(mode=relaxed)
                try:
                    run()
                finally:
                    graph = stream.end_capture()
        return lambda: graph.launch(stream=cupy.cuda.get_current_stream())

    def copy_into(self, destination, source):
        """``source``'s values into the caller's array ``destination``, on the current stream
        (after the kernel that made them)."""
        if isinstance(destination, np.ndarray):
            np.copyto(destination, self.to_host(source), casting="no")
        elif self.name == "torch":
            destination.copy_(source)
        else:
            self.module.copyto(destination, source, casting="no")


def _host_library():
    """The library that moves NumPy arrays to the GPU for a CUDA target: CuPy, else PyTorch."""
    for name in ("cupy", "torch"):
        try:
            library = _Library(name)
        except ImportError:
            continue
        if name == "torch" and not library.module.cuda.is_available():
            continue
        if name == "cupy":
            try:
                if library.module.cuda.runtime.getDeviceCount() == 0:
                    continue
            except Exception:      # CuPy without a driver raises its own error: no GPU here
                continue
        return library
    raise RuntimeError("hcompile: target='cuda' with NumPy arrays needs a CUDA GPU and CuPy or PyTorch with CUDA "
                       "to move the arrays there; none was found")


def cuda_target(capability):
    """The Halide target for a device of compute capability ``capability`` (75 for 7.5)."""
    known = [c for c in _HALIDE_CAPABILITIES if c <= capability]
    if not known:
        raise RuntimeError(f"hcompile: CUDA devices of compute capability {capability / 10:.1f} are too old for Halide")
    return f"host-cuda-cuda_capability_{known[-1]}"


class CudaEntries:
    """The compiled CUDA kernels of one function, by the arguments' types, shapes and devices."""

    def __init__(self, fn, qualname, target, autoscheduler, schedule, records, owner, dispatcher=None, mode="default"):
        self._fn = fn
        # The CompiledFunction these entries belong to: its options, and the resume functions
        # (and loop bodies) that run the code after a graph break.
        self._owner = owner
        self._mode = mode                # "max-autotune": schedules measured on the device (_autotune)
        self._dispatcher = dispatcher    # the function's C++ dispatcher: PyTorch and CuPy entries go there too
        self._schedule = schedule        # an explicit decision list, or None
        self._records = records          # the function's compile_records (explain reads them)
        self._qualname = qualname
        self._target = target            # "auto", "cuda" or a CUDA target string
        self._autoscheduler = autoscheduler
        self._entries = {}               # exact (types, shapes, devices) -> entries, each under its value guards
        self._generic = []               # cuda_shapes.GenericEntry: entries for any size of some axes
        self._compiles = 0               # entries compiled (the recompile limit counts them)
        self.hits = 0                    # calls this path served from an entry it had (cache_info)
        self._seen_specs = []            # each compile's argument specs (which axes changed)
        self._dynamic_axes = set()       # (argument, axis) compiled for any size (dynamic_shapes.py)
        self.host_copies = 0             # NumPy arrays copied to the device and back

    def __call__(self, args):
        devices = [cuda_device(a) for a in args]
        on = {d for d in devices if d is not None}
        host_arrays = [isinstance(a, np.ndarray) for a in args]
        if len(on) > 1:
            raise ValueError(f"hcompile: {self._qualname}: arrays on different CUDA devices {sorted(on)}")
        if on and any(host_arrays):
            raise ValueError(f"hcompile: {self._qualname}: NumPy arrays mixed with CUDA arrays; move them to one device")
        if on:
            device = on.pop()
            first = next(a for a, d in zip(args, devices) if d is not None)
            library = _Library.of(first)
            carrier = library or _host_library()
            given = args
            # NumPy scalars are read at run time, as on the CPU (one kernel for every value): each
            # call copies them to the device as 0-d arrays.
            scalars = [isinstance(a, np.generic) for a in args]
            if any(scalars):
                args = [carrier.to_device(np.asarray(a), device) if s else a for a, s in zip(args, scalars)]
                devices = [device if s else d for s, d in zip(scalars, devices)]
            foreign = [d is not None and _Library.of(a) is None for a, d in zip(args, devices)]
            if not any(foreign):
                return self._run(library, device, args, devices, returned_args=given)
            # Another DLPack producer's arrays (JAX's, ...): read zero-copy as PyTorch's or CuPy's;
            # the results handed back as the first array's kind, through its array namespace.
            moved = [carrier.from_dlpack(a) if f else a for a, f in zip(args, foreign)]
            result = self._run(carrier, device, moved, devices, returned_args=given)
            namespace = getattr(first, "__array_namespace__", None) if library is None else None
            if namespace is None or not hasattr(namespace(), "from_dlpack"):
                return result
            return _map_arrays(result, namespace().from_dlpack, keep=given)
        library = _host_library()
        device = 0
        host_arrays = [isinstance(a, (np.ndarray, np.generic)) for a in args]   # NumPy scalars too, as 0-d arrays
        moved = [library.to_device(np.asarray(a), device) if is_host else a for a, is_host in zip(args, host_arrays)]
        if not self.host_copies:   # said once per function; host_copies counts them all
            logs.log("recompiles", "%s: target %s with NumPy arguments: %d arrays copied to CUDA device %d and the "
                     "outputs back, on this call and later ones", self._qualname, self._target, sum(host_arrays), device)
        self.host_copies += sum(host_arrays)
        # An argument returned as it is is the caller's own array, as Python returns it.
        # The outputs come back to the host before the return value is built: NumPy's scalars where
        # NumPy returns them, and the code after a graph break runs on NumPy arrays, as it was given.
        return self._run(library, device, moved, [device if h else None for h in host_arrays], returned_args=args,
                         to_host=library.to_host)

    def _run(self, library, device, args, devices, returned_args=None, to_host=None):
        """``devices``: per argument, its CUDA device or None (not an array on the GPU);
        ``returned_args``: what the return value holds where the function returns an argument
        (default ``args`` as given, before any contiguous copy); ``to_host``: where given, the
        outputs are copied to the host with it before the return value is built from them."""
        given = args
        if returned_args is None:
            returned_args = args
        same = _same_objects(args)
        args = [library.readable(a) if d is not None else a for a, d in zip(args, devices)]
        as_given = returned_args is given and all(a is b for a, b in zip(args, given))
        specs = cuda_shapes.specs_of(args, devices)
        # NumPy scalars arrive as 0-d device arrays; the capture still sees them as scalars, and
        # an entry for them is not one for 0-d arrays (s.T is s, s.dot raises, a + s is a scalar).
        scalars = _numpy_scalar_positions(returned_args)
        head = (library.name, device, same, scalars)
        key = head + tuple(specs)
        # Each entry also holds while the outside values its graph read (globals, closure cells)
        # are what they were.
        # (A shape a generic entry serves adds no key: a loop over batch sizes would grow the dict.)
        entry = next((e for e in self._entries.get(key, ()) if all(g.holds() for g in e.guards)), None)
        if entry is None:
            entry = next((g.entry for g in self._generic
                          if g.accepts(head, specs, args) and all(v.holds() for v in g.entry.guards)), None)
        if entry is not None:
            self.hits += 1
        else:
            if self._compiles >= config.recompile_limit:
                raise Unsupported(f"more than {config.recompile_limit} CUDA argument types, shapes and outside values",
                                  self._fn.__code__.co_filename, self._fn.__code__.co_firstlineno)
            self._compiles += 1
            try:
                entry = self._compile(library, device, args, self._axes_to_generalise(specs, args), scalars)
            except (Unsupported, CompileError) as e:
                entry = _Entry(None, [], None, [], e)   # these arguments run as Python from now on
            self._keep(head, key, entry)
        if entry.unsupported is not None:
            raise entry.unsupported
        if entry.kernel is None:          # nothing to compute before a graph break
            return entry.result.build([], returned_args, to_host)
        if entry.result.writebacks:
            self._check_written(library, returned_args, entry.result.writebacks)
        if self._mode == "reduce-overhead":
            outputs, graphed = self._run_graphed(library, device, args, entry)
            if outputs is not None:
                # Its graph replays: later calls of this shape replay it from the C++ dispatcher.
                if not graphed.dispatched and self._dispatcher is not None and as_given and to_host is None:
                    graphed.dispatched = True
                    self._add_to_dispatcher(library, device, args, devices, entry,
                                            graphed.dispatcher_runner(entry.input_args, entry.result.build))
                return entry.result.build(outputs, returned_args, to_host)
        if (not entry.in_dispatcher and self._dispatcher is not None and as_given and
                (entry.graphed is None or entry.graphed.failure is not None)):   # not a graph's first call
            entry.in_dispatcher = True   # whether or not it fits, asked once
            self._add_to_dispatcher(library, device, args, devices, entry)
        describe = library.describe
        outputs = [library.empty(shape, dtype, device) for shape, dtype in entry.result.outputs_for(args)]
        _C.run_cuda(entry.kernel, [describe(args[i]) for i in entry.input_args], [describe(o) for o in outputs],
                    device, library.stream(device))
        # Written arguments get their final contents once the kernel has run (as on the CPU), into
        # the caller's own arrays (not the contiguous copies the kernel may have read).
        for arg_index, output_index in entry.result.writebacks:
            library.copy_into(returned_args[arg_index], outputs[output_index])
        return entry.result.build(outputs, returned_args, to_host)

    def _run_graphed(self, library, device, args, entry):
        """mode="reduce-overhead": (this call's outputs from the entry's CUDA graph (cuda_graphs.py),
        or None where it runs as default mode: CuPy's arrays, a call that writes into its arguments
        or stops at a graph break, a failed capture; the graph). An entry for any size has a graph
        per shape (a graph's launches are for one), up to the recompile limit's number of them."""
        graphed = entry.graphed
        if entry.generic is not None:
            shapes = tuple(tuple(args[i].shape) for i in entry.input_args)
            entry.graphs = entry.graphs or {}
            graphed = entry.graphs.get(shapes)
            if graphed is None and len(entry.graphs) >= config.recompile_limit:
                return None, None
        if graphed is None:
            graphed = cuda_graphs.GraphedEntry(self._qualname)
            if not entry.result.plain:
                graphed.fail("a call that writes into its arguments or stops at a graph break")
            elif entry.launches < cuda_graphs.MIN_LAUNCHES:
                graphed.fail(f"{entry.launches} kernel launches a call: a graph's replay costs more")
            if entry.generic is None:
                entry.graphed = graphed
            else:
                entry.graphs[shapes] = graphed
        return graphed.run(library, device, entry, args), graphed

    def _check_written(self, library, targets, writebacks):
        """A written argument must be an array this library (or NumPy, copied in) can write, and
        share no memory with another argument: the kernel reads every argument as it was when
        the call began, where Python would read the written values. Otherwise Unsupported."""
        code = self._fn.__code__
        for a, _ in writebacks:
            target = targets[a]
            kind = "numpy" if isinstance(target, np.ndarray) else getattr(_Library.of(target), "name", None)
            if kind is None or (kind == "numpy" and not target.flags.writeable):
                raise Unsupported(f"argument {a} is written, and this {type(target).__name__} cannot be written in place",
                                  code.co_filename, code.co_firstlineno)
            for j, other in enumerate(targets):
                if j == a or other is None:
                    continue
                if kind == "numpy":
                    shared = isinstance(other, np.ndarray) and np.may_share_memory(target, other)
                else:
                    other_library = _Library.of(other)
                    shared = other_library is not None and _ranges_meet(library.byte_range(target),
                                                                        other_library.byte_range(other))
                if shared:
                    raise Unsupported(f"argument {a} is written and shares memory with argument {j}",
                                      code.co_filename, code.co_firstlineno)

    def _add_to_dispatcher(self, library, device, args, devices, entry, runner=None):
        """The entry as one of the C++ dispatcher's (dispatch_cuda.h), so that later calls with
        arrays like these skip this Python path: PyTorch tensors or CuPy arrays, all of one
        library (exactly its array type). With `runner` (a CUDA graph's replay,
        cuda_graphs.GraphedEntry.dispatcher_runner) the dispatcher checks the guards and calls it
        instead of launching the kernel."""
        torch = library.name == "torch"
        array_type = library.module.Tensor if torch else library.module.ndarray
        if not all(d is None or type(a) is array_type for a, d in zip(args, devices)):
            return
        if entry.generic is not None and self._mode == "reduce-overhead" and runner is None:
            return                       # a graph per shape (_run_graphed), each added with its runner
        if entry.result.writebacks:
            return   # the dispatcher's overlap and writeable guards read NumPy arrays only: this path checks
        # A generic entry's guards take its dynamic axes at any size from their least (-m); its
        # graphs (reduce-overhead) are one a shape, each guarded on its own.
        generic = entry.generic if runner is None else None
        shapes = ([s[3] if s[0] == "array" else None for s in generic[0]] if generic is not None else
                  [tuple(a.shape) if d is not None else None for a, d in zip(args, devices)])
        relations = entry.relations + (generic[1] if generic is not None else [])
        kind = "cuda_tensor" if torch else "cupy_array"
        specs = [(kind, type(a), a.dtype, shape, device) if d is not None else guards.arg_guard(a)
                 for a, d, shape in zip(args, devices, shapes)]
        if any(s[0] == "type" for s in specs):
            return                       # an object the guards cannot describe: this path decides
        if runner is not None:
            self._dispatcher.add_entry(specs, [g.spec() for g in entry.guards], None, [], None, runner, relations)
            entry.dispatched = True
            return
        if torch:
            # torch.empty_strided: 2.0 µs a call on an H200 where torch.empty took 3.5.
            empty, stream = library.module.empty_strided, library.module._C._cuda_getCurrentRawStream
            output_args = [(shape, _contiguous_strides(shape)) for shape, _ in entry.result.outputs]
            options = [dict(zip(("dtype", "device"), library.torch_type(dtype, device)))
                       for _, dtype in entry.result.outputs]
        else:
            empty, stream = library.empty, library.stream
            output_args = [(shape,) for shape, _ in entry.result.outputs]
            options = [{"dtype": dtype, "device": device} for _, dtype in entry.result.outputs]
        self._dispatcher.add_cuda_entry(specs, [g.spec() for g in entry.guards], entry.kernel,
                                        None if entry.result.plain else entry.result.build, relations, device,
                                        empty, output_args, options, stream, library.name)
        entry.dispatched = True

    def cache_counts(self):
        """(entries, hits, compiles) of this path for CompiledFunction.cache_info: the entries the
        C++ dispatcher holds (and the calls it serves) are counted there."""
        entries = [e for kept in self._entries.values() for e in kept] + [g.entry for g in self._generic]
        return sum(not e.dispatched for e in entries), self.hits, self._compiles

    def compile_only(self, args):
        """Captures and compiles for these arguments without running anything (no GPU needed
        for NumPy arguments: the target then is this function's, "cuda" meaning capability 7.0)."""
        devices = [cuda_device(a) for a in args]
        specs = cuda_shapes.specs_of(args, devices)
        axes = self._axes_to_generalise(specs, args)
        if any(d is not None for d in devices):
            library = _Library.of(next(a for a, d in zip(args, devices) if d is not None)) or _host_library()
            device = next(d for d in devices if d is not None)
            entry = self._compile(library, device, args, axes)
            head = (library.name, device)
        else:
            stand_ins = _stand_ins(args, lambda a: a.dtype if isinstance(a, (np.ndarray, np.generic)) else None,
                                   _numpy_scalar_positions(args))
            entry = self._compile_stand_ins(stand_ins, args, self._target if self._target != "auto" else "cuda", axes=axes)
            head = ("numpy", None)
        head += (_same_objects(args), ())
        self._keep(head, head + tuple(specs), entry)
        return entry

    def _keep(self, head, key, entry):
        """A new entry: among those of its exact ``key``, or one for any size."""
        if entry.generic is None:
            self._entries.setdefault(key, []).append(entry)
        else:
            self._generic.append(cuda_shapes.GenericEntry(head, *entry.generic, entry))

    def _axes_to_generalise(self, specs, args):
        """The (argument, axis) pairs this call's entry is compiled for any size of
        (dynamic_shapes.dynamic_axes: under dynamic=None, those whose size alone changed since an
        earlier compile)."""
        axes = dynamic_shapes.dynamic_axes(specs, args, self._seen_specs, self._owner.options["dynamic"],
                                           self._dynamic_axes)
        self._seen_specs.append(specs)
        return axes

    def _compile(self, library, device, args, axes=frozenset(), scalars=()):
        stand_ins = _stand_ins(args, lambda a: library.dtype(a) if cuda_device(a) is not None else None, scalars)
        target = self._target if self._target not in ("auto", "cuda") else cuda_target(library.capability(device))
        tune = ((library, device) if self._mode == "max-autotune" and self._schedule is None
                and self._autoscheduler == "hcompile" else None)
        return self._compile_stand_ins(stand_ins, args, target, tune, {"parallelism": str(library.multiprocessors(device))},
                                       axes, device)

    def _compile_stand_ins(self, stand_ins, args, target, tune=None, peer_params=None, axes=frozenset(), device=-1):
        """The entry for arguments captured as NumPy ``stand_ins`` (the arrays' shapes and
        dtypes), compiled for ``target``; raises Unsupported for what the GPU path cannot run.
        ``tune``: (library, device) of the real ``args`` where max-autotune measures schedules;
        ``peer_params``: the device's parameters for a Halide autoscheduler (its SM count);
        ``axes``: (argument, axis) pairs to compile for any size where the capture allows
        (the entry's ``generic`` then says how it is guarded); ``device``: the CUDA device whose
        measured parameters the GPU cost model predicts for (-1: a reference H100)."""
        code = self._fn.__code__
        _warn_if_rounding_may_be_fused()
        blas.load_cublas()
        start = time.perf_counter()
        record = {"graph": None, "report": None, "break": None, "seconds": 0.0, "resumes": [], "started": start}
        self._records.append(record)
        owner = self._owner
        def capture_at(shapes=None, watch_sizes=()):
            return capture(self._fn, tuple(stand_ins), outline_loops=not owner.options["fullgraph"],
                           opaque_arguments=owner._generated, shapes=shapes, watch_sizes=watch_sizes)
        cap = capture_at()
        record["graph"] = str(cap.graph)
        relations = [("same", a, b, same) for (a, b), same in cap.identities.items()] + list(cap.relations)
        continuation = None
        if cap.break_point is not None:
            # As on the CPU (api.py): the graph before the break runs here, the instruction as
            # Python on the rebuilt state (the library's arrays), the code after it in a resume
            # function, itself compiled (on the GPU, for CUDA arrays). Written arguments are
            # copied in by _run before the continuation runs.
            continuation = owner._continue_after_break(cap.break_point, record)
            tune = None                  # code before a graph break is not tuned (as on the CPU)
            if not cap.graph.outputs:
                record["graph"] = None
                return _Entry(None, [], _Result(cap, None, continuation), cap.guards, relations=relations)
        elif not cap.graph.outputs:
            # Nothing computed (a resume function handing back what it was given, a function
            # returning an argument or a constant): the result is built from the arguments.
            record["graph"] = None
            return _Entry(None, [], _Result(cap, None), cap.guards, relations=relations)
        base = cap
        cap, symbols, extent_relations, smallest = owner._generic_over_axes(cap, capture_at, stand_ins, axes, record)
        if symbols is not None:
            record["graph"] = str(cap.graph)
            if tune is not None:
                record["tuning"] = "not tuned: compiled for any size (tuning records are per shape)"
            tune = None
        schedule, candidates, key = self._schedule, 0, None
        if tune is not None:
            # Records per graph, arguments, target and GPU model (the host's fingerprint is the
            # database's machine): a later process reuses the measured schedule.
            library, device = tune
            key = tuning.workload.workload_key(str(cap.graph), guards.layouts(stand_ins),
                                               f"{target} {library.device_name(device)}" +
                                               tuning.workload.fast_math_key(self._owner.options))
            choice = tuning.schedule_for(None, key)
            schedule, record["schedule_origin"], record["tuning_key"] = choice.schedule, choice.origin, key
            if choice.origin == "tuning record":
                tuning.REUSED.append((self._qualname, key, choice.measured_seconds))
            candidates = 2 * config.tuning_trials if schedule is None else 0

        def compile_with(decisions, candidates=0):
            compiled_symbols, extent_values = symbols or ([], [])
            return _C.compile_graph(cap.graph, target, layouts=guards.layouts(stand_ins),
                                    want_lowered_stmt=debug_dump.enabled() or logs.enabled("output_code"),
                                    symbols=compiled_symbols, extent_values=extent_values,
                                    autoscheduler=self._autoscheduler, schedule=decisions, tuning_candidates=candidates,
                                    autoscheduler_params=list((peer_params or {}).items()), cuda_device=device,
                                    fast_math=self._owner.options["fast_math"],
                                    symbol_sizes=[int(args[arg].shape[axis]) for _, arg, axis in compiled_symbols])
        try:
            try:
                kernel, report = compile_with(schedule, candidates)
            except (RuntimeError, ValueError) as e:
                if symbols is None:
                    raise
                # The compiler refused the symbolic extents (its check runs on the optimized
                # graph too): these shapes, then, compile as they are.
                logs.log("recompiles", "%s: compiling for any size failed, so for these shapes: %s", self._qualname, e)
                record["dynamic"] = f"static shapes ({dynamic_shapes.describe(axes)} changed, but {e})"
                cap, symbols, record["graph"] = base, None, str(base.graph)
                kernel, report = compile_with(schedule, candidates)
        except (RuntimeError, ValueError) as e:
            record["compile_failure"] = str(e)
            raise CompileError(f"{self._qualname}: {e}") from e
        if candidates:
            kernel, report = self._autotune(cap, stand_ins, args, tune, key, kernel, report, compile_with, record)
        record["report"] = report
        record["seconds"] = time.perf_counter() - start
        logs.log("schedule", "%s CUDA schedule:\n%s", self._qualname, report["schedule"])
        logs.log("output_code", "%s lowered Halide:\n%s", self._qualname, report["lowered_stmt"])
        debug_dump.write(self._qualname, report)
        for i in kernel.input_args:
            if cuda_device(args[i]) is None and not isinstance(stand_ins[i], (np.ndarray, np.generic)):
                raise Unsupported(f"argument {i} is read at run time but is not an array",
                                  code.co_filename, code.co_firstlineno)
        generic = None
        if symbols is not None:
            smallest, bounds = dynamic_shapes.schedule_bounds(smallest, symbols[0], report, record)
            generic = (dynamic_shapes.guard_specs(cuda_shapes.specs_of(args, [cuda_device(a) for a in args]), axes,
                                                  smallest), extent_relations + bounds)
        return _Entry(kernel, kernel.input_args, _Result(cap, kernel, continuation), cap.guards, relations=relations,
                      launches=cuda_graphs.launches(report["decisions"]), generic=generic)


    def _autotune(self, cap, stand_ins, args, tune, key, kernel, report, compile_with, record):
        """max-autotune on the device (tuning/autotune.py): gpu_schedule's list and its
        alternatives (report["candidates"]) timed on the real arguments, GPU_TIMING_RUNS launches
        between two synchronisations (the device's time per run, as a loop of calls sees it, not
        a synchronisation's latency: with one a call, gelu_mlp's tuner chose a schedule 30% slower),
        outputs checked against the fixed rule's; (kernel, report) of the fastest. Timing calls
        write no argument: a written value is an output until _run copies it in."""
        library, device = tune
        outputs = _Result(cap, kernel).outputs
        describe = library.describe

        def runner(candidate):
            inputs = [describe(args[i]) for i in candidate.input_args]

            def call():
                made = [library.empty(shape, dtype, device) for shape, dtype in outputs]
                described, stream = [describe(o) for o in made], library.stream(device)
                for _ in range(GPU_TIMING_RUNS):
                    _C.run_cuda(candidate, inputs, described, device, stream)
                library.synchronize(device)
                return made
            call.runs = GPU_TIMING_RUNS
            return call

        with tuning.open_database() as db:
            db.add_workload(key, self._qualname, tuning.workload.structural_graph(str(cap.graph)),
                            tuning.workload.graph_to_json(cap.graph),
                            tuning.workload.arguments_of(stand_ins, guards.layouts(stand_ins)), report["target"])
            tuner = tuning.Autotuner(self._qualname, compile_with, runner, db, key, config.tuning_trials,
                                     config.tuning_seconds, to_host=lambda made: [library.to_host(o) for o in made])
            try:
                kernel, report, summary = tuner.run(kernel, report)
            except tuning.NotTuned as e:
                record["tuning"] = f"not tuned: {e}"
                return kernel, report
        record["tuning"] = summary
        logs.log("schedule", "%s: max-autotune measured %d GPU schedules in %.1f s: %.3f ms (the fixed rule's %.3f ms)",
                 self._qualname, summary["trials"], summary["tuning_seconds"], summary["best_seconds"] * 1e3,
                 summary["default_seconds"] * 1e3)
        return kernel, report


# Kernel runs per timed call of GPU max-autotune (one synchronisation after them).
GPU_TIMING_RUNS = 10

_said_rounding_may_fuse = False


def _warn_if_rounding_may_be_fused():
    """Said once, at the first GPU compile, where Halide's Python module was imported before
    hcompile: its LLVM may have started without the -nvptx-fma-level=0 hcompile sets (__init__.py)."""
    global _said_rounding_may_fuse
    from . import HALIDE_IMPORTED_FIRST
    if HALIDE_IMPORTED_FIRST and not _said_rounding_may_fuse:
        _said_rounding_may_fuse = True
        logs.warn("halide was imported before hcompile: if it compiled anything first, Halide's LLVM ignores the "
                  "-nvptx-fma-level=0 hcompile sets, and GPU kernels may fuse a product with an addition "
                  "(last-bit differences from NumPy); import hcompile first")


# run_on_host_copies: the call was not run (its arrays share memory, or cannot be copied).
NOT_COPIED = object()


def run_on_host_copies(fn, args, kwargs, qualname, why):
    """``fn`` run as plain Python on NumPy copies of the CUDA arrays among ``args`` and ``kwargs``
    (at any depth of lists, tuples and dicts), where the GPU path cannot run the call (``why``):
    the NumPy semantics the GPU path compiles, where NumPy itself refuses CUDA arrays. Arrays
    it wrote are copied back into the caller's; arrays it returns are moved to the device as
    the first CUDA argument's kind (a returned argument is the caller's own). NOT_COPIED, having
    changed none of the caller's arrays, where two CUDA arguments share memory (copies would part
    them), a copy fails, or the code raises AttributeError or TypeError on the copies (it was
    written for the library's arrays)."""
    flat = []
    _map_arrays((args, kwargs), lambda a: flat.append(a) or a)
    if not flat:
        return NOT_COPIED
    first = flat[0]
    library = _Library.of(first)
    try:
        carrier = library or _host_library()
        ranges = [carrier.byte_range(a if _Library.of(a) else carrier.from_dlpack(a)) for a in flat]
        if any(_ranges_meet(x, y) for i, x in enumerate(ranges) for y in ranges[i + 1:]):
            return NOT_COPIED
        copies = {}                        # id(caller's array) -> (caller's array, its library, host copy, snapshot)

        def to_host(a):
            if id(a) not in copies:
                own = _Library.of(a)
                host = (own or carrier).to_host(a if own else carrier.from_dlpack(a))
                host = np.array(host, copy=True)        # writable, the caller's layout kept
                copies[id(a)] = (a, own, host, host.copy())
            return copies[id(a)][2]
        host_args, host_kwargs = _map_arrays((args, kwargs), to_host)
    except Exception:          # noqa: BLE001 (no library or driver to copy with: Python as given)
        return NOT_COPIED
    try:
        result = fn(*host_args, **host_kwargs)
    except (AttributeError, TypeError):
        # Code written for the library's arrays (`x.clone()`, a torch function): nothing of the
        # caller's was written (the copies are private), so it runs on the CUDA arrays instead.
        return NOT_COPIED
    logs.log("graph_breaks", "%s: ran as Python on host copies of its %d CUDA arrays (%s)", qualname, len(copies), why)
    device = cuda_device(first)
    for a, own, host, before in copies.values():
        if own is not None and host.tobytes() != before.tobytes():
            own.copy_into(a, own.to_device(host, device))
    by_host = {id(host): a for a, _, host, _ in copies.values()}

    def to_device(r):
        if id(r) in by_host:
            return by_host[id(r)]
        if isinstance(r, (np.ndarray, np.generic)):
            moved = carrier.to_device(np.asarray(r), device)
            if library is None:        # another producer's kind, through its array namespace
                namespace = getattr(first, "__array_namespace__", None)
                if namespace is not None and hasattr(namespace(), "from_dlpack"):
                    return namespace().from_dlpack(moved)
            return moved
        return r
    return _map_leaves(result, to_device)


def _same_objects(args):
    """The pairs of arguments that are one object (the capture may have specialised on `a is b`)."""
    return tuple((i, j) for i in range(len(args)) for j in range(i + 1, len(args)) if args[i] is args[j])


def _ranges_meet(x, y):
    """Whether two [first, last) address ranges share a byte (an empty one meets none)."""
    return x[0] < x[1] and y[0] < y[1] and x[0] < y[1] and y[0] < x[1]


def _contiguous_strides(shape):
    """C-contiguous strides in elements, as PyTorch makes them (an empty axis counted as 1)."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _numpy_scalar_positions(args):
    """The indices of the caller's NumPy scalars (an entry for them is not one for 0-d arrays)."""
    return tuple(i for i, a in enumerate(args) if isinstance(a, np.generic))


def _stand_ins(args, dtype_of, scalars=()):
    """NumPy arrays of the arguments' shapes and dtypes (``dtype_of``: None for an argument that
    is passed as it is), one per distinct argument object, so that the capture sees `a is b`
    where the caller passed one array twice; NumPy scalars of their dtypes at the indices
    ``scalars`` (the caller's NumPy scalars, whatever carries them to the device)."""
    made = {}
    out = []
    for i, a in enumerate(args):
        dtype = dtype_of(a)
        if dtype is None:
            out.append(a)
            continue
        if id(a) not in made:
            made[id(a)] = np.zeros((), dtype)[()] if i in scalars else np.empty(a.shape, dtype)
        out.append(made[id(a)])
    return out


@dataclass
class _Entry:
    kernel: object
    input_args: list
    result: object
    guards: list
    unsupported: Exception = None       # why these arguments run as Python (Unsupported, CompileError); without
                                        # it, an entry without a kernel computes nothing before a graph break
    relations: list = None              # how the arguments relate (`a is b`), as the dispatcher checks it
    in_dispatcher: bool = False         # offered to the C++ dispatcher already
    dispatched: bool = False            # one of the C++ dispatcher's entries
    graphed: object = None              # mode="reduce-overhead": its CUDA graph (cuda_graphs.GraphedEntry)
    launches: int = 0                   # the kernel's launches a call (cuda_graphs.launches)
    generic: tuple = None               # compiled for any size of some axes: (guard specs, relations),
                                        # cuda_shapes.GenericEntry's
    graphs: dict = None                 # reduce-overhead of a generic entry: a CUDA graph per input shapes


def _map_arrays(result, convert, keep=()):
    """``result`` with its CUDA arrays converted, but for the caller's own arguments (``keep``),
    returned as they are."""
    return _map_leaves(result, lambda r: r if any(r is a for a in keep) or cuda_device(r) is None else convert(r))


def _map_leaves(result, convert):
    """``result`` with each leaf converted, through tuples, lists and dicts."""
    if isinstance(result, tuple):
        return tuple(_map_leaves(r, convert) for r in result)
    if isinstance(result, list):
        return [_map_leaves(r, convert) for r in result]
    if isinstance(result, dict):
        return {k: _map_leaves(v, convert) for k, v in result.items()}
    return convert(result)


class _Result:
    """The outputs a kernel writes (shape, dtype) and the return value built from them: at a
    graph break, what the continuation (resume.py) returns, the code after the break run on them."""

    def __init__(self, cap, kernel, continuation=None):
        graph = cap.graph
        shapes = kernel.output_shapes if kernel is not None else []
        # A kernel for any size has its outputs' shapes per call (outputs_for).
        self._kernel = kernel if kernel is not None and cuda_shapes.is_symbolic(kernel) else None
        self.outputs = [(tuple(shape), np.dtype(graph.dtype(node))) for shape, node in zip(shapes, graph.outputs)]
        self._result = cap.result
        self._continuation = continuation
        self.writebacks = list(cap.writebacks)   # (argument index, output index), copied in after the kernel
        self.as_scalar = scalar_outputs(cap)      # per output: a NumPy scalar on the host, not a 0-d array
        self.plain = (continuation is None and not self.writebacks and
                      returns_outputs(cap.result, len(self.outputs)))

    def outputs_for(self, args):
        """(shape, dtype) of each output of a call with ``args``."""
        if self._kernel is None:
            return self.outputs
        return [(shape, dtype) for shape, (_, dtype) in zip(cuda_shapes.output_shapes(self._kernel, args), self.outputs)]

    def build(self, outputs, args, to_host=None):
        if to_host is not None:
            outputs = [to_host(o) for o in outputs]
            outputs = [o[()] if scalar and o.ndim == 0 else o for o, scalar in zip(outputs, self.as_scalar)]
        if self._continuation is not None:
            return self._continuation(outputs, args)
        return assemble(self._result, outputs, args)  # a 0-d array stays one on the device
