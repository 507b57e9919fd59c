"""GEV formulas for the reference-vector generator (Hosking's parameterisation).

Location xi, scale alpha > 0, shape k; k > 0 bounds the upper tail, k < 0 is
heavy-tailed, k = 0 is Gumbel. scipy.stats.genextreme uses the same sign
(its c is k), so scipy serves as an independent cross-check here.

Everything near k = 0 is evaluated from power series built from zeta values,
so no value below loses digits to cancellation (the direct Gamma-function
forms lose about 1e-16/|k|^3 in the skewness).
"""

import math

import numpy as np
from scipy import special

EULER_GAMMA = float(np.euler_gamma)
# F_G(E[G]) for a standard Gumbel G: EMMA's probability level (Sun & Peterson 2012).
PHI_EMMA = math.exp(-math.exp(-EULER_GAMMA))
LN2_OVER_LN3 = math.log(2.0) / math.log(3.0)
PWM_K_COEFFS = (7.8590, 2.9554)  # Hosking, Wallis & Wood 1985, eq. (15)
MOM_K_BRACKET = (-1.0 / 3.0 + 1e-6, 10.0)  # the skewness exists for k > -1/3
SERIES_BELOW = 0.15  # |k| below which the series forms are used
_SERIES_TERMS = 60


def _power_series_exp(d):
    """Coefficients of exp(D(x)) from those of D(x), D(0) = 0 (e' = D'e)."""
    e = np.zeros_like(d)
    e[0] = 1.0
    for n in range(1, len(d)):
        e[n] = sum(m * d[m] * e[n - m] for m in range(1, n + 1)) / n
    return e


def _gamma_series():
    """Series (ascending powers of k) of B, Q and P.

    ln Gamma(1+x) = -gamma x + sum_{n>=2} (-1)^n zeta(n) x^n / n, so
    Gamma(1+jk) = exp(sum c_n j^n k^n). Then
      B(k) = (Gamma(1+k) - 1)/k,
      k^2 Q(k) = Gamma(1+2k) - Gamma(1+k)^2,
      k^3 P(k) = -Gamma(1+3k) + 3 Gamma(1+k) Gamma(1+2k) - 2 Gamma(1+k)^3.
    """
    n = _SERIES_TERMS + 4
    c = np.zeros(n)
    c[1] = -EULER_GAMMA
    for i in range(2, n):
        c[i] = (-1) ** i * special.zeta(i, 1) / i
    powers = np.arange(n, dtype=float)
    g1, g2, g3 = (_power_series_exp(c * j**powers) for j in (1.0, 2.0, 3.0))
    mul = np.polynomial.polynomial.polymul
    q_full = g2 - mul(g1, g1)[:n]
    p_full = -g3 + 3.0 * mul(g1, g2)[:n] - 2.0 * mul(mul(g1, g1)[:n], g1)[:n]
    # The low orders cancel analytically; what is left there is rounding.
    assert np.all(np.abs(q_full[:2]) < 1e-13) and np.all(np.abs(p_full[:3]) < 1e-13)
    return c, g1[1:], q_full[2:], p_full[3:]


LGAMMA_SERIES, B_SERIES, Q_SERIES, P_SERIES = _gamma_series()


def _horner(coeffs, x):
    """sum_n coeffs[n] x^n over the first _SERIES_TERMS terms (they decrease: no cancellation)."""
    result = np.zeros_like(np.asarray(x, dtype=float))
    for coefficient in coeffs[:_SERIES_TERMS][::-1]:
        result = result * x + coefficient
    return result


def _small(k):
    return np.abs(k) < SERIES_BELOW


def lgamma1p_plus_gamma_k(k):
    """ln Gamma(1+k) + gamma k, accurate also for tiny k (it is ~ zeta(2) k^2 / 2)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(all="ignore"):
        direct = special.gammaln(1.0 + k) + EULER_GAMMA * k
    series = k * k * _horner(LGAMMA_SERIES[2:], k)
    return np.where(_small(k), series, direct)


def b_of_k(k):
    """B(k) = (Gamma(1+k) - 1)/k, B(0) = -gamma."""
    k = np.asarray(k, dtype=float)
    with np.errstate(all="ignore"):
        direct = np.expm1(special.gammaln(1.0 + k)) / k
    return np.where(_small(k), _horner(B_SERIES, k), direct)


def q_of_k(k):
    """Q(k) = (Gamma(1+2k) - Gamma(1+k)^2)/k^2, so Var X = alpha^2 Q(k); Q(0) = zeta(2)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(all="ignore"):
        direct = (special.gamma(1.0 + 2.0 * k) - special.gamma(1.0 + k) ** 2) / (k * k)
    return np.where(_small(k), _horner(Q_SERIES, k), direct)


