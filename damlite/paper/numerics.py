"""Where floating point breaks: formats, overflow and underflow frontiers, mpmath references.

The Dense Associative Memory evaluates ``F_n(x) = x**n`` at similarity scores ``x``.
In the *original* network ``x`` is an overlap of up to N (a state equal to a stored
pattern), so the largest term is ``N**n``; in the *normalized* network ``x`` is an
overlap divided by N, at most 1, and the danger moves to the other end: small
overlaps raised to a large power round to zero.

This module owns that arithmetic. Everything that decides a frontier is computed
exactly (Python integers, or mpmath at a precision chosen large enough), never in
the floating-point format whose limits it describes.

Formats
-------
:data:`FORMATS` describes float16, bfloat16, float32 and float64 by their bit
layout (exponent bits, stored mantissa bits). bfloat16 has no NumPy dtype; it is
float32's 8 exponent bits with 7 mantissa bits, and :func:`round_to_format`
emulates rounding to it (round to nearest, ties to even, overflow to inf).

Frontiers (all "largest safe n", computed exactly)
--------------------------------------------------
:func:`overflow_frontier` ``(N, fmt, K=1, term="largest")``
    largest n with ``K * N**n <= max(fmt)``. ``term="largest"`` is the term
    F_n(N) of a state equal to a stored pattern; ``term="second"`` uses the other
    term of the same pair, ``(N - 2)**n``: beyond it *both* terms are inf and the
    energy difference is ``inf - inf = NaN``. ``K > 1`` bounds a sum over K
    memories that all reach full overlap (the energy ``-sum_mu F(zeta^mu . xi)``).
:func:`underflow_frontier` ``(N, fmt, overlap, level="zero")``
    for the normalized network's term ``(overlap / N)**n``: largest n for which
    it does not round to exactly 0 (``level="zero"``: ``x**n > smallest_subnormal/2``)
    or is still a normal number with full precision (``level="normal"``:
    ``x**n >= smallest_normal``). ``overlap = N - 2`` is the smaller term of a
    stored pattern, ``((N-2)/N)**n = (1 - 2/N)**n``; overlaps of order sqrt(N)
    (a random state) or 0.1 sqrt(N) (memories at their initial scale) vanish much
    sooner.
:func:`resolution_limit` ``(fmt)``
    largest N for which the normalized argument ``1 - 2/N`` still rounds to a
    number below 1 (otherwise u+ and u- of a stored pattern are the same number).

References
----------
:func:`reference_energy_difference` evaluates the update's energy differences
in mpmath at any precision, from the float64 inputs converted exactly.
:func:`precision_study` compares damlite's float32/float64 kernels with it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mpf

__all__ = [
    "FloatFormat",
    "FORMATS",
    "FORMAT_NAMES",
    "get_format",
    "round_to_format",
    "emulated_power",
    "exact_power",
    "largest_power_at_most",
    "smallest_power_below",
    "overflow_frontier",
    "frontier_curve",
    "frontier_table",
    "underflow_frontier",
    "underflow_table",
    "resolution_limit",
    "stored_pattern_terms",
    "reference_energy_difference",
    "relative_error",
    "mp_sign",
    "PrecisionStudy",
    "precision_study",
    "underflow_study",
    "Table",
]


# --------------------------------------------------------------------- formats
@dataclass(frozen=True)
class FloatFormat:
    """A binary IEEE-style floating-point format from its bit layout.

    ``mantissa_bits`` counts the stored fraction bits (precision p = mantissa_bits + 1).
    All limits are exact ``mpmath.mpf`` values (powers of two need no rounding).

    >>> fmt = FORMATS["bfloat16"]
    >>> fmt.exponent_bits, fmt.mantissa_bits, float(fmt.smallest_normal) == 2.0**-126
    (8, 7, True)
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    numpy_dtype: str | None = None

    @property
    def emax(self) -> int:
        """Largest unbiased exponent of a finite number."""
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number."""
        return 1 - self.emax

    @property
    def max(self) -> mpf:
        """Largest finite value, (2 - 2**-m) 2**emax."""
        return mpmath.ldexp(mpf(2) - mpmath.ldexp(1, -self.mantissa_bits), self.emax)

    @property
    def smallest_normal(self) -> mpf:
        """2**emin: below it numbers lose precision (subnormals)."""
        return mpmath.ldexp(1, self.emin)

    @property
    def smallest_subnormal(self) -> mpf:
        """2**(emin - m): anything below half of it rounds to 0."""
        return mpmath.ldexp(1, self.emin - self.mantissa_bits)

    @property
    def epsilon(self) -> mpf:
        """Spacing of the numbers just above 1, 2**-m."""
        return mpmath.ldexp(1, -self.mantissa_bits)

    def describe(self) -> dict:
        """The format's numbers as Python values (floats may not hold every limit exactly)."""
        return {
            "format": self.name,
            "bits": 1 + self.exponent_bits + self.mantissa_bits,
            "exponent bits": self.exponent_bits,
            "mantissa bits": self.mantissa_bits,
            "largest finite": float(self.max),
            "smallest normal": float(self.smallest_normal),
            "smallest subnormal": float(self.smallest_subnormal),
            "epsilon": float(self.epsilon),
            "decimal digits": round(math.log10(2) * (self.mantissa_bits + 1), 2),
        }


