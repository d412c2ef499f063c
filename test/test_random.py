"""Random numbers in compiled code against NumPy: the same seed gives NumPy's
numbers bit for bit, and the generator's state advances exactly as NumPy's
(Generators passed in, made inside, and the legacy global RandomState)."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 1001)


def same(a, b) -> bool:
    """Equal values (NaNs included) and dtype, for arrays and tuples of them."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def states_equal(g1: np.random.Generator, g2: np.random.Generator) -> bool:
    return g1.bit_generator.state == g2.bit_generator.state


# --- Generators passed in: values and state, several calls and sizes

def draw_core(rng, n):
    return (rng.random(n), rng.integers(0, 10, size=n), rng.normal(1.5, 2.0, size=n),
            rng.uniform(-1.0, 3.0, size=n), rng.exponential(2.0, size=n), rng.standard_normal(n),
            rng.standard_exponential(n), rng.integers(5), rng.random())


def test_generator_argument_matches_numpy_across_calls_and_sizes():
    f = kiln.qjit(draw_core)
    mine, ref = np.random.default_rng(12345), np.random.default_rng(12345)
    for n in SIZES:
        assert same(f(mine, n), draw_core(ref, n)), n
        assert states_equal(mine, ref), n
    compiles = f.num_compiles
    for n in (3, 250):
        assert same(f(mine, n), draw_core(ref, n))
    assert f.num_compiles == compiles
    assert states_equal(mine, ref)


def test_two_calls_give_different_numbers():
    f = kiln.qjit(lambda rng: rng.random(8))
    rng = np.random.default_rng(0)
    first, second = f(rng), f(rng)
    assert not np.array_equal(first, second)
    assert same(np.concatenate([first, second]), np.random.default_rng(0).random(16))


def test_numpy_code_after_the_call_continues_the_stream():
    f = kiln.qjit(lambda rng, n: rng.standard_normal(n))
    mine, ref = np.random.default_rng(7), np.random.default_rng(7)
    f(mine, 5)
    ref.standard_normal(5)
    assert same(mine.standard_normal(4), ref.standard_normal(4))
    # odd 32-bit draws leave a buffered half in the state: it must come back too
    g = kiln.qjit(lambda rng: rng.integers(0, 7, size=3, dtype=np.int32))
    assert same(g(mine), ref.integers(0, 7, size=3, dtype=np.int32))
    assert states_equal(mine, ref)
    assert same(mine.integers(0, 7, size=3, dtype=np.int32), ref.integers(0, 7, size=3, dtype=np.int32))


def draw_in_loop(rng, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = rng.random() + rng.normal()
    return out


def test_draws_in_a_loop():
    f = kiln.qjit(draw_in_loop)
    mine, ref = np.random.default_rng(3), np.random.default_rng(3)
    for n in (0, 1, 9):
        expected = np.array([ref.random() + ref.normal() for _ in range(n)])
        assert same(f(mine, n), expected)
        assert states_equal(mine, ref)


def generators_in_a_tuple(pair, n):
    a, b = pair
    return a.random(n) - b.random(n)


def test_generators_inside_a_tuple_argument():
    f = kiln.qjit(generators_in_a_tuple)
    mine = (np.random.default_rng(1), np.random.default_rng(2))
    ref = (np.random.default_rng(1), np.random.default_rng(2))
    assert same(f(mine, 6), ref[0].random(6) - ref[1].random(6))
    assert states_equal(mine[0], ref[0]) and states_equal(mine[1], ref[1])


# --- integers: every dtype, endpoint, bounds, traced bounds

@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.bool_])
def test_integers_dtypes(dtype):
    info = (0, 1) if dtype == np.bool_ else (np.iinfo(dtype).min, np.iinfo(dtype).max)

    def draw(rng, n):
        return (rng.integers(0, 2 if dtype == np.bool_ else 100, size=n, dtype=dtype),
                rng.integers(info[0], info[1], size=n, dtype=dtype, endpoint=True))

    f = kiln.qjit(draw)
    mine, ref = np.random.default_rng(2), np.random.default_rng(2)
    for n in (0, 1, 11, 301):
        assert same(f(mine, n), draw(ref, n)), n
        assert states_equal(mine, ref)


