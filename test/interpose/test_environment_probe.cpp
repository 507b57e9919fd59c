// The probe behind /environment (interpose/environment_probe.hpp): the
// parsers with good, malformed and missing input (unknown with a reason, never
// a crash) and the probes on fake /sys and /proc trees.
#include <catch2/catch.hpp>

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "environment_probe.hpp"
#include "temp_dir.hpp"
#include "tremor/environment.hpp"

namespace {

namespace fs = std::filesystem;
namespace probe = tremor::environment_probe;
using tremor::EnvironmentFact;
using tremor::is_unknown;
using tremor::test::TempDir;

std::string fact(const std::vector<EnvironmentFact>& facts, const std::string& name) {
  for (const auto& [key, value] : facts)
    if (key == name) return value;
  FAIL("no fact " << name);
  return {};
}

// A 2-core, 4-thread node with cpufreq and intel_pstate.
void write_good_node(const TempDir& root) {
  root.write("proc/cpuinfo",
             "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU @ 2.00GHz\n\nprocessor\t: 1\n");
  root.write("sys/devices/system/cpu/online", "0-3\n");
  root.write("sys/devices/system/cpu/smt/active", "1\n");
  const char* siblings[] = {"0,2\n", "1,3\n", "0,2\n", "1,3\n"};
  const char* governors[] = {"performance\n", "performance\n", "powersave\n", "performance\n"};
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu);
    root.write(dir + "/topology/thread_siblings_list", siblings[cpu]);
    root.write(dir + "/cpufreq/scaling_governor", governors[cpu]);
    root.write(dir + "/cpufreq/scaling_min_freq", std::to_string(800000 + cpu * 100000) + "\n");
    root.write(dir + "/cpufreq/scaling_max_freq", std::to_string(3000000 + cpu * 100000) + "\n");
    root.write(dir + "/cpufreq/scaling_cur_freq", std::to_string(2000000 + cpu * 1000) + "\n");
  }
  root.write("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
  root.write("proc/sys/kernel/osrelease", "6.1.0-test\n");
  root.write("etc/os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
}

}  // namespace

TEST_CASE("file-content parsers: good, malformed and missing values", "[environment]") {
  CHECK(probe::parse_integer(" 3400000\n") == 3400000);
  CHECK_FALSE(probe::parse_integer("34 00"));
  CHECK_FALSE(probe::parse_integer(""));
  CHECK_FALSE(probe::parse_integer("abc"));
  CHECK(probe::parse_switch("1\n") == true);
  CHECK(probe::parse_switch("0") == false);
  CHECK_FALSE(probe::parse_switch("2"));
  CHECK_FALSE(probe::parse_switch("on"));

  CHECK(probe::cpu_model_from_cpuinfo("processor : 0\nmodel name\t: Xeon X\n") == "Xeon X");
  CHECK(probe::cpu_model_from_cpuinfo("processor : 0\ncpu\t: POWER9 (raw)\n") == "POWER9 (raw)");
  CHECK_FALSE(probe::cpu_model_from_cpuinfo("processor : 0\nmodel name\t:\n"));
  CHECK_FALSE(probe::cpu_model_from_cpuinfo(""));
  CHECK_FALSE(probe::cpu_model_from_cpuinfo(std::string("\0\0\xff:", 4)));

  CHECK(probe::os_release_name("NAME=Debian\nPRETTY_NAME=\"Debian 12\"\n") == "Debian 12");
  CHECK(probe::os_release_name("# c\nNAME='Alpine'\nVERSION_ID=3.19\n") == "Alpine 3.19");
  CHECK_FALSE(probe::os_release_name("garbage without equals\n"));
  CHECK_FALSE(probe::os_release_name(""));
}

