// Where (docs/statistics.md#where): per segment the rank that arrived last
// (exact, all ranks) is the critical one, and the others' wait for it splits
// into the part its extra work explains (imbalance, reported apart) and the
// part beyond what its work needs (interference). The interference part is
// charged to it up to the segment's primary lost time, so all charges add up
// to at most the headline; a rank or node is named when its charge stands
// out of an equal share by more than clean runs show.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "diagnosis_internal.hpp"
#include "tremor/analysis/diagnosis.hpp"

namespace tremor::analysis::diagnosis_detail {
namespace {

namespace dm = diagnosis_math;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Per primary group (index group + 1; 0 for segments of no group): the time
// outside MPI and I/O per unit of work, the median over at most
// kWorkRateCells of its cells with both positive; 0 where unknown (then
// every rank's need is 0 and the whole wait is interference).
std::vector<double> time_per_work(const RunAnalysis& analysis, const DetailView& view) {
  const std::vector<std::int32_t>& group_of = analysis.primary.segment_primary_group;
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t s = 0; s < group_of.size(); ++s) {
    const auto slot = static_cast<std::size_t>(std::max(-1, group_of[s]) + 1);
    if (slot >= members.size()) members.resize(slot + 1);
    members[slot].push_back(s);
  }
  const std::size_t rows = view.rows();
  std::vector<double> rate(members.size(), 0.0);
  std::vector<double> ratios;
  for (std::size_t g = 0; g < members.size(); ++g) {
    const std::size_t wanted = std::max<std::size_t>(1, kWorkRateCells / std::max<std::size_t>(1, rows));
    const std::size_t step = std::max<std::size_t>(1, members[g].size() / wanted);
    ratios.clear();
    for (std::size_t i = 0; i < members[g].size(); i += step) {
      const std::size_t s = members[g][i];
      for (std::size_t r = 0; r < rows; ++r) {
        const double work = view.value(Quantized::work, r, s);
        const double compute = view.busy(r, s) - view.value(Quantized::io_time, r, s);
        if (work > 0.0 && compute > 0.0 && std::isfinite(work) && std::isfinite(compute)) {
          ratios.push_back(compute / work);
        }
      }
    }
    if (ratios.empty()) continue;
    const auto middle = ratios.begin() + static_cast<std::ptrdiff_t>((ratios.size() - 1) / 2);
    std::nth_element(ratios.begin(), middle, ratios.end());
    rate[g] = *middle;
  }
  return rate;
}

// One segment's share of all segments.
double segment_share(const RunData& run) {
  const std::size_t n = run.segments.size();
  return n ? 1.0 / static_cast<double>(n) : 0.0;
}

// `value` over the median of the others (`sorted`: the finite values of all, `value` among them).
double ratio_to_others(const std::vector<double>& sorted, double value) {
  if (!std::isfinite(value)) return kNaN;
  const double reference = dm::median_excluding(sorted, value);
  return reference > 0.0 ? value / reference : kNaN;
}

// The finite values, ascending (a corrupt file's NaN must not reach std::sort).
std::vector<double> sorted_finite(const std::vector<double>& values) {
  std::vector<double> sorted;
  for (const double value : values) {
    if (std::isfinite(value)) sorted.push_back(value);
  }
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

void name_nodes(const RunData& run, const std::vector<const RankInfo*>& info, const std::vector<std::size_t>& last,
                const std::vector<double>& busy, const std::vector<double>& work, const SegmentCharges& charges,
                double total_charged, double run_time, Diagnosis& out) {
  const std::size_t world = info.size();
  std::map<std::int32_t, SlowNode> nodes;
  std::map<std::int32_t, std::array<double, 3>> sums;  // charged, busy, work
  for (std::size_t p = 0; p < world; ++p) {
    const std::int32_t id = info[p] ? info[p]->node_id : -1;
    SlowNode& node = nodes[id];
    node.node_id = id;
    if (node.hostname.empty() && info[p]) node.hostname = info[p]->hostname;
    ++node.ranks;
    node.last_segments += last[p];
    std::array<double, 3>& sum = sums[id];
    sum[0] += charges.interference_by_rank[p];
    sum[1] += busy[p];
    sum[2] += work[p];
  }
  if (nodes.size() < 2) return;
  std::vector<double> node_busy, node_work;
  for (const auto& [id, node] : nodes) {
    node_busy.push_back(sums[id][1] / static_cast<double>(node.ranks));
    node_work.push_back(sums[id][2] / static_cast<double>(node.ranks));
  }
  node_busy = sorted_finite(node_busy);
  node_work = sorted_finite(node_work);
  const double percent = run_time > 0.0 ? 100.0 / run_time : 0.0;
  const double share = segment_share(run);
  for (auto& [id, node] : nodes) {
    const double ranks = static_cast<double>(node.ranks);
    if (!dm::named_charge(sums[id][0], total_charged, ranks / static_cast<double>(world), run_time)) continue;
    node.lost_percent = percent * sums[id][0];
    node.last_share = share * static_cast<double>(node.last_segments);
    node.time_ratio = ratio_to_others(node_busy, sums[id][1] / ranks);
    node.work_ratio = ratio_to_others(node_work, sums[id][2] / ranks);
    out.slow_nodes.push_back(node);
  }
  std::stable_sort(out.slow_nodes.begin(), out.slow_nodes.end(),
                   [](const SlowNode& a, const SlowNode& b) { return a.lost_percent > b.lost_percent; });
}

// The lost time of a segment that the late arrival does not explain was
// lost inside the closing collective: the ranks arrived together and one of
// them was off its CPU while the others waited for it (a CPU hog beside a
// rank, all of whose phases are short). Charged to the ranks by how much
// longer each was off the CPU in this segment than the least of them, so
// what every rank lost alike (the job's own ranks sharing a CPU) charges no
// one; nothing is charged when no rank stands out.
void charge_inside_collective(const DetailView& view, std::size_t segment, double unexplained,
                              std::vector<double>& off_cpu, std::vector<double>& interference_by_rank,
                              const std::vector<std::int32_t>& rank_of_row) {
  if (!(unexplained > 0.0)) return;
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < off_cpu.size(); ++r) {
    const double value = view.value(Quantized::off_cpu_time, r, segment);
    off_cpu[r] = std::isfinite(value) ? std::max(0.0, value) : kNaN;
    if (std::isfinite(off_cpu[r])) least = std::min(least, off_cpu[r]);
  }
  double excess_sum = 0.0;
  for (double& value : off_cpu) {
    value = std::isfinite(value) ? value - least : 0.0;
    excess_sum += value;
  }
  if (!(excess_sum > 0.0)) return;
  for (std::size_t r = 0; r < off_cpu.size() && r < rank_of_row.size(); ++r) {
    const std::int32_t rank = rank_of_row[r];
    if (rank >= 0 && static_cast<std::size_t>(rank) < interference_by_rank.size())
      interference_by_rank[rank] += unexplained * off_cpu[r] / excess_sum;
  }
}

}  // namespace

