"""Stage "jaxpr": the vector-valued draws of a traced generator,
`multinomial` and `dirichlet`, as a base class of `TracedGenerator`
(kiln/numpy/random.py holds the generator and the scalar distributions).

In: NumPy's arguments. Out: `random` equations (runtime/random.c draws one
vector entry per element, by NumPy's algorithm) and the loops that combine
them as NumPy's C code does, so the same seed gives NumPy's numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import KilnTypeError, KilnValueError
from kiln.numpy._base import broadcast_shapes, check, convert, operand, shape_product
from kiln.numpy._bindings import knp, traced
from kiln.numpy.random_args import _all, _size_shape, _static


class VectorDraws:
    """`multinomial` and `dirichlet` of a generator; the subclass gives
    `_draw`, `_what` and `_legacy`."""

    def multinomial(self, n: Any, pvals: Any, size: Any = None) -> Any:
        """NumPy's multinomial: per vector, binomial draws of the trials left
        (runtime/random.c, one element per entry)."""
        what = f"{self._what}.multinomial"
        if _static(n, pvals):
            scratch = np.random.RandomState(0) if self._legacy else np.random.Generator(np.random.PCG64(0))
            scratch.multinomial(n, pvals)  # NumPy's checks and their errors
        p = convert(operand(np.asarray(pvals) if isinstance(pvals, (list, tuple)) else pvals), np.dtype(np.float64))
        trials = convert(operand(n), np.dtype(np.int64))
        if self._legacy and (p.aval.ndim != 1 or trials.aval.ndim != 0):
            raise KilnTypeError(f"{what}: n must be an int and pvals a 1-d sequence")
        if p.aval.ndim == 0:
            raise KilnValueError("pvals must have at least 1 dimension and the last dimension of pvals must be "
                                 "greater than 0.")
        d = p.aval.shape[-1]
        if traced(p):
            check(knp.all(knp.logical_and(knp.greater_equal(p, 0), knp.less_equal(p, 1))), "ValueError",
                  "pvals < 0, pvals > 1 or pvals contains NaNs")
            check(knp.all(knp.less_equal(knp.sum(p[..., :-1], axis=-1), 1.0 + 1e-12)), "ValueError",
                  "sum(pvals[:-1]) > 1.0" if p.aval.ndim == 1 else "sum(pvals[...,:-1]) > 1.0")
        if traced(trials):
            check(_all(knp.greater_equal(trials, 0)), "ValueError", "n < 0")
        batch = broadcast_shapes([trials.aval.shape, p.aval.shape[:-1]], what)
        shape = _size_shape(size)
        if shape is None:
            shape = batch
        elif trials.aval.ndim or p.aval.ndim > 1:
            # NumPy broadcasts n and pvals' rows against `size`, which must be their shape.
            broadcast_shapes([tuple(shape), batch], what)
        out_shape = (*shape, d)
        return self._draw("multinomial", out_shape, np.int64, a=knp.reshape(trials, (*trials.aval.shape, 1)),
                          b=knp.arange(d, dtype=np.int64), p=p, q=d)

    def dirichlet(self, alpha: Any, size: Any = None) -> Any:
        """NumPy's dirichlet: normalized standard gammas of `alpha`, or (the
        Generator, every alpha below 0.1) stick breaking with beta draws."""
        static = _static(alpha)
        if static:
            self._validate_dirichlet(alpha)
        a = convert(operand(np.asarray(alpha) if isinstance(alpha, (list, tuple)) else alpha), np.dtype(np.float64))
        if a.aval.ndim != 1:
            raise KilnValueError(f"{self._what}.dirichlet: alpha must be a 1-D sequence of floats")
        if not static:
            if self._legacy:
                check(knp.all(knp.greater(a, 0)), "ValueError", "alpha <= 0")
            else:
                check(knp.logical_not(knp.any(knp.less(a, 0))), "ValueError", "alpha < 0")
        k = a.aval.shape[0]
        shape = _size_shape(size) or ()
        rows = shape_product(shape)
        if self._legacy:
            values = self._normalized_gammas(a, rows, "legacy_standard_gamma")
        elif static:
            values_np = np.asarray(alpha, np.float64)
            small = values_np.size > 0 and values_np.max() < 0.1
            values = self._stick_breaking(a, rows, values_np) if small else self._normalized_gammas(
                a, rows, "standard_gamma")
        else:
            # Which algorithm is known when the code runs: each draws for its share of
            # the rows (all or none), so only the chosen one advances the state.
            small = knp.logical_and(k > 0, knp.max(knp.concatenate([a, knp.zeros(1)])) < 0.1).astype(np.int64)
            values = knp.concatenate([self._stick_breaking(a, rows * small, None),
                                      self._normalized_gammas(a, rows * (1 - small), "standard_gamma")])
        return knp.reshape(values, (*shape, k))

    def _validate_dirichlet(self, alpha: Any) -> None:
        scratch = np.random.RandomState(0) if self._legacy else np.random.Generator(np.random.PCG64(0))
        scratch.dirichlet(alpha)

    def _normalized_gammas(self, alpha: Any, rows: Any, method: str) -> Any:
        """`rows` vectors of standard gammas of `alpha`, each divided by its sum
        (summed left to right, then multiplied by the inverse, as NumPy)."""
        k = alpha.aval.shape[0]
        gammas = self._draw(method, (rows, k), np.float64, p=alpha)

        @for_loop(0, k, 1)
        def accumulate(j, acc):
            return acc + gammas[:, j]

        inverse = 1.0 / accumulate(knp.zeros(rows))
        return gammas * knp.reshape(inverse, (-1, 1))

    def _stick_breaking(self, alpha: Any, rows: Any, alpha_np: Any) -> Any:
        """`rows` vectors by NumPy's small-alpha Dirichlet: entry j is the stick
        left times beta(alpha_j, sum(alpha[j+1:])), the last entry the stick
        left; the draws stop after the last positive alpha."""
        k = alpha.aval.shape[0]
        # Right-to-left running sums, added as NumPy's loop adds them.
        @for_loop(0, k, 1)
        def right_sums(i, carry):
            csum, sums = carry
            csum = csum + alpha[k - 1 - i]
            sums[k - 1 - i] = csum
            return csum, sums

        _, csum = right_sums((knp.zeros(()), knp.zeros(k)))
        positions = knp.arange(k, dtype=np.int64)
        last_positive = knp.max(knp.concatenate([knp.where(knp.greater(alpha, 0), positions, -1),
                                                 knp.full(1, -1, dtype=np.int64)]))
        any_mass = knp.greater(last_positive, -1)
        if alpha_np is not None:
            positive = np.nonzero(alpha_np > 0)[0]
            draws = min(int(positive[-1]) + 1, k - 1) if positive.size else 0
        else:
            draws = knp.where(any_mass, knp.minimum(last_positive + 1, k - 1), 0)
        betas = self._draw("beta", (rows, draws), np.float64, p=alpha[:draws],
                           q=knp.concatenate([csum, knp.zeros(1)])[1:draws + 1])
        values = knp.zeros((rows, k))

        @for_loop(0, draws, 1)
        def break_stick(j, acc):
            v = betas[:, j]
            values[:, j] = acc * v
            return acc * (1.0 - v)

        left = knp.reshape(knp.where(any_mass, break_stick(knp.ones(rows)), 0.0), (-1, 1))
        return knp.where(knp.equal(positions, k - 1), left, values)
