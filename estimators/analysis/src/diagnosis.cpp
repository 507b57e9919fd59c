// The diagnosis over a run (docs/report.md#diagnosis). Per segment the rank
// that arrived last (exact, all ranks) is the critical one: where the others
// waited for it is diagnosis_where.cpp; here its own compute / MPI / I/O times
// split the segment, so MPI waiting caused by a late rank counts toward that
// rank's component, and the episodes and the speed map.
#include "tremor/analysis/diagnosis.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "diagnosis_internal.hpp"

namespace tremor::analysis {
namespace {

namespace dm = diagnosis_math;
using diagnosis_detail::DetailView;
using diagnosis_detail::SegmentCharges;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The speed map's intrinsic per group: this quantile of the time outside MPI
// (plus the segment's least MPI time) over at most kReferenceCells cells.
constexpr double kReferenceQuantile = 0.25;
constexpr std::size_t kReferenceCells = 4096;
constexpr double kMaxSpeed = 2.0;

// Run time and lost time by component, both along the critical path. A
// segment's lost time goes to the component where the model found it: its
// measured I/O stall to file I/O (the ranks that waited it out in MPI waited
// for that I/O), its closing collective's measured least wait to MPI (the
// late rank by arrival need not be the one held there), the rest to the
// components of its late rank that grew over its group's clean (delay
// probability < 0.5) median, or, in a segment of no group, in proportion to
// the late rank's own components.
void split_components(const RunAnalysis& analysis, const SegmentCharges& charges, Diagnosis& out) {
  const std::size_t n = analysis.segment_count;
  const PrimaryEstimate& primary = analysis.primary;
  std::array<double, 3> run{}, lost{};
  // Per group: the late rank's components in clean segments, else in all.
  std::map<std::int32_t, std::array<std::array<std::vector<float>, 3>, 2>> samples;
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t c = 0; c < 3; ++c) run[c] += charges.critical_path[s][c];
    const std::int32_t group = primary.segment_primary_group[s];
    if (group < 0) continue;
    const bool clean = primary.segment_delay_probability[s] < 0.5;
    for (std::size_t c = 0; c < 3; ++c) samples[group][clean ? 0 : 1][c].push_back(charges.critical_path[s][c]);
  }
  std::map<std::int32_t, std::array<double, 3>> reference;
  for (auto& [group, sample] : samples) {
    auto& source = sample[0][0].empty() ? sample[1] : sample[0];
    for (std::size_t c = 0; c < 3; ++c) {
      const auto middle = source[c].begin() + static_cast<std::ptrdiff_t>((source[c].size() - 1) / 2);
      std::nth_element(source[c].begin(), middle, source[c].end());
      reference[group][c] = *middle;
    }
  }
  constexpr std::size_t kMpi = 1, kIo = 2;
  const auto measured_part = [&](const std::vector<float>& part, std::size_t s, double charge) {
    return s < part.size() ? std::clamp(static_cast<double>(part[s]), 0.0, charge) : 0.0;
  };
  for (std::size_t s = 0; s < n; ++s) {
    double charge = primary.segment_lost_s[s];
    if (!(charge > 0.0)) continue;
    const double io_stall = measured_part(primary.segment_io_stall_s, s, charge);
    lost[kIo] += io_stall;
    charge -= io_stall;
    const double collective_wait = measured_part(primary.segment_collective_wait_s, s, charge);
    lost[kMpi] += collective_wait;
    charge -= collective_wait;
    if (!(charge > 0.0)) continue;
    const std::int32_t group = primary.segment_primary_group[s];
    std::array<double, 3> growth{};
    double total = 0.0;
    if (group >= 0) {
      for (std::size_t c = 0; c < 3; ++c) {
        growth[c] = std::max(0.0, charges.critical_path[s][c] - reference[group][c]);
        total += growth[c];
      }
    }
    if (!(total > 0.0)) {  // nothing grew, or no group: split like the segment itself
      for (std::size_t c = 0; c < 3; ++c) growth[c] = charges.critical_path[s][c];
      total = growth[0] + growth[1] + growth[2];
    }
    if (!(total > 0.0)) continue;
    for (std::size_t c = 0; c < 3; ++c) lost[c] += charge * growth[c] / total;
  }
  const double run_total = run[0] + run[1] + run[2];
  const double run_scale = run_total > 0.0 ? 100.0 / run_total : 0.0;
  const double lost_scale = analysis.run_time_s > 0.0 ? 100.0 / analysis.run_time_s : 0.0;
  out.run_components = {run_scale * run[0], run_scale * run[1], run_scale * run[2]};
  out.lost_components = {lost_scale * lost[0], lost_scale * lost[1], lost_scale * lost[2]};
}

