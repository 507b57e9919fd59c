// The diagnosis (where, when, what) on plain series and on bulk-synchronous
// runs built cell by cell with planted truth: a slow rank, a rank with more
// work (imbalance), a slow node, a window, I/O delays, and a clean run that
// must name nothing.
#include <hdf5.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "temp_dir.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/diagnosis.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/config.hpp"
#include "tremor/run_file.hpp"

using namespace tremor;
using namespace tremor::analysis;
using tremor::test::longest_line;
namespace dm = tremor::analysis::diagnosis_math;

namespace {

// What one rank does in one segment before the closing collective.
struct Cell {
  double compute_s = 0.0;
  double io_s = 0.0;
  double work = 0.0;
  // Off the CPU inside the closing collective, which then ends this much
  // later for every rank (the others wait for this one to run again).
  double stalled_in_collective_s = 0.0;
};
using CellFunction = std::function<Cell(std::size_t rank, std::size_t segment)>;

// Deterministic jitter in [-1, 1].
double jitter(std::size_t a, std::size_t b) {
  std::uint64_t x = a * 0x9e3779b97f4a7c15ULL + b * 0xbf58476d1ce4e5b9ULL + 1;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 29;
  return static_cast<double>(x % 2000001) / 1e6 - 1.0;
}

// One bin per distinct value (rounded to 1 ns / 1 work unit).
struct Dictionary {
  std::map<long long, std::uint16_t> index;
  BinTable table;
  std::uint16_t add(double value) {
    const long long key = std::llround(value * 1e9);
    auto [it, inserted] = index.emplace(key, static_cast<std::uint16_t>(table.size()));
    if (inserted) table.push_back(Bin{static_cast<double>(key) * 1e-9, 1, value, value, 0});
    return it->second;
  }
};

// A bulk-synchronous run: every rank computes (and does I/O), then all meet in
// the closing collective, which ends `comm_s` after the last arrival.
RunData bsp_run(std::size_t ranks, std::size_t per_node, std::size_t segments, const CellFunction& cell,
                double comm_s = 2e-4) {
  RunData run;
  run.meta.tremor_version = "test";
  run.meta.world_size = static_cast<std::int32_t>(ranks);
  run.meta.node_count = static_cast<std::int32_t>((ranks + per_node - 1) / per_node);
  run.meta.counter_source = tremor::CounterKind::papi;
  run.meta.counter_unit = "instructions";
  run.meta.configuration = effective_configuration(Config{});
  run.meta.call_names = {"MPI_Allreduce"};
  run.meta.start_time_unix = 1.7e9;
  for (std::size_t p = 0; p < ranks; ++p) {
    const auto node = static_cast<std::int32_t>(p / per_node);
    run.ranks.push_back(
        {static_cast<std::int32_t>(p), "node" + std::to_string(node), node, static_cast<std::int32_t>(p % per_node)});
  }
  std::array<Dictionary, kQuantizedCount> bins;
  DetailRanks& detail = run.detail;
  detail.segments = segments;
  for (auto& matrix : detail.global_index) matrix.resize(ranks * segments);
  detail.signature_index.assign(ranks * segments, 0);
  for (std::size_t p = 0; p < ranks; ++p) {
    detail.ranks.push_back(static_cast<std::int32_t>(p));
    detail.signature_offset.push_back(static_cast<std::uint32_t>(p));
    FeatureVector features{};
    features[index(Feature::coll_all_to_all)] = 1;
    detail.signatures.push_back(features);
  }
  run.raw_totals.assign(ranks, QuantizedValues{});
  run.raw_feature_totals.assign(ranks, FeatureVector{});
  SegmentTable& table = run.segments;
  double total = 0.0;
  std::vector<Cell> cells(ranks);
  for (std::size_t s = 0; s < segments; ++s) {
    double last_arrival = 0.0;
    double stall = 0.0;
    for (std::size_t p = 0; p < ranks; ++p) {
      cells[p] = cell(p, s);
      last_arrival = std::max(last_arrival, cells[p].compute_s + cells[p].io_s);
      stall = std::max(stall, cells[p].stalled_in_collective_s);
    }
    const double duration = last_arrival + comm_s + stall;
    std::vector<double> mpi(ranks), work(ranks), io(ranks);
    std::size_t late = 0;
    for (std::size_t p = 0; p < ranks; ++p) {
      mpi[p] = duration - cells[p].compute_s - cells[p].io_s;
      work[p] = cells[p].work;
      io[p] = cells[p].io_s;
      if (mpi[p] < mpi[late]) late = p;
      const QuantizedValues values{duration, mpi[p], io[p], mpi[p], work[p], cells[p].stalled_in_collective_s};
      for (std::size_t m = 0; m < kQuantizedCount; ++m) {
        detail.global_index[m][p * segments + s] = bins[m].add(values[m]);
        run.raw_totals[p][m] += values[m];
      }
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[(v.size() - 1) / 2];
    };
    table.duration_s.push_back(duration);
    table.duration_upper_s.push_back(duration);
    table.work.push_back(median(work));
    table.mpi_time_s.push_back(median(mpi));
    table.io_time_s.push_back(median(io));
    table.signature.push_back(0xabc);
    table.late_rank.push_back(static_cast<std::int32_t>(late));
    table.late_wait_s.push_back(comm_s);
    table.closing_call.push_back(0);
    total += duration;
  }
  for (std::size_t m = 0; m < kQuantizedCount; ++m) run.global_bins[m] = bins[m].table;
  run.meta.run_time_s = total;
  run.meta.end_time_unix = run.meta.start_time_unix + total;
  return run;
}

constexpr double kCompute = 2e-3;
constexpr double kWork = 1e6;

Cell clean_cell(std::size_t rank, std::size_t segment) {
  return {kCompute * (1.0 + 0.004 * jitter(rank, segment)), 0.0, kWork};
}

RunAnalysis analyze(const RunData& run) {
  AnalysisParameters parameters;
  parameters.replicas = 50;
  parameters.scales = {2.0};
  return analyze_run(run, parameters);
}

double interval_iou(double a0, double a1, double b0, double b1) {
  const double overlap = std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
  return overlap / (std::max(a1, b1) - std::min(a0, b0));
}

}  // namespace

