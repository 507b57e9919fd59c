#include "tremor/estimators/delay_posterior.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tremor::estimators {
namespace {

constexpr double kLogRootTwoPi = 0.91893853320467274178;  // log(sqrt(2 pi))

// log Phi(z), accurate far into the lower tail.
double log_normal_cdf(double z) {
  if (z > -30.0) return std::log(0.5 * std::erfc(-z / std::numbers::sqrt2));
  return -0.5 * z * z - kLogRootTwoPi - std::log(-z);
}

// phi(z) / Phi(z) (inverse Mills ratio), with its asymptote in the far tail.
double inverse_mills_ratio(double z) {
  if (z > -8.0) return std::exp(-0.5 * z * z - kLogRootTwoPi) / (0.5 * std::erfc(-z / std::numbers::sqrt2));
  const double inverse_square = 1.0 / (z * z);
  return -z / (1.0 - inverse_square + 3.0 * inverse_square * inverse_square);
}

// E[(r - u)^2 | delayed] given u's truncated normal: u | r is N(m, sigma^2)
// truncated at 0, m = r - sigma^2 / tau (`shift`); `lambda` is the inverse
// Mills ratio at m / sigma.
double delayed_clean_square(double r, double sigma, double m, double lambda) {
  const double mean_u = std::max(0.0, m + sigma * lambda);
  const double variance_u = std::max(0.0, sigma * sigma * (1.0 - (m / sigma) * lambda - lambda * lambda));
  return (r - mean_u) * (r - mean_u) + variance_u;
}

}  // namespace

DelayPosterior::DelayPosterior(double sigma, double p, double tau) noexcept
    : valid_(sigma > 0.0 && tau > 0.0 && p > 0.0), sigma_(sigma), tau_(tau), clean_shift_(sigma * sigma / tau) {
  if (!valid_) return;
  log_one_minus_p_ = std::log1p(-p);
  log_sigma_ = std::log(sigma);
  const double ratio = sigma / tau;
  delayed_constant_ = std::log(p) - std::log(tau) + 0.5 * ratio * ratio;
  shift_ = sigma * ratio;
}

// Jondrow et al. (1982): u | (v + u = r) is N(r - sigma^2/tau, sigma^2) truncated at 0.
DelayPosterior::Terms DelayPosterior::terms(double r, bool with_delay) const noexcept {
  if (!valid_ || !std::isfinite(r)) return {};
  const double log_clean = log_one_minus_p_ - 0.5 * (r / sigma_) * (r / sigma_) - log_sigma_ - kLogRootTwoPi;
  const double shifted = r - shift_;
  const double z = shifted / sigma_;
  // Phi(z) once for both the likelihood and the inverse Mills ratio (the costly erfc).
  const double cdf = z > -30.0 ? 0.5 * std::erfc(-z / std::numbers::sqrt2) : 0.0;
  const double log_cdf = z > -30.0 ? std::log(cdf) : log_normal_cdf(z);
  const double log_delayed = delayed_constant_ - r / tau_ + log_cdf;
  const double difference = log_clean - log_delayed;
  Terms out;
  out.z = z;
  out.posterior.probability = difference > 700.0 ? 0.0 : 1.0 / (1.0 + std::exp(difference));
  if (!with_delay) return out;
  out.mills = z > -8.0 ? std::exp(-0.5 * z * z - kLogRootTwoPi) / cdf : inverse_mills_ratio(z);
  const double conditional = std::max(0.0, shifted + sigma_ * out.mills);
  out.posterior.delay = out.posterior.probability * conditional;
  return out;
}

SegmentPosterior DelayPosterior::operator()(double r) const noexcept { return terms(r, true).posterior; }

double DelayPosterior::probability(double r) const noexcept { return terms(r, false).posterior.probability; }

DelayPosterior::WithCleanSquare DelayPosterior::with_clean_square(double r) const noexcept {
  const Terms t = terms(r, true);
  const double m = r - clean_shift_;
  // sigma * (sigma / tau) and sigma^2 / tau round alike for most sigma and
  // tau: then m / sigma is the posterior's z and its Mills ratio is known.
  const bool shared = valid_ && std::isfinite(r) && clean_shift_ == shift_;
  const double lambda = shared ? t.mills : inverse_mills_ratio(m / sigma_);
  const double delayed = delayed_clean_square(r, sigma_, m, lambda);
  const double p = t.posterior.probability;
  return {t.posterior, (1.0 - p) * r * r + p * delayed};
}

SegmentPosterior delay_posterior(double r, double sigma, double p, double tau) {
  return DelayPosterior(sigma, p, tau)(r);
}

double delay_posterior_variance(double r, double sigma, double p, double tau) {
  const SegmentPosterior posterior = delay_posterior(r, sigma, p, tau);
  if (!(posterior.probability > 0.0)) return 0.0;
  const double m = r - sigma * sigma / tau;
  const double lambda = inverse_mills_ratio(m / sigma);
  const double mean_u = std::max(0.0, m + sigma * lambda);
  const double variance_u = std::max(0.0, sigma * sigma * (1.0 - (m / sigma) * lambda - lambda * lambda));
  const double second_moment = posterior.probability * (variance_u + mean_u * mean_u);
  return std::max(0.0, second_moment - posterior.delay * posterior.delay);
}

}  // namespace tremor::estimators
