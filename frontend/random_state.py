"""NumPy random generators as the int64 state words compiled code draws from.

In: a NumPy Generator over PCG64, or the global legacy RandomState (MT19937).
Out: their state as int64 words (PCG64: state high, state low, inc high,
inc low, has_uint32, uinteger; MT19937: the 624 key words, pos, has_gauss,
the cached Gaussian's bits) and back, for the calls of compiled functions
that draw random numbers (runtime/random.c reads the same layout).
"""

from __future__ import annotations

import numpy as np

from kiln.errors import KilnTypeError

PCG64_WORDS = 6
MT19937_WORDS = 627
_MASK64 = (1 << 64) - 1


def generator_words(g: np.random.Generator) -> np.ndarray:
    """The state words of a Generator over PCG64."""
    if not isinstance(g.bit_generator, np.random.PCG64):
        raise KilnTypeError(
            f"a Generator over {type(g.bit_generator).__name__} was passed to a compiled function; kiln compiles "
            "NumPy's default bit generator, PCG64: use np.random.default_rng(seed) or "
            "np.random.Generator(np.random.PCG64(seed))")
    s = g.bit_generator.state
    state, inc = s["state"]["state"], s["state"]["inc"]
    words = [state >> 64, state & _MASK64, inc >> 64, inc & _MASK64, s["has_uint32"], s["uinteger"]]
    return np.array(words, np.uint64).view(np.int64)


def set_generator_words(g: np.random.Generator, words) -> None:
    """Set a PCG64 Generator's state to `words`."""
    w = [int(x) & _MASK64 for x in words]
    g.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": (w[0] << 64) | w[1],
                                                                 "inc": (w[2] << 64) | w[3]},
                             "has_uint32": w[4], "uinteger": w[5]}


def random_state_words(rs: np.random.RandomState) -> np.ndarray:
    """The state words of a RandomState over MT19937."""
    name, key, pos, has_gauss, gauss = rs.get_state()
    if name != "MT19937":
        raise KilnTypeError(f"kiln compiles the legacy random functions over MT19937, not {name}")
    tail = np.array([pos, has_gauss, int(np.array(gauss, np.float64).view(np.uint64))], np.uint64)
    return np.concatenate([key.astype(np.uint64), tail]).view(np.int64)


def set_random_state_words(rs: np.random.RandomState, words) -> None:
    w = np.asarray(words, np.int64).view(np.uint64)
    rs.set_state(("MT19937", w[:624].astype(np.uint32), int(w[624]), int(w[625]),
                  float(w[626:627].view(np.float64)[0])))


def global_random_state() -> np.random.RandomState:
    """The RandomState behind `np.random.rand`, `np.random.seed`, ...."""
    return np.random.mtrand._rand