TEST_CASE("the GNU build-id is found in note segments, bad notes give none", "[environment]") {
  auto note = [](std::uint32_t type, const char* name, std::vector<unsigned char> desc) {
    const std::uint32_t name_size = static_cast<std::uint32_t>(std::strlen(name) + 1);
    const std::uint32_t desc_size = static_cast<std::uint32_t>(desc.size());
    const std::size_t desc_at = 12 + ((name_size + 3) & ~3u);
    std::vector<unsigned char> bytes(desc_at + ((desc_size + 3) & ~3u), 0);
    const std::uint32_t header[3] = {name_size, desc_size, type};
    std::memcpy(bytes.data(), header, sizeof header);
    for (std::size_t i = 0; i < name_size; ++i) bytes[12 + i] = static_cast<unsigned char>(name[i]);
    for (std::size_t i = 0; i < desc.size(); ++i) bytes[desc_at + i] = desc[i];
    return bytes;
  };
  auto abi = note(NT_GNU_ABI_TAG, "GNU", {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
  const auto id = note(NT_GNU_BUILD_ID, "GNU", {0xde, 0xad, 0xbe, 0xef, 0x01});
  std::vector<unsigned char> both = abi;
  both.insert(both.end(), id.begin(), id.end());
  CHECK(probe::build_id_from_notes(both) == "deadbeef01");
  CHECK_FALSE(probe::build_id_from_notes(abi));
  CHECK_FALSE(probe::build_id_from_notes(note(NT_GNU_BUILD_ID, "XYZ", {1, 2})));
  CHECK_FALSE(probe::build_id_from_notes({}));
  for (std::size_t cut = 0; cut < 16 + 5; ++cut) {  // every cut into the header, name or descriptor
    std::vector<unsigned char> truncated(id.begin(), id.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK_FALSE(probe::build_id_from_notes(truncated));
  }
  auto huge = id;
  const std::uint32_t big = 0xfffffff0u;
  std::memcpy(huge.data() + 4, &big, 4);
  CHECK_FALSE(probe::build_id_from_notes(huge));
  std::memcpy(huge.data(), &big, 4);
  CHECK_FALSE(probe::build_id_from_notes(huge));
  // The running test binary is linked with a build-id (the integration test
  // compares it with readelf).
  const std::string running = probe::running_build_id();
  CHECK((running.size() >= 16 || is_unknown(running)));
}

TEST_CASE("node probe on a good fake /sys reads every fact", "[environment]") {
  TempDir root;
  write_good_node(root);
  const auto facts = probe::probe_node(root.path());
  CHECK(fact(facts, "cpu_model") == "Test CPU @ 2.00GHz");
  CHECK(fact(facts, "cpu_count") == "4");
  CHECK(fact(facts, "core_count") == "2");
  CHECK(fact(facts, "core_cpus") == "0,2;1,3");
  CHECK(fact(facts, "smt") == "on");
  CHECK(fact(facts, "governor") == "performance,powersave");
  CHECK(fact(facts, "frequency_min_mhz") == "800");
  CHECK(fact(facts, "frequency_max_mhz") == "3300");
  CHECK(fact(facts, "frequency_current_mhz") == "2001.5");
  CHECK(fact(facts, "turbo") == "on");
  CHECK(fact(facts, "kernel_release") == "6.1.0-test");
  CHECK(fact(facts, "os_release") == "Debian GNU/Linux 12 (bookworm)");

  // cpufreq/boost is the other turbo switch; intel_pstate's wins when both exist.
  root.write("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
  root.write("sys/devices/system/cpu/cpufreq/boost", "1\n");
  CHECK(fact(probe::probe_node(root.path()), "turbo") == "off");
  fs::remove(root.path() / "sys/devices/system/cpu/intel_pstate/no_turbo");
  CHECK(fact(probe::probe_node(root.path()), "turbo") == "on");
}

TEST_CASE("node probe: missing, malformed and unreadable files give unknown with the reason", "[environment]") {
  SECTION("an empty tree") {
    TempDir root;
    const auto facts = probe::probe_node(root.path());
    for (const auto& [name, value] : facts) {
      INFO(name << " = " << value);
      CHECK(is_unknown(value));
      CHECK(value.find(root.path().string()) != std::string::npos);  // the path that failed
      CHECK(value.find("No such file or directory") != std::string::npos);
    }
    CHECK(facts.size() == 12);
  }
  SECTION("malformed values") {
    TempDir root;
    write_good_node(root);
    root.write("sys/devices/system/cpu/online", "zero-three\n");
    root.write("sys/devices/system/cpu/smt/active", "maybe\n");
    root.write("sys/devices/system/cpu/intel_pstate/no_turbo", "7\n");
    root.write("proc/cpuinfo", "processor : 0\n");
    root.write("etc/os-release", "\n");
    const auto facts = probe::probe_node(root.path());
    CHECK(fact(facts, "cpu_count").find("not a CPU list") != std::string::npos);
    for (const char* name : {"cpu_model", "cpu_count", "core_count", "core_cpus", "smt", "governor",
                             "frequency_current_mhz", "turbo", "os_release"}) {
      INFO(name << " = " << fact(facts, name));
      CHECK(is_unknown(fact(facts, name)));
    }
    CHECK(fact(facts, "turbo").find("not 0 or 1") != std::string::npos);
    CHECK(fact(facts, "kernel_release") == "6.1.0-test");
  }
  SECTION("per-CPU garbage") {
    TempDir root;
    write_good_node(root);
    for (int cpu = 0; cpu < 4; ++cpu) {
      const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu);
      root.write(dir + "/cpufreq/scaling_governor", "  \n");
      root.write(dir + "/cpufreq/scaling_cur_freq", "fast\n");
      root.write(dir + "/cpufreq/scaling_max_freq", "-5\n");
    }
    root.write("sys/devices/system/cpu/cpu1/topology/thread_siblings_list", "1,x\n");
    root.write("sys/devices/system/cpu/smt/active", "");
    const auto facts = probe::probe_node(root.path());
    CHECK(fact(facts, "governor").find("empty") != std::string::npos);
    CHECK(fact(facts, "frequency_current_mhz").find("not a frequency in kHz ('fast')") != std::string::npos);
    CHECK(is_unknown(fact(facts, "frequency_max_mhz")));
    CHECK(fact(facts, "frequency_min_mhz") == "800");
    CHECK(is_unknown(fact(facts, "core_count")));
    CHECK(is_unknown(fact(facts, "smt")));  // neither the switch nor the siblings
    CHECK(fact(facts, "cpu_count") == "4");
  }
  SECTION("unreadable: a directory where a file should be") {
    TempDir root;
    write_good_node(root);
    fs::remove(root.path() / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    fs::create_directories(root.path() / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    fs::remove(root.path() / "sys/devices/system/cpu/online");
    fs::create_directories(root.path() / "sys/devices/system/cpu/online");
    const auto facts = probe::probe_node(root.path());
    CHECK(fact(facts, "cpu_count").find("Is a directory") != std::string::npos);
    CHECK(is_unknown(fact(facts, "governor")));
    CHECK(fact(facts, "smt") == "on");  // the kernel's switch still reads
  }
}

TEST_CASE("binary facts, affinity and the performance variables", "[environment]") {
  TempDir root;
  root.write("app", std::string(1234, 'x'));
  fs::create_symlink(root.path() / "app", root.path() / "exe");
  const auto facts = probe::probe_binary(root.path() / "exe", "abc123");
  CHECK(fact(facts, "binary_path") == (root.path() / "app").string());
  CHECK(fact(facts, "binary_size") == "1234");
  CHECK(fact(facts, "binary_mtime").size() == 20);  // 2024-01-02T03:04:05Z
  CHECK(fact(facts, "binary_build_id") == "abc123");
  const auto missing = probe::probe_binary(root.path() / "nothing", "x");
  CHECK(is_unknown(fact(missing, "binary_path")));
  CHECK(is_unknown(fact(missing, "binary_size")));

  std::vector<int> cpus;
  CHECK(tremor::parse_cpu_list(probe::current_affinity(), cpus));

  const char* environ_like[] = {"OMP_NUM_THREADS=3",
                                "PATH=/bin",
                                "SLURM_NTASKS=4",
                                "SLURM_PROCID=1",
                                "UCX_TLS=rc,sm",
                                "OMPI_MCA_btl=^tcp",
                                "OMPI_MCA_orte_hnp_uri=1.0;tcp://x",
                                "MKL_=x",
                                "I_MPI_PIN=1",
                                "NOEQUALS",
                                "MPIR_CVAR_ASYNC_PROGRESS=1=1",
                                nullptr};
  const auto variables = probe::performance_variables(environ_like);
  const std::vector<EnvironmentFact> expected{{"I_MPI_PIN", "1"},       {"MPIR_CVAR_ASYNC_PROGRESS", "1=1"},
                                              {"OMPI_MCA_btl", "^tcp"}, {"OMP_NUM_THREADS", "3"},
                                              {"SLURM_NTASKS", "4"},    {"UCX_TLS", "rc,sm"}};
  CHECK(variables == expected);
  CHECK(probe::performance_variables(nullptr).empty());
}

// Fails a probe that takes a later scheduler's id before Slurm's, leaves the
// user unset instead of the process's, reads "SLURM_JOB_NAMEX" as the name,
// or makes a job from an empty id.
TEST_CASE("scheduler_job reads the job from the scheduler's variables", "[environment]") {
  const char* slurm[] = {"PBS_JOBID=99.pbs",      "SLURM_JOB_NAMEX=wrong", "SLURM_JOB_ID=1234",
                         "SLURM_JOB_NAME=cfd",    "SLURM_JOB_USER=alice",  "SLURM_JOB_NODELIST=node[01-04]",
                         "SLURM_STEP_ID=0",       nullptr};
  const probe::SchedulerJob job = probe::scheduler_job(slurm, "root");
  CHECK(job.id == "1234");
  CHECK(job.record == tremor::JobRecord{"slurm", "cfd", "alice", "node[01-04]", "0"});

  const char* batch_step[] = {"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=n1", nullptr};
  CHECK(probe::scheduler_job(batch_step, "bob").record ==
        tremor::JobRecord{"slurm", std::nullopt, "bob", "n1", std::nullopt});

  const char* pbs[] = {"SLURM_JOB_ID=", "PBS_JOBID=99.pbs", "PBS_JOBNAME=solver", nullptr};
  const probe::SchedulerJob pbs_job = probe::scheduler_job(pbs, "carol");
  CHECK(pbs_job.id == "99.pbs");
  CHECK(pbs_job.record == tremor::JobRecord{"pbs", "solver", "carol", std::nullopt, std::nullopt});

  const char* lsf[] = {"LSB_JOBID=5", "LSB_JOBNAME=a", nullptr};
  CHECK(probe::scheduler_job(lsf, "").record == tremor::JobRecord{"lsf", "a", std::nullopt, std::nullopt, std::nullopt});
  const char* flux[] = {"FLUX_JOB_ID=f2x", nullptr};
  CHECK(probe::scheduler_job(flux, "u").id == "f2x");
  CHECK(probe::scheduler_job(flux, "u").record.scheduler == "flux");

  const char* none[] = {"HOME=/root", "SLURM_NTASKS=4", nullptr};
  const probe::SchedulerJob no_job = probe::scheduler_job(none, "root");
  CHECK(no_job.id.empty());
  CHECK(no_job.record == tremor::JobRecord{});
  CHECK(probe::scheduler_job(nullptr, "root").record == tremor::JobRecord{});
}
