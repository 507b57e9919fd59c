// `tremor watch`: analysing the segments every rank of one job reached so
// far (what SpillFollower read), as `tremor analyze --recover` does (the same
// recovery and analysis, nothing saved). The analysis runs in a child process
// (in_child): whatever the files hold, a failure ends the child, never the watch.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cli_watch.hpp"
#include "tremor/json_text.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/run_file.hpp"
#include "tremor/spill.hpp"

namespace tremor::cli::watch {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::ptrdiff_t kStragglerRanksShown = 10;

// "<stem>.r<rank>.spill" -> "<stem>", or "" for another name.
std::string stem_of(const std::string& name) {
  if (!name.ends_with(kSpillExtension)) return {};
  const std::string base = name.substr(0, name.size() - kSpillExtension.size());
  const std::size_t dot = base.rfind(".r");
  if (dot == std::string::npos || dot + 2 == base.size()) return {};
  if (!std::all_of(base.begin() + static_cast<long>(dot) + 2, base.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {};
  return base.substr(0, dot);
}

void add_file(std::map<std::string, JobFiles>& jobs, const fs::path& path, const std::string& stem) {
  std::error_code error;
  const auto modified = fs::last_write_time(path, error);
  if (error) return;  // vanished since the listing
  JobFiles& job = jobs[stem];
  job.paths.push_back(path);
  job.newest = std::max(job.newest, modified);
}

// The figures of a report under the final report's keys, with the slowest
// rank and node, the episode open at the last segment and the split of the lost time.
json figures(const RunData& run, const analysis::RunAnalysis& result, const std::string& output_file) {
  const json report = analysis::report_json(run, result, output_file);
  json out;
  for (const char* key : {"partial", "estimate_possible", "no_estimate_reason", "method", "interference_percent",
                          "lost_percent", "lost_percent_ci", "class", "probability_high", "run_time_s", "world_size",
                          "node_count", "segments", "output_file"})
    out[key] = report[key];
  const json& diagnosis = report["diagnosis"];
  const json& stragglers = report["stragglers"];
  out["slow_rank"] = nullptr;
  out["slow_node"] = nullptr;
  out["open_episode"] = nullptr;
  out["components"] = nullptr;
  if (diagnosis.is_object()) {
    if (!diagnosis["slow_ranks"].empty()) out["slow_rank"] = diagnosis["slow_ranks"][0];
    if (!diagnosis["slow_nodes"].empty()) out["slow_node"] = diagnosis["slow_nodes"][0];
    const json& episodes = diagnosis["episodes"];
    // Open now: the last episode reaches the last segment every rank recorded.
    if (!episodes.empty() && result.segment_count > 0 &&
        episodes.back()["last_segment"].get<std::size_t>() + 1 == result.segment_count)
      out["open_episode"] = episodes.back();
    out["components"] = diagnosis["components"];
  }
  out["stragglers"] = stragglers;
  // A line per refresh stays short at thousands of ranks: the ten ranks waited for most (every node is kept).
  json& ranks = out["stragglers"]["ranks"];
  if (ranks.size() > kStragglerRanksShown) ranks.erase(ranks.begin() + kStragglerRanksShown, ranks.end());
  // The rank and node the run waited for most (named even when the diagnosis names none).
  out["slowest_rank"] = stragglers["ranks"].empty() ? json(nullptr) : stragglers["ranks"][0];
  out["slowest_node"] = stragglers["nodes"].empty() ? json(nullptr) : stragglers["nodes"][0];
  // Per host: the summed lost share of its ranks (Prometheus' tremor_lost_ratio{host}).
  std::map<std::string, double> host_lost;
  for (const RankInfo& rank : run.ranks) host_lost.try_emplace(rank.hostname, 0.0);
  if (diagnosis.is_object()) {
    const json& lost = diagnosis["ranks"]["lost_percent"];
    for (std::size_t r = 0; r < run.ranks.size() && r < lost.size(); ++r)
      if (lost[r].is_number()) host_lost[run.ranks[r].hostname] += lost[r].get<double>();
  }
  json hosts = json::array();
  for (const auto& [host, lost] : host_lost) hosts.push_back({{"hostname", host}, {"lost_percent", lost}});
  out["hosts"] = hosts;
  return out;
}

json analyse(const RunData& run, const std::string& output_file) {
  const analysis::AnalysisParameters parameters =
      analysis::parameters_from_stored_configuration(run.meta.configuration, {}, nullptr);
  const analysis::RunAnalysis result = analysis::analyze_run(run, parameters);
  json out = figures(run, result, output_file);
  out["headline_lines"] = analysis::render_text_report(run, result, output_file);
  return out;
}

double spill_interval_s(const SpillHeader& header) {
  for (const auto& [name, value] : header.configuration) {
    if (name != "TREMOR_SPILL_INTERVAL") continue;
    try {
      const double seconds = std::stod(value);
      if (seconds >= 0.0 && seconds < 1e6) return seconds;
    } catch (const std::exception&) {
    }
  }
  return 1.0;  // the default (docs/spill.md)
}

std::string sanitized_program(const std::string& program) {
  std::string name = fs::path(program).filename().string();
  for (char& c : name) {
    const bool kept = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    if (!kept) c = '_';
  }
  return name;
}

}  // namespace

std::map<std::string, JobFiles> list_jobs(const std::vector<std::string>& names, std::vector<fs::path>& directories) {
  std::map<std::string, JobFiles> jobs;
  directories.clear();
  for (const std::string& name : names) {
    std::error_code error;
    const fs::path given(name);
    const bool directory = fs::is_directory(given, error);
    const fs::path folder = directory ? given : (given.has_parent_path() ? given.parent_path() : fs::path("."));
    std::string wanted = directory ? std::string() : given.filename().string();
    if (const std::string stem = stem_of(wanted); !stem.empty()) wanted = stem;
    directories.push_back(folder);
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
      const std::string stem = stem_of(it->path().filename().string());
      if (!stem.empty() && (wanted.empty() || stem == wanted)) add_file(jobs, it->path(), stem);
    }
  }
  return jobs;
}

json in_child(const std::function<json()>& body, unsigned limit_s) {
  int ends[2];
  if (pipe(ends) != 0) return {{"error", std::string("cannot create a pipe: ") + std::strerror(errno)}};
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) {
    close(ends[0]);
    close(ends[1]);
    return {{"error", std::string("cannot start the reader process: ") + std::strerror(errno)}};
  }
  if (child == 0) {
    close(ends[0]);
    alarm(limit_s);
    std::string text;
    try {
      text = json_text(body());
    } catch (const std::exception& failure) {
      text = json_text(json{{"error", failure.what()}});
    }
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t wrote = write(ends[1], text.data() + done, text.size() - done);
      if (wrote <= 0 && errno != EINTR) _exit(1);
      if (wrote > 0) done += static_cast<std::size_t>(wrote);
    }
    _exit(0);
  }
  close(ends[1]);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = read(ends[0], buffer, sizeof buffer);
    if (got > 0) text.append(buffer, static_cast<std::size_t>(got));
    if (got == 0 || (got < 0 && errno != EINTR)) break;
  }
  close(ends[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const int signal_number = WTERMSIG(status);
    return {{"error", signal_number == SIGALRM ? "reading took longer than " + std::to_string(limit_s) + " s"
                                               : std::string("the reader died (") + strsignal(signal_number) + ")"}};
  }
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_object()) return {{"error", "the reader gave no result"}};
  return parsed;
}

