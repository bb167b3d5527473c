"""How far a correct compiled result may be from NumPy's, element by element.

For every node of a program, evaluated with NumPy on the actual inputs, the model computes
  e: a bound on |compiled - NumPy| per element (0 means bit for bit, signed zeros included), and
  s: whether the element is checked at all (False where a legitimate difference upstream could
     change its class: a comparison of two values closer than their error bounds, a floor at an
     integer boundary, an overflow at the threshold, a NaN that only one side can produce).
Integers and booleans are always exact (e == 0); their unchecked elements come only from floats
upstream (a cast, a comparison). NaN positions and the sign of infinities are checked wherever
s is True. The tolerance of each op class is stated once, here:

| class  | ops | tolerance on top of the operands' error |
|---|---|---|
| exact  | copies, slices, transposes, reshapes, negative, absolute, maximum, minimum, clip, where, sign, floor, ceil, rint, trunc, comparisons, isnan/isfinite/isinf, casts, np.full/zeros/ones, every integer and bool op, floor_divide/remainder on exact operands | 0: bit for bit |
| ieee   | + - * / sqrt square reciprocal | 0 when the operands are exact and not themselves results of rounded arithmetic (nothing a compiler may contract into an FMA or reassociate), else 1 ulp |
| math   | exp log log1p expm1 sin cos tan tanh sinh cosh arcsin arccos arctan arctan2 power exp2 log2 log10 cbrt arcsinh arccosh arctanh hypot | 8 ulp: NumPy's own SIMD/libm error (<= 4 ulp) plus the foundation's (<= 5 ulp, apps/mathbench) |
| sum    | sum mean var std (reassociated: vector lanes, pairwise) | (n-1) eps sum|x_i| for any summation order, plus 1 ulp |
| prod   | prod | (n-1) eps |result|, plus n · (smallest subnormal) · (product of factors ≥ 1) where a partial product can be subnormal; unchecked where one could overflow |
| matmul | @ matmul dot | k eps (|A| @ |B|), plus 1 ulp |

The operands' error propagates through each op by evaluating it at the corners of the operands'
error boxes in long double (`_smooth`); ops with a discontinuity check that the box does not cross
it. An ulp here is eps(dtype) * |result| + the smallest subnormal (no flush to zero is tolerated).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np

LD = np.longdouble
ULPS = {"exact": 0, "ieee": 1, "math": 8}


@dataclass
class M:
    v: np.ndarray  # NumPy's value, as an array
    e: np.ndarray  # long double, >= 0, v's shape
    s: np.ndarray  # bool, v's shape
    rounded: bool = False  # result of rounded float arithmetic (a consumer may contract with it)
    py: object = None  # the Python scalar this value is (NEP 50 weak), else None


def leaf(value) -> M:
    v = np.asarray(value)
    py = value if type(value) in (bool, int, float) else None
    return M(v, np.zeros(v.shape, LD), np.ones(v.shape, bool), False, py)


def _is_float(v) -> bool:
    return v.dtype.kind == "f"


def _ulp(out: np.ndarray) -> np.ndarray:
    fi = np.finfo(out.dtype)
    a = np.abs(out.astype(LD))
    return np.where(np.isfinite(a), a * LD(fi.eps) + LD(fi.smallest_subnormal), 0)


def _fmax(dtype) -> LD:
    return LD(np.finfo(dtype).max)


def _cls(x: np.ndarray) -> np.ndarray:
    """0 finite, 1 NaN, 2 +inf, 3 -inf."""
    return np.select([np.isnan(x), x == np.inf, x == -np.inf], [1, 2, 3], 0)


def _b(a, shape):
    return np.broadcast_to(a, shape)


def _all_s(ops, shape):
    s = np.ones(shape, bool)
    for m in ops:
        s = s & _b(m.s, shape)
    return s


def _exact(ops, out, rounded=False) -> M:
    return M(out, np.zeros(out.shape, LD), _all_s(ops, out.shape), rounded)


def _loop_values(ops, dtype) -> list:
    """Operands as NumPy's loop sees them (cast to the loop dtype), in long double."""
    return [m.v.astype(dtype).astype(LD) if dtype.kind == "f" else m.v.astype(LD) for m in ops]


def _guard_range(out, e, s):
    """Unchecked where a finite result within e of the largest float could be inf instead."""
    fin = np.isfinite(out)
    return s & ~(fin & (np.abs(out.astype(LD)) + e >= _fmax(out.dtype)))