#: The four formats by name, each a :class:`FloatFormat` (bit widths, range, resolution).
FORMATS = {
    "float16": FloatFormat("float16", 5, 10, "float16"),
    "bfloat16": FloatFormat("bfloat16", 8, 7, None),
    "float32": FloatFormat("float32", 8, 23, "float32"),
    "float64": FloatFormat("float64", 11, 52, "float64"),
}
FORMAT_NAMES = tuple(FORMATS)


def get_format(fmt) -> FloatFormat:
    """A :class:`FloatFormat` from itself, its name, or a NumPy dtype."""
    if isinstance(fmt, FloatFormat):
        return fmt
    name = fmt if isinstance(fmt, str) else np.dtype(fmt).name
    if name not in FORMATS:
        raise ValueError(f"format must be one of {FORMAT_NAMES}, got {fmt!r}")
    return FORMATS[name]


def round_to_format(x, fmt) -> np.ndarray:
    """Round float64 values to ``fmt`` (nearest, ties to even, subnormals, overflow to inf).

    Returns float64 values that are exactly representable in ``fmt``: the way to
    emulate bfloat16, which NumPy lacks. For formats with at most 24 significant
    bits every step below is exact in float64 (scaling by powers of two, then
    ``np.rint``, which rounds ties to even).
    """
    f = get_format(fmt)
    x = np.asarray(x, dtype=np.float64)
    if f.name == "float64":
        return x.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        _, k = np.frexp(x)  # x = frac * 2**k with 0.5 <= |frac| < 1, so x's exponent is k - 1
        e = np.maximum(k - 1, f.emin)  # below the normal range the quantum stays 2**(emin - m)
        quantum_exp = (e - f.mantissa_bits).astype(np.int64)
        y = np.ldexp(np.rint(np.ldexp(x, -quantum_exp)), quantum_exp)
        y = np.where(np.abs(y) > float(f.max), np.copysign(np.inf, x), y)
        return np.where(np.isfinite(x), y, x)


def emulated_power(x, n: int, fmt) -> np.ndarray:
    """``x**n`` by repeated squaring, rounding every product to ``fmt`` (as a GPU would).

    For float16/bfloat16/float32 each product of two representable numbers is
    exact in float64, so rounding it once gives the correctly rounded product.
    """
    f = get_format(fmt)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        base = round_to_format(x, f)
        result = np.ones_like(base)
        while True:
            if n & 1:
                result = round_to_format(result * base, f)
            n >>= 1
            if not n:
                return result
            base = round_to_format(base * base, f)


# ------------------------------------------------------------ exact arithmetic
def _to_mpf(value) -> mpf:
    """An exact mpf from an int, float, Fraction, str or mpf (Fraction at 4x working precision)."""
    if isinstance(value, Fraction):
        with mpmath.workprec(4 * mpmath.mp.prec + 64):
            return mpf(value.numerator) / value.denominator
    return mpf(value)


def exact_power(base, n: int) -> mpf:
    """``base**n`` exactly, as an mpf (the precision grows to hold every bit).

    >>> int(exact_power(10_000, 30)) == 10**120
    True
    """
    b = _to_mpf(base)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    mantissa_bits = max(int(b.man).bit_length(), 1) if b != 0 else 1
    with mpmath.workprec(max(53, mantissa_bits * max(n, 1) + 8)):
        return b**n


