r"""The training monitor: after ``fit``, name a failure in one line (what happened, the likely cause, the fix).

It reads what the fit already has, the loss of every epoch, and makes one pass of energy differences
over at most ``MAX_ROWS`` training rows (fewer for large networks: about ``BUDGET`` terms F), plus,
for an associative memory whose F is not homogeneous, one pass of the update rule over the same rows
(a homogeneous F gives the update's signs at the learning scale). At most one ConvergenceWarning per
fit, for the first failure that holds, in the order of the table on the API page (book/api.md, "What
a fit checks", whose thresholds a test compares with the constants below): frozen, rose, died, one
class, not fixed points, still falling steeply. The advice names the cause the numbers point to: the
original network given the normalized network's temperature, outputs vanished or saturated, steps
that overshoot, a loss still falling (more epochs), a classifier's inputs not symmetric about 0.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .backend import to_numpy
from .network import energy_difference, quiet_numpy
from .validation import user_stacklevel

__all__ = ["BUDGET", "MAX_ROWS", "CurveShape", "EXP_NORMALIZED", "InputRangeWarning", "LearningPass", "NormalizationWarning", "NumericalOverflowError",
           "NumericalUnderflowWarning", "input_range_hint", "learning_pass", "overflow_error", "read_curve", "review_fit", "warn_underflow",
           "warn_input_range"]


def _convergence_warning():
    """scikit-learn's ConvergenceWarning (damlite's stand-in without it), imported when a warning is given: importing
    scikit-learn takes ~1.3 s, which a process that never warns (the command line, the sweep engine) need not pay."""
    from ._sklearn import ConvergenceWarning  # noqa: PLC0415

    return ConvergenceWarning


class NumericalOverflowError(FloatingPointError):
    """The network's numbers left the floating-point range (inf or NaN)."""


class NumericalUnderflowWarning(RuntimeWarning):
    """Terms of the energy difference rounded to zero, leaving sign(0) to decide."""


class InputRangeWarning(UserWarning):
    """A classifier's inputs are not symmetric about 0 (X in [0, 1], say): rescale them to [-1, 1]."""


_MAX = {"float16": 65504.0, "float32": 3.4028235e38, "float64": 1.7976931348623157e308}


def overflow_error(est, what, N):
    """NumericalOverflowError for ``what``, with N, n, dtype and, for the original network, the size of N**n."""
    degree = est.interaction_.degree
    dtype = est._dtype_name
    hint = ""
    if degree is not None and est.variant == "original":
        hint = (f" Similarity scores reach about N = {N}, and F grows like N**n = 10**{degree * np.log10(N):.1f}"
                f" against the {dtype} maximum {_MAX.get(dtype, float('nan')):.3g}.")
    return NumericalOverflowError(
        f"{what} overflowed: inf/NaN in the {est.variant} network with N={N}, n={est.n}, "
        f"interaction={est.interaction_.name}, dtype={dtype}.{hint} {overflow_advice(est.variant)}"
    )


def overflow_advice(variant) -> str:
    """What to try after an overflow: the normalized network only where this one is the original."""
    if variant == "original":
        return "Use variant='normalized', a wider dtype, or scaling='adaptive' (updates)."
    return "Use a wider dtype, a higher temperature, or scaling='adaptive' (updates)."


def warn_underflow(est, N):
    """NumericalUnderflowWarning: some update was decided by sign(0) because terms rounded to 0."""
    warnings.warn(
        f"underflow: terms of the energy difference rounded to 0 in the {est.variant} network "
        f"(N={N}, n={est.n}, dtype={est._dtype_name}); some updates were decided by sign(0). "
        "Use scaling='adaptive' or a wider dtype.",
        NumericalUnderflowWarning,
        stacklevel=user_stacklevel(),
    )


#: Why the exponential interaction stores little on the normalized network (the estimator warns with it).
EXP_NORMALIZED = ("e^x is not homogeneous, so the normalized network's update sign sum_mu [F(a(s + zeta)) - "
                  "F(a(s - zeta))] at a = 1/N is not the original network's: it weighs every memory by e^(s/N), "
                  "within a factor e^2 of each other, whatever the temperature T' (which enters learning only), "
                  "and so stores few patterns where the original network stores many")


