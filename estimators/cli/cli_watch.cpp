// `tremor watch DIR|STEM... [--interval S] [--once] [--json] [--prom FILE] [--until-finished]`
// Follows a running job from outside it through the spill files its ranks
// append (docs/spill.md): every --interval it reads what they gained,
// analyses the segments every rank reached as `tremor analyze --recover`
// would, and shows the figures so far (docs/live.md). It adds nothing to the
// job: no message, no file the job reads. The analysis runs in a child
// process, so whatever torn, vanishing or hostile files hold cannot crash the watch.
//
// The job's state and the exit status (docs/live.md#exit-status):
//   running     every rank appended within the last 3 intervals;
//   stalled     some ranks did not (named); without --until-finished the
//               watch exits 2 after saying so, with it the watch goes on;
//   dead        stalled, and every stalled rank ran on this host and its
//               process is gone: exit 2;
//   ended       a rank wrote an abort / exit-without-finalize end record and
//               the others ended or stalled, or the run finalized but kept its
//               spill files (no run file) and its processes are gone: exit 2;
//   finalizing  every rank is in MPI_Finalize (end record finalize_unsaved);
//   finished    the spill files were removed: the run file was written; the
//               watch prints its headline and exits 0.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "cli_watch.hpp"
#include "commands.hpp"
#include "option_values.hpp"
#include "text_format.hpp"

