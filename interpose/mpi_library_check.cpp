// Which MPI the process runs, checked once before main. libtremor-mpich.so
// preloaded into an Open MPI program (or the reverse) would pass its own
// MPI's handles (MPI_COMM_WORLD is an int in MPICH, a pointer in Open MPI) to
// the other library and crash it. On such a mismatch Tremor says so in one
// line and starts the program again without itself; where it cannot, it
// forwards every call untouched (forward_only, wrapper_support.hpp). Either
// way nothing is recorded, no file written, the application runs as without it.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process_facts.hpp"
#include "wrapper_support.hpp"

namespace tremor::interpose {

void forward_abort() noexcept;  // lifecycle.cpp

namespace {

enum class Flavour { unknown, mpich, openmpi };

struct Marker {
  Flavour flavour;
  const char* symbol;
};
// Symbols that only one family's MPI library defines itself: Open MPI's
// predefined communicator object; the attribute proxy of MPICH and its
// derivatives (MVAPICH, Intel MPI), named MPII_ since MPICH 4, MPIR_ before.
constexpr Marker kMarkers[] = {{Flavour::openmpi, "ompi_mpi_comm_world"},
                               {Flavour::mpich, "MPII_Keyval_set_proxy"},
                               {Flavour::mpich, "MPIR_Keyval_set_proxy"}};

constexpr std::string_view kBuiltFor = TREMOR_MPI_FLAVOUR;

std::string_view display_name(Flavour flavour) { return flavour == Flavour::openmpi ? "Open MPI" : "MPICH"; }
std::string_view library_name(Flavour flavour) {
  return flavour == Flavour::openmpi ? "libtremor-openmpi.so" : "libtremor-mpich.so";
}

// Where `symbol`, looked up from `handle` (the object, then its
// dependencies), is defined; dli_fbase nullptr if nowhere.
Dl_info definition(void* handle, const char* symbol) {
  void* const address = dlsym(handle, symbol);
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0) return Dl_info{};
  return info;
}

struct MpiLibrary {
  Flavour flavour = Flavour::unknown;
  std::string path;      // the library that defines PMPI_Init
  void* handle = nullptr;  // kept open: the forwarding entries' calls are looked up in it
};

// The MPI library that `path` is or brings in, if PMPI_Init and a marker are
// defined in one object (Tremor and a stacked injector define PMPI_Init, but
// their markers come from the MPI they link). A Fortran program's first MPI
// object is the Fortran bindings' library, whose dependency is the MPI.
MpiLibrary mpi_library_of(const std::string& path) {
  void* const handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return {};
  const Dl_info init = definition(handle, "PMPI_Init");
  if (init.dli_fbase != nullptr) {
    for (const Marker& marker : kMarkers) {
      if (definition(handle, marker.symbol).dli_fbase == init.dli_fbase)
        return {marker.flavour, init.dli_fname ? init.dli_fname : path, handle};
    }
  }
  dlclose(handle);
  return {};
}

int collect_name(dl_phdr_info* info, std::size_t, void* names) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
    static_cast<std::vector<std::string>*>(names)->emplace_back(info->dlpi_name);
  return 0;
}

// The MPI library the application's calls reach: the first MPI library in
// load order, the order in which the dynamic linker searches. The libraries
// the program names come before those Tremor brings in, so a program linked
// with the other MPI finds that one. (Not dlsym(RTLD_NEXT) from Tremor: a
// Fortran program's libmpi comes after Tremor's own MPI, one level deeper.)
MpiLibrary first_mpi_library() {
  std::vector<std::string> names;
  dl_iterate_phdr(collect_name, &names);  // names only: no dlopen under the loader's lock
  for (const std::string& name : names) {
    if (MpiLibrary library = mpi_library_of(name); library.flavour != Flavour::unknown) return library;
  }
  return {};
}

// Whether this process is rank 0 of its job, or of unknown rank (the launcher's
// environment; MPI itself is not initialised yet).
bool first_or_unknown_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) return std::string_view(value) == "0";
  }
  return true;
}

// This library's file.
std::string own_path() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&own_path), &self) == 0 || self.dli_fname == nullptr) return {};
  return self.dli_fname;
}

