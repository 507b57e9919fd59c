"""Reference vectors of the rule-based estimators: maxima bootstrap, clustering,
4-MAD interference, logistic classification and value quantization.

Decisions (comparisons, flags, merges) are made in exact rational arithmetic
on the exact values of the inputs, so a vector states what the rule means,
not what one rounding of it gives; the generator refuses inputs where the
double-precision evaluation would decide differently (a near-tie).
"""

import math
from fractions import Fraction

import numpy as np
from scipy import special

import gev_math as gm


def _exact(value):
    return Fraction(value)


# ---------------------------------------------------------------- bootstrap
def percentile_indices_exact(nboot, ci):
    """lo = floor(n(1-ci)/2), hi = min(n-1, floor(n(1+ci)/2)), 0-based, with ci read as the decimal it is written as."""
    c = Fraction(str(ci))
    return math.floor(nboot * (1 - c) / 2), min(nboot - 1, math.floor(nboot * (1 + c) / 2))


def bootstrap():
    """Non-parametric bootstrap of a sample maximum (Efron 1979; its limits: Bickel & Freedman 1981)."""
    rng = np.random.default_rng(20)
    # 20 distinct maxima (6 decimals, like timings in seconds) from a heavy-tailed GEV around 10.
    sample = np.round(gm.quantile_array(10.0, 1.0, -0.2, rng.random(20)), 6)
    assert len(set(sample.tolist())) == len(sample)
    k, ci = len(sample), 0.95
    ordered = np.sort(sample)
    # Exact law of T* = max of K draws with replacement: P(T* <= y(j)) = (j/K)^K.
    cdf = [(j / k) ** k for j in range(1, k + 1)]
    # With B -> infinity the 0-based index floor(B p) picks the first y(j) with P(T* <= y(j)) > p.
    tail = (1 - Fraction(str(ci))) / 2
    lower_j = next(j for j in range(1, k + 1) if Fraction(j, k) ** k > tail)
    upper_j = next(j for j in range(1, k + 1) if Fraction(j, k) ** k > 1 - tail)
    indices = rng.integers(0, k, size=(200, k))
    maxima = np.sort(sample[indices].max(axis=1))
    lo, hi = percentile_indices_exact(200, ci)
    table = []
    for nboot, level in [(1000, 0.95), (200, 0.95), (100, 0.9), (1000, 0.9), (10, 0.95), (1000, 0.99), (20, 0.5),
                         (500, 0.95), (999, 0.95), (100, 1.0)]:
        lo_t, hi_t = percentile_indices_exact(nboot, level)
        # What a plain floor of the double products gives (off by one where n(1-ci)/2 rounds down).
        table.append({"nboot": nboot, "ci": level, "lo": lo_t, "hi": hi_t,
                      "naive_floor_lo": math.floor(nboot * (1 - level) / 2),
                      "naive_floor_hi": math.floor(nboot * (1 + level) / 2)})
    return {
        "sample": sample.tolist(), "k": k, "ci": ci,
        "exact_bootstrap_max_cdf_at_order_stats": cdf,
        "exact_percentile_ci_infinite_B": {"lower": float(ordered[lower_j - 1]), "lower_order_stat": lower_j,
                                           "upper": float(ordered[upper_j - 1]), "upper_order_stat": upper_j},
        "prob_boot_max_equals_sample_max": 1.0 - (1.0 - 1.0 / k) ** k,
        "replay": {"nboot": 200, "resample_indices": indices.tolist(), "boot_maxima": maxima.tolist(),
                   "lo_index": lo, "hi_index": hi, "lower": float(maxima[lo]), "upper": float(maxima[hi])},
        "index_rule": "lo=floor(n(1-ci)/2), hi=min(n-1, floor(n(1+ci)/2)), 0-based in ascending order; ci exact "
                      "as written (an implementation in doubles needs a small epsilon, see naive_floor_*)",
        "index_table": table,
    }


