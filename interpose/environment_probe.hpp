// Reading the machine's and the process's facts for /environment
// (tremor/environment.hpp). Every reader is rooted at a directory ("/" in the
// profiler) so tests can point it at a fake /proc and /sys; the parsers take
// file contents. Nothing here throws on bad input or prints: a fact that
// cannot be read or parsed comes back as "unknown: <path>: <reason>".
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tremor/environment.hpp"
#include "tremor/run_data.hpp"

namespace tremor::environment_probe {

// A small text file (sysfs, /proc, /etc), at most `limit` bytes; nullopt with
// "<path>: <strerror>" in `error` when it cannot be read.
std::optional<std::string> read_text(const std::filesystem::path& path, std::string& error,
                                     std::size_t limit = std::size_t{1} << 22);

// Parsers of file contents.
std::optional<long long> parse_integer(std::string_view text);                // "3400000\n" -> 3400000
std::optional<std::string> cpu_model_from_cpuinfo(std::string_view cpuinfo);  // "model name" (x86), else ARM/POWER keys
std::optional<std::string> os_release_name(std::string_view os_release);      // PRETTY_NAME, else NAME VERSION_ID
std::optional<bool> parse_switch(std::string_view text);                      // "1" -> true, "0" -> false
// The GNU build-id (lower-case hex) in the contents of a PT_NOTE segment.
std::optional<std::string> build_id_from_notes(std::span<const unsigned char> notes);

// Node facts from <root>/sys/devices/system/cpu, <root>/proc and <root>/etc:
// cpu_model ... os_release of kNodeFacts (not the library versions or binary).
std::vector<EnvironmentFact> probe_node(const std::filesystem::path& root = "/");

// binary_path, binary_size, binary_mtime (UTC, ISO 8601) of the file the
// link `exe` (/proc/self/exe) points to; binary_build_id is `build_id`.
std::vector<EnvironmentFact> probe_binary(const std::filesystem::path& exe, const std::string& build_id);
// The running program's build-id, from its program headers in memory, or
// "unknown: ...".
std::string running_build_id();
// This thread's CPU affinity as a CPU list, or "unknown: ...".
std::string current_affinity();

// OMP_*, MKL_*, OPENBLAS_*, UCX_*, OMPI_MCA_*, MPIR_CVAR_*, I_MPI_* and the
// SLURM_* job geometry (docs/schema.md lists them).
bool is_performance_variable(std::string_view name);
// From an environ-style array ("NAME=value", null-terminated), sorted by name.
std::vector<EnvironmentFact> performance_variables(const char* const* environment);

// The batch job from an environ-style array: the first scheduler whose job id
// is set (Slurm, PBS, LSF, Flux, Cobalt) with the name, user, node list and
// step it sets; the user falls back to `process_user`. No job id: id "" and
// scheduler "".
struct SchedulerJob {
  std::string id;
  JobRecord record;
};
SchedulerJob scheduler_job(const char* const* environment, const std::string& process_user);

std::string hdf5_library_version();  // H5get_libversion of the loaded library

}  // namespace tremor::environment_probe
