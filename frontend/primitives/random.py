"""Stage "jaxpr": the random-number primitive.

In: a bit generator's state words (int64[6] for PCG64, int64[627] for
MT19937), the distribution's integer parameters `a, b` (int64) and float
ones `p, q, r` (float64), each a scalar or one value per draw (1-D, of the
draws' length), and the number of draws (a static int or a scalar dim operand).
Out: the advanced state words and the 1-D values. Pure: the same state gives
the same numbers, so the state is threaded as a value (kiln/numpy/random.py).
"""

from __future__ import annotations

import numpy as np

from kiln.core import DShapedArray, KilnInternalError, Primitive, same_dim
from kiln.primitives._rules import shape_with_dynamic
from kiln.random_state import generator_words, random_state_words, set_generator_words, set_random_state_words

# new_state:i64[K] values:dtype[n] = random state a b p q r [n] {method, bit_generator, dtype, shape}
random_p = Primitive("random", multiple_results=True)


@random_p.def_abstract_eval
def _random_rule(state, a, b, p, q, r, *dyn_shape, method, bit_generator, dtype, shape):
    # Imported here: kiln.dialects loads the MLIR bindings, which tracing
    # must not pay for (nor import before the first compile).
    from kiln.dialects.kiln import RANDOM_BIT_GENERATORS, RANDOM_METHODS

    words = RANDOM_BIT_GENERATORS.get(bit_generator)
    if method not in RANDOM_METHODS or words is None:
        raise KilnInternalError(f"random: unknown method {method!r} or bit generator {bit_generator!r}")
    if state.aval.shape != (words,) or state.aval.dtype != np.int64:
        raise KilnInternalError(f"random: a {bit_generator} state is int64[{words}], got {state.aval}")
    values_shape = shape_with_dynamic(shape, list(dyn_shape))
    for x, want in zip((a, b, p, q, r), (np.int64, np.int64, np.float64, np.float64, np.float64)):
        if x.aval.dtype != want or x.aval.ndim > 1 or x.aval.ndim == 1 and not same_dim(x.aval.shape[0],
                                                                                         values_shape[0]):
            raise KilnInternalError(f"random: a parameter is a {np.dtype(want)} scalar or one per value, got {x.aval}")
    return [state.aval, DShapedArray(values_shape, np.dtype(dtype))]


PRIMITIVES = [random_p]


# --------------------------------------------------------------------------
# Interpreter rule (kiln.interpreter): NumPy's own generators, set to the
# state words, draw the values; their advanced state is the new words.

from kiln.interpreter import checked_shape, fill_dims, interpret_rule  # noqa: E402

_MASK64 = (1 << 64) - 1


def _generator(bit_generator: str, words: np.ndarray):
    """A NumPy Generator (PCG64) or RandomState (MT19937) at the state `words`."""
    if bit_generator == "pcg64":
        g = np.random.Generator(np.random.PCG64())
        set_generator_words(g, words)
        return g
    g = np.random.RandomState(np.random.MT19937())
    set_random_state_words(g, words)
    return g


def _words(g) -> np.ndarray:
    return generator_words(g) if isinstance(g, np.random.Generator) else random_state_words(g)


def _unsigned_bits(x) -> np.ndarray:
    """int64 values (a scalar or an array) as the uint64 of their bits."""
    return np.asarray(x, np.int64).astype(np.uint64)


def _bounded(g, n, off, span, dtype):
    """NumPy's bounded integers in [off, off + span] (span as NumPy's fill takes it), per element for arrays."""
    unsigned = np.dtype(dtype.replace("int", "uint") if dtype.startswith("int") else dtype)
    span = _unsigned_bits(span).astype(unsigned)
    drawn = g.integers(0, span, n, dtype=unsigned, endpoint=True)
    return (drawn.astype(np.uint64) + _unsigned_bits(off)).view(np.int64)


def _legacy_bounded(g, n, off, span, dtype):
    """RandomState.randint's masked rejection in [off, off + span]."""
    span = _unsigned_bits(span)
    high = int(span) + 1 if span.ndim == 0 else span.astype(object) + 1
    drawn = g.randint(0, high, n, dtype=dtype)
    return (drawn.astype(np.uint64) + _unsigned_bits(off)).view(np.int64)


