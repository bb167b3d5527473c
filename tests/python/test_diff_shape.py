"""Structure ops, compiled vs NumPy: .T, transpose(axes), reshape (-1), expand_dims, squeeze,
None indexing, basic slicing (constant start/stop/step, negative steps, integer indices),
tuple returns, 0-d results that NumPy returns as scalars."""

import numpy as np
import pytest

from numpy_oracle import DTYPES, check, fn_from_src, make

STRUCT = {
    "T": ("x.T + 1", (3, 4, 5)),
    "T_2d": ("x.T * 2", (3, 5)),
    "transpose_axes": ("np.transpose(x, (1, 2, 0)) - 1", (3, 4, 5)),
    "transpose_method": ("x.transpose(2, 0, 1) * x.transpose(2, 0, 1)", (3, 4, 5)),
    "swapaxes": ("np.swapaxes(x, 0, 2) + 0", (3, 4, 5)),
    "reshape": ("x.reshape(6, 10) + 1", (3, 4, 5)),
    "reshape_neg1": ("x.reshape(-1, 5) * 2", (3, 4, 5)),
    "reshape_flat": ("np.reshape(x, (-1,)) - 1", (3, 4, 5)),
    "reshape_tuple_after_T": ("x.T.reshape((4, -1)) + 0", (2, 3, 4)),
    "ravel": ("x.ravel() + 1", (3, 4)),
    "expand_dims": ("np.expand_dims(x, 1) + np.expand_dims(x, -1)", (3, 4)),
    "expand_dims_tuple": ("np.expand_dims(x, (0, 3)) * 2", (3, 4)),
    "squeeze": ("np.squeeze(x) + 1", (1, 4, 1, 3)),
    "squeeze_axis": ("x.squeeze(axis=2) + x.squeeze(2)", (1, 4, 1, 3)),
    "none_index": ("x[:, None] + x[None, :]", (5,)),
    "none_index_3": ("x[None, :, None, :] * 2", (3, 4)),
    "slice_basic": ("x[1:3] + x[0:2]", (5, 4)),
    "slice_step": ("x[::2, 1::3] * 2", (7, 8)),
    "slice_neg_step": ("x[::-1] - x", (6, 3)),
    "slice_neg_step2": ("x[5:0:-2, ::-3] + 1", (7, 8)),
    "slice_neg_bounds": ("x[-3:, :-1] + x[:3, 1:]", (5, 4)),
    "slice_out_of_range": ("x[2:100] * 1", (5, 4)),
    "slice_empty": ("x[3:1] + 1", (5, 4)),
    "int_index": ("x[1] + x[-1]", (4, 5)),
    "int_index_2": ("x[2, 1:4] * x[0, ::-1][:3]", (4, 5)),
    "int_index_scalar": ("x[1, 2]", (4, 5)),  # NumPy scalar, not a 0-d array
    "int_index_expr": ("x[0, 0] * 2 + x[1, 1]", (4, 5)),
    "ellipsis": ("x[..., 0] + x[..., -1]", (3, 4, 5)),
    "blur_slices": ("(x[:-2, 1:-1] + x[1:-1, 1:-1] + x[2:, 1:-1]) / 3", (6, 7)),
    "tuple_return": ("(x.T, x[::-1], x.reshape(-1), x[0])", (3, 4)),
    "nested_tuple": ("(x + 1, (x * 2, x.sum()))", (3, 4)),
    "shape_attr": ("x.reshape(x.shape[1], x.shape[0]) + x.ndim + x.size", (3, 4)),
    "identity_view": ("x[:]", (3, 4)),
    "0d_in": ("x * 2 + 1", ()),
    "size1_dims": ("x.sum(axis=1) + x[:, 0, :]", (3, 1, 4)),
}


@pytest.mark.parametrize("case", list(STRUCT))
def test_struct(case, rng):
    expr, shape = STRUCT[case]
    f = fn_from_src(f"def f(x):\n    return {expr}\n")
    check(f, make(rng, shape, "float32"), ops=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_struct_dtypes(dtype, rng):
    f = fn_from_src("def f(x):\n    return (x.T[::-1, 1:], np.transpose(x, (1, 0, 2)).reshape(4, -1),"
                    " x[None, 1, ::2], np.expand_dims(x[0], 0), x[2, 3, 1])\n")
    check(f, make(rng, (3, 4, 5), dtype))


INDEX_ERRORS = {
    "int_out_of_range": ("x[10]", (4, 5)),  # IndexError
    "too_many_indices": ("x[0, 0, 0]", (4, 5)),  # IndexError
    "reshape_bad": ("x.reshape(7, 3)", (4, 5)),  # ValueError
    "squeeze_non1": ("np.squeeze(x, axis=0)", (4, 5)),  # ValueError
    "transpose_bad_axes": ("np.transpose(x, (0, 0))", (4, 5)),  # ValueError
    "expand_dims_bad": ("np.expand_dims(x, 5)", (4, 5)),  # AxisError
    "step_zero": ("x[::0]", (4, 5)),  # ValueError
}


@pytest.mark.parametrize("case", list(INDEX_ERRORS))
def test_struct_errors(case, rng):
    expr, shape = INDEX_ERRORS[case]
    f = fn_from_src(f"def f(x):\n    return {expr}\n")
    check(f, make(rng, shape, "float32"))