def traced_bounds(rng, low, high, n):
    return rng.integers(low, high, size=n), rng.integers(low, high, size=n, endpoint=True)


def test_integers_traced_bounds_and_their_errors():
    f = kiln.qjit(traced_bounds)
    mine, ref = np.random.default_rng(4), np.random.default_rng(4)
    for low, high in ((-5, 5), (0, 1), (10, 2**40)):
        assert same(f(mine, low, high, 9), traced_bounds(ref, low, high, 9))
    with pytest.raises(ValueError, match="low >= high"):
        f(mine, 5, 5, 3)
    with pytest.raises(ValueError, match="low >= high"):
        np.random.default_rng(0).integers(5, 5)


def test_integers_static_errors_are_numpys():
    with pytest.raises(ValueError, match="low >= high"):
        kiln.qjit(lambda rng: rng.integers(3, 3))(np.random.default_rng(0))
    with pytest.raises(ValueError, match="high is out of bounds for int8"):
        kiln.qjit(lambda rng: rng.integers(0, 300, dtype=np.int8))(np.random.default_rng(0))


# --- floats: float32 forms, shapes, parameters

def float32_forms(rng, n):
    return (rng.random(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32),
            rng.standard_exponential(n, dtype=np.float32), rng.standard_exponential(n, method="inv"))


def test_float32_and_inverse_exponential():
    f = kiln.qjit(float32_forms)
    mine, ref = np.random.default_rng(5), np.random.default_rng(5)
    for n in SIZES:
        assert same(f(mine, n), float32_forms(ref, n))
    assert states_equal(mine, ref)


def shaped(rng, n):
    return rng.normal(0.0, 1.0, size=(n, 3)), rng.random((2, n))


def test_size_tuples_with_traced_dims():
    f = kiln.qjit(shaped)
    mine, ref = np.random.default_rng(6), np.random.default_rng(6)
    for n in (0, 1, 5):
        assert same(f(mine, n), shaped(ref, n))


def traced_parameters(rng, loc, scale, low, high, n):
    return rng.normal(loc, scale, n), rng.uniform(low, high, n), rng.exponential(scale, n)


def test_traced_parameters_and_their_checks():
    f = kiln.qjit(traced_parameters)
    mine, ref = np.random.default_rng(8), np.random.default_rng(8)
    assert same(f(mine, 1.0, 0.5, -2.0, 2.0, 13), traced_parameters(ref, 1.0, 0.5, -2.0, 2.0, 13))
    with pytest.raises(ValueError, match="scale < 0"):
        f(mine, 1.0, -0.5, -2.0, 2.0, 3)
    with pytest.raises(OverflowError, match="range exceeds valid bounds"):
        f(mine, 1.0, 0.5, -1e308, 1e308, 3)


def test_static_parameter_errors_are_numpys():
    with pytest.raises(ValueError, match="scale < 0"):
        kiln.qjit(lambda rng: rng.normal(0.0, -1.0, 3))(np.random.default_rng(0))
    with pytest.raises(ValueError, match="lam < 0"):
        kiln.qjit(lambda rng: rng.poisson(-1.0, 3))(np.random.default_rng(0))


DISTRIBUTIONS = [
    ("standard_gamma", (0.5,)), ("gamma", (2.0, 3.0)), ("beta", (0.5, 0.7)), ("chisquare", (3.0,)),
    ("f", (3.0, 4.0)), ("standard_cauchy", ()), ("pareto", (2.0,)), ("weibull", (1.5,)), ("power", (2.0,)),
    ("laplace", (1.0, 2.0)), ("gumbel", ()), ("logistic", ()), ("lognormal", (0.0, 1.0)), ("rayleigh", ()),
    ("standard_t", (3.0,)), ("noncentral_chisquare", (3.0, 1.0)), ("noncentral_f", (3.0, 4.0, 1.0)),
    ("wald", (1.0, 2.0)), ("vonmises", (0.0, 1.0)), ("triangular", (0.0, 1.0, 3.0)), ("poisson", (4.0,)),
    ("poisson", (50.0,)), ("binomial", (10, 0.3)), ("binomial", (1000, 0.4)), ("negative_binomial", (5, 0.5)),
    ("geometric", (0.3,)), ("logseries", (0.5,)), ("zipf", (2.0,)), ("hypergeometric", (10, 5, 7)),
]


