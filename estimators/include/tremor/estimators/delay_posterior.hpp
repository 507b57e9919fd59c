// The posterior delay of one segment under the primary model (intrinsic.hpp):
// x / mu - 1 = v + B * u, v ~ N(0, sigma^2), B ~ Bernoulli(p), u ~ Exp(mean tau).
#pragma once

namespace tremor::estimators {

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
  SegmentPosterior operator()(double relative_residual) const noexcept;
  /// operator()(r).probability, without the conditional delay's work.
  double probability(double relative_residual) const noexcept;
  /// The EM's clean second moment of r: (1 - P) r^2 + P E[(r - u)^2 | delayed],
  /// with the posterior it needs.
  struct WithCleanSquare {
    SegmentPosterior posterior;
    double clean_square = 0.0;
  };
  WithCleanSquare with_clean_square(double relative_residual) const noexcept;

 private:
  struct Terms {
    SegmentPosterior posterior;
    double z = 0.0;      // the truncated normal's standardised mean
    double mills = 0.0;  // its inverse Mills ratio (when computed)
  };
  Terms terms(double r, bool with_delay) const noexcept;

  bool valid_ = false;
  double sigma_ = 0.0;
  double tau_ = 0.0;
  double log_one_minus_p_ = 0.0;
  double log_sigma_ = 0.0;
  double delayed_constant_ = 0.0;  // log p - log tau + ratio^2 / 2
  double shift_ = 0.0;             // sigma * (sigma / tau), the posterior's
  double clean_shift_ = 0.0;       // sigma * sigma / tau, the clean moment's (rounded apart)
};

}  // namespace tremor::estimators
