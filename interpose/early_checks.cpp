// Mistakes said at MPI_Init rather than never or after the run (rank 0,
// once): TREMOR_* names no part of Tremor reads, in the environment or in the
// TREMOR_CONFIG file (a typo keeps its default silently), and an output
// directory that cannot be written (the run file would be lost at the end,
// the crash-recovery spill go nowhere).
#include "early_checks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "recorder.hpp"
#include "tremor/config.hpp"
#include "tremor/inject_settings.hpp"

namespace tremor::interpose {
namespace {

void warn_unknown_names(Recorder& recorder) {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.starts_with("TREMOR_")) names.emplace_back(text.substr(0, text.find('=')));
  }
  // The injector's settings and TREMOR_DISABLE (read here, not a setting).
  std::vector<std::string_view> injector_names{"TREMOR_DISABLE"};
  for (const inject::SettingInfo& setting : inject::kSettings) injector_names.push_back(setting.name);
  for (const std::string& message : unknown_name_messages(names, injector_names)) recorder.warn0(message);
  // The TREMOR_CONFIG file's names (its other problems load_config said);
  // one the environment also sets was checked above, and the environment's
  // value is the one in use.
  std::vector<std::string> file_only;
  for (std::string& name : config_file_names(process_environment()))
    if (std::find(names.begin(), names.end(), name) == names.end()) file_only.push_back(std::move(name));
  for (const std::string& message : config_file_name_messages(file_only, injector_names)) recorder.warn0(message);
}

std::atomic<bool> output_dir_reported{false};

// Why `directory` cannot take Tremor's files; empty when a file can be
// created in it (and is removed at once).
std::string output_dir_problem(const std::string& directory) {
  struct stat status {};
  if (::stat(directory.c_str(), &status) != 0) return std::strerror(errno);
  if (!S_ISDIR(status.st_mode)) return "not a directory";
  const std::string probe = directory + "/.tremor-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errno == EEXIST ? std::string() : std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

void check_output_dir(Recorder& recorder) {
  const Config& config = recorder.config();
  const std::string problem = output_dir_problem(config.output_dir);
  if (problem.empty()) return;
  std::string message = "TREMOR_OUTPUT_DIR='" + config.output_dir + "' cannot be written (" + problem +
                        "): the run file will not be saved (the report is still printed)";
  if (config.spill_interval_s >= 0.0) {
    message += recorder.spill_kept_note().empty()
                   ? "; no crash-recovery spill files (" + spill_fallback_dir() + " cannot be written either)"
                   : "; the crash-recovery spill files go to " + spill_fallback_dir() +
                         " and are kept: tremor analyze --recover " + recorder.spill_stem() +
                         " rebuilds the run file";
  }
  recorder.warn0(message);
  // One message for one problem: the end of the run does not say it again.
  output_dir_reported.store(true, std::memory_order_relaxed);
}

}  // namespace

bool output_dir_reported_at_init() noexcept { return output_dir_reported.load(std::memory_order_relaxed); }

void run_early_checks(Recorder& recorder) noexcept {
  if (recorder.world_rank() != 0) return;
  InsideTremor guard;
  try {
    warn_unknown_names(recorder);
    if (recorder.started()) check_output_dir(recorder);
  } catch (...) {
  }
}

}  // namespace tremor::interpose
