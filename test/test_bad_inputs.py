"""The bad-input matrix (docs/reliability.md): one test per row. Each bad
input gets NumPy's answer or a Python exception with a clear message, never
a crash, and the caller's arrays are untouched when the call fails."""

import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def untouched_after_failure(fn, args, exc, match):
    """Call fn on args expecting `exc`; the arrays must not have changed."""
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(exc, match=match):
        fn(*args)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


@kiln.qjit
def plus_one(x):
    return x + 1


@kiln.qjit
def add_in_place(x, y):
    x += y
    return x * 2


# --- dtypes


def test_object_array_is_refused():
    with pytest.raises(TypeError, match=r"argument 0: dtype object is not supported; convert it with \.astype\(\)"):
        plus_one(np.array([1, "a"], dtype=object))


def test_string_and_datetime_arrays_are_refused():
    with pytest.raises(TypeError, match=r"dtype <U3 is not supported"):
        plus_one(np.array(["abc"]))
    with pytest.raises(TypeError, match=r"dtype datetime64\[D\] is not supported"):
        plus_one(np.array(["2020-01-01"], dtype="datetime64[D]"))


def test_complex_arrays_give_numpy_answers():
    x = np.array([1 + 2j, -3j])
    np.testing.assert_allclose(plus_one(x), x + 1)


def test_small_dtypes_give_numpy_answers():
    for dtype in (np.float16, np.uint8, np.int8, np.bool_):
        x = np.ones(3, dtype)
        got, want = plus_one(x), x + 1
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# --- ranks, dims, argument counts


def test_rank_change_on_a_second_call_recompiles():
    f = kiln.qjit(lambda x: np.sum(x, axis=0))
    np.testing.assert_allclose(f(np.arange(6.0)), 15.0)
    np.testing.assert_allclose(f(np.arange(6.0).reshape(2, 3)), [3.0, 5.0, 7.0])


def test_rank_change_against_annotations_is_refused():
    @kiln.qjit
    def f(x: kiln.ShapeDtype(("n",), "float64")):
        return x * 2

    with pytest.raises(TypeError, match="expected a float64 array of rank 1 as annotated"):
        f(np.ones((2, 2)))


def test_mismatched_dynamic_dims_raise_and_leave_arguments_untouched():
    x, y = np.arange(3.0), np.arange(4.0)
    untouched_after_failure(add_in_place, [x, y], ValueError,
                            r"np\.add: operands could not be broadcast together with shapes \(\?,\) \(\?,\) \(axis -1: sizes [34] and [34]\)")


def test_mismatched_named_dims_are_refused_before_the_call():
    f = kiln.qjit(lambda x, y: x + y, abstracted_axes=({0: "n"}, {0: "n"}))
    with pytest.raises(ValueError, match="axis .n. has size 4 in argument 1 .axis 0. but 3 in argument 0"):
        f(np.ones(3), np.ones(4))


