"""Autograph's loops with the defaults of issue 14: static ranges compile to
one loop, carried shapes are inferred (unified with a run-time check or
resized), traced rows unpack, and the loop target survives the loop, each
compared with NumPy / Python at sizes 0, 1, odd and large."""

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 300)


def _count(jaxpr_text: str, name: str) -> int:
    return jaxpr_text.count(f"{name}[")


# --------------------------------------------------------------------------
# static ranges: one compiled loop, whatever the trip count


def test_static_range_with_traced_break_is_one_loop_whatever_the_trip_count():
    def converge(x, tol):
        for it in range(1000):
            x = 0.5 * x + 0.25
            if np.max(np.abs(x - 0.5)) < tol:
                break
        return x, it

    def converge_long(x, tol):
        for it in range(100000):
            x = 0.5 * x + 0.25
            if np.max(np.abs(x - 0.5)) < tol:
                break
        return x, it

    f, g = kiln.qjit(converge), kiln.qjit(converge_long)
    for n in (1, 7, 300):
        x = np.linspace(-3.0, 3.0, n)
        for tol in (1e-3, 1e-9, 1e-300):
            out, it = f(x, tol)
            expected, expected_it = converge(x, tol)
            np.testing.assert_allclose(out, expected)
            assert it == expected_it
    g(np.ones(3), 1e-3)
    # The same jaxpr for 1000 and 100000 iterations: nothing is unrolled.
    assert _count(str(f.jaxpr), "while_loop") == 1
    assert len(str(f.jaxpr).splitlines()) == len(str(g.jaxpr).splitlines())


def test_static_range_without_break_is_a_for_loop():
    def scale(x):
        acc = 0.0
        for k in range(50):
            x = x * 0.9 + k
            acc = acc + x.sum()
        return x, acc

    f = kiln.qjit(scale)
    for n in SIZES:
        x = np.random.rand(n)
        out, acc = f(x)
        expected, expected_acc = scale(x)
        np.testing.assert_allclose(out, expected)
        np.testing.assert_allclose(acc, expected_acc)
    assert _count(str(f.jaxpr), "for_loop") == 1


def test_r3_loop_index_after_a_break_is_where_it_broke():
    def first_above(x):
        for i in range(10):
            if x[i] > 5:
                break
        return i

    f = kiln.qjit(first_above)
    for x in (np.arange(10.0), np.zeros(10), np.full(10, 9.0), np.arange(10.0)[::-1].copy()):
        assert f(x) == first_above(x)


def test_bodies_that_need_python_values_per_iteration_are_unrolled():
    def per_axis(x):
        total = 1
        parts = []
        for axis in range(x.ndim):
            total = total * x.shape[axis]   # a tuple indexed by the loop index
            parts.append(x.sum(axis=axis).sum())
        return total, parts[0] + parts[1]

    f = kiln.qjit(per_axis)
    for shape in ((0, 3), (1, 1), (5, 7)):
        x = np.random.rand(*shape)
        total, s = f(x)
        expected_total, expected_s = per_axis(x)
        assert total == expected_total
        np.testing.assert_allclose(s, expected_s)


def test_unrolled_loop_with_a_traced_break_stops_at_run_time():
    # `steps.append` keeps the loop in Python; the traced break must still
    # skip the iterations after it (it used to keep updating x).
    def halve(x, tol):
        steps = []
        for it in range(20):
            x = 0.5 * x
            steps.append(it)
            if np.max(np.abs(x)) < tol:
                break
        return x, it, len(steps)

    f = kiln.qjit(halve)
    for n in (1, 7, 300):
        x = np.ones(n)
        out, it, count = f(x, 1e-3)
        expected, expected_it, _ = halve(x, 1e-3)
        np.testing.assert_allclose(out, expected)
        assert it == expected_it and count == 20


def test_python_values_stay_python_in_static_code():
    def f(x, mode):
        ops = []
        for k in range(3):
            ops.append(k)
        if mode == "double":
            return x * 2.0
        return x + len(ops)

    g = kiln.qjit(f, static_argnums=(1,))
    x = np.random.rand(5)
    np.testing.assert_allclose(g(x, "double"), x * 2.0)
    np.testing.assert_allclose(g(x, "add"), x + 3)
    assert "for_loop" not in str(g.jaxpr) and "cond" not in str(g.jaxpr)


# --------------------------------------------------------------------------
# carried shapes: kept, unified at run time, or resized


def test_array_growth_is_inferred():
    def grow(x, n):
        for i in range(n):
            x = np.concatenate((x, x[-1:] + 1.0))
        return x

    f = kiln.qjit(grow)
    for size in (1, 2, 9):
        for n in (0, 1, 5):
            x = np.arange(float(size))
            np.testing.assert_allclose(f(x, n), grow(x, n))