TEST_CASE("median_excluding drops one member", "[diagnosis]") {
  const std::vector<double> four = {1, 2, 3, 4};
  CHECK(dm::median_excluding(four, 1) == 3);
  CHECK(dm::median_excluding(four, 4) == 2);
  CHECK(dm::median_excluding(four, 2) == 3);
  const std::vector<double> two = {5, 7};
  CHECK(dm::median_excluding(two, 7) == 5);
  CHECK(dm::median_excluding(two, 5) == 7);
  CHECK(std::isnan(dm::median_excluding(std::vector<double>{5}, 5)));
}

TEST_CASE("split_wait: extra work is imbalance, time beyond the work's need interference", "[diagnosis]") {
  // Rank 0 has 30 % more work and needs 30 % more time: the whole wait is imbalance.
  const std::vector<double> need{1.3, 1.0, 1.0};
  const dm::WaitSplit loaded = dm::split_wait(std::vector<double>{1.3, 1.0, 1.0}, need, 0);
  CHECK(loaded.wait == Approx(0.3));
  CHECK(loaded.imbalance == Approx(0.3));
  CHECK(loaded.interference == Approx(0.0).margin(1e-12));
  // Same work, 0.4 more time: the whole wait is interference.
  const dm::WaitSplit slow = dm::split_wait(std::vector<double>{1.0, 1.4, 1.0}, std::vector<double>{1.0, 1.0, 1.0}, 1);
  CHECK(slow.interference == Approx(0.4));
  CHECK(slow.imbalance == Approx(0.0).margin(1e-12));
  // Both: 0.3 of extra work and 0.2 beyond it.
  const dm::WaitSplit both = dm::split_wait(std::vector<double>{1.5, 1.0, 1.0}, need, 0);
  CHECK(both.interference == Approx(0.2));
  CHECK(both.imbalance == Approx(0.3));
  // The interference of a rank that is not last does not move the late rank's split.
  const dm::WaitSplit hidden = dm::split_wait(std::vector<double>{1.3, 1.2, 1.0}, need, 0);
  CHECK(hidden.interference == Approx(0.0).margin(1e-12));
  CHECK(hidden.interference + hidden.imbalance <= hidden.wait + 1e-12);
  // No work counter (need 0): the wait is interference, as before imbalance was told apart.
  const dm::WaitSplit blind = dm::split_wait(std::vector<double>{1.3, 1.0}, std::vector<double>{0.0, 0.0}, 0);
  CHECK(blind.interference == Approx(0.3));
  CHECK(dm::split_wait(std::vector<double>{1.0}, std::vector<double>{1.0}, 0).wait == 0.0);
}

