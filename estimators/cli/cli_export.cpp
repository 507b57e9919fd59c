// `tremor export RUN.h5 --format chrome [-o FILE] [--ranks R] [--from S --to S]
//   [--inject-log DIR]`: the run as a Chrome trace-event file, which Perfetto's
// UI and chrome://tracing open (docs/trace.md). The run is read and analysed
// in a child process as `tremor analyze` does (reader_process.hpp), so a
// damaged file gets analyze's message and exit status. The default output is
// the run file's name with .trace.json for .h5; a name ending in .gz is
// written gzip-compressed; `-o -` writes to stdout. An existing file is
// replaced only when it is a trace this command wrote (output_file.hpp).
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

#include "commands.hpp"
#include "option_values.hpp"
#include "output_file.hpp"
#include "reader_process.hpp"
#include "tremor/analysis/chrome_trace.hpp"

namespace tremor::cli {
namespace {

namespace fs = std::filesystem;

struct ExportCommandOptions {
  std::string path;
  std::string format = "chrome";
  std::string output;  // "" : beside the run file; "-": stdout
  std::string ranks;   // e.g. "0,2-5"; "": every detail rank
  double from_s = 0.0;
  double to_s = std::numeric_limits<double>::infinity();
  std::string inject_log;
  analysis::ParameterOverrides overrides;
  unsigned read_timeout_s = 0;
};

constexpr std::int32_t kMaxRank = std::numeric_limits<std::int32_t>::max();

// "0,2-5" -> {0, 2, 3, 4, 5}; throws CommandFailure(usage) on anything else.
std::vector<std::int32_t> parse_rank_list(const std::string& text) {
  std::vector<std::int32_t> ranks;
  const auto whole = [&](std::string_view part) {
    std::int64_t value = -1;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || value < 0 || value > kMaxRank) {
      throw CommandFailure("--ranks '" + text.substr(0, 80) + "': '" + std::string(part) +
                               "' is not a rank (a list of ranks and ranges, e.g. 0,2-5)",
                           Exit::usage);
    }
    return static_cast<std::int32_t>(value);
  };
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t dash = item.find('-');
    const std::int32_t low = whole(item.substr(0, dash));
    const std::int32_t high = dash == std::string_view::npos ? low : whole(item.substr(dash + 1));
    if (high < low || high - low > 1'000'000) {
      throw CommandFailure("--ranks '" + text.substr(0, 80) + "': '" + std::string(item) + "' is not a range",
                           Exit::usage);
    }
    for (std::int32_t rank = low; rank <= high; ++rank) ranks.push_back(rank);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

fs::path output_path(const ExportCommandOptions& options) {
  if (!options.output.empty()) return options.output;
  fs::path path = options.path;
  if (path.extension() == ".h5") path.replace_extension();
  return path.string() + ".trace.json";
}

// The whole text of a file, gzip-compressed or not (zlib reads both).
std::optional<std::string> read_maybe_gzipped(const fs::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return std::nullopt;
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  const bool ok = got == 0;
  gzclose(file);
  return ok ? std::optional<std::string>(std::move(text)) : std::nullopt;
}

std::vector<std::string_view> split(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  while (true) {
    const std::size_t at = line.find(separator);
    fields.push_back(line.substr(0, at));
    if (at == std::string_view::npos) return fields;
    line.remove_prefix(at + 1);
  }
}

double number_field(std::string_view text, const std::string& where) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw CommandFailure(where + ": '" + std::string(text.substr(0, 40)) + "' is not a number", Exit::bad_input);
  }
  return value;
}

