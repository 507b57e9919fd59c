#include <catch2/catch.hpp>

#include <random>

#include "naive_reference.hpp"
#include "sample_run.hpp"
#include "tremor/program_merge.hpp"
#include "tremor/code_column.hpp"

using tremor::Bin;
using tremor::BinTable;

namespace {
Bin point(double v, std::uint64_t count = 1) { return Bin{v * static_cast<double>(count), count, v, v, 0}; }
}  // namespace

TEST_CASE("Paper bins (closest-pair merge) on a hand-computed case", "[merge]") {
  // Sorted reps 1 (r0), 2 (r1), 4 (r0), 10 (r1); gaps 1, 2, 6.
  // Merge 1+2 -> 1.5 (n=2); gaps 2.5, 6; merge 1.5+4 -> 7/3 (n=3); left: 7/3 | 10.
  const std::vector<BinTable> per_rank{{point(1), point(4)}, {point(2), point(10)}};
  const auto merged = tremor::merge_closest_bins(per_rank, 2);
  REQUIRE(merged.bins.size() == 2);
  CHECK(merged.bins[0].sum == 7.0);
  CHECK(merged.bins[0].count == 3);
  CHECK(merged.bins[0].min == 1.0);
  CHECK(merged.bins[0].max == 4.0);
  CHECK(merged.bins[1].rep() == 10.0);
  CHECK(merged.local_to_global[0] == std::vector<std::uint16_t>{0, 0});
  CHECK(merged.local_to_global[1] == std::vector<std::uint16_t>{0, 1});
}

TEST_CASE("Paper bins (closest-pair merge): equal gaps merge the leftmost pair, equal reps order by rank", "[merge]") {
  // Reps 1, 2, 3, 4: all gaps 1; the leftmost pair (1,2) merges first -> 1.5;
  // gaps 1.5, 1 -> (3,4) merges -> 3.5. Result 1.5 | 3.5.
  const std::vector<BinTable> per_rank{{point(3), point(4)}, {point(1), point(2)}};
  const auto merged = tremor::merge_closest_bins(per_rank, 2);
  REQUIRE(merged.bins.size() == 2);
  CHECK(merged.bins[0].rep() == 1.5);
  CHECK(merged.bins[1].rep() == 3.5);
  CHECK(merged.local_to_global[0] == std::vector<std::uint16_t>{1, 1});
  CHECK(merged.local_to_global[1] == std::vector<std::uint16_t>{0, 0});

  // Same rep on two ranks: gap 0 merges them first into one bin with both counts.
  const std::vector<BinTable> same{{point(5, 2)}, {point(5, 3)}, {point(9)}};
  const auto joined = tremor::merge_closest_bins(same, 2);
  REQUIRE(joined.bins.size() == 2);
  CHECK(joined.bins[0].count == 5);
  CHECK(joined.local_to_global[2] == std::vector<std::uint16_t>{1});
}

TEST_CASE("Paper bins (closest-pair merge) keeps small inputs and handles empty ranks", "[merge]") {
  const std::vector<BinTable> per_rank{{}, {point(1), point(2)}, {}};
  const auto merged = tremor::merge_closest_bins(per_rank);
  CHECK(merged.bins.size() == 2);
  CHECK(merged.local_to_global[0].empty());
  CHECK(merged.local_to_global[1] == std::vector<std::uint16_t>{0, 1});
  CHECK(tremor::merge_closest_bins(std::vector<BinTable>{}).bins.empty());
}

TEST_CASE("Paper bins (closest-pair merge) equals the naive greedy merge and is deterministic", "[merge]") {
  std::mt19937_64 engine(99);
  std::lognormal_distribution<double> draw(-5.0, 1.0);
  std::uniform_int_distribution<int> coarse(1, 30);
  std::vector<BinTable> per_rank(24);
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    tremor::CodeColumn column;
    for (int i = 0; i < 600; ++i) column.append(r % 4 == 0 ? coarse(engine) * 1e-3 : draw(engine));
    per_rank[r] = column.finalize().bins;
  }
  for (std::size_t max_bins : {std::size_t{512}, std::size_t{37}, std::size_t{1}}) {
    INFO("max_bins " << max_bins);
    const auto fast = tremor::merge_closest_bins(per_rank, max_bins);
    const auto naive = tremor::test::naive_program_merge(per_rank, max_bins);
    CHECK(tremor::test::same_bins(fast.bins, naive.bins));
    CHECK(fast.local_to_global == naive.local_to_global);
    const auto again = tremor::merge_closest_bins(per_rank, max_bins);
    CHECK(tremor::test::same_bins(fast.bins, again.bins));
    CHECK(fast.local_to_global == again.local_to_global);
    std::uint64_t total = 0;
    for (const auto& bin : fast.bins) total += bin.count;
    std::uint64_t expected = 0;
    for (const auto& table : per_rank)
      for (const auto& bin : table) expected += bin.count;
    CHECK(total == expected);
  }
}

TEST_CASE("Paper bins derived from a run's codes: indices and segment values follow", "[merge]") {
  tremor::RunData run = tremor::test::sample_run(3, 40);
  const tremor::RunData original = run;
  const std::size_t duration = tremor::index(tremor::Quantized::duration);
  REQUIRE(run.global_bins[duration].size() > 3);
  tremor::coarsen_to_paper_bins(run, 3);
  for (std::size_t m = 0; m < tremor::kQuantizedCount; ++m) {
    INFO("metric " << m);
    CHECK(run.global_bins[m].size() <= 3);
    std::uint64_t before = 0, after = 0;
    for (const auto& bin : original.global_bins[m]) before += bin.count;
    for (const auto& bin : run.global_bins[m]) after += bin.count;
    CHECK(after == before);
    for (std::size_t i = 0; i < run.detail.global_index[m].size(); ++i) {
      REQUIRE(run.detail.global_index[m][i] < run.global_bins[m].size());
      // The cell's old value lies inside its new bin.
      const double old_value = original.global_bins[m][original.detail.global_index[m][i]].rep();
      const auto& bin = run.global_bins[m][run.detail.global_index[m][i]];
      CHECK(old_value >= bin.min);
      CHECK(old_value <= bin.max);
    }
  }
  for (std::size_t s = 0; s < run.segments.size(); ++s) {
    bool is_rep = false;
    for (const auto& bin : run.global_bins[duration]) is_rep = is_rep || bin.rep() == run.segments.duration_s[s];
    CHECK(is_rep);
    CHECK(run.segments.duration_upper_s[s] >= run.segments.duration_s[s]);
  }
}
