#include "chrome_trace_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace tremor::analysis::chrome_trace_detail {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TraceLayout::TraceLayout(const ReportInput& input, const std::vector<std::int32_t>& ranks, double from_s, double to_s,
                         bool injected)
    : run_(input.run),
      analysis_(input.analysis),
      from_s_(from_s),
      to_s_(to_s),
      world_size_(std::max(0, input.run.meta.world_size)),
      duration_(input.run, Quantized::duration),
      mpi_(input.run, Quantized::mpi_time),
      io_(input.run, Quantized::io_time),
      work_(input.run, Quantized::work) {
  injected_tracks = injected;
  std::int32_t last_node = -1;
  for (const RankInfo& info : run_.ranks) last_node = std::max(last_node, info.node_id);
  tremor_pid = pid_of_node(last_node) + 1;
  tremor_tid = 2 * world_size_ + 1;
  for (const std::int32_t rank : run_.detail.ranks) pid_of_row.push_back(pid_of_rank(rank));
  choose_ranks(ranks);
  place_segments();
  find_critical_rows();
}

std::int64_t TraceLayout::time_ns(double seconds) const {
  return std::isfinite(seconds) && seconds > 0.0 ? std::llround(seconds * 1e9) : 0;
}

void TraceLayout::choose_ranks(const std::vector<std::int32_t>& wanted) {
  for (const std::int32_t rank : wanted) {
    if (std::find(run_.detail.ranks.begin(), run_.detail.ranks.end(), rank) == run_.detail.ranks.end()) {
      std::string known;
      for (std::size_t r = 0; r < run_.detail.ranks.size() && r < 16; ++r) {
        known += (r ? "," : "") + std::to_string(run_.detail.ranks[r]);
      }
      if (run_.detail.ranks.size() > 16) known += ",...";
      throw std::invalid_argument("rank " + std::to_string(rank) + " is no detail rank of the run (detail ranks: " +
                                  known + ")");
    }
  }
  for (std::size_t row = 0; row < run_.detail.ranks.size(); ++row) {
    const std::int32_t rank = run_.detail.ranks[row];
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), rank) == wanted.end()) continue;
    const bool known = rank >= 0 && static_cast<std::size_t>(rank) < run_.ranks.size();
    shown.push_back({row, rank, pid_of_row[row], known ? run_.ranks[rank].hostname : std::string("unknown host")});
  }
  std::stable_sort(shown.begin(), shown.end(), [](const ShownRank& a, const ShownRank& b) { return a.rank < b.rank; });
}

// Segment end times since MPI_Init as the diagnosis places its episodes
// (diagnosis.cpp: the durations summed, scaled to the run time).
void TraceLayout::place_segments() {
  const std::vector<double>& duration = run_.segments.duration_s;
  const std::size_t n = std::min(duration.size(), analysis_.segment_count);
  std::vector<double> end(n);
  double sum = 0.0;
  for (std::size_t s = 0; s < n; ++s) {
    sum += std::isfinite(duration[s]) ? std::max(0.0, duration[s]) : 0.0;
    end[s] = sum;
  }
  const double scale = sum > 0.0 && analysis_.run_time_s > 0.0 ? analysis_.run_time_s / sum : 1.0;
  for (const double t : end) end_ns_.push_back(time_ns(t * scale));
  const double from_ns = from_s_ * 1e9;
  const double to_ns = to_s_ * 1e9;
  first_segment = n;
  for (std::size_t s = 0; s < n; ++s) {
    if (static_cast<double>(end_ns(s)) >= from_ns) {
      first_segment = s;
      break;
    }
  }
  end_segment = first_segment;
  while (end_segment < n && static_cast<double>(start_ns(end_segment)) <= to_ns) ++end_segment;
}

