"""The replay check's tolerance, derived from the held-out campaigns.

A replay's truth band is [truth + low, truth + high]: the injected critical
path plus the bounds of the machine's own run-queue delay on it, both from the
injector's logs (validation/campaigns/injected_truth.py). The held-out
campaigns (validation/heldout/*/runs.csv: the frozen model on seeds and a
workload no tuning used) give the same band and Tremor's estimate for each
of their runs. A run's miss is how far its estimate lies outside its band
(0 inside). Misses grow with the lost time (an estimate of 70 % misses by
more than one of 1 %), so the spread is taken relative to the band's high
end:

    r = max over held-out runs of miss / (truth + high)

and a replay's estimate may lie up to MARGIN · r · (truth + high) outside
its band. MARGIN = 2: the replays are a new sample of the same runs, and the
largest miss of a new sample of about the held-out's size exceeds the held-out
largest with probability about one half (exchangeable samples); doubling the
largest miss leaves room for that without admitting a wrong estimator (the
replay check's docstring lists the known-wrong ones it fails).
"""
import csv
import glob
import os

HELDOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "validation", "heldout")
MARGIN = 2.0
# Kinds that plant nothing: their truth is the machine's share alone (the
# held-out tables hold the wall clock in truth_percent for them).
UNPLANTED = {"contended", "contended_window"}


def band(planted_percent, low_percent, high_percent):
    return planted_percent + low_percent, planted_percent + high_percent


def miss(estimate, band_low, band_high):
    """How far an estimate lies outside its band, pp (0 inside)."""
    return max(0.0, band_low - estimate, estimate - band_high)


def heldout_misses(folder=HELDOUT):
    """[(workload, kind, miss pp, band high %)] of every held-out run with a logged machine band."""
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*", "runs.csv"))):
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["machine_low_percent"] == "" or row.get("taking_turns") == "1":
                    continue
                planted = 0.0 if row["kind"] in UNPLANTED else float(row["truth_percent"])
                low, high = band(planted, float(row["machine_low_percent"]), float(row["machine_high_percent"]))
                rows.append((row["workload"], row["kind"], miss(float(row["primary_percent"]), low, high), high))
    if not rows:
        raise RuntimeError(f"no held-out runs with a machine band under {folder}")
    return rows


def relative_spread(folder=HELDOUT):
    """(r, the run that sets it): the largest held-out miss relative to its band's high end."""
    worst = max(heldout_misses(folder), key=lambda r: r[2] / r[3] if r[3] > 0 else 0.0)
    return worst[2] / worst[3], worst


def tolerance_pp(band_high_percent, r):
    return MARGIN * r * max(0.0, band_high_percent)


if __name__ == "__main__":
    spread, (workload, kind, worst_miss, worst_high) = relative_spread()
    print(f"{len(heldout_misses())} held-out runs; largest relative miss r = {spread:.4f} "
          f"({workload} {kind}: {worst_miss:.2f} pp outside a band ending at {worst_high:.2f} %); "
          f"tolerance = {MARGIN:g} r (truth + high)")
