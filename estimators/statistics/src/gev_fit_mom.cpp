// Method-of-moments GEV fit (docs/statistics.md#mom).
#include "fast_gamma.hpp"
#include <boost/math/tools/roots.hpp>
#include <array>
#include <cmath>
#include <cstdint>

#include "gev_fit_common.hpp"
#include "tremor/estimators/gev_fit.hpp"

namespace tremor::estimators {
namespace {

constexpr double kLowerK = -1.0 / 3.0 + 1e-6;  // the skewness exists only for k > −1/3
constexpr double kUpperK = 10.0;
constexpr double kSeriesBelow = 0.01;
// Γ(1+2k) − Γ(1+k)² = k²Q(k) and −Γ(1+3k) + 3Γ(1+k)Γ(1+2k) − 2Γ(1+k)³ = k³P(k),
// ascending powers (the ninth terms are from the reference vectors; they change
// the result by < 2e-11 for |k| < 0.01).
constexpr std::array<double, 9> kSeriesP = {2.40411380631919,   -22.021409803874235, 107.16004270694047,
                                            -433.9704295654897, 1562.3260267409623,  -5267.918238763915,
                                            17040.049647733336, -53694.15249879542,  166354.71081716684};
constexpr std::array<double, 9> kSeriesQ = {1.6449340668482266, -4.303077228549151,  11.718339177218883,
                                            -26.53141916464012, 57.67611285960975,   -120.6254077476928,
                                            247.65840041981136, -502.64981061634904, 1013.6553090068471};

double polynomial(const std::array<double, 9>& coefficients, double k) {
  double value = 0.0;
  for (auto it = coefficients.rbegin(); it != coefficients.rend(); ++it) value = value * k + *it;
  return value;
}

// Γ(1+2k) − Γ(1+k)²: the variance of a unit-scale GEV times k².
double variance_factor(double k) {
  const double g1 = detail::gamma_function(1.0 + k);
  return detail::gamma_function(1.0 + 2.0 * k) - g1 * g1;
}

}  // namespace

double gev_skewness(double k) {
  if (std::fabs(k) < kSeriesBelow) {
    return polynomial(kSeriesP, k) / std::pow(polynomial(kSeriesQ, k), 1.5);
  }
  const double g1 = detail::gamma_function(1.0 + k);
  const double g2 = detail::gamma_function(1.0 + 2.0 * k);
  const double g3 = detail::gamma_function(1.0 + 3.0 * k);
  const double numerator = -g3 + 3.0 * g1 * g2 - 2.0 * g1 * g1 * g1;
  const double sign = k > 0.0 ? 1.0 : -1.0;
  return sign * numerator / std::pow(g2 - g1 * g1, 1.5);
}

GevParams gev_from_moments(double mean, double sd, double skew, std::uint32_t& flags) {
  if (!std::isfinite(mean) || !std::isfinite(sd) || !std::isfinite(skew)) {
    // Moments past the double range (values near 1e308): no bracket to solve in.
    flags |= kInvalid;
    return GevParams{};
  }
  double k = 0.0;
  const double skew_at_lower = gev_skewness(kLowerK);
  const double skew_at_upper = gev_skewness(kUpperK);
  if (skew >= skew_at_lower) {
    k = kLowerK;
    flags |= kKClampedLow;
  } else if (skew <= skew_at_upper) {
    k = kUpperK;
    flags |= kKClampedHigh;
  } else {
    // g is strictly decreasing, so the bracket holds exactly one root.
    auto residual = [skew](double candidate) { return gev_skewness(candidate) - skew; };
    auto close_enough = [](double a, double b) { return std::fabs(b - a) < 1e-12; };
    std::uintmax_t max_iterations = 200;
    const auto bracket = boost::math::tools::toms748_solve(residual, kLowerK, kUpperK, skew_at_lower - skew,
                                                           skew_at_upper - skew, close_enough, max_iterations);
    k = 0.5 * (bracket.first + bracket.second);
  }
  GevParams params;
  params.k = k;
  if (std::fabs(k) < kSeriesBelow) {
    params.scale = sd / std::sqrt(polynomial(kSeriesQ, k));
  } else {
    // Var X = α²[Γ(1+2k) − Γ(1+k)²]/k²: exponent 1/2 (the 3/2 of the source is a typo).
    params.scale = sd * std::fabs(k) / std::sqrt(variance_factor(k));
  }
  params.loc = mean + params.scale * gamma_ratio_b(k);
  return params;
}

GevFit fit_mom(std::span<const double> sample, const MomOptions& options) {
  GevFit fit;
  fit.method = FitMethod::mom;
  const std::vector<double> x = detail::prepare_sample(sample, fit);
  if (fit.flags & kInsufficientN) return fit;
  const double n = static_cast<double>(x.size());
  double sum = 0.0;
  for (const double value : x) sum += value;
  const double mean = sum / n;
  double squares = 0.0, cubes = 0.0;
  for (const double value : x) {
    const double deviation = value - mean;
    squares += deviation * deviation;
    cubes += deviation * deviation * deviation;
  }
  const double sd = std::sqrt(squares / (n - 1.0));
  fit.mom.mean = mean;
  fit.mom.sd = sd;
  if (detail::is_degenerate_spread(sd, x)) {
    detail::set_degenerate(fit, mean);
    return fit;
  }
  if (options.skewness == SkewnessKind::adjusted) {
    fit.mom.skew = n / ((n - 1.0) * (n - 2.0)) * cubes / (sd * sd * sd);
  } else {
    const double m2 = squares / n;
    fit.mom.skew = (cubes / n) / std::pow(m2, 1.5);
  }
  fit.params = gev_from_moments(mean, sd, fit.mom.skew, fit.flags);
  detail::apply_validity_rules(fit);
  return fit;
}

}  // namespace tremor::estimators