def largest_power_at_most(base, limit, count=1) -> int:
    """Largest integer n >= 0 with ``count * base**n <= limit`` (base > 1), exactly.

    Returns -1 when even ``count`` alone exceeds ``limit``.
    """
    b, lim, c = _to_mpf(base), _to_mpf(limit), _to_mpf(count)
    if b <= 1:
        raise ValueError(f"base must be > 1, got {base!r}")
    if c > lim:
        return -1
    with mpmath.workprec(128):
        guess = int(mpmath.floor(mpmath.log(lim / c) / mpmath.log(b)))
    guess = max(guess, 0)
    while c * exact_power(b, guess + 1) <= lim:
        guess += 1
    while guess > 0 and c * exact_power(b, guess) > lim:
        guess -= 1
    return guess


def smallest_power_below(x, threshold, *, strict=False, prec=256) -> int:
    """Largest integer n >= 0 with ``x**n >= threshold`` (``> threshold`` if strict), 0 < x < 1.

    The powers are evaluated at ``prec`` bits (exact for dyadic x such as 0.5), so
    only an x**n within about 2**-(prec - 20) of the threshold could be misjudged.
    (The name says where it is used: the n after it is the first that falls below.)
    """
    with mpmath.workprec(prec):
        xv, t = _to_mpf(x), _to_mpf(threshold)
        if not (0 < xv < 1):
            raise ValueError(f"x must lie in (0, 1), got {x!r}")

        def ok(k):
            value = xv**k
            return value > t if strict else value >= t

        if not ok(0):
            return -1
        guess = max(int(mpmath.floor(mpmath.log(t) / mpmath.log(xv))), 0)
        while ok(guess + 1):
            guess += 1
        while guess > 0 and not ok(guess):
            guess -= 1
    return guess


# ------------------------------------------------------------------- overflow
def stored_pattern_terms(N: int, n: int):
    """Exact ``(N**n, (N-2)**n)``: the two terms F_n(s +- 1) when the state is a stored pattern.

    With s = N - 1 (every other neuron agrees) the arguments are N and N - 2, and
    the energy difference of that memory is ``+-(N**n - (N-2)**n)``.
    """
    return exact_power(N, n), exact_power(N - 2, n)


def overflow_frontier(N, fmt="float32", *, K=1, term="largest") -> int:
    """Largest n for which the original network's terms stay finite in ``fmt``.

    ``term="largest"``: ``K * N**n <= max`` (the largest term of a state equal to
    a stored pattern; beyond it that energy difference is +-inf or NaN).
    ``term="second"``: ``K * (N - 2)**n <= max``; beyond it both terms of the
    pair are inf and the difference is NaN. ``K`` multiplies the term (a sum of
    K memories at full overlap). "Safe" means the exact value is at most the
    largest finite number, so no rounding question arises.

    >>> overflow_frontier(100, "float32")  # 100**19 = 1e38 < 3.4e38 < 1e40
    19
    """
    f = get_format(fmt)
    if term not in ("largest", "second"):
        raise ValueError(f"term must be 'largest' or 'second', got {term!r}")
    base = N if term == "largest" else N - 2
    return largest_power_at_most(base, f.max, K)


def frontier_curve(Ns, fmt="float32", *, K=1, term="largest") -> np.ndarray:
    """:func:`overflow_frontier` for each N in ``Ns`` (integers), as an int array."""
    return np.array([overflow_frontier(int(N), fmt, K=K, term=term) for N in Ns], dtype=np.int64)


