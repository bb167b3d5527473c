"""``np.einsum`` with explicit letters (no ``...``, no letter twice in one operand): one operand
is a transpose (a view, as NumPy's) and sums; two are a batched matrix product, their batch
letters outside, the summed ones inside (the product's own kernels and cuBLAS calls); more are
products broadcast over all letters, then summed. Results keep the operands' common dtype, as
NumPy's einsum does (int8 sums wrap in int8, booleans are or-ed ands)."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import numpy_rules as rules
from .errors import numpy_raises
from .matmul import matmul
from .reductions import REDUCTIONS
from .shape_ops import reshape, transpose
from .values import ArrayValue


def _parse(subscripts, count):
    if not isinstance(subscripts, str):
        raise Unsupported("np.einsum with subscripts as lists of integers")
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise Unsupported("np.einsum with an ellipsis")
    inputs, arrow, output = spec.partition("->")
    operands = inputs.split(",")
    if len(operands) != count:
        raise numpy_raises(ValueError, f"einsum: {len(operands)} subscripts for {count} operands")
    letters = "".join(operands)
    if not all(c.isalpha() for c in letters + output):
        raise numpy_raises(ValueError, f"einsum: invalid subscripts {subscripts!r}")
    if not arrow:   # implicit: the letters used once, in alphabetical order
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if any(len(set(s)) != len(s) for s in operands) or len(set(output)) != len(output):
        raise Unsupported("np.einsum with a letter twice in one operand (diagonals)")
    if any(c not in letters for c in output):
        raise numpy_raises(ValueError, f"einsum: output letter not among the inputs' in {subscripts!r}")
    return operands, output


def _sizes(operands, arrays):
    sizes = {}
    for letters, a in zip(operands, arrays):
        if len(letters) != a.ndim:
            raise numpy_raises(ValueError, f"einsum: {len(letters)} letters for a {a.ndim}-d operand")
        for c, n in zip(letters, a.shape):
            if sizes.setdefault(c, n) != n:
                raise numpy_raises(ValueError, f"einsum: letter {c!r} has sizes {sizes[c]} and {n}")
    return sizes


def _summed(b, a, letters, keep, dtype):
    """``a`` (its axes ``letters``) summed over the letters not in ``keep``, in ``dtype``."""
    axes = tuple(i for i, c in enumerate(letters) if c not in keep)
    if not axes:
        return a, letters
    return REDUCTIONS["sum"](b, a, axis=axes, dtype=dtype), "".join(c for c in letters if c in keep)


def _ordered(b, a, letters, order):
    """``a`` with its axes in ``order`` (a transpose where they differ)."""
    if letters == order:
        return a
    return transpose(b, a, [letters.index(c) for c in order])


def einsum(b, subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if out is not None or dtype is not None or order != "K" or casting != "safe":
        raise Unsupported("np.einsum with out=, dtype=, order= or casting=")
    if not operands or not all(isinstance(a, ArrayValue) for a in operands):
        raise Unsupported("np.einsum of constants")
    letters, output = _parse(subscripts, len(operands))
    sizes = _sizes(letters, operands)
    common = rules.check_supported_dtype(np.result_type(*(a.dtype for a in operands)))
    arrays = [a if a.dtype == common else ArrayValue(b.cast(a, common).node, common, a.shape) for a in operands]
    if len(arrays) == 1:
        a, have = _summed(b, arrays[0], letters[0], output, common)
        r = _ordered(b, a, have, output)
    elif len(arrays) == 2:
        r = _pair(b, arrays, letters, output, sizes, common)
    else:
        r = _broadcast_product(b, arrays, letters, output, sizes, common)
    if r.ndim == 0 and not r.is_scalar:
        r = ArrayValue(r.node, r.dtype, r.shape, is_scalar=True)
    return r


def _pair(b, arrays, letters, output, sizes, dtype):
    """Two operands as a batched matrix product: batch letters (in both and the output), then the
    left's own, then the summed ones; the right's own last. A letter in one operand only and
    not the output is summed there first."""
    (a, left), (c, right) = zip(arrays, letters)
    a, left = _summed(b, a, left, set(right) | set(output), dtype)
    c, right = _summed(b, c, right, set(left) | set(output), dtype)
    batch = [x for x in output if x in left and x in right]
    summed = [x for x in left if x in right and x not in output]
    own_left = [x for x in left if x not in right]
    own_right = [x for x in right if x not in left]
    size = lambda group: int(np.prod([sizes[x] for x in group], dtype=np.int64))   # noqa: E731
    lhs = reshape(b, _ordered(b, a, left, "".join(batch + own_left + summed)),
                  tuple(sizes[x] for x in batch) + (size(own_left), size(summed)))
    rhs = reshape(b, _ordered(b, c, right, "".join(batch + summed + own_right)),
                  tuple(sizes[x] for x in batch) + (size(summed), size(own_right)))
    product = matmul(b, lhs, rhs)
    product = product if product.dtype == dtype else ArrayValue(b.cast(product, dtype).node, dtype, product.shape)
    have = "".join(batch + own_left + own_right)
    r = reshape(b, product, tuple(sizes[x] for x in have))
    return _ordered(b, ArrayValue(r.node, r.dtype, r.shape), have, output)


def _broadcast_product(b, arrays, letters, output, sizes, dtype):
    """Three or more operands: each laid out over every letter (size 1 where it has none), their
    product broadcast, summed over the letters not in the output."""
    everything = "".join(sorted(set("".join(letters))))
    product = None
    for a, have in zip(arrays, letters):
        laid = _ordered(b, a, have, "".join(x for x in everything if x in have))
        laid = reshape(b, laid, tuple(sizes[x] if x in have else 1 for x in everything))
        laid = b.broadcast(laid, tuple(sizes[x] for x in everything))
        product = laid if product is None else b.op("mul" if dtype != np.bool_ else "bitwise_and", [product, laid])
    summed, have = _summed(b, product, everything, set(output), dtype)
    return _ordered(b, summed, have, output)