class NormalizationWarning(UserWarning):
    """The normalized network changes this interaction's updates (the exponential): it is another network."""


#: At most this many training rows are checked after a fit.
MAX_ROWS = 1000
#: ... and at most about this many terms F (rows x memories x (N + evaluated neurons)), but 32 rows at least.
BUDGET = 2**25
#: |C| below this counts as vanished.
VANISHED = 1e-6
#: Share of outputs vanished or saturated for a network to count as dead.
DEAD_SHARE = 0.9
#: A classifier answering one class for this share of its training rows (and twice the class's share of y).
ONE_CLASS_SHARE = 0.75
#: Share of a memory's stored bits that may change in one update before the fit warns.
UNSTABLE_BITS = 0.01
#: A drop of the loss of this fraction per epoch counts as falling.
FALLING = 0.01
#: A fit whose loss still falls by this fraction an epoch (mean over its last max(2, E/10) epochs) warns.
#: Measured on the bundled digits: the README's 15-epoch recipe ends falling 6.3 % an epoch and trained to
#: 30 epochs loses test accuracy (0.819 -> 0.791), so it is not asked for more; fits stopped at 3-5 epochs
#: fall 15 % or more an epoch and gain (0.47 -> 0.63 test accuracy from 3 to 5 epochs).
STILL_FALLING = 0.07
#: Epochs a loss curve needs before "the loss never moved" is read from it (fewer: only the memories count).
MIN_EPOCHS = 2


@dataclass(frozen=True)
class CurveShape:
    """What the loss curve of one fit says (see :func:`read_curve`)."""

    epochs: int
    first: float
    last: float
    moved: bool  # not every epoch's loss equal
    rose: bool  # last > first
    flat_tail: int  # trailing epochs whose loss equals the last one's (to 1e-9)
    falling: bool  # fell in each of the last tenth of the epochs, by >= 1 % an epoch or faster than ever before
    steep: bool  # fell at the last epoch by >= 1 %, more than in any epoch before
    peak: float = 0.0  # the largest loss
    peak_epoch: int = 0  # its epoch, from 1
    bouncing: int = 0  # rises among the last max(4, E/10) epochs when >= 40 % of them (range > 1e-4); else 0
    window: int = 0  # that many epochs
    rate: float = 0.0  # the loss's mean relative fall an epoch over the last `rate_window` epochs (0 if any rose)
    rate_window: int = 0  # max(2, E/10) epochs, at most E - 1

    def spike(self):
        """' (after a peak of P at epoch k)' when the loss jumped tenfold above its first and last values."""
        if self.peak > 10 * max(self.first, self.last):
            return f" (after a peak of {self.peak:.3g} at epoch {self.peak_epoch})"
        return ""

    def trend(self):
        first, last = _pair(self.first, self.last)
        return f"{first} -> {last} in {self.epochs} epoch{'s' if self.epochs > 1 else ''}"


def _fmt(x, digits=4):
    """``x`` to ``digits`` significant digits, without an exponent between 1e-3 and 1e6 (10000, not 1e+04)."""
    if x != 0 and 1e-3 <= abs(x) < 1e6:
        rounded = float(f"{x:.{digits}g}")
        text = f"{rounded:.{max(0, digits - 1 - math.floor(math.log10(abs(rounded))))}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{x:.{digits}g}"


def _pair(a, b):
    """a and b to 4 significant digits, or to as many (up to 10) as it takes to tell them apart."""
    for digits in range(4, 11):
        x, y = _fmt(a, digits), _fmt(b, digits)
        if x != y:
            break
    return x, y


