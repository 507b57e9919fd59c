// `tremor watch`: the parts shared by its source files. cli_watch.cpp runs
// the loop and decides the job's state, cli_watch_follow.cpp reads what the
// spill files gained since the last refresh (through the spill parser, which
// is fuzzed), cli_watch_snapshot.cpp analyses what every rank reached (in a
// child process: a failure cannot crash the watch), cli_watch_output.cpp renders a refresh
// (text block, one line, JSON Lines, Prometheus textfile).
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tremor/spill.hpp"

namespace tremor::cli::watch {

// One job's spill files found by a listing (no file is opened).
struct JobFiles {
  std::vector<std::filesystem::path> paths;
  // The latest modification of any of them (min(): the file clock's zero lies in the future).
  std::filesystem::file_time_type newest = std::filesystem::file_time_type::min();
};

// Every run's spill files under the given directories, stems or .spill files,
// by stem name ("<program>-<time>-<pid>-<n>", without directory): several
// directories hold one run's ranks with per-node output. A file that vanishes
// while listed is left out.
std::map<std::string, JobFiles> list_jobs(const std::vector<std::string>& names,
                                          std::vector<std::filesystem::path>& directories);

// Runs `body` in a child process and returns what it returned; a child that
// dies, throws or outlives `limit_s` gives {"error": why}.
nlohmann::json in_child(const std::function<nlohmann::json()>& body, unsigned limit_s);

// One followed spill file: where its reading stands (cli_watch_follow.cpp).
struct FollowedFile {
  std::filesystem::path path;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  SpillCursor cursor;
  bool readable = false;  // its header was read
  bool reread = false;    // read it again from its start at the next update
  std::string error;      // why it is not readable
};

// The spill files of one job, kept across refreshes: update() reads only
// what was appended since the previous update (a file replaced, truncated or
// rewritten is read again; one that vanished is unreadable until it is back).
class SpillFollower {
 public:
  // `paths` in the order wanted (by rank); files not named any more are forgotten.
  void update(const std::vector<std::filesystem::path>& paths);
  // In the order of the last update; a file not readable has an empty SpillFile.
  const std::vector<SpillFile>& spills() const { return spills_; }
  const std::vector<FollowedFile>& states() const { return states_; }
  // Bytes read by the last update.
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  void bring_up_to_date(SpillFile& spill, FollowedFile& state);
  std::vector<SpillFile> spills_;
  std::vector<FollowedFile> states_;
  std::uint64_t bytes_read_ = 0;
};

// The figures so far (runs in the child, over what the follower read): per-rank facts ("ranks": rank,
// host, pid, segments, end, dropped_bytes), the run's facts ("program",
// "pid", "start_time_unix", "spill_interval_s") and, when every rank's file
// is usable, the analysis of the segments every rank reached under the final
// report's keys; else "problem" says why there is no figure.
nlohmann::json take_snapshot(const SpillFollower& follower);

// The finished run's figures from its run file (runs in the child), the same
// keys plus "headline" (the text report's first lines) and "output_file".
nlohmann::json analyse_run_file(const std::filesystem::path& run_file);

// The run file of a finished run: <program>-*-<pid>-<n>.h5 in one of the
// directories, the newest; empty when there is none.
std::filesystem::path find_run_file(const std::vector<std::filesystem::path>& directories, const std::string& program,
                                    long long pid);

// The newest .h5 in the directories modified at or after `since` (a run that
// came and went between two looks); empty when there is none.
std::filesystem::path newest_run_file_since(const std::vector<std::filesystem::path>& directories,
                                            std::filesystem::file_time_type since);

// Output of one refresh (cli_watch_output.cpp).
struct Display {
  bool json = false;
  bool terminal = false;   // redraw one block (isatty) instead of one line per refresh
  std::size_t drawn = 0;   // lines of the block drawn last, cleared before the next
};
void show(Display& display, const nlohmann::json& refresh);
// Writes the Prometheus textfile for node_exporter: FILE.tmp-<pid>, then
// rename(2) over FILE. False with `error` on failure.
bool write_prometheus(const std::filesystem::path& file, const nlohmann::json& refresh, std::string& error);
// SIGTERM, SIGINT and SIGHUP remove a temporary file being written, then end the watch.
void remove_temporary_on_signals();
// The Prometheus text (exposed for the tests' strict parser through the file).
std::string prometheus_text(const nlohmann::json& refresh);

}  // namespace tremor::cli::watch
