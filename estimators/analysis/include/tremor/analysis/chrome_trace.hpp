// A run as a timeline in the Chrome trace-event format (JSON object form),
// which Perfetto's UI and chrome://tracing open (docs/trace.md). One process
// per node, one thread per detail rank with one slice per segment, the
// analysis' episodes on a "Tremor" track, a lost-% counter per node, and,
// when given, the injector's delays on an "injected, rank N" track per rank.
// The report registry's "chrome" entry renders it with default options;
// `tremor export` renders it with its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tremor/analysis/report.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis {

// Above this many events Perfetto's legacy JSON importer and chrome://tracing
// slow down or fail (they parse the whole file into memory).
inline constexpr std::size_t kChromeTraceEventLimit = 1'000'000;

// Near the start of every trace this exporter writes (the key of otherData
// that names the writer), so `tremor export` may replace its own output only.
inline constexpr std::string_view kChromeTraceMarker = "\"tremor_trace\"";

struct ChromeTraceOptions {
  std::vector<std::int32_t> ranks;  // detail ranks to show; empty: all
  // The window, seconds since the first segment's start: segments, episodes
  // and delays that overlap it are written (times stay since the first segment).
  double from_s = 0.0;
  double to_s = std::numeric_limits<double>::infinity();
  // The injector's delays (rows of its logs, time_s since MPI_Init) and the
  // ranks whose logs were read; nullopt: no injected tracks.
  std::optional<std::vector<InjectionRecord>> injected;
  std::size_t event_limit = kChromeTraceEventLimit;
};

struct ChromeTrace {
  std::string json;        // the whole file, ending in a newline
  std::size_t events = 0;  // entries of traceEvents
  std::string note;        // non-empty when events > the limit: what to do about it
};

// Throws std::invalid_argument naming a rank of options.ranks that is no detail rank.
ChromeTrace render_chrome_trace(const ReportInput& input, const ChromeTraceOptions& options);

// The registry's form: every detail rank, the whole run, no injected tracks.
std::string render_chrome_trace_default(const ReportInput& input);

}  // namespace tremor::analysis
