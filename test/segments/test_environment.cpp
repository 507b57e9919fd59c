// /environment: the parsers with good, malformed and missing input (unknown
// with a reason, never a crash), the probes on fake /sys and /proc trees, the
// per-process text form, the node/rank assembly, the run file and the spill.
#include <catch2/catch.hpp>

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sample_run.hpp"
#include "temp_dir.hpp"
#include "tremor/environment.hpp"
#include "tremor/environment_probe.hpp"
#include "tremor/run_file.hpp"
#include "tremor/spill.hpp"

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

TEST_CASE("CPU lists parse and format, malformed ones are refused", "[environment]") {
  std::vector<int> cpus;
  REQUIRE(tremor::parse_cpu_list("0-3,8,10-11\n", cpus));
  CHECK(cpus == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  REQUIRE(tremor::parse_cpu_list("5", cpus));
  CHECK(cpus == std::vector<int>{5});
  for (const char* bad : {"", "\n", "a", "1-", "-1", "3-1", "1,,2", "1-2-3", "0x1", "99999999", "1 2"}) {
    INFO(bad);
    CHECK_FALSE(tremor::parse_cpu_list(bad, cpus));
    CHECK(cpus.empty());
  }
  CHECK(tremor::format_cpu_list({3, 1, 2, 0, 8, 10, 11, 2}) == "0-3,8,10-11");
  CHECK(tremor::format_cpu_list({}).empty());
}

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

TEST_CASE("the per-process text survives escapes, truncation and garbage", "[environment]") {
  tremor::ProcessEnvironment env;
  env.node = {{"mpi_library_version", "MPICH\nline 2\\tab\r"}, {"cpu_count", "4"}};
  env.process = {{"binary_path", "/a=b/app"}};
  env.affinity = "0-3";
  env.variables = {{"OMP_NUM_THREADS", "3"}, {"UCX_TLS", std::string(3000, 'u')}};
  const std::string text = tremor::encode_environment(env);
  CHECK(std::count(text.begin(), text.end(), '\n') == 6);  // one line per fact
  const auto back = tremor::decode_environment(text);
  CHECK(back.node == env.node);
  CHECK(back.process == env.process);
  CHECK(back.affinity == "0-3");
  CHECK(back.variables == env.variables);
  CHECK_FALSE(back.truncated);

  const auto cut = tremor::decode_environment(tremor::encode_environment(env, 500));
  CHECK(cut.truncated);
  CHECK(cut.variables.size() == 1);
  CHECK(cut.node == env.node);

  constexpr char kJunk[] = "no equals\n=x\nn.=y\n\\\n\0\0";  // two NULs inside, not only the terminator
  const auto junk = tremor::decode_environment(std::string(kJunk, sizeof kJunk - 1));
  CHECK(junk.node.empty());
  CHECK(is_unknown(junk.affinity));
}

TEST_CASE("assembly: node facts from the node's ranks, differences, shared CPUs and cores", "[environment]") {
  // node a: ranks 0,1 pinned to SMT siblings 0 and 2, rank 2 unpinned; node b: rank 3.
  std::vector<tremor::RankInfo> ranks;
  ranks = {{0, "a", 0, 0}, {1, "a", 0, 1}, {2, "a", 0, 2}, {3, "b", 1, 0}};
  std::vector<tremor::ProcessEnvironment> per_rank(4);
  per_rank[1].node = {{"cpu_count", "4"}, {"core_cpus", "0,2;1,3"}, {"governor", "performance"}};  // a's collector
  per_rank[0].affinity = "0";
  per_rank[1].affinity = "2";
  per_rank[2].affinity = "0-3";
  per_rank[3].affinity = tremor::unknown_fact("sched_getaffinity: EPERM");
  for (auto& p : per_rank) p.process = {{"binary_path", "/app"}, {"binary_build_id", "aa"}};
  per_rank[2].process[1].second = "bb";
  per_rank[0].variables = {{"OMP_NUM_THREADS", "3"}, {"UCX_TLS", "sm"}};
  per_rank[1].variables = {{"OMP_NUM_THREADS", "4"}, {"UCX_TLS", "sm"}};
  per_rank[2].variables = {{"OMP_NUM_THREADS", "3"}};
  per_rank[3].variables = {{"OMP_NUM_THREADS", "8"}};
  const auto env = tremor::assemble_environment(ranks, per_rank);
  REQUIRE(env.nodes.size() == 2);
  CHECK(env.nodes[0].hostname == "a");
  CHECK(env.nodes[0].fact("cpu_count") == "4");
  CHECK(env.nodes[0].fact("binary_path") == "/app");
  CHECK(env.nodes[0].fact("binary_build_id") == "aa");
  CHECK(is_unknown(env.nodes[0].fact("turbo")));  // the collector did not send it
  CHECK(env.nodes[1].fact("cpu_count").find("not collected on this node") != std::string::npos);
  REQUIRE(env.ranks.size() == 4);
  CHECK(env.ranks[0].shares_cpu_with == "2");
  CHECK(env.ranks[0].shares_core_with == "1");  // CPU 2 is CPU 0's sibling
  CHECK(env.ranks[1].shares_core_with == "0");
  CHECK(env.ranks[2].shares_cpu_with == "0,1");
  CHECK(env.ranks[3].shares_cpu_with.empty());
  CHECK(is_unknown(env.ranks[3].affinity));
  using tremor::RankDifference;
  auto has = [&](std::int32_t rank, const std::string& name, const std::string& value) {
    return std::ranges::any_of(
        env.differences, [&](const RankDifference& d) { return d.rank == rank && d.name == name && d.value == value; });
  };
  CHECK(has(1, "OMP_NUM_THREADS", "4"));
  CHECK(has(2, "binary_build_id", "bb"));
  CHECK(has(2, "UCX_TLS", "(unset)"));
  CHECK(env.differences.size() == 3);  // node b's only rank is its reference
  CHECK(env.variables.size() == 3);    // a: 2 from rank 0, b: 1 from rank 3
}

TEST_CASE("/environment round-trips through the run file, files without it still read", "[environment]") {
  TempDir dir;
  tremor::RunData run = tremor::test::sample_run(4, 6);
  REQUIRE(run.environment.recorded());
  std::string error;
  REQUIRE(tremor::write_run(dir.path() / "with.h5", run, error));
  auto back = tremor::read_run(dir.path() / "with.h5", error);
  REQUIRE(back);
  const tremor::RunEnvironment& a = run.environment;
  const tremor::RunEnvironment& b = back->environment;
  REQUIRE(b.nodes.size() == a.nodes.size());
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    CHECK(b.nodes[n].hostname == a.nodes[n].hostname);
    CHECK(b.nodes[n].facts == a.nodes[n].facts);
  }
  REQUIRE(b.ranks.size() == a.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    CHECK(b.ranks[r].affinity == a.ranks[r].affinity);
    CHECK(b.ranks[r].shares_cpu_with == a.ranks[r].shares_cpu_with);
    CHECK(b.ranks[r].shares_core_with == a.ranks[r].shares_core_with);
  }
  REQUIRE(b.variables.size() == a.variables.size());
  CHECK(b.variables.back().value == a.variables.back().value);
  REQUIRE(b.differences.size() == a.differences.size());
  CHECK(b.differences.front().name == a.differences.front().name);

  run.environment = {};
  REQUIRE(tremor::write_run(dir.path() / "without.h5", run, error));
  back = tremor::read_run(dir.path() / "without.h5", error);
  REQUIRE(back);
  CHECK_FALSE(back->environment.recorded());
}

TEST_CASE("the spill header carries the rank's environment to recovery", "[environment]") {
  tremor::ProcessEnvironment env;
  env.node = {{"mpi_library_version", "Open MPI v4\nsecond line"}, {"governor", "performance"}};
  env.affinity = "1";
  env.variables = {{"OMP_NUM_THREADS", "3"}};
  tremor::SpillHeader header;
  header.run_id = 7;
  header.rank = 0;
  header.world_size = 1;
  header.seconds_per_tick = 1e-9;
  header.host = "h";
  header.environment = tremor::encode_environment(env);
  const std::vector<char> bytes = tremor::encode_spill_header(header);
  std::string error;
  const auto file = tremor::parse_spill(bytes, error);
  REQUIRE(file);
  const auto back = tremor::decode_environment(file->header.environment);
  CHECK(back.node == env.node);
  CHECK(back.affinity == "1");
  CHECK(back.variables == env.variables);
}