# ------------------------------------------------------------------ underflow
def underflow_frontier(N, fmt="float32", *, overlap=None, level="zero") -> int:
    """Largest n for which the normalized network's term ``(overlap/N)**n`` survives in ``fmt``.

    ``level="zero"``: the exact value exceeds half the smallest subnormal, so it
    does not round to 0 (the next n gives exactly 0 or, at most, one subnormal
    step). ``level="normal"``: the value is at least the smallest normal number
    (beyond it the term is subnormal and loses significant bits). ``overlap``
    defaults to N - 2, the smaller term ``(1 - 2/N)**n`` of a stored pattern;
    it may be any real in (0, N). Rounding of ``overlap/N`` itself is ignored:
    the frontier is about the exact term.

    >>> underflow_frontier(100, "float32", overlap=10)  # 0.1**45 > 2**-150 > 0.1**46
    45
    """
    f = get_format(fmt)
    m = N - 2 if overlap is None else overlap
    with mpmath.workprec(256):
        x = _to_mpf(Fraction(m).limit_denominator(10**12) if isinstance(m, float) else Fraction(m)) / N
    if level == "zero":
        return smallest_power_below(x, f.smallest_subnormal / 2, strict=True)
    if level == "normal":
        return smallest_power_below(x, f.smallest_normal)
    raise ValueError(f"level must be 'zero' or 'normal', got {level!r}")


def resolution_limit(fmt) -> int:
    """Largest N for which ``1 - 2/N`` rounds to a number below 1 in ``fmt``.

    Numbers just below 1 are spaced 2**-(m+1); ``1 - d`` rounds to 1 once d is at
    most half of that spacing (a tie goes to the even neighbour, 1). Beyond this N
    the normalized arguments of a stored pattern, 1 and (N-2)/N, are equal.
    """
    f = get_format(fmt)
    # 1 - 2/N < 1 after rounding  <=>  2/N > 2**-(m+2)  <=>  N < 2**(m+3)
    return 2 ** (f.mantissa_bits + 3) - 1


