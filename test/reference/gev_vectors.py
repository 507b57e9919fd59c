"""GEV reference vectors: closed forms, PWM and MOM fits, edge cases, the n = 15 study.

Sample fits work on 2-D arrays (one sample per row) so that the simulation
study and the single cases share one implementation.
"""

import math

import numpy as np
from scipy import integrate, special, stats

import gev_math as gm

M_LIST = [2, 4, 8, 16]
DEGENERATE_RELATIVE = 1e-12  # l2 or s at most this times max|x|: a point mass
DISAGREEMENT_MAX_ABS_DK = 0.35
DISAGREEMENT_MAX_EMMA16_RELATIVE = 0.05


def emma_array(xi, alpha, k, m):
    y = gm.EULER_GAMMA + math.log(m)
    with np.errstate(all="ignore"):
        heavy = xi - alpha * np.expm1(-k * y) / k
    return np.where(k == 0.0, xi + alpha * y, heavy)


def support_violation(xi, alpha, k, x_min, x_max):
    with np.errstate(all="ignore"):
        end = xi + alpha / k
    return ((k > 0) & (end < x_max)) | ((k < 0) & (end > x_min))


def usable(xi, alpha, k, x_min, x_max):
    finite = np.isfinite(xi) & np.isfinite(alpha) & np.isfinite(k)
    return finite & (alpha > 0) & ~support_violation(xi, alpha, k, x_min, x_max)


def fit_pwm(samples):
    """Probability-weighted moments (Greenwood et al. 1979; Hosking, Wallis & Wood 1985).

    b_r are computed on x - median (l2 and l3 are shift-invariant, b_r shifts
    by median/(r+1)), so a large common offset costs no digits.
    """
    x = np.sort(np.atleast_2d(np.asarray(samples, dtype=float)), axis=1)
    n = x.shape[1]
    median = np.median(x, axis=1)
    y = x - median[:, None]
    j = np.arange(1, n + 1, dtype=float)
    b0 = y.mean(axis=1)
    b1 = (y * ((j - 1) / (n - 1))).mean(axis=1)
    b2 = (y * ((j - 1) * (j - 2) / ((n - 1) * (n - 2)))).mean(axis=1)
    l2 = 2 * b1 - b0
    l3 = 6 * b2 - 6 * b1 + b0
    with np.errstate(all="ignore"):
        t3 = l3 / l2
        c_direct = l2 / (3 * b2 - b0) - gm.LN2_OVER_LN3
    c, k = gm.pwm_k_polynomial(t3)
    l1 = b0 + median
    with np.errstate(all="ignore"):
        alpha = np.where(k == 0.0, l2 / math.log(2.0),
                         l2 * k / (-np.expm1(-k * math.log(2.0)) * np.exp(special.gammaln(1.0 + k))))
    xi = l1 + alpha * gm.b_of_k(k)
    degenerate = l2 <= DEGENERATE_RELATIVE * np.abs(x).max(axis=1)
    return {"x": x, "b0": l1, "b1": b1 + median / 2, "b2": b2 + median / 3, "l1": l1, "l2": l2, "l3": l3,
            "t3": t3, "c_direct": c_direct, "c": c, "k": k, "alpha": alpha, "xi": xi, "degenerate": degenerate}


def sample_moments(samples):
    x = np.atleast_2d(np.asarray(samples, dtype=float))
    n = x.shape[1]
    median = np.median(x, axis=1)
    mean = (x - median[:, None]).mean(axis=1) + median
    d = x - mean[:, None]
    sd = np.sqrt((d * d).sum(axis=1) / (n - 1))
    with np.errstate(all="ignore"):
        adjusted = n / ((n - 1) * (n - 2)) * ((d / sd[:, None]) ** 3).sum(axis=1)
        biased = (d**3).mean(axis=1) / (d * d).mean(axis=1) ** 1.5
    return {"x": x, "mean": mean, "sd": sd, "sd_n": np.sqrt((d * d).mean(axis=1)), "skew_adjusted": adjusted,
            "skew_biased": biased, "degenerate": sd <= DEGENERATE_RELATIVE * np.abs(x).max(axis=1)}


