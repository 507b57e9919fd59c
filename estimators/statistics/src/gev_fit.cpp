// Flags, projections, disagreement and the fallback order (docs/statistics.md#validity-and-fallback).
#include "tremor/estimators/gev_fit.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

namespace tremor::estimators {
namespace {
constexpr std::array<std::pair<std::uint32_t, std::string_view>, 9> kFlagNames = {{
    {kInsufficientN, "insufficient_n"},
    {kLowN, "low_n"},
    {kDegenerate, "degenerate"},
    {kSupportViolation, "support_violation"},
    {kInvalid, "invalid"},
    {kNonphysicalLowerBound, "nonphysical_lower_bound"},
    {kPwmKOutOfRange, "pwm_k_out_of_range"},
    {kKClampedLow, "k_clamped_low"},
    {kKClampedHigh, "k_clamped_high"},
}};
}  // namespace

std::vector<std::string> fit_flag_names(std::uint32_t flags) {
  std::vector<std::string> names;
  for (const auto& [flag, name] : kFlagNames) {
    if (flags & flag) names.emplace_back(name);
  }
  return names;
}

std::string describe_fit_flags(std::uint32_t flags) {
  std::string text;
  for (const std::string& name : fit_flag_names(flags)) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

std::string_view to_string(FitMethod method) {
  switch (method) {
    case FitMethod::pwm:
      return "pwm";
    case FitMethod::mom:
      return "mom";
    case FitMethod::empirical_maximum:
      return "empirical_maximum";
  }
  return "unknown";
}

Projection project_maximum(const GevFit& fit, double m) {
  if (fit.method == FitMethod::empirical_maximum) return {fit.sample_max, fit.n > 0};
  if (!fit.usable()) return {std::numeric_limits<double>::quiet_NaN(), false};
  const double value = emma(fit.params, m);
  // A duration cannot be negative: such a prediction is invalid, never clamped.
  const bool valid = std::isfinite(value) && !(fit.data_non_negative() && value < 0.0);
  return {value, valid};
}

Projection project_expected_maximum(const GevFit& fit, double m) {
  if (fit.method == FitMethod::empirical_maximum) return {fit.sample_max, fit.n > 0};
  if (!fit.usable()) return {std::numeric_limits<double>::quiet_NaN(), false};
  const double value = exact_expected_maximum(fit.params, m);
  const bool valid = std::isfinite(value) && !(fit.data_non_negative() && value < 0.0);
  return {value, valid};
}

bool fits_disagree(const GevFit& pwm, const GevFit& mom, const DisagreementLimits& limits) {
  if (!pwm.usable() || !mom.usable()) return false;
  if ((pwm.flags & kDegenerate) || (mom.flags & kDegenerate)) return false;
  if (std::fabs(pwm.params.k - mom.params.k) > limits.max_abs_dk) return true;
  const double pwm16 = emma(pwm.params, 16.0);
  const double mom16 = emma(mom.params, 16.0);
  // Relative to the mean magnitude, so the test is symmetric in the two methods.
  const double scale = 0.5 * (std::fabs(pwm16) + std::fabs(mom16));
  return scale > 0.0 && std::fabs(pwm16 - mom16) / scale > limits.max_emma16_relative;
}

FallbackFit fit_with_fallback(std::span<const double> sample, const PwmOptions& pwm_options,
                              const MomOptions& mom_options) {
  FallbackFit result;
  result.pwm = fit_pwm(sample, pwm_options);
  result.mom = fit_mom(sample, mom_options);
  result.disagreement = fits_disagree(result.pwm, result.mom);
  if (result.pwm.usable()) {
    result.chosen = result.pwm;
  } else if (result.mom.usable()) {
    result.chosen = result.mom;
  } else {
    GevFit empirical;
    empirical.method = FitMethod::empirical_maximum;
    empirical.n = result.pwm.n;
    empirical.dropped_non_finite = result.pwm.dropped_non_finite;
    empirical.sample_min = result.pwm.sample_min;
    empirical.sample_max = result.pwm.sample_max;
    empirical.flags = (result.pwm.flags & (kLowN | kInsufficientN));
    if (empirical.n > 0) empirical.flags &= ~static_cast<std::uint32_t>(kInsufficientN);
    result.chosen = empirical;
  }
  return result;
}

}  // namespace tremor::estimators