def read_curve(curve):
    """The shape of a loss curve (one value per epoch): rose, flat at the end, still falling, steeply."""
    c = np.asarray(curve, dtype=np.float64).reshape(-1)
    E = c.size
    first, last = float(c[0]), float(c[-1])
    tol = 1e-9 * max(abs(first), abs(last), np.finfo(np.float64).tiny)
    flat = 0
    while flat < E - 1 and abs(c[-2 - flat] - last) <= tol:
        flat += 1
    k = max(1, math.ceil(E / 10))
    drops = -np.diff(c)
    tail = drops[-k:]
    speeding = bool(E >= 3 and np.all(drops[-2:] > 0) and drops[-1] > np.max(drops[:-1]))
    falling = bool(E > 1 and np.all(tail > 0) and (np.sum(tail) >= FALLING * k * c[-1 - k] or speeding))
    steep = bool(speeding and drops[-1] >= FALLING * c[-2])
    w = min(E - 1, max(4, math.ceil(E / 10)))
    rises = int(np.sum(drops[-w:] < 0)) if w > 0 else 0
    window = c[-1 - w:]
    bouncing = rises if (E >= 10 and rises >= 0.4 * w and np.ptp(window) > 1e-4 * np.mean(np.abs(window))) else 0
    r = min(E - 1, max(2, k))
    rate = 0.0
    if r > 0 and np.all(drops[-r:] > 0) and c[-1 - r] > 0:
        rate = float(1.0 - (max(last, 0.0) / c[-1 - r]) ** (1.0 / r))
    return CurveShape(E, first, last, bool(np.ptp(c) > tol), bool(E > 1 and last > first + tol), flat,
                      bool(falling), steep, float(np.max(c)), int(np.argmax(c)) + 1, bouncing, w, rate, r)


def input_range_hint(low, high):
    """The advice for inputs in [low, high] not symmetric about 0 (midpoint off by > 1/4 of the range), or ''."""
    if high - low <= 0 or abs(high + low) <= 0.5 * (high - low):
        return ""
    return (f"X lies in [{low:.3g}, {high:.3g}], not symmetric about 0: inputs are neuron states in [-1, 1], rescale "
            "them with 2 * X - 1 (for [0, 1]) or MinMaxScaler(feature_range=(-1, 1)) in a Pipeline")


def warn_input_range(low, high):
    """Warn with :class:`InputRangeWarning` when a classifier's X, of least entry ``low`` and greatest ``high``
    (from :func:`damlite.validation.check_states`), lies in [0, 1] or so."""
    if low >= 0 and high > 0:
        warnings.warn(f"{input_range_hint(low, high)} (an input at 0 sits halfway between a neuron's -1 and +1 and "
                      "carries no signal)", InputRangeWarning, stacklevel=user_stacklevel())


