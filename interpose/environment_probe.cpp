// Reading /environment's facts from /sys, /proc, /etc and the process
// (environment_probe.hpp).
#include "environment_probe.hpp"

#include <elf.h>
#include <fcntl.h>
#include <hdf5.h>
#include <link.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <set>

namespace tremor::environment_probe {
namespace {

constexpr int kMaxCpusProbed = 8192;  // bounds the sysfs walk on huge nodes

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::strchr(" \t\r\n", text.front())) text.remove_prefix(1);
  while (!text.empty() && std::strchr(" \t\r\n", text.back())) text.remove_suffix(1);
  return text;
}

std::string unquote(std::string_view text) {
  text = trim(text);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front())
    text = text.substr(1, text.size() - 2);
  return std::string(text);
}

// Shortest decimal form of a frequency in MHz.
std::string megahertz(double khz) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", khz / 1000.0);
  return text;
}

// A trimmed, non-empty file: the text, or why not.
std::optional<std::string> read_value(const std::filesystem::path& path, std::string& error) {
  std::optional<std::string> text = read_text(path, error, 4096);
  if (!text) return std::nullopt;
  const std::string_view value = trim(*text);
  if (value.empty()) {
    error = path.string() + ": empty";
    return std::nullopt;
  }
  return std::string(value);
}

struct CpuDirectory {
  std::filesystem::path base;
  std::filesystem::path cpu(int n) const { return base / ("cpu" + std::to_string(n)); }
};

void probe_cores(const CpuDirectory& dir, const std::vector<int>& cpus, std::vector<EnvironmentFact>& facts,
                 std::optional<bool>& any_siblings, std::string& sibling_error) {
  std::set<std::vector<int>> cores;
  for (int cpu : cpus) {
    std::string error;
    const auto text = read_text(dir.cpu(cpu) / "topology" / "thread_siblings_list", error, 65536);
    std::vector<int> siblings;
    if (!text || !parse_cpu_list(*text, siblings)) {
      sibling_error = text ? (dir.cpu(cpu) / "topology" / "thread_siblings_list").string() + ": not a CPU list" : error;
      facts.emplace_back("core_count", unknown_fact(sibling_error));
      facts.emplace_back("core_cpus", unknown_fact(sibling_error));
      return;
    }
    cores.insert(siblings);
  }
  std::string listing;
  bool siblings = false;
  // By first CPU, so the listing reads in CPU order.
  std::vector<std::vector<int>> ordered(cores.begin(), cores.end());
  std::ranges::sort(ordered, [](const auto& a, const auto& b) { return a.front() < b.front(); });
  for (const auto& core : ordered) {
    listing += (listing.empty() ? "" : ";") + format_cpu_list(core);
    siblings = siblings || core.size() > 1;
  }
  any_siblings = siblings;
  facts.emplace_back("core_count", std::to_string(cores.size()));
  facts.emplace_back("core_cpus", listing);
}

void probe_frequency(const CpuDirectory& dir, const std::vector<int>& cpus, std::vector<EnvironmentFact>& facts) {
  std::vector<std::string> governors;
  std::string governor_error;
  struct Reading {
    const char* file;
    const char* fact;
    std::vector<double> khz;
    std::string error;
  };
  std::array<Reading, 3> readings{Reading{"scaling_min_freq", "frequency_min_mhz", {}, {}},
                                  Reading{"scaling_max_freq", "frequency_max_mhz", {}, {}},
                                  Reading{"scaling_cur_freq", "frequency_current_mhz", {}, {}}};
  for (int cpu : cpus) {
    const std::filesystem::path cpufreq = dir.cpu(cpu) / "cpufreq";
    std::string error;
    if (const auto governor = read_value(cpufreq / "scaling_governor", error)) {
      if (std::ranges::find(governors, *governor) == governors.end()) governors.push_back(*governor);
    } else if (governor_error.empty()) {
      governor_error = error;
    }
    for (Reading& reading : readings) {
      const auto text = read_value(cpufreq / reading.file, error);
      const auto value = text ? parse_integer(*text) : std::nullopt;
      if (value && *value > 0) {
        reading.khz.push_back(static_cast<double>(*value));
      } else if (reading.error.empty()) {
        reading.error = text ? (cpufreq / reading.file).string() + ": not a frequency in kHz ('" + *text + "')" : error;
      }
    }
  }
  std::string governor;
  for (const std::string& name : governors) governor += (governor.empty() ? "" : ",") + name;
  facts.emplace_back("governor", governors.empty() ? unknown_fact(governor_error) : governor);
  for (const Reading& reading : readings) {
    if (reading.khz.empty()) {
      facts.emplace_back(reading.fact, unknown_fact(reading.error));
      continue;
    }
    double value = reading.khz.front();
    if (reading.fact == std::string_view("frequency_min_mhz")) {
      value = *std::ranges::min_element(reading.khz);
    } else if (reading.fact == std::string_view("frequency_max_mhz")) {
      value = *std::ranges::max_element(reading.khz);
    } else {
      value = 0.0;
      for (double khz : reading.khz) value += khz;
      value /= static_cast<double>(reading.khz.size());
    }
    facts.emplace_back(reading.fact, megahertz(value));
  }
}

