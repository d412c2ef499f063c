"""Stage "jaxpr": the legacy np.random functions and RandomState in traced code.

In: `np.random.seed`, `rand`, `randn`, `randint`, the distributions, ... (the
global RandomState, MT19937) and `np.random.RandomState(seed)` made inside.
Out: draws of kiln/numpy/random.py's TracedGenerator over the global state's
words, an implicit argument of the compiled function: the first trace that
reaches one raises `GlobalRandomStateNeeded` and `trace_function` traces
again with the words as an argument (`global_random_state`).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from kiln.core import KilnTypeError
from kiln.numpy._base import check
from kiln.numpy._bindings import knp
from kiln.numpy.random import _DISTRIBUTIONS, TracedGenerator, _seeded_words
from kiln.random_state import MT19937_WORDS, random_state_words
from kiln.tracing import Tracer


def random_state(seed: Any = None) -> TracedGenerator:
    """`np.random.RandomState(seed)` made in traced code (MT19937, seeded as NumPy seeds it)."""
    return TracedGenerator(_legacy_seed_words(seed, "np.random.RandomState"), "mt19937", legacy=True)


def _legacy_seed_words(seed: Any, what: str) -> Any:
    if isinstance(seed, Tracer):
        if seed.aval.ndim != 0 or seed.aval.dtype.kind not in "iu":
            raise KilnTypeError(f"{what}(seed): kiln takes a traced seed that is one integer, got a traced "
                                f"{seed.aval.str_short()}")
        check(knp.logical_and(seed >= 0, seed <= 2**32 - 1), "ValueError", "Seed must be between 0 and 2**32 - 1")
        return _seeded_words("seed_mt19937", MT19937_WORDS, seed)
    if seed is None:
        raise KilnTypeError(f"{what}() without a seed inside a compiled function is not supported by kiln; "
                            "give a seed, or use np.random.default_rng(), which kiln seeds from the OS")
    words = random_state_words(np.random.RandomState(seed))
    state = knp.zeros(MT19937_WORDS, np.int64)
    state[...] = words
    return state


# --------------------------------------------------------------------------
# The legacy functions: the global RandomState, an implicit argument of the
# compiled function whose words the call writes back (trace_entry.py).

class GlobalRandomStateNeeded(BaseException):
    """A legacy np.random function was traced without the global state as an
    argument: the trace restarts with it (a BaseException, so user code's
    `except Exception` cannot swallow it)."""


class _GlobalState(threading.local):
    generator: TracedGenerator | None = None


_GLOBAL = _GlobalState()


class global_random_state:
    """While tracing, legacy functions draw from the global state words `words` (a traced int64[627])."""

    def __init__(self, words: Any):
        self._generator = TracedGenerator(words, "mt19937", legacy=True)

    def __enter__(self) -> None:
        self._previous, _GLOBAL.generator = _GLOBAL.generator, self._generator

    def __exit__(self, *exc: Any) -> None:
        _GLOBAL.generator = self._previous


def _global() -> TracedGenerator:
    if _GLOBAL.generator is None:
        raise GlobalRandomStateNeeded()
    return _GLOBAL.generator


def _seed(seed: Any = None) -> None:
    """`np.random.seed(seed)`: the global state becomes MT19937 seeded with `seed`."""
    g = _global()
    g._write(_legacy_seed_words(seed, "np.random.seed"))


def _legacy(name: str, call):
    def legacy(*args: Any, **kwargs: Any) -> Any:
        return call(_global(), *args, **kwargs)

    legacy.__name__ = name
    legacy.__qualname__ = f"np.random.{name}"
    return legacy


def _dims(dims: tuple) -> Any:
    return dims if dims else None


LEGACY_FUNCTIONS = {
    "seed": _seed,
    "rand": _legacy("rand", lambda g, *dims: g.random(_dims(dims))),
    "randn": _legacy("randn", lambda g, *dims: g.standard_normal(_dims(dims))),
    "random": _legacy("random", lambda g, size=None: g.random(size)),
    "random_sample": _legacy("random_sample", lambda g, size=None: g.random(size)),
    "ranf": _legacy("ranf", lambda g, size=None: g.random(size)),
    "sample": _legacy("sample", lambda g, size=None: g.random(size)),
    "randint": _legacy("randint", lambda g, low, high=None, size=None, dtype=int: g._bounded(
        "randint", *((0, low) if high is None else (low, high)), size, np.dtype(dtype), False)),
    "standard_normal": _legacy("standard_normal", lambda g, size=None: g.standard_normal(size)),
    "normal": _legacy("normal", lambda g, loc=0.0, scale=1.0, size=None: g.normal(loc, scale, size)),
    "uniform": _legacy("uniform", lambda g, low=0.0, high=1.0, size=None: g.uniform(low, high, size)),
    "standard_exponential": _legacy("standard_exponential", lambda g, size=None: g.standard_exponential(size)),
    "exponential": _legacy("exponential", lambda g, scale=1.0, size=None: g.exponential(scale, size)),
    "shuffle": _legacy("shuffle", lambda g, x: g.shuffle(x)),
    "permutation": _legacy("permutation", lambda g, x: g.permutation(x)),
    "choice": _legacy("choice", lambda g, a, size=None, replace=True, p=None: g.choice(a, size, replace, p)),
    "multinomial": _legacy("multinomial", lambda g, n, pvals, size=None: g.multinomial(n, pvals, size)),
    "dirichlet": _legacy("dirichlet", lambda g, alpha, size=None: g.dirichlet(alpha, size)),
}
for _name in [*_DISTRIBUTIONS, "binomial", "hypergeometric"]:
    LEGACY_FUNCTIONS[_name] = _legacy(_name, (lambda name: lambda g, *a, **k: getattr(g, name)(*a, **k))(_name))
# Their methods of a RandomState made in traced code.
for _name in ("rand", "randn", "random_sample", "ranf", "sample", "randint", "seed"):
    setattr(TracedGenerator, _name, (lambda fn: lambda self, *a, **k: fn(self, *a, **k))(
        {"rand": lambda g, *dims: g.random(_dims(dims)),
         "randn": lambda g, *dims: g.standard_normal(_dims(dims)),
         "random_sample": lambda g, size=None: g.random(size),
         "ranf": lambda g, size=None: g.random(size),
         "sample": lambda g, size=None: g.random(size),
         "randint": lambda g, low, high=None, size=None, dtype=int: g._bounded(
             "randint", *((0, low) if high is None else (low, high)), size, np.dtype(dtype), False),
         "seed": lambda g, seed=None: g._write(_legacy_seed_words(seed, "RandomState.seed"))}[_name]))
