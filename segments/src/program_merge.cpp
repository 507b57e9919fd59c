#include "tremor/program_merge.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>

namespace tremor {
namespace {

struct Item {
  double rep;
  std::uint32_t rank;
  std::uint32_t local;
};

// A candidate pair; it is stale once either side has merged since it was
// made (checked on pop: lazy deletion).
struct Gap {
  double width;
  std::uint32_t left;  // position in sorted order: ties go to the leftmost pair
  std::uint32_t right;
};
bool before(const Gap& a, const Gap& b) { return a.width < b.width || (a.width == b.width && a.left < b.left); }
// Min-heap of gaps with four children per node: half the depth of a binary
// heap, and the four children of a node sit in one or two cache lines, which
// is what dominates with millions of entries.
class GapHeap {
 public:
  bool empty() const { return gaps_.empty(); }
  const Gap& top() const { return gaps_.front(); }
  void push(const Gap& gap) {
    std::size_t i = gaps_.size();
    gaps_.push_back(gap);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(gap, gaps_[parent])) break;
      gaps_[i] = gaps_[parent];
      i = parent;
    }
    gaps_[i] = gap;
  }
  void pop() {
    const Gap last = gaps_.back();
    gaps_.pop_back();
    const std::size_t n = gaps_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t least = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c)
        if (before(gaps_[c], gaps_[least])) least = c;
      if (!before(gaps_[least], last)) break;
      gaps_[i] = gaps_[least];
      i = least;
    }
    gaps_[i] = last;
  }

 private:
  std::vector<Gap> gaps_;
};

}  // namespace

ProgramBins merge_program_bins(std::span<const BinTable> per_rank) {
  constexpr std::size_t kCodes = 65536;
  constexpr std::uint32_t kUnused = 0xFFFFFFFF;
  std::vector<std::uint32_t> global_of(kCodes, kUnused);
  for (const BinTable& table : per_rank)
    for (const Bin& bin : table) global_of[bin.code] = 0;
  ProgramBins out;
  for (std::size_t code = 0; code < kCodes; ++code) {
    if (global_of[code] == kUnused) continue;
    global_of[code] = static_cast<std::uint32_t>(out.bins.size());
    out.bins.push_back(Bin{.sum = 0.0, .count = 0, .min = 0.0, .max = 0.0, .code = static_cast<std::uint16_t>(code)});
  }
  out.local_to_global.resize(per_rank.size());
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    out.local_to_global[r].reserve(per_rank[r].size());
    for (const Bin& bin : per_rank[r]) {
      const std::uint32_t global = global_of[bin.code];
      Bin& into = out.bins[global];
      into.min = into.max = bin.min;  // every table holds the code's value
      into.count += bin.count;
      out.local_to_global[r].push_back(static_cast<std::uint16_t>(global));
    }
  }
  // As code_bin makes it, so the profiler's MPI merge gives the same bits.
  for (Bin& bin : out.bins) bin.sum = bin.min * static_cast<double>(bin.count);
  return out;
}