@pytest.mark.parametrize("method,params", DISTRIBUTIONS, ids=[f"{m}{p}" for m, p in DISTRIBUTIONS])
def test_distributions_match_numpy_bit_for_bit(method, params):
    def draw(rng, n):
        return getattr(rng, method)(*params, size=n)

    f = kiln.qjit(draw)
    mine, ref = np.random.default_rng(9), np.random.default_rng(9)
    for n in (0, 1, 257):
        assert same(f(mine, n), draw(ref, n)), n
        assert states_equal(mine, ref)


# --- permutations and choice

def shuffled(rng, x):
    rng.shuffle(x)
    return x


def permutations(rng, n, x):
    return rng.permutation(n), rng.permutation(x), rng.choice(x, size=4)


def test_shuffle_permutation_choice():
    f = kiln.qjit(permutations)
    s = kiln.qjit(shuffled)
    mine, ref = np.random.default_rng(10), np.random.default_rng(10)
    for n in (0, 1, 2, 17):
        x = np.arange(float(max(n, 1) * 2)).reshape(-1, 2)
        assert same(f(mine, n, x), permutations(ref, n, x.copy())), n
        y, y_ref = np.arange(n), np.arange(n)
        s(mine, y)
        ref.shuffle(y_ref)
        assert same(y, y_ref)
        assert states_equal(mine, ref)


# --- Generators made inside

def made_inside(seed, n):
    rng = np.random.default_rng(seed)
    return rng.random(n), rng.integers(0, 100, size=n)


def test_default_rng_with_a_traced_seed():
    f = kiln.qjit(made_inside)
    for seed in (0, 1, 42, 2**32 + 5, 2**62):
        assert same(f(seed, 5), made_inside(seed, 5)), seed
    with pytest.raises(ValueError, match="non-negative"):
        f(-1, 3)


def constant_seed(n):
    return np.random.default_rng(2024).normal(size=n)


def test_default_rng_with_a_constant_seed_is_numpys_every_call():
    f = kiln.qjit(constant_seed)
    assert same(f(6), constant_seed(6))
    assert same(f(6), constant_seed(6))


def unseeded(n):
    return np.random.default_rng().random(n)


def test_default_rng_without_seed_varies_per_call():
    f = kiln.qjit(unseeded)
    a, b = f(16), f(16)
    assert a.shape == (16,) and not np.array_equal(a, b)
    assert np.all((a >= 0) & (a < 1))


# --- the legacy functions: the global RandomState

def legacy(n):
    return (np.random.rand(n), np.random.randn(n), np.random.randint(0, 10, size=n), np.random.random(n),
            np.random.uniform(1.0, 3.0, n), np.random.normal(0.0, 2.0, n), np.random.exponential(2.0, n),
            np.random.standard_exponential(n), np.random.standard_normal(n), np.random.random_sample(),
            np.random.permutation(n), np.random.choice(n + 1, 3))


def test_legacy_functions_follow_the_global_state():
    f = kiln.qjit(legacy)
    for n in (0, 1, 7, 1001):
        np.random.seed(n)
        mine = f(n)
        after = np.random.get_state()
        np.random.seed(n)
        assert same(mine, legacy(n)), n
        # the global state (the cached Gaussian included) advanced as NumPy's
        ref = np.random.get_state()
        assert np.array_equal(after[1], ref[1]) and after[2:] == ref[2:]
    # an odd number of randn values leaves a cached Gaussian: the next call uses it
    np.random.seed(1)
    f(3)
    cached = np.random.randn(2)
    np.random.seed(1)
    legacy(3)
    assert same(cached, np.random.randn(2))