SegmentCharges charge_segments(const RunData& run, const RunAnalysis& analysis, const DetailView& view,
                               const std::vector<std::int64_t>& row_of) {
  const std::size_t n = run.segments.size();
  const std::size_t world = row_of.size();
  SegmentCharges charges{std::vector<double>(world, 0.0), std::vector<double>(world, 0.0),
                         std::vector<std::array<float, 3>>(n)};
  const std::size_t rows = view.rows();
  const std::vector<double> rate = time_per_work(analysis, view);
  std::vector<double> busy(rows), need(rows), off_cpu(rows);
  for (std::size_t s = 0; s < n; ++s) {
    const auto slot = static_cast<std::size_t>(std::max(-1, analysis.primary.segment_primary_group[s]) + 1);
    const double segment_rate = slot < rate.size() ? rate[slot] : 0.0;
    std::size_t late = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      busy[r] = view.busy(r, s);
      const double work = view.value(Quantized::work, r, s);
      need[r] = std::isfinite(work) ? segment_rate * std::max(0.0, work) : 0.0;
      if (busy[r] > busy[late]) late = r;
    }
    // The exact late rank when it is a detail rank, else the detail rank
    // that spent the most time outside MPI (a lower bound of the wait).
    const std::int32_t late_rank = s < run.segments.late_rank.size() ? run.segments.late_rank[s] : -1;
    const bool known = late_rank >= 0 && static_cast<std::size_t>(late_rank) < world;
    if (known && row_of[late_rank] >= 0) late = static_cast<std::size_t>(row_of[late_rank]);
    if (rows > 1 && known) {
      const dm::WaitSplit split = dm::split_wait(busy, need, late);
      const double segment_lost = analysis.primary.segment_lost_s[s];
      const double lost = std::isfinite(segment_lost) ? std::max(0.0, segment_lost) : 0.0;
      const double late_charge = std::min(lost, split.interference);
      charges.interference_by_rank[late_rank] += late_charge;
      charges.imbalance_by_rank[late_rank] += split.imbalance;
      charge_inside_collective(view, s, lost - late_charge, off_cpu, charges.interference_by_rank, run.detail.ranks);
    }
    const double duration = view.value(Quantized::duration, late, s);
    const double mpi = view.value(Quantized::mpi_time, late, s);
    const double io = view.value(Quantized::io_time, late, s);
    const auto finite = [](double value) {
      return static_cast<float>(std::isfinite(value) ? std::max(0.0, value) : 0.0);
    };
    charges.critical_path[s] = {finite(duration - mpi - io), finite(mpi), std::min(finite(io), finite(duration - mpi))};
  }
  return charges;
}

