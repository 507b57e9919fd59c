// The Chrome trace-event form of a run (chrome_trace.hpp, docs/trace.md).
// Times are written from integer nanoseconds as microseconds with three
// decimals, so consecutive segments meet exactly and the slices of one
// thread never overlap partly. The text is written directly (a run may hold
// millions of slices; a JSON tree of them would take several times the memory).
#include "tremor/analysis/chrome_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "chrome_trace_layout.hpp"
#include "tremor/json_text.hpp"

namespace tremor::analysis {
namespace {

using chrome_trace_detail::tid_of_rank;
using chrome_trace_detail::TraceLayout;

// The otherData key that marks the file (kChromeTraceMarker) and its value.
constexpr std::string_view kWriterNote = "Chrome trace-event JSON written by tremor export (docs/trace.md)";
// Counter points per node over the shown window: enough for a smooth curve,
// few enough to stay far below the event limit.
constexpr std::size_t kCounterBins = 256;

std::string json_string(std::string_view text) { return json_text(nlohmann::json(std::string(text))); }

// Appends one trace event after another, counting them.
class EventWriter {
 public:
  explicit EventWriter(std::string& out) : out_(out) {}
  std::size_t count() const { return count_; }

  // Opens an event: {"ph":..,"name":..,"pid":..,"tid":.. ; the caller adds
  // its fields (each starting with a comma) and calls close().
  void open(char phase, std::string_view quoted_name, std::int64_t pid, std::int64_t tid) {
    out_ += count_ == 0 ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
    out_ += phase;
    out_ += "\",\"name\":";
    out_ += quoted_name;
    out_ += ",\"pid\":";
    whole(pid);
    out_ += ",\"tid\":";
    whole(tid);
  }
  void time_field(std::string_view key, std::int64_t ns) {
    out_ += ",\"";
    out_ += key;
    out_ += "\":";
    microseconds(ns);
  }
  // "args":{ ... }: begin_args, then key/value pairs, then end_args.
  void begin_args() {
    out_ += ",\"args\":{";
    first_arg_ = true;
  }
  void number_arg(std::string_view key, double value) {
    key_of(key);
    number(value);
  }
  void whole_arg(std::string_view key, std::int64_t value) {
    key_of(key);
    whole(value);
  }
  void raw_arg(std::string_view key, std::string_view json) {
    key_of(key);
    out_ += json;
  }
  void end_args() { out_ += '}'; }
  void close() {
    out_ += '}';
    ++count_;
  }

  // Metadata: a process's or thread's name (`what`: process_name, thread_name) and sort index.
  void name(std::string_view what, std::int64_t pid, std::int64_t tid, const std::string& text) {
    open('M', json_string(what), pid, tid);
    begin_args();
    raw_arg("name", json_string(text));
    end_args();
    close();
  }
  void sort_index(std::string_view what, std::int64_t pid, std::int64_t tid, std::int64_t index) {
    open('M', json_string(what), pid, tid);
    begin_args();
    whole_arg("sort_index", index);
    end_args();
    close();
  }

 private:
  void key_of(std::string_view key) {
    out_ += first_arg_ ? "\"" : ",\"";
    first_arg_ = false;
    out_ += key;
    out_ += "\":";
  }
  void whole(std::int64_t value) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    out_.append(text, end);
  }
  void number(double value) {
    if (!std::isfinite(value)) {
      out_ += "null";
      return;
    }
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    out_.append(text, end);
  }
  void microseconds(std::int64_t ns) {
    whole(ns / 1000);
    char fraction[5] = {'.', '0', '0', '0', '\0'};
    const auto rest = static_cast<int>(ns % 1000);
    fraction[1] = static_cast<char>('0' + rest / 100);
    fraction[2] = static_cast<char>('0' + rest / 10 % 10);
    fraction[3] = static_cast<char>('0' + rest % 10);
    out_ += fraction;
  }

