"""The statistics of the report: mean and sample standard deviation over seeds, and Welch's
t-test (with the regularised incomplete beta function it needs, so no SciPy).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    if not values:
        raise ValueError("mean_std of no values")
    mean = statistics.fmean(values)
    return mean, statistics.stdev(values) if len(values) > 1 else 0.0


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                    -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function :math:`I_x(a, b)` for ``0 <= x <= 1``."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def welch_t_test(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Welch's unequal-variance t-test of ``mean(a) != mean(b)``.

    Args:
        a: One sample (at least two values).
        b: The other sample (at least two values).

    Returns:
        ``(t, df, p)``: the statistic, the Welch-Satterthwaite degrees of freedom and the
        two-sided p-value. Two samples without any spread give ``p = 0`` when their means
        differ and ``p = 1`` otherwise.

    Raises:
        ValueError: If a sample has fewer than two values.
    """
    if len(a) < 2 or len(b) < 2:
        raise ValueError("welch_t_test needs at least two values per sample")
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(a) - statistics.fmean(b)
    if va + vb == 0.0:
        return (math.copysign(math.inf, diff) if diff else 0.0), math.inf, float(diff == 0)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return t, df, regularized_beta(df / 2.0, 0.5, df / (df + t * t))
