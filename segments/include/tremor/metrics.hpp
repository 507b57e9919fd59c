// Compile-time views of metrics.def: enums, counts and name tables.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tremor {

enum class MetricKind : std::uint8_t { time, work, comm, io };

struct MetricInfo {
  std::string_view name;
  std::string_view unit;
  MetricKind kind;
  std::string_view meaning;
};

enum class Quantized : std::uint8_t {
#define TREMOR_QUANTIZED(name, unit, kind, meaning) name,
#include "tremor/metrics.def"
};
enum class Feature : std::uint8_t {
#define TREMOR_FEATURE(name, unit, kind, meaning) name,
#include "tremor/metrics.def"
};

inline constexpr std::array kQuantizedMetrics = {
#define TREMOR_QUANTIZED(name, unit, kind, meaning) MetricInfo{#name, unit, MetricKind::kind, meaning},
#include "tremor/metrics.def"
};
inline constexpr std::array kFeatureMetrics = {
#define TREMOR_FEATURE(name, unit, kind, meaning) MetricInfo{#name, unit, MetricKind::kind, meaning},
#include "tremor/metrics.def"
};

inline constexpr std::size_t kQuantizedCount = kQuantizedMetrics.size();
inline constexpr std::size_t kFeatureCount = kFeatureMetrics.size();

// Quantized metrics that run files of schema version 1 do not have; the
// reader gives them one bin of value 0 (docs/schema.md).
inline constexpr std::array<Quantized, 1> kQuantizedAddedInSchema2 = {Quantized::off_cpu_time};

constexpr std::size_t index(Quantized q) { return static_cast<std::size_t>(q); }
constexpr std::size_t index(Feature f) { return static_cast<std::size_t>(f); }

// A segment's communication + I/O signature on one process: exact counts.
using FeatureVector = std::array<std::uint64_t, kFeatureCount>;
// A segment's continuous values on one process, before quantization.
using QuantizedValues = std::array<double, kQuantizedCount>;

}  // namespace tremor