  std::string& out_;
  std::size_t count_ = 0;
  bool first_arg_ = true;
};

void write_metadata(const TraceLayout& layout, EventWriter& events) {
  std::set<std::int64_t> nodes_named;
  for (const chrome_trace_detail::ShownRank& shown : layout.shown) {
    const std::int64_t tid = tid_of_rank(shown.rank);
    if (nodes_named.insert(shown.pid).second) {
      events.name("process_name", shown.pid, tid, shown.hostname);
      events.sort_index("process_sort_index", shown.pid, tid, shown.pid);
    }
    events.name("thread_name", shown.pid, tid, "rank " + std::to_string(shown.rank));
    events.sort_index("thread_sort_index", shown.pid, tid, 2 * std::int64_t{shown.rank});
    if (layout.injected_tracks) {  // right below the rank's own track
      const std::int64_t injected = layout.injected_tid(shown.rank);
      events.name("thread_name", shown.pid, injected, "injected, rank " + std::to_string(shown.rank));
      events.sort_index("thread_sort_index", shown.pid, injected, 2 * std::int64_t{shown.rank} + 1);
    }
  }
  events.name("process_name", layout.tremor_pid, layout.tremor_tid, "Tremor");
  events.sort_index("process_sort_index", layout.tremor_pid, layout.tremor_tid, -1);  // first
  events.name("thread_name", layout.tremor_pid, layout.tremor_tid, "Tremor");
}

// One slice per shown rank and segment of the window.
void write_segments(const ReportInput& input, const TraceLayout& layout, EventWriter& events) {
  const RunData& run = input.run;
  const RunAnalysis& analysis = input.analysis;
  std::vector<std::string> call_names;
  for (const std::string& name : run.meta.call_names) call_names.push_back(json_string(name));
  const std::string unknown_call = json_string("segment");
  for (const chrome_trace_detail::ShownRank& shown : layout.shown) {
    for (std::size_t s = layout.first_segment; s < layout.end_segment; ++s) {
      const std::uint16_t call = s < run.segments.closing_call.size() ? run.segments.closing_call[s] : 0xFFFF;
      events.open('X', call < call_names.size() ? call_names[call] : unknown_call, shown.pid, tid_of_rank(shown.rank));
      events.time_field("ts", layout.start_ns(s));
      events.time_field("dur", layout.end_ns(s) - layout.start_ns(s));
      events.begin_args();
      events.whole_arg("segment", static_cast<std::int64_t>(s));
      const std::int64_t group = s < analysis.segment_group.size() ? analysis.segment_group[s] : -1;
      events.raw_arg("group", group >= 0 ? std::to_string(group) : "null");
      events.number_arg("intrinsic_s", layout.intrinsic_s(s));
      const bool critical = layout.critical_row[s] == static_cast<std::int64_t>(shown.row);
      events.number_arg("excess_s", critical ? layout.excess_s(s) : 0.0);
      events.raw_arg("interfered", layout.interfered(s) ? "true" : "false");
      events.raw_arg("critical", critical ? "true" : "false");
      const chrome_trace_detail::CellValues cell = layout.cell(shown.row, s);
      events.number_arg("duration_s", cell.duration_s);
      events.number_arg("mpi_s", cell.mpi_s);
      events.number_arg("io_s", cell.io_s);
      events.number_arg("work", cell.work);
      events.number_arg("bytes", cell.bytes);
      events.number_arg("io_bytes", cell.io_bytes);
      events.end_args();
      events.close();
    }
  }
}

// The run's span with the headline, the episodes inside it.
void write_tremor_track(const ReportInput& input, const TraceLayout& layout, EventWriter& events) {
  const RunAnalysis& analysis = input.analysis;
  std::string headline = "run";
  if (analysis.estimate_possible) {
    char lost[32];
    std::snprintf(lost, sizeof lost, "%.1f %%", analysis.primary.lost_percent);
    headline = "run: lost " + std::string(lost) + " (95 % interval " +
               interval_text(analysis.primary.lost_percent_low, analysis.primary.lost_percent_high) + "), class " +
               std::string(estimators::to_string(analysis.interference_class));
  }
  events.open('X', json_string(headline), layout.tremor_pid, layout.tremor_tid);
  events.time_field("ts", 0);
  events.time_field("dur", layout.run_end_ns());
  events.begin_args();
  events.raw_arg("lost_percent", analysis.estimate_possible ? json_text(analysis.primary.lost_percent) : "null");
  events.end_args();
  events.close();
  for (const Episode& episode : analysis.diagnosis.episodes) {
    if (!layout.overlaps(episode.start_s, episode.end_s)) continue;
    events.open('X', json_string("episode"), layout.tremor_pid, layout.tremor_tid);
    const std::int64_t start = layout.time_ns(episode.start_s);
    events.time_field("ts", start);
    events.time_field("dur", std::max<std::int64_t>(0, layout.time_ns(episode.end_s) - start));
    events.begin_args();
    events.whole_arg("first_segment", static_cast<std::int64_t>(episode.first_segment));
    events.whole_arg("last_segment", static_cast<std::int64_t>(episode.last_segment));
    events.number_arg("lost_percent", episode.lost_percent);
    events.raw_arg("ranks", json_text(nlohmann::json(episode.ranks)));
    events.end_args();
    events.close();
  }
}

// Per shown node, the lost time charged to its ranks, as a share of each bin of the window.
void write_counters(const TraceLayout& layout, EventWriter& events) {
  if (layout.end_segment <= layout.first_segment) return;
  const std::int64_t begin = layout.start_ns(layout.first_segment);
  const std::int64_t end = layout.end_ns(layout.end_segment - 1);
  if (end <= begin) return;
  const std::size_t bins = std::min(kCounterBins, layout.end_segment - layout.first_segment);
  const double width_ns = static_cast<double>(end - begin) / static_cast<double>(bins);
  std::map<std::int64_t, std::vector<double>> lost_s;  // node's pid -> per bin
  for (const chrome_trace_detail::ShownRank& shown : layout.shown) lost_s[shown.pid].assign(bins, 0.0);
  for (std::size_t s = layout.first_segment; s < layout.end_segment; ++s) {
    const std::int64_t row = layout.critical_row[s];
    if (row < 0) continue;
    const auto node = lost_s.find(layout.pid_of_row[static_cast<std::size_t>(row)]);
    if (node == lost_s.end()) continue;
    const double middle = 0.5 * static_cast<double>(layout.start_ns(s) + layout.end_ns(s) - 2 * begin);
    node->second[std::min(bins - 1, static_cast<std::size_t>(middle / width_ns))] += layout.excess_s(s);
  }
  const std::string name = json_string("lost %");
  for (const auto& [pid, per_bin] : lost_s) {
    const std::int64_t tid = layout.main_tid(pid);
    for (std::size_t b = 0; b <= bins; ++b) {
      events.open('C', name, pid, tid);
      events.time_field("ts", b == bins ? end : begin + std::llround(width_ns * static_cast<double>(b)));
      events.begin_args();
      events.number_arg("lost %", b == bins ? 0.0 : 100.0 * per_bin[b] * 1e9 / width_ns);
      events.end_args();
      events.close();
    }
  }
}

// The injector's delays, one track per shown rank; a delay that starts
// before the previous one ended (threads of one rank) starts at its end.
void write_injected(const ChromeTraceOptions& options, const TraceLayout& layout, EventWriter& events) {
  if (!options.injected) return;
  std::map<std::int32_t, std::vector<const InjectionRecord*>> by_rank;
  for (const InjectionRecord& record : *options.injected) {
    if (!(record.requested_us > 0.0 || record.spent_us > 0.0)) continue;
    const double spent_s = std::max(0.0, record.spent_us) * 1e-6;
    if (layout.shown_rank(record.rank) && layout.overlaps(record.time_s, record.time_s + spent_s)) {
      by_rank[record.rank].push_back(&record);
    }
  }
  for (auto& [rank, records] : by_rank) {
    std::stable_sort(records.begin(), records.end(),
                     [](const InjectionRecord* a, const InjectionRecord* b) { return a->time_s < b->time_s; });
    std::int64_t previous_end = 0;
    for (const InjectionRecord* record : records) {
      const std::int64_t start = std::max(previous_end, layout.time_ns(record->time_s));
      const std::int64_t end =
          std::max(start, layout.time_ns(record->time_s) + layout.time_ns(record->spent_us * 1e-6));
      previous_end = end;
      events.open('X', json_string(record->call), layout.pid_of_rank(rank), layout.injected_tid(rank));
      events.time_field("ts", start);
      events.time_field("dur", end - start);
      events.begin_args();
      events.number_arg("requested_us", record->requested_us);
      events.number_arg("spent_us", record->spent_us);
      events.whole_arg("segment", record->segment);
      events.end_args();
      events.close();
    }
  }
}

std::string other_data(const ReportInput& input, const TraceLayout& layout, const ChromeTraceOptions& options) {
  const RunAnalysis& analysis = input.analysis;
  const bool ok = analysis.estimate_possible;
  const auto finite_or_null = [](double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); };
  nlohmann::json rest = {
      {"run_file", input.output_file},
      {"tremor_version", input.run.meta.tremor_version},
      {"world_size", input.run.meta.world_size},
      {"node_count", input.run.meta.node_count},
      {"detail_ranks", input.run.detail.ranks},
      {"shown_ranks", layout.shown_ranks()},
      {"segments", analysis.segment_count},
      {"run_time_s", analysis.run_time_s},
      {"estimate_possible", ok},
      {"no_estimate_reason", ok ? nlohmann::json() : nlohmann::json(analysis.no_estimate_reason)},
      {"method", analysis.parameters.method},
      {"lost_percent", ok ? nlohmann::json(analysis.primary.lost_percent) : nlohmann::json()},
      {"lost_percent_ci", ok ? nlohmann::json::array({analysis.primary.lost_percent_low, analysis.primary.lost_percent_high})
                             : nlohmann::json()},
      {"lost_s", ok ? nlohmann::json(analysis.run_time_s - analysis.primary.intrinsic_run_time_s) : nlohmann::json()},
      {"class", ok ? nlohmann::json(estimators::to_string(analysis.interference_class)) : nlohmann::json()},
      {"counter_unit", input.run.meta.counter_unit},
      {"window_s", nlohmann::json::array({options.from_s, finite_or_null(options.to_s)})},
      {"time_unit", "ts and dur in microseconds since the first segment's start (MPI_Init)"},
  };
  std::string text = "{" + std::string(kChromeTraceMarker) + ":" + json_string(kWriterNote) + ",";
  text += json_text(rest).substr(1);  // the rest of the object, its opening brace dropped
  return text;
}

}  // namespace