void TraceLayout::find_critical_rows() {
  const std::size_t n = end_ns_.size();
  critical_row.assign(n, -1);
  std::map<std::int32_t, std::int64_t> row_of_rank;
  for (std::size_t row = 0; row < run_.detail.ranks.size(); ++row) {
    row_of_rank[run_.detail.ranks[row]] = static_cast<std::int64_t>(row);
  }
  const std::size_t rows = duration_.rows();
  for (std::size_t s = 0; s < n; ++s) {
    if (s < run_.segments.late_rank.size()) {
      const auto exact = row_of_rank.find(run_.segments.late_rank[s]);
      if (exact != row_of_rank.end()) {
        critical_row[s] = exact->second;
        continue;
      }
    }
    double most = -1.0;
    for (std::size_t row = 0; row < rows; ++row) {
      const double busy = std::max(0.0, duration_(row, s) - mpi_(row, s));
      if (busy > most) {
        most = busy;
        critical_row[s] = static_cast<std::int64_t>(row);
      }
    }
  }
}

double TraceLayout::excess_s(std::size_t segment) const {
  const std::vector<double>& lost = analysis_.primary.segment_lost_s;
  if (!analysis_.estimate_possible || segment >= lost.size() || !std::isfinite(lost[segment])) return 0.0;
  return std::max(0.0, lost[segment]);
}

double TraceLayout::intrinsic_s(std::size_t segment) const {
  const PrimaryEstimate& primary = analysis_.primary;
  if (segment >= primary.segment_primary_group.size()) return kNaN;
  const std::int32_t group = primary.segment_primary_group[segment];
  return group >= 0 && static_cast<std::size_t>(group) < primary.subgroup_intrinsic_s.size()
             ? primary.subgroup_intrinsic_s[static_cast<std::size_t>(group)]
             : kNaN;
}

bool TraceLayout::interfered(std::size_t segment) const {
  return segment < analysis_.segment_class.size() && analysis_.segment_class[segment] == SegmentClass::interfered;
}

double TraceLayout::feature_sum(std::size_t row, std::size_t segment, Feature a, Feature b) const {
  const DetailRanks& detail = run_.detail;
  const std::size_t cell = row * detail.segments + segment;
  if (segment >= detail.segments || cell >= detail.signature_index.size() || row >= detail.signature_offset.size()) {
    return kNaN;
  }
  const std::size_t entry = std::size_t{detail.signature_offset[row]} + detail.signature_index[cell];
  if (entry >= detail.signatures.size()) return kNaN;
  const FeatureVector& features = detail.signatures[entry];
  return static_cast<double>(features[index(a)]) + static_cast<double>(features[index(b)]);
}

CellValues TraceLayout::cell(std::size_t row, std::size_t segment) const {
  const auto value = [&](const detail::DetailCells& cells) { return cells.find(row, segment).value_or(kNaN); };
  return {value(duration_),
          value(mpi_),
          value(io_),
          value(work_),
          feature_sum(row, segment, Feature::bytes_sent, Feature::bytes_received),
          feature_sum(row, segment, Feature::io_bytes_read, Feature::io_bytes_written)};
}

bool TraceLayout::shown_rank(std::int32_t rank) const {  // shown is in rank order
  const auto at = std::lower_bound(shown.begin(), shown.end(), rank,
                                   [](const ShownRank& s, std::int32_t wanted) { return s.rank < wanted; });
  return at != shown.end() && at->rank == rank;
}

std::int64_t TraceLayout::pid_of_rank(std::int32_t rank) const {
  return pid_of_node(rank >= 0 && static_cast<std::size_t>(rank) < run_.ranks.size() ? run_.ranks[rank].node_id : 0);
}

std::int64_t TraceLayout::main_tid(std::int64_t pid) const {
  for (const ShownRank& s : shown) {
    if (s.pid == pid) return tid_of_rank(s.rank);
  }
  return pid == tremor_pid ? tremor_tid : 1;
}

std::vector<std::int32_t> TraceLayout::shown_ranks() const {
  std::vector<std::int32_t> ranks;
  for (const ShownRank& s : shown) ranks.push_back(s.rank);
  return ranks;
}

}  // namespace tremor::analysis::chrome_trace_detail