LEGACY_DISTRIBUTIONS = [
    ("standard_gamma", (0.5,)), ("standard_gamma", (3.0,)), ("gamma", (2.0, 3.0)), ("beta", (0.5, 0.7)),
    ("beta", (2.0, 3.0)), ("chisquare", (3.0,)), ("f", (3.0, 4.0)), ("standard_cauchy", ()), ("pareto", (2.0,)),
    ("weibull", (1.5,)), ("power", (2.0,)), ("laplace", (1.0, 2.0)), ("gumbel", (1.0, 2.0)),
    ("logistic", (1.0, 2.0)), ("lognormal", (0.0, 1.0)), ("rayleigh", (2.0,)), ("standard_t", (3.0,)),
    ("noncentral_chisquare", (3.0, 1.0)), ("noncentral_chisquare", (0.5, 1.0)), ("noncentral_f", (3.0, 4.0, 1.0)),
    ("wald", (1.0, 2.0)), ("vonmises", (0.3, 1.0)), ("vonmises", (0.3, 1e7)), ("triangular", (0.0, 1.0, 3.0)),
    ("poisson", (4.0,)), ("binomial", (10, 0.3)), ("negative_binomial", (5, 0.5)), ("geometric", (0.3,)),
    ("geometric", (0.01,)), ("logseries", (0.5,)), ("zipf", (2.0,)), ("hypergeometric", (10, 5, 7)),
    ("hypergeometric", (100, 500, 70)),
]


@pytest.mark.parametrize("method,params", LEGACY_DISTRIBUTIONS, ids=[f"{m}{p}" for m, p in LEGACY_DISTRIBUTIONS])
def test_legacy_distributions_match_numpy_bit_for_bit(method, params):
    def draw(n):
        return getattr(np.random, method)(*params, size=n)

    f = kiln.qjit(draw)
    for n in (1, 301):
        np.random.seed(n)
        mine, after = f(n), np.random.get_state()
        np.random.seed(n)
        ref, ref_after = draw(n), np.random.get_state()
        assert same(mine, ref), n
        assert np.array_equal(after[1], ref_after[1]) and after[2:] == ref_after[2:]


def seeded_inside(seed):
    np.random.seed(seed)
    return np.random.rand(3), np.random.randint(5, size=2)


def test_legacy_seed_inside_the_function():
    f = kiln.qjit(seeded_inside)
    mine = f(42)
    after = np.random.rand(2)
    assert same(mine, seeded_inside(42))
    assert same(after, np.random.rand(2))
    with pytest.raises(ValueError, match="Seed must be between 0 and 2\\*\\*32 - 1"):
        f(-3)


def test_legacy_randomstate_made_inside():
    f = kiln.qjit(lambda n: np.random.RandomState(4).randn(n))
    assert same(f(5), np.random.RandomState(4).randn(5))


# --- refusals and the interpreter

def test_unsupported_random_names_are_refused_clearly():
    with pytest.raises(TypeError, match="np.random.multivariate_normal is not supported inside a compiled function"):
        kiln.qjit(lambda: np.random.multivariate_normal([0.0, 0.0], np.eye(2)))()
    g = np.random.default_rng(0)
    with pytest.raises(TypeError, match="pass it as an argument"):
        kiln.qjit(lambda n: g.random(n))(3)
    with pytest.raises(TypeError, match="PCG64"):
        kiln.qjit(lambda rng: rng.random(3))(np.random.Generator(np.random.MT19937(0)))


def test_interpreter_agrees():
    f = kiln.qjit(draw_core)
    mine, ref = np.random.default_rng(11), np.random.default_rng(11)
    assert same(kiln.interpret(f)(mine, 5), draw_core(ref, 5))
    assert states_equal(mine, ref)
    np.random.seed(2)
    got = kiln.interpret(kiln.qjit(legacy))(4)
    np.random.seed(2)
    assert same(got, legacy(4))


def test_the_same_generator_twice_is_refused():
    f = kiln.qjit(lambda a, b: a.random(2) + b.random(2))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="the same Generator is passed twice"):
        f(rng, rng)
    with pytest.raises(ValueError, match="the same Generator is passed twice"):
        f(rng, rng)  # the fast path refuses it too


