"""Input values for generated programs: ordinary, special-heavy, and odd memory layouts.

Every claimed dtype gets its odd values: floats NaN, +-inf, -0.0, subnormals, the largest and
smallest normals, values near 1 and halves (rounding ties); integers their extremes and the values
next to them (overflow on the first op). Arrays are drawn from a numpy Generator so a (seed, set)
pair reproduces them exactly.
"""

from __future__ import annotations

import numpy as np

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64")
FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def float_specials(dtype) -> np.ndarray:
    fi = np.finfo(dtype)
    sub = float(fi.smallest_subnormal)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, sub, -sub, 3 * sub, float(fi.tiny),
            -float(fi.tiny), float(fi.max), -float(fi.max), 1.0, -1.0, 0.5, -2.5,
            1 + float(fi.eps), 1e-30, 1e30, 88.8, -745.2, 710.0, 4.0]
    return np.array(vals, dtype=np.float64).astype(dtype)


def int_specials(dtype) -> np.ndarray:
    ii = np.iinfo(dtype)
    vals = {ii.min, ii.min + 1, ii.max, ii.max - 1, 0, 1, 2, 3, 7, ii.max // 2 + 1}
    if ii.min < 0:
        vals |= {-1, -2, -7}
    return np.array(sorted(vals), dtype=dtype)


def make_array(rng: np.random.Generator, shape, dtype, regime: str) -> np.ndarray:
    """regime: "normal" (mostly ordinary values, a few specials) or "special" (many)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    p_special = 0.05 if regime == "normal" else 0.45
    if dtype.kind == "b":
        flat = rng.random(n) < (0.5 if regime == "normal" else rng.choice([0.0, 0.1, 0.9, 1.0]))
    elif dtype.kind in "iu":
        ii = np.iinfo(dtype)
        lo, hi = max(int(ii.min), -9), min(int(ii.max), 9)
        flat = rng.integers(lo, hi + 1, size=n, dtype=dtype)
        wide = rng.random(n) < (0.1 if regime == "normal" else 0.3)
        flat[wide] = rng.integers(int(ii.min), int(ii.max), size=int(wide.sum()), dtype=dtype,
                                  endpoint=True)
        spec = rng.random(n) < p_special
        flat[spec] = rng.choice(int_specials(dtype), size=int(spec.sum()))
    else:
        scale = 10.0 ** rng.integers(-2, 3)
        flat = rng.standard_normal(n) * scale
        halves = rng.random(n) < 0.15
        flat[halves] = rng.integers(-8, 9, size=int(halves.sum())) / 2.0
        flat = flat.astype(dtype)
        spec = rng.random(n) < p_special
        flat[spec] = rng.choice(float_specials(dtype), size=int(spec.sum()))
    return flat.reshape(shape)


# ------------------------------------------------------------------------------------------
# Odd layouts: the same values in a different memory arrangement, each written as source text
# over the contiguous array {0} (repro scripts print the same text). The compiled kernel is
# guarded on the layout (a new layout is one more compile), so a program gets one odd-layout call.

LAYOUTS = {
    "C": "{0}",
    "F": "np.asfortranarray({0})",
    "reversed": "{0}[{rev}].copy()[{rev}]",
    "strided": "np.stack([{0}, {0}], axis=-1)[..., 0]",
    "broadcast": "np.broadcast_to({0}[:1], {0}.shape)",  # stride 0: the first row repeated
    "readonly": "np.lib.stride_tricks.as_strided({0}.copy(), writeable=False)",
    # strides that are not a multiple of the item size (a packed record's field)
    "field": "np.rec.fromarrays([np.zeros({0}.shape, 'u1'), {0}], names='pad,v')['v']",
    "unaligned": "np.frombuffer(bytearray(b'\\0' + {0}.tobytes()), {0}.dtype, offset=1)"
                 ".reshape({0}.shape)",
    "swapped": "{0}.astype({0}.dtype.newbyteorder())",
}
ODD_LAYOUTS = tuple(k for k in LAYOUTS if k != "C")


def layout_applies(a, layout: str) -> bool:
    if not isinstance(a, np.ndarray):
        return False
    if layout in ("C", "readonly", "unaligned", "swapped"):
        return True
    return a.ndim >= 1 and (layout != "broadcast" or a.shape[0] > 0)


def layout_source(name: str, layout: str, ndim: int) -> str:
    return LAYOUTS[layout].format(name, rev=", ".join(["::-1"] * ndim) or "...")


def with_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """A fresh array with `a`'s values (C order) in `layout`."""
    if not layout_applies(a, layout):
        return a.copy() if isinstance(a, np.ndarray) else a
    return eval(layout_source("a", layout, a.ndim), {"np": np, "a": a.copy()})
