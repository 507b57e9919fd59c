// Internal helpers shared by the PWM and MOM fitters (not installed).
#pragma once

#include <span>
#include <vector>

#include "tremor/estimators/gev_fit.hpp"

namespace tremor::estimators::detail {

/// Finite values of `sample`, sorted ascending; counts the dropped ones in `fit`
/// and fills n, sample_min, sample_max and the n-based flags.
std::vector<double> prepare_sample(std::span<const double> sample, GevFit& fit);

/// Sets the point-mass answer for an all-equal sample.
void set_degenerate(GevFit& fit, double mean);

/// Applies the validity rules (docs/statistics.md#validity-and-fallback) to fitted parameters.
void apply_validity_rules(GevFit& fit);

/// True when the spread is at most 1e-12 of the largest magnitude.
bool is_degenerate_spread(double spread, const std::vector<double>& sorted);

}  // namespace tremor::estimators::detail
