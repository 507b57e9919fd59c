// Generalized extreme value distribution in Hosking's parameterisation
// (docs/statistics.md#gev-fits, #emma): location `loc` (ξ), scale `scale` (α), shape `k`.
// Hosking k equals scipy.stats.genextreme's c and is minus Coles' ξ.
//   k > 0: bounded upper tail (Weibull type), k < 0: heavy tail (Fréchet type).
#pragma once

#include <string_view>

namespace tremor::estimators {

inline constexpr double kEulerGamma = 0.5772156649015329;
/// φ = exp(−e^(−γ)); EMMA evaluates F⁻¹(φ^(1/m)).
inline constexpr double kEmmaPhi = 0.5703760016750231;
/// |k| below this uses the Gumbel (k = 0) formulas; the expm1/log1p forms are exact above it.
inline constexpr double kGumbelBranchK = 1e-12;

struct GevParams {
  double loc = 0.0;
  double scale = 0.0;
  double k = 0.0;
};

double gev_cdf(const GevParams& params, double x);
/// x(F) for F in (0, 1); NaN outside.
double gev_quantile(const GevParams& params, double probability);

/// B(k) = (Γ(1+k) − 1)/k, with its series below |k| = 1e-6 (B(0) = −γ).
double gamma_ratio_b(double k);

/// EMMA: ξ − α·expm1(−k(γ + ln m))/k, or ξ + α(γ + ln m) for k = 0.
double emma(const GevParams& params, double m);

/// Exact E[max of m iid GEV] by max-stability; +inf for k <= −1 (no mean).
double exact_expected_maximum(const GevParams& params, double m);

/// ξ + α/k: the upper end point for k > 0, the lower one for k < 0; NaN for k = 0.
double gev_end_point(const GevParams& params);

enum class GevType { gumbel, frechet, weibull };

/// Our tolerance for calling a fitted shape "Gumbel": |k| < 0.05. The PWM
/// polynomial alone is accurate to 9e-4 and a sample of 15 maxima gives k an SD
/// of 0.14–0.35 (docs/statistics.md#validity-and-fallback), so only a small band is labelled Gumbel:
/// at |k| = 0.05 EMMA(16) moves by about 0.27 α from the Gumbel value, the size
/// of difference a user would still call "light-tailed".
inline constexpr double kGumbelTypeTolerance = 0.05;
GevType classify_gev_type(double k, double tolerance = kGumbelTypeTolerance);
std::string_view to_string(GevType type);

}  // namespace tremor::estimators