def _next32(g) -> int:
    """The bit generator's next 32-bit draw (PCG64 keeps the high half of a 64-bit draw for the next one)."""
    if isinstance(g, np.random.RandomState):
        return int(g._bit_generator.random_raw())
    state = g.bit_generator.state
    if state["has_uint32"]:
        state["has_uint32"], value = 0, state["uinteger"]
        g.bit_generator.state = state
        return value
    raw = int(g.bit_generator.random_raw())
    state = g.bit_generator.state
    state["has_uint32"], state["uinteger"] = 1, raw >> 32
    g.bit_generator.state = state
    return raw & 0xFFFFFFFF


def _next64(g) -> int:
    if isinstance(g, np.random.RandomState):
        return (_next32(g) << 32) | _next32(g)
    return int(g.bit_generator.random_raw())


def _interval(g, bound: int) -> int:
    """NumPy's uniform index in [0, bound] for shuffles: masked rejection on 32 or 64 bits."""
    if bound == 0:
        return 0
    mask = (1 << bound.bit_length()) - 1
    draw = _next32 if bound <= 0xFFFFFFFF else _next64
    while True:
        value = draw(g) & mask
        if value <= bound:
            return value


def _shuffle_indices(g, n: int, last: int) -> np.ndarray:
    """Fisher-Yates from the end: draw i is an index in [0, last - i]."""
    return np.array([_interval(g, last - i) for i in range(n)], np.int64)


def _multinomial(g, n: int, trials, p, d) -> np.ndarray:
    """Vectors of d entries (element j of each: `trials` of its vector, p_j) by NumPy's multinomial."""
    d = int(d)
    if n == 0:
        return np.zeros(0, np.int64)
    trials = np.broadcast_to(np.asarray(trials, np.int64), (n,)).reshape(-1, d)[:, 0]
    p = np.broadcast_to(np.asarray(p, np.float64), (n,)).reshape(-1, d)
    return np.concatenate([g.multinomial(int(t), row) for t, row in zip(trials, p)]).astype(np.int64)


_FLOAT_CALLS = {
    "random": lambda g, n, p, q, r: g.random(n),
    "random_f32": lambda g, n, p, q, r: g.random(n, dtype=np.float32),
    "standard_normal": lambda g, n, p, q, r: g.standard_normal(n),
    "standard_normal_f32": lambda g, n, p, q, r: g.standard_normal(n, dtype=np.float32),
    "normal": lambda g, n, p, q, r: g.normal(p, q, n),
    "standard_exponential": lambda g, n, p, q, r: g.standard_exponential(n),
    "standard_exponential_f32": lambda g, n, p, q, r: g.standard_exponential(n, dtype=np.float32),
    "standard_exponential_inv": lambda g, n, p, q, r: g.standard_exponential(n, method="inv"),
    "standard_exponential_inv_f32": lambda g, n, p, q, r: g.standard_exponential(n, np.float32, method="inv"),
    "exponential": lambda g, n, p, q, r: g.exponential(p, n),
    # low + range * U, as NumPy's C computes it (not low + ((low + range) - low) * U).
    "uniform": lambda g, n, p, q, r: p + q * (g.random(n) if isinstance(g, np.random.Generator)
                                              else g.random_sample(n)),
    "standard_gamma": lambda g, n, p, q, r: g.standard_gamma(p, n),
    "gamma": lambda g, n, p, q, r: g.gamma(p, q, n),
    "beta": lambda g, n, p, q, r: g.beta(p, q, n),
    "chisquare": lambda g, n, p, q, r: g.chisquare(p, n),
    "f": lambda g, n, p, q, r: g.f(p, q, n),
    "standard_cauchy": lambda g, n, p, q, r: g.standard_cauchy(n),
    "pareto": lambda g, n, p, q, r: g.pareto(p, n),
    "weibull": lambda g, n, p, q, r: g.weibull(p, n),
    "power": lambda g, n, p, q, r: g.power(p, n),
    "laplace": lambda g, n, p, q, r: g.laplace(p, q, n),
    "gumbel": lambda g, n, p, q, r: g.gumbel(p, q, n),
    "logistic": lambda g, n, p, q, r: g.logistic(p, q, n),
    "lognormal": lambda g, n, p, q, r: g.lognormal(p, q, n),
    "rayleigh": lambda g, n, p, q, r: g.rayleigh(p, n),
    "standard_t": lambda g, n, p, q, r: g.standard_t(p, n),
    "noncentral_chisquare": lambda g, n, p, q, r: g.noncentral_chisquare(p, q, n),
    "noncentral_f": lambda g, n, p, q, r: g.noncentral_f(p, q, r, n),
    "wald": lambda g, n, p, q, r: g.wald(p, q, n),
    "vonmises": lambda g, n, p, q, r: g.vonmises(p, q, n),
    "triangular": lambda g, n, p, q, r: g.triangular(p, q, r, n),
    "legacy_gauss": lambda g, n, p, q, r: g.standard_normal(n),
    "legacy_normal": lambda g, n, p, q, r: p + q * g.standard_normal(n),
    "legacy_standard_exponential": lambda g, n, p, q, r: g.standard_exponential(n),
    "legacy_exponential": lambda g, n, p, q, r: p * g.standard_exponential(n),
}