def test_global_state_words_in_place_agree_with_get_state():
    from kiln.random_state import global_random_state, random_state_words, set_random_state_words

    state = global_random_state()
    np.random.seed(3)
    np.random.randn()  # leaves a cached Gaussian
    words = random_state_words(state)
    name, key, pos, has_gauss, gauss = state.get_state()
    assert np.array_equal(words[:624].astype(np.uint32), key) and words[624] == pos and words[625] == has_gauss == 1
    assert words[626:].view(np.float64)[0] == gauss
    other = np.random.RandomState(0)
    set_random_state_words(other, words)  # through set_state
    np.random.seed(9)
    set_random_state_words(state, words)  # in place
    assert same(other.randn(5), np.random.randn(5))


def draw_in_a_branch(rng, flag, n):
    x = np.zeros(n)
    if flag > 0:
        x = x + rng.normal(size=n)
    return x + rng.random(n)


def test_draws_in_a_branch_on_a_traced_condition():
    f = kiln.qjit(draw_in_a_branch)
    mine, ref = np.random.default_rng(12), np.random.default_rng(12)
    for flag in (1, 0, 1):
        assert same(f(mine, flag, 5), draw_in_a_branch(ref, flag, 5)), flag
        assert states_equal(mine, ref)


def test_export_of_legacy_random_is_refused(tmp_path):
    def legacy_draw(n: int):
        return np.random.rand(n)

    with pytest.raises(TypeError, match="legacy np.random functions"):
        kiln.export(legacy_draw, str(tmp_path / "legacy"))


def array_parameters(rng, loc, high, lam):
    return (rng.normal(loc, 0.5), rng.normal(loc, 2.0, size=(3, loc.shape[0])), rng.uniform(loc, loc + 1.0),
            rng.integers(0, high), rng.integers(-1, high, dtype=np.int8), rng.poisson(lam), rng.gamma(lam, 2.0),
            rng.binomial(high, 0.3), rng.exponential(lam))


def legacy_array_parameters(loc, high, lam):
    return (np.random.normal(loc, 1.0), np.random.randint(0, high), np.random.gamma(lam),
            np.random.uniform(loc, 10.0), np.random.poisson(lam))


def test_array_parameters_broadcast_as_numpys():
    f = kiln.qjit(array_parameters)
    g = kiln.qjit(legacy_array_parameters)
    mine, ref = np.random.default_rng(13), np.random.default_rng(13)
    for n in (0, 1, 9):
        args = (np.linspace(-1.0, 1.0, n), np.arange(1, n + 1), np.linspace(0.5, 40.0, n))
        assert same(f(mine, *args), array_parameters(ref, *args)), n
        assert states_equal(mine, ref)
        np.random.seed(n)
        got = g(*args)
        np.random.seed(n)
        assert same(got, legacy_array_parameters(*args)), n
    assert same(kiln.interpret(f)(mine, *args), array_parameters(ref, *args))
    with pytest.raises(ValueError, match="scale < 0"):
        kiln.qjit(lambda rng, s: rng.normal(0.0, s))(mine, np.array([1.0, -1.0]))


def weighted(rng, x, p):
    return rng.choice(x, size=(3, 5), p=p), rng.choice(4, p=[0.1, 0.2, 0.3, 0.4])


def legacy_choices(x, p, k):
    return np.random.choice(x, 30, p=p), np.random.choice(x, k, replace=False), np.random.choice(7, 3, replace=False)


def test_choice_with_probabilities_and_without_replacement():
    f = kiln.qjit(weighted)
    g = kiln.qjit(legacy_choices)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    mine, ref = np.random.default_rng(14), np.random.default_rng(14)
    assert same(f(mine, np.arange(10.0, 14.0), p), weighted(ref, np.arange(10.0, 14.0), p))
    assert states_equal(mine, ref)
    for k in (0, 1, 4):
        np.random.seed(k)
        got = g(np.arange(4.0), p, k)
        np.random.seed(k)
        assert same(got, legacy_choices(np.arange(4.0), p, k))
    with pytest.raises(ValueError, match="Probabilities do not sum to 1"):
        f(mine, np.arange(4.0), np.full(4, 0.5))
    with pytest.raises(ValueError, match="Cannot take a larger sample than population"):
        g(np.arange(4.0), p, 5)
    # The Generator's own sampler without replacement (not permutation(...)[:k]).
    assert same(kiln.qjit(lambda rng: rng.choice(5, 2, replace=False))(mine), ref.choice(5, 2, replace=False))
    assert states_equal(mine, ref)