namespace tremor::cli {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using watch::JobFiles;

struct WatchOptions {
  std::vector<std::string> names;
  double interval_s = 10.0;
  bool once = false;
  bool json = false;
  bool until_finished = false;
  std::string prom;
};

constexpr unsigned kReadLimitS = 300;  // a refresh's reader process is stopped after this
constexpr int kStalledIntervals = 3;
constexpr std::size_t kRanksShown = 64;
constexpr const char* kPrometheusHead = "# HELP tremor_";  // how every file --prom writes begins  // larger jobs: no per-rank list in the refresh

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "<stem>.r<rank>.spill" -> rank (the listing only keeps such names).
int rank_of(const fs::path& path) {
  const std::string name = path.stem().string();  // "<stem>.r<rank>"
  return std::atoi(name.substr(name.rfind(".r") + 2).c_str());
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

// The process of a rank on this host is gone (a rank on another host cannot be looked at).
bool gone_here(const json& rank) {
  if (rank.value("hostname", std::string()) != this_host()) return false;
  const auto pid = rank.value("pid", 0LL);
  return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

class Watcher {
 public:
  explicit Watcher(const WatchOptions& options) : options_(options) {
    display_.json = options.json;
    display_.terminal = !options.json && isatty(STDOUT_FILENO) == 1;
  }

  int run() {
    auto next = std::chrono::steady_clock::now();
    for (;;) {
      if (const std::optional<int> status = refresh()) return *status;
      // Until the job's files appear, look every second: a short job can come and go within one interval.
      const double pause_s = seen_files_ == 0 ? std::min(options_.interval_s, 1.0) : options_.interval_s;
      next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(pause_s));
      const auto now = std::chrono::steady_clock::now();
      if (next < now) next = now;  // a refresh that took longer than the interval
      std::this_thread::sleep_until(next);
    }
  }

 private:
  // One refresh; the exit status once the watch is over.
  std::optional<int> refresh() {
    std::map<std::string, JobFiles> jobs = watch::list_jobs(options_.names, directories_);
    if (stem_.empty() && !choose(jobs)) return waiting();
    auto job = jobs.find(stem_);
    // Ranks remove their files one by one once the run file is written: look again shortly.
    for (int retry = 0; retry < 10 && seen_files_ > 0 && (job == jobs.end() || job->second.paths.size() < seen_files_);
         ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      jobs = watch::list_jobs(options_.names, directories_);
      job = jobs.find(stem_);
    }
    if (job == jobs.end() && seen_files_ > 0)
      return finish(program_.empty() ? fs::path() : watch::find_run_file(directories_, program_, pid_));
    if (job == jobs.end()) return waiting();
    seen_files_ = std::max(seen_files_, job->second.paths.size());
    std::vector<fs::path> paths = job->second.paths;
    std::sort(paths.begin(), paths.end(), [](const fs::path& a, const fs::path& b) { return rank_of(a) < rank_of(b); });
    // Reading here (only the bytes appended since the last refresh), the analysis in a child process.
    json snapshot;
    try {
      follower_.update(paths);
      snapshot = watch::in_child([this] { return watch::take_snapshot(follower_); }, kReadLimitS);
    } catch (const std::exception& failure) {  // out of memory: start afresh at the next refresh
      follower_ = watch::SpillFollower();
      snapshot = {{"error", std::string("reading the spill files failed: ") + failure.what()}};
    }
    if (snapshot.contains("error")) snapshot = {{"problem", snapshot["error"]}};
    remember(snapshot);
    json record = base("running");
    record.update(snapshot);
    const std::string state = judge(record, job->second);
    record["state"] = state;
    if (record["ranks"].size() > kRanksShown) record.erase("ranks");  // keeps a line per refresh short
    publish(record);
    if (options_.once) return record.contains("problem") ? status(Exit::bad_input) : status(Exit::ok);
    if (state == "ended" || state == "dead" || (state == "stalled" && !options_.until_finished)) {
      const char* what = state == "stalled" ? "seems stalled or dead"
                         : state == "dead"    ? "is dead (the processes of its stalled ranks are gone)"
                                              : "ended without its run file";
      std::cerr << "tremor: the job " << what
                << "; analyse what it recorded: tremor analyze --recover " << (directories_.front() / stem_).string()
                << '\n';
      return status(Exit::bad_input);
    }
    return std::nullopt;
  }

  // The job to follow: the named stem, else the one whose files changed last.
  bool choose(const std::map<std::string, JobFiles>& jobs) {
    if (jobs.empty()) return false;
    auto newest = jobs.begin();
    for (auto it = jobs.begin(); it != jobs.end(); ++it)
      if (it->second.newest > newest->second.newest) newest = it;
    stem_ = newest->first;
    if (jobs.size() > 1) {
      std::cerr << "tremor: note: " << jobs.size() << " runs' spill files found; following the newest, " << stem_
                << " (name its stem to follow another)\n";
    }
    return true;
  }

  std::optional<int> waiting() {
    if (options_.once) {
      throw CommandFailure("no spill files of a running job in " + listed_names(), Exit::bad_input);
    }
    // A run that started and ended between two looks left only its run file.
    const fs::path run_file = watch::newest_run_file_since(directories_, started_);
    if (!run_file.empty()) return finish(run_file);
    if (!told_waiting_) std::cerr << "tremor: note: waiting for spill files in " << listed_names() << '\n';
    told_waiting_ = true;
    return std::nullopt;
  }

  std::string listed_names() const {
    std::string text;
    for (const std::string& name : options_.names) text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  void remember(const json& snapshot) {
    if (snapshot.contains("program")) program_ = snapshot["program"].get<std::string>();
    if (snapshot.contains("pid")) pid_ = snapshot["pid"].get<long long>();
    if (snapshot.contains("start_time_unix")) start_time_unix_ = snapshot["start_time_unix"].get<double>();
    if (snapshot.contains("spill_interval_s")) spill_interval_s_ = snapshot["spill_interval_s"].get<double>();
    if (snapshot.contains("job_id")) job_id_ = snapshot["job_id"].get<std::string>();
  }

  json base(const std::string& state) const {
    const double now = unix_now();
    json record{{"time_utc", utc_text(now)}, {"time_unix", now}, {"state", state}, {"stem", stem_},
                {"job", job_id_.empty() ? stem_ : job_id_}};
    if (start_time_unix_ > 0.0) record["elapsed_s"] = now - start_time_unix_;
    return record;
  }

  // The state from the end records and the files' last appends.
  std::string judge(json& record, const JobFiles& job) const {
    const double threshold = kStalledIntervals * std::max(spill_interval_s_, options_.interval_s);
    if (!record.contains("ranks")) record["ranks"] = json::array();
    std::map<int, const json*> by_rank;  // pointers into record["ranks"], not into a copy
    for (const json& rank : record["ranks"]) by_rank[rank["rank"].get<int>()] = &rank;
    json stalled = json::array();
    double stalled_for = 0.0;
    bool all_ended = !by_rank.empty(), any_stop = false, all_finalizing = !by_rank.empty(), all_gone = true;
    for (const fs::path& path : job.paths) {
      std::error_code error;
      const auto modified = fs::last_write_time(path, error);
      const double age =
          error ? 0.0 : std::chrono::duration<double>(fs::file_time_type::clock::now() - modified).count();
      const auto found = by_rank.find(rank_of(path));
      const json* rank = found == by_rank.end() ? nullptr : found->second;
      const std::string end = rank ? (*rank)["end"].get<std::string>() : "unknown";
      const bool ended = rank && (*rank)["ended"].get<bool>();
      all_ended = all_ended && ended;
      all_finalizing = all_finalizing && end == "finalize_unsaved";
      any_stop = any_stop || end == "abort" || end == "exit_without_finalize";
      all_gone = all_gone && rank && gone_here(*rank);
      if (!ended && age > threshold) {
        stalled.push_back(rank_of(path));
        stalled_for = std::max(stalled_for, age);
      }
    }
    std::sort(stalled.begin(), stalled.end());
    record["stalled_ranks"] = stalled;
    if (!stalled.empty()) record["stalled_for_s"] = stalled_for;
    if (any_stop && (all_ended || stalled.size() + ended_count(by_rank) >= job.paths.size())) return "ended";
    if (all_finalizing) return all_gone ? "ended" : "finalizing";
    if (stalled.empty()) return "running";
    for (const json& rank_number : stalled) {
      const auto found = by_rank.find(rank_number.get<int>());
      if (found == by_rank.end() || !gone_here(*found->second)) return "stalled";
    }
    return "dead";
  }

  static std::size_t ended_count(const std::map<int, const json*>& by_rank) {
    return static_cast<std::size_t>(
        std::count_if(by_rank.begin(), by_rank.end(), [](const auto& entry) { return entry.second->value("ended", false); }));
  }

  // The spill files were removed: the run file was written. Its headline, exit 0.
  int finish(const fs::path& run_file) {
    json record = base("finished");
    if (run_file.empty()) {
      record["note"] = "the spill files were removed (the run ended) but no run file " + program_ + "-*-" +
                       std::to_string(pid_) + "-*.h5 was found in the directories watched";
    } else {
      json analysed = watch::in_child([&run_file] { return watch::analyse_run_file(run_file); }, kReadLimitS);
      if (analysed.contains("error")) analysed = {{"problem", analysed["error"]}};
      record.update(analysed);
    }
    publish(record);
    return status(Exit::ok);
  }

  void publish(const json& record) {
    watch::show(display_, record);
    if (options_.prom.empty()) return;
    std::string error;
    if (!watch::write_prometheus(options_.prom, record, error)) std::cerr << "tremor: warning: " << error << '\n';
  }

  const WatchOptions& options_;
  const fs::file_time_type started_ = fs::file_time_type::clock::now();
  watch::Display display_;
  std::vector<fs::path> directories_;
  watch::SpillFollower follower_;
  std::string stem_;
  std::size_t seen_files_ = 0;
  bool told_waiting_ = false;
  std::string program_;
  std::string job_id_;
  long long pid_ = -1;
  double start_time_unix_ = 0.0;
  double spill_interval_s_ = 1.0;
};

// --prom FILE replaces FILE at every refresh: only a file it wrote itself
// (or none, or an empty one), never an input or another program's file.
void refuse_foreign_prom_file(const std::string& file) {
  std::error_code error;
  if (!fs::exists(file, error)) return;
  std::ifstream in(file, std::ios::binary);
  std::string head(std::string_view(kPrometheusHead).size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const bool empty = in.gcount() == 0 && fs::is_regular_file(file, error);
  if (!empty && (!fs::is_regular_file(file, error) || head != kPrometheusHead)) {
    throw CommandFailure("--prom " + file + " exists and is not a Prometheus file written by tremor watch; "
                         "it is not replaced",
                         Exit::output);
  }
}

}  // namespace

void register_watch(CLI::App& app) {
  auto options = std::make_shared<WatchOptions>();
  CLI::App* command = app.add_subcommand(
      "watch", "Follow a running job from its spill files: lost time so far, slowest rank and node, open episode");
  command
      ->add_option("jobs", options->names,
                   "Directory (TREMOR_OUTPUT_DIR; several for per-node output) or a run's stem or .spill file")
      ->required();
  add_real_option(command, "--interval", [options](double v) { options->interval_s = v; },
                  "Seconds between refreshes (default 10)", RealRange{0.1, 86400.0, false});
  command->add_flag("--once", options->once, "One refresh, then exit");
  command->add_flag("--json", options->json, "One JSON object per refresh (JSON Lines), the final report's keys");
  command->add_option("--prom", options->prom,
                      "Also write the figures as a Prometheus textfile (node_exporter), replaced at each refresh");
  command->add_flag("--until-finished", options->until_finished,
                    "Keep following a job that seems stalled; exit only when it finished, ended or died");
  command->callback([options] {
    if (options->once && options->until_finished) throw CommandFailure("--once and --until-finished exclude each other", Exit::usage);
    if (!options->prom.empty()) {
      refuse_foreign_prom_file(options->prom);
      watch::remove_temporary_on_signals();
    }
    Watcher watcher(*options);
    const int code = watcher.run();
    if (code != 0) throw CommandFailure("", static_cast<Exit>(code));
  });
}

}  // namespace tremor::cli