void name_ranks(const RunData& run, const RunAnalysis& analysis, const SegmentCharges& charges, Diagnosis& out) {
  const auto world = static_cast<std::size_t>(std::max(0, run.meta.world_size));
  const double run_time = analysis.run_time_s;
  std::vector<std::size_t> last(world, 0);
  for (std::size_t s = 0; s < analysis.segment_count && s < run.segments.late_rank.size(); ++s) {
    const std::int32_t rank = run.segments.late_rank[s];
    if (rank >= 0 && static_cast<std::size_t>(rank) < world) ++last[rank];
  }
  // Exact totals: time outside MPI and work per rank.
  std::vector<double> busy(world, kNaN), work(world, kNaN);
  if (run.raw_totals.size() == world) {
    for (std::size_t p = 0; p < world; ++p) {
      const QuantizedValues& totals = run.raw_totals[p];
      const double outside_mpi = totals[index(Quantized::duration)] - totals[index(Quantized::mpi_time)];
      busy[p] = std::isfinite(outside_mpi) ? std::max(0.0, outside_mpi) : kNaN;
      work[p] = totals[index(Quantized::work)];
    }
  }
  const std::vector<double> busy_sorted = sorted_finite(busy), work_sorted = sorted_finite(work);
  std::vector<const RankInfo*> info(world, nullptr);
  for (const RankInfo& rank : run.ranks) {
    if (rank.rank >= 0 && static_cast<std::size_t>(rank.rank) < world) info[rank.rank] = &rank;
  }
  double total_charged = 0.0;
  for (const double charge : charges.interference_by_rank) total_charged += charge;
  const double percent = run_time > 0.0 ? 100.0 / run_time : 0.0;
  const double share = segment_share(run);
  out.named_above_percent = world ? percent * total_charged / static_cast<double>(world) + kMinNamedExcessPercent : 0.0;
  out.rank_last_share.resize(world);
  out.rank_lost_percent.resize(world);
  out.rank_time_ratio.resize(world);
  out.rank_work_ratio.resize(world);
  out.rank_imbalance_percent.resize(world);
  for (std::size_t p = 0; p < world; ++p) {
    out.rank_last_share[p] = share * static_cast<double>(last[p]);
    out.rank_lost_percent[p] = percent * charges.interference_by_rank[p];
    out.rank_imbalance_percent[p] = percent * charges.imbalance_by_rank[p];
    out.rank_time_ratio[p] = ratio_to_others(busy_sorted, busy[p]);
    out.rank_work_ratio[p] = ratio_to_others(work_sorted, work[p]);
    const std::int32_t node = info[p] ? info[p]->node_id : -1;
    const std::string host = info[p] ? info[p]->hostname : "";
    const double extra_work = out.rank_work_ratio[p] - 1.0;
    if (extra_work >= kMinImbalanceWork && out.rank_imbalance_percent[p] >= kMinImbalancePercent) {
      out.imbalanced_ranks.push_back({static_cast<std::int32_t>(p), node, host, extra_work,
                                      out.rank_imbalance_percent[p], out.rank_last_share[p]});
    }
    if (!dm::named_charge(charges.interference_by_rank[p], total_charged, 1.0 / static_cast<double>(world), run_time)) {
      continue;
    }
    out.slow_ranks.push_back({static_cast<std::int32_t>(p), node, host, out.rank_lost_percent[p],
                              out.rank_last_share[p], last[p], "slow", out.rank_time_ratio[p],
                              out.rank_work_ratio[p]});
  }
  std::stable_sort(out.slow_ranks.begin(), out.slow_ranks.end(),
                   [](const SlowRank& a, const SlowRank& b) { return a.lost_percent > b.lost_percent; });
  std::stable_sort(out.imbalanced_ranks.begin(), out.imbalanced_ranks.end(),
                   [](const ImbalancedRank& a, const ImbalancedRank& b) { return a.wait_percent > b.wait_percent; });
  name_nodes(run, info, last, busy, work, charges, total_charged, run_time, out);
}

}  // namespace tremor::analysis::diagnosis_detail
