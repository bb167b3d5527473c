"""NumPy scalar or 0-d array: the compiled result must be the kind NumPy returns.

NumPy's rules (checked here against NumPy itself, never restated): a method called on a NumPy
scalar returns a scalar where the array method would return a 0-d array (``s.copy()``,
``s.reshape(())``, ``s.squeeze()``; ``s.T`` and ``s.real`` are ``s``), and so do the functions
that call the method (``np.squeeze(s)``, ``np.transpose(s)``, ``np.reshape(s, ())``); on a 0-d
array they return 0-d arrays. Indexing gives a scalar only for a full set of integer indices
(``z[()]``); ``z[...]`` is a 0-d array, for a scalar too. ``np.ascontiguousarray`` has at least one
dimension. ndarray-only methods (``.dot``, ``.mT``) raise AttributeError on a scalar.
"""
import numpy as np
import pytest

from numpy_oracle import check, fn_from_src

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64"]

EXPRS = ["s.T", "s.real", "s.copy()", "s.squeeze()", "s.squeeze(axis=None)", "s.reshape(())",
         "s.reshape(1)", "s.reshape(-1)", "s.transpose()", "s.ravel()", "s.flatten()",
         "s.astype(np.float64)", "s.astype(s.dtype)", "s.astype(np.float64, copy=False)",
         "s[()]", "s[...]", "s[None]", "s[..., None]", "s.reshape(1)[0]", "s.reshape(1)[0, ...]",
         "np.squeeze(s)", "np.transpose(s)", "np.reshape(s, ())", "np.reshape(s, (1, 1))",
         "np.copy(s)", "np.ravel(s)", "np.expand_dims(s, 0)", "np.asarray(s)", "np.array(s)",
         "np.asanyarray(s)", "np.ascontiguousarray(s)", "np.ascontiguousarray(s) + 0",
         "np.broadcast_to(s, ())", "np.broadcast_to(s, (2,))", "s.copy().T", "s.T.copy()",
         "np.squeeze(s.reshape(1, 1))", "s.max()", "np.sum(s)", "s.any()",
         "np.where(s, s, s)", "np.maximum(s, s)"]

# How the value `s` is made inside the function from its argument `a`.
SOURCES = {
    "numpy scalar argument": ("s = a", lambda v: v[()]),
    "0-d array argument": ("s = a", lambda v: v),
    "reduction result": ("s = a.max()", lambda v: v.reshape(1)),
    "0-d array made inside": ("s = a.reshape(())", lambda v: v.reshape(1)),
    "integer-indexed element": ("s = a[0]", lambda v: v.reshape(1)),
    "element with ...": ("s = a[0, ...]", lambda v: v.reshape(1)),
}


def odd_values(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return [True, False]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return [info.min, info.max, 0]
    return [np.nan, -0.0, np.inf, np.finfo(dt).smallest_subnormal, 1.5]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_result_kinds_match_numpy(source, dtype):
    """One function returns every form; each value of the tuple must have NumPy's type, dtype,
    shape and value."""
    line, make_arg = SOURCES[source]
    f = fn_from_src(f"def f(a):\n    {line}\n    return ({', '.join(EXPRS)},)\n")
    for value in odd_values(dtype):
        check(f, make_arg(np.array(value, dtype)))


@pytest.mark.parametrize("expr", ["s.dot(s)", "s.mT", "s.partition(0)"])
@pytest.mark.parametrize("source", ["numpy scalar argument", "reduction result"])
def test_ndarray_only_attributes_raise_on_scalars(expr, source):
    line, make_arg = SOURCES[source]
    f = fn_from_src(f"def f(a):\n    {line}\n    return {expr}\n")
    with pytest.raises(AttributeError):
        f(make_arg(np.array(2.0, np.float32)))
    check(f, make_arg(np.array(2.0, np.float32)))


def test_scalar_T_is_the_scalar_itself():
    f = fn_from_src("def f(a):\n    return a.T, a.real\n")
    from numpy_oracle import compiled
    s = np.float32(3.0)
    t, r = compiled(f)(s)
    assert t is s and r is s
