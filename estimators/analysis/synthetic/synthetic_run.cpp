#include "synthetic_run.hpp"

#include <algorithm>
#include <cmath>

#include "tremor/config.hpp"

namespace tremor::test {
namespace {

// 512 evenly spaced bins over [lo, hi]; index of the nearest representative.
struct UniformBins {
  double lo = 0.0, step = 1.0;
  BinTable table;
  UniformBins(double low, double high) : lo(low), step((high - low) / 511.0) {
    if (!(step > 0.0)) step = 1.0;
    for (int i = 0; i < 512; ++i) {
      const double rep = lo + step * i;
      table.push_back(Bin{rep, 1, rep, rep, 0});
    }
  }
  std::uint16_t index(double value) const {
    const double position = std::round((value - lo) / step);
    return static_cast<std::uint16_t>(std::clamp(position, 0.0, 511.0));
  }
};

}  // namespace

std::vector<std::size_t> synthetic_group_of(const SyntheticSpec& spec) {
  std::vector<std::size_t> left;
  std::size_t total = 0;
  for (const SyntheticGroup& group : spec.groups) {
    left.push_back(group.segments);
    total += group.segments;
  }
  std::vector<std::size_t> group_of;
  group_of.reserve(total);
  while (group_of.size() < total) {
    for (std::size_t g = 0; g < left.size(); ++g) {
      if (left[g] == 0) continue;
      --left[g];
      group_of.push_back(g);
    }
  }
  return group_of;
}

RunData synthetic_run(const SyntheticSpec& spec) {
  RunData run;
  const std::vector<std::size_t> group_of = synthetic_group_of(spec);
  const std::size_t n = group_of.size();
  run.meta.tremor_version = "test";
  run.meta.world_size = spec.world_size;
  run.meta.node_count = (spec.world_size + spec.ranks_per_node - 1) / spec.ranks_per_node;
  run.meta.counter_source = spec.counter_source;
  run.meta.counter_unit = "instructions";
  run.meta.mpi_flavour = "mpich";
  run.meta.configuration = effective_configuration(Config{});
  run.meta.call_names = {"MPI_Barrier", "MPI_Allreduce"};
  for (std::int32_t r = 0; r < spec.world_size; ++r) {
    run.ranks.push_back(
        {r, "node" + std::to_string(r / spec.ranks_per_node), r / spec.ranks_per_node, r % spec.ranks_per_node});
  }
  SegmentTable& table = run.segments;
  static const std::vector<double> kPattern = {-2e-3, -1e-3, 0.0, 1e-3, 2e-3};
  const std::vector<double>& pattern = spec.relative_pattern.empty() ? kPattern : spec.relative_pattern;
  std::vector<std::size_t> seen(spec.groups.size(), 0);
  double total = spec.overhead_s;
  for (std::size_t s = 0; s < n; ++s) {
    const SyntheticGroup& group = spec.groups[group_of[s]];
    const double duration = group.base_duration_s * (1.0 + pattern[seen[group_of[s]]++ % pattern.size()]);
    table.duration_s.push_back(duration);
    table.work.push_back(group.work);
    table.signature.push_back(spec.unique_exact_signatures ? 1000 + s : 0xabc0 + group_of[s]);
    table.late_rank.push_back(static_cast<std::int32_t>(s % static_cast<std::size_t>(spec.world_size)));
    table.late_wait_s.push_back(1e-6);
    table.mpi_time_s.push_back(1e-5);
    table.io_time_s.push_back(0.0);
    table.closing_call.push_back(0);
  }
  for (const PlantedDelay& delay : spec.delays) {
    table.duration_s.at(delay.segment) += delay.extra_s;
    table.late_rank.at(delay.segment) = delay.late_rank;
  }
  table.duration_upper_s = table.duration_s;
  for (const double duration : table.duration_s) total += duration;
  run.meta.run_time_s = total;
  run.meta.end_time_unix = 1.7e9 + total;
  run.meta.start_time_unix = 1.7e9;

  // Detail ranks: rank r arrives after duration·(1 − 0.01·r) and waits the rest.
  DetailRanks& detail = run.detail;
  detail.segments = n;
  const double longest = n ? *std::max_element(table.duration_s.begin(), table.duration_s.end()) : 1.0;
  const UniformBins duration_bins(0.0, longest);
  const UniformBins wait_bins(0.0, longest * 0.01 * static_cast<double>(spec.detail_ranks) + 1e-9);
  const UniformBins work_bins(0.0, 2.0 * (n ? *std::max_element(table.work.begin(), table.work.end()) : 1.0));
  const UniformBins small_bins(0.0, 1e-3);
  run.global_bins[index(Quantized::duration)] = duration_bins.table;
  run.global_bins[index(Quantized::wait_time)] = wait_bins.table;
  run.global_bins[index(Quantized::work)] = work_bins.table;
  run.global_bins[index(Quantized::mpi_time)] = small_bins.table;
  run.global_bins[index(Quantized::io_time)] = small_bins.table;
  run.global_bins[index(Quantized::off_cpu_time)] = small_bins.table;
  const std::size_t groups = spec.groups.size();
  for (std::size_t r = 0; r < spec.detail_ranks; ++r) {
    detail.ranks.push_back(static_cast<std::int32_t>(r));
    detail.signature_offset.push_back(static_cast<std::uint32_t>(r * groups));
    for (std::size_t g = 0; g < groups; ++g) {
      FeatureVector features{};
      features[index(Feature::coll_all_to_all)] = 1;
      features[index(Feature::bytes_sent)] = 8 * (g + 1) + (spec.unique_exact_signatures ? r : 0);
      detail.signatures.push_back(features);
    }
  }
  for (auto& matrix : detail.global_index) matrix.resize(spec.detail_ranks * n);
  detail.signature_index.resize(spec.detail_ranks * n);
  for (std::size_t r = 0; r < spec.detail_ranks; ++r) {
    for (std::size_t s = 0; s < n; ++s) {
      const std::size_t cell = r * n + s;
      const double wait = table.duration_s[s] * 0.01 * static_cast<double>(r);
      detail.global_index[index(Quantized::duration)][cell] = duration_bins.index(table.duration_s[s]);
      detail.global_index[index(Quantized::wait_time)][cell] = wait_bins.index(wait);
      detail.global_index[index(Quantized::work)][cell] = work_bins.index(table.work[s]);
      detail.signature_index[cell] = static_cast<std::uint32_t>(group_of[s]);
    }
  }
  run.raw_totals.resize(static_cast<std::size_t>(spec.world_size));
  run.raw_feature_totals.resize(static_cast<std::size_t>(spec.world_size));
  return run;
}

}  // namespace tremor::test