def fit_mom(samples, skew_kind="adjusted"):
    """Method of moments (Madsen, Rasmussen & Rosbjerg 1997): solve g(k) = sample skewness."""
    moments = sample_moments(samples)
    skew = moments["skew_" + skew_kind]
    k, status = gm.solve_mom_k(np.where(moments["degenerate"], 0.0, skew))
    xi, alpha = gm.mom_params(moments["mean"], moments["sd"], k)
    return dict(moments, skew=skew, k=k, status=status, xi=xi, alpha=alpha)


def _validity(fit, row):
    x = fit["x"][row]
    xi, alpha, k = float(fit["xi"][row]), float(fit["alpha"][row]), float(fit["k"][row])
    ok = bool(usable(xi, alpha, k, x.min(), x.max()))
    reason = "ok" if ok else "support_violation" if support_violation(xi, alpha, k, x.min(), x.max()) else "invalid"
    result = {"valid": ok, "reason": reason}
    result["upper_bound" if k > 0 else "lower_bound"] = gm.end_point(xi, alpha, k)
    return result


def pwm_case(sample):
    """One PWM fit as the tests read it (status, b_r, L-moments, parameters, exact tau3 inversion)."""
    if len(sample) < 3:
        return {"status": "insufficient_n"}
    fit = fit_pwm(sample)
    if fit["degenerate"][0]:
        return {"status": "degenerate", "xi": float(np.mean(sample)), "alpha": 0.0, "k": 0.0}
    result = {"status": "ok"}
    for key in ("b0", "b1", "b2", "l1", "l2", "l3", "t3", "c_direct", "c", "k", "alpha", "xi"):
        result[key] = float(fit[key][0])
    result["approx_in_validated_range"] = abs(result["k"]) <= 0.5
    k_exact = gm.invert_tau3(result["t3"])
    xi, alpha = gm.params_from_l_moments(result["l1"], result["l2"], k_exact)
    result["exact_tau3_inversion"] = {"k": k_exact, "alpha": alpha, "xi": xi}
    return result


def mom_case(sample, skew_kind="adjusted"):
    if len(sample) < 3:
        return {"status": "insufficient_n"}
    fit = fit_mom(sample, skew_kind)
    if fit["degenerate"][0]:
        return {"status": "degenerate", "xi": float(np.mean(sample)), "alpha": 0.0, "k": 0.0}
    status = {0: "ok", -1: "clamped_k_lo", 1: "clamped_k_hi"}[int(fit["status"][0])]
    # scipy's bias-corrected skewness is the same statistic: a cross-check of the formula.
    scipy_skew = stats.skew(sample, bias=skew_kind == "biased")
    assert abs(scipy_skew - fit["skew"][0]) <= 1e-10 * (1 + abs(scipy_skew))
    return {"status": status, "k": float(fit["k"][0]), "alpha": float(fit["alpha"][0]), "xi": float(fit["xi"][0]),
            "skew_used": float(fit["skew"][0]), "skew_kind": skew_kind, "mean": float(fit["mean"][0]),
            "sd": float(fit["sd"][0])}


def projections(fit_json, ms):
    return [gm.emma(fit_json["xi"], fit_json["alpha"], fit_json["k"], m) for m in ms]


def normal_block_max_mean(mu, sd, block):
    """E[max of `block` iid N(mu, sd^2)] = mu + sd * int z block phi(z) Phi(z)^(block-1) dz."""
    def integrand(z):
        return z * block * math.exp(-0.5 * z * z + (block - 1) * special.log_ndtr(z)) / math.sqrt(2.0 * math.pi)

    value, error = integrate.quad(integrand, -12.0, 12.0, limit=200, epsabs=1e-13, epsrel=1e-13)
    assert error < 1e-10
    return mu + sd * value


# Each fit case: name, seed, family and its parameters. Samples are seeded draws:
# a GEV sample is x = quantile(U) with U = numpy.random.default_rng(seed).random(n)
# (the same draws scipy's genextreme.rvs makes with that generator); a normal-maximum
# sample is the maximum of `block` N(mu, sd^2) draws per value.
FIT_CASES = [
    ("gumbel_n15", 101, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.0}, 15),
    ("gumbel_n100", 102, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.0}, 100),
    ("frechet_k-0.2_n30", 103, "gev", {"xi": 10.0, "alpha": 1.0, "k": -0.2}, 30),
    ("frechet_k-0.2_n1000", 104, "gev", {"xi": 10.0, "alpha": 1.0, "k": -0.2}, 1000),
    ("weibull_k+0.25_n30", 105, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.25}, 30),
    ("weibull_k+0.25_n1000", 106, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.25}, 1000),
    ("normalmax_b32_n15", 107, "normmax", {"block": 32, "mu": 10.0, "sd": 0.5}, 15),
    ("normalmax_b32_n100", 108, "normmax", {"block": 32, "mu": 10.0, "sd": 0.5}, 100),
    ("frechet_k-0.3_n15", 109, "gev", {"xi": 10.0, "alpha": 1.0, "k": -0.3}, 15),  # PWM and MOM disagree
    ("weibull_k+0.25_n15", 110, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.25}, 15),
]