# --- vector-valued draws and choice without replacement: NumPy's algorithms,
# the same numbers and state across calls and sizes

def vector_draws(rng, n, alpha, pvals):
    return (rng.multinomial(n, pvals, size=n), rng.multinomial(3 * n, pvals),
            rng.dirichlet(alpha, size=n), rng.dirichlet([0.05, 0.01, 0.02], size=n),
            rng.choice(n + 3, size=n, replace=False), rng.choice(n + 3, size=n, replace=False, shuffle=False),
            rng.choice(n + 3, size=min(n, 3), replace=False, p=np.full(n + 3, 1.0 / (n + 3))))


def test_vector_draws_and_choice_without_replacement_across_calls():
    f = kiln.qjit(vector_draws)
    mine, ref = np.random.default_rng(2024), np.random.default_rng(2024)
    for n in SIZES:
        for alpha in (np.array([0.5, 2.0, 1.0]), np.array([0.02, 0.0, 0.07])):  # both of dirichlet's algorithms
            args = (n, alpha, np.array([0.2, 0.3, 0.5]))
            assert same(f(mine, *args), vector_draws(ref, *args)), (n, alpha)
            assert states_equal(mine, ref), n
    assert f.num_compiles == 1
    # The interpreter (NumPy's own generators) agrees (its beta refuses the zero
    # alphas NumPy's stick breaking passes to the C function: positive ones here).
    mine, ref = np.random.default_rng(5), np.random.default_rng(5)
    args = (7, np.array([0.02, 0.03, 0.07]), np.array([0.2, 0.3, 0.5]))
    assert same(kiln.interpret(vector_draws)(mine, *args), vector_draws(ref, *args))
    assert states_equal(mine, ref)


def large_choice(rng, pop, k):
    return rng.choice(pop, size=k, replace=False)


def test_choice_without_replacement_tail_shuffle_and_floyd():
    # pop > 10000 with a large sample: NumPy's tail shuffle; else Floyd's algorithm.
    f = kiln.qjit(large_choice)
    mine, ref = np.random.default_rng(7), np.random.default_rng(7)
    for pop, k in ((20000, 5000), (20000, 100), (10**12, 40), (5, 5), (5, 0)):
        assert same(f(mine, pop, k), large_choice(ref, pop, k)), (pop, k)
        assert states_equal(mine, ref)


def legacy_vectors(n):
    np.random.seed(n)
    return (np.random.multinomial(n, [0.1, 0.6, 0.3], size=2), np.random.dirichlet([1.0, 0.5], size=n),
            np.random.choice(n + 2, size=min(n, 2), replace=False, p=np.full(n + 2, 1.0 / (n + 2))))


def test_legacy_multinomial_dirichlet_and_weighted_choice():
    f = kiln.qjit(legacy_vectors)
    for n in SIZES[:3]:
        assert same(f(n), legacy_vectors(n)), n


def test_vector_draw_errors_are_numpys():
    with pytest.raises(ValueError, match="pvals < 0, pvals > 1 or pvals contains NaNs"):
        kiln.qjit(lambda rng, p: rng.multinomial(5, p))(np.random.default_rng(0), np.array([1.5, -0.5]))
    with pytest.raises(ValueError, match=r"sum\(pvals\[:-1\]\) > 1.0"):
        kiln.qjit(lambda rng: rng.multinomial(5, [0.7, 0.7, 0.1]))(np.random.default_rng(0))
    with pytest.raises(ValueError, match="alpha < 0"):
        kiln.qjit(lambda rng, a: rng.dirichlet(a))(np.random.default_rng(0), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="alpha <= 0"):
        kiln.qjit(lambda a: np.random.dirichlet(a))(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="Cannot take a larger sample than population when replace is False"):
        kiln.qjit(lambda rng, n: rng.choice(n, 4, replace=False))(np.random.default_rng(0), 3)
    with pytest.raises(ValueError, match="Fewer non-zero entries in p than size"):
        kiln.qjit(lambda rng, p: rng.choice(3, 3, replace=False, p=p))(np.random.default_rng(0),
                                                                        np.array([0.5, 0.5, 0.0]))