_INT_CALLS = {
    "integers64": lambda g, n, a, b, p, q: _bounded(g, n, a, b, "int64"),
    "integers32": lambda g, n, a, b, p, q: _bounded(g, n, a, b, "int32"),
    "integers16": lambda g, n, a, b, p, q: _bounded(g, n, a, b, "int16"),
    "integers8": lambda g, n, a, b, p, q: _bounded(g, n, a, b, "int8"),
    "integers_bool": lambda g, n, a, b, p, q: (g.integers(0, np.asarray(b).astype(np.bool_), n, dtype=np.bool_,
                                                          endpoint=True) + np.asarray(a)).astype(np.int64),
    "legacy_randint64": lambda g, n, a, b, p, q: _legacy_bounded(g, n, a, b, np.uint64),
    "legacy_randint32": lambda g, n, a, b, p, q: _legacy_bounded(g, n, a, b, np.uint32),
    "poisson": lambda g, n, a, b, p, q: g.poisson(p, n),
    "binomial": lambda g, n, a, b, p, q: g.binomial(a, p, n),
    "negative_binomial": lambda g, n, a, b, p, q: g.negative_binomial(p, q, n),
    "geometric": lambda g, n, a, b, p, q: g.geometric(p, n),
    "logseries": lambda g, n, a, b, p, q: g.logseries(p, n),
    "zipf": lambda g, n, a, b, p, q: g.zipf(p, n),
    "hypergeometric": lambda g, n, a, b, p, q: g.hypergeometric(a, b, np.asarray(p).astype(np.int64), n),
    "shuffle_index": lambda g, n, a, b, p, q: _shuffle_indices(g, n, a),
    "multinomial": lambda g, n, a, b, p, q: _multinomial(g, n, a, p, q),
    "choice_noreplace": lambda g, n, a, b, p, q: g.choice(a, b, replace=False, shuffle=bool(p)) if n else
    np.zeros(0, np.int64),
    # RandomState's own versions (g is a RandomState)
    "legacy_negative_binomial": lambda g, n, a, b, p, q: g.negative_binomial(p, q, n),
    "legacy_geometric": lambda g, n, a, b, p, q: g.geometric(p, n),
    "legacy_hypergeometric": lambda g, n, a, b, p, q: g.hypergeometric(a, b, np.asarray(p).astype(np.int64), n),
}
for _name in ("standard_gamma", "gamma", "beta", "chisquare", "f", "standard_cauchy", "pareto", "weibull", "power",
              "lognormal", "rayleigh", "standard_t", "noncentral_chisquare", "noncentral_f", "wald", "vonmises"):
    # The same call on a RandomState draws its legacy stream.
    _FLOAT_CALLS["legacy_" + _name] = _FLOAT_CALLS[_name]


@interpret_rule(random_p)
def _random_value(state, a, b, p, q, r, *dyn_shape, method, bit_generator, dtype, shape):
    from kiln.dialects.kiln import RANDOM_METHODS

    n = checked_shape(fill_dims(shape, dyn_shape))[0]
    kind = RANDOM_METHODS[method]
    if kind == "seed":
        if method == "seed_pcg64":
            g = np.random.Generator(np.random.PCG64(int(a)))
        elif method == "entropy_pcg64":
            g = np.random.Generator(np.random.PCG64())
        else:
            g = np.random.RandomState(np.random.MT19937())
            g.seed(int(a))
        return [_words(g), np.zeros(n, dtype)]
    g = _generator(bit_generator, state)
    # Scalars as Python numbers; per-value parameters as arrays (NumPy then draws element by element).
    a, b = (int(x) if np.ndim(x) == 0 else np.asarray(x, np.int64) for x in (a, b))
    p, q, r = (float(x) if np.ndim(x) == 0 else np.asarray(x, np.float64) for x in (p, q, r))
    if kind == "i64":
        values = _INT_CALLS[method](g, n, a, b, p, q)
    else:
        values = _FLOAT_CALLS[method](g, n, p, q, r)
    return [_words(g), np.asarray(values).astype(dtype)]
