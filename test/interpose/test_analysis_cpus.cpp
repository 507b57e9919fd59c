// The CPUs rank 0's end-of-run analysis may borrow (interpose/analysis_cpus.hpp):
// those of its node's ranks only, none when any of them is unknown, and a
// widened mask that is restored after. Fails for a union over every node, a
// guess past an unknown affinity, or a mask left widened.
#include <catch2/catch.hpp>

#include <sched.h>

#include <thread>

#include "analysis_cpus.hpp"

using tremor::RankEnvironment;
using tremor::RunEnvironment;
using tremor::interpose::node_rank_cpus;
using tremor::interpose::WidenedAffinity;

namespace {

RunEnvironment ranks_on(std::initializer_list<std::pair<const char*, const char*>> host_and_cpus) {
  RunEnvironment environment;
  std::int32_t rank = 0;
  for (const auto& [host, cpus] : host_and_cpus) environment.ranks.push_back({rank++, host, cpus, "", ""});
  return environment;
}

int cpus_in_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
  return CPU_COUNT(&mask);
}

}  // namespace

TEST_CASE("the analysis borrows the CPUs of its own node's ranks, and only when every one is known", "[interpose]") {
  const RunEnvironment two_nodes = ranks_on({{"a", "0"}, {"a", "1,4-5"}, {"b", "2-3"}, {"a", "0"}});
  CHECK(node_rank_cpus(two_nodes, 0) == std::vector<int>{0, 1, 4, 5, 0});
  CHECK(node_rank_cpus(two_nodes, 2) == std::vector<int>{2, 3});
  CHECK(node_rank_cpus(ranks_on({{"a", "0"}, {"a", "unknown: sched_getaffinity failed"}}), 0).empty());
  CHECK(node_rank_cpus(two_nodes, 7).empty());
  CHECK(node_rank_cpus(RunEnvironment{}, 0).empty());
}

TEST_CASE("a widened mask reaches the threads started under it and is restored after", "[interpose]") {
  const int online = static_cast<int>(std::thread::hardware_concurrency());
  REQUIRE(online >= 2);  // CI machines have 2 CPUs or more
  cpu_set_t narrow;
  CPU_ZERO(&narrow);
  CPU_SET(0, &narrow);
  cpu_set_t original;
  REQUIRE(sched_getaffinity(0, sizeof original, &original) == 0);
  REQUIRE(sched_setaffinity(0, sizeof narrow, &narrow) == 0);
  {
    const WidenedAffinity widened({0, 1});
    CHECK(widened.widened());
    CHECK(cpus_in_mask() == 2);
    int in_thread = 0;
    std::thread([&] { in_thread = cpus_in_mask(); }).join();
    CHECK(in_thread == 2);
  }
  CHECK(cpus_in_mask() == 1);
  {
    const WidenedAffinity same({0});
    CHECK_FALSE(same.widened());
  }
  sched_setaffinity(0, sizeof original, &original);
}