TEST_CASE("named_charge: above an equal share by more than the clean runs' excess", "[diagnosis]") {
  // 100 s run, 10 s charged over 2 ranks: an equal share is 5 s.
  CHECK_FALSE(dm::named_charge(5.0, 10.0, 0.5, 100.0));
  CHECK_FALSE(dm::named_charge(5.0 + 0.99 * kMinNamedExcessPercent, 10.0, 0.5, 100.0));
  CHECK(dm::named_charge(5.0 + 1.01 * kMinNamedExcessPercent, 10.0, 0.5, 100.0));
  CHECK_FALSE(dm::named_charge(0.0, 0.0, 0.5, 100.0));
  CHECK_FALSE(dm::named_charge(std::nan(""), 10.0, 0.5, 100.0));
}

TEST_CASE("slow_windows finds a dense window and ignores isolated spikes", "[diagnosis]") {
  std::vector<double> series(400, 0.02);
  for (std::size_t i = 7; i < series.size(); i += 37) series[i] = 1.0;  // sparse spikes
  SECTION("clean with spikes: nothing") { CHECK(dm::slow_windows(series, 5).empty()); }
  SECTION("a window of density 0.8") {
    for (std::size_t i = 150; i < 250; ++i) series[i] = (i % 5 == 0) ? 0.05 : 0.97;
    const auto windows = dm::slow_windows(series, 5);
    REQUIRE(windows.size() == 1);
    CHECK(windows[0].begin >= 148);
    CHECK(windows[0].begin <= 152);
    CHECK(windows[0].end >= 248);
    CHECK(windows[0].end <= 252);
    CHECK(windows[0].mean > 0.7);
  }
  SECTION("two windows") {
    for (std::size_t i = 50; i < 80; ++i) series[i] = 0.9;
    for (std::size_t i = 300; i < 340; ++i) series[i] = 0.95;
    const auto windows = dm::slow_windows(series, 5);
    REQUIRE(windows.size() == 2);
    CHECK(windows[0].begin == 50);
    CHECK(windows[1].end >= 340);  // 340 itself holds a spike
    CHECK(windows[1].end <= 341);
  }
  SECTION("segmentation covers the series in order") {
    const auto parts = dm::bernoulli_segmentation(series, 5, 256);
    REQUIRE_FALSE(parts.empty());
    CHECK(parts.front().begin == 0);
    CHECK(parts.back().end == series.size());
    for (std::size_t i = 1; i < parts.size(); ++i) CHECK(parts[i].begin == parts[i - 1].end);
  }
}