std::string turbo_state(const std::filesystem::path& cpu_dir) {
  std::string no_turbo_error, boost_error;
  if (const auto text = read_value(cpu_dir / "intel_pstate" / "no_turbo", no_turbo_error)) {
    if (const auto off = parse_switch(*text)) return *off ? "off" : "on";
    no_turbo_error = (cpu_dir / "intel_pstate" / "no_turbo").string() + ": not 0 or 1 ('" + *text + "')";
  }
  if (const auto text = read_value(cpu_dir / "cpufreq" / "boost", boost_error)) {
    if (const auto on = parse_switch(*text)) return *on ? "on" : "off";
    boost_error = (cpu_dir / "cpufreq" / "boost").string() + ": not 0 or 1 ('" + *text + "')";
  }
  return unknown_fact(no_turbo_error + "; " + boost_error);
}

struct NoteWalk {
  std::string id;
};

int find_main_program_notes(dl_phdr_info* info, std::size_t, void* data) {
  // The first object dl_iterate_phdr reports is the main program.
  auto* walk = static_cast<NoteWalk*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_NOTE) continue;
    const auto* bytes = reinterpret_cast<const unsigned char*>(info->dlpi_addr + header.p_vaddr);
    if (const auto id = build_id_from_notes({bytes, static_cast<std::size_t>(header.p_memsz)})) {
      walk->id = *id;
      break;
    }
  }
  return 1;  // stop after the main program
}

}  // namespace