def _smooth(fn, ops, out, ulps, exact_ok) -> M:
    """An op continuous in its operands (away from domain edges, found by the corner test)."""
    if not _is_float(out):
        return _exact(ops, out)
    shape, dt = out.shape, out.dtype
    vl = [_b(x, shape) for x in _loop_values(ops, dt)]
    el = [_b(m.e, shape) for m in ops]
    s = _all_s(ops, shape)
    exact = np.ones(shape, bool)
    for e in el:
        exact &= e == 0
    with np.errstate(all="ignore"):
        center = fn(*vl)
        dev = np.zeros(shape, LD)
        stable = np.ones(shape, bool)
        if not exact.all():
            for signs in itertools.product((-1, 1), repeat=len(ops)):
                c = fn(*[v + sg * e for v, sg, e in zip(vl, signs, el)])
                d = np.abs(c - center)
                dev = np.where(np.isnan(d) & ~np.isnan(center), np.inf, np.fmax(dev, d))
                stable &= _cls(c.astype(dt)) == _cls(out)
        rounding = ulps * _ulp(out)
        if ulps and exact_ok is not None:
            # exact operands, nothing to contract: correctly rounded on both sides
            rounding = np.where(exact & exact_ok, 0, rounding)
        if ulps == ULPS["math"]:
            # exact zeros (sin(-0.0), (-0.0)**3) keep their sign
            rounding = np.where(exact & (center == 0) & (out == 0), 0, rounding)
        e = np.where(exact, 0, dev) + rounding
        s = s & (exact | stable) & ~np.isnan(e)
        # a result at the overflow threshold may be inf on one side and finite on the other
        near = np.isfinite(center) & (np.abs(center) >= _fmax(dt) * (1 - 4 * ulps * LD(np.finfo(dt).eps)))
        s &= ~(near & (e > 0))
        e = np.where(np.isfinite(e), e, 0)
    return M(out, e, _guard_range(out, e, s), rounded=True)


# ------------------------------------------------------------------------------------------
# Rules: rule(node_params, operand models, NumPy's value as array) -> M

def _ufunc(name):
    return getattr(np, name)


def r_exact(p, ops, out):
    return _exact(ops, out)


def _apply(template, ops, attr):
    """Evaluate a node's template on the operands' values, bounds or check masks."""
    names = [f"x{i}" for i in range(len(ops))]
    env = {"np": np, **{nm: getattr(m, attr) for nm, m in zip(names, ops)}}
    return np.asarray(eval(template.format(*names), env))


def r_struct(p, ops, out):
    """Views and copies: the same indexing applied to the bounds and masks."""
    e = _apply(p["template"], ops, "e").astype(LD).reshape(out.shape)
    return M(out, e, _apply(p["template"], ops, "s").reshape(out.shape), ops[0].rounded)


def r_neg(p, ops, out):
    m = ops[0]
    return M(out, _b(m.e, out.shape).astype(LD), _b(m.s, out.shape), m.rounded)


def r_ieee(p, ops, out):
    fn = {"square": lambda x: x * x}.get(p["op"]) or _ufunc(p["op"])
    exact_ok = not any(m.rounded for m in ops)
    m = _smooth(fn, ops, out, ULPS["ieee"], exact_ok)
    if p["op"] == "true_divide" and _is_float(out):
        _divisor_pole(ops[1], m)
    return m


def _divisor_pole(divisor: M, m: M) -> None:
    """The corner test assumes the op is monotonic across the operands' error box; a quotient
    is not across a divisor box that holds zero, so such an element is unchecked (device fuzz,
    program 1239277: log1p(x) / sin(var(b)) with var(b) near 1.7e37, whose sine is any value in
    [-1, 1] within one ulp of the variance; both quotients at the corners were finite)."""
    shape = m.v.shape
    v = _b(divisor.v, shape).astype(LD)
    e = _b(divisor.e, shape).astype(LD)
    with np.errstate(all="ignore"):
        m.s = m.s & ~((e > 0) & (np.abs(v) <= e))


def r_math(p, ops, out):
    m = _smooth(_ufunc(p["op"]), ops, out, ULPS["math"], None)
    if p["op"] in ("sin", "cos", "tan") and _is_float(out):
        _periodic(p["op"], ops[0], m)
    if p["op"] == "power" and _is_float(out) and len(ops) == 2:
        _negative_base(ops, m)
    return m


