// The choice of detail ranks (evenly spaced, rank 0 always, bounded cells)
// and the numbering of nodes from host names, shared by the finalize gather
// and crash recovery (segments/src/run_assembly.cpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tremor/run_assembly.hpp"

using tremor::assign_nodes;
using tremor::detail_ranks;
using tremor::RankInfo;

TEST_CASE("detail ranks: every rank when the world is small enough", "[run_assembly][detail]") {
  CHECK(detail_ranks(1, 256, 100) == std::vector<std::int32_t>{0});
  CHECK(detail_ranks(5, 256, 100) == std::vector<std::int32_t>{0, 1, 2, 3, 4});
  CHECK(detail_ranks(4, 4, 100) == std::vector<std::int32_t>{0, 1, 2, 3});
}

TEST_CASE("detail ranks: evenly spaced, rank 0 first, distinct and ascending", "[run_assembly][detail]") {
  CHECK(detail_ranks(10, 4, 100) == std::vector<std::int32_t>{0, 2, 5, 7});
  CHECK(detail_ranks(9, 3, 100) == std::vector<std::int32_t>{0, 3, 6});
  for (const int world : {7, 64, 1000, 100003}) {
    for (const int wanted : {2, 3, 16, 256}) {
      if (wanted > world) continue;
      INFO("world " << world << ", wanted " << wanted);
      const auto ranks = detail_ranks(world, wanted, 1000);
      REQUIRE(ranks.size() == static_cast<std::size_t>(wanted));
      CHECK(ranks.front() == 0);
      CHECK(ranks.back() < world);
      // Each gap is world / wanted rounded down or up: no stretch of the
      // world is left without a detail rank.
      const int small = world / wanted;
      for (std::size_t i = 1; i < ranks.size(); ++i) {
        const int gap = ranks[i] - ranks[i - 1];
        CHECK((gap == small || gap == small + 1));
      }
      CHECK(world - ranks.back() <= small + 1);
    }
  }
}

TEST_CASE("detail ranks: at most 2^24 rank-segment cells, at least rank 0", "[run_assembly][detail]") {
  constexpr std::size_t kCells = std::size_t{1} << 24;
  // 2^22 segments leave room for 4 ranks of 100.
  CHECK(detail_ranks(100, 256, kCells / 4) == std::vector<std::int32_t>{0, 25, 50, 75});
  CHECK(detail_ranks(100, 256, kCells / 4 + 1) == std::vector<std::int32_t>{0, 33, 66});
  // More segments than cells: rank 0 alone; no segments at all: as if one.
  CHECK(detail_ranks(100, 256, kCells * 2) == std::vector<std::int32_t>{0});
  CHECK(detail_ranks(3, 256, 0) == std::vector<std::int32_t>{0, 1, 2});
  for (const std::size_t segments : {std::size_t{1000}, kCells / 300, kCells / 7}) {
    const auto ranks = detail_ranks(4096, 256, segments);
    INFO(segments << " segments: " << ranks.size() << " ranks");
    CHECK(ranks.size() * segments <= kCells);
  }
  // A wanted count below 1 still keeps rank 0.
  CHECK(detail_ranks(8, 0, 100) == std::vector<std::int32_t>{0});
  CHECK(detail_ranks(8, -3, 100) == std::vector<std::int32_t>{0});
}

TEST_CASE("nodes from host names: ids by first rank on the node, local ranks in order", "[run_assembly][nodes]") {
  const std::vector<std::string> hosts = {"node-b", "node-a", "node-b", "node-c", "node-a", "node-b"};
  std::vector<RankInfo> ranks;
  CHECK(assign_nodes(hosts, ranks) == 3);
  REQUIRE(ranks.size() == hosts.size());
  const std::vector<std::int32_t> node_ids = {0, 1, 0, 2, 1, 0};
  const std::vector<std::int32_t> local_ranks = {0, 0, 1, 0, 1, 2};
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    INFO("rank " << r);
    CHECK(ranks[r].rank == static_cast<std::int32_t>(r));
    CHECK(ranks[r].hostname == hosts[r]);
    CHECK(ranks[r].node_id == node_ids[r]);
    CHECK(ranks[r].local_rank == local_ranks[r]);
  }
}

TEST_CASE("nodes from host names: one host, and none", "[run_assembly][nodes]") {
  std::vector<RankInfo> ranks;
  CHECK(assign_nodes({"vm", "vm", "vm"}, ranks) == 1);
  REQUIRE(ranks.size() == 3);
  CHECK(ranks[2].node_id == 0);
  CHECK(ranks[2].local_rank == 2);
  std::vector<RankInfo> none;
  CHECK(assign_nodes({}, none) == 0);
  CHECK(none.empty());
}
