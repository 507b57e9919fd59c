// The kind of a work counter and the unit of its counts: the one enum of the
// recorder's counter source (counters/), the run file (segments/: its values
// are those of the file's HDF5 enum) and the analysis. Header only, so the
// run file's types name it without PAPI.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tremor {

// A PAPI event, or the thread's CPU time read from its clock (with or without
// context-switch records) or from context-switch records only (oncpu).
enum class CounterKind : std::uint8_t { papi = 0, thread_cputime = 1, thread_oncpu = 2 };
inline constexpr std::array kCounterKinds{CounterKind::papi, CounterKind::thread_cputime, CounterKind::thread_oncpu};

// The kind's name in the run file's enum, the spill header and the report.
constexpr std::string_view to_string(CounterKind kind) {
  switch (kind) {
    case CounterKind::papi:
      return "papi";
    case CounterKind::thread_cputime:
      return "thread_cputime";
    case CounterKind::thread_oncpu:
      return "thread_oncpu";
  }
  return "unknown";
}

constexpr std::optional<CounterKind> counter_kind_named(std::string_view name) {
  for (const CounterKind kind : kCounterKinds) {
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

// Whether the work column is the thread's CPU time rather than a PAPI count.
constexpr bool measures_cpu_time(CounterKind kind) { return kind != CounterKind::papi; }

// The unit of the kind's counts: ns of thread CPU time for the CPU-time kinds;
// empty for PAPI, whose unit is its event's (counters::CounterSource::unit).
inline constexpr std::string_view kCpuTimeUnit = "ns";
constexpr std::string_view counter_unit(CounterKind kind) {
  return measures_cpu_time(kind) ? kCpuTimeUnit : std::string_view{};
}

}  // namespace tremor