def test_shrinking_while_loop_is_inferred():
    def halve_until_small(x):
        while x.shape[0] > 3:
            x = x[::2] + x[1::2][: x[::2].shape[0]].sum()
        return x

    f = kiln.qjit(halve_until_small)
    for n in (0, 1, 3, 8, 301):
        x = np.random.rand(n)
        np.testing.assert_allclose(f(x), halve_until_small(x))


def test_body_that_keeps_its_shapes_needs_no_option():
    # R16: a body whose result has the carried shape, computed anew.
    def smooth(x, steps):
        for _ in range(steps):
            y = np.empty_like(x)
            y[:] = 0.5 * x
            x = y
        return x

    f = kiln.qjit(smooth)
    for n in SIZES:
        x = np.random.rand(n)
        np.testing.assert_allclose(f(x, 3), smooth(x, 3))


def test_square_matrix_power_iteration_unifies_dims_at_run_time():
    def power(A, x, n):
        for i in range(n):
            x = A @ x
        return x

    f = kiln.qjit(power)
    for size in SIZES:
        A = np.random.rand(size, size) / max(size, 1)
        x = np.random.rand(size)
        for n in (0, 1, 5):
            np.testing.assert_allclose(f(A, x, n), power(A, x, n), rtol=1e-12)
    assert f.num_compiles <= 2  # size-1 dims may be specialized once


def test_non_square_matrix_power_iteration_raises_like_numpy():
    def power(A, x, n):
        for i in range(n):
            x = A @ x
        return x

    A, x = np.random.rand(3, 4), np.random.rand(4)
    with pytest.raises(ValueError):
        power(A, x, 2)
    with pytest.raises(ValueError, match="carried array 0 enters the loop with size 4 on axis 0"):
        kiln.qjit(power)(A, x, 2)


def test_static_range_power_iteration():
    def power(A, x):
        for i in range(6):
            x = A @ x
            x = x / np.sqrt((x * x).sum())
        return x

    f = kiln.qjit(power)
    for size in (1, 7, 300):
        A = np.random.rand(size, size)
        x = np.ones(size)
        np.testing.assert_allclose(f(A, x), power(A, x), rtol=1e-10)


# --------------------------------------------------------------------------
# unpacking a traced row, the loop target after the loop


def test_unpacking_a_traced_row():
    def energy(P):
        s = 0.0
        for t in range(P.shape[0]):
            a, b, c = P[t]
            s = s + a * b - c
        return s

    f = kiln.qjit(energy)
    for n in SIZES:
        P = np.random.rand(n, 3)
        np.testing.assert_allclose(f(P), energy(P))
    with pytest.raises(ValueError, match="unpack"):
        f(np.random.rand(4, 5))


def test_nested_unpacking_of_a_traced_array():
    """graphics.fill_triangle in test/corpus: `(x0, y0), (x1, y1), (x2, y2) = tri`
    unpacks the rows, then each row, each with its run-time check."""

    def twice_area(tri, pair):
        (x0, y0), (x1, y1), (x2, y2) = tri
        (a, b), c = (pair, x0)
        return (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0) + a * b * c

    f = kiln.qjit(twice_area)
    for scale in (0.5, 3.0):
        tri, pair = np.random.rand(3, 2) * scale, np.random.rand(2)
        np.testing.assert_allclose(f(tri, pair), twice_area(tri, pair))
    with pytest.raises(ValueError, match="unpack"):
        f(np.random.rand(3, 3), np.random.rand(2))
    with pytest.raises(ValueError, match="unpack"):
        f(np.random.rand(3, 2), np.random.rand(4))


def test_a_tuple_is_carried_through_loops_and_branches():
    """bioinformatics.smith_waterman_score in test/corpus: `best_pos = (i, j)`
    in an `if` in a loop carries a tuple of traced ints."""

    def argmax_2d(H):
        best, best_pos = -1.0, (0, 0)
        for i in range(H.shape[0]):
            for j in range(H.shape[1]):
                if H[i, j] > best:
                    best = H[i, j]
                    best_pos = (i, j)
        k = 0
        pair = (0.0, (1, 2.0))
        while k < H.shape[0]:
            pair = (pair[0] + H[k, 0], (pair[1][0] + 1, pair[1][1]))
            k += 1
        return best, best_pos, pair

    f = kiln.qjit(argmax_2d)
    for n in SIZES:
        H = np.random.rand(n, 3)
        got, want = f(H), argmax_2d(H)
        assert got[1] == want[1] and got[2][1] == want[2][1]
        np.testing.assert_allclose([got[0], got[2][0]], [want[0], want[2][0]])


def test_unpacking_rows_of_a_for_loop_over_an_array():
    def spread(P):
        s = 0.0
        for x, y in P:
            s = s + (x - y) ** 2
        return s

    f = kiln.qjit(spread)
    for n in SIZES:
        P = np.random.rand(n, 2)
        np.testing.assert_allclose(f(P), spread(P))