# --------------------------------------------------------------------- tables
class Table:
    """A small table that prints as text and renders as HTML in notebooks (no pandas)."""

    def __init__(self, header, rows, caption=""):
        self.header = list(header)
        self.rows = [list(r) for r in rows]
        self.caption = caption

    def column(self, name):
        i = self.header.index(name)
        return [r[i] for r in self.rows]

    def __str__(self):
        cells = [self.header] + [[str(c) for c in r] for r in self.rows]
        widths = [max(len(str(row[i])) for row in cells) for i in range(len(self.header))]
        lines = ["  ".join(str(c).rjust(w) for c, w in zip(row, widths)) for row in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return (self.caption + "\n" if self.caption else "") + "\n".join(lines)

    __repr__ = __str__

    #: Inline styles, so that the table renders with room between its cells and with
    #: numbers such as 2.225e-308 on one line without any stylesheet (Jupyter, Colab,
    #: the book's HTML). Header cells may wrap between words, so that a wide table
    #: still fits the page; numeric columns are right-aligned, text columns left-aligned.
    CELL_STYLE = "padding: 0.2em 0.6em; white-space: nowrap"
    HEADER_STYLE = ("padding: 0.2em 0.6em; white-space: normal; vertical-align: bottom; "
                    "border-bottom: 1px solid currentColor")
    TABLE_STYLE = "border-collapse: collapse; margin: 0.5em 0"

    def _repr_html_(self):
        import html  # noqa: PLC0415

        def numeric(value):
            try:
                float(str(value))
            except ValueError:
                return False
            return True

        align = ["right" if self.rows and all(numeric(r[i]) for r in self.rows) else "left"
                 for i in range(len(self.header))]

        def cell(tag, value, i):
            style = self.HEADER_STYLE if tag == "th" else self.CELL_STYLE
            return f'<{tag} style="{style}; text-align: {align[i]}">{html.escape(str(value))}</{tag}>'

        head = "".join(cell("th", h, i) for i, h in enumerate(self.header))
        body = "".join("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>"
                       for r in self.rows)
        cap = (f'<caption style="caption-side: top; text-align: left; padding: 0.2em 0">'
               f"{html.escape(self.caption)}</caption>") if self.caption else ""
        return (f'<table style="{self.TABLE_STYLE}">{cap}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")


def frontier_table(Ns=(100, 784, 10_000), formats=FORMAT_NAMES, *, K=None) -> Table:
    """Largest safe n per N and format: for N**n, for (N-2)**n (NaN beyond), and for K N**n."""
    rows = []
    for N in Ns:
        # labels in Unicode superscripts: a table cell shows no LaTeX
        quantities = [("Nⁿ", 1, "largest"), ("(N − 2)ⁿ: NaN beyond", 1, "second")]
        if K is not None:
            quantities.append((f"{K} Nⁿ", K, "largest"))
        for label, k, term in quantities:
            rows.append([N, label] + [overflow_frontier(N, f, K=k, term=term) for f in formats])
    return Table(["N", "term"] + list(formats), rows, caption="largest n with the term finite")


def underflow_table(N, overlaps, formats=FORMAT_NAMES, *, level="zero") -> Table:
    """Largest n per similarity score s and format for which (s/N)**n survives (see :func:`underflow_frontier`).

    ``overlaps`` maps a label to a score s (the ``overlap`` argument of :func:`underflow_frontier`).
    """
    rows = []
    for label, m in overlaps.items():
        rows.append([label, f"{float(m) / N:.3g}"] + [underflow_frontier(N, f, overlap=m, level=level) for f in formats])
    cap = "largest n with the term " + ("not rounded to 0" if level == "zero" else "still a normal number")
    return Table(["score s", "x = s/N"] + list(formats), rows, caption=cap)


# ------------------------------------------------------------- mpmath reference
def _mp_interaction(interaction, n, epsilon):
    """F as a function of one mpf, from damlite's interaction name or instance."""
    from ..interactions import make_interaction  # noqa: PLC0415 (only for name and parameters)

    inter = make_interaction(interaction, n, epsilon)
    name = inter.name
    if name == "polynomial":
        k = inter.n
        return lambda x: x**k
    if name == "rectified_polynomial":
        k = inter.n
        return lambda x: x**k if x > 0 else mpf(0)
    if name == "leaky_rectified_polynomial":
        k, slope = inter.n, mpf(inter.negative_slope)
        return lambda x: x**k if x >= 0 else slope * x
    if name == "exponential":
        return mpmath.exp
    raise ValueError(f"no mpmath reference for interaction {name!r}")


def _dyadic_integers(values):
    """float64 values as (object array of Python ints, E) with values == ints / 2**E exactly."""
    flat = [float(v).as_integer_ratio() for v in np.asarray(values, dtype=np.float64).ravel()]
    E = max((den.bit_length() - 1 for _, den in flat), default=0)
    ints = np.empty(len(flat), dtype=object)
    for k, (num, den) in enumerate(flat):
        ints[k] = num << (E - (den.bit_length() - 1))
    return ints.reshape(np.shape(values)), E


def reference_energy_difference(memories, states, interaction="polynomial", n=2, scale=1, *,
                                epsilon=1e-2, neurons=None, dps=60, return_max_argument=False):
    """Energy differences in mpmath: ``Delta[b, i] = sum_mu F(a(s + zeta_i)) - F(a(s - zeta_i))``.

    ``memories`` (K, N) and ``states`` (B, N) are float64 values taken exactly
    (as integers times a power of two), so ``s = sum_{j != i} zeta_j xi_j`` and
    ``s +- zeta_i`` are exact; ``scale`` a may be a ``Fraction`` (``Fraction(1, N)``
    for the normalized network) or the string ``"1/N"``. F and the sum over
    memories then run in mpmath at ``dps`` significant digits. Returns an object
    array of mpf, shape (B, M) for the M neurons in ``neurons`` (a slice or an
    index list; default all); with ``return_max_argument`` also the largest
    ``|a (s +- zeta_i)|`` over the memories, per entry (the adaptive scaling's
    divisor). Plain loops: keep 2 K B M below ~10**5.
    """
    zeta = np.asarray(memories, dtype=np.float64)
    xi = np.asarray(states, dtype=np.float64)
    if zeta.ndim != 2 or xi.ndim != 2 or zeta.shape[1] != xi.shape[1]:
        raise ValueError("memories (K, N) and states (B, N) must share N")
    K, N = zeta.shape
    B = xi.shape[0]
    cols = list(range(N)[neurons]) if isinstance(neurons, slice) else (
        list(range(N)) if neurons is None else [int(i) for i in neurons])
    F = _mp_interaction(interaction, n, epsilon)
    Z, ez = _dyadic_integers(zeta)
    X, ex = _dyadic_integers(xi)
    d = X.dot(Z.T)  # (B, K) exact integers: d / 2**(ez + ex) is the dot product
    out = np.empty((B, len(cols)), dtype=object)
    biggest = np.empty((B, len(cols)), dtype=object)
    with mpmath.workdps(dps):
        a = _to_mpf(Fraction(1, N)) if isinstance(scale, str) and scale == "1/N" else _to_mpf(scale)
        unit = a * mpmath.ldexp(1, -(ez + ex))
        shift = 1 << ex  # zeta_i alone, on the common denominator 2**(ez + ex)
        for b in range(B):
            for c, i in enumerate(cols):
                terms, top = [], mpf(0)
                for mu in range(K):
                    s = d[b, mu] - Z[mu, i] * X[b, i]
                    plus, minus = unit * (s + Z[mu, i] * shift), unit * (s - Z[mu, i] * shift)
                    terms.append(F(plus) - F(minus))
                    top = max(top, abs(plus), abs(minus))
                out[b, c] = mpmath.fsum(terms)
                biggest[b, c] = top
    return (out, biggest) if return_max_argument else out


def relative_error(approx, reference) -> np.ndarray:
    """``|approx - ref| / |ref|`` per entry, computed in mpmath, as float64.

    inf or NaN in ``approx`` gives inf; where ``ref == 0`` the error is 0 if
    ``approx == 0`` and inf otherwise.
    """
    approx = np.asarray(approx, dtype=np.float64)
    ref = np.asarray(reference, dtype=object)
    out = np.empty(approx.shape, dtype=np.float64)
    for idx in np.ndindex(approx.shape):
        x, r = approx[idx], ref[idx]
        if not math.isfinite(x):
            out[idx] = math.inf
        elif r == 0:
            out[idx] = 0.0 if x == 0 else math.inf
        else:
            out[idx] = float(abs(mpf(x) - r) / abs(r))
    return out


def mp_sign(reference) -> np.ndarray:
    """Signs (-1, 0, +1) of an object array of mpf, as int64 (float conversion could underflow)."""
    return np.vectorize(lambda r: int(mpmath.sign(r)), otypes=[np.int64])(np.asarray(reference, dtype=object))


# --------------------------------------------------------------- precision study
@dataclass
class PrecisionStudy:
    """Results of :func:`precision_study`; arrays indexed [configuration, n].

    ``configs`` are (variant, dtype) labels, variant in {"original", "normalized",
    "adaptive"} ("adaptive" is the normalized network with per-neuron rescaling).
    ``median_error``/``max_error``: relative error of Delta against mpmath;
    ``sign_errors``: decisions sign(Delta) (sign(0) = +1) that differ from the
    exact ones; ``nonfinite``: entries that are inf or NaN; ``zeros``: entries
    that are exactly 0 although the exact value is not; ``entries``: per n.
    """

    ns: np.ndarray
    configs: list
    median_error: np.ndarray
    max_error: np.ndarray
    sign_errors: np.ndarray
    nonfinite: np.ndarray
    zeros: np.ndarray
    entries: int
    N: int
    K: int
    B: int

    def summary(self) -> Table:
        rows = []
        for c, (variant, dtype) in enumerate(self.configs):
            for j, n in enumerate(self.ns):
                rows.append([variant, dtype, int(n), f"{self.median_error[c, j]:.2g}", f"{self.max_error[c, j]:.2g}",
                             int(self.sign_errors[c, j]), int(self.nonfinite[c, j]), int(self.zeros[c, j])])
        return Table(["variant", "dtype", "n", "median rel. error", "max rel. error", "sign errors",
                      "inf/NaN", "zeros"], rows)


def _decision(delta):
    return np.where(delta > 0, 1, np.where(delta < 0, -1, 1))


def precision_study(ns, *, N=100, K=10, B=8, dtypes=("float32", "float64"),
                    variants=("original", "normalized", "adaptive"), interaction="polynomial",
                    memory_std=0.5, random_state=0, dps=60) -> PrecisionStudy:
    """Energy differences of random networks in float32/float64 against mpmath, as n grows.

    Memories are N(0, memory_std**2) draws clipped to [-1, 1] (continuous, like
    trained memories), states random +-1. Each (variant, dtype) is run through
    damlite's kernel :func:`damlite.network.energy_difference`; the exact values
    come from :func:`reference_energy_difference`, once per n: the normalized
    network's exact values are the original's times (1/N)**n, the adaptive
    ones the original's divided by ``(largest |argument|)**n``, per entry.
    """
    from ..interactions import make_interaction  # noqa: PLC0415
    from ..network import energy_difference  # noqa: PLC0415

    rng = np.random.default_rng(random_state)
    memories = np.clip(rng.normal(0.0, memory_std, size=(K, N)), -1.0, 1.0)
    states = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    configs = [(v, d) for v in variants for d in dtypes]
    shape = (len(configs), len(ns))
    med, mx = np.zeros(shape), np.zeros(shape)
    sign_err, nonfinite, zeros = (np.zeros(shape, dtype=np.int64) for _ in range(3))
    for j, n in enumerate(ns):
        ref1, top = reference_energy_difference(memories, states, interaction, int(n), 1, dps=dps,
                                                return_max_argument=True)
        exact_sign = _decision(mp_sign(ref1))
        ref_zero = mp_sign(ref1) == 0
        with mpmath.workdps(dps):
            refs = {"original": ref1,
                    "normalized": ref1 * (mpf(1) / N) ** int(n),
                    "adaptive": np.array([[r / t ** int(n) if t else r for r, t in zip(rr, tt)]
                                          for rr, tt in zip(ref1, top)], dtype=object)}
        inter = make_interaction(interaction, int(n))
        for c, (variant, dtype) in enumerate(configs):
            mem = memories.astype(dtype)[None]
            st = states.astype(dtype)
            scale = 1.0 if variant == "original" else 1.0 / N
            delta = np.asarray(energy_difference(mem, st, inter, scale, rescale=variant == "adaptive")[0],
                               dtype=np.float64)
            err = relative_error(delta, refs[variant])
            med[c, j], mx[c, j] = np.median(err), np.max(err)
            with np.errstate(invalid="ignore"):
                sign_err[c, j] = int(np.sum((_decision(delta) != exact_sign) | ~np.isfinite(delta)))
            nonfinite[c, j] = int(np.sum(~np.isfinite(delta)))
            zeros[c, j] = int(np.sum((delta == 0) & ~ref_zero))
    return PrecisionStudy(np.asarray(ns), configs, med, mx, sign_err, nonfinite, zeros, B * N, N, K, B)


# ---------------------------------------------------------------- underflow study
def underflow_study(ns, *, N=100, K=20, B=10, dtypes=("float32", "float16"), scalings=("fixed", "adaptive"),
                    memory_std=0.1, random_state=1, dps=60, backend="auto") -> Table:
    """The normalized network at the start of training, in low precision, as n grows.

    Memories are N(0, memory_std**2) draws clipped to [-1, 1] (damlite's default
    initialisation), the states B random +-1 patterns. For each n, dtype and
    scaling the estimator's :meth:`~damlite.DenseAssociativeMemory.energy_difference`
    is compared with :func:`reference_energy_difference`. Columns: entries that
    are exactly 0 (decided by the sign(0) convention), update decisions (sign(0)
    = +1) that differ from the exact ones, and whether damlite warned
    (:class:`damlite.NumericalUnderflowWarning`). Entries: B N per row.
    """
    import warnings  # noqa: PLC0415

    from ..backend import to_numpy  # noqa: PLC0415
    from ..model import DenseAssociativeMemory, NumericalUnderflowWarning  # noqa: PLC0415

    rng = np.random.default_rng(random_state)
    states = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    memories = np.clip(rng.normal(0.0, memory_std, size=(K, N)), -1.0, 1.0)
    rows = []
    for n in ns:
        exact = _decision(mp_sign(reference_energy_difference(memories, states, "polynomial", int(n), "1/N",
                                                              dps=dps)))
        for dtype in dtypes:
            for scaling in scalings:
                dam = DenseAssociativeMemory(K, n=int(n), interaction="polynomial", variant="normalized",
                                             dtype=dtype, scaling=scaling, backend=backend)
                dam.memories_ = memories
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", NumericalUnderflowWarning)
                    delta = to_numpy(dam.energy_difference(states)).astype(np.float64)
                warned = any(issubclass(w.category, NumericalUnderflowWarning) for w in caught)
                rows.append([int(n), dtype, scaling, int(np.sum(delta == 0)),
                             int(np.sum(_decision(delta) != exact)), "yes" if warned else "no"])
    return Table(["n", "dtype", "scaling", "Δ exactly 0", "wrong update sign", "warning"], rows,
                 caption=f"normalized network, N={N}, K={K} memories ~ N(0, {memory_std}²), {B * N} entries per row")
