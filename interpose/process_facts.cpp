#include "process_facts.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

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

}  // namespace tremor::interpose