TEST_CASE("a clean run names no slow rank and no episode", "[diagnosis]") {
  const RunData run = bsp_run(4, 2, 400, clean_cell);
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  REQUIRE(d.available);
  CHECK(d.slow_ranks.empty());
  CHECK(d.slow_nodes.empty());
  CHECK(d.episodes.empty());
  CHECK(d.run_components.compute + d.run_components.mpi + d.run_components.io == Approx(100.0));
  CHECK(d.run_components.compute > 85.0);
  REQUIRE(d.rank_last_share.size() == 4);
}

// Every charge is part of the primary lost time: the ranks' and the nodes'
// charges add up to at most the headline.
void check_charges_bounded(const RunAnalysis& analysis) {
  const Diagnosis& d = analysis.diagnosis;
  double ranks = 0.0;
  for (const double charge : d.rank_lost_percent) ranks += charge;
  CHECK(ranks <= analysis.primary.lost_percent + 1e-9);
  double nodes = 0.0;
  for (const SlowNode& node : d.slow_nodes) nodes += node.lost_percent;
  CHECK(nodes <= analysis.primary.lost_percent + 1e-9);
}

TEST_CASE("a rank delayed in every fourth segment is named first, with its lost share", "[diagnosis]") {
  const RunData run = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (rank == 3 && segment % 4 == 1) cell.compute_s += 1.0e-3;
    return cell;
  });
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  REQUIRE(d.available);
  REQUIRE(d.slow_ranks.size() == 1);
  CHECK(d.slow_ranks[0].rank == 3);
  CHECK(d.slow_ranks[0].kind == "slow");
  CHECK(d.slow_ranks[0].last_share > 0.2);
  // Truth: the others waited 1 ms in a quarter of the segments.
  const double truth = 100.0 * 100 * 1.0e-3 / run.meta.run_time_s;
  CHECK(std::abs(d.slow_ranks[0].lost_percent - truth) < 1.0);
  CHECK(d.imbalanced_ranks.empty());
  check_charges_bounded(analysis);
  // Node 1 (ranks 2, 3) is the slow node.
  REQUIRE(d.slow_nodes.size() == 1);
  CHECK(d.slow_nodes[0].node_id == 1);
}

TEST_CASE("a rank slow throughout, which the headline does not see, is charged no more than the headline",
          "[diagnosis]") {
  const RunData run = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (rank == 3) cell.compute_s *= 1.10;
    return cell;
  });
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  // No segment is slower than its group: the primary estimate sees nothing,
  // and no rank may be charged what the run did not lose.
  CHECK(analysis.primary.lost_percent < 1.0);
  check_charges_bounded(analysis);
  CHECK(d.slow_ranks.empty());
  CHECK(d.imbalanced_ranks.empty());  // the same work: no imbalance either
  CHECK(d.rank_time_ratio[3] == Approx(1.10).epsilon(0.01));
  CHECK(d.episodes.empty());
}

// A CPU hog beside the ranks of node 1: they finish their work in time but
// lose the CPU inside every fourth collective, which the others wait out. The
// late arrival explains none of it; the off-CPU time inside names node 1.
TEST_CASE("ranks stalled inside the collective are charged by their off-CPU time, and their node named",
          "[diagnosis]") {
  const auto stalled_on = [](std::size_t on_node) {
    return [on_node](std::size_t rank, std::size_t segment) {
      Cell cell = clean_cell(rank, segment);
      if (segment % 4 == 1 && rank / 2 == on_node) cell.stalled_in_collective_s = 1.2e-3 * (1.0 + 0.2 * jitter(segment, 7));
      return cell;
    };
  };
  const RunData run = bsp_run(4, 2, 400, stalled_on(1));
  const RunAnalysis analysis = analyze(run);
  REQUIRE(analysis.interference_percent > 5.0);
  const Diagnosis& diagnosis = analysis.diagnosis;
  REQUIRE_FALSE(diagnosis.slow_nodes.empty());
  CHECK(diagnosis.slow_nodes.front().hostname == "node1");
  REQUIRE(diagnosis.rank_lost_percent.size() == 4);
  CHECK(std::min(diagnosis.rank_lost_percent[2], diagnosis.rank_lost_percent[3]) >
        4.0 * std::max(diagnosis.rank_lost_percent[0], diagnosis.rank_lost_percent[1]));
  for (const auto& slow : diagnosis.slow_ranks) CHECK(slow.rank >= 2);
  double charged = 0.0;
  for (const double lost : diagnosis.rank_lost_percent) charged += lost;
  CHECK(charged <= analysis.interference_percent + 1e-9);
  CHECK(charged > 0.8 * analysis.interference_percent);

  // Every rank stalled alike: the job lost the time, no rank stands out.
  const RunData alike = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (segment % 4 == 1) cell.stalled_in_collective_s = 1.2e-3 * (1.0 + 0.2 * jitter(segment, 7));
    return cell;
  });
  const RunAnalysis alike_analysis = analyze(alike);
  REQUIRE(alike_analysis.interference_percent > 5.0);
  CHECK(alike_analysis.diagnosis.slow_ranks.empty());
  CHECK(alike_analysis.diagnosis.slow_nodes.empty());
}

