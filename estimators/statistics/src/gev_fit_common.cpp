#include "gev_fit_common.hpp"

#include <algorithm>
#include <cmath>

namespace tremor::estimators::detail {

std::vector<double> prepare_sample(std::span<const double> sample, GevFit& fit) {
  std::vector<double> finite;
  finite.reserve(sample.size());
  for (const double value : sample) {
    if (std::isfinite(value)) finite.push_back(value);
  }
  fit.dropped_non_finite = sample.size() - finite.size();
  fit.n = finite.size();
  if (!std::is_sorted(finite.begin(), finite.end())) std::sort(finite.begin(), finite.end());  // bootstrap resamples come sorted
  if (!finite.empty()) {
    fit.sample_min = finite.front();
    fit.sample_max = finite.back();
  }
  if (fit.n < 3) {
    fit.flags |= kInsufficientN;  // b2 and G need (n−1)(n−2) > 0
  } else if (fit.n < 15) {
    fit.flags |= kLowN;  // HWW 1985 simulations start at n = 15
  }
  return finite;
}

void set_degenerate(GevFit& fit, double mean) {
  fit.flags |= kDegenerate;
  fit.params = {mean, 0.0, 0.0};
}

bool is_degenerate_spread(double spread, const std::vector<double>& sorted) {
  const double largest = std::max(std::fabs(sorted.front()), std::fabs(sorted.back()));
  return spread <= 1e-12 * largest;
}

void apply_validity_rules(GevFit& fit) {
  const GevParams& p = fit.params;
  if (!(p.scale > 0.0) || !std::isfinite(p.scale) || !std::isfinite(p.loc) || !std::isfinite(p.k)) {
    fit.flags |= kInvalid;
    return;
  }
  if (p.k == 0.0) return;
  const double end_point = gev_end_point(p);
  if ((p.k > 0.0 && end_point < fit.sample_max) || (p.k < 0.0 && end_point > fit.sample_min)) {
    fit.flags |= kSupportViolation;
  }
  if (p.k < 0.0 && fit.data_non_negative() && end_point < 0.0) fit.flags |= kNonphysicalLowerBound;
}

}  // namespace tremor::estimators::detail
