"""Least squares, logit and Pearson correlation with numpy alone, computed the way statsmodels
and pandas compute them for the paper's figures (statsmodels is not a dependency).

`ols`: classical (non-robust) standard errors, sigma^2 = SSR / (n - rank), 95% t intervals
with n - rank degrees of freedom, the pseudo-inverse for a rank-deficient design (the
minimum-norm solution); a coefficient that the design does not identify is flagged.
`logit`: maximum likelihood by Newton-Raphson, HC0 (White) sandwich errors and normal 95%
intervals, as `smf.logit(...).fit(cov_type="HC0")`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z975 = 1.959963984540054


@dataclass(frozen=True)
class Fit:
    coef: np.ndarray
    se: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n: int
    rank: int
    identified: np.ndarray  # bool per coefficient: estimable from this design


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p-quantile (0.5 < p < 1) of Student's t, by bisection to machine precision."""
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        low, high = (mid, high) if t_cdf(mid, df) < p else (low, mid)
    return (low + high) / 2.0


def _estimable(vt: np.ndarray, rank: int) -> np.ndarray:
    """Whether each unit coefficient vector lies in the design's row space."""
    projector = vt[:rank].T @ vt[:rank]
    return np.abs(np.diag(projector) - 1.0) < 1e-8


def ols(x: np.ndarray, y: np.ndarray) -> Fit:
    """OLS of y on the columns of x (include the intercept column yourself)."""
    n, p = x.shape
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    rank = int((s > s.max() * max(n, p) * np.finfo(float).eps).sum())
    inv_s = 1.0 / s[:rank]
    coef = vt[:rank].T @ (inv_s * (u[:, :rank].T @ y))
    resid = y - x @ coef
    df_resid = n - rank
    sigma2 = float(resid @ resid) / df_resid if df_resid > 0 else math.nan
    cov = (vt[:rank].T * inv_s**2) @ vt[:rank] * sigma2
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    half = (t_quantile(0.975, df_resid) if df_resid > 0 else math.nan) * se
    return Fit(coef, se, coef - half, coef + half, n, rank, _estimable(vt, rank))


def logit(x: np.ndarray, y: np.ndarray, tol: float = 1e-12, max_iter: int = 100) -> Fit:
    """Logit of the 0/1 outcome y on x by Newton-Raphson; HC0 sandwich errors, normal CI.
    Raises ValueError when it does not converge (e.g. a separable design)."""
    n, p = x.shape
    coef = np.zeros(p)
    for _ in range(max_iter):
        prob = 1.0 / (1.0 + np.exp(-(x @ coef)))
        hessian = (x.T * (prob * (1.0 - prob))) @ x
        step = np.linalg.solve(hessian, x.T @ (y - prob))
        coef = coef + step
        if np.max(np.abs(step)) < tol:
            break
    else:
        raise ValueError("the logit did not converge (is the outcome separable?)")
    prob = 1.0 / (1.0 + np.exp(-(x @ coef)))
    bread = np.linalg.inv((x.T * (prob * (1.0 - prob))) @ x)
    meat = (x.T * (y - prob) ** 2) @ x
    se = np.sqrt(np.diag(bread @ meat @ bread))
    return Fit(coef, se, coef - Z975 * se, coef + Z975 * se, n, p, np.ones(p, dtype=bool))


def pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    """Pearson's r; None with fewer than two pairs or a constant series (pandas gives NaN)."""
    if len(a) < 2:
        return None
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float(da @ da) * float(db @ db))
    if denominator == 0.0:
        return None
    return max(-1.0, min(1.0, float(da @ db) / denominator))