def draw(family, params, rng, shape):
    if family == "gev":
        return gm.quantile_array(params["xi"], params["alpha"], params["k"], rng.random(shape))
    return rng.normal(params["mu"], params["sd"], shape + (params["block"],)).max(axis=-1)


def true_expected_maximum(family, params, m):
    if family == "gev":
        return gm.exact_expected_maximum(params["xi"], params["alpha"], params["k"], m)
    return normal_block_max_mean(params["mu"], params["sd"], params["block"] * m)


def fit_case(name, seed, family, params, n):
    sample = draw(family, params, np.random.default_rng(seed), (n,))
    moments = sample_moments(sample)
    pwm, mom = pwm_case(sample), mom_case(sample)
    pwm_fit, mom_fit = fit_pwm(sample), fit_mom(sample)
    return {
        "case": name, "family": family,
        "generator": dict({"seed": seed, "numpy_bitgen": "PCG64"}, **params),
        "n": n, "sample": sample.tolist(),
        "sample_stats": {"n": n, "mean": float(moments["mean"][0]), "sd_n1": float(moments["sd"][0]),
                         "sd_n": float(moments["sd_n"][0]), "skew_g1_biased": float(moments["skew_biased"][0]),
                         "skew_G1_adjusted": float(moments["skew_adjusted"][0]), "median": float(np.median(sample)),
                         "min": float(sample.min()), "max": float(sample.max())},
        "pwm": pwm, "mom": mom, "mom_biased_skew": mom_case(sample, "biased"),
        "emma": {"m": M_LIST, "phi": gm.PHI_EMMA, "pwm": projections(pwm, M_LIST), "mom": projections(mom, M_LIST),
                 "pwm_exact_gev_mean_max": [gm.exact_expected_maximum(pwm["xi"], pwm["alpha"], pwm["k"], m)
                                            for m in M_LIST],
                 "mom_exact_gev_mean_max": [gm.exact_expected_maximum(mom["xi"], mom["alpha"], mom["k"], m)
                                            for m in M_LIST],
                 "true_expected_max": [true_expected_maximum(family, params, m) for m in M_LIST]},
        "validity": {"pwm": _validity(pwm_fit, 0), "mom": _validity(mom_fit, 0)},
    }


def gev_fits():
    return {"m_list": M_LIST, "cases": [fit_case(*case) for case in FIT_CASES]}


def gev_edge(gumbel_n15):
    base = np.asarray(gumbel_n15, dtype=float)
    cases = [("n2", [1.0, 2.0]), ("n3", [1.0, 2.0, 4.0]), ("all_equal", [5.0] * 10),
             ("shift_1e6_of_gumbel_n15", (base + 1e6).tolist()),
             ("scale_1e-6_of_gumbel_n15", (base * 1e-6).tolist()),
             ("ties_timer_resolution", [1.0] * 6 + [1.1] * 5 + [1.2] * 3 + [1.5])]
    out = []
    for name, sample in cases:
        case = {"name": name, "sample": sample, "pwm": pwm_case(sample), "mom": mom_case(sample)}
        if case["pwm"]["status"] == "ok":
            case["pwm_emma"] = projections(case["pwm"], M_LIST)
            case["mom_emma"] = projections(case["mom"], M_LIST)
        out.append(case)
    return {"cases": out}


def _quantiles(values, qs):
    return [float(v) for v in np.quantile(values, qs)]


