"""kiln.debug_print and print under autograph: traced values printed when the
code runs, as NumPy prints them, in program order (each loop iteration,
only the branch taken), compiled and through the reference interpreter
(conftest's `execution` parameter)."""

import contextlib
import ctypes
import io
import shutil

import numpy as np
import pytest

import kiln
from kiln.errors import KilnTypeError, KilnValueError

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8, np.uint64, np.bool_,
          np.complex64, np.complex128]


def sample(shape, dtype):
    """Values of `dtype` with negatives, fractions and extremes where the dtype has them."""
    size = int(np.prod(shape))
    base = np.arange(size, dtype=np.float64) * 1.25 - 2.5
    if np.dtype(dtype).kind == "b":
        return (np.arange(size) % 3 == 0).reshape(shape)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        values = (np.arange(size) * 37 - 11).astype(np.int64)
        values = np.clip(values, info.min, info.max).astype(dtype)
        if size:
            values[-1] = info.max
        return values.reshape(shape)
    if np.dtype(dtype).kind == "c":
        return (base + 1j * base[::-1]).astype(dtype).reshape(shape)
    return base.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (2, 3), (3, 0, 2), (1, 4)])
def test_arrays_print_as_numpy_prints_them(capsys, dtype, shape):
    @kiln.qjit
    def f(x):
        kiln.debug_print("x = {}", x)
        return x + x

    x = sample(shape, dtype)
    np.testing.assert_array_equal(f(x), x + x)
    assert capsys.readouterr().out == f"x = {x}\n"


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scalars_print_as_numpy_scalars(capsys, dtype):
    @kiln.qjit
    def f(x):
        kiln.debug_print("{} {}", x, x.sum())
        return x

    x = sample((5,), dtype)
    f(x[3])
    assert capsys.readouterr().out == f"{x[3]} {x[3].sum()}\n"


def test_one_binary_serves_every_size(capsys):
    @kiln.qjit
    def f(x):
        kiln.debug_print("n = {}, x = {}", x.shape[0], x)
        return x

    for n in (0, 2, 5, 1001):
        f(np.arange(n, dtype=np.int32))
    assert f.num_compiles <= 2  # size 1 may be specialized
    assert capsys.readouterr().out == "".join(f"n = {n}, x = {np.arange(n, dtype=np.int32)}\n"
                                              for n in (0, 2, 5, 1001))


def test_large_arrays_summarize_like_numpy(capsys):
    @kiln.qjit
    def f(x):
        kiln.debug_print("{}", x * 2.0)
        return x

    x = np.linspace(0.0, 1.0, 2001).reshape(3, 667)
    f(x)
    assert capsys.readouterr().out == f"{x * 2.0}\n"


def test_prints_come_in_order_with_python_prints(capsys):
    @kiln.qjit
    def f(x):
        kiln.debug_print("first {}", x[0])
        y = x * 3
        kiln.debug_print("second {}", y[0])
        return y

    print("before")
    f(np.ones(3))
    print("between")
    f(np.full(3, 2.0))
    print("after")
    assert capsys.readouterr().out == ("before\nfirst 1.0\nsecond 3.0\nbetween\nfirst 2.0\nsecond 6.0\n"
                                       "after\n")


def test_redirect_stdout_captures_the_prints(capsys):
    @kiln.qjit
    def f(x):
        kiln.debug_print("sum {:.1f}", x.sum())
        return x

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        f(np.arange(4.0))
    assert buffer.getvalue() == "sum 6.0\n"
    assert capsys.readouterr().out == ""


def test_each_iteration_of_a_loop_prints(capsys):
    @kiln.qjit
    def f(x, n: int):
        @kiln.for_loop(0, n, 1)
        def loop(i, acc):
            kiln.debug_print("i={} acc={}", i, acc)
            return acc + x

        return loop(np.zeros_like(x))

    x = np.array([1.0, 2.0, 3.0])
    f(x, 3)
    assert capsys.readouterr().out == "".join(f"i={i} acc={x * i}\n" for i in range(3))
    f(x, 0)
    assert capsys.readouterr().out == ""


def test_while_loop_and_cond_print_what_runs(capsys):
    @kiln.qjit
    def f(x):
        @kiln.while_loop(lambda v: v.sum() < 20.0)
        def grow(v):
            kiln.debug_print("v = {}", v)
            return v * 2.0

        y = grow(x)

        @kiln.cond(y[0] > 10.0)
        def branch():
            kiln.debug_print("big {}", y[0])
            return y

        @branch.otherwise
        def branch():
            kiln.debug_print("small {}", y[0])
            return -y

        return branch()

    x = np.array([1.0, 2.0])
    f(x)
    assert capsys.readouterr().out == "v = [1. 2.]\nv = [2. 4.]\nv = [4. 8.]\nsmall 8.0\n"
    f(np.array([11.0, 10.0]))
    assert capsys.readouterr().out == "big 11.0\n"