def _negative_base(ops, m: M) -> None:
    """A negative base to a power is NaN at a non-integer exponent and a number at an integer
    one, so an exponent box holding an integer and a non-integer leaves the element unchecked:
    the corner test sees only the box's ends (program 97319: sinh(-35.27) is -1034137271502721.9
    in NumPy and one ulp away, an integer, compiled)."""
    shape = m.v.shape
    base = _b(ops[0].v, shape).astype(LD)
    y, e = _b(ops[1].v, shape).astype(LD), _b(ops[1].e, shape).astype(LD)
    with np.errstate(all="ignore"):
        holds_integer = (e > 0) & (np.floor(y + e) >= np.ceil(y - e))
        mixed = holds_integer & (np.abs(y) - e < LD(2) ** 52)    # past 2**52 every double is an integer
    m.s = m.s & ~((base < 0) & mixed)


def _periodic(op, x: M, m: M) -> None:
    """The corner test assumes the op is monotonic across the operand's error box. sin and cos
    may turn inside it (bound them by their Lipschitz constant 1 instead), and tan is monotonic
    only between poles: a box that holds a pole (tan(lo) > tan(hi) for a box narrower than pi)
    or is a period wide leaves the element unchecked. tan(2.3e16) is such a case: one ulp of
    the argument is 4."""
    shape = m.v.shape
    e = _b(x.e, shape).astype(LD)
    if not (e > 0).any():
        return
    if op in ("sin", "cos"):
        m.e = np.maximum(m.e, np.minimum(e, LD(2)) + ULPS["math"] * _ulp(m.v))
        return
    v = _b(x.v, shape).astype(m.v.dtype).astype(LD)
    with np.errstate(all="ignore"):
        crosses_pole = (2 * e >= LD(np.pi)) | (np.tan(v - e) > np.tan(v + e))
    m.s = m.s & ~((e > 0) & crosses_pole)


def r_minmax(p, ops, out):
    """maximum, minimum, clip: 1-Lipschitz selections; NaN propagates. The sign of a zero clipped
    against a zero bound is not checked: NumPy's own answer depends on whether the bounds are
    scalars or arrays (np.clip(0.0, -0.0, 1.0) is 0.0, with an array of -0.0 as bound -0.0)."""
    e = np.zeros(out.shape, LD)
    if _is_float(out):
        for m in ops:
            e = np.maximum(e, _b(m.e, out.shape))
        if p["op"] == "clip":
            tie = (out == 0) & ((_b(ops[1].v, out.shape) == 0) | (_b(ops[2].v, out.shape) == 0))
            e = np.where(tie, np.maximum(e, LD(np.finfo(out.dtype).smallest_subnormal)), e)
    return M(out, e, _guard_range(out, e, _all_s(ops, out.shape)) if _is_float(out)
             else _all_s(ops, out.shape))


def _truth(m: M):
    """(bool value, sure) of x != 0."""
    v = m.v.astype(LD)
    sure = m.s & ((m.e == 0) | (np.abs(v) > m.e) | np.isnan(v))
    return m.v != 0, sure


def r_where(p, ops, out):
    c, cs = _truth(ops[0])
    a, b = ops[1], ops[2]
    sh = out.shape
    e = np.where(_b(c, sh), _b(a.e, sh), _b(b.e, sh)).astype(LD)
    s = _b(cs, sh) & np.where(_b(c, sh), _b(a.s, sh), _b(b.s, sh))
    if not _is_float(out):
        e = np.zeros(sh, LD)
    return M(out, e, s, a.rounded or b.rounded)


def r_compare(p, ops, out):
    sh = out.shape
    dt = np.result_type(*[m.py if m.py is not None else m.v.dtype for m in ops])
    a, b = [_b(x, sh) for x in _loop_values(ops, dt)]
    ea, eb = _b(ops[0].e, sh), _b(ops[1].e, sh)
    with np.errstate(all="ignore"):
        gap = np.abs(a - b)
        sure = ((ea == 0) & (eb == 0)) | (gap > ea + eb) | np.isnan(a) | np.isnan(b) \
            | (~np.isfinite(a) & ~np.isfinite(b))
    return M(out, np.zeros(sh, LD), _all_s(ops, sh) & sure)


def r_classify(p, ops, out):
    return M(out, np.zeros(out.shape, LD), _b(ops[0].s, out.shape))


def _step_fn(name):
    return {"rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
            "sign": np.sign}[name]


