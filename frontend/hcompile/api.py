"""``@hcompile``: the decorator, the compiled-function object and its compile path.

Every call goes first to the C++ dispatcher (guards + cached kernel). On a miss we bind the
arguments, capture the bytecode into a graph, compile it, and register a new entry; anything that
cannot be captured or compiled registers an entry that runs the original Python function, so the
answer is always the one Python gives.
"""
from __future__ import annotations

import functools
import inspect
import linecache
import threading
import time
import weakref
from collections import namedtuple

import numpy as np

from . import _C, cuda, debug_dump, dynamic_shapes, eager, guards, logs, structure, tuning
from .config import config
from .capture import assemble, capture, returns_outputs, scalar_outputs
from .capture.errors import locate
from .capture.interpreter import _normalized, bind_arguments
from .errors import CompileError, Unsupported
from .resume import Continuation, ResumeCache, loop_body_function, resume_function

CacheInfo = namedtuple("CacheInfo", "entries hits misses recompiles")

MODES = ("default", "reduce-overhead", "max-autotune")
BACKENDS = ("halide", "eager")
# "hcompile" and "baseline": our schedule; the others: Halide's own autoschedulers on the same
# lowered pipeline (peers for like-for-like comparisons; autoscheduler/halide_peers.h): Adams2019
# for CPUs, Anderson2021 for GPUs, Mullapudi2016 and Li2018 for both.
AUTOSCHEDULERS = ("hcompile", "baseline", "Adams2019", "Mullapudi2016", "Li2018", "Anderson2021")
# Halide buffers (without the slower large_buffers target feature) stay under 2^31 bytes (input
# views spanning more are copied by the dispatcher; see classify_layout). Arrays of more than
# 16 dimensions run as Python: compile time grows steeply with rank (measured on 2 cores, a
# float sum over the last axis: 7.5 s at 16 dimensions, 52 s at 24, minutes at 32).
HALIDE_BUFFER_LIMIT = 2**31
MAX_KERNEL_DIMS = 16

_live_functions = weakref.WeakSet()


class BreakRecord:
    """One graph break: why, and where in the source; ``resumes``: the code before it is
    compiled and the code after it continues in a resume function (else the whole function runs
    as Python, ``refused`` saying why it could not resume)."""

    def __init__(self, reason, filename, lineno, resumes=False, refused=None):
        self.reason, self.filename, self.lineno = reason, filename, lineno
        self.resumes, self.refused = resumes, refused

    @property
    def source_line(self):
        return linecache.getline(self.filename, self.lineno).strip() if self.filename else ""

    def __repr__(self):
        return f"{self.filename}:{self.lineno}: {self.reason}"


