// A deliberately simple O(N^2) version of the paper bins' closest-pair merge
// (docs/statistics.md#quantization), written straight from the text, to
// compare merge_closest_bins against.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor::test {

struct NaiveProgramMerge {
  BinTable bins;
  std::vector<std::vector<std::uint16_t>> local_to_global;
};

inline NaiveProgramMerge naive_program_merge(const std::vector<BinTable>& per_rank, std::size_t max_bins) {
  struct Item {
    Bin bin;
    std::size_t rank, local;
    std::vector<std::pair<std::size_t, std::size_t>> members;
  };
  std::vector<Item> items;
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    for (std::size_t i = 0; i < per_rank[r].size(); ++i) items.push_back({per_rank[r][i], r, i, {{r, i}}});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::make_tuple(a.bin.rep(), a.rank, a.local) < std::make_tuple(b.bin.rep(), b.rank, b.local);
  });
  while (items.size() > max_bins) {
    std::size_t best = 0;
    for (std::size_t j = 1; j + 1 < items.size(); ++j)
      if (items[j + 1].bin.rep() - items[j].bin.rep() < items[best + 1].bin.rep() - items[best].bin.rep()) best = j;
    Item& lo = items[best];
    const Item& hi = items[best + 1];
    lo.bin.sum += hi.bin.sum;
    lo.bin.count += hi.bin.count;
    lo.bin.min = std::min(lo.bin.min, hi.bin.min);
    lo.bin.max = std::max(lo.bin.max, hi.bin.max);
    lo.members.insert(lo.members.end(), hi.members.begin(), hi.members.end());
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  NaiveProgramMerge out;
  out.local_to_global.resize(per_rank.size());
  for (std::size_t r = 0; r < per_rank.size(); ++r) out.local_to_global[r].resize(per_rank[r].size());
  for (std::size_t g = 0; g < items.size(); ++g) {
    out.bins.push_back(items[g].bin);
    for (auto [r, i] : items[g].members) out.local_to_global[r][i] = static_cast<std::uint16_t>(g);
  }
  return out;
}

inline bool same_bins(const BinTable& a, const BinTable& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].sum != b[i].sum || a[i].count != b[i].count || a[i].min != b[i].min || a[i].max != b[i].max) return false;
  return true;
}

}  // namespace tremor::test