// The right library: its full path when it lies beside this one.
std::string right_library(Flavour flavour) {
  const std::string name(library_name(flavour));
  const std::string own = own_path();
  const auto slash = own.rfind('/');
  if (slash == std::string::npos) return name;
  const std::string beside = own.substr(0, slash + 1) + name;
  return ::access(beside.c_str(), R_OK) == 0 ? beside : name;
}

bool names_file(const std::string& entry, const std::string& file) {
  if (entry.find('/') == std::string::npos) return entry == file.substr(file.rfind('/') + 1);
  struct stat a {}, b {};
  return ::stat(entry.c_str(), &a) == 0 && ::stat(file.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// LD_PRELOAD without its entries that name this library (ld.so separates
// them with spaces or colons); nullopt when none does (Tremor was loaded
// some other way, and a new start would load it again).
std::optional<std::string> preload_without_tremor() {
  const char* const preload = std::getenv("LD_PRELOAD");
  const std::string own = own_path();
  if (preload == nullptr || own.empty()) return std::nullopt;
  std::string kept;
  bool dropped = false;
  std::string_view rest(preload);
  while (!rest.empty()) {
    const auto end = rest.find_first_of(" :");
    const std::string entry(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (entry.empty()) continue;
    if (names_file(entry, own)) {
      dropped = true;
    } else {
      kept += (kept.empty() ? "" : ":") + entry;
    }
  }
  if (!dropped) return std::nullopt;
  return kept;
}

// Starts the program again, as it was started, without Tremor preloaded, so
// that its libraries come in the order they would without Tremor: Tremor's
// own MPI, loaded with it, would otherwise answer the calls Tremor does not
// wrap (a Fortran program's Open MPI comes one level deeper than Tremor's
// MPICH). Before main nothing of the program has run; MPI_Init has not, so
// the launcher's connection (environment, inherited descriptors) is intact.
// Returns only if it could not.
void start_again_without_tremor(char** argv) {
  const auto preload = preload_without_tremor();
  if (!preload || argv == nullptr || environ == nullptr) return;
  std::vector<std::string> replaced;
  if (!preload->empty()) replaced.push_back("LD_PRELOAD=" + *preload);
  std::vector<char*> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::string_view(*entry).starts_with("LD_PRELOAD=")) continue;
    environment.push_back(*entry);
  }
  for (std::string& entry : replaced) environment.push_back(entry.data());
  environment.push_back(nullptr);
  ::execve("/proc/self/exe", argv, environment.data());
}

int missing_mpi_call() { return MPI_ERR_INTERN; }

// The program's MPI library when it is not this build's; nullptr otherwise.
void* g_program_mpi = nullptr;

// Before main, with the process's arguments (glibc passes them to
// constructors); the process has one thread.
[[gnu::constructor]] void check_mpi_library(int, char** argv, char**) {
  const Flavour built = kBuiltFor == "openmpi" ? Flavour::openmpi : Flavour::mpich;
  const MpiLibrary runs = first_mpi_library();
  if (runs.flavour == Flavour::unknown || runs.flavour == built) {
    if (runs.handle != nullptr) dlclose(runs.handle);
    return;
  }
  if (first_or_unknown_rank() && !disabled_by_environment()) {
    const std::string line = "[tremor] this program runs " + std::string(display_name(runs.flavour)) + " (" +
                             runs.path + ") but " + std::string(library_name(built)) + " is built for " +
                             std::string(display_name(built)) + ": Tremor records nothing in this run; preload " +
                             right_library(runs.flavour) + " instead\n";
    std::fputs(line.c_str(), stderr);
  }
  start_again_without_tremor(argv);
  // Still here (Tremor not named in LD_PRELOAD, or no /proc): Tremor stays
  // loaded and forwards every call it wraps to the program's MPI.
  g_program_mpi = runs.handle;
  forward_every_mpi_call();
  forward_abort();
  tremor_forward_only = true;
}

}  // namespace

void* forwarding_target(const char* name) noexcept {
  if (void* const real = dlsym(g_program_mpi, name)) return real;
  return reinterpret_cast<void*>(&missing_mpi_call);
}

}  // namespace tremor::interpose