// The intrinsic duration of a segment's primary group (0 outside usable groups).
double intrinsic_of(const RunAnalysis& analysis, std::size_t segment) {
  const std::int32_t group = analysis.primary.segment_primary_group[segment];
  return group >= 0 && static_cast<std::size_t>(group) < analysis.primary.subgroup_intrinsic_s.size()
             ? analysis.primary.subgroup_intrinsic_s[group]
             : 0.0;
}

// Segment end times since MPI_Init: the durations summed, scaled to the run time.
std::vector<double> segment_end_times(const RunAnalysis& analysis, const RunData& run) {
  const std::vector<double>& duration = run.segments.duration_s;
  std::vector<double> end(duration.size());
  double sum = 0.0;
  for (std::size_t s = 0; s < duration.size(); ++s) {
    sum += std::isfinite(duration[s]) ? std::max(0.0, duration[s]) : 0.0;
    end[s] = sum;
  }
  const double scale = sum > 0.0 && analysis.run_time_s > 0.0 ? analysis.run_time_s / sum : 1.0;
  for (double& t : end) t *= scale;
  return end;
}

void find_episodes(const RunData& run, const RunAnalysis& analysis, const std::vector<double>& end_s, Diagnosis& out) {
  // Normalised slowdown: each segment's charge over its intrinsic duration.
  std::vector<double> series;
  std::vector<std::size_t> segment_of;
  for (std::size_t s = 0; s < analysis.segment_count; ++s) {
    if (analysis.primary.segment_primary_group[s] < 0) continue;
    const double intrinsic = intrinsic_of(analysis, s);
    series.push_back(intrinsic > 0.0 ? analysis.primary.segment_lost_s[s] / intrinsic : 0.0);
    segment_of.push_back(s);
  }
  const double start_unix = run.meta.start_time_unix > 0.0 ? run.meta.start_time_unix : kNaN;
  const double percent = analysis.run_time_s > 0.0 ? 100.0 / analysis.run_time_s : 0.0;
  for (const dm::Interval& window : dm::slow_windows(series, kMinEpisodeSegments)) {
    Episode episode;
    episode.first_segment = segment_of[window.begin];
    episode.last_segment = segment_of[window.end - 1];
    episode.start_s = episode.first_segment ? end_s[episode.first_segment - 1] : 0.0;
    episode.end_s = end_s[episode.last_segment];
    episode.start_unix = start_unix + episode.start_s;
    episode.end_unix = start_unix + episode.end_s;
    double lost = 0.0;
    std::map<std::int32_t, std::size_t> late;
    std::size_t delayed = 0;
    for (std::size_t s = episode.first_segment; s <= episode.last_segment; ++s) {
      lost += analysis.primary.segment_lost_s[s];
      const double intrinsic = intrinsic_of(analysis, s);
      if (analysis.primary.segment_primary_group[s] < 0 || !(analysis.primary.segment_lost_s[s] >= kEpisodeMinSlowdown * intrinsic)) {
        continue;
      }
      ++delayed;
      if (s < run.segments.late_rank.size()) ++late[run.segments.late_rank[s]];
    }
    episode.lost_percent = percent * lost;
    if (episode.lost_percent < kMinEpisodeLostPercent) continue;
    std::vector<std::pair<std::size_t, std::int32_t>> ranked;
    for (const auto& [rank, count] : late) {
      if (10 * count >= delayed) ranked.emplace_back(count, rank);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < ranked.size() && i < kMaxEpisodeRanks; ++i) episode.ranks.push_back(ranked[i].second);
    out.episodes.push_back(std::move(episode));
  }
}

