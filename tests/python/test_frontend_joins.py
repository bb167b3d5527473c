"""np.concatenate, np.stack, np.hstack, np.vstack and np.roll: compiled (fullgraph) and checked
against NumPy on every dtype, odd shapes (empty, size 1), negative axes and shifts, and NumPy's
errors for mismatched pieces and bad axes."""
import numpy as np
import pytest

import numpy_oracle as O


def fn(body, args="a, b"):
    return O.fn_from_src(f"def f({args}):\n    return {body}\n")


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("body", [
    "np.concatenate([a, b])", "np.concatenate((a, b, a), axis=1)", "np.concatenate([a, b], axis=-1)",
    "np.concatenate([a, b], axis=None)", "np.stack([a, b])", "np.stack((a, b), axis=-1)",
    "np.stack([a, b], 1)", "np.hstack([a, b])", "np.vstack((a, b))", "np.concatenate([a * 2, b[::-1]]) + 1",
    "np.concatenate([a.astype(np.int32), b], axis=1)", "np.concatenate([a, b[:, :0]], axis=1)",
])
def test_joins_match_numpy(body, dtype, rng):
    for shape in [(3, 4), (1, 1), (0, 2), (2, 0)]:
        a = O.make(rng, shape, dtype)
        b = O.make(rng, shape, dtype, layout="F" if shape == (3, 4) else "C")
        O.check(fn(body), a, b)


@pytest.mark.parametrize("body,shapes", [
    ("np.hstack([a, b])", [(3,), (5,)]), ("np.vstack([a, b])", [(3,), (3,)]),
    ("np.vstack([a, b])", [(), ()]), ("np.hstack([a, b])", [(), (2,)]),
    ("np.concatenate([a, b])", [(2, 3, 4), (1, 3, 4)]), ("np.stack([a, b], axis=3)", [(2, 3, 4)] * 2),
    ("np.concatenate([a, b], axis=1)", [(2, 3), (2, 0)]),
])
def test_joins_of_other_ranks(body, shapes, rng):
    O.check(fn(body), *[O.make(rng, s, "float64") for s in shapes])


@pytest.mark.parametrize("body,shapes", [
    ("np.concatenate([a, b])", [(2, 3), (2, 4)]),            # other axes differ
    ("np.concatenate([a, b])", [(2, 3), (3,)]),              # ranks differ
    ("np.concatenate([a, b])", [(), ()]),                    # 0-d pieces
    ("np.concatenate([a, b], axis=2)", [(2, 3), (2, 3)]),    # axis out of range
    ("np.stack([a, b])", [(2, 3), (3, 2)]),
    ("np.concatenate([])", [(1,), (1,)]),
    ("np.concatenate([a, 1.0])", [(2,), (1,)]),
    ("np.roll(a, 1, axis=2)", [(2, 3), (1,)]),
    ("np.roll(a, (1, 2), axis=(0, 1, 1))", [(2, 3), (1,)]),
])
def test_joins_raise_numpys_errors(body, shapes, rng):
    O.check_raises_same(fn(body), *[O.make(rng, s, "float64") for s in shapes])


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("body", [
    "np.roll(a, 1)", "np.roll(a, -1, axis=0)", "np.roll(a, 7, axis=1)", "np.roll(a, 0, axis=1)",
    "np.roll(a, (1, -2), axis=(0, 1))", "np.roll(a, 2, axis=(0, 1))", "np.roll(a, (1, 1), axis=(1, 1))",
    "np.roll(a, np.int64(-5), axis=-1)",
    "a + 0.5 * (np.roll(a, 1, axis=0) - 2 * a + np.roll(a, -1, axis=0))",
])
def test_roll_matches_numpy(body, dtype, rng):
    for shape in [(4, 5), (1, 3), (0, 3), (5, 1)]:
        O.check(fn(body, "a"), O.make(rng, shape, dtype))
    O.check(fn(body, "a"), O.make(rng, (6, 5), dtype)[::2, ::-1])


def test_a_rolled_stencil_in_a_loop_compiles_once(rng):
    f = O.fn_from_src(
        "def f(u, steps):\n"
        "    for _ in range(steps):\n"
        "        u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))\n"
        "    return u\n")
    O.check(f, O.make(rng, (64,), "float64"), 3)
