"""Regression tests: each failure found by differential fuzzing
(test/fuzz/program_gen.py, cmake-free-scripts/fuzz_long.py), by the
bad-input matrix or by the user-program corpus (test/corpus), minimized,
next to NumPy's answer."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def run_both(fn, *args):
    """fn under kiln and under NumPy on copies; returns both results and
    both argument lists after the call."""
    k_args = [np.copy(a) for a in args]
    n_args = [np.copy(a) for a in args]
    got = kiln.qjit(fn)(*k_args)
    want = fn(*n_args)
    return got, want, k_args, n_args


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want)


# fuzz: `t = np.floor(x)` on an integer array returned x itself, so `t += 1`
# wrote the caller's array.
def test_integer_floor_result_does_not_alias_its_operand():
    def f(x):
        t = np.floor(x)
        t += 1
        return t

    got, want, (xk,), (xn,) = run_both(f, np.array([4, -2], np.int32))
    assert_same(got, want)
    assert_same(xk, xn)


@pytest.mark.parametrize("ufunc", [np.positive, np.ceil, np.trunc, np.rint, np.absolute])
def test_identity_ufuncs_return_fresh_arrays(ufunc):
    def f(x):
        t = ufunc(x)
        t *= 3
        return t

    x = np.array([1, 2, 3], np.uint8 if ufunc is np.absolute else np.int64)
    got, want, (xk,), (xn,) = run_both(f, x)
    assert_same(got, want)
    assert_same(xk, xn)


# bad inputs: a complex argument failed with "int() argument must be ... not
# 'complex'" (the jaxpr printer) and then "LLVM Translation failed" (no
# complex-to-LLVM lowering in the pipeline).
def test_complex_arrays_compute():
    x = np.arange(3) + 1j
    assert_same(kiln.qjit(lambda x: x + 1)(x), x + 1)
    assert_same(kiln.qjit(lambda x: np.sum(x * x))(x), np.sum(x * x))
    x64 = x.astype(np.complex64)
    assert_same(kiln.qjit(lambda x: x * 1j + np.exp(x))(x64), x64 * 1j + np.exp(x64))


# bad inputs: materializing a huge broadcast made malloc fail and the
# compiled code write through a null pointer (segmentation fault). Run in a
# subprocess so that a regression cannot take the test session down.
@pytest.mark.parametrize("body, n", [
    ("knp.broadcast_to(x, (1 << 40, 1 << 20))", 1),
    ("knp.zeros((x.shape[0] * (1 << 40), 1 << 20))", 3),
])
def test_failed_allocation_raises_memory_error(body, n):
    script = textwrap.dedent(f"""
        import numpy as np, kiln, kiln.numpy as knp
        f = kiln.qjit(lambda x: {body})
        try:
            f(np.ones({n}))
        except MemoryError as e:
            assert "could not allocate" in str(e), e
            print("MemoryError")
        print("done")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["MemoryError", "done"]