TEST_CASE("a rank with 10 % more work is imbalance, never lost time", "[diagnosis]") {
  const RunData run = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (rank == 2) {
      cell.compute_s *= 1.10;
      cell.work *= 1.10;
    }
    return cell;
  });
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  CHECK(d.slow_ranks.empty());
  CHECK(d.slow_nodes.empty());
  CHECK(d.rank_lost_percent[2] < 0.5);
  REQUIRE(d.imbalanced_ranks.size() == 1);
  CHECK(d.imbalanced_ranks[0].rank == 2);
  CHECK(d.imbalanced_ranks[0].extra_work == Approx(0.10).epsilon(0.01));
  // The others waited 10 % of the compute in every segment for its extra work.
  const double truth = 100.0 * 400 * 0.10 * kCompute / run.meta.run_time_s;
  CHECK(d.imbalanced_ranks[0].wait_percent == Approx(truth).epsilon(0.1));
  check_charges_bounded(analysis);
}

TEST_CASE("beside a rank with more work, delays planted on another rank name that rank", "[diagnosis]") {
  // Rank 0 has 30 % more work in every segment, so it is last wherever
  // nothing is planted; rank 1 is delayed 2 ms in every fourth segment.
  const RunData run = bsp_run(2, 1, 500, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (rank == 0) {
      cell.compute_s *= 1.30;
      cell.work *= 1.30;
    }
    if (rank == 1 && segment % 4 == 2) cell.compute_s += 2.0e-3;
    return cell;
  });
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  REQUIRE(d.slow_ranks.size() == 1);
  CHECK(d.slow_ranks[0].rank == 1);
  REQUIRE(d.slow_nodes.size() == 1);
  CHECK(d.slow_nodes[0].node_id == 1);
  REQUIRE(d.imbalanced_ranks.size() == 1);
  CHECK(d.imbalanced_ranks[0].rank == 0);
  check_charges_bounded(analysis);
}

TEST_CASE("a slow window on every rank is one episode with its time and ranks", "[diagnosis]") {
  const RunData run = bsp_run(2, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (segment >= 150 && segment < 250 && (segment + rank) % 2 == 0) cell.compute_s += 0.6e-3;
    return cell;
  });
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  REQUIRE(d.episodes.size() == 1);
  const Episode& episode = d.episodes[0];
  double before = 0.0, during = 0.0;
  for (std::size_t s = 0; s < 250; ++s) (s < 150 ? before : during) += run.segments.duration_s[s];
  const double scale = analysis.run_time_s / run.meta.run_time_s;
  CHECK(interval_iou(episode.start_s, episode.end_s, before * scale, (before + during) * scale) >= 0.9);
  CHECK(episode.start_unix == Approx(1.7e9 + episode.start_s));
  CHECK(episode.lost_percent > 5.0);
  CHECK(episode.ranks.size() == 2);
  // The delay was compute on the late rank: the lost time is compute, not MPI.
  CHECK(d.lost_components.compute > 0.8 * analysis.primary.lost_percent);
  CHECK(d.lost_components.compute + d.lost_components.mpi + d.lost_components.io ==
        Approx(analysis.primary.lost_percent).epsilon(0.05));
}