def p_of_k(k):
    """P(k) = (-Gamma(1+3k) + 3 Gamma(1+k) Gamma(1+2k) - 2 Gamma(1+k)^3)/k^3; P(0) = 2 zeta(3)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(all="ignore"):
        g1, g2, g3 = (special.gamma(1.0 + j * k) for j in (1.0, 2.0, 3.0))
        direct = (-g3 + 3.0 * g1 * g2 - 2.0 * g1**3) / k**3
    return np.where(_small(k), _horner(P_SERIES, k), direct)


def skewness(k):
    """Skewness of a GEV with shape k > -1/3: g(k) = P(k) / Q(k)^1.5 (sign included)."""
    return p_of_k(k) / q_of_k(k) ** 1.5


def quantile(xi, alpha, k, f):
    """x(F) = xi - alpha expm1(-k y)/k with y = -ln(-ln F); xi + alpha y at k = 0."""
    y = -math.log(-math.log(f))
    if k == 0.0:
        return xi + alpha * y
    return xi - alpha * math.expm1(-k * y) / k


def quantile_array(xi, alpha, k, f):
    y = -np.log(-np.log(f))
    if k == 0.0:
        return xi + alpha * y
    return xi - alpha * np.expm1(-k * y) / k


def cdf(xi, alpha, k, x):
    z = (x - xi) / alpha
    y = z if k == 0.0 else -math.log1p(-k * z) / k
    return math.exp(-math.exp(-y))


def emma(xi, alpha, k, m):
    """F^{-1}(phi^{1/m}); since -ln(phi^{1/m}) = e^{-gamma}/m, y = gamma + ln m."""
    y = EULER_GAMMA + math.log(m)
    if k == 0.0:
        return xi + alpha * y
    return xi - alpha * math.expm1(-k * y) / k


def exact_expected_maximum(xi, alpha, k, m):
    """E[max of m iid GEV] = xi + alpha [1 - m^{-k} Gamma(1+k)]/k (max-stability; k > -1)."""
    log_m = math.log(m)
    if k == 0.0:
        return xi + alpha * (EULER_GAMMA + log_m)
    return xi + alpha * (-math.expm1(-k * log_m) / k - math.exp(-k * log_m) * float(b_of_k(k)))


def emma_minus_exact_unit(k, m):
    """(EMMA_m - E[max_m]) / alpha = m^{-k} (Gamma(1+k) - e^{-gamma k}) / k, without cancellation."""
    if k == 0.0:
        return 0.0
    excess = float(lgamma1p_plus_gamma_k(k))  # ln Gamma(1+k) - ln e^{-gamma k}
    return math.exp(-k * (math.log(m) + EULER_GAMMA)) * math.expm1(excess) / k


def end_point(xi, alpha, k):
    """xi + alpha/k: upper end for k > 0, lower end for k < 0."""
    return xi + alpha / k


def tau3(k):
    """L-skewness of a GEV: 2 (1 - 3^{-k}) / (1 - 2^{-k}) - 3 (Hosking 1990)."""
    if k == 0.0:
        return 2.0 * math.log(3.0) / math.log(2.0) - 3.0
    return 2.0 * math.expm1(-k * math.log(3.0)) / math.expm1(-k * math.log(2.0)) - 3.0


def pwm_k_polynomial(t3):
    c = 2.0 / (3.0 + t3) - LN2_OVER_LN3
    return c, PWM_K_COEFFS[0] * c + PWM_K_COEFFS[1] * c * c


def params_from_l_moments(l1, l2, k):
    """alpha = l2 k / ((1 - 2^{-k}) Gamma(1+k)), xi = l1 + alpha B(k); l2/ln 2 and l1 - gamma alpha at k = 0."""
    if k == 0.0:
        alpha = l2 / math.log(2.0)
    else:
        alpha = l2 * k / (-math.expm1(-k * math.log(2.0)) * math.exp(float(special.gammaln(1.0 + k))))
    return l1 + alpha * float(b_of_k(k)), alpha


def invert_tau3(t3):
    """The k with tau3(k) = t3 (tau3 is decreasing on (-1, inf)), by bisection to adjacent doubles."""
    lo, hi = -0.999, 50.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if tau3(mid) > t3:
            lo = mid
        else:
            hi = mid
    return lo if abs(tau3(lo) - t3) <= abs(tau3(hi) - t3) else hi


def solve_mom_k(skew):
    """k with g(k) = skew on MOM_K_BRACKET, vectorised bisection; returns (k, status array).

    status: 0 ok, -1 clamped at the lower end, +1 clamped at the upper end.
    """
    skew = np.atleast_1d(np.asarray(skew, dtype=float))
    lo_k, hi_k = MOM_K_BRACKET
    g_lo, g_hi = float(skewness(lo_k)), float(skewness(hi_k))
    lo = np.full(skew.shape, lo_k)
    hi = np.full(skew.shape, hi_k)
    for _ in range(80):  # 10.3 / 2^80: the bracket shrinks to adjacent doubles
        mid = 0.5 * (lo + hi)
        if np.all((mid == lo) | (mid == hi)):
            break
        above = skewness(mid) > skew  # g decreases: the root lies right of mid
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    k = np.where(np.abs(skewness(lo) - skew) <= np.abs(skewness(hi) - skew), lo, hi)
    status = np.where(skew >= g_lo, -1, np.where(skew <= g_hi, 1, 0))
    k = np.where(status == -1, lo_k, np.where(status == 1, hi_k, k))
    return k, status


def mom_params(mean, sd, k):
    """alpha = s / sqrt(Q(k)) (exponent 1/2: Var X = alpha^2 k^2 Q(k) / k^2), xi = mean + alpha B(k)."""
    alpha = sd / np.sqrt(q_of_k(k))
    return mean + alpha * b_of_k(k), alpha