def r_step(p, ops, out):
    """floor, ceil, rint, trunc, sign: exact, unchecked where the error box crosses a step."""
    m = ops[0]
    if not _is_float(out) or not _is_float(m.v):
        return _exact(ops, out)
    f = _step_fn(p["op"])
    v = m.v.astype(LD)
    with np.errstate(all="ignore"):
        lo, hi = f(v - m.e), f(v + m.e)
    stable = (m.e == 0) | ((lo == hi) & (np.signbit(lo) == np.signbit(hi)) & (f(v) == lo))
    return M(out, np.zeros(out.shape, LD), m.s & stable)


def r_cast(p, ops, out):
    m = ops[0]
    src = m.v
    if not _is_float(src):
        return _exact(ops, out)
    v = src.astype(LD)
    if out.dtype.kind == "f":
        narrowing = out.dtype.itemsize < src.dtype.itemsize
        return _smooth(lambda x: x, ops, out, ULPS["ieee"] if narrowing else 0,
                       True if narrowing else None)
    if out.dtype.kind == "b":
        _, sure = _truth(m)
        return M(out, np.zeros(out.shape, LD), sure)
    ii = np.iinfo(out.dtype)
    with np.errstate(all="ignore"):
        lo, hi = np.trunc(v - m.e), np.trunc(v + m.e)
    inside = (v - m.e > LD(ii.min) - 1) & (v + m.e < LD(ii.max) + 1)
    stable = (m.e == 0) | ((lo == hi) & inside)
    if out.dtype == np.uint32:
        # NumPy's own float -> uint32 answer depends on the memory layout outside
        # [-2^31, 2^32) and for NaN (core/OPS.md, "Float to integer casts"): unchecked there.
        with np.errstate(invalid="ignore"):
            stable &= (v - m.e >= -LD(2) ** 31) & (v + m.e < LD(2) ** 32)
    return M(out, np.zeros(out.shape, LD), m.s & stable)


def r_divmod(p, ops, out):
    """floor_divide and remainder: exact on exact operands (NumPy's divmod algorithm);
    unchecked where the operands' error box crosses a multiple of the divisor."""
    if not _is_float(out):
        return _exact(ops, out)
    sh = out.shape
    a, b = [_b(x, sh) for x in _loop_values(ops, out.dtype)]
    ea, eb = _b(ops[0].e, sh), _b(ops[1].e, sh)
    exact = (ea == 0) & (eb == 0)
    eps = LD(np.finfo(out.dtype).eps)
    with np.errstate(all="ignore"):
        qs = [(a + sa * ea) / (b + sb * eb) for sa in (-1, 1) for sb in (-1, 1)]
        qlo, qhi = np.minimum.reduce(qs), np.maximum.reduce(qs)
        qlo, qhi = qlo - 4 * eps * np.abs(qlo), qhi + 4 * eps * np.abs(qhi)
        stable = (np.floor(qlo) == np.floor(qhi)) & (np.abs(b) > eb)
        if p["op"] == "floor_divide":
            e = np.zeros(sh, LD)
        else:
            e = ea + np.abs(np.floor(a / b)) * eb + 2 * _ulp(out)
    e = np.where(exact | ~np.isfinite(e), 0, e)
    s = _all_s(ops, sh) & (exact | stable)
    return M(out, e, _guard_range(out, e, s))


def _lanes(p, v):
    # NumPy takes axis 0 or -1 on a 0-d array in some reductions (sum, any, argmax)
    return {"axis": p["axis"] if np.ndim(v) else None, "keepdims": p["keepdims"]}


