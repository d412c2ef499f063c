"""Stage "jaxpr": random numbers in traced code, drawn when the compiled code runs.

In: `np.random.default_rng(seed)` and Generators passed in (PCG64); the
generator object the legacy functions use too (kiln/numpy/random_legacy.py).
Out: `random` equations whose state operand is the generator's state words,
a traced int64 array written back after each draw, so the state is a value
threaded through the program (an argument's words go back to the caller's
Generator; the global state is an implicit argument, `trace_entry.py`).
"""

from __future__ import annotations

import operator
import sys
from typing import Any

import numpy as np

from kiln.control_flow import for_loop, while_loop
from kiln.core import KilnTypeError, KilnValueError
from kiln.numpy._base import (
    broadcast_shapes,
    broadcast_to,
    check,
    convert,
    materialize,
    operand,
    shape_product,
    split_shape,
)
from kiln.numpy._bindings import knp, traced
from kiln.numpy.random_args import _all, _ndim, _scalar, _size_shape, _static, _static_scalars
from kiln.numpy.random_vectors import VectorDraws
from kiln.primitives.random import random_p
from kiln.random_state import PCG64_WORDS, StateWords, generator_words, set_generator_words
from kiln.tree import register_pytree_class
from kiln.tracing import Tracer, bind

_INTEGER_METHODS = {8: "integers64", 4: "integers32", 2: "integers16", 1: "integers8"}