def _rows(B, K, N, M):
    """Indices of the training rows to check: all, or a fixed random sample (bounded, see BUDGET)."""
    m = min(B, MAX_ROWS, max(32, BUDGET // max(1, K * (N + M))))
    if m == B:
        return np.arange(B)
    return np.sort(np.random.default_rng(0).choice(B, m, replace=False))  # the estimator's own draws untouched


def _take(xp, array, index):
    return xp.take(array, xp.asarray(index, device=getattr(array, "device", None)), axis=0)


def _capacity(N, n):
    """Krotov & Hopfield's estimate N^(n-1) / (2 (2n-3)!! ln N), as damlite.paper.capacity computes it."""
    return N ** (n - 1) / (2.0 * math.prod(range(2 * n - 3, 0, -2)) * math.log(N))


@dataclass
class _Fit:
    """One fit, as the monitor sees it."""

    est: object
    shape: CurveShape
    N: int
    T: float
    classifier: bool
    saturated: float = 0.0
    vanished: float = 0.0
    x_hint: str = ""
    median_arg: float = float("nan")  # median |beta_out Delta| of the outputs checked

    @property
    def t_name(self):
        """T' for the normalized network's temperature, T for the original's."""
        return "T'" if self.est.variant == "normalized" else "T"

    def where(self):
        e = self.est
        return f"in the {e.variant} network (N={self.N}, n={e.n}, {self.t_name}={self.T:g})"

    def scale_mix_up(self):
        """The original network given a temperature on the normalized network's scale (T' ~ 0.5)."""
        e, T, N = self.est, self.T, self.N
        if e.variant == "original" and e.temperature is not None and T < N * 0.05:
            return (f"the original network's temperature is on its own scale, T = N T' (here T = {T:g} is "
                    f"T' = {T / N:.3g}): leave temperature=None (T = N/2 = {N / 2:g}) or pass "
                    f"damlite.equivalent_temperature(T', {N}, to='original')")
        return ""

    def more_epochs(self):
        if self.shape.epochs < MIN_EPOCHS:  # one loss value: no trend to read, only too few epochs
            return f"one epoch is too few to judge: train longer, set_params(epochs={2 * self.shape.epochs})"
        return (f"the loss is still falling ({self.shape.trend()}): train longer, "
                f"set_params(epochs={2 * self.shape.epochs})")

    def overshoot(self):
        s = self.shape
        if not s.bouncing:
            return ""
        return (f"the loss goes up and down (up in {s.bouncing} of the last {s.window} epochs): the steps "
                f"overshoot; lower the learning rate, {self.lr_fix(0.1)}")

    def outputs(self):
        if self.vanished >= 0.5:
            return f"{self.vanished:.0%} of the outputs C = tanh(beta_out Delta) vanished (|C| < 1e-6)"
        if self.saturated >= 0.5:
            return f"{self.saturated:.0%} of the outputs C = tanh(beta_out Delta) are saturated at +-1"
        return ""

    def temperature_target(self):
        """The temperature that brings the median output argument |beta_out Delta| towards 1, or None.

        For F homogeneous of degree n, beta_out Delta scales as T^-n in both variants, so the target is
        T * median^(1/n), where the current memories' outputs are neither vanished nor saturated. Refitting
        moves the memories, so the step is capped: down by at most a factor 2, up by at most 1.5, and a
        suggestion followed by the opposite one never lands back where it came from (0.5 x 1.5 = 0.75).
        Without a degree: those factors the way the outputs point. None when the outputs respond.
        """
        if self.vanished < 0.5 and self.saturated < 0.5:
            return None  # the outputs respond: the temperature is not what failed
        degree = self.est.interaction_.degree
        m = self.median_arg
        factor = 0.5 if self.vanished >= 0.5 else 1.5
        if degree and np.isfinite(m) and m > 0:  # down at most 2x, up at most 1.5x: no step undoes another
            factor = min(max(m ** (1.0 / degree), 0.5), 1.5)
        target = self.T * factor
        if not np.isfinite(target) or target <= 0 or float(f"{target:.3g}") == float(f"{self.T:.3g}"):
            return None
        return target

    def temperature_fix(self, factor=None):
        """``set_params(temperature=...) (from T' = x)``: see :meth:`temperature_target`; '' when none helps."""
        target = self.temperature_target()
        if target is None:
            return ""
        return f"set_params(temperature={target:.3g}) (from {self.t_name} = {self.T:.3g})"

    def overshoot_fix(self):
        """A rectified F's outputs vanished because a step overshot (arguments pushed below 0, where no
        temperature brings them back): a higher temperature makes the outputs less steep, so the steps
        that follow are smaller. ``set_params(temperature=2T) (from T' = T)``."""
        return f"set_params(temperature={2 * self.T:.3g}) (from {self.t_name} = {self.T:.3g})"

    def lr_fix(self, factor):
        return (f"set_params(learning_rate={self.est.learning_rate * factor:.3g}) "
                f"(from {self.est.learning_rate:.3g})")


def _say(finding, causes, fix):
    text = "; ".join([finding] + [c for c in causes if c]) + ". " + fix.rstrip(".") + "."
    warnings.warn(text, _convergence_warning(), stacklevel=user_stacklevel())
    return text


def _frozen(f, still):
    e, s = f.est, f.shape
    fix_t = f.temperature_fix()
    if f.vanished > 0.5:
        why = (f"{f.vanished:.0%} of the outputs C = tanh(beta_out Delta) are below 1e-6 in size "
               "(F of arguments below 1 vanishes for large n)")
        hint = (f"Lower the temperature{', ' + fix_t if fix_t else ''}, or n, start from larger memories "
                "(init_std), or use a wider dtype.")
    elif f.saturated > 0.5:
        why = f"{f.saturated:.0%} of the outputs C = tanh(beta_out Delta) are exactly +-1 (tanh saturated)"
        hint = f"Raise the temperature{', ' + fix_t if fix_t else ''}, or lower n, so that tanh is not saturated."
    else:
        why = ""
        hint = f"Raise the learning rate, {f.lr_fix(10)}."
    mix = f.scale_mix_up()
    if mix:
        hint = _cap(mix) + ". " + hint
    if f.x_hint:
        hint += " " + _cap(f.x_hint) + "."
    text = (f"training is frozen: the loss never moved in {s.epochs} epoch(s) (L = {_fmt(s.last)}) "
            f"{'and the memories did not change (zero gradient)' if still else 'while the memories moved'}; "
            + (f"{why} {f.where()}, where the gradient vanishes. " if why else f"{f.where()}. ") + hint)
    warnings.warn(text, _convergence_warning(), stacklevel=user_stacklevel())
    return text


@dataclass
class LearningPass:
    """The learning rule's energy differences of the checked rows (one pass, see :func:`learning_pass`)."""

    index: np.ndarray  # (R,) the training rows checked
    rows: object  # (R, N) their probes, on the estimator's backend
    delta: object  # (R, M) energy differences of the evaluated neurons at the learning scale beta_in
    underflow: bool  # some are 0 only because F rounded to 0


def learning_pass(est, probes, neurons, beta_in, n_evaluated):
    """One energy-difference pass of the fitted memories over at most :data:`MAX_ROWS` training rows."""
    xp, memories = est.xp_, est.memories_
    B, N = probes.shape
    index = _rows(B, memories.shape[0], N, n_evaluated)
    rows = _take(xp, probes, index)
    with quiet_numpy():
        delta, underflow = energy_difference(memories[None], rows, est.interaction_, beta_in, neurons=neurons,
                                             memory_budget=est._budget, return_underflow=True)
    return LearningPass(index, rows, delta[0], bool(underflow[0]))


def _rectified(est):
    return est.interaction_.name.startswith(("rectified", "author_rectified"))


def _cap(text):
    return text[:1].upper() + text[1:]


def _warn_learning_underflow(est, N):
    T_name = "T'" if est.variant == "normalized" else "T"
    warnings.warn(
        f"underflow: while learning, terms F(beta_in (s +- zeta)) rounded to 0 in the {est.variant} network "
        f"(N={N}, n={est.n}, {T_name}={est._temperature(N):g}, dtype={est._dtype_name}): the tanh argument "
        "and its gradient vanish, so the loss cannot move. Lower the temperature or use a wider dtype.",
        NumericalUnderflowWarning, stacklevel=user_stacklevel())


def review_fit(est, seen, *, targets, neurons, beta_out, initial, n_patterns, x_range=None, warm_start=False,
               epochs=None):
    """Check a finished fit of ``est`` and warn (at most one ConvergenceWarning) when it failed.

    ``seen`` is the :func:`learning_pass` over the training rows, ``targets`` (B, M) the wanted
    outputs of the evaluated ``neurons``, ``initial`` the memories before the fit, ``n_patterns`` B,
    ``x_range`` a classifier's (min, max) of X, ``epochs`` this fit's (``est.loss_curve_`` holds
    those of the fits a warm start continued too), ``warm_start`` the estimator's setting: fits that
    continue one another are not judged on one class or fixed points while their loss falls in each of
    its last max(2, E/10) epochs (or shows one epoch), since the next one continues it. Returns the
    warning's text, or None.
    """
    xp, memories = est.xp_, est.memories_
    N, K = memories.shape[1], memories.shape[0]
    if seen.underflow:
        _warn_learning_underflow(est, N)
    shape = read_curve(est.loss_curve_)
    if shape.last == 0.0:  # every output exact: nothing to report
        return None
    arg = np.abs(np.asarray(to_numpy(beta_out * seen.delta), dtype=np.float64))
    C = np.tanh(arg)
    classifier = hasattr(est, "classes_")
    f = _Fit(est, shape, N, float(est._temperature(N)), classifier, saturated=float(np.mean(C == 1.0)),
             vanished=float(np.mean(C < VANISHED)),
             x_hint=input_range_hint(*x_range) if classifier and x_range is not None else "",
             median_arg=float(np.median(arg)) if arg.size else float("nan"))
    still = bool(xp.all(memories == initial))
    if still or (not shape.moved and shape.epochs >= MIN_EPOCHS):  # one loss value cannot show it never moved
        return _frozen(f, still)
    mix, outputs = f.scale_mix_up(), f.outputs()
    dead_share = max(f.vanished, f.saturated)
    wanted = np.asarray(to_numpy(_take(xp, targets, seen.index)))
    wrong = float(np.mean(np.where(np.asarray(to_numpy(seen.delta)) >= 0, 1.0, -1.0) != wanted))
    dead = (shape.flat_tail >= max(3, math.ceil(shape.epochs / 10)) and dead_share >= DEAD_SHARE
            and (f.vanished >= f.saturated or wrong >= UNSTABLE_BITS))  # saturated and right: learned, not dead
    if shape.rose:
        first, last = _pair(shape.first, shape.last)
        finding = f"the loss rose from {first} to {last} in {shape.epochs} epochs{shape.spike()} {f.where()}"
        if dead:
            finding += f" and stayed there for the last {shape.flat_tail}"
        if mix:
            fix = _cap(mix)
        else:
            fix = f"The steps overshoot: lower the learning rate, {f.lr_fix(0.2)}, or decay it (lr_decay=0.99)"
            if f.vanished >= 0.5 and _rectified(est):
                finding += " (F(x) = max(x, 0)^n all but vanishes on the inputs: a step overshot)"
            if f.vanished >= 0.5 and _rectified(est):
                fix += f", or raise the temperature, {f.overshoot_fix()}"
            elif f.saturated >= 0.5:
                fix += _or_temperature(f)
        return _say(finding, [outputs, f.x_hint], fix)
    if dead:
        finding = (f"training died: the loss stayed at {_fmt(shape.last)} for the last {shape.flat_tail} of "
                   f"{shape.epochs} epochs{shape.spike()} {f.where()}, with {outputs}, where the gradient vanishes")
        if mix:
            fix = _cap(mix)
        elif f.vanished >= f.saturated and _rectified(est):
            finding += " (F(x) = max(x, 0)^n all but vanishes on the inputs: a step overshot)"
            fix = f"Lower the learning rate, {f.lr_fix(0.2)}, or raise the temperature, {f.overshoot_fix()}"
        elif f.vanished >= f.saturated:
            fix = f"Lower the learning rate, {f.lr_fix(0.2)}, or n" + _or_temperature(f)
        else:
            fix = f"Lower n, so that tanh is not saturated" + _or_temperature(f)
        return _say(finding, [f.x_hint], fix)
    learning = shape.falling or shape.epochs < MIN_EPOCHS  # still falling, or one epoch: too soon to judge
    if warm_start and (learning or shape.rate > 0):  # fell in each of its last epochs: the next warm fit goes on
        return None
    if classifier:
        labels = np.argmax(np.asarray(to_numpy(_take(xp, targets, seen.index))), axis=1)
        predicted = np.argmax(np.asarray(to_numpy(seen.delta)), axis=1)
        counts = np.bincount(predicted, minlength=len(est.classes_))
        top = int(np.argmax(counts))
        share, true_share = counts[top] / predicted.size, float(np.mean(labels == top))
        if len(np.unique(labels)) > 1 and share >= ONE_CLASS_SHARE and share >= 2 * true_share:
            label = est.classes_[top]
            label = label.item() if hasattr(label, "item") else label
            finding = (f"the classifier predicts class {label!r} for {share:.0%} of the training rows checked "
                       f"({counts[top]} of {predicted.size}; {true_share:.0%} of them are of that class), "
                       f"training accuracy {np.mean(predicted == labels):.3f}, {f.where()}{shape.spike()}")
            if learning:
                causes, fix = [f.x_hint], _cap(f.more_epochs())
            elif mix:
                causes, fix = [outputs, f.x_hint], _cap(mix)
            elif f.overshoot():
                causes, fix = [outputs, f.x_hint], _cap(f.overshoot())
            elif f.vanished >= 0.5 and _rectified(est):
                causes = [outputs + " (F(x) = max(x, 0)^n all but vanishes on the inputs: a step overshot)", f.x_hint]
                fix = f"Lower the learning rate, {f.lr_fix(0.2)}, or raise the temperature, {f.overshoot_fix()}"
            elif f.x_hint:
                causes, fix = [outputs], _cap(f.x_hint)
            elif f.temperature_fix():
                causes, fix = [outputs], f"Change the temperature, {f.temperature_fix()}"
            else:
                causes = [outputs]
                fix = f"Try a larger learning rate, {f.lr_fix(2)}, or more epochs"
            return _say(finding, causes, fix)
    else:
        update = seen.delta  # F homogeneous: the learning scale beta_in gives the update's signs
        if est.interaction_.degree is None or seen.underflow:
            with quiet_numpy():
                update = energy_difference(memories[None], seen.rows, est.interaction_, est.scales(N)[0],
                                           neurons=neurons, rescale=est.scaling == "adaptive",
                                           memory_budget=est._budget)[0]
        stored = np.asarray(to_numpy(_take(xp, targets, seen.index)))
        flips = np.where(np.asarray(to_numpy(update)) >= 0, 1.0, -1.0) != stored
        unstable = float(np.mean(flips))
        if unstable >= UNSTABLE_BITS:
            P, n = n_patterns, est.interaction_.degree
            finding = (f"{unstable:.1%} of the stored bits are not fixed points after fitting ({int(flips.sum())} of "
                       f"{flips.size} bits of the {seen.index.size} patterns checked change in one update): "
                       f"{P} patterns, N = {N}, n = {est.n}, K = {K} memories, {f.t_name} = {f.T:g}")
            causes = []
            if est.interaction_.name == "exponential" and est.variant == "normalized":
                causes.append(f"{EXP_NORMALIZED} (no temperature changes that)")
                fix = "Use a polynomial interaction (the default), or variant='original' (its T = N T')"
            elif learning:
                fix = _cap(f.more_epochs())
            elif f.overshoot():
                fix = _cap(f.overshoot())
            elif n is not None and P > _capacity(N, n):
                causes.append(f"{P} patterns is beyond the capacity estimate for random patterns, "
                              f"N^(n-1) / (2 (2n-3)!! ln N) = {_capacity(N, n):.3g} at n = {n}, N = {N}")
                fix = f"Raise n, set_params(n={n + 1}), or store fewer patterns"
            else:
                if n is not None:
                    causes.append(f"{P} patterns is within the capacity estimate for random patterns "
                                  f"({_capacity(N, n):.3g} at n = {n}), so training fell short")
                fix = "Train longer" + _or_temperature(f)
                if K < P:
                    fix += f", or give each pattern a memory, set_params(n_memories={P})"
            return _say(finding, causes + [mix], fix)
    if warm_start or (epochs or shape.epochs) < MIN_EPOCHS:  # a warm chunk continues; one epoch shows no trend
        return None
    if shape.rate >= STILL_FALLING or shape.steep:
        if shape.rate >= STILL_FALLING:
            how = (f"by {shape.rate:.1%} an epoch over the last {shape.rate_window}").replace("%", " %")
        else:
            how = f"by {_fmt(est.loss_curve_[-2] - shape.last)} in the last epoch, more than in any epoch before"
        finding = f"the loss was still falling when training stopped ({shape.trend()}, {how})"
        return _say(finding, [f.x_hint], f"Train longer, set_params(epochs={2 * shape.epochs})")
    return None


def _or_temperature(f):
    """', or change the temperature, set_params(temperature=...) (from T' = x)' when the outputs call for one."""
    fix = f.temperature_fix()
    return f", or change the temperature, {fix}" if fix else ""
