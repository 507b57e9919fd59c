#include "tremor/estimators/delay_posterior.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tremor::estimators {
namespace detail {

double log_normal_cdf(double z) {
  if (z > -30.0) return std::log(0.5 * std::erfc(-z / std::numbers::sqrt2));
  return -0.5 * z * z - kLogRootTwoPi - std::log(-z);
}

double inverse_mills_ratio(double z) {
  if (z > -8.0) return std::exp(-0.5 * z * z - kLogRootTwoPi) / (0.5 * std::erfc(-z / std::numbers::sqrt2));
  const double inverse_square = 1.0 / (z * z);
  return -z / (1.0 - inverse_square + 3.0 * inverse_square * inverse_square);
}

double delayed_clean_square(double r, double sigma, double m, double lambda) {
  const double mean_u = std::max(0.0, m + sigma * lambda);
  const double variance_u = std::max(0.0, sigma * sigma * (1.0 - (m / sigma) * lambda - lambda * lambda));
  return (r - mean_u) * (r - mean_u) + variance_u;
}

}  // namespace detail

DelayPosterior::DelayPosterior(double sigma, double p, double tau) noexcept
    : valid_(sigma > 0.0 && tau > 0.0 && p > 0.0), sigma_(sigma), tau_(tau), clean_shift_(sigma * sigma / tau) {
  if (!valid_) return;
  log_one_minus_p_ = std::log1p(-p);
  log_sigma_ = std::log(sigma);
  const double ratio = sigma / tau;
  delayed_constant_ = std::log(p) - std::log(tau) + 0.5 * ratio * ratio;
  shift_ = sigma * ratio;
}

SegmentPosterior delay_posterior(double r, double sigma, double p, double tau) {
  return DelayPosterior(sigma, p, tau)(r);
}

double delay_posterior_variance(double r, double sigma, double p, double tau) {
  const SegmentPosterior posterior = delay_posterior(r, sigma, p, tau);
  if (!(posterior.probability > 0.0)) return 0.0;
  const double m = r - sigma * sigma / tau;
  const double lambda = detail::inverse_mills_ratio(m / sigma);
  const double mean_u = std::max(0.0, m + sigma * lambda);
  const double variance_u = std::max(0.0, sigma * sigma * (1.0 - (m / sigma) * lambda - lambda * lambda));
  const double second_moment = posterior.probability * (variance_u + mean_u * mean_u);
  return std::max(0.0, second_moment - posterior.delay * posterior.delay);
}

}  // namespace tremor::estimators