// One injector log (injector/README.md, "Log format"): the delayed calls' rows.
void read_injector_log(const fs::path& path, std::vector<InjectionRecord>& records) {
  const std::optional<std::string> text = read_maybe_gzipped(path);
  if (!text) throw CommandFailure(path.string() + ": cannot read the injector log", Exit::bad_input);
  std::vector<std::string_view> header;
  std::size_t line_number = 0;
  std::map<std::string_view, std::size_t> column;
  for (std::string_view line : split(*text, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string_view> fields = split(line, ',');
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) column[fields[i]] = i;
      for (const char* name : {"rank", "time_s", "call", "requested_us", "spent_us"}) {
        if (!column.contains(name)) {
          throw CommandFailure(path.string() + ": not an injector log (no column '" + name + "')", Exit::bad_input);
        }
      }
      continue;
    }
    const std::string where = path.string() + ":" + std::to_string(line_number);
    if (fields.size() < column.size()) throw CommandFailure(where + ": too few fields", Exit::bad_input);
    InjectionRecord record;
    record.rank = static_cast<std::int32_t>(number_field(fields[column["rank"]], where));
    record.time_s = number_field(fields[column["time_s"]], where);
    record.call = std::string(fields[column["call"]]);
    record.requested_us = number_field(fields[column["requested_us"]], where);
    record.spent_us = number_field(fields[column["spent_us"]], where);
    if (column.contains("segment")) record.segment = static_cast<std::int64_t>(number_field(fields[column["segment"]], where));
    if (record.requested_us > 0.0 || record.spent_us > 0.0) records.push_back(std::move(record));
  }
}

// Every rank's log in `directory` (tremor-inject_*_r<rank>_<pid>-<n>.csv, or .csv.gz).
std::vector<InjectionRecord> read_injector_logs(const std::string& directory) {
  static const std::regex log_name(R"(^tremor-inject_.*_r(\d+)_\d+-\d+\.csv(\.gz)?$)");
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    throw CommandFailure("--inject-log " + directory + ": not a directory", Exit::bad_input);
  }
  std::vector<fs::path> logs;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    if (std::regex_match(entry.path().filename().string(), log_name)) logs.push_back(entry.path());
  }
  if (logs.empty()) {
    throw CommandFailure("--inject-log " + directory + ": no injector log (tremor-inject_*.csv) in it",
                         Exit::bad_input);
  }
  std::sort(logs.begin(), logs.end());
  std::set<std::int32_t> ranks;
  std::vector<InjectionRecord> records;
  for (const fs::path& log : logs) {
    std::smatch match;
    const std::string name = log.filename().string();
    std::regex_match(name, match, log_name);
    if (!ranks.insert(std::stoi(match[1].str())).second) {
      throw CommandFailure("--inject-log " + directory + ": injector logs of several runs (rank " + match[1].str() +
                               " twice)",
                           Exit::bad_input);
    }
    read_injector_log(log, records);
  }
  return records;
}

// `text` gzip-compressed; the header's comment carries the marker, so a
// compressed trace is recognised as this command's output too.
std::string gzip(const std::string& text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw CommandFailure("cannot start the gzip compression", Exit::internal);
  }
  std::string comment = std::string(analysis::kChromeTraceMarker) + ": Chrome trace-event JSON by tremor export";
  gz_header header{};
  header.comment = reinterpret_cast<Bytef*>(comment.data());
  header.os = 3;  // Unix
  deflateSetHeader(&stream, &header);
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) throw CommandFailure("the gzip compression failed", Exit::internal);
  return out;
}