std::optional<std::string> read_text(const std::filesystem::path& path, std::string& error, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  char buffer[4096];
  while (text.size() < limit) {
    const ssize_t got = ::read(fd, buffer, std::min(sizeof buffer, limit - text.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      error = path.string() + ": " + std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

std::optional<long long> parse_integer(std::string_view text) {
  text = trim(text);
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<bool> parse_switch(std::string_view text) {
  const auto value = parse_integer(text);
  if (!value || (*value != 0 && *value != 1)) return std::nullopt;
  return *value == 1;
}

std::optional<std::string> cpu_model_from_cpuinfo(std::string_view cpuinfo) {
  // x86 first, then the keys ARM ("CPU part" has no name) and POWER use.
  for (std::string_view wanted : {"model name", "Model", "cpu model", "cpu"}) {
    std::string_view rest = cpuinfo;
    while (!rest.empty()) {
      const std::size_t newline = rest.find('\n');
      const std::string_view line = rest.substr(0, newline);
      rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos || trim(line.substr(0, colon)) != wanted) continue;
      const std::string_view value = trim(line.substr(colon + 1));
      if (!value.empty()) return std::string(value);
    }
  }
  return std::nullopt;
}

std::optional<std::string> os_release_name(std::string_view os_release) {
  std::map<std::string, std::string, std::less<>> fields;
  while (!os_release.empty()) {
    const std::size_t newline = os_release.find('\n');
    const std::string_view line = trim(os_release.substr(0, newline));
    os_release.remove_prefix(newline == std::string_view::npos ? os_release.size() : newline + 1);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || line.starts_with('#')) continue;
    fields[std::string(trim(line.substr(0, eq)))] = unquote(line.substr(eq + 1));
  }
  if (const auto it = fields.find("PRETTY_NAME"); it != fields.end() && !it->second.empty()) return it->second;
  const auto name = fields.find("NAME");
  if (name == fields.end() || name->second.empty()) return std::nullopt;
  const auto version = fields.find("VERSION_ID");
  return version == fields.end() ? name->second : name->second + " " + version->second;
}

std::optional<std::string> build_id_from_notes(std::span<const unsigned char> notes) {
  // Each note: namesz, descsz, type (4 bytes each), the name and the
  // descriptor, each padded to 4 bytes.
  constexpr std::size_t kHeader = 12;
  auto padded = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
  std::size_t at = 0;
  while (notes.size() - at >= kHeader) {
    std::uint32_t name_size = 0, desc_size = 0, type = 0;
    std::memcpy(&name_size, notes.data() + at, 4);
    std::memcpy(&desc_size, notes.data() + at + 4, 4);
    std::memcpy(&type, notes.data() + at + 8, 4);
    const std::size_t name_at = at + kHeader;
    if (padded(name_size) > notes.size() - name_at) return std::nullopt;
    const std::size_t desc_at = name_at + padded(name_size);
    if (desc_size > notes.size() - desc_at) return std::nullopt;
    if (type == NT_GNU_BUILD_ID && name_size == 4 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0 &&
        desc_size > 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string id;
      for (std::size_t i = 0; i < desc_size; ++i) {
        id += kHex[notes[desc_at + i] >> 4];
        id += kHex[notes[desc_at + i] & 15];
      }
      return id;
    }
    at = desc_at + padded(desc_size);
    if (at > notes.size()) return std::nullopt;
  }
  return std::nullopt;
}

std::vector<EnvironmentFact> probe_node(const std::filesystem::path& root) {
  std::vector<EnvironmentFact> facts;
  const CpuDirectory dir{root / "sys" / "devices" / "system" / "cpu"};
  std::string error;

  const auto cpuinfo = read_text(root / "proc" / "cpuinfo", error);
  const auto model = cpuinfo ? cpu_model_from_cpuinfo(*cpuinfo) : std::nullopt;
  facts.emplace_back(
      "cpu_model",
      model ? *model : unknown_fact(cpuinfo ? (root / "proc" / "cpuinfo").string() + ": no model name line" : error));

  std::vector<int> cpus;
  const auto online = read_text(dir.base / "online", error);
  const bool cpus_known = online && parse_cpu_list(*online, cpus);
  const std::string cpus_error = online ? (dir.base / "online").string() + ": not a CPU list" : error;
  if (cpus.size() > kMaxCpusProbed) cpus.resize(kMaxCpusProbed);
  facts.emplace_back("cpu_count", cpus_known ? std::to_string(cpus.size()) : unknown_fact(cpus_error));

  std::optional<bool> any_siblings;
  std::string sibling_error = cpus_error;
  if (cpus_known) {
    probe_cores(dir, cpus, facts, any_siblings, sibling_error);
  } else {
    facts.emplace_back("core_count", unknown_fact(cpus_error));
    facts.emplace_back("core_cpus", unknown_fact(cpus_error));
  }
  // SMT: the kernel's switch, else whether any core has sibling threads.
  std::string smt_error;
  const auto active_text = read_value(dir.base / "smt" / "active", smt_error);
  const auto active = active_text ? parse_switch(*active_text) : std::nullopt;
  if (active_text && !active) smt_error = (dir.base / "smt" / "active").string() + ": not 0 or 1";
  const std::optional<bool> smt = active ? active : any_siblings;
  facts.emplace_back("smt", smt ? (*smt ? "on" : "off") : unknown_fact(smt_error + "; " + sibling_error));

  if (cpus_known) {
    probe_frequency(dir, cpus, facts);
  } else {
    for (const char* name : {"governor", "frequency_min_mhz", "frequency_max_mhz", "frequency_current_mhz"})
      facts.emplace_back(name, unknown_fact(cpus_error));
  }
  facts.emplace_back("turbo", turbo_state(dir.base));

  const auto kernel = read_value(root / "proc" / "sys" / "kernel" / "osrelease", error);
  facts.emplace_back("kernel_release", kernel ? *kernel : unknown_fact(error));
  std::string os_error;
  auto os = read_text(root / "etc" / "os-release", os_error);
  if (!os) os = read_text(root / "usr" / "lib" / "os-release", error);
  const auto os_name = os ? os_release_name(*os) : std::nullopt;
  facts.emplace_back("os_release",
                     os_name ? *os_name : unknown_fact(os ? "os-release has no PRETTY_NAME or NAME" : os_error));
  return facts;
}

std::vector<EnvironmentFact> probe_binary(const std::filesystem::path& exe, const std::string& build_id) {
  std::vector<EnvironmentFact> facts;
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(exe, ec);
  facts.emplace_back("binary_path", ec ? unknown_fact(exe.string() + ": " + ec.message()) : target.string());
  struct stat info {};
  if (::stat(exe.c_str(), &info) != 0) {
    const std::string reason = unknown_fact(exe.string() + ": " + std::strerror(errno));
    facts.emplace_back("binary_size", reason);
    facts.emplace_back("binary_mtime", reason);
  } else {
    facts.emplace_back("binary_size", std::to_string(static_cast<long long>(info.st_size)));
    std::tm utc{};
    char text[40] = {};
    const std::time_t seconds = info.st_mtim.tv_sec;
    if (gmtime_r(&seconds, &utc) != nullptr) std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    facts.emplace_back("binary_mtime", text[0] ? std::string(text) : unknown_fact("mtime out of range"));
  }
  facts.emplace_back("binary_build_id", build_id);
  return facts;
}

std::string running_build_id() {
  NoteWalk walk;
  dl_iterate_phdr(find_main_program_notes, &walk);
  return walk.id.empty() ? unknown_fact("the program has no GNU build-id note") : walk.id;
}

std::string current_affinity() {
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 8) {
    const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
    std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(cpus), [](cpu_set_t* s) { CPU_FREE(s); });
    if (!set) return unknown_fact("sched_getaffinity: out of memory");
    CPU_ZERO_S(bytes, set.get());
    if (sched_getaffinity(0, bytes, set.get()) != 0) {
      if (errno == EINVAL) continue;  // the kernel's mask is larger
      return unknown_fact(std::string("sched_getaffinity: ") + std::strerror(errno));
    }
    std::vector<int> list;
    for (int cpu = 0; cpu < cpus; ++cpu)
      if (CPU_ISSET_S(cpu, bytes, set.get())) list.push_back(cpu);
    return list.empty() ? unknown_fact("sched_getaffinity: empty mask") : format_cpu_list(list);
  }
  return unknown_fact("sched_getaffinity: mask larger than 2^20 CPUs");
}

bool is_performance_variable(std::string_view name) {
  // Open MPI's launcher plumbing (URIs, session directories, process ids),
  // set by mpirun for every rank, not settings that change performance.
  for (std::string_view plumbing : {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir"})
    if (name.starts_with(plumbing)) return false;
  for (std::string_view prefix : {"OMP_", "MKL_", "OPENBLAS_", "UCX_", "OMPI_MCA_", "MPIR_CVAR_", "I_MPI_"})
    if (name.starts_with(prefix) && name.size() > prefix.size()) return true;
  // Slurm's job geometry and binding (not per-task ids such as SLURM_PROCID).
  for (std::string_view slurm :
       {"SLURM_NTASKS", "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_CPUS_PER_TASK", "SLURM_TASKS_PER_NODE",
        "SLURM_NTASKS_PER_NODE", "SLURM_NTASKS_PER_CORE", "SLURM_NTASKS_PER_SOCKET", "SLURM_JOB_CPUS_PER_NODE",
        "SLURM_CPUS_ON_NODE", "SLURM_CPU_BIND", "SLURM_CPU_BIND_TYPE", "SLURM_CPU_BIND_LIST", "SLURM_CPU_BIND_VERBOSE",
        "SLURM_DISTRIBUTION", "SLURM_HINT", "SLURM_THREADS_PER_CORE", "SLURM_CPU_FREQ_REQ", "SLURM_JOB_PARTITION"})
    if (name == slurm) return true;
  return false;
}

std::vector<EnvironmentFact> performance_variables(const char* const* environment) {
  std::vector<EnvironmentFact> variables;
  for (const char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || !is_performance_variable(text.substr(0, eq))) continue;
    variables.emplace_back(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  std::ranges::sort(variables);
  return variables;
}

namespace {

// Each scheduler's variables; nullptr where it has no standard one.
struct SchedulerVariables {
  const char* scheduler;
  const char* id;
  const char* name;
  const char* user;
  const char* nodelist;
  const char* step;
};
constexpr std::array<SchedulerVariables, 5> kSchedulers{{
    {"slurm", "SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_JOB_USER", "SLURM_JOB_NODELIST", "SLURM_STEP_ID"},
    {"pbs", "PBS_JOBID", "PBS_JOBNAME", nullptr, nullptr, nullptr},
    {"lsf", "LSB_JOBID", "LSB_JOBNAME", nullptr, nullptr, nullptr},
    {"flux", "FLUX_JOB_ID", nullptr, nullptr, nullptr, nullptr},
    {"cobalt", "COBALT_JOBID", nullptr, nullptr, nullptr, nullptr},
}};

// NAME's non-empty value in an environ-style array.
std::optional<std::string> variable(const char* const* environment, const char* name) {
  if (name == nullptr) return std::nullopt;
  const std::string_view wanted(name);
  for (const char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.size() > wanted.size() + 1 && text.starts_with(wanted) && text[wanted.size()] == '=')
      return std::string(text.substr(wanted.size() + 1));
  }
  return std::nullopt;
}

}  // namespace

SchedulerJob scheduler_job(const char* const* environment, const std::string& process_user) {
  for (const SchedulerVariables& names : kSchedulers) {
    auto id = variable(environment, names.id);
    if (!id) continue;
    SchedulerJob job{std::move(*id), JobRecord{names.scheduler, variable(environment, names.name),
                                               variable(environment, names.user), variable(environment, names.nodelist),
                                               variable(environment, names.step)}};
    if (!job.record.user && !process_user.empty()) job.record.user = process_user;
    return job;
  }
  return {};
}

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  if (H5get_libversion(&major, &minor, &release) < 0) return unknown_fact("H5get_libversion failed");
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace tremor::environment_probe
