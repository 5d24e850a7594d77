"""Tests of :mod:`docgraph_dev.report.stats`: mean and sample standard deviation, the
regularised incomplete beta function and Welch's t-test, against closed forms, hand
computation and SciPy where it is installed."""

from __future__ import annotations

import math

import pytest

from docgraph_dev.report.stats import mean_std, regularized_beta, welch_t_test


def test_mean_std_is_the_sample_std():
    assert mean_std([1.0, 2.0, 3.0]) == (2.0, 1.0)
    mean, std = mean_std([90.0, 91.0])
    assert mean == 90.5 and std == pytest.approx(math.sqrt(0.5))
    assert mean_std([7.5]) == (7.5, 0.0)  # one value: no spread
    with pytest.raises(ValueError, match="^mean_std of no values$"):
        mean_std([])


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 7.0])
def test_t_distribution_tails_match_closed_forms(t: float) -> None:
    # Two-sided p of Student's t: I_{df/(df+t^2)}(df/2, 1/2). Closed forms for df = 1 (Cauchy)
    # and df = 2.
    assert regularized_beta(0.5, 0.5, 1 / (1 + t * t)) == pytest.approx(
        1 - 2 / math.pi * math.atan(t), rel=1e-10)
    assert regularized_beta(1.0, 0.5, 2 / (2 + t * t)) == pytest.approx(
        1 - t / math.sqrt(t * t + 2), rel=1e-10)


def test_welch_t_test_by_hand() -> None:
    # Equal variances (1 and 1) and sizes: t = -3 / sqrt(2/3), df = 4, p = 0.021311 (tables).
    t, df, p = welch_t_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert t == pytest.approx(-3 / math.sqrt(2 / 3))
    assert df == pytest.approx(4.0)
    assert p == pytest.approx(0.021311, abs=1e-6)
    # Unequal variances: df by Welch-Satterthwaite.
    _, df, _ = welch_t_test([1.0, 3.0], [0.0, 0.5, 1.0])
    va, vb = 2.0 / 2, 0.25 / 3
    assert df == pytest.approx((va + vb) ** 2 / (va**2 / 1 + vb**2 / 2))
    assert welch_t_test([2.0, 2.0], [1.0, 1.0])[2] == 0.0
    with pytest.raises(ValueError, match="at least two"):
        welch_t_test([1.0], [1.0, 2.0])


def test_welch_t_test_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    samples = [([89.81, 89.53, 90.08], [88.93, 89.05, 88.81]),
               ([1.0, 2.0, 3.0, 4.0, 10.0], [2.0, 2.5]),
               ([0.1, 0.3], [5.0, 5.1, 4.9, 5.3])]
    for a, b in samples:
        t, df, p = welch_t_test(a, b)
        ref = stats.ttest_ind(a, b, equal_var=False)
        assert t == pytest.approx(ref.statistic, rel=1e-9)
        assert p == pytest.approx(ref.pvalue, rel=1e-7)
        assert df == pytest.approx(ref.df, rel=1e-9)


@pytest.mark.parametrize(("a", "b", "x"), [(2.0, 3.0, 0.3), (0.5, 0.5, 0.9), (5.0, 1.5, 0.6)])
def test_regularized_beta_symmetry(a, b, x):
    assert regularized_beta(a, b, x) == pytest.approx(1 - regularized_beta(b, a, 1 - x),
                                                      rel=1e-12)


@pytest.mark.parametrize("x", [0.01, 0.2, 0.5, 0.77, 0.999])
def test_regularized_beta_closed_forms(x):
    assert regularized_beta(1.0, 1.0, x) == pytest.approx(x, rel=1e-12)  # uniform
    assert regularized_beta(3.0, 1.0, x) == pytest.approx(x**3, rel=1e-12)
    assert regularized_beta(1.0, 4.0, x) == pytest.approx(1 - (1 - x) ** 4, rel=1e-12)
    # I_x(2, 2) = 3x^2 - 2x^3
    assert regularized_beta(2.0, 2.0, x) == pytest.approx(3 * x**2 - 2 * x**3, rel=1e-12)


def test_regularized_beta_outside_the_open_interval():
    assert regularized_beta(2.0, 3.0, 0.0) == 0.0
    assert regularized_beta(2.0, 3.0, -1.0) == 0.0
    assert regularized_beta(2.0, 3.0, 1.0) == 1.0
    assert regularized_beta(2.0, 3.0, 2.0) == 1.0


def test_welch_t_test_of_samples_without_spread():
    assert welch_t_test([2.0, 2.0], [1.0, 1.0]) == (math.inf, math.inf, 0.0)
    assert welch_t_test([1.0, 1.0], [2.0, 2.0]) == (-math.inf, math.inf, 0.0)
    assert welch_t_test([3.0, 3.0, 3.0], [3.0, 3.0]) == (0.0, math.inf, 1.0)


def test_welch_t_test_is_antisymmetric_and_equal_means_give_p_1():
    a, b = [89.8, 89.5, 90.1], [88.9, 89.0, 88.8, 89.3]
    t, df, p = welch_t_test(a, b)
    assert welch_t_test(b, a) == pytest.approx((-t, df, p))
    assert 0 < p < 1 and t > 0
    assert welch_t_test([1.0, 3.0], [0.0, 4.0])[2] == pytest.approx(1.0)


def test_welch_t_test_needs_two_values_on_either_side():
    for a, b in (([1.0], [1.0, 2.0]), ([1.0, 2.0], [3.0]), ([], [])):
        with pytest.raises(ValueError, match="^welch_t_test needs at least two values per "
                                             "sample$"):
            welch_t_test(a, b)
