// GEV fitting by probability-weighted moments and by the method of moments,
// validity flags, fallback order and PWM/MOM disagreement (docs/statistics.md#gev-fits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tremor/estimators/gev.hpp"

namespace tremor::estimators {

/// Bit flags of a fit (docs/statistics.md#validity-and-fallback). Several can be set at once.
enum FitFlag : std::uint32_t {
  kInsufficientN = 1u << 0,          ///< n < 3: no fit
  kLowN = 1u << 1,                   ///< 3 <= n < 15
  kDegenerate = 1u << 2,             ///< all values equal: ξ = mean, α = 0, k = 0
  kSupportViolation = 1u << 3,       ///< data outside the fitted support: invalid
  kInvalid = 1u << 4,                ///< α <= 0 or a non-finite parameter
  kNonphysicalLowerBound = 1u << 5,  ///< warning: k < 0, data >= 0, lower end < 0
  kPwmKOutOfRange = 1u << 6,         ///< |k| > 0.5: polynomial outside its validated range
  kKClampedLow = 1u << 7,            ///< MOM: k clamped at −1/3 + 1e-6
  kKClampedHigh = 1u << 8,           ///< MOM: k clamped at 10
};
/// Flags that make a fit unusable for projection.
inline constexpr std::uint32_t kUnusableFitFlags = kInsufficientN | kSupportViolation | kInvalid;

/// Names of the set flags, comma separated ("" when none).
std::string describe_fit_flags(std::uint32_t flags);
std::vector<std::string> fit_flag_names(std::uint32_t flags);

enum class FitMethod { pwm, mom, empirical_maximum };
std::string_view to_string(FitMethod method);

struct PwmDiagnostics {
  double b0 = 0, b1 = 0, b2 = 0;  ///< of the uncentred sample
  double l1 = 0, l2 = 0, l3 = 0, t3 = 0;
  double c = 0;
};
struct MomDiagnostics {
  double mean = 0, sd = 0, skew = 0;  ///< sd with n − 1; skew as selected in MomOptions
};

struct GevFit {
  FitMethod method = FitMethod::pwm;
  GevParams params;
  std::uint32_t flags = 0;
  std::size_t n = 0;  ///< finite values used
  std::size_t dropped_non_finite = 0;
  double sample_min = 0.0;
  double sample_max = 0.0;
  PwmDiagnostics pwm;  ///< filled by fit_pwm
  MomDiagnostics mom;  ///< filled by fit_mom

  [[nodiscard]] bool usable() const { return (flags & kUnusableFitFlags) == 0; }
  [[nodiscard]] bool data_non_negative() const { return sample_min >= 0.0; }
};

struct PwmOptions {
  /// Refine the polynomial k by Newton iteration on τ3(k) = t3 (exact inversion).
  bool refine_by_newton = false;
};
GevFit fit_pwm(std::span<const double> sample, const PwmOptions& options = {});

enum class SkewnessKind {
  adjusted,  ///< G = n/((n−1)(n−2)) Σ((x−μ)/s)³ = scipy skew(bias=False); hydrology default
  biased,    ///< g1 = m3 / m2^1.5
};
struct MomOptions {
  SkewnessKind skewness = SkewnessKind::adjusted;
};
GevFit fit_mom(std::span<const double> sample, const MomOptions& options = {});

/// Skewness of a GEV with shape k, g(k); strictly decreasing on (−1/3, ∞).
double gev_skewness(double k);

/// PWM parameters from L-moments (l1, l2 > 0, t3); flags may get kPwmKOutOfRange.
GevParams gev_from_l_moments(double l1, double l2, double t3, bool refine_by_newton, std::uint32_t& flags);

/// MOM parameters from mean, sd (> 0) and skewness: solves g(k) = skew on
/// [−1/3 + 1e-6, 10] (TOMS 748, |Δk| < 1e-12); flags may get kKClampedLow/High.
GevParams gev_from_moments(double mean, double sd, double skew, std::uint32_t& flags);

/// A projected maximum with the validity rule of docs/statistics.md#validity-and-fallback: a fit on non-negative
/// data that predicts a negative (or non-finite) value is invalid, never clamped.
struct Projection {
  double value = 0.0;
  bool valid = false;
};
/// EMMA for GEV fits, the sample maximum (no projection) for the empirical fallback.
Projection project_maximum(const GevFit& fit, double m);
/// The exact E[max of m] of a GEV fit by max-stability (exact_expected_maximum; none for k <= −1),
/// with the same validity rule and fallback value: what the bootstrap projections use, since
/// EMMA is biased for k != 0 (docs/statistics.md#emma).
Projection project_expected_maximum(const GevFit& fit, double m);

struct DisagreementLimits {
  double max_abs_dk = 0.35;
  double max_emma16_relative = 0.05;
};
/// True when both fits are usable and |k_pwm − k_mom| > 0.35 or EMMA(16) differs by > 5 %.
bool fits_disagree(const GevFit& pwm, const GevFit& mom, const DisagreementLimits& limits = {});

struct FallbackFit {
  GevFit chosen;  ///< PWM if usable, else MOM if usable, else the empirical maximum
  GevFit pwm;
  GevFit mom;
  bool disagreement = false;
};
FallbackFit fit_with_fallback(std::span<const double> sample, const PwmOptions& pwm_options = {},
                              const MomOptions& mom_options = {});

}  // namespace tremor::estimators