# --------------------------------------------------------------- clustering
def _joins(a, b, threshold):
    """Join iff b - a == 0, or min(|a|,|b|) > 0 and (b - a)/min(|a|,|b|) < threshold (strict)."""
    d = _exact(b) - _exact(a)
    if d == 0:
        return True
    smaller = min(abs(_exact(a)), abs(_exact(b)))
    if smaller == 0:
        return False
    exact = d / smaller < Fraction(str(threshold))
    in_doubles = (b - a) / min(abs(a), abs(b)) < threshold
    # A tie exactly at the threshold splits in both; anything closer than rounding is not a usable vector.
    assert exact == in_doubles or d / smaller == Fraction(str(threshold)), (a, b)
    return exact


def cluster(values, threshold, min_size):
    """Single-linkage on the sorted values with the relative-gap rule (Gower & Ross 1969)."""
    ordered = sorted(v for v in values if not math.isnan(v))
    groups = [[ordered[0]]]
    for a, b in zip(ordered, ordered[1:]):
        if _joins(a, b, threshold):
            groups[-1].append(b)
        else:
            groups.append([b])
    return [{"members": g, "size": len(g), "used": len(g) >= min_size, "mean": math.fsum(g) / len(g)} for g in groups]


def clustering():
    chain = [1.0]
    for _ in range(11):
        chain.append(chain[-1] * 1.09)
    inputs = [
        ("basic_two_clusters", [1.0, 1.02, 1.05, 1.07, 1.09, 5.0, 5.1, 5.2, 5.3, 5.4, 5.45, 20.0]),
        ("unsorted_input", [5.4, 1.0, 5.0, 1.05, 20.0, 1.07, 5.2, 1.02, 5.3, 1.09, 5.1, 5.45]),
        ("exact_tie_splits", [10.0, 11.0]),  # (11-10)/10 is exactly the threshold: strict < splits
        ("chaining", chain),  # single linkage chains 1.09^i into one cluster spanning 2.58x
        ("zeros_and_negatives", [-2.0, -1.95, -1.9, -1.85, -1.8, 0.0, 0.0, 0.0, 0.3, 0.31]),
        ("duplicates", [3.0] * 6 + [100.0] * 4),
        ("small_cluster_not_used", [1.0, 1.01, 1.02, 1.03, 50.0, 50.5, 51.0, 51.5, 52.0]),
    ]
    rule = "sorted; join iff (b-a)==0 or (b-a)/min(|a|,|b|) < threshold; min(|a|,|b|)==0 and b!=a -> split"
    return {"rule": rule, "cases": [{"name": name, "input": values, "threshold": 0.1, "min_size": 5,
                                     "clusters": cluster(values, 0.1, 5)} for name, values in inputs]}


# ---------------------------------------------------------------------- MAD
def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def mad_case(name, times, total_run_time, factor=4.0):
    """Median and unscaled MAD (Hampel 1974; Leys et al. 2013); interfered iff t > median + factor*MAD."""
    exact = [_exact(t) for t in times]
    median = _median(exact)
    mad = _median([abs(t - median) for t in exact])
    threshold = median + _exact(factor) * mad
    interfered = [t > threshold for t in exact]
    impact = [t - threshold if flag else Fraction(0) for t, flag in zip(exact, interfered)]
    total = sum(impact, Fraction(0))
    return {"name": name, "times": times, "total_run_time": total_run_time, "nmad": factor, "median": float(median),
            "mad": float(mad), "threshold": float(threshold), "interfered": interfered,
            "impact": [float(i) for i in impact], "total_impact": float(total),
            "interference_percent": float(100 * total / _exact(total_run_time))}


def mad():
    rule = "median, MAD unscaled; interfered iff t > median+4*MAD; impact = t-(median+4*MAD); percent = " \
           "sum/total*100"
    cases = [
        mad_case("odd_n", [1.0, 1.02, 0.98, 1.01, 0.99, 1.5, 1.03, 0.97, 2.2], 20.0),
        mad_case("even_n", [2.0, 2.1, 1.9, 2.05, 1.95, 3.5, 2.02, 2.08], 30.0),
        mad_case("mad_zero_majority_equal", [1.0, 1.0, 1.0, 1.0, 1.0, 1.0001, 2.0], 10.0),
        mad_case("all_equal", [4.0] * 6, 24.0),
        mad_case("no_outlier", [1.0, 2.0, 3.0, 4.0, 5.0, 7.0], 30.0),
        mad_case("exact_tie_not_interfered", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 12.0], 40.0),
        mad_case("just_above_threshold", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 13.0], 40.0),
        mad_case("single", [3.0], 3.0),
    ]
    return {"rule": rule, "cases": cases}


