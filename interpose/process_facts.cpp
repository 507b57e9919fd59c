#include "process_facts.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <pwd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>

#include "environment_probe.hpp"

extern char** environ;

namespace tremor::interpose {
namespace {

// The process's user name, else its uid.
std::string process_user() {
  std::array<char, 4096> buffer{};
  passwd entry{};
  passwd* found = nullptr;
  const uid_t uid = ::geteuid();
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr && found->pw_name)
    return found->pw_name;
  return std::to_string(uid);
}

}  // namespace

std::string read_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

std::string job_id() { return environment_probe::scheduler_job(environ, {}).id; }

JobRecord job_record() { return environment_probe::scheduler_job(environ, process_user()).record; }

bool disabled_by_environment() {
  const char* value = std::getenv("TREMOR_DISABLE");
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  PMPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(std::max(0, length)));
  const auto newline = version.find('\n');
  if (newline != std::string::npos) version.resize(newline);
  while (!version.empty() && (version.back() == ' ' || version.back() == '\0')) version.pop_back();
  return version;
}

std::string processor_name() {
  char host[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int length = 0;
  PMPI_Get_processor_name(host, &length);
  return std::string(host, static_cast<std::size_t>(std::clamp(length, 0, MPI_MAX_PROCESSOR_NAME)));
}

namespace {

// The thread's schedstat fields and the monotonic clock, s.
struct SchedulerReading {
  double on_cpu_s = std::numeric_limits<double>::quiet_NaN();
  double waiting_s = std::numeric_limits<double>::quiet_NaN();
  double wall_s = std::numeric_limits<double>::quiet_NaN();
};

pid_t init_thread = 0;
SchedulerReading at_init;

// /proc/self/task/<tid>/schedstat: time on a CPU and time runnable waiting
// for one (ns). Read with system calls, not through open/read: an I/O
// profiler or injector preloaded with Tremor must not see (or delay)
// Tremor's own reads.
SchedulerReading read_scheduler(pid_t thread) {
  SchedulerReading reading;
  const std::string path = "/proc/self/task/" + std::to_string(thread) + "/schedstat";
  timespec now{};
  const long fd = syscall(SYS_openat, AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return reading;
  char text[128] = {};
  const long length = syscall(SYS_read, static_cast<int>(fd), text, sizeof text - 1);
  clock_gettime(CLOCK_MONOTONIC, &now);
  syscall(SYS_close, static_cast<int>(fd));
  unsigned long long on_cpu_ns = 0, waiting_ns = 0;
  if (length <= 0 || std::sscanf(text, "%llu %llu", &on_cpu_ns, &waiting_ns) != 2) return reading;
  reading.on_cpu_s = 1e-9 * static_cast<double>(on_cpu_ns);
  reading.waiting_s = 1e-9 * static_cast<double>(waiting_ns);
  reading.wall_s = static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  return reading;
}

}  // namespace

void note_scheduler_at_init() {
  init_thread = static_cast<pid_t>(syscall(SYS_gettid));
  at_init = read_scheduler(init_thread);
}

SchedulerTimes scheduler_times_since_init() {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (init_thread == 0 || std::isnan(at_init.wall_s)) return {kNaN, kNaN};
  const SchedulerReading now = read_scheduler(init_thread);
  if (std::isnan(now.wall_s)) return {kNaN, kNaN};
  const double waiting = std::max(0.0, now.waiting_s - at_init.waiting_s);
  const double on_cpu = std::max(0.0, now.on_cpu_s - at_init.on_cpu_s);
  return {waiting, std::max(0.0, now.wall_s - at_init.wall_s - on_cpu - waiting)};
}

}  // namespace tremor::interpose