ChromeTrace render_chrome_trace(const ReportInput& input, const ChromeTraceOptions& options) {
  const TraceLayout layout(input, options.ranks, options.from_s, options.to_s, options.injected.has_value());
  ChromeTrace trace;
  std::string& out = trace.json;
  out = "{\"otherData\":" + other_data(input, layout, options) + ",\n\"displayTimeUnit\":\"ms\",\n\"traceEvents\":[";
  out.reserve(out.size() + 400 * layout.shown.size() * (layout.end_segment - layout.first_segment));
  EventWriter events(out);
  write_metadata(layout, events);
  write_tremor_track(input, layout, events);
  write_segments(input, layout, events);
  write_counters(layout, events);
  write_injected(options, layout, events);
  out += "\n]}\n";
  trace.events = events.count();
  if (trace.events > options.event_limit) {
    trace.note = "the trace holds " + std::to_string(trace.events) + " events, more than " +
                 std::to_string(options.event_limit) +
                 ": Perfetto's UI and chrome://tracing may load it slowly or not at all; export fewer ranks "
                 "(--ranks) or a time window (--from S --to S)";
  }
  return trace;
}

std::string render_chrome_trace_default(const ReportInput& input) { return render_chrome_trace(input, {}).json; }

}  // namespace tremor::analysis