json take_snapshot(const SpillFollower& follower) {
  json out;
  json ranks = json::array();
  std::string problem;
  for (std::size_t i = 0; i < follower.states().size(); ++i) {
    const FollowedFile& state = follower.states()[i];
    if (!state.readable) {  // vanished, truncated header, not a spill: this rank has no figure now
      if (problem.empty()) problem = state.path.filename().string() + ": " + state.error;
      continue;
    }
    const SpillFile& file = follower.spills()[i];
    const SpillHeader& h = file.header;
    ranks.push_back({{"rank", h.rank},
                     {"hostname", h.host},
                     {"pid", h.pid},
                     {"segments", file.segments.size()},
                     {"end", std::string(partial_reason_code(file.end))},
                     {"ended", file.end != SpillEnd::none},
                     {"dropped_bytes", file.dropped_bytes}});
    if (h.rank == 0 || out.find("program") == out.end()) {
      out["program"] = sanitized_program(h.program);
      out["job_id"] = h.job_id;
      out["start_time_unix"] = h.start_time_unix;
      out["world_size"] = h.world_size;
      out["spill_interval_s"] = spill_interval_s(h);
      if (h.rank == 0) out["pid"] = h.pid;
    }
  }
  out["ranks"] = ranks;
  if (!problem.empty()) {
    out["problem"] = problem;
    return out;
  }
  std::string error;
  std::optional<RecoveredRun> recovered = recover_run(follower.spills(), error);
  if (!recovered || !validate_run(recovered->run, error)) {
    out["problem"] = error;
    return out;
  }
  json analysed = analyse(recovered->run, "");
  analysed.erase("headline_lines");
  analysed.erase("output_file");
  analysed.erase("partial");
  out.update(analysed);
  return out;
}

json analyse_run_file(const fs::path& run_file) {
  std::string error;
  std::optional<RunData> run = read_run(run_file, error);
  if (!run) return {{"error", run_file.string() + ": not a readable Tremor run file: " + error}};
  json out = analyse(*run, run_file.string());
  // The headline: the text report's lines up to its first blank line (at most 6).
  std::istringstream text(out["headline_lines"].get<std::string>());
  json lines = json::array();
  for (std::string line; lines.size() < 6 && std::getline(text, line) && !line.empty();) lines.push_back(line);
  out["headline_lines"] = lines;
  return out;
}

namespace {

// The newest .h5 of the directories whose name `wanted` accepts, modified at or after `since`.
template <typename Wanted>
fs::path newest_h5(const std::vector<fs::path>& directories, fs::file_time_type since, Wanted wanted) {
  fs::path best;
  fs::file_time_type best_time = since;
  for (const fs::path& folder : directories) {
    std::error_code error;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (!name.ends_with(".h5") || !wanted(name)) continue;
      std::error_code time_error;
      const auto modified = fs::last_write_time(it->path(), time_error);
      if (!time_error && modified >= best_time) {
        best = it->path();
        best_time = modified;
      }
    }
  }
  return best;
}

}  // namespace

fs::path find_run_file(const std::vector<fs::path>& directories, const std::string& program, long long pid) {
  const std::string pid_part = "-" + std::to_string(pid) + "-";
  return newest_h5(directories, fs::file_time_type::min(), [&](const std::string& name) {
    return name.starts_with(program + "-") && name.find(pid_part) != std::string::npos;
  });
}

fs::path newest_run_file_since(const std::vector<fs::path>& directories, fs::file_time_type since) {
  // A run file, not a recovered one (`tremor analyze --recover` writes <program>-recovered-*.h5).
  return newest_h5(directories, since,
                   [](const std::string& name) { return name.find("-recovered-") == std::string::npos; });
}

}  // namespace tremor::cli::watch