ProgramBins merge_closest_bins(std::span<const BinTable> per_rank, std::size_t max_bins) {
  max_bins = std::clamp<std::size_t>(max_bins, 1, 65536);
  std::vector<Item> items;
  std::size_t total = 0;
  for (const BinTable& table : per_rank) total += table.size();
  items.reserve(total);
  for (std::uint32_t r = 0; r < per_rank.size(); ++r)
    for (std::uint32_t i = 0; i < per_rank[r].size(); ++i) items.push_back({per_rank[r][i].rep(), r, i});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.rep, a.rank, a.local) < std::tie(b.rep, b.rank, b.local);
  });

  const std::size_t n = items.size();
  constexpr std::uint32_t kDead = 0xFFFFFFFF;
  // Hot state of one sorted item in 16 bytes, so checking a candidate pair
  // costs two cache lines; the bins themselves are touched only on a merge.
  struct Node {
    double rep;
    std::uint32_t next;      // n = none, kDead once merged away
    std::uint32_t previous;  // n = none
  };
  std::vector<Node> nodes(n);
  std::vector<Bin> bins(n);
  for (std::size_t k = 0; k < n; ++k) {
    bins[k] = per_rank[items[k].rank][items[k].local];
    nodes[k] = {items[k].rep, static_cast<std::uint32_t>(k + 1), static_cast<std::uint32_t>(k == 0 ? n : k - 1)};
  }

  // The initial gaps are sorted once (cache-friendly); only gaps created by
  // merges go through the heap. Each step takes the smaller of both heads.
  std::vector<Gap> initial;
  initial.reserve(n);
  for (std::uint32_t k = 0; k + 1 < n; ++k) initial.push_back({nodes[k + 1].rep - nodes[k].rep, k, k + 1});
  std::sort(initial.begin(), initial.end(), before);
  std::size_t next_initial = 0;
  GapHeap created;

  std::size_t live = n;
  while (live > max_bins) {
    const bool take_initial =
        next_initial < initial.size() && (created.empty() || before(initial[next_initial], created.top()));
    if (!take_initial && created.empty()) break;
    const Gap gap = take_initial ? initial[next_initial] : created.top();
    if (take_initial) {
      ++next_initial;
    } else {
      created.pop();
    }
    Node& left = nodes[gap.left];
    // A pair is current iff still adjacent (then both are alive) and neither
    // rep moved since the gap was computed.
    if (left.next != gap.right) continue;
    Node& right = nodes[gap.right];
    if (right.rep - left.rep != gap.width) continue;
    Bin& lo = bins[gap.left];
    const Bin& hi = bins[gap.right];
    lo.sum += hi.sum;
    lo.count += hi.count;
    lo.min = std::min(lo.min, hi.min);
    lo.max = std::max(lo.max, hi.max);
    left.rep = lo.rep();
    left.next = right.next;
    right.next = kDead;
    --live;
    if (left.next < n) {
      nodes[left.next].previous = gap.left;
      created.push({nodes[left.next].rep - left.rep, gap.left, left.next});
    }
    if (left.previous < n) created.push({left.rep - nodes[left.previous].rep, left.previous, gap.left});
  }

  ProgramBins out;
  out.bins.reserve(live);
  out.local_to_global.resize(per_rank.size());
  for (std::size_t r = 0; r < per_rank.size(); ++r) out.local_to_global[r].resize(per_rank[r].size());
  // A merged bin dies into its left neighbour, so every item belongs to the
  // nearest live item at or before it.
  std::size_t global = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (nodes[k].next != kDead) {
      out.bins.push_back(bins[k]);
      global = out.bins.size() - 1;
    }
    out.local_to_global[items[k].rank][items[k].local] = static_cast<std::uint16_t>(global);
  }
  return out;
}

void coarsen_to_paper_bins(RunData& run, std::size_t max_bins) {
  // The segment-table columns each metric's values feed (medians over ranks
  // included: they go to the bin of the nearest code).
  struct Column {
    Quantized metric;
    std::vector<double> SegmentTable::*values;
    bool upper;
  };
  const std::array<Column, 6> columns{{{Quantized::duration, &SegmentTable::duration_s, false},
                                       {Quantized::duration, &SegmentTable::duration_upper_s, true},
                                       {Quantized::work, &SegmentTable::work, false},
                                       {Quantized::mpi_time, &SegmentTable::mpi_time_s, false},
                                       {Quantized::io_time, &SegmentTable::io_time_s, false},
                                       {Quantized::wait_time, &SegmentTable::late_wait_s, false}}};
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    BinTable& bins = run.global_bins[m];
    if (bins.size() <= max_bins) continue;
    std::vector<double> reps;
    reps.reserve(bins.size());
    for (const Bin& bin : bins) reps.push_back(bin.rep());
    ProgramBins merged = merge_closest_bins(std::span<const BinTable>(&bins, 1), max_bins);
    const std::vector<std::uint16_t>& map = merged.local_to_global.front();
    for (std::uint16_t& cell : run.detail.global_index[m]) cell = map[cell];
    for (const Column& column : columns) {
      if (index(column.metric) != m) continue;
      for (double& value : run.segments.*column.values) {
        const auto above = std::lower_bound(reps.begin(), reps.end(), value);
        std::size_t nearest = static_cast<std::size_t>(above - reps.begin());
        if (nearest == reps.size() || (nearest > 0 && value - reps[nearest - 1] < *above - value)) --nearest;
        const Bin& bin = merged.bins[map[nearest]];
        value = column.upper ? bin.max : bin.rep();
      }
    }
    bins = std::move(merged.bins);
  }
}

}  // namespace tremor
