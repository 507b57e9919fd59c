// The fixed logarithmic code every quantized value is stored as
// (docs/statistics.md#quantization): 2 bytes, the same on every process, so
// per-process tables merge program-wide exactly, and encoding is O(1).
//
// A value is scaled to units (2^-30 s, about 0.93 ns, for times; 1 for
// counters). Code 0 holds 0, negative values, values under one unit and
// values that are not finite. A value x >= 1 unit has code
// 1 + 1024 e + m, where x = (1 + f) 2^e and m = floor(1024 f): its binary
// exponent and the first 10 bits of its fraction, read straight from the
// double. A code's interval is [lower, lower (1 + 1/1024)); its value is the
// interval's centre, within 1/2048 (0.049 %) of every value it holds. Counts
// below 2048 are exact: there the interval holds one integer, its lower edge.
// Exponents stop at 62 (2^62 units: 4.6e18 counts, 137 years); larger values
// take the last code.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "tremor/metrics.hpp"

namespace tremor {

enum class CodeScale : std::uint8_t { seconds, count };

inline constexpr int kCodeFractionBits = 10;
inline constexpr int kCodeMaxExponent = 62;
inline constexpr std::uint16_t kMaxCode = 1 + ((kCodeMaxExponent << kCodeFractionBits) | 1023);  // 64512
inline constexpr double kUnitsPerSecond = 0x1p30;

constexpr CodeScale code_scale(MetricKind kind) noexcept {
  return kind == MetricKind::time ? CodeScale::seconds : CodeScale::count;
}
constexpr CodeScale code_scale(Quantized metric) noexcept { return code_scale(kQuantizedMetrics[index(metric)].kind); }

inline std::uint16_t encode_value(double value, CodeScale scale) noexcept {
  const double units = scale == CodeScale::seconds ? value * kUnitsPerSecond : value;
  if (!(units >= 1.0)) return 0;  // also NaN
  if (!(units < 0x1p63)) return std::isfinite(value) ? kMaxCode : 0;
  // 1 + (e << 10 | m) in one step: for 1 <= units < 2^63 the bits above the
  // fraction's first 10 are the biased exponent (sign 0), then m.
  constexpr std::uint64_t kBiasedOne = std::uint64_t{1023} << kCodeFractionBits;  // exponent 0, fraction 0
  const auto bits = std::bit_cast<std::uint64_t>(units);
  return static_cast<std::uint16_t>((bits >> (52 - kCodeFractionBits)) - kBiasedOne + 1);
}

// The code's value: the centre of its interval, or for counts below 2048 the
// one integer it holds.
inline double decode_value(std::uint16_t code, CodeScale scale) noexcept {
  if (code == 0) return 0.0;
  const unsigned k = code - 1u;
  const int exponent = static_cast<int>(k >> kCodeFractionBits);
  const double step = std::ldexp(1.0, exponent - kCodeFractionBits);
  const double lower = static_cast<double>(1024u + (k & 1023u)) * step;
  if (scale == CodeScale::count) return exponent <= kCodeFractionBits ? lower : lower + 0.5 * step;
  return (lower + 0.5 * step) / kUnitsPerSecond;
}

}  // namespace tremor
