// /environment: CPU lists, the per-process text form, the node/rank assembly,
// the run file and the spill (the probe's tests are in test/interpose/).
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
#include "tremor/environment_assembly.hpp"
#include "tremor/run_file.hpp"
#include "tremor/spill.hpp"

namespace {

namespace fs = std::filesystem;
using tremor::EnvironmentFact;
using tremor::is_unknown;
using tremor::test::TempDir;

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