TEST_CASE("I/O delays on one rank put the lost time in file I/O", "[diagnosis]") {
  const RunData run = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    cell.io_s = 1e-4;
    if (rank == 1 && segment % 20 == 3) cell.io_s += 4e-3;
    return cell;
  });
  const RunAnalysis analysis = analyze(run);
  const Diagnosis& d = analysis.diagnosis;
  REQUIRE(analysis.primary.lost_percent > 5.0);
  CHECK(d.lost_components.io >= 0.8 * (d.lost_components.compute + d.lost_components.mpi + d.lost_components.io));
  REQUIRE_FALSE(d.slow_ranks.empty());
  CHECK(d.slow_ranks[0].rank == 1);
  CHECK(d.episodes.empty());  // every twentieth segment is no window
}

TEST_CASE("the speed map shows the slow rank's row below the others", "[diagnosis]") {
  const RunData run = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (rank == 3) cell.compute_s *= 1.25;
    return cell;
  });
  const SpeedMap& map = analyze(run).diagnosis.speed;
  REQUIRE(map.ranks.size() == 4);
  const std::size_t bins = map.edges_s.size() - 1;
  REQUIRE(map.speed.size() == 4 * bins);
  auto row_mean = [&](std::size_t row) {
    double sum = 0.0;
    for (std::size_t b = 0; b < bins; ++b) sum += map.speed[row * bins + b];
    return sum / static_cast<double>(bins);
  };
  CHECK(row_mean(0) > 0.97);
  CHECK(row_mean(3) < 0.85);
}

TEST_CASE("no detail ranks: no diagnosis, and no failure", "[diagnosis]") {
  RunData run = bsp_run(2, 2, 100, clean_cell);
  run.detail = DetailRanks{};
  const RunAnalysis analysis = analyze(run);
  CHECK(analysis.estimate_possible);
  CHECK_FALSE(analysis.diagnosis.available);
}

namespace {

std::vector<double> read_doubles(hid_t file, const char* path) {
  std::vector<double> values;
  const hid_t dataset = H5Dopen2(file, path, H5P_DEFAULT);
  if (dataset < 0) return values;
  const hid_t space = H5Dget_space(dataset);
  values.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space);
  H5Dclose(dataset);
  return values;
}

}  // namespace