def test_loop_target_used_after_the_loop():
    def last_index(x, n):
        for it in range(n):
            x = x + 1.0
            if x[0] > 3.5:
                break
        return x, it

    f = kiln.qjit(last_index)
    for n in (1, 2, 4, 9):
        out, it = f(np.zeros(3), n)
        expected, expected_it = last_index(np.zeros(3), n)
        np.testing.assert_allclose(out, expected)
        assert it == expected_it
    with pytest.raises(UnboundLocalError):
        last_index(np.zeros(3), 0)
    with pytest.raises(UnboundLocalError, match="'it'"):
        f(np.zeros(3), 0)


def test_row_loop_target_used_after_the_loop():
    def last_row(X):
        for row in X:
            pass
        return row

    f = kiln.qjit(last_row)
    for n in (1, 7, 300):
        X = np.random.rand(n, 4)
        np.testing.assert_allclose(f(X), last_row(X))
    with pytest.raises(UnboundLocalError):
        f(np.random.rand(0, 4))


# --------------------------------------------------------------------------
# the default and the opt-out


def test_autograph_is_on_by_default_and_can_be_turned_off():
    def sign_sum(x):
        if x.sum() > 0:
            return x
        return -x

    x = np.random.rand(5) - 0.5
    np.testing.assert_allclose(kiln.qjit(sign_sum)(x), sign_sum(x))
    with pytest.raises(kiln.KilnTypeError, match="kiln.cond"):
        kiln.qjit(sign_sum, autograph=False)(x)


def test_functions_without_source_compile_as_plain_python():
    namespace = {}
    exec("def f(x):\n    return x * 2.0\n", namespace)
    x = np.random.rand(3)
    np.testing.assert_allclose(kiln.qjit(namespace["f"])(x), x * 2.0)
    np.testing.assert_allclose(kiln.qjit(lambda v: v + 1.0)(x), x + 1.0)


# --------------------------------------------------------------------------
# deep loop nests: liveness is linear in the depth (scattering_self_energies)


def _nest_source(depth: int) -> str:
    lines = ["def f(a, n, m):"]
    for d in range(depth):
        lines.append("    " * (d + 1) + f"for i{d} in range(n):")
    inner = "    " * (depth + 1)
    lines += [inner + "if i0 > m:", inner + "    break",
              inner + "if i1 > 1:", inner + "    a[i0] += a[i1] * 2", inner + "    continue",
              inner + "while m > 100:", inner + "    m = m - 1",
              inner + f"a[i{depth - 1}] -= m"]
    lines.append("    return a")
    return "\n".join(lines)


def _annotations(fn) -> list:
    import ast

    found = []
    for node in ast.walk(fn):
        for name in ("kiln_live_out", "kiln_live_head", "kiln_exposed"):
            if hasattr(node, name):
                found.append((type(node).__name__, node.lineno, name, sorted(getattr(node, name))))
    return found


def test_liveness_of_nested_loops_analyses_each_loop_a_bounded_number_of_times(monkeypatch):
    import ast

    import kiln.autograph.analysis as analysis

    class Unmemoized(analysis.Liveness):
        """The plain fixpoint (exponential in the depth), as the reference."""

        def head(self, s, live):
            return self._fixpoint(s, live)

        def loaded(self, node):
            return analysis.loaded_names(node)

    for depth in (2, 3, 5):
        reference, memoized = ast.parse(_nest_source(depth)).body[0], ast.parse(_nest_source(depth)).body[0]
        Unmemoized(annotate=True).block(reference.body, set())
        analysis.Liveness(annotate=True).block(memoized.body, set())
        assert _annotations(memoized) == _annotations(reference)

    calls = []
    original = analysis.Liveness._fixpoint
    monkeypatch.setattr(analysis.Liveness, "_fixpoint",
                        lambda self, s, live: calls.append(s) or original(self, s, live))
    depth = 14
    analysis.Liveness(annotate=True).block(ast.parse(_nest_source(depth)).body[0].body, set())
    # The plain fixpoint analysed the innermost body 3**depth times.
    assert len(calls) <= 4 * (depth + 1)


def test_eight_nested_loops_match_numpy():
    def nest(a, w):
        out = np.zeros(a.shape[0])
        for k in range(a.shape[0]):
            for e in range(w.shape[0]):
                for q in range(w.shape[1]):
                    for r in range(2):
                        for i in range(2):
                            for j in range(2):
                                for s in range(2):
                                    for t in range(2):
                                        if e - q >= 0:
                                            out[k] += a[k] * w[e, q] * (r + i - j + s * t)
        return out

    f = kiln.qjit(nest)
    for n in SIZES[:3]:
        a, w = np.linspace(-1.0, 1.0, n), np.arange(12.0).reshape(3, 4)
        np.testing.assert_allclose(f(a, w), nest(a, w))
    assert f.num_compiles <= 2  # size 1 is its own signature