def test_wrong_number_of_arguments():
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        plus_one()
    with pytest.raises(TypeError, match="too many positional arguments"):
        plus_one(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        plus_one(np.ones(2), z=1)


# --- non-array arguments


def test_none_argument_gets_numpys_error():
    with pytest.raises(TypeError, match="NoneType"):
        plus_one(None)
    with pytest.raises(TypeError, match="NoneType"):
        kiln.qjit(lambda x: np.exp(x))(None)


def test_dict_argument_is_a_pytree():
    with pytest.raises(TypeError, match="dict"):
        plus_one({"a": np.ones(2)})
    f = kiln.qjit(lambda d: d["a"] + 1)
    np.testing.assert_allclose(f({"a": np.ones(2)}), [2.0, 2.0])


def test_set_argument_is_refused():
    with pytest.raises(TypeError, match="dtype object is not supported"):
        plus_one({1, 2})


def test_python_int_out_of_int64_range():
    with pytest.raises(OverflowError, match="does not fit in int64|int too large to convert"):
        plus_one(2**70)
    assert plus_one(3) == 4
    with pytest.raises(OverflowError, match="does not fit in int64|int too large to convert"):
        plus_one(-(2**70))


# --- values


def test_nan_and_inf_give_numpy_answers():
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    f = kiln.qjit(lambda x: (np.exp(x), np.max(x), np.minimum(x, 0.0), x > 0, np.sum(x)))
    for got, want in zip(f(x), (np.exp(x), np.max(x), np.minimum(x, 0.0), x > 0, np.sum(x))):
        np.testing.assert_array_equal(got, want)


def test_empty_arrays_give_numpy_answers():
    x = np.zeros((0, 3))
    f = kiln.qjit(lambda x: (np.sum(x, axis=0), x * 2, np.sum(x)))
    for got, want in zip(f(x), (np.sum(x, axis=0), x * 2, np.sum(x))):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        kiln.qjit(lambda x: np.max(x))(np.zeros(0))


# --- sizes


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    """Run in a subprocess, so that a crash fails this test only."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)


def test_huge_broadcast_raises_memory_error():
    proc = _run_isolated("""
        import numpy as np, kiln, kiln.numpy as knp
        f = kiln.qjit(lambda x: knp.broadcast_to(x, (1 << 40, 1 << 20)))
        try:
            f(np.ones(1))
        except MemoryError as e:
            print("MemoryError:", e)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "MemoryError: compiled code could not allocate" in proc.stdout


def test_huge_traced_size_raises_memory_error():
    proc = _run_isolated("""
        import numpy as np, kiln, kiln.numpy as knp
        f = kiln.qjit(lambda n: knp.zeros((n, n)))
        for n in (3_000_000_000, 1 << 40):
            try:
                f(n)
            except MemoryError as e:
                print("MemoryError:", e)
        print(f(3).shape)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("MemoryError: compiled code could not allocate") == 2
    assert "(3, 3)" in proc.stdout


def test_negative_traced_size_raises_value_error():
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        kiln.qjit(lambda n: knp.ones(n))(-4)


# --- indices


def test_static_out_of_bounds_index():
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        kiln.qjit(lambda x: x[7])(np.arange(5.0))
    with pytest.raises(IndexError, match="index -6 is out of bounds"):
        kiln.qjit(lambda x: x[-6])(np.arange(5.0))
    assert kiln.qjit(lambda x: x[-1])(np.arange(5.0)) == 4.0


def test_traced_out_of_bounds_index():
    get = kiln.qjit(lambda x, i: x[i])
    assert get(np.arange(5.0), -1) == 4.0
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        get(np.arange(5.0), 5)
    with pytest.raises(IndexError, match="index -6 is out of bounds for axis 0 with size 5"):
        get(np.arange(5.0), -6)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        get(np.ones((3, 2)), 3)


def test_traced_out_of_bounds_write_leaves_the_argument_untouched():
    @kiln.qjit
    def write(x, i):
        x[0] = -1.0
        x[i] = 5.0

    untouched_after_failure(write, [np.arange(4.0), 9], IndexError, "index 9 is out of bounds")
    x = np.arange(4.0)
    write(x, -1)
    np.testing.assert_array_equal(x, [-1.0, 1.0, 2.0, 5.0])


def test_out_of_bounds_integer_array_index():
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.qjit(lambda x, idx: x[idx])(np.arange(4.0), np.array([0, 4]))


def test_float_index_is_refused():
    with pytest.raises(IndexError, match="only integers, slices"):
        kiln.qjit(lambda x, i: x[i])(np.ones(3), 1.5)


# --- layouts and memory


def test_non_contiguous_and_negatively_strided_inputs():
    def bump(x):
        x[1] += 10.0
        return x.sum(axis=0)

    compiled = kiln.qjit(bump)
    for make in (lambda: np.arange(10.0)[::2], lambda: np.arange(5.0)[::-1],
                 lambda: np.arange(24.0).reshape(4, 6)[:, ::-2], lambda: np.arange(12.0).reshape(3, 4).T):
        got_x, want_x = make(), make()
        np.testing.assert_allclose(compiled(got_x), bump(want_x))
        np.testing.assert_array_equal(got_x, want_x)


def test_read_only_input_that_is_written():
    x = np.arange(5.0)
    x.flags.writeable = False
    untouched_after_failure(add_in_place, [x, np.ones(5)], ValueError,
                            r"argument 0 is read-only but the function writes to it")
    np.testing.assert_allclose(plus_one(x), x + 1)  # reading a read-only array is fine


def test_aliasing_arguments_that_are_written():
    base = np.arange(6.0)
    untouched_after_failure(add_in_place, [base[:3], base[1:4]], ValueError,
                            "argument 0 is written by the function and overlaps argument 1 in memory")
    untouched_after_failure(add_in_place, [base, base], ValueError, "overlaps argument 1")
    f = kiln.qjit(lambda x, y: x + y)  # aliasing arguments that are only read are fine
    np.testing.assert_allclose(f(base[:3], base[1:4]), base[:3] + base[1:4])


# --- Python constructs on traced values


def test_python_if_on_a_traced_value():
    @kiln.qjit(autograph=False)
    def f(x):
        if x[0] > 0:
            return x
        return -x

    with pytest.raises(TypeError, match=r"a Python `if`/`while`/`and`/`or`/bool\(\) on a traced value.*kiln\.cond"):
        f(np.ones(3))


def test_int_float_bool_of_a_traced_value():
    with pytest.raises(TypeError, match=r"int\(\) on a traced value"):
        kiln.qjit(lambda x: int(x[0]))(np.ones(3))
    with pytest.raises(TypeError, match=r"float\(\) on a traced value"):
        kiln.qjit(lambda x: float(np.sum(x)))(np.ones(3))
    with pytest.raises(TypeError, match=r"bool\(\) on a traced value"):
        kiln.qjit(lambda x: bool(x[0]))(np.ones(3))


def test_len_of_a_dynamic_dim():
    with pytest.raises(TypeError, match=r"len\(\) of a traced array whose first dim is dynamic.*x\.shape\[0\]"):
        kiln.qjit(lambda x: len(x))(np.ones(3))


def test_iterating_over_a_traced_array():
    @kiln.qjit(autograph=False)
    def f(x):
        total = 0.0
        for v in x:
            total = total + v
        return total

    with pytest.raises(TypeError, match=r"iteration over a traced array with a dynamic first dim.*kiln\.for_loop"):
        f(np.ones(3))


# --- unsupported NumPy functions


@pytest.mark.parametrize("call, name", [
    (lambda x: np.lexsort((x,)), "np.lexsort"),
    (lambda x: np.linalg.tensorinv(x), "np.linalg.tensorinv"),
    (lambda x: np.fft.fft(x), "np.fft.fft"),
    (lambda x: np.sort_complex(x), "np.sort_complex"),
    (lambda x: np.linalg.multi_dot([x, x]), "np.linalg.multi_dot"),
])
def test_unsupported_numpy_function_is_named(call, name):
    with pytest.raises(TypeError, match=re.escape(name) + " is not supported by kiln on traced values"):
        kiln.qjit(call)(np.eye(3))


def test_unsupported_ufunc_method_keyword_is_named():
    # Every ufunc method compiles now (reduceat included); `where=` does not.
    np.testing.assert_array_equal(kiln.qjit(lambda x: np.add.reduceat(x, [0, 1]))(np.ones(3)), [1.0, 2.0])
    with pytest.raises(TypeError, match="where"):
        kiln.qjit(lambda x: np.add.reduce(x, where=x > 0))(np.ones(3))


# --- integer division by zero


@kiln.qjit
def _divisions(x, y):
    return x // y, x % y, np.fmod(x, y)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_integer_division_by_zero_warns_like_numpy(dtype, n):
    """NumPy gives 0 where an integer divisor is 0 and warns once per ufunc
    call ("divide by zero encountered in floor_divide"); so does kiln."""
    rng = np.random.default_rng(n)
    x = rng.integers(-50 if dtype != "uint8" else 0, 50, n).astype(dtype)
    y = rng.integers(0, 4, n).astype(dtype)
    y[n // 2] = 0
    with np.errstate(divide="ignore"):
        want = (x // y, x % y, np.fmod(x, y))
    with pytest.warns(RuntimeWarning) as record:
        got = _divisions(x, y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype
    messages = sorted(str(m.message).split(" (at ")[0] for m in record)
    assert messages == [f"divide by zero encountered in {name}" for name in ("floor_divide", "fmod", "remainder")]


def test_integer_division_without_zero_divisors_does_not_warn():
    x, y = np.arange(-5, 6), np.array([3, -2, 7, 1, -1, 5, 2, 9, -4, 6, 8])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _divisions(x, y)
        got_empty = _divisions(x[:0], y[:0])
    for g, w in zip(got, (x // y, x % y, np.fmod(x, y))):
        np.testing.assert_array_equal(g, w)
    assert all(g.shape == (0,) for g in got_empty)


def test_integer_division_by_a_zero_scalar_warns():
    x = np.arange(6)
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in floor_divide"):
        np.testing.assert_array_equal(kiln.qjit(lambda x, d: x // d)(x, 0), np.zeros(6, int))
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in remainder"):
        np.testing.assert_array_equal(kiln.qjit(lambda x: x % 0)(x), np.zeros(6, int))


@pytest.mark.compiled_only
def test_integer_division_by_zero_warns_once_per_call():
    """A division by zero in every iteration of a loop warns once per call
    of the compiled function (per message), as one NumPy ufunc call does."""
    @kiln.qjit
    def f(x, y):
        acc = np.zeros_like(x)
        for i in range(x.shape[0]):
            acc = acc + x // y
        return acc

    x, y = np.arange(5), np.zeros(5, dtype=np.int64)
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in floor_divide") as record:
        np.testing.assert_array_equal(f(x, y), np.zeros(5, int))
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            f(x, y)


# --- byte order, ndarray subclasses


def test_big_endian_arrays_are_refused_with_the_conversion():
    for dtype, native in ((">f8", "float64"), (">i4", "int32")):
        x = np.arange(3, dtype=dtype)
        untouched_after_failure(add_in_place, (x, np.ones(3, dtype)), TypeError,
                                rf"dtype {re.escape(dtype)} is {native} in non-native byte order.*"
                                rf"x\.astype\('{native}'\)")


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_matrix_and_memmap_arguments_run_as_arrays(tmp_path):
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(add_in_place(m, np.ones((2, 2))), (np.asarray(m)) * 2)
    np.testing.assert_array_equal(m, [[2.0, 3.0], [4.0, 5.0]])  # the write reached the matrix
    mm = np.memmap(tmp_path / "data.bin", dtype=np.float64, mode="w+", shape=(5,))
    mm[:] = np.arange(5.0)
    np.testing.assert_array_equal(add_in_place(mm, np.ones(5)), (np.arange(5.0) + 1) * 2)
    mm.flush()
    np.testing.assert_array_equal(np.fromfile(tmp_path / "data.bin", dtype=np.float64), np.arange(5.0) + 1)


def test_masked_arrays_and_other_subclasses_are_refused():
    """Refused even when a plain array of the same dtype and shape has
    already been called (the fast path once took them as plain arrays)."""
    add_in_place(np.ones(2), np.ones(2))
    add_in_place(np.ones(3), np.ones(3))
    masked = np.ma.array([1.0, 2.0], mask=[0, 1])
    untouched_after_failure(add_in_place, (masked, np.ones(2)), TypeError,
                            r"a masked array \(numpy\.ma\.MaskedArray\) cannot be passed.*would drop the mask")

    class Tagged(np.ndarray):
        pass

    tagged = np.arange(3.0).view(Tagged)
    untouched_after_failure(add_in_place, (tagged, np.ones(3)), TypeError,
                            r"an ndarray subclass \(.*Tagged\) cannot be passed.*np\.asarray\(x\)")


# --- bad pass options


@pytest.mark.compiled_only
@pytest.mark.parametrize("spec, message", [
    ("kiln-version-small-dims{bodies=maybe}", "option 'bodies' expects true or false (or 1 or 0), got 'maybe'"),
    ("kiln-parallelize{min-work=-1}", "option 'min-work' expects an integer >= 0, got '-1'"),
    ("kiln-parallelize{min-work=abc}", "option 'min-work' expects an integer >= 0, got 'abc'"),
    ("kiln-parallelize{nope=1}", "has no option 'nope' (accepted options: min-work)"),
])
def test_bad_pass_options_are_refused(spec, message, tmp_path):
    """By kiln-opt (rc 1 and the message) and by qjit(pipelines=...) (a
    ValueError before anything runs)."""
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f(%x: i64) -> i64 {\n  return %x : i64\n}\n")
    proc = subprocess.run([sys.executable, "-c", "import sys; from kiln.compiler.opt import main; sys.exit(main())",
                           str(source), "-p", spec],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and message in proc.stderr, (proc.returncode, proc.stderr)
    from kiln.compiler.pipeline import DEFAULT_PIPELINE

    pipeline = [(stage, passes + [spec] if stage == "bufferized" else passes) for stage, passes in DEFAULT_PIPELINE]
    with pytest.raises(ValueError, match=re.escape(message)):
        kiln.qjit(lambda x: x + 1, pipelines=pipeline)(np.ones(3))