# ----------------------------------------------------------------- logistic
def logistic_probability(x):
    """p(x) = 1/(1 + exp(-0.35 (x - 11.25))), x in percent."""
    return float(special.expit(0.35 * (x - 11.25)))


def logistic():
    def cls(x):
        return "low" if x < 7.5 else "high" if x > 15.0 else "medium"

    xs = [-1000.0, -100.0, 0.0, 5.0, 7.5, 7.4999, 10.0, 11.25, 12.0, 15.0, 15.0001, 20.0, 50.0, 100.0, 1000.0]
    return {"rule": "p=1/(1+exp(-0.35(x-11.25))); low x<7.5; high x>15",
            "checks": {"p7_5": logistic_probability(7.5), "p11_25": logistic_probability(11.25),
                       "p15": logistic_probability(15.0)},
            "cases": [{"x": x, "p": logistic_probability(x), "cls": cls(x)} for x in xs]}


# ------------------------------------------------------------- quantization
class _Bin:
    def __init__(self, value, bin_id):
        self.id, self.sum, self.count, self.min, self.max = bin_id, value, 1, value, value
        self.exact_sum = _exact(value)

    @property
    def rep(self):
        return self.sum / self.count

    @property
    def exact_rep(self):
        return self.exact_sum / self.count

    def absorb(self, other):
        self.sum += other.sum
        self.count += other.count
        self.exact_sum += other.exact_sum
        self.min, self.max = min(self.min, other.min), max(self.max, other.max)

    def as_json(self):
        return {"rep": self.rep, "count": self.count, "min": self.min, "max": self.max}


def _closest_pair(bins):
    """Index j of the adjacent pair with the least rep[j+1] - rep[j], lowest j on ties.

    The same choice must follow from the exact reps: a vector that rests on
    rounding would test the rounding, not the rule.
    """
    gaps = [b.rep - a.rep for a, b in zip(bins, bins[1:])]
    exact_gaps = [b.exact_rep - a.exact_rep for a, b in zip(bins, bins[1:])]
    j = gaps.index(min(gaps))
    assert exact_gaps.index(min(exact_gaps)) == j, "near-tie between merge candidates"
    return j


def merge_program(tables, max_bins):
    """Program-wide merge: every rank's bins sorted by (rep, rank, local index), then the
    same closest-adjacent merge until at most max_bins remain."""
    items = sorted(((b.rep, rank, local) for rank, table in enumerate(tables) for local, b in enumerate(table)))
    groups = []
    for _, rank, local in items:
        source = tables[rank][local]
        merged = _Bin(source.min, None)
        merged.sum, merged.count, merged.max, merged.exact_sum = source.sum, source.count, source.max, source.exact_sum
        groups.append((merged, [(rank, local)]))
    while len(groups) > max_bins:
        j = _closest_pair([g[0] for g in groups])
        upper = groups.pop(j + 1)
        groups[j][0].absorb(upper[0])
        groups[j][1].extend(upper[1])
    local_to_global = [[None] * len(table) for table in tables]
    for index, (_, members) in enumerate(groups):
        for rank, local in members:
            local_to_global[rank][local] = index
    return [g[0] for g in groups], local_to_global


def _decimal_stream(values):
    """Values as the nearest doubles to their 7-decimal text (timings as a timer prints them)."""
    return [float(format(v, ".7f")) for v in values]


UNITS_PER_SECOND = 2 ** 30
MAX_CODE = 1 + 62 * 1024 + 1023


def encode(value, seconds):
    """The log code from the value's binary exponent and first 10 fraction bits (frexp, not bit casts)."""
    units = _exact(value) * (UNITS_PER_SECOND if seconds else 1)
    if not units >= 1:
        return 0
    if units >= 2 ** 63:
        return MAX_CODE
    mantissa, exponent = math.frexp(float(units))  # units = mantissa 2^exponent, mantissa in [0.5, 1)
    fraction = Fraction(mantissa) * 2 - 1
    return 1 + (exponent - 1) * 1024 + math.floor(fraction * 1024)


