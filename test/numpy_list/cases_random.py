"""The NumPy list, family "random": np.random's legacy functions (Numba's
page) and Generator methods, compiled and compared with NumPy from the same
seed (kiln's numbers are NumPy's bit for bit; test/test_random.py checks the
state after the call too).

Each case takes an int seed and seeds inside the function (`np.random.seed`
or `np.random.default_rng`), so NumPy's run and kiln's start from the same
state whatever the runner does with its arguments.
"""

from __future__ import annotations

import numpy as np

from test.numpy_list.case import Case


def _seed_and_size(n, rng):
    return int(rng.integers(2**32)), n


def _legacy(name: str, *params, on_numba_page: bool = True, **kwargs) -> Case:
    def fn(seed, n):
        np.random.seed(seed)
        return getattr(np.random, name)(*params, size=n, **kwargs)

    return Case(f"numpy.random.{name}", fn, _seed_and_size, "random", on_numba_page, rtol=0.0)


def _generator(name: str, *params, **kwargs) -> Case:
    def fn(seed, n):
        return getattr(np.random.default_rng(seed), name)(*params, size=n, **kwargs)

    return Case(f"numpy.random.Generator.{name}", fn, _seed_and_size, "random", False, rtol=0.0)


def _rand(seed, n):
    np.random.seed(seed)
    return np.random.rand(n), np.random.rand()


def _randn(seed, n):
    np.random.seed(seed)
    return np.random.randn(n), np.random.randn(n, 2)


def _seed(seed, n):
    np.random.seed(seed)
    first = np.random.random(n)
    np.random.seed(seed)
    return first, np.random.random(n)


def _shuffle(seed, x):
    np.random.seed(seed)
    np.random.shuffle(x)
    return x


def _permutation(seed, n):
    np.random.seed(seed)
    return np.random.permutation(n)


def _choice(seed, x):
    np.random.seed(seed)
    return np.random.choice(x, size=4)


def _choice_p(seed, x):
    np.random.seed(seed)
    return np.random.choice(x, size=6, p=np.full(x.shape[0], 1.0 / x.shape[0]))


