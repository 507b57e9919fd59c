#include "environment_collect.hpp"

#include <mpi.h>
#include <papi.h>

#include <algorithm>
#include <cstdlib>

#include "environment_probe.hpp"
#include "tremor/environment_assembly.hpp"

extern char** environ;

namespace tremor::interpose {
namespace {

ProcessEnvironment& stored() {
  // Function-local: no work at load time. Never destroyed: an application may
  // call MPI_Finalize from its own exit-time destructor, after the statics
  // made during the run are gone (docs/reliability.md#exit-time-finalize).
  static ProcessEnvironment& environment = *new ProcessEnvironment();
  return environment;
}

// The rank's index on its node from the launcher (Open MPI, MPICH Hydra,
// Slurm, PMI), -1 when none says: then every rank collects and the root
// keeps the node's first.
int launcher_local_rank() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0) return static_cast<int>(rank);
  }
  return -1;
}

std::string full_mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {};
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS) return unknown_fact("MPI_Get_library_version failed");
  std::string version(text, static_cast<std::size_t>(std::clamp(length, 0, MPI_MAX_LIBRARY_VERSION_STRING)));
  while (!version.empty() && (version.back() == '\0' || version.back() == '\n' || version.back() == ' '))
    version.pop_back();
  return version;
}

std::string version_text(int version) {
  return std::to_string(PAPI_VERSION_MAJOR(version)) + "." + std::to_string(PAPI_VERSION_MINOR(version)) + "." +
         std::to_string(PAPI_VERSION_REVISION(version)) + "." + std::to_string(PAPI_VERSION_INCREMENT(version));
}

std::string papi_version() {
  // PAPI_get_opt needs an initialised library; the counter set-up has
  // initialised it when PAPI counts the work.
  if (PAPI_is_initialized() != PAPI_NOT_INITED) {
    const int version = PAPI_get_opt(PAPI_LIB_VERSION, nullptr);
    if (version > 0) return version_text(version);
  }
  return version_text(PAPI_VERSION) + " (built against; not initialised in this run)";
}

}  // namespace

void collect_environment() noexcept {
  try {
    ProcessEnvironment& environment = stored();
    if (launcher_local_rank() <= 0) {
      environment.node = environment_probe::probe_node("/");
      environment.node.emplace_back("mpi_library_version", full_mpi_library_version());
      environment.node.emplace_back("papi_version", papi_version());
      environment.node.emplace_back("hdf5_version", environment_probe::hdf5_library_version());
    }
    environment.process = environment_probe::probe_binary("/proc/self/exe", environment_probe::running_build_id());
    environment.affinity = environment_probe::current_affinity();
    environment.variables = environment_probe::performance_variables(environ);
  } catch (...) {
    stored() = ProcessEnvironment{};  // the run then records its environment as not collected
  }
}

const ProcessEnvironment& collected_environment() noexcept { return stored(); }

std::string encoded_environment(int world_size) {
  constexpr std::size_t kRootBudget = std::size_t{64} << 20;
  const std::size_t budget =
      std::max<std::size_t>(4096, kRootBudget / static_cast<std::size_t>(std::max(1, world_size)));
  return encode_environment(stored(), budget);
}

void assemble_gathered_environment(const std::vector<std::string_view>& per_rank, RunData* run) {
  std::vector<ProcessEnvironment> decoded;
  decoded.reserve(per_rank.size());
  for (const std::string_view text : per_rank) decoded.push_back(decode_environment(text));
  run->environment = assemble_environment(run->ranks, decoded);
}

}  // namespace tremor::interpose
