// Long-run variance of a serially dependent series and its ratio to the iid
// variance (variance inflation factor, VIF).
//
// For a stationary series with autocovariances γ_j, n·Var(mean) → the
// long-run variance Ω = γ_0 + 2 Σ_{j≥1} γ_j, while an iid formula uses γ_0.
// VIF = Ω / γ_0 is the factor by which positive autocorrelation inflates the
// variance of a sum (and of a mean) over what an iid bootstrap assumes.
//
// Estimator: Newey & West (1987), Econometrica 55(3):703–708, Bartlett kernel
//   Ω̂ = γ̂_0 + 2 Σ_{j=1}^{m} (1 − j/(m+1)) γ̂_j,  γ̂_j = (1/n) Σ_t e_t e_{t−j},
// e_t = x_t − mean, with the automatic lag of Newey & West (1994), Review of
// Economic Studies 61(4):631–653 (no prewhitening):
//   L = ⌊4 (n/100)^{2/9}⌋,  s_0 = γ̂_0 + 2 Σ_{j=1}^{L} γ̂_j,  s_1 = 2 Σ_{j=1}^{L} j γ̂_j,
//   m = ⌊1.1447 · (s_1/s_0)^{2/3} · n^{1/3}⌋.
// The Bartlett weights keep Ω̂ ≥ 0. Choices of this library: m is limited to
// ⌊4·n^{1/3}⌋ (the rule's own rate; for an AR(1) whose VIF is within the cap
// the rule gives 1.1447·(s_1/s_0)^{2/3} ≤ 3.3 < 4, so the limit only stops
// pathological series; cost O(n^{4/3}));
// when s_0 ≤ 0 (the preliminary sum says negative dependence) m = L; the
// factor is floored at 1 (an interval is never narrowed: negative dependence
// is not used to claim precision) and capped at kMaxVarianceInflation.
#pragma once

#include <cstddef>
#include <span>

namespace tremor::estimators {

/// Below this many finite values the autocovariances cannot be told from
/// chance: the factor is 1 (no inflation) and `estimated` is false.
inline constexpr std::size_t kMinVarianceInflationLength = 20;
/// A ratio above 10 means a trend or level shift rather than a stationary
/// dependence; the factor (and so an interval's widening, √10 ≈ 3.2) stops there.
inline constexpr double kMaxVarianceInflation = 10.0;

struct VarianceInflation {
  double factor = 1.0;             ///< clamp(ratio, 1, kMaxVarianceInflation); 1 when not estimated
  double ratio = 1.0;              ///< Ω̂ / γ̂_0 before the clamp (1 when not estimated)
  double long_run_variance = 0.0;  ///< Ω̂
  double iid_variance = 0.0;       ///< γ̂_0 (divisor n)
  std::size_t bandwidth = 0;       ///< Bartlett lag m
  std::size_t length = 0;          ///< finite values used
  std::size_t dropped_non_finite = 0;
  bool estimated = false;  ///< false: too short or constant
  bool capped = false;     ///< ratio > kMaxVarianceInflation
};

/// VIF of `series` in time order. Non-finite values are dropped (and counted);
/// the remaining values keep their order.
VarianceInflation variance_inflation_factor(std::span<const double> series);

}  // namespace tremor::estimators
