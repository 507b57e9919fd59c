// Probability-weighted-moment GEV fit (docs/statistics.md#pwm).
#include "fast_gamma.hpp"
#include <cmath>
#include <numbers>

#include "gev_fit_common.hpp"
#include "tremor/estimators/gev_fit.hpp"

namespace tremor::estimators {
namespace {

constexpr double kLn2 = std::numbers::ln2;
constexpr double kLn3 = 1.0986122886681098;
constexpr double kPolynomialValidK = 0.5;  // |k_poly − k_exact| <= 8.8e-4 inside

// L-skewness of a GEV with shape k: 2(1 − 3^(−k))/(1 − 2^(−k)) − 3, expm1 forms.
double gev_l_skewness(double k) {
  if (std::fabs(k) < kGumbelBranchK) return 2.0 * kLn3 / kLn2 - 3.0;
  return 2.0 * std::expm1(-k * kLn3) / std::expm1(-k * kLn2) - 3.0;
}

// Newton on τ3(k) = t3 from the polynomial start; the derivative is a central
// difference because the analytic one cancels badly near k = 0.
double invert_l_skewness(double t3, double k_start) {
  double k = k_start;
  constexpr double kStep = 1e-6;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const double residual = gev_l_skewness(k) - t3;
    const double slope = (gev_l_skewness(k + kStep) - gev_l_skewness(k - kStep)) / (2.0 * kStep);
    if (!(slope != 0.0) || !std::isfinite(slope)) break;
    const double step = residual / slope;
    k -= step;
    if (std::fabs(step) < 1e-14) break;
  }
  return k;
}

}  // namespace

GevParams gev_from_l_moments(double l1, double l2, double t3, bool refine_by_newton, std::uint32_t& flags) {
  const double c = 2.0 / (3.0 + t3) - kLn2 / kLn3;
  double k = 7.8590 * c + 2.9554 * c * c;
  if (std::fabs(k) > kPolynomialValidK) flags |= kPwmKOutOfRange;
  if (refine_by_newton) k = invert_l_skewness(t3, k);
  GevParams params;
  params.k = k;
  if (std::fabs(k) < kGumbelBranchK) {
    params.scale = l2 / kLn2;
  } else {
    // 1 − 2^(−k) = −expm1(−k ln 2)
    params.scale = l2 * k / (-std::expm1(-k * kLn2) * detail::gamma_function(1.0 + k));
  }
  params.loc = l1 + params.scale * gamma_ratio_b(k);
  return params;
}

GevFit fit_pwm(std::span<const double> sample, const PwmOptions& options) {
  GevFit fit;
  fit.method = FitMethod::pwm;
  const std::vector<double> x = detail::prepare_sample(sample, fit);
  if (fit.flags & kInsufficientN) return fit;

  // Centre on the median: l2 and l3 are shift-invariant, and centring avoids
  // cancellation for large offsets (b_r itself shifts by c/(r+1)).
  const std::size_t n = x.size();
  const double centre = n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
  const double nd = static_cast<double>(n);
  double b0 = 0.0, b1 = 0.0, b2 = 0.0;
  for (std::size_t j = 0; j < n; ++j) {  // j is the 0-based order, i.e. (j−1) of the PWM formulas
    const double value = x[j] - centre;
    const double jd = static_cast<double>(j);
    b0 += value;
    b1 += jd / (nd - 1.0) * value;
    b2 += jd * (jd - 1.0) / ((nd - 1.0) * (nd - 2.0)) * value;
  }
  b0 /= nd;
  b1 /= nd;
  b2 /= nd;
  PwmDiagnostics& d = fit.pwm;
  d.b0 = b0 + centre;
  d.b1 = b1 + centre / 2.0;
  d.b2 = b2 + centre / 3.0;
  d.l1 = d.b0;
  d.l2 = 2.0 * b1 - b0;
  d.l3 = 6.0 * b2 - 6.0 * b1 + b0;
  if (detail::is_degenerate_spread(d.l2, x)) {
    detail::set_degenerate(fit, d.l1);
    return fit;
  }
  d.t3 = d.l3 / d.l2;
  d.c = 2.0 / (3.0 + d.t3) - kLn2 / kLn3;
  fit.params = gev_from_l_moments(d.l1, d.l2, d.t3, options.refine_by_newton, fit.flags);
  detail::apply_validity_rules(fit);
  return fit;
}

}  // namespace tremor::estimators