void export_in_child(const ExportCommandOptions& options, const analysis::ChromeTraceOptions& trace_options,
                     const fs::path& output, int read_done) {
  std::string error;
  const std::optional<RunData> run =
      read_run_within(options.path, read_time_limit(options.path, options.read_timeout_s), read_done, error);
  if (!run) throw CommandFailure(options.path + ": not a readable Tremor run file: " + error, Exit::bad_input);
  if (trace_options.injected) {
    for (const InjectionRecord& record : *trace_options.injected) {
      if (record.rank < 0 || record.rank >= run->meta.world_size) {
        throw CommandFailure("--inject-log " + options.inject_log + ": a log of rank " + std::to_string(record.rank) +
                                 ", the run has " + std::to_string(run->meta.world_size) + " ranks (another run's logs?)",
                             Exit::bad_input);
      }
    }
  }
  std::vector<std::string> messages;
  const analysis::AnalysisParameters parameters =
      analysis::parameters_from_stored_configuration(run->meta.configuration, options.overrides, &messages);
  for (const std::string& message : messages) std::cerr << "tremor: note: " << message << '\n';
  const analysis::RunAnalysis result = analysis::analyze_run(*run, parameters);
  if (trace_options.from_s > result.run_time_s) {
    throw CommandFailure("--from " + std::to_string(trace_options.from_s) + " is after the run's end (" +
                             std::to_string(result.run_time_s) + " s)",
                         Exit::usage);
  }
  const analysis::ReportInput input{*run, result, options.path, ReportDetail{}, analysis::report_json(*run, result, options.path)};
  analysis::ChromeTrace trace;
  try {
    trace = analysis::render_chrome_trace(input, trace_options);
  } catch (const std::invalid_argument& bad_rank) {
    throw CommandFailure(std::string("--ranks: ") + bad_rank.what(), Exit::usage);
  }
  if (!trace.note.empty()) std::cerr << "tremor: note: " << trace.note << '\n';
  if (output == "-") {
    std::cout << trace.json;
    std::cout.flush();
    return;
  }
  const bool compressed = output.string().ends_with(".gz");
  const std::string content = compressed ? gzip(trace.json) : std::move(trace.json);
  write_output_file(output, content, analysis::kChromeTraceMarker, {options.path});
  std::cerr << "tremor: wrote " << output.string() << " (" << trace.events << " events, " << content.size()
            << " bytes); open it in https://ui.perfetto.dev or chrome://tracing\n";
}

void run_export(const ExportCommandOptions& options) {
  if (!(options.from_s < options.to_s)) throw CommandFailure("--from must be before --to", Exit::usage);
  analysis::ChromeTraceOptions trace_options;
  if (!options.ranks.empty()) trace_options.ranks = parse_rank_list(options.ranks);
  trace_options.from_s = options.from_s;
  trace_options.to_s = options.to_s;
  const fs::path output = output_path(options);
  if (output != "-") {  // refuse before the reading and the analysis, which can take long
    const std::string refusal = output_refusal(output, analysis::kChromeTraceMarker, {options.path});
    if (!refusal.empty()) throw CommandFailure("will not write " + output.string() + ": " + refusal, Exit::output);
  }
  if (!options.inject_log.empty()) trace_options.injected = read_injector_logs(options.inject_log);
  run_in_reader_process(options.path, read_time_limit(options.path, options.read_timeout_s), "the export",
                        [&](int read_done) { export_in_child(options, trace_options, output, read_done); });
}

}  // namespace

void register_export(CLI::App& app) {
  auto options = std::make_shared<ExportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "export", "Write a run as a timeline for Perfetto's UI and chrome://tracing (Chrome trace-event JSON)");
  command->add_option("file", options->path, "Run file written by the profiler (.h5)")->required();
  command->add_option("--format", options->format, "Output format: chrome (the Chrome trace-event JSON format)")
      ->check(CLI::IsMember({"chrome"}));
  command->add_option("-o,--output", options->output,
                      "Output file (default: the run file's name with .trace.json; a name ending in .gz is "
                      "gzip-compressed; - : stdout)");
  command->add_option("--ranks", options->ranks, "Detail ranks to show, e.g. 0,2-5 (default: every detail rank)");
  add_real_option(command, "--from", [options](double v) { options->from_s = v; },
                  "Start of the time window, s since the run's first segment (default: 0)", RealRange{0.0, 1e9});
  add_real_option(command, "--to", [options](double v) { options->to_s = v; },
                  "End of the time window, s since the run's first segment (default: the run's end)",
                  RealRange{0.0, 1e9});
  command->add_option("--inject-log", options->inject_log,
                      "Directory of the injector's logs of this run (tremor-inject_*.csv[.gz]): its delays on an "
                      "'injected, rank N' track per rank");
  add_analysis_overrides(command, options->overrides);
  add_whole_option(
      command, "--read-timeout", [options](std::uint64_t v) { options->read_timeout_s = static_cast<unsigned>(v); },
      "Give up reading the file after this many seconds (default: 60 + 1 per MiB)", 1, 86400);
  command->callback([options] { run_export(*options); });
}

}  // namespace tremor::cli