def _choice_without_replacement(seed, x):
    np.random.seed(seed)
    return np.random.choice(x, size=x.shape[0] // 2, replace=False)


def _normal_array_loc(seed, x):
    return np.random.default_rng(seed).normal(x, 0.5)


def _multinomial(seed, n):
    np.random.seed(seed)
    return np.random.multinomial(n, [0.25, 0.75]), np.random.multinomial(20, [0.2, 0.3, 0.5], size=n)


def _dirichlet(seed, n):
    np.random.seed(seed)
    return np.random.dirichlet([0.5, 2.0, 1.0], size=n)


def _choice_p_without_replacement(seed, x):
    np.random.seed(seed)
    return np.random.choice(x, size=x.shape[0] // 2, replace=False, p=np.linspace(1.0, 2.0, x.shape[0]) /
                            np.linspace(1.0, 2.0, x.shape[0]).sum())


def _generator_multinomial(seed, n):
    rng = np.random.default_rng(seed)
    return (rng.multinomial(n, [0.25, 0.75]), rng.multinomial(20, [0.2, 0.3, 0.5], size=n),
            rng.multinomial(np.arange(n), [0.1, 0.9]), rng.multinomial(3, [[0.5, 0.5], [0.1, 0.9]], size=(n, 2)))


def _generator_dirichlet(seed, alpha):
    # alpha traced: NumPy's algorithm (normalized gammas, or stick breaking when
    # every alpha is below 0.1) is chosen when the code runs.
    rng = np.random.default_rng(seed)
    return rng.dirichlet(alpha, size=3), rng.dirichlet(alpha * 0.01, size=2), rng.dirichlet([0.05, 0.0, 0.02])


def _dirichlet_args(n, rng):
    return int(rng.integers(2**32)), rng.uniform(0.5, 3.0, n)


def _generator_choice(seed, x):
    rng = np.random.default_rng(seed)
    k = x.shape[0] // 2
    return (rng.choice(x, size=k, replace=False), rng.choice(x.shape[0], size=k, replace=False, shuffle=False),
            rng.choice(x, size=k, replace=False, p=np.full(x.shape[0], 1.0 / x.shape[0])), rng.choice(x, size=3))


def _default_rng(seed, n):
    rng = np.random.default_rng(seed)
    return rng.random(n), rng.integers(0, 10, size=n), rng.normal(size=n)


def _generator_shuffle(seed, x):
    np.random.default_rng(seed).shuffle(x)
    return x


def _floats(n, rng):
    return int(rng.integers(2**32)), np.arange(float(n))


CASES = [
    Case("numpy.random.seed", _seed, _seed_and_size, "random", True, rtol=0.0),
    Case("numpy.random.rand", _rand, _seed_and_size, "random", True, rtol=0.0),
    Case("numpy.random.randn", _randn, _seed_and_size, "random", True, rtol=0.0),
    _legacy("randint", 0, 100),
    _legacy("randint", -5, 2**40),
    _legacy("random"),
    _legacy("random_sample"),
    _legacy("ranf"),
    _legacy("sample"),
    Case("numpy.random.choice", _choice, _floats, "random", True, rtol=0.0, sizes=(1, 5, 17)),
    Case("numpy.random.choice", _choice_p, _floats, "random", True, rtol=0.0, sizes=(1, 5, 17),
         note="p= and replace=False too"),
    Case("numpy.random.choice", _choice_without_replacement, _floats, "random", True, rtol=0.0),
    Case("numpy.random.permutation", _permutation, _seed_and_size, "random", True, rtol=0.0),
    Case("numpy.random.shuffle", _shuffle, _floats, "random", True, rtol=0.0),
    _legacy("beta", 0.5, 0.7),
    _legacy("beta", 2.0, 3.0),
    _legacy("binomial", 10, 0.3),
    _legacy("chisquare", 3.0),
    _legacy("exponential", 2.0),
    _legacy("f", 3.0, 4.0),
    _legacy("gamma", 2.0, 3.0),
    _legacy("geometric", 0.3),
    _legacy("gumbel", 1.0, 2.0),
    _legacy("hypergeometric", 10, 5, 7),
    _legacy("laplace", 1.0, 2.0),
    _legacy("logistic", 1.0, 2.0),
    _legacy("lognormal", 0.0, 1.0),
    _legacy("logseries", 0.5),
    Case("numpy.random.multinomial", _multinomial, _seed_and_size, "random", True, rtol=0.0),
    Case("numpy.random.dirichlet", _dirichlet, _seed_and_size, "random", False, rtol=0.0),
    Case("numpy.random.choice", _choice_p_without_replacement, _floats, "random", True, rtol=0.0),
    _legacy("negative_binomial", 5, 0.5),
    _legacy("normal", 1.0, 2.0),
    _legacy("pareto", 2.0),
    _legacy("poisson", 4.0),
    _legacy("power", 2.0),
    _legacy("rayleigh", 2.0),
    _legacy("standard_cauchy"),
    _legacy("standard_exponential"),
    _legacy("standard_gamma", 0.5),
    _legacy("standard_normal"),
    _legacy("standard_t", 3.0),
    _legacy("triangular", 0.0, 1.0, 3.0),
    _legacy("uniform", -1.0, 3.0),
    _legacy("vonmises", 0.3, 1.0),
    _legacy("wald", 1.0, 2.0),
    _legacy("weibull", 1.5),
    _legacy("zipf", 2.0),
    Case("numpy.random.default_rng", _default_rng, _seed_and_size, "random", False, rtol=0.0),
    _generator("random"),
    _generator("random", dtype=np.float32),
    _generator("integers", 0, 100),
    _generator("integers", -3, 3, dtype=np.int8, endpoint=True),
    _generator("normal", 1.0, 2.0),
    Case("numpy.random.Generator.normal", _normal_array_loc, _floats, "random", False, rtol=0.0,
         note="array parameters broadcast as NumPy's"),
    _generator("standard_normal"),
    _generator("uniform", -1.0, 3.0),
    _generator("exponential", 2.0),
    _generator("standard_exponential"),
    _generator("gamma", 2.0, 3.0),
    _generator("beta", 2.0, 3.0),
    _generator("poisson", 4.0),
    _generator("binomial", 10, 0.3),
    Case("numpy.random.Generator.shuffle", _generator_shuffle, _floats, "random", False, rtol=0.0),
    Case("numpy.random.Generator.multinomial", _generator_multinomial, _seed_and_size, "random", False, rtol=0.0),
    Case("numpy.random.Generator.dirichlet", _generator_dirichlet, _dirichlet_args, "random", False, rtol=0.0),
    Case("numpy.random.Generator.choice", _generator_choice, _floats, "random", False, rtol=0.0, sizes=(1, 5, 17),
         note="replace=False (Floyd's sampler, a tail shuffle for large samples), p= with or without replacement"),
]
