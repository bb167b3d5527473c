"""``mode="reduce-overhead"`` on the GPU: a compiled call captured in a CUDA graph and replayed.

A kernel of several stages launches each one from the host (4-5 µs a launch in Halide's CUDA
runtime); a CUDA graph launches them all at once. The second call of an entry (its arguments'
types, shapes and device) is captured with PyTorch's CUDA graphs (CuPy's for CuPy arrays) and
later calls replay it:

* An argument that was the same array at the first two calls (a weight) is read where it is (the
  graph keeps a reference, so its memory stays the caller's array's). One that changed (a batch)
  is copied into an array of the graph's own before each replay; one read in place until then
  that moves later is recaptured as copied, up to MAX_CAPTURES captures an entry.
* The kernel's intermediates are memory the graph owns (runtime's cuda_graph_memory.h), not
  Halide's allocation cache, which could free or hand out again the addresses a graph keeps.
* Outputs are copied out of the graph's arrays after each replay, so a result stays the caller's
  after the next call (PyTorch's reduce-overhead hands out the graph's own arrays instead).

Calls that write into their arguments or stop at a graph break run as default mode (cuda.py
decides). What fails to capture runs
as default mode from then on, said in the recompile log.
"""
from __future__ import annotations

from . import _C, logs

MAX_CAPTURES = 3

# Entries launching fewer kernels a call run as default mode: a replay costs the Python path, the
# replay and the outputs' copies. Measured on an H200, µs a call default / replayed: two
# normalised layers' 8 launches 60.2 / 68.9, a small transformer layer's 27 launches 137.4 / 92.6
# (about 28 + 4.1 a launch against 59 + 1.25: even at 11); softmax's one kernel 11.8 / 36.3.
# With row groups the small transformer layer launches 10, and its default call costs more than
# that line says (many arguments): at 10, 128 µs as default mode, 84 replayed (torch.compile's
# reduce-overhead 86; H200, 2026-11-27), where a threshold of 12 left it in default mode. Since
# replays run from the C++ dispatcher (dispatcher_runner), every entry replayed in one process on
# an H200 (2026-11-28, µs default / replayed): the transformer layer 81.2 / 26.5, gelu_mlp's 3
# launches 30.0 / 29.0, ln_linear_gelu_res 29.4 / 29.4, matmul_softmax_100 15.7 / 17.9, softmax's
# one kernel 9.6 / 16.8: below 10 launches a replay still gains nothing.
MIN_LAUNCHES = 10


def launches(decisions):
    """The kernel launches of a call of a GPU schedule (a kernel per region computed at the root,
    a cuBLAS call per product): what a CUDA graph saves."""
    return sum(1 for d in decisions if d[1] in ("compute_root", "call_library"))


class GraphedEntry:
    """The CUDA graph of one compiled entry (cuda.py's _Entry) and the arrays it reads and writes."""

    def __init__(self, qualname):
        self._qualname = qualname
        self._first_pointers = None      # the inputs' addresses at the entry's first call
        self._copied = None              # per kernel input: copied into the graph's array before each replay
        self._read = None                # per kernel input: the array the graph reads
        self._read_pointers = None       # ... and its device address
        self._outputs = None             # the arrays the graph writes
        self._graph = None               # replays the captured graph (_Library.capture_graph)
        self._library = None
        self.captures = 0
        self.replays = 0
        self.dispatched = False          # the C++ dispatcher replays it (cuda.py)
        self.failure = None              # why this entry runs as default mode

    def run(self, library, device, entry, args):
        """The outputs of this call (new arrays), or None: run it as default mode."""
        if self.failure is not None:
            return None
        inputs = [args[i] for i in entry.input_args]
        pointers = [library.pointer(x) for x in inputs]
        if self._first_pointers is None:
            self._first_pointers = pointers      # the first call runs as default mode: Halide's
            return None                          # runtime loads the kernel's module then
        if self._graph is not None:
            moved = [i for i, (p, read) in enumerate(zip(pointers, self._read))
                     if not self._copied[i] and p != library.pointer(read)]
            if not moved:
                return self._replay(inputs)
            self._copied = [c or i in moved for i, c in enumerate(self._copied)]
        else:
            self._copied = [p != q for p, q in zip(pointers, self._first_pointers)]
        if self.captures >= MAX_CAPTURES:
            self.fail(f"its arguments moved after {MAX_CAPTURES} captures")
            return None
        return self._capture(library, device, entry, args)

    def _capture(self, library, device, entry, args):
        inputs = [args[i] for i in entry.input_args]
        self._library = library
        self._read = [library.clone(x) if copied else x for x, copied in zip(inputs, self._copied)]
        self._outputs = [library.empty(shape, dtype, device) for shape, dtype in entry.result.outputs_for(args)]
        describe = library.describe
        self.captures += 1
        _C.cuda_graph_allocations_begin()
        try:
            self._graph = library.capture_graph(device, lambda: _C.run_cuda(
                entry.kernel, [describe(x) for x in self._read], [describe(o) for o in self._outputs], device,
                library.stream(device), captured=True))
        except Exception as e:   # noqa: BLE001 (any failure to capture: default mode, said)
            self._graph = None
            self.fail(f"{type(e).__name__}: {e}")
            return None
        finally:
            _C.cuda_graph_allocations_end()
        self._read_pointers = [library.pointer(x) for x in self._read]
        logs.log("recompiles", "%s: captured a CUDA graph (%d of its %d inputs copied in before each replay)",
                 self._qualname, sum(self._copied), len(self._copied))
        return self._replay(None)

    def _replay(self, inputs):
        library = self._library
        if inputs is not None:
            for i, copied in enumerate(self._copied):
                if copied:
                    library.copy_into(self._read[i], inputs[i])
        self._graph()            # the graph's replay, on the library's current stream
        self.replays += 1
        return [library.clone(o) for o in self._outputs]

    def dispatcher_runner(self, input_args, build):
        """A callable for the C++ dispatcher (cuda.py adds it once the graph replays): a call its
        guards let through (the arguments' types, dtypes, shapes, device, layouts) replays the graph
        and returns `build(outputs, args, None)`, where every input read in place is the array the
        graph reads; otherwise _C.MISS, and the Python path decides (a recapture, default mode).
        Per call it costs the pointer checks, the copies in and out and the replay: a small
        transformer layer's call took 27.0 µs this way on an H200, 79.0 through the Python path
        (whose own work was twice the graph's 24.5 µs of GPU time)."""
        def run(*args):
            graph, read, copied = self._graph, self._read, self._copied
            if graph is None:
                return _C.MISS
            inputs = [args[i] for i in input_args]
            pointer = self._library.pointer
            if any(not c and pointer(x) != p for x, c, p in zip(inputs, copied, self._read_pointers)):
                return _C.MISS
            for x, target, c in zip(inputs, read, copied):
                if c:
                    self._library.copy_into(target, x)
            graph()
            self.replays += 1
            return build([self._library.clone(o) for o in self._outputs], args, None)
        return run

    def fail(self, why):
        """From now on this entry runs as default mode, for the reason `why` (said in the log)."""
        self.failure = why
        self._graph = self._read = self._read_pointers = self._outputs = None
        logs.log("recompiles", "%s: mode='reduce-overhead' runs this entry as default mode: %s", self._qualname, why)
