#include "process_facts.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>

namespace tremor::interpose {

std::string read_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

std::string job_id() {
  for (const char* name : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID"}) {
    if (const char* value = std::getenv(name); value && *value) return value;
  }
  return {};
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

pid_t init_thread = 0;
double run_queue_delay_at_init_s = std::numeric_limits<double>::quiet_NaN();

// The second field of /proc/self/task/<tid>/schedstat (ns), in seconds. Read
// with system calls, not through open/read: an I/O profiler or injector
// preloaded with Tremor must not see (or delay) Tremor's own reads.
double run_queue_delay_s(pid_t thread) {
  const std::string path = "/proc/self/task/" + std::to_string(thread) + "/schedstat";
  const long fd = syscall(SYS_openat, AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::numeric_limits<double>::quiet_NaN();
  char text[128] = {};
  const long length = syscall(SYS_read, static_cast<int>(fd), text, sizeof text - 1);
  syscall(SYS_close, static_cast<int>(fd));
  unsigned long long on_cpu_ns = 0, waiting_ns = 0;
  if (length <= 0 || std::sscanf(text, "%llu %llu", &on_cpu_ns, &waiting_ns) != 2)
    return std::numeric_limits<double>::quiet_NaN();
  return 1e-9 * static_cast<double>(waiting_ns);
}

}  // namespace

void note_run_queue_delay_at_init() {
  init_thread = static_cast<pid_t>(syscall(SYS_gettid));
  run_queue_delay_at_init_s = run_queue_delay_s(init_thread);
}

double run_queue_delay_since_init_s() {
  const double now = init_thread == 0 ? std::numeric_limits<double>::quiet_NaN() : run_queue_delay_s(init_thread);
  if (std::isnan(now) || std::isnan(run_queue_delay_at_init_s)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(0.0, now - run_queue_delay_at_init_s);
}

}  // namespace tremor::interpose
