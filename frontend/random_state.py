"""NumPy random generators as the int64 state words compiled code draws from.

In: a NumPy Generator over PCG64, or the global legacy RandomState (MT19937).
Out: their state as int64 words (PCG64: state high, state low, inc high,
inc low, has_uint32, uinteger; MT19937: the 624 key words, pos, has_gauss,
the cached Gaussian's bits) and back, for the calls of compiled functions
that draw random numbers (runtime/random.c reads the same layout).
"""

from __future__ import annotations

import ctypes

import numpy as np

from kiln.errors import KilnTypeError

class StateWords(np.ndarray):
    """A Generator argument's state words in a call: an int64 array whose
    shape is part of the signature (static, never a dim)."""


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
    fast = _fast_access(rs)
    if fast is not None:
        key, pos, has_gauss, gauss = fast
        tail = np.array([pos[0], has_gauss[0], 0], np.int64)
        tail[2:] = gauss.view(np.int64)
        return np.concatenate([key.astype(np.int64), tail])
    name, key, pos, has_gauss, gauss = rs.get_state()
    if name != "MT19937":
        raise KilnTypeError(f"kiln compiles the legacy random functions over MT19937, not {name}")
    tail = np.array([pos, has_gauss, int(np.array(gauss, np.float64).view(np.uint64))], np.uint64)
    return np.concatenate([key.astype(np.uint64), tail]).view(np.int64)


def set_random_state_words(rs: np.random.RandomState, words) -> None:
    w = np.asarray(words, np.int64)
    fast = _fast_access(rs)
    if fast is not None:
        key, pos, has_gauss, gauss = fast
        key[:] = w[:624].astype(np.uint32)
        pos[0], has_gauss[0] = w[624], w[625]
        gauss.view(np.int64)[0] = w[626]
        return
    u = w.view(np.uint64)
    rs.set_state(("MT19937", u[:624].astype(np.uint32), int(u[624]), int(u[625]),
                  float(u[626:627].view(np.float64)[0])))


# RandomState.get_state / set_state copy the 624 key words through Python
# (about 0.2 ms each). For the global state, kiln reads and writes them in
# place instead: the key and position through the bit generator's documented
# `ctypes.state_address` (NumPy's mt19937_state: uint32 key[624], int pos),
# the cached Gaussian in the RandomState's augmented state, found as the
# struct whose first field points at the RandomState's own bitgen_t. Both
# are checked against get_state/set_state once; if anything differs
# (another NumPy layout), the public calls are used.
# (the global RandomState, its views or None), found at first use.
_FAST: list = []


def _fast_access(rs: np.random.RandomState):
    """In-place views of the global RandomState's state, or None (other RandomStates, or unverified)."""
    if rs is not np.random.mtrand._rand:
        return None
    if not _FAST or _FAST[0] is not rs:
        _FAST[:] = [rs, _locate(rs)]
    return _FAST[1]


def _locate(rs: np.random.RandomState):
    bg = rs._bit_generator
    if not isinstance(bg, np.random.MT19937):
        return None
    state_address = bg.ctypes.state_address
    key = np.ctypeslib.as_array((ctypes.c_uint32 * 624).from_address(state_address))
    pos = np.ctypeslib.as_array((ctypes.c_int * 1).from_address(state_address + 624 * 4))
    base, size = id(rs), type(rs).__basicsize__
    raw = np.frombuffer(ctypes.string_at(base, size - size % 8), np.uint64)
    for index, word in enumerate(raw):
        # aug_bitgen_t {bitgen_t *bit_generator; int has_gauss; double gauss;}: its pointer
        # leads into the object, to a bitgen_t whose first field is the bit generator's state.
        if base <= int(word) < base + size - 8 and ctypes.c_void_p.from_address(int(word)).value == state_address:
            aug = base + 8 * index
            has_gauss = np.ctypeslib.as_array((ctypes.c_int * 1).from_address(aug + 8))
            gauss = np.ctypeslib.as_array((ctypes.c_double * 1).from_address(aug + 16))
            views = (key, pos, has_gauss, gauss)
            return views if _verified(rs, views) else None
    return None


def _verified(rs: np.random.RandomState, views: tuple) -> bool:
    """Whether the views read what get_state reports, for a distinctive state set through set_state."""
    key, pos, has_gauss, gauss = views
    saved = rs.get_state()
    probe = np.arange(7, 7 + 624, dtype=np.uint32) * np.uint32(2654435761)
    try:
        rs.set_state(("MT19937", probe, 311, 1, -1.2345678901234567))
        return (np.array_equal(key, probe) and pos[0] == 311 and has_gauss[0] == 1
                and gauss[0] == -1.2345678901234567)
    finally:
        rs.set_state(saved)


def global_random_state() -> np.random.RandomState:
    """The RandomState behind `np.random.rand`, `np.random.seed`, ...."""
    return np.random.mtrand._rand
