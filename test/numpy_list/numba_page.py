"""The names the NumPy list covers: every entry of Numba's reference page
"Supported NumPy features" (numba/numba, docs/source/reference/numpysupported.rst)
and the additions issue 15 asks for beyond it.

In: nothing. Out: `SECTIONS`, the ordered (section title, [name, ...]) of the
page, `ADDITIONS` (section title, [name, ...]) of the issue, and `GONE`: the
page's names NumPy 2 no longer has, with what replaces them. A name that no
case covers shows as "not supported" in docs/numpy.md's table.
"""

from __future__ import annotations


def _names(prefix: str, text: str) -> list[str]:
    return [prefix + word for word in text.split()]


# Numba's page, section by section, in its order. "The corresponding top-level
# NumPy functions" of the calculation methods are on the page as well.
_CALCULATION = "all any argmax argmin conj conjugate cumprod cumsum max mean min nonzero prod std take var"

SECTIONS: list[tuple[str, list[str]]] = [
    ("Array attributes", _names("ndarray.", "dtype flags flat itemsize ndim shape size strides T real imag")),
    ("Array calculation methods", _names("ndarray.", _CALCULATION) + _names("numpy.", _CALCULATION + " sum")),
    ("Other array methods", _names("ndarray.", "argsort astype copy dot flatten item itemset ravel repeat "
                                               "reshape sort sum transpose view")),
    ("Linear algebra", _names("numpy.", "dot kron outer trace vdot") + ["ndarray.__matmul__"]
     + _names("numpy.linalg.", "cholesky cond det eig eigh eigvals eigvalsh inv lstsq matrix_power "
                               "matrix_rank norm pinv qr slogdet solve svd")),
    ("Reductions", _names("numpy.", "diff median nancumprod nancumsum nanmax nanmean nanmedian nanmin "
                                    "nanpercentile nanquantile nanprod nanstd nansum nanvar percentile quantile")),
    ("Other functions", _names("numpy.", """
        append arange argsort array array_equal asarray asfortranarray atleast_1d atleast_2d atleast_3d
        bartlett bincount blackman column_stack concatenate convolve copy corrcoef correlate count_nonzero
        cov cross delete diag digitize dstack dtype ediff1d empty empty_like expand_dims extract eye
        fill_diagonal flatten flatnonzero frombuffer full full_like hamming hanning histogram hstack
        identity kaiser interp linspace ndenumerate ndindex nditer ones ones_like partition ptp ravel
        repeat reshape roll roots round_ searchsorted select shape sinc sort stack take transpose trapz
        tri tril tril_indices tril_indices_from triu triu_indices triu_indices_from unique vander vstack
        where zeros zeros_like""")),
    ("Scalar constructors", _names("numpy.", "bool_ complex64 complex128 float32 float64 int8 int16 int32 "
                                             "int64 intc intp uint8 uint16 uint32 uint64 uintc uintp")),
    ("Machine parameters", _names("numpy.", "iinfo finfo MachAr")),
    ("numpy.random", _names("numpy.random.", """
        seed rand randint randn random random_sample ranf sample choice permutation shuffle beta binomial
        chisquare exponential f gamma geometric gumbel hypergeometric laplace logistic lognormal logseries
        multinomial negative_binomial normal pareto poisson power rayleigh standard_cauchy
        standard_exponential standard_gamma standard_normal standard_t triangular uniform vonmises wald
        weibull zipf""")),
    ("stride_tricks", ["numpy.lib.stride_tricks.as_strided"]),
    ("Ufuncs: math operations", _names("numpy.", """
        add subtract multiply divide logaddexp logaddexp2 true_divide floor_divide negative power remainder
        mod fmod abs absolute fabs rint sign conj exp exp2 log log2 log10 expm1 log1p sqrt square
        reciprocal conjugate""")),
    ("Ufuncs: trigonometric functions", _names("numpy.", """
        sin cos tan arcsin arccos arctan arctan2 hypot sinh cosh tanh arcsinh arccosh arctanh deg2rad
        rad2deg degrees radians""")),
    ("Ufuncs: bit-twiddling functions", _names("numpy.", "bitwise_and bitwise_or bitwise_xor bitwise_not "
                                                         "invert left_shift right_shift")),
    ("Ufuncs: comparison functions", _names("numpy.", """
        greater greater_equal less less_equal not_equal equal logical_and logical_or logical_xor
        logical_not maximum minimum fmax fmin""")),
    ("Ufuncs: floating functions", _names("numpy.", "isfinite isinf isnan signbit copysign nextafter modf "
                                                    "ldexp frexp floor ceil trunc spacing")),
]

# Issue 15's additions beyond the page ("and beyond it"), and the common
# functions its survey of a new user's calls found missing.
ADDITIONS: list[tuple[str, list[str]]] = [
    ("Data-dependent sizes", _names("numpy.", "nonzero flatnonzero argwhere unique compress extract setdiff1d "
                                              "intersect1d union1d isin trim_zeros")
     + ["ndarray.__getitem__ (boolean mask)", "ndarray.__setitem__ (boolean mask)"]),
    ("Shape and stacking", _names("numpy.", """
        pad tile repeat meshgrid mgrid ogrid split array_split hsplit vsplit dsplit flip fliplr flipud rot90
        append insert delete broadcast_arrays broadcast_to take_along_axis put_along_axis squeeze swapaxes
        moveaxis expand_dims diagonal""") + _names("ndarray.", "diagonal fill nbytes squeeze swapaxes")),
    ("Array functions", _names("numpy.", """
        einsum tensordot inner matmul select piecewise nan_to_num clip average logaddexp logaddexp2
        heaviside polyval isclose allclose array_equal round trapezoid""")),
    ("Ufunc methods and out=", ["ufunc.reduce", "ufunc.accumulate", "ufunc.outer", "ufunc.at",
                                "ufunc.reduceat", "ufunc out=", "numpy.matmul out=", "numpy.dot out="]),
    ("Linear algebra through LAPACK", _names("numpy.linalg.", "solve inv det slogdet cholesky qr eigh "
                                                              "eigvalsh svd lstsq pinv matrix_power "
                                                              "matrix_rank norm cond")),
    ("Random numbers in compiled code", ["numpy.random.default_rng"]),
]

# Names of the page that NumPy 2 removed: (what to use instead).
GONE: dict[str, str] = {
    "ndarray.itemset": "`a[idx] = v`",
    "numpy.flatten": "`ndarray.flatten`",
    "numpy.round_": "`numpy.round`",
    "numpy.trapz": "`numpy.trapezoid`",
    "numpy.MachAr": "`numpy.finfo`",
}


def page_names() -> list[str]:
    """Every name of Numba's page, once, in the page's order."""
    return list(dict.fromkeys(name for _, names in SECTIONS for name in names))