def _method_summary(fit, true_k, true_max16):
    x = fit["x"]
    ok = usable(fit["xi"], fit["alpha"], fit["k"], x.min(axis=1), x.max(axis=1))
    k = fit["k"]
    relerr = emma_array(fit["xi"], fit["alpha"], k, 16) / true_max16 - 1.0
    deviation = k - k.mean()
    q05, q95 = _quantiles(k, [0.05, 0.95])
    r05, r50, r95 = _quantiles(relerr, [0.05, 0.5, 0.95])
    return ok, {
        "unusable_rate": float(np.mean(~ok)),
        "support_violation_rate": float(np.mean(support_violation(fit["xi"], fit["alpha"], k, x.min(axis=1),
                                                                  x.max(axis=1)))),
        "k_mean": float(k.mean()), "k_sd": float(k.std(ddof=1)),
        # Kurtosis (not excess) of the k estimates: the spread of a sample SD depends on it.
        "k_kurtosis": float(np.mean(deviation**4) / np.mean(deviation**2) ** 2),
        "k_q05": q05, "k_q95": q95,
        "k_rmse": None if true_k is None else float(np.sqrt(np.mean((k - true_k) ** 2))),
        "frac_abs_k_gt_0_5": float(np.mean(np.abs(k) > 0.5)),
        "emma16_relerr_median": r50, "emma16_relerr_mean": float(relerr.mean()),
        "emma16_relerr_rmse": float(np.sqrt(np.mean(relerr**2))), "emma16_relerr_q05": r05,
        "emma16_relerr_q95": r95, "emma16_abs_relerr_max": float(np.abs(relerr).max()),
    }


STUDY_REPS = 4000
STUDY_N = 15
STUDY_FAMILIES = [
    ("gumbel", 2015, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.0}),
    ("frechet_k-0.2", 2016, "gev", {"xi": 10.0, "alpha": 1.0, "k": -0.2}),
    ("weibull_k+0.25", 2017, "gev", {"xi": 10.0, "alpha": 1.0, "k": 0.25}),
    ("normalmax_b32", 2018, "normmax", {"block": 32, "mu": 10.0, "sd": 0.5}),
]


def stability_n15():
    """Monte-Carlo behaviour of PWM and MOM at n = 15, STUDY_REPS seeded samples per family."""
    study = {}
    for name, seed, family, params in STUDY_FAMILIES:
        samples = draw(family, params, np.random.default_rng(seed), (STUDY_REPS, STUDY_N))
        true_k = params.get("k")
        true_max16 = true_expected_maximum(family, params, 16)
        pwm, mom = fit_pwm(samples), fit_mom(samples)
        pwm_ok, pwm_summary = _method_summary(pwm, true_k, true_max16)
        mom_ok, mom_summary = _method_summary(mom, true_k, true_max16)
        both = pwm_ok & mom_ok
        dk = np.abs(pwm["k"] - mom["k"])[both]
        e_pwm = emma_array(pwm["xi"], pwm["alpha"], pwm["k"], 16)[both]
        e_mom = emma_array(mom["xi"], mom["alpha"], mom["k"], 16)[both]
        reldiff = np.abs(e_pwm - e_mom) / (0.5 * (np.abs(e_pwm) + np.abs(e_mom)))
        disagree = (dk > DISAGREEMENT_MAX_ABS_DK) | (reldiff > DISAGREEMENT_MAX_EMMA16_RELATIVE)
        dk_q = _quantiles(dk, [0.5, 0.95, 0.99])
        rd_q = _quantiles(reldiff, [0.5, 0.95, 0.99])
        study[name] = {
            "family": family, "generator": dict({"seed": seed, "numpy_bitgen": "PCG64"}, **params),
            "true_k": true_k, "true_expected_max_16": true_max16, "reps": STUDY_REPS, "n": STUDY_N,
            "pwm_minus_mom": {
                "both_usable": int(both.sum()),
                "abs_dk_q50": dk_q[0], "abs_dk_q95": dk_q[1], "abs_dk_q99": dk_q[2],
                "abs_emma16_reldiff_q50": rd_q[0], "abs_emma16_reldiff_q95": rd_q[1],
                "abs_emma16_reldiff_q99": rd_q[2],
                # Share of all samples flagged (both fits usable and |dk| > 0.35 or EMMA16 differs > 5 %).
                "disagreement_rate": float(disagree.sum() / STUDY_REPS),
            },
            "pwm": pwm_summary, "mom": mom_summary,
        }
    return {"study": study}


def _gev_scipy_stats(xi, alpha, k):
    with np.errstate(all="ignore"):  # scipy evaluates its k = 0 branch and the other one
        mean, variance, skew = stats.genextreme.stats(k, loc=xi, scale=alpha, moments="mvs")
    return float(mean), float(np.sqrt(variance)), float(skew)


