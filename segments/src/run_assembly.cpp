#include "tremor/run_assembly.hpp"

#include <algorithm>
#include <map>

#include "tremor/program_merge.hpp"

namespace tremor {
namespace {

constexpr std::size_t kMaxDetailCells = std::size_t{1} << 24;

double median_of(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)));
}

}  // namespace

std::vector<std::int32_t> detail_ranks(int world, int wanted, std::size_t segments) {
  const std::size_t by_memory = std::max<std::size_t>(1, kMaxDetailCells / std::max<std::size_t>(1, segments));
  const auto count = static_cast<int>(std::min<std::size_t>(
      {static_cast<std::size_t>(world), static_cast<std::size_t>(std::max(1, wanted)), by_memory}));
  std::vector<std::int32_t> ranks;
  for (int i = 0; i < count; ++i) {
    ranks.push_back(static_cast<std::int32_t>((static_cast<long long>(i) * world) / count));
  }
  return ranks;
}

std::int32_t assign_nodes(const std::vector<std::string>& hosts, std::vector<RankInfo>& ranks) {
  std::map<std::string, std::pair<std::int32_t, std::int32_t>> nodes;  // host -> (node id, ranks so far)
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    RankInfo info;
    info.rank = static_cast<std::int32_t>(r);
    info.hostname = hosts[r];
    auto [it, inserted] = nodes.try_emplace(info.hostname, static_cast<std::int32_t>(nodes.size()), 0);
    info.node_id = it->second.first;
    info.local_rank = it->second.second++;
    ranks.push_back(std::move(info));
  }
  return static_cast<std::int32_t>(nodes.size());
}

void build_segment_table(RunData& run, const SegmentReductions& reductions,
                         std::span<const std::uint16_t> closing_call) {
  const DetailRanks& detail = run.detail;
  const std::size_t n = detail.segments;
  SegmentTable& table = run.segments;
  const BinTable& duration_bins = run.global_bins[index(Quantized::duration)];
  std::vector<double> column(detail.ranks.size());
  auto median_over_detail = [&](Quantized metric, std::size_t s) {
    const BinTable& bins = run.global_bins[index(metric)];
    for (std::size_t r = 0; r < detail.ranks.size(); ++r) {
      column[r] = bins[detail.global_index[index(metric)][r * n + s]].rep();
    }
    return median_of(column);
  };
  for (std::size_t s = 0; s < n; ++s) {
    const Bin& longest_bin = duration_bins[reductions.longest_index[s]];
    table.duration_s.push_back(longest_bin.rep());
    table.duration_upper_s.push_back(longest_bin.max);
    table.work.push_back(median_over_detail(Quantized::work, s));
    table.mpi_time_s.push_back(median_over_detail(Quantized::mpi_time, s));
    table.io_time_s.push_back(median_over_detail(Quantized::io_time, s));
    table.signature.push_back(reductions.signature_sum[s]);
    table.late_rank.push_back(reductions.least_mpi_rank[s]);
    table.late_wait_s.push_back(reductions.least_wait_s[s]);
    table.closing_call.push_back(closing_call[s]);
  }
}

RunData assemble_run(std::span<const FinalizedSegments> per_rank, std::size_t n, int detail_wanted) {
  RunData run;
  const std::size_t world = per_rank.size();
  // Program-wide bins and every rank's segments as global bin indices.
  std::array<std::vector<std::vector<std::uint16_t>>, kQuantizedCount> global_index;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    std::vector<BinTable> tables;
    for (const FinalizedSegments& local : per_rank) tables.push_back(local.bins[m]);
    ProgramBins merged = merge_program_bins(tables);
    run.global_bins[m] = std::move(merged.bins);
    global_index[m].resize(world);
    for (std::size_t r = 0; r < world; ++r) {
      for (std::size_t s = 0; s < n; ++s) {
        global_index[m][r].push_back(merged.local_to_global[r][per_rank[r].bin_index[m][s]]);
      }
    }
  }

  // The reductions the profiler does with MPI_Reduce (MAX, MINLOC, MIN, SUM).
  SegmentReductions reductions;
  reductions.longest_index.assign(n, 0);
  reductions.least_mpi_s.assign(n, 0.0);
  reductions.least_mpi_rank.assign(n, 0);
  reductions.least_wait_s.assign(n, 0.0);
  reductions.signature_sum.assign(n, 0);
  std::vector<std::uint64_t> hash_of_signature;
  for (std::size_t r = 0; r < world; ++r) {
    const FinalizedSegments& local = per_rank[r];
    const BinTable& mpi_bins = local.bins[index(Quantized::mpi_time)];
    const BinTable& wait_bins = local.bins[index(Quantized::wait_time)];
    // Each of the rank's few signatures hashed once, not once per segment.
    hash_of_signature.clear();
    for (const FeatureVector& signature : local.signatures) hash_of_signature.push_back(signature_hash(signature));
    for (std::size_t s = 0; s < n; ++s) {
      const double mpi = mpi_bins[local.bin_index[index(Quantized::mpi_time)][s]].rep();
      const double wait = wait_bins[local.bin_index[index(Quantized::wait_time)][s]].rep();
      reductions.longest_index[s] =
          std::max(reductions.longest_index[s], global_index[index(Quantized::duration)][r][s]);
      if (r == 0 || mpi < reductions.least_mpi_s[s]) {
        reductions.least_mpi_s[s] = mpi;
        reductions.least_mpi_rank[s] = static_cast<std::int32_t>(r);
      }
      reductions.least_wait_s[s] = r == 0 ? wait : std::min(reductions.least_wait_s[s], wait);
      reductions.signature_sum[s] += hash_of_signature[local.signature_index[s]];
    }
  }

  DetailRanks& detail = run.detail;
  detail.ranks = detail_ranks(static_cast<int>(world), detail_wanted, n);
  detail.segments = n;
  for (const std::int32_t rank : detail.ranks) {
    const auto r = static_cast<std::size_t>(rank);
    const FinalizedSegments& local = per_rank[r];
    for (std::size_t m = 0; m < kQuantizedCount; ++m) {
      detail.global_index[m].insert(detail.global_index[m].end(), global_index[m][r].begin(), global_index[m][r].end());
    }
    detail.signature_index.insert(detail.signature_index.end(), local.signature_index.begin(),
                                  local.signature_index.begin() + static_cast<std::ptrdiff_t>(n));
    detail.signature_offset.push_back(static_cast<std::uint32_t>(detail.signatures.size()));
    detail.signatures.insert(detail.signatures.end(), local.signatures.begin(), local.signatures.end());
  }
  build_segment_table(run, reductions, std::span(per_rank.front().closing_call).first(n));
  for (const FinalizedSegments& local : per_rank) {
    run.raw_totals.push_back(local.raw_totals);
    run.raw_feature_totals.push_back(local.raw_feature_totals);
  }
  return run;
}

}  // namespace tremor
