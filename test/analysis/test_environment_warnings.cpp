// The environment warnings of the report: each condition gives its stable
// code, known-good conditions give none, unknown facts give at most one note
// and no false warning, and a run without /environment gives nothing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "synthetic_run.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/environment.hpp"
#include "tremor/environment_assembly.hpp"

namespace {

using tremor::ProcessEnvironment;
using tremor::RunData;
using tremor::analysis::AnalysisParameters;
using tremor::analysis::analyze_run;

// 4 ranks, 2 per node; every node a 4-CPU, 2-core (SMT) machine in a state
// that deserves no warning, each rank pinned to a core of its own.
std::vector<ProcessEnvironment> quiet_nodes() {
  std::vector<ProcessEnvironment> per_rank(4);
  for (std::size_t r = 0; r < 4; ++r) {
    if (r % 2 == 0)
      per_rank[r].node = {
          {"cpu_count", "4"}, {"core_cpus", "0,2;1,3"}, {"smt", "on"}, {"governor", "performance"}, {"turbo", "off"}};
    per_rank[r].affinity = r % 2 == 0 ? "0" : "1";
  }
  return per_rank;
}

std::vector<std::string> environment_codes(const RunData& run) {
  AnalysisParameters parameters;
  parameters.replicas = 50;
  std::vector<std::string> codes;
  for (const auto& warning : analyze_run(run, parameters).warnings)
    if (warning.code.starts_with("environment_")) codes.push_back(warning.code);
  std::ranges::sort(codes);
  return codes;
}

RunData run_with(const std::vector<ProcessEnvironment>& per_rank) {
  tremor::test::SyntheticSpec spec;
  spec.world_size = 4;
  spec.ranks_per_node = 2;
  RunData run = tremor::test::synthetic_run(spec);
  run.environment = tremor::assemble_environment(run.ranks, per_rank);
  return run;
}

void set_fact(ProcessEnvironment& collector, const std::string& name, const std::string& value) {
  for (auto& [key, old] : collector.node)
    if (key == name) old = value;
}

}  // namespace

TEST_CASE("environment warnings: each condition its code, none when all is well", "[analysis][environment]") {
  using Codes = std::vector<std::string>;
  CHECK(environment_codes(run_with(quiet_nodes())).empty());

  SECTION("no /environment (older files): nothing") {
    tremor::test::SyntheticSpec spec;
    CHECK(environment_codes(tremor::test::synthetic_run(spec)).empty());
  }
  SECTION("governor") {
    auto per_rank = quiet_nodes();
    set_fact(per_rank[2], "governor", "performance,powersave");
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_governor"});
    set_fact(per_rank[2], "governor", "schedutil");
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_governor"});
  }
  SECTION("turbo") {
    auto per_rank = quiet_nodes();
    set_fact(per_rank[0], "turbo", "on");
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_turbo"});
  }
  SECTION("unpinned: affinity is every CPU of the node") {
    auto per_rank = quiet_nodes();
    per_rank[1].affinity = "0-3";
    // It also overlaps rank 0's CPU: shared, but the node has CPUs enough.
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_unpinned"});
  }
  SECTION("oversubscribed: two ranks pinned to one CPU") {
    auto per_rank = quiet_nodes();
    per_rank[1].affinity = "0";
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_oversubscribed"});
  }
  SECTION("oversubscribed: more ranks than the node's CPUs (one CPU: nothing to pin to)") {
    auto per_rank = quiet_nodes();
    set_fact(per_rank[0], "cpu_count", "1");
    set_fact(per_rank[0], "core_cpus", "0");
    per_rank[0].affinity = per_rank[1].affinity = "0";
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_oversubscribed"});
  }
  SECTION("SMT siblings shared by two ranks") {
    auto per_rank = quiet_nodes();
    per_rank[1].affinity = "2";  // CPU 0's sibling
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_smt_shared"});
  }
  SECTION("unknown facts: one note, no false warning") {
    auto per_rank = quiet_nodes();
    for (std::size_t r : {0, 2}) {
      set_fact(per_rank[r], "governor", tremor::unknown_fact("/sys/x/scaling_governor: No such file or directory"));
      set_fact(per_rank[r], "turbo", tremor::unknown_fact("no_turbo: No such file or directory"));
      set_fact(per_rank[r], "cpu_count", tremor::unknown_fact("online: Permission denied"));
    }
    per_rank[3].affinity = tremor::unknown_fact("sched_getaffinity: Invalid argument");
    const RunData run = run_with(per_rank);
    CHECK(environment_codes(run) == Codes{"environment_unknown"});
    AnalysisParameters parameters;
    parameters.replicas = 50;
    for (const auto& warning : analyze_run(run, parameters).warnings)
      if (warning.code == "environment_unknown")
        for (const char* fact : {"affinity", "cpu_count", "governor", "turbo", "Invalid argument"})
          CHECK(warning.message.find(fact) != std::string::npos);
  }
  SECTION("a collector that sent nothing: unknown, not a warning") {
    auto per_rank = quiet_nodes();
    per_rank[2].node.clear();
    CHECK(environment_codes(run_with(per_rank)) == Codes{"environment_unknown"});
  }
}