TEST_CASE("the text, JSON and /analysis forms carry the diagnosis", "[diagnosis][report]") {
  // Rank 3 is delayed in every fifth segment; every rank is slowed between segments 200 and 280.
  const RunData run = bsp_run(4, 2, 400, [](std::size_t rank, std::size_t segment) {
    Cell cell = clean_cell(rank, segment);
    if (rank == 3 && segment % 5 == 0) cell.compute_s += 1.0e-3;
    if (segment >= 200 && segment < 280 && (segment + rank) % 4 == 0) cell.compute_s += 1.5e-3;
    return cell;
  });
  tremor::test::TempDir dir;
  const auto h5 = dir.path() / "run.h5";
  const auto json_path = dir.path() / "run.json";
  std::string error;
  REQUIRE(write_run(h5, run, error));
  std::ofstream(json_path).close();
  Config config;
  config.report = "text";
  config.bootstrap_replicas = 50;
  std::FILE* text_out = std::tmpfile();
  REQUIRE(text_out);
  report_run(run, config, h5, json_path, text_out);
  std::rewind(text_out);
  std::string text;
  for (int ch; (ch = std::fgetc(text_out)) != EOF;) text += static_cast<char>(ch);
  std::fclose(text_out);

  CHECK(longest_line(text) <= 80);
  // The words are the text report's (report_text.cpp); here only that each part is there.
  const std::size_t where = text.find("Where:");
  REQUIRE(where != std::string::npos);
  CHECK(text.find("rank 3", where) != std::string::npos);
  CHECK_THAT(text, Catch::Contains("When:"));
  CHECK_THAT(text, Catch::Contains("(22:13:2"));  // wall clock: the run started at 1.7e9 s, 22:13:20 UTC
  CHECK_THAT(text, Catch::Contains("What:"));

  std::ifstream in(json_path);
  const nlohmann::json json = nlohmann::json::parse(in);
  const auto& diagnosis = json["diagnosis"];
  REQUIRE(diagnosis.is_object());
  REQUIRE(diagnosis["slow_ranks"].size() >= 1);
  const auto& first = diagnosis["slow_ranks"][0];
  CHECK(first["rank"] == 3);
  CHECK(first["node"] == 1);
  CHECK(first["hostname"] == "node1");
  CHECK(first["kind"] == "slow");
  for (const char* key : {"lost_percent", "last_share"}) CHECK(first[key].is_number());
  REQUIRE(diagnosis["episodes"].size() == 1);
  const auto& episode = diagnosis["episodes"][0];
  for (const char* key : {"start_s", "end_s", "lost_percent"}) CHECK(episode[key].is_number());
  CHECK(episode["ranks"].is_array());
  CHECK(episode["start_utc"].get<std::string>().rfind("2023-11-14T22:", 0) == 0);
  for (const char* split : {"run", "lost"}) {
    for (const char* component : {"compute", "mpi", "io"}) CHECK(diagnosis["components"][split][component].is_number());
  }
  CHECK(diagnosis["slow_nodes"].is_array());
  CHECK(diagnosis["imbalanced_ranks"].is_array());
  CHECK(diagnosis["named_above_percent"].is_number());

  const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(read_doubles(file, "/analysis/diagnosis/slow_ranks/rank") == std::vector<double>(1, 3.0));
  CHECK(read_doubles(file, "/analysis/diagnosis/ranks/last_share").size() == 4);
  const std::vector<double> start = read_doubles(file, "/analysis/diagnosis/episodes/start_s");
  REQUIRE(start.size() == 1);
  CHECK(start[0] == Approx(episode["start_s"].get<double>()));
  CHECK(read_doubles(file, "/analysis/diagnosis/components/run_percent").size() == 3);
  const std::vector<double> edges = read_doubles(file, "/analysis/diagnosis/speed/edges_s");
  REQUIRE(edges.size() >= 2);
  CHECK(read_doubles(file, "/analysis/diagnosis/speed/speed").size() == 4 * (edges.size() - 1));
  H5Fclose(file);
}

TEST_CASE("bad values in the run file never break the diagnosis", "[diagnosis]") {
  RunData run = bsp_run(4, 2, 200, clean_cell);
  run.raw_totals[1][index(Quantized::duration)] = std::numeric_limits<double>::quiet_NaN();
  run.raw_totals[2][index(Quantized::work)] = std::numeric_limits<double>::infinity();
  run.segments.late_rank[5] = 999;
  run.segments.late_rank[6] = -3;
  run.global_bins[index(Quantized::mpi_time)][0].sum = std::numeric_limits<double>::quiet_NaN();
  run.ranks[3].rank = 77;
  const RunAnalysis analysis = analyze(run);
  REQUIRE(analysis.diagnosis.available);
  CHECK(std::isnan(analysis.diagnosis.rank_time_ratio[1]));
  CHECK(std::isnan(analysis.diagnosis.rank_work_ratio[2]));
  const ComponentShares& run_split = analysis.diagnosis.run_components;
  CHECK(std::isfinite(run_split.compute + run_split.mpi + run_split.io));
}
