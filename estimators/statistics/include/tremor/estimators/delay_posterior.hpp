// The posterior delay of one segment under the primary model (intrinsic.hpp):
// x / mu - 1 = v + B * u, v ~ N(0, sigma^2), B ~ Bernoulli(p), u ~ Exp(mean tau).
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tremor::estimators {
namespace detail {
inline constexpr double kLogRootTwoPi = 0.91893853320467274178;  // log(sqrt(2 pi))
/// log Phi(z), accurate far into the lower tail.
double log_normal_cdf(double z);
/// phi(z) / Phi(z) (inverse Mills ratio), with its asymptote in the far tail.
double inverse_mills_ratio(double z);
/// E[(r - u)^2 | delayed] given u | r ~ N(m, sigma^2) truncated at 0, with
/// `lambda` the inverse Mills ratio at m / sigma.
double delayed_clean_square(double r, double sigma, double m, double lambda);
}  // namespace detail

/// Posterior of one relative residual r = x / mu - 1 under the pooled model.
struct SegmentPosterior {
  double probability = 0.0;  ///< P(B = 1 | r)
  double delay = 0.0;        ///< E[B * u | r], relative to mu
};
SegmentPosterior delay_posterior(double relative_residual, double sigma, double p, double tau);
/// Var(B * u | r), relative to mu^2.
double delay_posterior_variance(double relative_residual, double sigma, double p, double tau);

/// delay_posterior for one (sigma, p, tau) and many residuals: what does not
/// depend on the residual (four logarithms) is computed once. Every result is
/// delay_posterior's, bit for bit (the same operations in the same order).
class DelayPosterior {
 public:
  DelayPosterior(double sigma, double p, double tau) noexcept;
  SegmentPosterior operator()(double relative_residual) const noexcept { return terms(relative_residual, true).posterior; }
  /// operator()(r).probability, without the conditional delay's work.
  double probability(double relative_residual) const noexcept {
    return terms(relative_residual, false).posterior.probability;
  }
  /// The EM's clean second moment of r: (1 - P) r^2 + P E[(r - u)^2 | delayed],
  /// with the posterior it needs.
  struct WithCleanSquare {
    SegmentPosterior posterior;
    double clean_square = 0.0;
  };
  inline WithCleanSquare with_clean_square(double relative_residual) const noexcept;

 private:
  struct Terms {
    SegmentPosterior posterior;
    double z = 0.0;      // the truncated normal's standardised mean
    double mills = 0.0;  // its inverse Mills ratio (when computed)
  };
  inline Terms terms(double r, bool with_delay) const noexcept;

  bool valid_ = false;
  double sigma_ = 0.0;
  double tau_ = 0.0;
  double log_one_minus_p_ = 0.0;
  double log_sigma_ = 0.0;
  double delayed_constant_ = 0.0;  // log p - log tau + ratio^2 / 2
  double shift_ = 0.0;             // sigma * (sigma / tau), the posterior's
  double clean_shift_ = 0.0;       // sigma * sigma / tau, the clean moment's (rounded apart)
};

// Inline: the EM calls these for every residual of every iteration.
// Jondrow et al. (1982): u | (v + u = r) is N(r - sigma^2/tau, sigma^2) truncated at 0.
DelayPosterior::Terms DelayPosterior::terms(double r, bool with_delay) const noexcept {
  if (!valid_ || !std::isfinite(r)) return {};
  const double log_clean = log_one_minus_p_ - 0.5 * (r / sigma_) * (r / sigma_) - log_sigma_ - detail::kLogRootTwoPi;
  const double shifted = r - shift_;
  const double z = shifted / sigma_;
  // Phi(z) once for both the likelihood and the inverse Mills ratio (the costly erfc).
  const double cdf = z > -30.0 ? 0.5 * std::erfc(-z / std::numbers::sqrt2) : 0.0;
  // log(1) is +0 exactly: a clearly delayed residual skips the call.
  const double log_cdf = z > -30.0 ? (cdf == 1.0 ? 0.0 : std::log(cdf)) : detail::log_normal_cdf(z);
  const double log_delayed = delayed_constant_ - r / tau_ + log_cdf;
  const double difference = log_clean - log_delayed;
  Terms out;
  out.z = z;
  // Below -40, exp(difference) < 2^-53: 1 + it rounds to 1, and so does the probability.
  out.posterior.probability = difference > 700.0   ? 0.0
                              : difference < -40.0 ? 1.0
                                                   : 1.0 / (1.0 + std::exp(difference));
  if (!with_delay) return out;
  out.mills = z > -8.0 ? std::exp(-0.5 * z * z - detail::kLogRootTwoPi) / cdf : detail::inverse_mills_ratio(z);
  const double conditional = std::max(0.0, shifted + sigma_ * out.mills);
  out.posterior.delay = out.posterior.probability * conditional;
  return out;
}

DelayPosterior::WithCleanSquare DelayPosterior::with_clean_square(double r) const noexcept {
  const Terms t = terms(r, true);
  const double m = r - clean_shift_;
  // sigma * (sigma / tau) and sigma^2 / tau round alike for most sigma and
  // tau: then m / sigma is the posterior's z and its Mills ratio is known.
  const bool shared = valid_ && std::isfinite(r) && clean_shift_ == shift_;
  const double lambda = shared ? t.mills : detail::inverse_mills_ratio(m / sigma_);
  const double delayed = detail::delayed_clean_square(r, sigma_, m, lambda);
  const double p = t.posterior.probability;
  return {t.posterior, (1.0 - p) * r * r + p * delayed};
}

}  // namespace tremor::estimators