# bad inputs: a size product that wraps around 2**64 bytes (3 * 2**31 rows of
# 2**31 float64) allocated a small buffer the code then overran; a negative
# traced size allocated a buffer of the wrapped size. kiln-check-alloc-sizes
# now guards every dynamic allocation.
def test_wrapping_allocation_size_raises_memory_error():
    script = textwrap.dedent("""
        import numpy as np, kiln, kiln.numpy as knp
        f = kiln.qjit(lambda x: knp.zeros((x.shape[0] * (1 << 31), 1 << 31)))
        try:
            f(np.ones(3))
        except MemoryError as e:
            assert "more than 2**62 bytes" in str(e), e
            print("MemoryError")
        print(f(np.ones(2)[:0]).shape)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["MemoryError", "(0,", "2147483648)"]


def test_negative_traced_size_raises_value_error():
    f = kiln.qjit(lambda n: knp.zeros((n, 3)))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        f(-5)
    assert f(2).shape == (2, 3)


# fuzz: a reduction of a 0-d array (`np.sum(x[0])` on a vector) lowered to a
# stablehlo.reduce without dimensions, which never bufferized
# ("op was not bufferized").
@pytest.mark.parametrize("fn", [np.sum, np.prod, np.max, np.min, np.mean])
def test_reduction_of_a_zero_d_array(fn):
    def f(x):
        t = np.negative(x)[0]
        return fn(t)

    got, want, _, _ = run_both(f, np.array([3.0, 1.0], np.float32))
    assert_same(got, want)
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.qjit(f)(np.zeros(0, np.float32))


def test_reduction_of_a_zero_d_array_is_a_snapshot():
    def f(x):
        s = np.sum(x)
        x[...] = 5.0
        return s, np.sum(x)

    got, want, (xk,), (xn,) = run_both(f, np.array(2.0))
    assert_same(got, want)
    assert_same(xk, xn)


# fuzz: `x[1:]` on an array whose length is 1 (a specialized static dim) lowered
# to a static slice starting at 1, which linalg's extract_slice rejects
# ("offset 0 is out-of-bounds: 1 >= 1").
@pytest.mark.parametrize("shape", [(1,), (0,), (3,)])
def test_static_empty_slice_past_the_end(shape):
    def f(x):
        v = x[1:]
        v += 1
        return x[1:], x[3::2]

    got, want, (xk,), (xn,) = run_both(f, np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(xk, xn)


def test_static_empty_slice_on_a_static_axis():
    def f(x):
        v = x[:, 3:]
        v *= 2
        return v.sum(axis=1)

    got, want, _, _ = run_both(f, np.ones((2, 3)))
    assert_same(got, want)


# fuzz: `v = x[0]` on a vector was a 0-d view of x, so `v[...] = 0` wrote x
# (NumPy: a scalar, TypeError) and `v = x[0]; x[0] = 5; return v` returned 5
# (NumPy: the old value). Indexing every axis with an integer now gives a
# copy that refuses writes; x[..., 0] stays a 0-d view, as in NumPy.
def test_integer_indexed_element_is_a_snapshot():
    def f(x):
        v = x[0]
        w = x[1, 2]
        x[0] = 5.0
        x += 1
        return v, w * 1

    got, want, (xk,), (xn,) = run_both(f, np.arange(6.0).reshape(2, 3))
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(xk, xn)


def test_writing_into_an_integer_indexed_element_is_refused():
    def f(x):
        v = x[0]
        v[...] = 0
        return x

    x = np.arange(3.0)
    with pytest.raises(TypeError, match="does not support item assignment"):
        kiln.qjit(f)(x)
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])


def test_ellipsis_index_of_every_axis_stays_a_view():
    def f(x):
        v = x[..., 0]
        v[...] = 7.0
        w = x[1]
        w += 1  # a scalar: rebinds
        x[2] += 3
        return x, w

    got, want, (xk,), (xn,) = run_both(f, np.arange(3.0))
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(xk, xn)


# fuzz: a NumPy scalar argument (np.float64 is a subclass of Python float)
# was traced as a weakly typed Python float, so float32 array + np.float64
# gave float32; NEP 50 gives float64.
@pytest.mark.parametrize("scalar", [np.float64(2.0), np.int64(3), np.float32(2.0), 2.0, 3])
def test_numpy_scalar_arguments_are_strongly_typed(scalar):
    f = kiln.qjit(lambda x, y: -(x + y))
    for n in (0, 1, 3):
        x = np.ones(n, np.float32)
        got, want = f(x, scalar), -(x + scalar)
        assert got.dtype == want.dtype, (type(scalar), n)
        np.testing.assert_allclose(got, want)


# fuzz (a crash: "malloc(): invalid size"): `t += -1; x[idx] *= t` with len(x)
# 13 and 4 indices. match_dims (t's length must be 4) lowered to a cast that
# canonicalization folded back into the producer of `t += -1`: a buffer of
# 4 elements written by a loop of 13, before the check that the lengths
# agree had run. match_dims now lowers to a slice from 0.
def test_dim_refinement_does_not_shrink_earlier_buffers():
    script = textwrap.dedent("""
        import gc
        import numpy as np, kiln

        @kiln.qjit
        def f(x):
            t = x
            t += -1
            x[np.array([3, 1, 2, 3])] *= t
            return t

        errors = 0
        for rep in range(300):
            for n in (13, 4, 40):
                try:
                    f(np.arange(n))
                except ValueError:
                    errors += 1
            gc.collect()
        x = np.arange(4)
        print(errors, f(x).tolist(), x.tolist())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    x = np.arange(4)
    x -= 1
    x[np.array([3, 1, 2, 3])] *= x.copy()
    assert proc.stdout.split("\n")[0] == f"600 {x.tolist()} {x.tolist()}"


# fuzz: writing into a literally empty strided slice (`v = x[-1:-1:3];
# v *= -1`) failed to compile ("offset 0 is out-of-bounds: 0 >= 0"): the
# strided write's buffers folded to size 0 during bufferization. Literal
# bounds that select nothing now give a static empty selection, and a write
# into an empty destination is no write.
def test_writes_into_literally_empty_slices():
    def f(x):
        a, b, c, d, e = x[-1:-1:3], x[5:2], x[2:5:-1], x[-2:-5], x[3:3]
        a *= 2
        b += 1
        c[...] = 7
        d -= 1
        e += 5
        return a, b, c, d, e, x[-5:-2:-1], x * 1

    for n in (0, 1, 3, 8):
        got, want, (xk,), (xn,) = run_both(f, np.arange(float(n)))
        for g, w in zip(got, want):
            assert_same(g, w)
        assert_same(xk, xn)


# fuzz: `np.sum(t, axis=0)` on a 0-d value raised "axis 0 is out of bounds";
# NumPy's ufunc reductions (sum, prod, max, min, any, all) take axis 0 or -1
# on a 0-d array (np.mean does not).
def test_ufunc_reductions_take_axis_0_on_0d_values():
    def f(x):
        s = x[0] * 1
        return (np.sum(s, axis=0), np.max(s, axis=-1), np.min(s, axis=0), np.prod(s, axis=0),
                np.any(s, axis=0), np.all(s, axis=-1))

    got, want, _, _ = run_both(f, np.arange(3.0))
    for g, w in zip(got, want):
        assert_same(g, w)
    with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
        kiln.qjit(lambda x: np.mean(x[0], axis=0))(np.arange(3.0))


# fuzz: a loop body writing `t[i] = 1` into an array with a static size-0
# dim (`t = x[:0]`) failed to verify ("expects size at dimension 0 of update
# to be in range [0, 0]") although the loop never runs. A write into a view
# of an empty array is now no write; running it still raises IndexError.
def test_writes_into_views_of_empty_arrays():
    def f(x):
        t = np.negative(x)[:0]

        @kiln.for_loop(0, t.shape[0], 1)
        def loop(i):
            t[i] = 1

        loop()
        return t

    got, want, _, _ = run_both(f, np.ones((1, 2), np.float32))
    assert_same(got, want)

    def g(x, i):
        t = x[:0]
        t[i] = 1
        return t

    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        kiln.qjit(g)(np.ones((3, 2)), 0)


# fuzz: `x[:, 0:0]` with a dynamic second dim raised "a Python if ... on a
# traced value" (the contiguity rule compared a static size with a traced
# dim).
@pytest.mark.parametrize("shape", [(0, 2), (3, 2), (3, 1)])
def test_empty_slice_of_a_dynamic_dim(shape):
    def f(x):
        return x[:, 0:0], x[:, 5:2], x[1:1]

    got, want, _, _ = run_both(f, np.zeros(shape, np.float32))
    for g, w in zip(got, want):
        assert_same(g, w)


# fuzz (bool inputs): `x ** 2` on a bool array gave int64; ndarray.__pow__
# computes `x ** 2` as np.square(x), which gives int8.
def test_bool_array_squared_is_int8():
    def f(x):
        return x ** 2, x ** 3, x ** 2.0

    got, want, _, _ = run_both(f, np.array([True, False]))
    for g, w in zip(got, want):
        assert_same(g, w)


# fuzz (uint8 inputs): `x[0] = -2.5` on a uint8 array stored a wrapped value;
# NumPy converts a Python float with int() and range-checks it
# (OverflowError), and refuses NaN (ValueError).
def test_python_float_stored_into_an_integer_array():
    def store(v):
        def f(x):
            x[0] = v
            return x
        return f

    for dtype in (np.uint8, np.int8, np.int32):
        for v in (-2.5, 2.7, 300.0):
            x = np.array([7, 3], dtype)
            try:
                want = store(v)(x.copy())
            except OverflowError:
                with pytest.raises(OverflowError, match=f"Python integer {int(v)} out of bounds for"):
                    kiln.qjit(store(v))(x.copy())
                continue
            assert_same(kiln.qjit(store(v))(x.copy()), want)
        with pytest.raises(ValueError, match="cannot convert float nan to integer"):
            kiln.qjit(store(float("nan")))(np.array([7, 3], dtype))


# fuzz (uint8 inputs): `np.clip(x, -1, 2, out=x)` raised OverflowError; NumPy
# ignores a Python int bound beyond the dtype's range on its own side (and
# still overflows for one beyond the other side).
def test_clip_with_bounds_beyond_an_integer_dtype():
    x = np.array([0, 1, 5, 200], np.uint8)
    def clipper(lo, hi):  # the bounds are constants of the program, not arguments
        def f(x):
            r = np.clip(x, lo, hi)
            r += 1
            np.clip(x, lo, hi, out=x)
            return r
        return f

    for lo, hi in [(-1, 2), (2, 300), (-1, None), (None, 300), (-1, 300)]:
        got, want, (xk,), (xn,) = run_both(clipper(lo, hi), x)
        assert_same(got, want)
        assert_same(xk, xn)
    for lo, hi in [(-5, -1), (300, 400), (None, -1)]:
        with pytest.raises(OverflowError, match="out of bounds for uint8"):
            kiln.qjit(clipper(lo, hi))(x.copy())


def test_python_float_stored_through_an_index_array():
    def f(x):
        x[np.array([0, 1])] = -2.5
        return x

    x = np.array([3, 4], np.int8)
    got, want, (xk,), (xn,) = run_both(f, x)
    assert_same(got, want)
    with pytest.raises(OverflowError, match="Python integer -2 out of bounds for uint8"):
        kiln.qjit(f)(np.array([3, 4], np.uint8))


# Found while writing the clip test: a Python int passed as an argument (a
# traced weak int64) wrapped into a narrower integer array (`x + n` with x
# uint8 and n = -1 gave [0, 1]); NumPy raises OverflowError. The conversion
# now checks the range when the program runs, as for Python int literals.
def test_traced_python_int_out_of_a_narrower_dtype():
    f = kiln.qjit(lambda x, n: x + n)
    x = np.array([1, 2], np.uint8)
    assert_same(f(x, 3), x + 3)
    for n in (-1, 300):
        with pytest.raises(OverflowError, match=f"Python integer {n} out of bounds for uint8"):
            f(x, n)
    assert_same(f(np.ones(2, np.int32), -5), np.ones(2, np.int32) - 5)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        f(np.ones(2, np.int32), 2**40)

    @kiln.qjit
    def count(x):
        @kiln.for_loop(0, 300, 1)
        def body(i, acc):
            return acc + (x * 0 + i)

        return body(x * 0)

    with pytest.raises(OverflowError, match="Python integer 256 out of bounds for uint8"):
        count(np.ones(2, np.uint8))


# fuzz run 2: a scan (cumsum, cumprod, maximum.accumulate) of an array with a
# static size-0 dim (`x[:, 0:0]`) failed to verify ("offset 0 is
# out-of-bounds: 0 >= 0"); an empty scan is its empty operand.
def test_scans_of_arrays_with_a_static_empty_dim():
    def f(x):
        t = x[:, 0:0]
        return np.cumsum(t, axis=0), np.cumprod(t, axis=1), np.cumsum(x[3:3]), np.maximum.accumulate(t, axis=0)

    for dtype in (np.float32, np.int32, np.uint8):
        got, want, _, _ = run_both(f, np.ones((3, 2), dtype))
        for g, w in zip(got, want):
            assert_same(g, w)


# fuzz run 2: `np.copyto(x, 1)` on a bool array (and a Python float into an
# int array) passed; NumPy's 'same_kind' rule refuses a Python int into bool
# and a float into ints.
def test_copyto_python_scalars_follow_same_kind():
    def copy_in(v):
        def f(x):
            np.copyto(x, v)
            return x
        return f

    for dtype, v, ok in [(np.int8, 1, True), (np.uint8, 1, True), (np.bool_, True, True), (np.float32, 1, True),
                         (np.complex64, 1.5, True), (np.bool_, 1, False), (np.int8, 1.5, False)]:
        x = np.zeros(2, dtype)
        if ok:
            got, want, _, _ = run_both(copy_in(v), x)
            assert_same(got, want)
        else:
            with pytest.raises(TypeError, match="casting rule 'same_kind'"):
                kiln.qjit(copy_in(v))(x)


# fuzz run 2: `x[0] = x` with x of shape (1, 2) raised "cannot broadcast
# (1,?) to a lower rank"; NumPy's assignment drops extra leading dims of 1.
def test_assignment_drops_leading_unit_dims_of_the_value():
    def f(x):
        t = x
        x[0] = t
        return t

    def g(x):
        x[1:2] = np.ones((1, 1, 2)) * 5
        return x

    for fn, shape in [(f, (1, 2)), (g, (3, 2))]:
        got, want, (xk,), (xn,) = run_both(fn, np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        assert_same(got, want)
        assert_same(xk, xn)
    with pytest.raises(ValueError, match="broadcast"):
        kiln.qjit(f)(np.ones((3, 2)))


def test_array_sizes_are_weakly_typed_like_python_ints():
    """x.shape[0] is a Python int in NumPy: it must not widen the array's dtype."""
    import kiln

    scale = kiln.qjit(lambda x: x * x.shape[0])
    mean_like = kiln.qjit(lambda x: x / x.shape[0])
    assert scale(np.arange(3, dtype=np.int8)).dtype == np.int8
    assert mean_like(np.ones(4, np.float32)).dtype == np.float32


def test_float16_mean_accumulates_in_float32_like_numpy():
    """Fuzzing (seed 45): np.mean of float16 differed from NumPy by an ulp;
    NumPy sums float16 in float32 and rounds the mean back to float16."""
    import kiln

    def f(x):
        return np.mean(np.sin(x), axis=None, keepdims=False)

    def g(x):
        return x.mean(axis=1)

    for n in (1, 3, 1000):
        x = np.arange(n, dtype=np.int8) - 1
        got = kiln.qjit(f)(x)
        assert got.dtype == np.float16 and got == f(x)
    h = np.random.default_rng(0).random((5, 700)).astype(np.float16)
    np.testing.assert_array_equal(kiln.qjit(g)(h), g(h))


def test_scalar_element_refuses_an_array_value_like_numpy():
    """Fuzzing (seed 25): `x[0, 0] = t` with t of shape (1, 1) is a
    ValueError in NumPy ("setting an array element with a sequence"); kiln
    broadcast it. A scalar value, or a row of a 2-d array, still assigns."""
    import kiln

    def f(x):
        t = -x
        x[0, 0] = t
        return t

    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        np_x = np.ones((1, 1), np.float32)
        f(np_x)
    x = np.ones((1, 1), np.float32)
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        kiln.qjit(f)(x)
    assert np.array_equal(x, np.ones((1, 1), np.float32))

    def g(x):
        x[0, 1] = x[1, 0]
        x[1] = 5.0
        x[0] = x[1] * 2
        return x

    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(kiln.qjit(g)(a.copy()), g(a.copy()))


def test_slice_of_a_statically_empty_dim_compiles():
    """Fuzzing (runs 3 and 4): a strided slice of an array whose dim is
    statically 0 (`x[0:0][::2]`) failed MLIR's slice verifier."""
    import kiln

    def f(x):
        t = x[0:0]
        t = np.negative(t)
        return t[::2], t[::-1] * 2, x[1:1, ::3][::2]

    for shape in [(5, 4), (0, 4), (3, 7)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        for got, want in zip(kiln.qjit(f)(x), f(x)):
            assert got.shape == want.shape and got.dtype == want.dtype


# Found by the user-program corpus (test/corpus, test/test_user_corpus.py).

def _running_sum_after_early_return(x):
    v = np.zeros_like(x)
    if x.size == 0:
        return v
    v[0] = x[0]
    for t in range(1, len(x)):
        v[t] = v[t - 1] + x[t]
    return v


@pytest.mark.parametrize("size", [0, 1, 7, 100])
def test_writes_in_a_loop_inside_a_branch_that_wrote_first(size):
    """finance.ewma_volatility: a write in a branch, then a loop in the same
    branch writing the same outer array. The branch's propagation marked
    the loop's writes as handled before they left the loop, so the loop
    read and wrote a stale copy: every element but the first came back 0."""
    x = np.arange(1.0, size + 1.0)
    got, want, _, _ = run_both(_running_sum_after_early_return, x)
    assert_same(got, want)


def _relax_after_break(w, u):
    n = w.shape[0]
    dist = np.full(n, np.inf)
    visited = np.zeros(n, dtype=bool)
    for _ in range(n):
        if u == -1:
            break
        visited[u] = True
        for v in range(n):
            if w[u, v] < dist[v]:
                dist[v] = 1.0
    return dist, visited


@pytest.mark.parametrize("size", [0, 1, 5])
def test_a_value_captured_again_through_the_parent_scope_is_one_constant(size):
    """graphs.dijkstra: a branch captured the array size `n` directly, then
    a loop bound inside it reached `n` through the loop's scope; the branch
    got two constants for one value and the cond was refused as a kiln bug
    ("every branch takes the cond's constants and nothing else")."""
    w = np.arange(size * size, dtype=np.float64).reshape(size, size)
    got, want, _, _ = run_both(_relax_after_break, w, np.int64(0 if size else -1))
    for g, e in zip(got, want):
        assert_same(g, e)


def _static_index_out_of_bounds_where_it_may_not_run(flag, n):
    out = np.zeros(3)
    if flag > 0:
        out[5] = 1.0
    for _ in range(n):
        out[1] += out[-4]
    return out


@pytest.mark.parametrize("flag, n, error", [(0, 0, None), (1, 0, "index 5 is out"), (0, 2, "index -4 is out")])
def test_a_static_index_out_of_bounds_raises_only_where_it_runs(flag, n, error):
    """graphs.bfs_distances at size 1: `queue[tail] = v` with a Python int
    `tail` past the end, in a branch never taken at run time, raised
    IndexError while tracing. In a loop body or a branch it is a run-time
    check (NumPy raises only if the line runs); at the top level it still
    raises while tracing."""
    f = kiln.qjit(_static_index_out_of_bounds_where_it_may_not_run)
    if error is None:
        assert_same(f(flag, n), _static_index_out_of_bounds_where_it_may_not_run(flag, n))
        return
    with pytest.raises(IndexError, match=error):
        _static_index_out_of_bounds_where_it_may_not_run(flag, n)
    with pytest.raises(IndexError, match=error):
        f(flag, n)