class TracedGenerator(VectorDraws):
    """What traced code sees for a NumPy Generator (PCG64) or RandomState
    (MT19937): its state is traced int64 words, read by each draw and
    overwritten with the advanced state."""

    def __init__(self, words: Any, bit_generator: str, legacy: bool):
        self._words = words  # a traced int64[K] array, written by each draw
        self._bit_generator = bit_generator
        self._legacy = legacy
        self._what = "np.random" if legacy else "Generator"

    def __getattr__(self, name: str) -> Any:
        """A NumPy method kiln does not compile: refused with the user's line."""
        if name.startswith("_"):
            raise AttributeError(name)
        caller = sys._getframe(1)
        raise KilnTypeError(
            f"{caller.f_code.co_filename}:{caller.f_lineno}: {self._what}.{name} is not supported inside a compiled "
            f"function; kiln compiles {', '.join(_SUPPORTED_METHODS)} (see docs/numpy.md, 'Random numbers'). Draw "
            "these numbers outside and pass them in as an argument")

    # --- the state
    def _read(self) -> Any:
        return self._words

    def _write(self, new: Any) -> None:
        self._words[...] = new

    def _draw(self, method: str, size: Any, dtype: Any, a: Any = 0, b: Any = 0, p: Any = 0.0, q: Any = 0.0,
              r: Any = 0.0) -> Any:
        """`size` values of `method` (a 0-d array when `size` is None), advancing the state."""
        shape = _size_shape(size)
        if shape is not None:
            static, dyn = split_shape(shape)
            dims = iter(dyn)
            shape = tuple(d if d is not None else next(dims) for d in static)
        ints = [convert(operand(v), np.dtype(np.int64)) for v in (a, b)]
        floats = [convert(operand(v), np.dtype(np.float64)) for v in (p, q, r)]
        params = ints + floats
        if any(_ndim(v) for v in params):
            # Array parameters: NumPy draws element by element of their broadcast
            # (against `size`), in C order; each becomes one value per draw.
            if shape is None:
                shape = broadcast_shapes([v.aval.shape for v in params if _ndim(v)], f"{self._what} parameters")
        count = 1 if shape is None else shape_product(shape)
        if any(_ndim(v) for v in params):
            params = [knp.reshape(materialize(broadcast_to(v, shape, f"{self._what} parameters")), (count,))
                      if _ndim(v) else v for v in params]
        static, dyn = split_shape((count,))
        ints, floats = params[:2], params[2:]
        new, values = bind(random_p, self._read(), *ints, *floats, *dyn, method=method,
                           bit_generator=self._bit_generator, dtype=np.dtype(dtype), shape=static)
        self._write(new)
        return knp.reshape(values, () if shape is None else shape)

    def _validate(self, name: str, *args: Any, **kwargs: Any) -> None:
        """NumPy's own checks of static parameters (and their error), on a scratch generator."""
        scratch = np.random.RandomState(0) if self._legacy else np.random.Generator(np.random.PCG64(0))
        size = None if any(np.ndim(a) for a in args) else 1
        getattr(scratch, name)(*args, size=size, **kwargs)

    def _float(self, x: Any, name: str, method: str) -> Any:
        return _scalar(x, np.float64, name, f"{self._what}.{method}")

    # --- uniform floats
    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        dtype = np.dtype(dtype)
        if out is not None:
            raise KilnTypeError(f"{self._what}.random(out=...) is not supported by kiln; assign the result instead")
        if dtype not in (np.float64, np.float32) or self._legacy and dtype != np.float64:
            raise KilnTypeError(f"{self._what}.random: dtype must be float64 or float32, got {dtype}")
        return self._draw("random_f32" if dtype == np.float32 else "random", size, dtype)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        if _static(low, high):
            self._validate("uniform", low, high)
            # NumPy's range, computed in double as its C code does.
            low = np.asarray(low, np.float64)
            span = np.asarray(high, np.float64) - low
        else:
            low, high = self._float(low, "low", "uniform"), self._float(high, "high", "uniform")
            span = knp.subtract(high, low)
            check(_all(knp.isfinite(span)), "OverflowError", "Range exceeds valid bounds" if self._legacy
                  else "high - low range exceeds valid bounds")
        return self._draw("uniform", size, np.float64, p=low, q=span)

    # --- normal and exponential
    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        dtype = np.dtype(dtype)
        if out is not None:
            raise KilnTypeError(f"{self._what}.standard_normal(out=...) is not supported by kiln; assign the result")
        if self._legacy:
            return self._draw("legacy_gauss", size, np.float64)
        if dtype not in (np.float64, np.float32):
            raise KilnTypeError(f"Generator.standard_normal: dtype must be float64 or float32, got {dtype}")
        return self._draw("standard_normal_f32" if dtype == np.float32 else "standard_normal", size, dtype)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        if _static(loc, scale):
            self._validate("normal", loc, scale)
        elif traced(scale):
            check(_all(knp.greater_equal(scale, 0)), "ValueError", "scale < 0")
        loc, scale = self._float(loc, "loc", "normal"), self._float(scale, "scale", "normal")
        return self._draw("legacy_normal" if self._legacy else "normal", size, np.float64, p=loc, q=scale)

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, method: str = "zig",
                             out: Any = None) -> Any:
        dtype = np.dtype(dtype)
        if self._legacy:
            return self._draw("legacy_standard_exponential", size, np.float64)
        if method not in ("zig", "inv"):
            raise KilnValueError(f"Generator.standard_exponential: method must be 'zig' or 'inv', got {method!r}")
        name = "standard_exponential" + ("_inv" if method == "inv" else "")
        return self._draw(name + ("_f32" if dtype == np.float32 else ""), size, dtype)

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        if _static(scale):
            self._validate("exponential", scale)
        else:
            check(_all(knp.greater_equal(scale, 0)), "ValueError", "scale < 0")
        scale = self._float(scale, "scale", "exponential")
        return self._draw("legacy_exponential" if self._legacy else "exponential", size, np.float64, p=scale)

    # --- integers
    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        if high is None:
            low, high = 0, low
        return self._bounded("integers", low, high, size, np.dtype(dtype), endpoint)

    def _bounded(self, name: str, low: Any, high: Any, size: Any, dtype: np.dtype, endpoint: bool) -> Any:
        what = f"{self._what}.{name}"
        if dtype.kind not in "iub":
            raise KilnTypeError(f"{what}: dtype must be an integer or bool dtype, got {dtype}")
        if _static_scalars(low, high):
            if self._legacy:
                self._validate("randint", low, high, dtype=dtype)
            else:
                self._validate("integers", low, high, dtype=dtype, endpoint=endpoint)
            low, high = operator.index(low), operator.index(high)
            last = high if endpoint else high - 1
            # NumPy's offset and inclusive range, as int64 bits (uint64 values wrap).
            off, span = _bits(low), _bits(last - low)
        else:
            if _static(low, high):
                (self._validate("randint", low, high, dtype=dtype) if self._legacy else
                 self._validate("integers", low, high, dtype=dtype, endpoint=endpoint))
            low = _scalar(low, np.int64, "low", what)
            last = knp.subtract(_scalar(high, np.int64, "high", what), 0 if endpoint else 1)
            info = np.iinfo(dtype) if dtype.kind != "b" else None
            lowest, highest = (0, 1) if info is None else (info.min, info.max)
            if lowest > np.iinfo(np.int64).min:
                check(_all(knp.greater_equal(low, lowest)), "ValueError", f"low is out of bounds for {dtype}")
            if highest < np.iinfo(np.int64).max:
                check(_all(knp.less_equal(last, highest)), "ValueError", f"high is out of bounds for {dtype}")
            check(_all(knp.less_equal(low, last)), "ValueError", "low > high" if endpoint else "low >= high")
            off, span = low, knp.subtract(last, low)
        if dtype.kind == "b":
            method = "integers_bool"
        elif self._legacy:
            method = "legacy_randint64" if dtype.itemsize == 8 else "legacy_randint32"
            if dtype.itemsize < 4:
                raise KilnTypeError(f"{what}: kiln's legacy randint draws 32- and 64-bit integers; use "
                                    "dtype=np.int32 or np.int64 and convert")
        else:
            method = _INTEGER_METHODS[dtype.itemsize]
        values = self._draw(method, size, np.int64, a=off, b=span)
        return knp.astype(values, dtype)

    # --- the other distributions (NumPy's C code, one call per value)
    def _distribution(self, method: str, params: dict, size: Any, ints: tuple = ()) -> Any:
        names = list(params)
        values = [self._float(v, n, method) if n not in ints else _scalar(v, np.int64, n, f"{self._what}.{method}")
                  for n, v in params.items()]
        if all(_static(v) for v in params.values()):
            self._validate(method, *params.values())
        floats = [v for n, v in zip(names, values) if n not in ints]
        int_args = [v for n, v in zip(names, values) if n in ints]
        result = np.int64 if method in _INT_VALUED else np.float64
        int_args += [0] * (2 - len(int_args))
        if self._legacy and method in _LEGACY_OWN:
            # RandomState's own algorithm (NumPy keeps the legacy stream); the others are shared.
            method = "legacy_" + method
        return self._draw(method, size, result, *int_args, *floats)

    # --- permutations
    def shuffle(self, x: Any, axis: int = 0) -> None:
        if axis != 0:
            raise KilnValueError(f"{self._what}.shuffle: kiln shuffles along axis 0 only")
        if not isinstance(x, Tracer):
            raise KilnTypeError(f"{self._what}.shuffle: x must be an array of the compiled function")
        if x.aval.ndim == 0:
            raise KilnValueError("shuffle: x must be at least 1-dimensional")
        n = x.aval.shape[0]
        last = n - 1
        count = knp.maximum(last, 0) if traced(n) else max(last, 0)
        picks = self._draw("shuffle_index", (count,), np.int64, a=last)

        @for_loop(0, count, 1)
        def swap(i):
            position = last - i
            j = picks[i]
            held = knp.copy(x[position])
            x[position] = x[j]
            x[j] = held

        swap()

    def permutation(self, x: Any, axis: int = 0) -> Any:
        if isinstance(x, (int, np.integer)) or isinstance(x, Tracer) and x.aval.ndim == 0:
            arr = knp.arange(x)
        else:
            arr = knp.copy(operand(x))
        self.shuffle(arr, axis)
        return arr

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> Any:
        what = f"{self._what}.choice"
        if axis != 0:
            raise KilnTypeError(f"{what}: kiln draws along axis 0 only; move the axis first "
                                "(np.moveaxis(a, axis, 0)) and choose along it")
        from_range = isinstance(a, (int, np.integer)) or isinstance(a, Tracer) and a.aval.ndim == 0
        # choice(n) draws indices of range(n), never materialized (n may be huge).
        population = None if from_range else operand(a)
        pop_size = convert(operand(a), np.dtype(np.int64)) if from_range and traced(a) else (
            int(a) if from_range else population.aval.shape[0])
        if from_range:
            message = ("'a' must be greater than 0" if self._legacy else "a must be a positive integer") + \
                " unless no samples are taken"
        else:
            message = ("'a'" if self._legacy else "a") + " cannot be empty unless no samples are taken"
        shape = _size_shape(size)
        samples = 1 if shape is None else shape_product(shape)
        if traced(pop_size, samples):
            check(knp.logical_or(knp.greater(pop_size, 0), knp.equal(samples, 0)), "ValueError", message)
        elif pop_size <= 0 and samples != 0:
            raise KilnValueError(message)
        if not replace:
            bound = ("Cannot take a larger sample than population when 'replace=False'" if self._legacy else
                     "Cannot take a larger sample than population when replace is False")
            if traced(pop_size, samples):
                check(knp.less_equal(samples, pop_size), "ValueError", bound)
            elif samples > pop_size:
                raise KilnValueError(bound)
            if p is not None:
                index = self._weighted_without_replacement(p, pop_size, samples)
            elif self._legacy:
                # RandomState: the first `size` of a permutation of the population's indices.
                index = self.permutation(pop_size)[:samples]
            else:
                # The Generator's own sampler (Floyd's, or a tail shuffle), runtime/random.c.
                index = self._draw("choice_noreplace", (samples,), np.int64, a=pop_size, b=samples,
                                   p=1.0 if shuffle else 0.0)
            index = knp.reshape(index, () if shape is None else shape)
            return index if population is None else population[index]
        if p is not None:
            index = self._choice_index(p, pop_size, shape)
        elif self._legacy:
            index = self._bounded("randint", 0, pop_size, size, np.dtype(np.int64), False)
        else:
            index = self._bounded("integers", 0, pop_size, size, np.dtype(np.int64), False)
        return index if population is None else population[index]

    def _probabilities(self, p: Any, pop_size: Any) -> Any:
        """`p` of choice as float64, with NumPy's checks (and errors) of it."""
        if _static(p):
            p = np.asarray(p, np.float64)
            if p.ndim != 1:
                raise KilnValueError("p must be 1-dimensional" if not self._legacy else "'p' must be 1-dimensional")
            scratch = np.random.RandomState(0) if self._legacy else np.random.Generator(np.random.PCG64(0))
            scratch.choice(len(p), p=p)  # NumPy's checks of the probabilities, and their errors
        p = convert(operand(p), np.dtype(np.float64))
        if p.aval.ndim != 1:
            raise KilnValueError("p must be 1-dimensional")
        require = "a and p must have same size" if not self._legacy else "'a' and 'p' must have same size"
        check(knp.equal(p.aval.shape[0], pop_size) if traced(pop_size, p.aval.shape[0])
              else p.aval.shape[0] == pop_size, "ValueError", require)
        if traced(p):
            total = knp.sum(p)
            word = "probabilities" if self._legacy else "Probabilities"
            check(knp.logical_not(knp.isnan(total)), "ValueError", f"{word} contain NaN")
            check(_all(knp.greater_equal(p, 0)), "ValueError", f"{word} are not non-negative")
            check(knp.less_equal(knp.abs(total - 1.0), float(np.sqrt(np.finfo(np.float64).eps))), "ValueError",
                  f"{word} do not sum to 1")
        return p

    def _choice_index(self, p: Any, pop_size: Any, shape: Any) -> Any:
        """NumPy's weighted draw: the cumulative distribution, normalized, searched
        (side='right') for uniform samples."""
        p = self._probabilities(p, pop_size)
        cdf = knp.cumsum(p)
        cdf = cdf / cdf[-1]
        uniform = self.random(None if shape is None else shape)
        # searchsorted(cdf, u, side='right') on a non-decreasing cdf: how many entries are <= u.
        below = knp.less_equal(knp.reshape(cdf, (1, -1)), knp.reshape(uniform, (-1, 1)))
        return knp.reshape(knp.sum(below, axis=1, dtype=np.int64), () if shape is None else shape)

    def _weighted_without_replacement(self, p: Any, pop_size: Any, samples: Any) -> Any:
        """NumPy's draw without replacement with probabilities `p` (Generator and
        RandomState alike): rounds of `samples - found` uniforms searched in the
        cumulative distribution of `p` with the indices found so far zeroed,
        keeping each round's new indices in order of first appearance, until
        `samples` are found."""
        p = self._probabilities(p, pop_size)
        check(knp.greater_equal(knp.sum(knp.greater(p, 0), dtype=np.int64), samples), "ValueError",
              "Fewer non-zero entries in p than size")
        weights = knp.copy(p)
        found = knp.zeros(samples, np.int64)
        first_at = knp.zeros(pop_size, np.int64)  # scratch: a round's first position of each index
        done = knp.zeros((), np.int64)

        @while_loop(lambda: knp.less(done, samples))
        def rounds():
            weights[found[:done]] = 0.0
            cdf = knp.cumsum(weights)
            cdf = cdf / cdf[-1]
            uniform = self.random((samples - done,))
            # searchsorted(cdf, u, side='right'): how many entries are <= u.
            new = knp.sum(knp.less_equal(knp.reshape(cdf, (1, -1)), knp.reshape(uniform, (-1, 1))), axis=1,
                          dtype=np.int64)
            positions = knp.arange(new.aval.shape[0], dtype=np.int64)
            first_at[new[::-1]] = positions[::-1]  # the last write of an index is its first position
            fresh = new[knp.equal(first_at[new], positions)]
            found[done:done + fresh.aval.shape[0]] = fresh
            done[...] = done + fresh.aval.shape[0]

        rounds()
        return found