// Normalised speed per detail rank and time bin: the group's intrinsic time
// outside MPI over the rank's, each plus the segment's least MPI time (the
// communication every rank needs), averaged over the bin's usable segments.
void speed_map(const RunData& run, const RunAnalysis& analysis, const DetailView& view,
               const std::vector<double>& end_s, Diagnosis& out) {
  const std::size_t n = analysis.segment_count;
  const std::size_t rows = view.rows();
  if (n == 0 || rows == 0) return;
  auto own_time = [&](std::size_t row, std::size_t s, double least_mpi) { return view.busy(row, s) + least_mpi; };
  auto least_mpi = [&](std::size_t s) {
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < rows; ++r) least = std::min(least, view.value(Quantized::mpi_time, r, s));
    return least;
  };
  // Per primary group (indices 0..G-1): its segments, then its reference time.
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t s = 0; s < n; ++s) {
    const std::int32_t group = analysis.primary.segment_primary_group[s];
    if (group < 0) continue;
    if (static_cast<std::size_t>(group) >= members.size()) members.resize(static_cast<std::size_t>(group) + 1);
    members[static_cast<std::size_t>(group)].push_back(s);
  }
  std::vector<double> reference(members.size(), 0.0);
  std::vector<double> cells;
  for (std::size_t group = 0; group < members.size(); ++group) {
    const std::vector<std::size_t>& segments = members[group];
    if (segments.empty()) continue;
    const std::size_t wanted = std::max<std::size_t>(1, kReferenceCells / rows);
    const std::size_t step = std::max<std::size_t>(1, segments.size() / wanted);
    cells.clear();
    for (std::size_t i = 0; i < segments.size(); i += step) {
      const double least = least_mpi(segments[i]);
      for (std::size_t r = 0; r < rows; ++r) cells.push_back(own_time(r, segments[i], least));
    }
    const auto position =
        cells.begin() + static_cast<std::ptrdiff_t>(kReferenceQuantile * static_cast<double>(cells.size() - 1));
    std::nth_element(cells.begin(), position, cells.end());
    reference[group] = *position;
  }
  const std::size_t bins = std::min(kMaxSpeedBins, n);
  const double span = end_s.back() > 0.0 ? end_s.back() : 1.0;
  SpeedMap& map = out.speed;
  map.ranks = run.detail.ranks;
  map.edges_s.resize(bins + 1);
  for (std::size_t b = 0; b <= bins; ++b) map.edges_s[b] = span * static_cast<double>(b) / static_cast<double>(bins);
  std::vector<double> sum(rows * bins, 0.0);
  std::vector<std::uint32_t> count(rows * bins, 0);
  for (std::size_t s = 0; s < n; ++s) {
    const std::int32_t group = analysis.primary.segment_primary_group[s];
    if (group < 0) continue;
    const double middle = 0.5 * ((s ? end_s[s - 1] : 0.0) + end_s[s]);
    const auto bin = std::min(bins - 1, static_cast<std::size_t>(middle / span * static_cast<double>(bins)));
    const double least = least_mpi(s);
    const double group_reference = reference[static_cast<std::size_t>(group)];
    for (std::size_t r = 0; r < rows; ++r) {
      const double own = own_time(r, s, least);
      if (!(own > 0.0)) continue;
      sum[r * bins + bin] += std::min(kMaxSpeed, group_reference / own);
      ++count[r * bins + bin];
    }
  }
  map.speed.resize(rows * bins);
  for (std::size_t i = 0; i < map.speed.size(); ++i) map.speed[i] = count[i] ? sum[i] / count[i] : kNaN;
}

}  // namespace

Diagnosis diagnose_run(const RunData& run, const RunAnalysis& analysis) {
  Diagnosis out;
  const std::size_t n = analysis.segment_count;
  const DetailView view(run, n);
  if (!analysis.estimate_possible || !view.valid() || analysis.primary.segment_primary_group.size() != n ||
      analysis.primary.segment_delay_probability.size() != n || analysis.primary.segment_lost_s.size() != n) {
    return out;
  }
  out.available = true;
  const auto world = static_cast<std::size_t>(std::max(0, run.meta.world_size));
  std::vector<std::int64_t> row_of(world, -1);
  for (std::size_t r = 0; r < run.detail.ranks.size(); ++r) {
    const std::int32_t rank = run.detail.ranks[r];
    if (rank >= 0 && static_cast<std::size_t>(rank) < world) row_of[rank] = static_cast<std::int64_t>(r);
  }
  const SegmentCharges charges = diagnosis_detail::charge_segments(run, analysis, view, row_of);
  diagnosis_detail::name_ranks(run, analysis, charges, out);
  split_components(analysis, charges, out);
  const std::vector<double> end_s = segment_end_times(analysis, run);
  find_episodes(run, analysis, end_s, out);
  speed_map(run, analysis, view, end_s, out);
  return out;
}

}  // namespace tremor::analysis
