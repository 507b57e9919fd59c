#include "tremor/estimators/gev.hpp"

#include "fast_gamma.hpp"
#include <cmath>
#include <limits>

namespace tremor::estimators {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
bool is_gumbel_branch(double k) { return std::fabs(k) < kGumbelBranchK; }
}  // namespace

double gev_cdf(const GevParams& params, double x) {
  const double z = (x - params.loc) / params.scale;
  double y = z;
  if (!is_gumbel_branch(params.k)) {
    const double argument = -params.k * z;                    // ln(1 − k z) = log1p(−k z)
    if (argument <= -1.0) return params.k > 0.0 ? 1.0 : 0.0;  // outside the support
    y = -std::log1p(argument) / params.k;
  }
  return std::exp(-std::exp(-y));
}

double gev_quantile(const GevParams& params, double probability) {
  if (!(probability > 0.0 && probability < 1.0)) return kNaN;
  const double y = -std::log(-std::log(probability));
  if (is_gumbel_branch(params.k)) return params.loc + params.scale * y;
  return params.loc - params.scale * std::expm1(-params.k * y) / params.k;
}

double gamma_ratio_b(double k) {
  if (std::fabs(k) >= 1e-6) return std::expm1(detail::log_gamma(1.0 + k)) / k;
  // Rounding 1 + k would cost 1e-16/|k| of accuracy; the series is exact here.
  return -kEulerGamma + 0.989055995328 * k - 0.907479076 * k * k;
}

double emma(const GevParams& params, double m) {
  // −ln(φ^(1/m)) = e^(−γ)/m, so y = γ + ln m: no pow/log round trip.
  const double y = kEulerGamma + std::log(m);
  if (is_gumbel_branch(params.k)) return params.loc + params.scale * y;
  return params.loc - params.scale * std::expm1(-params.k * y) / params.k;
}

double exact_expected_maximum(const GevParams& params, double m) {
  if (params.k <= -1.0) return std::numeric_limits<double>::infinity();
  const double log_m = std::log(m);
  if (is_gumbel_branch(params.k)) return params.loc + params.scale * (kEulerGamma + log_m);
  const double k = params.k;
  return params.loc + params.scale * (-std::expm1(-k * log_m) / k - std::exp(-k * log_m) * gamma_ratio_b(k));
}

double gev_end_point(const GevParams& params) {
  if (params.k == 0.0) return kNaN;
  return params.loc + params.scale / params.k;
}

GevType classify_gev_type(double k, double tolerance) {
  if (std::fabs(k) < tolerance) return GevType::gumbel;
  return k < 0.0 ? GevType::frechet : GevType::weibull;
}

std::string_view to_string(GevType type) {
  switch (type) {
    case GevType::gumbel:
      return "gumbel";
    case GevType::frechet:
      return "frechet";
    case GevType::weibull:
      return "weibull";
  }
  return "unknown";
}

}  // namespace tremor::estimators