def _lane_size(v, out):
    return (v.size // out.size) if out.size else 0


def r_sum(p, ops, out, denominator=None):
    """sum and mean (and the last step of var): any summation order."""
    m = ops[0]
    kw = _lanes(p, m.v)
    if not _is_float(out):
        return M(out, np.zeros(out.shape, LD), np.reshape(np.all(m.s, **kw), out.shape))
    n = _lane_size(m.v, out)
    v = m.v.astype(out.dtype).astype(LD)
    e = _b(m.e, v.shape)
    eps = LD(np.finfo(out.dtype).eps)
    with np.errstate(all="ignore"):
        absum = np.sum(np.where(np.isfinite(v), np.abs(v), 0), **kw)
        esum = np.sum(e, **kw)
        s = np.all(m.s, **kw) & (absum * (1 + n * eps) + esum < _fmax(out.dtype))
        bound = esum + max(n - 1, 0) * eps * absum
        if p["op"] != "sum":
            d = LD(denominator if denominator is not None else n)
            bound = bound / d if d > 0 else bound
        if n > 1:  # the last rounding; a one-element lane is a copy (or x / 1)
            bound = bound + _ulp(out).reshape(np.shape(bound))
        zeros = np.all((v == 0) & (e == 0), **kw)  # all exact zeros: the sign is determined
        err = np.where(zeros, 0, bound)
    err = np.reshape(np.where(np.isfinite(err), err, 0), out.shape)
    return M(out, err, _guard_range(out, err, np.reshape(s, out.shape)), rounded=True)


def r_prod(p, ops, out):
    m = ops[0]
    kw = _lanes(p, m.v)
    allsure = np.reshape(np.all(m.s, **kw), out.shape)
    if not _is_float(out):
        return M(out, np.zeros(out.shape, LD), allsure)
    n = _lane_size(m.v, out)
    v = m.v.astype(out.dtype).astype(LD)
    e = _b(m.e, v.shape)
    fi = np.finfo(out.dtype)
    fin = np.isfinite(v)
    a = np.where(fin, np.abs(v), 1)
    with np.errstate(all="ignore"):
        rel = np.sum(np.where(e == 0, 0, e / a), **kw)
        big = np.prod(np.maximum(a, 1), **kw)
        small = np.prod(np.where(a == 0, 1, np.minimum(a, 1)), **kw)
        has_inf = np.any(np.isinf(v), **kw)
        err = np.abs(out.astype(LD)).reshape(np.shape(rel)) * (rel + max(n - 1, 0) * LD(fi.eps))
        err = err + _ulp(out).reshape(np.shape(rel))
        s = (big * (1 + n * LD(fi.eps)) < LD(fi.max)) & np.isfinite(rel) \
            & ~(has_inf & (small < LD(fi.tiny)))
        # A partial product below the normal range rounds to a multiple of the smallest
        # subnormal, in an order-dependent way, and later factors (at most `big`) scale it.
        subnormal = LD(fi.smallest_subnormal) * big * n
        err = np.where(small < LD(fi.tiny), err + LD(fi.tiny) + subnormal, err)
    err = np.reshape(np.where(np.isfinite(err), err, 0), out.shape)
    return M(out, err, allsure & np.reshape(s, out.shape), rounded=True)


def r_reduce_minmax(p, ops, out):
    m = ops[0]
    kw = _lanes(p, m.v)
    allsure = np.reshape(np.all(m.s, **kw), out.shape)
    if not _is_float(out):
        return M(out, np.zeros(out.shape, LD), allsure)
    v = m.v
    e = _b(m.e, v.shape)
    err = np.reshape(np.max(e, **kw, initial=0), out.shape).astype(LD)
    both = np.any((v == 0) & np.signbit(v), **kw) & np.any((v == 0) & ~np.signbit(v), **kw)
    tiny = LD(np.finfo(out.dtype).smallest_subnormal)
    err = np.where((np.reshape(both, out.shape)) & (out == 0), np.maximum(err, tiny), err)
    return M(out, err, _guard_range(out, err, allsure), m.rounded)


def r_arg(p, ops, out):
    """argmax/argmin: checked where the winner is clear of the runner-up by the error bounds
    (or the lane is exact: ties go to the first occurrence)."""
    m = ops[0]
    v, e, s = m.v, _b(m.e, m.v.shape), _b(m.s, m.v.shape)
    axis = p["axis"] if m.v.ndim else None
    if axis is None:
        v, e, s, axis = v.reshape(-1), e.reshape(-1), s.reshape(-1), 0
    allsure = np.all(s, axis=axis)
    if _is_float(v) and v.size:
        vl = v.astype(LD)
        sign = 1 if p["op"] == "argmax" else -1
        best = np.take_along_axis(vl, np.expand_dims(np.argmax(sign * vl, axis=axis), axis),
                                  axis)
        ebest = np.take_along_axis(e, np.expand_dims(np.argmax(sign * vl, axis=axis), axis),
                                   axis)
        with np.errstate(all="ignore"):
            near = sign * vl + e >= sign * best - ebest
        clear = np.sum(near, axis=axis) <= 1
        exact = np.all(e == 0, axis=axis)
        nan = np.any(np.isnan(vl), axis=axis)
        allsure = allsure & (clear | exact | nan)
    return M(out, np.zeros(out.shape, LD), np.reshape(allsure, out.shape))


def r_anyall(p, ops, out):
    t, ts = _truth(ops[0])
    kw = _lanes(p, t)
    all_sure = np.all(ts, **kw)
    if p["op"] == "any":
        decided = np.any(t & ts, **kw)
    else:
        decided = np.any(~t & ts, **kw)
    return M(out, np.zeros(out.shape, LD), np.reshape(all_sure | decided, out.shape))


def r_var(p, ops, out):
    """var/std as NumPy computes them: mean, x - mean, squares, their mean, (sqrt)."""
    m = ops[0]
    fdt = out.dtype
    x = M(m.v.astype(fdt) if not _is_float(m.v) else m.v, m.e, m.s, m.rounded)
    kw = {"axis": p["axis"] if m.v.ndim else None, "keepdims": True}
    with np.errstate(all="ignore"):
        mean_v = np.asarray(np.mean(x.v, **kw))
        mean = r_sum({"op": "mean", **kw}, [x], mean_v)
        d_v = np.asarray(x.v - mean_v)
        d = r_ieee({"op": "subtract"}, [x, mean], d_v)
        sq = r_ieee({"op": "square"}, [d], np.asarray(d_v * d_v))
        n = _lane_size(x.v, mean_v)
        var_v = np.asarray(np.var(m.v, axis=p["axis"], keepdims=p["keepdims"], ddof=p["ddof"]))
        var = r_sum({"op": "var", "axis": p["axis"], "keepdims": p["keepdims"]}, [sq],
                    out if p["op"] == "var" else var_v.astype(fdt),
                    denominator=max(n - p["ddof"], 0))
        if p["op"] == "var":
            return var
        return r_ieee({"op": "sqrt"}, [var], out)


def r_matmul(p, ops, out):
    fn = np.dot if p["fn"] == "dot" else np.matmul
    A, B = [M(*[_apply(t, ops, a) for a in ("v", "e", "s")]) for t in (p["lhs"], p["rhs"])]
    bad = np.asarray(fn((~A.s).astype(LD), np.ones(B.v.shape, LD))
                     + fn(np.ones(A.v.shape, LD), (~B.s).astype(LD))) > 0
    bad = np.reshape(bad, out.shape)
    if not _is_float(out):
        return M(out, np.zeros(out.shape, LD), ~bad)
    dt = out.dtype
    a, b = A.v.astype(dt).astype(LD), B.v.astype(dt).astype(LD)
    k = A.v.shape[-1] if A.v.ndim else 1
    eps = LD(np.finfo(dt).eps)
    with np.errstate(all="ignore"):
        ab = fn(np.abs(a), np.abs(b))
        err = fn(np.abs(a), B.e) + fn(A.e, np.abs(b)) + fn(A.e, B.e) + k * eps * ab
        naive = np.asarray(fn(a, b)).astype(dt)
        s = ~bad & (_cls(naive) == _cls(out)) \
            & (np.nan_to_num(np.asarray(ab), nan=np.inf) * (1 + k * eps) < _fmax(dt))
    err = np.reshape(np.asarray(err), out.shape) + _ulp(out)
    err = np.where(np.isfinite(err), err, 0)
    return M(out, err, _guard_range(out, err, np.reshape(s, out.shape)), rounded=True)


RULES = {"exact": r_exact, "struct": r_struct, "neg": r_neg, "ieee": r_ieee, "math": r_math,
         "minmax": r_minmax, "where": r_where, "compare": r_compare, "classify": r_classify,
         "step": r_step, "cast": r_cast, "divmod": r_divmod, "sum": r_sum, "prod": r_prod,
         "reduce_minmax": r_reduce_minmax, "arg": r_arg, "anyall": r_anyall, "var": r_var,
         "matmul": r_matmul}


def build(prog, vals) -> list:
    """The model of every node of `prog` given NumPy's values `vals` (from prog.evaluate)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _build(prog, vals)


def _build(prog, vals) -> list:
    models = []
    for n, v in zip(prog.nodes, vals):
        if n.kind in ("input", "const") or n.rule == "exact" and not n.args:
            models.append(leaf(v))
            continue
        out = np.asarray(v)
        p = dict(n.params)
        if n.rule == "struct":
            p["template"] = n.text
        m = RULES[n.rule](p, [models[a] for a in n.args], out)
        if m.py is None and type(v) in (bool, int, float):
            m.py = v
        models.append(m)
    return models