def test_prints_see_writes_in_place(capsys):
    @kiln.qjit(autograph=True)
    def f(x, n: int):
        for i in range(n):
            x[i % x.shape[0]] += 1.0
            kiln.debug_print("{}: {}", i, x)
        return x

    x = np.zeros(3)
    f(x, 4)
    assert capsys.readouterr().out == "0: [1. 0. 0.]\n1: [1. 1. 0.]\n2: [1. 1. 1.]\n3: [2. 1. 1.]\n"
    np.testing.assert_array_equal(x, [2.0, 1.0, 1.0])


def test_format_fields(capsys):
    @kiln.qjit
    def f(x, k):
        kiln.debug_print("{0} {0!r} {1:>6.2f} {k:d} {{braces}} {label} {shape}", x, x.sum(), k=k, label="L",
                         shape=x.shape)
        return x

    x = np.array([1, 2], dtype=np.int16)
    f(x, np.int32(7))
    assert capsys.readouterr().out == f"{x} {x!r} {x.sum():>6.2f} 7 {{braces}} L (2,)\n"


def test_dynamic_shape_prints_its_run_time_dims(capsys):
    @kiln.qjit
    def f(x):
        kiln.debug_print("{}", x.shape)
        return x

    f(np.zeros((4, 3)))
    f(np.zeros((0, 5)))
    assert capsys.readouterr().out == "(4, 3)\n(0, 5)\n"


def test_a_print_without_traced_values_prints_each_call(capsys):
    @kiln.qjit
    def f(x):
        kiln.debug_print("called with {} dims", 1)
        return x

    f(np.zeros(2))
    f(np.zeros(3))
    assert capsys.readouterr().out == "called with 1 dims\ncalled with 1 dims\n"


def test_outside_a_trace_it_prints_at_once(capsys):
    kiln.debug_print("x = {}, {:.2f}", np.arange(3), 2.0)
    assert capsys.readouterr().out == "x = [0 1 2], 2.00\n"


@pytest.mark.parametrize("call, error, match", [
    (lambda x: kiln.debug_print("{} {}", x), KilnValueError, r"field \{1\} has no argument"),
    (lambda x: kiln.debug_print("{} {0}", x), KilnValueError, "automatic field numbering to manual"),
    (lambda x: kiln.debug_print("{0} {}", x), KilnValueError, "manual field numbering to automatic"),
    (lambda x: kiln.debug_print("{0.real}", x), KilnTypeError, "attribute or item of a traced value"),
    (lambda x: kiln.debug_print("{:d}", x.sum()), KilnValueError, "format spec for the value's dtype"),
    (lambda x: kiln.debug_print("{:{w}}", x, w=3), KilnValueError, "nested fields"),
    (lambda x: kiln.debug_print(x), KilnTypeError, "the format must be a str"),
])
def test_mistakes_are_reported_when_tracing(call, error, match):
    @kiln.qjit
    def f(x):
        call(x)
        return x

    with pytest.raises(error, match=match):
        f(np.arange(3.0))


def test_autograph_print_of_traced_values_runs_with_the_code(capsys):
    @kiln.qjit(autograph=True)
    def f(x, n: int):
        print("tracing f")
        total = 0.0
        for i in range(n):
            total = total + x[i]
            print("i", i, "total", total, sep=": ")
        if total > 3.0:
            print("large", total, x.shape)
        else:
            print("small", total, end="!\n")
        return total

    x = np.array([1.0, 2.0, 3.0])
    f(x, 3)
    first = capsys.readouterr().out
    f(x, 1)
    second = capsys.readouterr().out
    assert first == "tracing f\ni: 0: total: 1.0\ni: 1: total: 3.0\ni: 2: total: 6.0\nlarge 6.0 (3,)\n"
    assert second == "i: 0: total: 1.0\nsmall 1.0!\n"


@pytest.mark.parametrize("kwargs, match", [({"end": ""}, "end the line with a newline"),
                                           ({"file": io.StringIO()}, "to sys.stdout only")])
def test_autograph_print_refuses_what_it_cannot_do_at_run_time(kwargs, match):
    @kiln.qjit(autograph=True)
    def f(x):
        print(x, **kwargs)
        return x

    with pytest.raises(KilnTypeError, match=match):
        f(np.arange(3.0))


@pytest.mark.compiled_only
def test_plain_c_printing_without_the_python_hook(tmp_path, capfd):
    """A library called from C (no Python hook) prints the record itself."""
    from kiln.runtime import toolchain

    copy = tmp_path / "support_copy.so"  # a fresh copy: its hook was never installed
    shutil.copyfile(toolchain.support_library(), copy)
    lib = ctypes.CDLL(str(copy))
    lib.kiln_print_word.argtypes = [ctypes.c_int64]
    words = [1, 3, *np.array([1.5, -2.0, 0.25]).view(np.int64).tolist(), 0, 255, 2, 1, 2, 1, 0]
    lib.kiln_print_begin()
    for w in words:
        lib.kiln_print_word(w)
    lib.kiln_print_emit(b"float64 uint8 bool\nx = {0}, n = {1}, b = {2} {{}}")
    assert capfd.readouterr().out == "x = [1.5 -2 0.25], n = 255, b = [[True False]] {}\n"