class CompiledFunction(_C.CallFront):
    """What ``hcompile(fn)`` returns: call it like ``fn``. A call goes first to the dispatcher's
    entries, from C++ (_C.CallFront: positional arguments, trailing parameters at their defaults),
    then to ``_call_slow``."""

    def __init__(self, fn, *, mode="default", fullgraph=False, dynamic=None, backend="halide",
                 target="auto", autoscheduler="hcompile", schedule=None, fast_math=False, _generated=False,
                 _structure=None):
        if not isinstance(fn, type(lambda: 0)):
            raise TypeError(f"hcompile needs a Python function, got {type(fn).__name__}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        if autoscheduler not in AUTOSCHEDULERS:
            raise ValueError(f"autoscheduler must be one of {AUTOSCHEDULERS}, got {autoscheduler!r}")
        schedule = _decision_list(schedule)
        if not isinstance(target, str):
            raise TypeError(f"target must be a string, got {type(target).__name__}")
        _C.jit_target(target)  # ValueError naming what is wrong, rather than SIGILL on the first call
        if not isinstance(fast_math, bool):
            raise TypeError(f"fast_math must be True or False, got {fast_math!r}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.options = dict(mode=mode, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                            target="host" if target == "auto" else target, autoscheduler=autoscheduler,
                            schedule=schedule, fast_math=fast_math)
        # One family of entries per argument structure (structure.py): a child CompiledFunction
        # per Spec, called with the leaves. Its entries that run as Python hand back _AS_PYTHON,
        # and the parent calls the function with the caller's own arguments.
        self._structure = _structure
        self._children = {}
        self._dispatcher = _C.Dispatcher(fn if _structure is None else _as_python)
        super().__init__(self._dispatcher, fn)
        # A resume function or loop body (resume.py): arguments of any type are taken, opaque.
        self._generated = _generated
        # Held while a guard set is compiled (and by reset), so that threads missing on the same
        # arguments compile once; re-entrant for a call of the function from its own compile.
        self._compile_lock = threading.RLock()
        self._fast_arity = _plain_arity(fn)
        self._last_value_guards = []   # outside-value guards of the newest entry (recompile logs)
        self._guard_sets = []          # guard specs of every entry, in order (for recompile logs)
        self._dynamic_floats = set()   # float arguments read at run time (_float_arguments_read_at_run_time)
        self._dynamic_axes = set()     # (argument, axis) compiled for any size (dynamic_shapes.py)
        self._breaks_said_once = set()  # reasons of the breaks logged once (_record_break)
        self._misses = 0               # calls that went through the compile path
        self._redispatches = 0         # dispatcher hits that were really the first call of an entry
        self.compile_records = []      # per entry: dict(graph, report, break, seconds, resumes)
        self._resumes = ResumeCache()  # the code after this function's graph breaks
        # Calls with CUDA arrays, and every call under a CUDA target (cuda.py); made on first use.
        self._target_option = target
        self._cuda = None
        _live_functions.add(self)

    # -- calling -------------------------------------------------------------------------------
    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def _call_slow(self, args, kwargs):
        if cuda.is_cuda_target(self._target()) or cuda.any_cuda_array(args) or cuda.any_cuda_array(kwargs.values()):
            return self._call_cuda(args, kwargs)
        bound = self._bind(args, kwargs)
        if bound is None:
            return self._fn(*args, **kwargs)
        spec, leaves = bound
        target = self if spec is None else self._child(spec)
        result = _AS_PYTHON if target is None else target._run(leaves)
        if result is _AS_PYTHON:
            # Past the recompile limit, or a reset() on another thread dropped the new entry (or
            # a global it guards changed) before we ran it: Python's answer is the answer.
            return self._fn(*args, **kwargs)
        return result

    def _cuda_entries(self):
        if self._cuda is None:
            # "auto" (the target of the arrays' device), or the CUDA target the function names.
            target = self._target() if cuda.is_cuda_target(self._target()) else "auto"
            self._cuda = cuda.CudaEntries(self._fn, self.__qualname__, target, self.options["autoscheduler"],
                                          self.options["schedule"], self.compile_records, self, self._dispatcher,
                                          mode=self.options["mode"])
        return self._cuda

    def _call_cuda(self, args, kwargs):
        """A call on the GPU (cuda.py); plain Python where the function cannot run there yet."""
        target = self._target()
        if not cuda.is_cuda_target(target) and self._target_option != "auto":
            raise ValueError(f"hcompile: {self.__qualname__} was compiled for target {target!r} and called with CUDA "
                             "arrays (target='auto' or 'cuda' runs them on their GPU)")
        try:
            if self.options["backend"] == "eager":
                raise Unsupported("backend='eager' runs the captured graph with NumPy, on the host: CUDA arrays run "
                                  "as plain Python", self._fn.__code__.co_filename, self._fn.__code__.co_firstlineno)
            if kwargs or len(args) != self._fast_arity:
                args = self._cuda_positional(args, kwargs)
            return self._cuda_entries()(args)
        except Unsupported as e:
            self._record_break(e, once=True)
            return self._python_on_cuda_arrays(e, args, kwargs)
        except CompileError as e:
            if self.options["fullgraph"]:
                raise
            logs.log("graph_breaks", "%s: CUDA compile failed, running as Python: %s", self.__qualname__, e)
            return self._python_on_cuda_arrays(e, args, kwargs)

    def _python_on_cuda_arrays(self, why, args, kwargs):
        """The function as plain Python where the GPU path cannot run it: on host copies of the
        CUDA arrays, the NumPy arrays it was written for (cuda.run_on_host_copies), or, where
        arguments share memory (copies would part them), cannot be copied, or the code needs the
        library's own arrays (an AttributeError or TypeError on the copies), on the CUDA arrays
        themselves. A TypeError there (most often NumPy refusing a CUDA array) also says that, and
        why, the call ran as Python."""
        result = cuda.run_on_host_copies(self._fn, args, kwargs, self.__qualname__, why)
        if result is not cuda.NOT_COPIED:
            return result
        try:
            return self._fn(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"hcompile: {self.__qualname__} ran as plain Python on CUDA arrays ({why}), where it "
                            f"raised: {e}") from e

    def _cuda_positional(self, args, kwargs):
        """Every parameter of a GPU call, in order, the defaults filled in. Positional arguments
        followed by defaults are the common case (a transformer layer's `heads=8`), done without
        inspect: its signature and bind took 74 µs a call of a 14-parameter function."""
        every = None if kwargs else self._with_trailing_defaults(args)
        if every is not None:
            return every
        signature = inspect.signature(self._fn)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in signature.parameters.values()):
            raise Unsupported("with CUDA arrays, only functions of plain positional parameters are compiled yet",
                              self._fn.__code__.co_filename, self._fn.__code__.co_firstlineno)
        return tuple(bound.arguments.values())

    def _run(self, args):
        """The result of a compiled entry for ``args`` (compiling one on a miss), or _AS_PYTHON."""
        result = self._dispatcher(*args)
        if result is not _C.MISS:
            return result
        if self._ensure_entry(args):
            result = self._dispatcher(*args)
            if result is not _C.MISS:
                return result
            if self._dispatcher.matches(*args):
                # A kernel compiled for any size found an array of this call past Halide's
                # 2 GiB buffers (an outer product of two long vectors): Python runs it.
                self._record_break(Unsupported("an array of this call is past Halide's 2 GiB buffer limit", self._fn.__code__.co_filename,
                                               self._fn.__code__.co_firstlineno), once=True)
        return _AS_PYTHON

    def _child(self, spec):
        """The entries for calls with argument structure ``spec``; None past the recompile limit
        (a new structure counts as a recompile)."""
        child = self._children.get(spec)
        if child is not None:
            return child
        with self._compile_lock:
            child = self._children.get(spec)
            if child is None:
                if len(self._children) >= config.recompile_limit:
                    code = self._fn.__code__          # under fullgraph, _record_break raises it
                    self._record_break(Unsupported(f"more than {config.recompile_limit} argument structures; "
                                                   f"new ones run as plain Python ({structure.describe(spec)})",
                                                   code.co_filename, code.co_firstlineno), once=True)
                    return None
                if self._children:
                    logs.log("recompiles", "%s: recompiling for a new argument structure (%s)",
                             self.__qualname__, structure.describe(spec))
                child = CompiledFunction(self._fn, **self.options, _generated=self._generated,
                                         _structure=spec)
                child.compile_records = self.compile_records   # one list: explain sees them all
                self._children[spec] = child
            return child

    def _ensure_entry(self, args):
        """Adds an entry for `args` unless one applies already; False past the recompile limit.
        Only the compile holds the lock: running the function (kernel or Python) never does, so
        two compiled functions calling each other from threads cannot deadlock."""
        with self._compile_lock:
            # Another thread may have compiled this guard set while we waited for the lock.
            if self._dispatcher.matches(*args):
                return True
            self._misses += 1
            limit = config.recompile_limit
            if len(self._guard_sets) >= limit:
                if self.options["fullgraph"]:
                    raise Unsupported(f"recompile limit of {limit} entries reached for these "
                                      f"arguments ({guards.diff(self._guard_sets[0], [guards.arg_guard(a) for a in args])})",
                                      self._fn.__code__.co_filename, self._fn.__code__.co_firstlineno)
                if len(self._guard_sets) == limit:
                    logs.log("recompiles", "%s: reached the limit of %d compiled entries; new argument "
                             "types and shapes now run as plain Python (the guard that changed: %s; hc.config.recompile_limit "
                             "raises the limit)", self.__qualname__, limit,
                             guards.diff(self._guard_sets[-1], [guards.arg_guard(a) for a in args], self._last_value_guards))
                    self._guard_sets.append(None)
                return False
            self._add_entry(args)
            self._redispatches += 1
            return True

    def _bind(self, args, kwargs):
        """(spec, leaves): the call bound as Python binds it, with the function's defaults as
        they are now, flattened (structure.py; spec None for a plain call, the leaves then being
        the parameters in order). None where Python must run it: arguments Python rejects
        (calling the function then raises Python's own TypeError, word for word, before its body
        runs), or past the limits on structure (a logged break)."""
        self._fast_arity = _plain_arity(self._fn)      # __code__ may have been replaced
        try:
            bound = bind_arguments(self._fn, args, kwargs)
        except TypeError:
            return None
        if self._generated:       # resume functions: plain, their arguments taken as they are
            return None, [bound[name] for name in self._fn.__code__.co_varnames[:self._fast_arity]]
        try:
            return structure.flatten(bound, self._fn)
        except Unsupported as e:
            self._record_break(locate(e, self._fn.__code__.co_filename, self._fn.__code__.co_firstlineno),
                               once=True)
            return None

    def compile_only(self, *args, **kwargs):
        """Capture and compile an entry for these arguments without running the function (what
        ``hc.explain`` reports): nothing of the function's own code runs, so no side effects."""
        binding = inspect.signature(self._fn).bind(*args, **kwargs)   # raises the binding error
        if cuda.is_cuda_target(self._target()) or cuda.any_cuda_array(args) or cuda.any_cuda_array(kwargs.values()):
            binding.apply_defaults()
            try:
                self._cuda_entries().compile_only(list(binding.arguments.values()))
            except Unsupported as e:
                if self.options["fullgraph"]:
                    raise
                self.compile_records[-1]["break"] = _break_record(e)
            except CompileError as e:    # recorded in compile_failure, as a CPU compile's is
                if self.options["fullgraph"]:
                    raise
                logs.log("graph_breaks", "%s: CUDA compile failed: %s", self.__qualname__, e)
            return
        bound = self._bind(args, kwargs)
        if bound is None:
            code = self._fn.__code__
            self.compile_records.append({"graph": None, "report": None, "seconds": 0.0, "resumes": [], "break": BreakRecord(
                "arguments past the limits on structure (structure.py)", code.co_filename,
                code.co_firstlineno)})
            return
        spec, leaves = bound
        target = self if spec is None else self._child(spec)
        if target is not None:
            with target._compile_lock:
                target._add_entry(leaves)

    # -- compiling -----------------------------------------------------------------------------
    def _float_arguments_read_at_run_time(self, arg_specs):
        """Marks the float arguments that entries read at run time instead of specialising on:
        all of them under dynamic=True; under dynamic=None, those whose value is all that differs
        from an earlier entry (a time, a step size, a coefficient that changes between calls
        would otherwise compile once per value); none under dynamic=False."""
        dynamic = self.options["dynamic"]
        floats = {i for i, spec in enumerate(arg_specs) if spec[0] == "float"}
        if dynamic:
            self._dynamic_floats |= floats
        elif dynamic is None:
            for old in self._guard_sets:
                if old is None or len(old) != len(arg_specs):
                    continue
                changed = {i for i, (a, b) in enumerate(zip(old, arg_specs)) if a != b}
                if changed and changed <= floats and all(old[i][0] == "float" for i in changed):
                    logs.log("recompiles", "%s: %s now read at run time (its value changed)",
                             self.__qualname__, ", ".join(f"float argument {i}" for i in sorted(changed)))
                    self._dynamic_floats |= changed
        return [guards.DYNAMIC_FLOAT if i in self._dynamic_floats and i in floats else spec
                for i, spec in enumerate(arg_specs)]

    def _add_entry(self, args):
        _warn_partial_options(self.options)     # at a CPU compile: a GPU-only function never sees it
        exact_specs = self._float_arguments_read_at_run_time([guards.arg_guard(a) for a in args])
        axes = dynamic_shapes.dynamic_axes(exact_specs, args, self._guard_sets, self.options["dynamic"],
                                           self._dynamic_axes)
        if self._guard_sets:
            logs.log("recompiles", "%s: recompiling (%s)", self.__qualname__,
                     guards.diff(self._guard_sets[-1], exact_specs, self._last_value_guards))
        # The exact shapes until the dynamic axes prove generic (_generic_over_axes).
        self._guard_sets.append(exact_specs)
        start = time.perf_counter()
        record = {"graph": None, "report": None, "break": None, "seconds": 0.0, "resumes": [],
                  "started": start}
        self.compile_records.append(record)
        try:
            dynamic_floats = frozenset(i for i, spec in enumerate(exact_specs) if spec is guards.DYNAMIC_FLOAT)

            def capture_at(shapes=None, watch_sizes=()):
                return capture(self._fn, tuple(args), outline_loops=not self.options["fullgraph"],
                               opaque_arguments=self._generated, structure=self._structure,
                               dynamic_floats=dynamic_floats, shapes=shapes, watch_sizes=watch_sizes)
            cap = capture_at()
            beyond = _beyond_kernel_limits(cap.graph)
            if beyond:
                raise Unsupported(beyond, self._fn.__code__.co_filename, self._fn.__code__.co_firstlineno)
            continuation = None
            if cap.break_point is not None:
                continuation = self._continue_after_break(cap.break_point, record, cap.writebacks)
        except Unsupported as e:
            if self.options["fullgraph"]:
                # Nothing was cached: forget this attempt so it does not count as an entry.
                self._guard_sets.pop()
                self.compile_records.pop()
            self._record_break(e)
            record["break"] = _break_record(e)
            record["resumes"] = []
            # A break that depends on how the arguments relate (a written argument aliasing
            # another) holds only while they relate so; other calls may still compile. Other
            # sizes may compile too: the entry keeps the exact shapes.
            self._dispatcher.add_entry(exact_specs, [], None, [], None, None, getattr(e, "relations", []))
            return
        base = cap
        cap, symbols, extent_relations, smallest = self._generic_over_axes(cap, capture_at, args, axes, record)
        # Code that computes nothing before a break, or after one (a resume function returning
        # what it was given), leaves no graph.
        empty = not cap.graph.outputs and (cap.break_point is not None or self._generated)
        record["graph"] = None if empty else str(cap.graph)
        record["guards"] = cap.guards
        value_specs = [g.spec() for g in cap.guards]
        identities = [(a, b, same) for (a, b), same in cap.identities.items()]
        relations = [("same", a, b, same) for a, b, same in identities] + cap.relations
        self._last_value_guards = cap.guards
        logs.log("guards", "%s: entry %d reads: %s", self.__qualname__, len(self._guard_sets) - 1,
                 [guards.describe_guard(g) for g in cap.guards] +
                 [f"arg {a} {'is' if same else 'is not'} arg {b}" for a, b, same in identities])
        kernel, as_scalar, builder, runner = None, [], None, None
        if cap.graph.outputs and self.options["backend"] == "halide":
            kernel, report = self._compile(cap, args, record, symbols)
            if kernel is None and symbols:
                # The compiler refused the symbolic extents (its check runs on the optimized
                # graph too): these shapes, then, compile as they are.
                why = record.pop("compile_failure", "")
                record["dynamic"] = f"static shapes ({dynamic_shapes.describe(axes)} changed, but {why})"
                cap, symbols, extent_relations = base, None, []
                kernel, report = self._compile(cap, args, record)
            record["report"] = report
            if kernel is not None:
                writes_arguments = bool(cap.writebacks)
                # Arguments the kernel writes in place need no copy afterwards.
                in_place = set(report["in_place_outputs"])
                cap.writebacks = [(a, o) for a, o in cap.writebacks if o not in in_place]
                if continuation is not None:
                    continuation.writebacks = cap.writebacks
                as_scalar, builder = _result_plan(cap, continuation)
                if self._mode() == "max-autotune" and symbols is not None:
                    record["tuning"] = "not tuned: compiled for any size (tuning records are per shape)"
                elif self._mode() == "max-autotune" and record["schedule_origin"] == "search" and record["tuning_key"]:
                    kernel, report = self._autotune(cap, args, record, kernel, report, continuation, writes_arguments,
                                                    (exact_specs, value_specs, as_scalar, builder, relations))
                    record["report"] = report
        elif cap.graph.outputs:
            runner = _eager_runner(cap, continuation)
        elif continuation is not None:          # nothing computed before the break
            runner = continuation.run
        record["seconds"] = time.perf_counter() - start
        arg_specs = exact_specs if symbols is None else dynamic_shapes.guard_specs(exact_specs, axes, smallest)
        self._guard_sets[-1] = arg_specs
        logs.log("guards", "%s: entry %d guards: %s", self.__qualname__, len(self._guard_sets) - 1,
                 [guards.describe(s) for s in arg_specs])
        self._dispatcher.add_entry(arg_specs, value_specs, kernel, as_scalar, builder, runner,
                                   relations + extent_relations)

    def _generic_over_axes(self, cap, capture_at, args, axes, record):
        """(capture, symbols, extent guards, least size per axis) for compiling the dynamic
        ``axes`` for any size (dynamic_shapes.py), or (cap, None, [], {}) when they stay static
        for this entry (said in the recompile log and the compile record)."""
        if not axes:
            return cap, None, [], {}
        why = None
        if self.options["backend"] != "halide":
            why = "the eager backend runs the captured shapes"
        elif self.options["autoscheduler"] not in ("hcompile", "baseline"):
            why = f"Halide's {self.options['autoscheduler']} autoscheduler schedules for the exact sizes"
        elif self.options["schedule"] is not None:
            why = "an explicit schedule is for the shapes it was written for"
        elif not cap.graph.outputs and cap.break_point is None:
            why = "nothing is compiled"
        else:      # a kernel, or only the code after a graph break (its own entries are dynamic)
            symbols = dynamic_shapes.symbols_of(args, axes)
            try:
                generic, compiled_symbols, extent_values, smallest = dynamic_shapes.generic_capture(
                    capture_at, cap, args, symbols)
                beyond = _beyond_kernel_limits(generic.graph, sizes_are_real=False)
                if beyond:
                    raise dynamic_shapes.NotGeneric(beyond)
            except dynamic_shapes.NotGeneric as e:
                why = str(e)
        if why is not None:
            logs.log("recompiles", "%s: %s kept static: %s", self.__qualname__, dynamic_shapes.describe(axes), why)
            record["dynamic"] = f"static shapes ({dynamic_shapes.describe(axes)} changed, but {why})"
            return cap, None, [], {}
        least = sorted(set(smallest.values()))
        sizes = (f"any size from {least[0]}" if len(least) == 1 else
                 "any size from " + ", ".join(f"{m} (argument {i} axis {a})" for (i, a), m in sorted(smallest.items())))
        logs.log("recompiles", "%s: compiling %s for %s", self.__qualname__, dynamic_shapes.describe(axes), sizes)
        record["dynamic"] = (f"dynamic: {dynamic_shapes.describe(axes)} ({sizes}; in the graph, " +
                             ", ".join(f"{value} is the size of argument {arg} axis {axis}"
                                       for value, arg, axis in compiled_symbols) + ")")
        return generic, (compiled_symbols, extent_values), dynamic_shapes.same_extent_relations(symbols), smallest

    def _mode(self):
        return config.mode_override or self.options["mode"]

    def _target(self):
        return config.target_override or self.options["target"]

    def _compile_graph(self, cap, args, schedule, symbols=None, candidates=0):
        want_stmt = debug_dump.enabled() or logs.enabled("output_code")
        return _C.compile_graph(cap.graph, self._target(), guards.layouts(args), want_stmt,
                                [(o, a) for a, o in cap.writebacks], list(config.also_compile_for),
                                *(symbols or ([], [])), self.options["autoscheduler"], schedule, candidates,
                                tuning.correction_weights() if config.cost_correction else [],
                                fast_math=self.options["fast_math"])

    def _compile(self, cap, args, record, symbols=None):
        """(kernel, report), or (None, None) when the compile fails. ``symbols``: (symbols,
        extent values) from ``dynamic_shapes.generic_capture``; a failure with them never
        raises (the caller compiles the exact shapes instead). The schedule: an explicit list,
        else the tuning database's best record, else the search (tuning.schedule_for)."""
        key = None
        if symbols is None and self.options["backend"] == "halide" and self.options["autoscheduler"] == "hcompile":
            key = tuning.workload.workload_key(str(cap.graph), guards.layouts(args), _C.jit_target(self._target()))
        record["tuning_key"] = key
        choice = tuning.schedule_for(self.options["schedule"], key)
        schedule, record["schedule_origin"] = choice.schedule, choice.origin
        tuning_now = self._mode() == "max-autotune" and key is not None
        if tuning_now and choice.origin == "tuning record":
            tuning.REUSED.append((self.__qualname__, key, choice.measured_seconds))
            logs.log("schedule", "%s: a tuning record's schedule (%.3f ms measured)", self.__qualname__,
                     choice.measured_seconds * 1e3)
        candidates = 2 * config.tuning_trials if tuning_now and schedule is None else 0
        try:
            try:
                kernel, report = self._compile_graph(cap, args, schedule, symbols, candidates)
            except (RuntimeError, ValueError) as e:
                if record["schedule_origin"] != "tuning record":
                    raise
                logs.log("schedule", "%s: the tuning record's schedule failed to compile (%s); searching instead",
                         self.__qualname__, e)
                record["schedule_origin"] = "search"
                kernel, report = self._compile_graph(cap, args, None, symbols, candidates)
        except (RuntimeError, ValueError) as e:
            if symbols:
                logs.log("recompiles", "%s: compiling for any size failed, so for these shapes: %s",
                         self.__qualname__, e)
                record["compile_failure"] = str(e)
                return None, None
            if self.options["fullgraph"]:
                raise CompileError(f"{self.__qualname__}: {e}") from e
            logs.log("graph_breaks", "%s: compile failed, running as Python: %s", self.__qualname__, e)
            record["compile_failure"] = str(e)
            return None, None
        logs.log("schedule", "%s schedule:\n%s", self.__qualname__, report["schedule"])
        logs.log("output_code", "%s lowered Halide:\n%s", self.__qualname__, report["lowered_stmt"])
        debug_dump.write(self.__qualname__, report)
        return kernel, report

    def _autotune(self, cap, args, record, kernel, report, continuation, writes_arguments, entry):
        """max-autotune (tuning/autotune.py): the fastest measured schedule's (kernel, report),
        or the search's when this pipeline cannot be tuned (said in record["tuning"]): timing
        calls that write into the caller's arguments would change them."""
        why = ("it writes into its arguments" if writes_arguments else
               "a graph break follows it" if continuation is not None else
               "its arguments are a structure's leaves or a resume function's" if self._structure or self._generated
               else None)
        if why:
            record["tuning"] = f"not tuned: {why}"
            return kernel, report
        exact_specs, value_specs, as_scalar, builder, relations = entry

        def runner(candidate):
            dispatcher = _C.Dispatcher(self._fn)
            dispatcher.add_entry(exact_specs, value_specs, candidate, as_scalar, builder, None, relations)

            def call():
                result = dispatcher(*args)
                if result is _C.MISS:
                    raise RuntimeError("the tuning entry's guards refused the call's arguments")
                return result
            return call

        def compile_with(schedule):
            return self._compile_graph(cap, args, schedule)

        key = record["tuning_key"]
        with tuning.open_database() as db:
            db.add_workload(key, self.__qualname__, tuning.workload.structural_graph(str(cap.graph)),
                            tuning.workload.graph_to_json(cap.graph),
                            tuning.workload.arguments_of(args, guards.layouts(args)), report["target"])
            remote = None
            if config.tuning_ray:
                from .tuning import distributed
                remote = distributed.remote_trials(config.tuning_ray, key, cap.graph, report["target"], args)
                if remote is None:
                    logs.log("schedule", "%s: max-autotune runs here, not on Ray: an argument is not a C-contiguous array",
                             self.__qualname__)
            tuner = tuning.Autotuner(self.__qualname__, compile_with, runner, db, key,
                                     config.tuning_trials, config.tuning_seconds, config.tuning_workers, remote)
            try:
                best_kernel, best_report, summary = tuner.run(kernel, report)
            except tuning.NotTuned as e:
                record["tuning"] = f"not tuned: {e}"
                return kernel, report
        record["tuning"] = summary
        logs.log("schedule", "%s: max-autotune measured %d schedules in %.1f s: %.3f ms (the search's %.3f ms)",
                 self.__qualname__, summary["trials"], summary["tuning_seconds"], summary["best_seconds"] * 1e3,
                 summary["default_seconds"] * 1e3)
        return best_kernel, best_report

    def _record_break(self, error, once=False, resumes=False):
        if self.options["fullgraph"]:
            raise error
        if once:
            # Once per reason: a call past the buffer limit is still said after, say, a
            # structure the capture refused.
            if error.reason in self._breaks_said_once:
                return
            self._breaks_said_once.add(error.reason)
        if resumes:
            logs.log("graph_breaks", "%s: graph break at %s:%s: %s; the code before it is compiled, "
                     "the instruction runs as Python and the code after it resumes compiled",
                     self.__qualname__, error.filename, error.lineno, error.reason)
            return
        refused = getattr(error, "resume_refused", None)
        logs.log("graph_breaks", "%s: graph break at %s:%s: %s; running it as plain Python%s",
                 self.__qualname__, error.filename, error.lineno, error.reason,
                 f" (no resume: {refused})" if refused else "")

    # -- graph breaks that resume ---------------------------------------------------------------
    def _continue_after_break(self, point, record, writebacks=()):
        """The continuation of an entry whose capture stopped at ``point`` (said in the log and
        ``record``; under fullgraph, raised), its resume functions made."""
        self._record_break(point.reason, resumes=True)
        record["break"] = _break_record(point.reason, resumes=True)
        continuation = Continuation(self, point, writebacks)
        record["resumes"] = self._prepare_resumes(continuation)
        return continuation

    def _prepare_resumes(self, continuation):
        """``continuation.prepare()``, with any failure to build the code (the bytecode package
        refusing it) turned into a break that runs the whole function as Python."""
        try:
            return continuation.prepare()
        except Unsupported:
            raise
        except Exception as e:
            reason = continuation.point.reason
            raise Unsupported(f"could not build the resume function ({type(e).__name__}: {e})",
                              reason.filename, reason.lineno) from e

    def resume_at(self, index, signature):
        """The compiled resume function that runs this function's code from canonical
        instruction ``index`` on, taking the state as ``signature`` (resume.Signature) says."""
        offset = _normalized(self._fn.__code__).instructions[index].offset
        return self._resumes.get(("resume", offset, signature.key),
                                 lambda: resume_function(self._fn, offset, signature), self._compiled)

    def loop_body(self, loop, state_names):
        """The compiled body of the outlined loop ``loop`` (capture.loops.LoopInfo)."""
        instructions = _normalized(self._fn.__code__).instructions
        head, body = instructions[loop.head].offset, instructions[loop.head + 1].offset
        return self._resumes.get(("loop", head, state_names),
                                 lambda: loop_body_function(self._fn, head, body, state_names), self._compiled)

    def _compiled(self, fn):
        # The target as the user gave it: under "auto", the code after a break runs on the GPU
        # when the state it is given is CUDA arrays.
        return CompiledFunction(fn, **{**self.options, "target": self._target_option}, _generated=True)

    # -- introspection -------------------------------------------------------------------------
    def cache_info(self):
        parts = [self, *self._children.values()]
        entries = sum(p._dispatcher.num_entries for p in parts)
        hits = sum(p._dispatcher.hits - p._redispatches for p in parts)
        misses = sum(p._misses for p in parts)
        for p in parts:     # the GPU path's own (NumPy arrays under target="cuda", CuPy's, new entries)
            if p._cuda is not None:
                cuda_entries, cuda_hits, cuda_compiles = p._cuda.cache_counts()
                entries, hits, misses = entries + cuda_entries, hits + cuda_hits, misses + cuda_compiles
        return CacheInfo(entries=entries, hits=hits, misses=misses, recompiles=max(0, entries - 1))

    def reset(self):
        # Calls in flight keep the entries they run (the dispatcher drops them when they end).
        with self._compile_lock:
            for child in self._children.values():
                child.reset()
            self._children.clear()
            self._dispatcher.clear()
            self._cuda = None              # its entries were in the dispatcher too
            self._guard_sets.clear()
            self._dynamic_floats.clear()
            self._dynamic_axes.clear()
            self._last_value_guards = []
            self.compile_records.clear()
            self._misses = self._redispatches = 0
        self._resumes.clear()