def _scipy_mean(k, loc, scale):
    with np.errstate(all="ignore"):
        return float(stats.genextreme.mean(k, loc=loc, scale=scale))


def gev_functions():
    """Constants, quantiles, the skewness function, PWM/MOM parameter maps and EMMA."""
    gumbel_skewness = 12.0 * math.sqrt(6.0) * float(special.zeta(3, 1)) / math.pi**3
    assert abs(float(gm.skewness(0.0)) / gumbel_skewness - 1.0) < 1e-15
    constants = {
        "euler_gamma": gm.EULER_GAMMA, "phi_emma": gm.PHI_EMMA, "phi_formula": "exp(-exp(-euler_gamma))",
        "gumbel_skewness": gumbel_skewness, "ln2_over_ln3": gm.LN2_OVER_LN3, "tau3_gumbel": gm.tau3(0.0),
        "pwm_k_coeffs": list(gm.PWM_K_COEFFS), "mom_k_bracket": list(gm.MOM_K_BRACKET),
        "series_P": gm.P_SERIES[:9].tolist(), "series_Q": gm.Q_SERIES[:9].tolist(),
        "series_B": gm.B_SERIES[:9].tolist(),
        "series_note": "Gamma(1+2k)-Gamma(1+k)^2 = k^2 Q(k); -Gamma(1+3k)+3Gamma(1+k)Gamma(1+2k)-2Gamma(1+k)^3 = "
                       "k^3 P(k); (Gamma(1+k)-1)/k = B(k); skew g(k)=P/Q^1.5; ascending powers of k",
    }

    quantile_rows = []
    for xi, alpha, k in [(10.0, 1.0, -0.2), (10.0, 1.0, -1e-9), (10.0, 1.0, 0.0), (10.0, 1.0, 1e-9),
                         (10.0, 1.0, 0.25), (0.003, 0.0004, 0.1), (5.0, 2.0, -0.45)]:
        for f in [0.001, 0.1, 0.5, gm.PHI_EMMA, 0.9, 0.999]:
            q = gm.quantile(xi, alpha, k, f)
            scipy_ppf = float(stats.genextreme.ppf(f, k, loc=xi, scale=alpha))
            assert abs(q - scipy_ppf) <= 1e-12 * abs(q)
            quantile_rows.append({"xi": xi, "alpha": alpha, "k": k, "F": f, "quantile": q, "scipy_ppf": scipy_ppf,
                                  "cdf_of_quantile": gm.cdf(xi, alpha, k, q)})

    skew_rows = []
    for k in [-0.3333, -0.3, -0.2, -0.1, -0.02, -0.0100001, -0.0099999, -0.001, -1e-5, 0.0, 1e-5, 0.001, 0.0099999,
              0.0100001, 0.02, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0]:
        # scipy's skewness uses the direct Gamma form, inaccurate near k = 0: shown where |k| >= 0.02 only.
        scipy_skew = _gev_scipy_stats(0.0, 1.0, k)[2] if abs(k) >= 0.02 else None
        skew_rows.append({"k": k, "skew": float(gm.skewness(k)), "Q": float(gm.q_of_k(k)), "scipy_skew": scipy_skew})
    grid = np.linspace(gm.MOM_K_BRACKET[0], 3.0, 20001)
    skew_function = {"values": skew_rows, "monotone_decreasing_on_grid": bool(np.all(np.diff(gm.skewness(grid)) < 0)),
                     "grid": [gm.MOM_K_BRACKET[0], 3.0, 20001],
                     "g_at_k_hi": float(gm.skewness(gm.MOM_K_BRACKET[1]))}

    pwm_rows = []
    t3_gumbel = gm.tau3(0.0)
    for t3 in [t3_gumbel, t3_gumbel + 1e-9, t3_gumbel - 1e-9, 0.0, 0.3, -0.1, gm.tau3(-0.5), gm.tau3(0.5),
               gm.tau3(-0.8), gm.tau3(1.0)]:
        c, k = gm.pwm_k_polynomial(t3)
        xi, alpha = gm.params_from_l_moments(10.0, 1.0, k)
        k_exact = gm.invert_tau3(t3)
        pwm_rows.append({"c": c, "k": k, "alpha": alpha, "xi": xi, "l1": 10.0, "l2": 1.0, "t3": t3,
                         "k_exact": k_exact, "k_abs_err": abs(k - k_exact)})
    # |k_poly - k| over k in [-0.5, 0.5], the range Hosking, Wallis & Wood validated (< 9e-4).
    k_grid = np.linspace(-0.5, 0.5, 20001)
    k_grid = k_grid[k_grid != 0.0]
    t3_grid = 2.0 * np.expm1(-k_grid * math.log(3.0)) / np.expm1(-k_grid * math.log(2.0)) - 3.0
    polynomial_error = float(np.max(np.abs(gm.pwm_k_polynomial(t3_grid)[1] - k_grid)))

    mom_rows = []
    g0 = float(gm.skewness(0.0))
    for skew in [g0, g0 + 1e-9, 0.0, -1.0, -2.0, 2.0, 5.0, 50.0, 1e7, -1e6]:
        k, status = gm.solve_mom_k(skew)
        xi, alpha = gm.mom_params(10.0, 1.0, k)
        row = {"status": {0: "ok", -1: "clamped_k_lo", 1: "clamped_k_hi"}[int(status[0])], "k": float(k[0]),
               "alpha": float(alpha[0]), "xi": float(xi[0]), "mean": 10.0, "sd": 1.0, "skew": skew}
        if row["status"] == "ok" and abs(row["k"]) >= 0.02:
            scipy_mean, scipy_sd, scipy_skew = _gev_scipy_stats(row["xi"], row["alpha"], row["k"])
            assert abs(scipy_mean - 10.0) < 1e-9 and abs(scipy_sd - 1.0) < 1e-9 and abs(scipy_skew - skew) < 1e-8
            row.update(scipy_mean=scipy_mean, scipy_sd=scipy_sd, scipy_skew=scipy_skew)
        mom_rows.append(row)

    emma_rows = []
    for xi, alpha, k in [(10.0, 1.0, 0.0), (10.0, 1.0, -0.2), (10.0, 1.0, 0.25), (1.0, 0.05, 0.1)]:
        for m in [1, 2, 4, 8, 16, 64, 1024]:
            # The maximum of m iid GEVs is a GEV with scale alpha m^-k and location xi + alpha(1 - m^-k)/k.
            max_scale = alpha * m ** (-k)
            max_loc = xi + alpha * math.log(m) if k == 0 else xi + alpha * -math.expm1(-k * math.log(m)) / k
            emma_rows.append({
                "xi": xi, "alpha": alpha, "k": k, "m": m, "emma": gm.emma(xi, alpha, k, m),
                "emma_via_scipy_ppf": float(stats.genextreme.ppf(gm.PHI_EMMA ** (1.0 / m), k, loc=xi, scale=alpha)),
                "exact_mean_max": gm.exact_expected_maximum(xi, alpha, k, m),
                "exact_mean_max_via_scipy": _scipy_mean(k, max_loc, max_scale)})

    difference_rows = [{"k": k, "m": m, "value": gm.emma_minus_exact_unit(k, m),
                        "small_k_approx": math.pi**2 / 12.0 * k * m ** (-k)}
                       for k in [-0.5, -0.3, -0.2, -0.1, -0.01, 0.0, 0.01, 0.1, 0.25, 0.5] for m in [1, 2, 16, 1024]]

    # Sample skewness is bounded: g1 <= (n-2)/sqrt(n-1), G = g1 sqrt(n(n-1))/(n-2) <= sqrt(n) (Kirby 1974).
    limit_rows = []
    for n in [5, 10, 15, 20, 30, 50, 100, 1000, 10000]:
        g_adjusted, g_biased = math.sqrt(n), (n - 2) / math.sqrt(n - 1)
        limit_rows.append({"n": n, "G1_max": g_adjusted, "g1_max": g_biased,
                           "k_min_with_G1": float(gm.solve_mom_k(g_adjusted)[0][0]),
                           "k_min_with_g1": float(gm.solve_mom_k(g_biased)[0][0])})

    return {"constants": constants, "quantile": quantile_rows, "skew_function": skew_function,
            "pwm_from_lmoments": pwm_rows, "pwm_k_approx_max_abs_err_k_in_[-0.5,0.5]": polynomial_error,
            "mom_from_moments": mom_rows, "emma": emma_rows, "emma_minus_exact_over_alpha": difference_rows,
            "mom_k_lower_limit_by_n": limit_rows}