def decode(code, seconds):
    """The code's value: its interval's centre; for counts below 2048 its lower edge (the one integer)."""
    if code == 0:
        return 0.0
    exponent, fraction = divmod(code - 1, 1024)
    lower = Fraction(1024 + fraction) * Fraction(2) ** (exponent - 10)
    if not seconds and exponent <= 10:
        return float(lower)
    centre = lower + Fraction(2) ** (exponent - 10) / 2
    return float(centre / UNITS_PER_SECOND) if seconds else float(centre)


def _code_bin(code, count, seconds):
    value = decode(code, seconds)
    b = _Bin(value, None)
    b.sum, b.count, b.exact_sum = value * count, count, _exact(value) * count
    return b


def quantization():
    values = [0.0, -1.0, 1e-10, 2.0 ** -30, 1e-9, 1.2345e-6, 1e-3, 0.0123456789, 1.0, 3600.0, 1e5,
              2.0 ** 33 - 1e-3, 2.0 ** 40]
    counts = [0.0, 1.0, 2.0, 3.0, 1023.0, 1024.0, 1025.0, 2047.0, 2048.0, 2049.0, 2050.0, 123456789.0,
              2.0 ** 62, 2.0 ** 63 - 1024, 2.0 ** 63, 1e30]
    codes = ([{"value": v, "scale": "seconds", "code": encode(v, True), "decoded": decode(encode(v, True), True)}
              for v in values] +
             [{"value": v, "scale": "count", "code": encode(v, False), "decoded": decode(encode(v, False), False)}
              for v in counts])
    for case in codes:  # the precision the code promises
        v, d = case["value"], case["decoded"]
        in_range = 1e-9 <= v < 2 ** 33 if case["scale"] == "seconds" else 1 <= v < 2 ** 63
        if in_range and case["scale"] == "count" and v < 2048:
            assert d == v
        elif in_range:
            assert abs(d - v) <= v / 2048

    rng = np.random.default_rng(7)
    rank2 = _decimal_stream(rng.lognormal(math.log(1.2e-3), 0.5, 24))
    rank2 += [0.05] * 3 + rank2[3:6]  # outliers and exact repeats
    streams = [_decimal_stream(rng.lognormal(math.log(0.9e-3), 0.0005, 40)),  # many share a code
               _decimal_stream(rng.lognormal(math.log(2.0e-3), 0.2, 40)),
               [rank2[i] for i in rng.permutation(len(rank2))]]
    per_process, tables = [], []
    for rank, stream in enumerate(streams):
        stream_codes = [encode(v, True) for v in stream]
        used = sorted(set(stream_codes))
        table = [_code_bin(c, stream_codes.count(c), True) for c in used]
        tables.append(table)
        per_process.append({"rank": rank, "stream": stream, "codes": stream_codes,
                            "bins": [dict(b.as_json(), code=c) for b, c in zip(table, used)],
                            "final_index_of_each_sample": [used.index(c) for c in stream_codes]})
    program_codes = sorted({c for process in per_process for c in process["codes"]})
    program = [_code_bin(c, sum(p["codes"].count(c) for p in per_process), True) for c in program_codes]
    for process in per_process:
        process["code_local_to_global"] = [program_codes.index(b["code"]) for b in process["bins"]]
    paper_bins, paper_local_to_global = merge_program(tables, 12)
    for process, mapping in zip(per_process, paper_local_to_global):
        process["paper_local_to_global"] = mapping
    rule = ("log code: units = value x 2^30 for seconds, x 1 for counts; 0 if units < 1; else 1 + 1024 e + "
            "floor(1024 f) with units = (1 + f) 2^e, e <= 62 (larger: the last code); decoded = interval centre, "
            "or for counts below 2048 the lower edge. Per process: one bin per code used (sum = value x count), "
            "ascending. Program: the union of the codes, counts added. Paper bins: all code bins sorted by "
            "(rep, rank, local_idx), the adjacent pair with least rep_j+1 - rep_j merges (lowest j on ties) "
            "until <= B_global.")
    return {"rule": rule, "codes": codes, "per_process": per_process,
            "program_bins": [dict(b.as_json(), code=c) for b, c in zip(program, program_codes)],
            "paper_global_max_bins": 12, "paper_bins": [b.as_json() for b in paper_bins]}