class _AsPython:
    """What a structured entry that runs as Python returns: the parent then calls the function
    with the caller's own arguments (not rebuilt containers)."""

    def __repr__(self):
        return "<run as Python>"


_AS_PYTHON = _AsPython()


def _as_python(*leaves):
    return _AS_PYTHON


def _plain_arity(fn):
    """Number of parameters when all are plain positional-or-keyword ones, else -1."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
        return -1
    return code.co_argcount


def _result_plan(cap, continuation):
    """How the dispatcher hands back results: which outputs become NumPy scalars, and a Python
    builder only when the return value is not simply the outputs in order (at a graph break: the
    continuation that runs the code after it, made for this capture's break point)."""
    as_scalar = scalar_outputs(cap)
    if cap.break_point is not None:
        return as_scalar, continuation
    result = cap.result
    writebacks = cap.writebacks
    if not writebacks and returns_outputs(result, len(as_scalar)):    # the outputs are the result as they are
        return as_scalar, None

    def build(outputs, args):
        # Written arguments get their final contents only once the kernel has succeeded.
        for arg_index, output_index in writebacks:
            np.copyto(args[arg_index], outputs[output_index], casting="no")
        return assemble(result, outputs, args)

    return as_scalar, build


def _decision_list(schedule):
    """``schedule=``: None, or a list of decisions, each (region, choice, axis, value, value2)
    as ``compile_records[i]["report"]["decisions"]`` lists them (autoscheduler/decisions.h)."""
    if schedule is None:
        return None
    try:
        return [(int(r), str(c), int(a), int(v), int(v2)) for r, c, a, v, v2 in schedule]
    except (TypeError, ValueError) as e:
        raise ValueError("schedule must be a list of (region, choice, axis, value, value2) decisions") from e


def _beyond_kernel_limits(graph, sizes_are_real=True):
    """Why a kernel cannot hold this graph's arrays (too many bytes or dimensions), or None.
    Placeholder sizes (``sizes_are_real`` false: dynamic shapes) say nothing of the bytes a
    call holds; an input past the limit is copied or refused by its layout guard."""
    for node in range(graph.num_nodes):
        shape = graph.shape(node)
        size = np.dtype(graph.dtype(node)).itemsize * int(np.prod(shape, dtype=np.int64))
        if size >= HALIDE_BUFFER_LIMIT and sizes_are_real:
            return f"an array of {size} bytes is past Halide's 2 GiB buffer limit"
        if len(shape) > MAX_KERNEL_DIMS:
            return f"an array of {len(shape)} dimensions is past the kernel limit of {MAX_KERNEL_DIMS}"
    return None


def _break_record(error, resumes=False):
    refused = getattr(error, "resume_refused", None)
    return BreakRecord(error.reason, error.filename, error.lineno, resumes=resumes, refused=refused)


def _eager_runner(cap, continuation):
    """backend="eager": the captured graph run op by op with NumPy."""
    as_scalar, builder = _result_plan(cap, continuation)
    graph = cap.graph

    def run(*args):
        outputs = [o[()] if scalar and o.ndim == 0 else o
                   for o, scalar in zip(eager.run_graph(graph, args), as_scalar)]
        if builder is not None:
            return builder(outputs, args)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run


_warned_options = set()


def _warn_partial_options(options):
    """Options that act only on the GPU, said once each when a CPU entry compiles (it was said
    at decoration, to functions that ran only on the GPU too)."""
    notes = []
    if options["mode"] == "reduce-overhead":
        notes.append("mode='reduce-overhead' behaves like 'default' on the CPU (it captures CUDA graphs, a GPU feature)")
    if options["fast_math"]:
        notes.append("fast_math=True acts on GPU kernels only: CPU kernels stay NumPy-exact")
    for note in notes:
        _warn_once(note)


def _warn_once(note):
    if note not in _warned_options:
        _warned_options.add(note)
        logs.warn(note)


def hcompile(fn=None, *, mode="default", fullgraph=False, dynamic=None, backend="halide", target="auto",
             autoscheduler="hcompile", schedule=None, fast_math=False):
    """Compile a NumPy function (decorator, with or without options).

    ``fast_math=True``: GPU kernels compute float32 ``exp``, ``tanh`` and division with the GPU's
    approximate instructions (3.2 ulp at most, NaN and infinities as NumPy's) instead of NumPy-exact
    expansions; CPU kernels are NumPy-exact either way."""
    options = dict(mode=mode, fullgraph=fullgraph, dynamic=dynamic, backend=backend, target=target,
                   autoscheduler=autoscheduler, schedule=schedule, fast_math=fast_math)
    if fn is None:
        return lambda f: CompiledFunction(f, **options)
    if isinstance(fn, CompiledFunction):
        fn = fn._fn
    return CompiledFunction(fn, **options)


def reset():
    """Drop every compiled entry of every compiled function (in-memory caches)."""
    for f in list(_live_functions):
        f.reset()