def _bits(v: int) -> int:
    """An integer in [-2**63, 2**64) as the int64 with its low 64 bits."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


# The distributions whose RandomState stream differs from the Generator's (runtime/random.c legacy_*).
_LEGACY_OWN = {"standard_gamma", "gamma", "beta", "chisquare", "f", "standard_cauchy", "pareto", "weibull", "power",
               "lognormal", "rayleigh", "standard_t", "noncentral_chisquare", "noncentral_f", "wald", "vonmises",
               "negative_binomial", "geometric", "hypergeometric"}
_INT_VALUED = {"poisson", "binomial", "negative_binomial", "geometric", "logseries", "zipf", "hypergeometric"}


def _distribution_method(method: str, defaults: dict, ints: tuple = ()):
    """A Generator method drawing `method` with parameters `defaults` (NumPy's order and defaults)."""
    names = list(defaults)

    def draw(self, *args: Any, size: Any = None, **kwargs: Any) -> Any:
        params = dict(defaults)
        if len(args) > len(names):
            size, args = args[len(names)], args[:len(names)]
        params.update(zip(names, args))
        params.update(kwargs)
        missing = [n for n, v in params.items() if v is _REQUIRED]
        if missing:
            raise KilnTypeError(f"{self._what}.{method}() missing required argument {missing[0]!r}")
        return self._distribution(method, params, size, ints)

    draw.__name__ = method
    return draw


_REQUIRED = object()
_DISTRIBUTIONS = {
    "standard_gamma": {"shape": _REQUIRED}, "gamma": {"shape": _REQUIRED, "scale": 1.0},
    "beta": {"a": _REQUIRED, "b": _REQUIRED}, "chisquare": {"df": _REQUIRED},
    "f": {"dfnum": _REQUIRED, "dfden": _REQUIRED}, "standard_cauchy": {}, "pareto": {"a": _REQUIRED},
    "weibull": {"a": _REQUIRED}, "power": {"a": _REQUIRED}, "laplace": {"loc": 0.0, "scale": 1.0},
    "gumbel": {"loc": 0.0, "scale": 1.0}, "logistic": {"loc": 0.0, "scale": 1.0},
    "lognormal": {"mean": 0.0, "sigma": 1.0}, "rayleigh": {"scale": 1.0}, "standard_t": {"df": _REQUIRED},
    "noncentral_chisquare": {"df": _REQUIRED, "nonc": _REQUIRED},
    "noncentral_f": {"dfnum": _REQUIRED, "dfden": _REQUIRED, "nonc": _REQUIRED},
    "wald": {"mean": _REQUIRED, "scale": _REQUIRED}, "vonmises": {"mu": _REQUIRED, "kappa": _REQUIRED},
    "triangular": {"left": _REQUIRED, "mode": _REQUIRED, "right": _REQUIRED},
    "poisson": {"lam": 1.0}, "negative_binomial": {"n": _REQUIRED, "p": _REQUIRED},
    "geometric": {"p": _REQUIRED}, "logseries": {"p": _REQUIRED}, "zipf": {"a": _REQUIRED},
}
for _method, _defaults in _DISTRIBUTIONS.items():
    setattr(TracedGenerator, _method, _distribution_method(_method, _defaults))
TracedGenerator.binomial = _distribution_method("binomial", {"n": _REQUIRED, "p": _REQUIRED}, ints=("n",))
TracedGenerator.hypergeometric = _distribution_method(
    "hypergeometric", {"ngood": _REQUIRED, "nbad": _REQUIRED, "nsample": _REQUIRED}, ints=("ngood", "nbad"))
_SUPPORTED_METHODS = sorted(["random", "uniform", "standard_normal", "normal", "standard_exponential", "exponential",
                             "integers", "shuffle", "permutation", "choice", "binomial", "hypergeometric",
                             "multinomial", "dirichlet",
                             *_DISTRIBUTIONS])


# --------------------------------------------------------------------------
# Generators made in traced code.

def traced_generator(words: Any, bit_generator: str = "pcg64", legacy: bool = False) -> TracedGenerator:
    """A generator over fresh traced state words (a NumPy int64 array or a traced one)."""
    state = knp.zeros(len(words) if not isinstance(words, Tracer) else words.aval.shape[0], np.int64)
    state[...] = words
    return TracedGenerator(state, bit_generator, legacy)


def _seeded_words(method: str, count: int, seed: Any) -> Any:
    """State words made by a seeding method from a traced seed."""
    new, _ = bind(random_p, knp.zeros(count, np.int64), convert(operand(seed), np.dtype(np.int64)),
                  *[convert(operand(v), np.dtype(d)) for v, d in ((0, np.int64), (0.0, np.float64),
                                                                  (0.0, np.float64), (0.0, np.float64))],
                  method=method, bit_generator="pcg64" if "pcg64" in method else "mt19937",
                  dtype=np.dtype(np.int64), shape=(0,))
    return new


def default_rng(seed: Any = None) -> TracedGenerator:
    """`np.random.default_rng(seed)` in traced code: PCG64 seeded as NumPy seeds it (SeedSequence)."""
    if isinstance(seed, TracedGenerator):
        return seed
    if seed is None:
        return traced_generator(_seeded_words("entropy_pcg64", PCG64_WORDS, 0))
    if isinstance(seed, Tracer):
        if seed.aval.ndim != 0 or seed.aval.dtype.kind not in "iu":
            raise KilnTypeError("np.random.default_rng(seed): kiln takes a traced seed that is one integer; "
                                f"got a traced {seed.aval.str_short()}. Pass an int, or a Generator as an argument")
        check(knp.logical_not(seed < 0), "ValueError", "expected non-negative integer")
        return traced_generator(_seeded_words("seed_pcg64", PCG64_WORDS, seed))
    if isinstance(seed, np.random.Generator):
        raise KilnTypeError("np.random.default_rng(generator) with a Generator from outside the function: pass "
                            "the Generator as an argument of the compiled function instead")
    # A constant seed: NumPy's own seeding, once (the same state every call, as in NumPy).
    return traced_generator(generator_words(np.random.default_rng(seed)))


# --------------------------------------------------------------------------
# Generators passed to a compiled function: their state words are an argument
# (an int64[6] array, static in the signature) that the call writes, then
# copies back into the caller's Generator.

class GeneratorArgument:
    """A Generator argument of one call: its words, set back into it after the call (`write_back`)."""

    def __init__(self, generator: np.random.Generator, others: list = ()):
        if any(other.generator is generator for other in others):
            raise KilnValueError("the same Generator is passed twice to a compiled function; kiln advances each "
                                 "argument's state once: pass it once and use it for both")
        self.generator = generator
        self.words = generator_words(generator).view(StateWords)

    def tree_flatten(self) -> tuple:
        return [self.words], "pcg64"

    @classmethod
    def tree_unflatten(cls, aux: str, children: list) -> Any:
        if isinstance(children[0], Tracer):
            return TracedGenerator(children[0], aux, legacy=False)
        raise KilnTypeError("a random Generator cannot be returned from a compiled function; return the numbers")

    def write_back(self) -> None:
        set_generator_words(self.generator, self.words)


register_pytree_class(GeneratorArgument)


def wrap_generators(value: Any, found: list) -> Any:
    """`value` (an argument) with each Generator in it, at any depth of tuples, lists and dicts,
    replaced by its GeneratorArgument (appended to `found`)."""
    if isinstance(value, np.random.Generator):
        found.append(GeneratorArgument(value, found))
        return found[-1]
    if isinstance(value, np.random.RandomState):
        raise KilnTypeError("a RandomState passed to a compiled function is not supported by kiln; pass a "
                            "Generator (np.random.default_rng(seed)), whose state kiln advances as NumPy's")
    if type(value) in (tuple, list):
        return type(value)(wrap_generators(v, found) for v in value)
    if type(value) is dict:
        return {k: wrap_generators(v, found) for k, v in value.items()}
    return value
