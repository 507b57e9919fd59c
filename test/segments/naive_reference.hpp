// Deliberately simple O(B) / O(N^2) versions of docs/statistics.md#quantization, written
// straight from the text, to compare the fast implementations against.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor::test {

struct NaiveQuantizer {
  struct Entry {
    Bin bin;
    std::uint32_t id;
  };
  std::size_t max_bins;
  std::vector<Entry> bins;            // ascending rep
  std::vector<std::uint32_t> parent;  // union-find forwarding, never compacted

  std::uint32_t insert(double v) {
    for (Entry& e : bins)
      if (e.bin.rep() == v) {
        e.bin.sum += v;
        ++e.bin.count;
        return e.id;
      }
    const auto id = static_cast<std::uint32_t>(parent.size());
    parent.push_back(id);
    auto at = std::find_if(bins.begin(), bins.end(), [&](const Entry& e) { return e.bin.rep() > v; });
    bins.insert(at, Entry{Bin{v, 1, v, v}, id});
    if (bins.size() > max_bins) {
      std::size_t best = 0;
      for (std::size_t j = 1; j + 1 < bins.size(); ++j)
        if (bins[j + 1].bin.rep() - bins[j].bin.rep() < bins[best + 1].bin.rep() - bins[best].bin.rep()) best = j;
      Bin& lo = bins[best].bin;
      const Entry hi = bins[best + 1];
      lo.sum += hi.bin.sum;
      lo.count += hi.bin.count;
      lo.min = std::min(lo.min, hi.bin.min);
      lo.max = std::max(lo.max, hi.bin.max);
      parent[hi.id] = bins[best].id;
      bins.erase(bins.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
    return id;
  }
  // Dense index (position in ascending rep) of every id ever issued.
  std::vector<std::size_t> dense_all() const {
    std::vector<std::uint32_t> root = parent;
    for (std::size_t id = 0; id < root.size(); ++id) {
      std::uint32_t r = root[id];
      while (root[r] != r) r = root[r];
      for (std::uint32_t walk = static_cast<std::uint32_t>(id); root[walk] != r;) {
        const std::uint32_t next = root[walk];
        root[walk] = r;
        walk = next;
      }
    }
    std::vector<std::size_t> position_of_root(root.size(), bins.size());
    for (std::size_t i = 0; i < bins.size(); ++i) position_of_root[bins[i].id] = i;
    std::vector<std::size_t> dense(root.size());
    for (std::size_t id = 0; id < root.size(); ++id) dense[id] = position_of_root[root[id]];
    return dense;
  }
  BinTable table() const {
    BinTable out;
    for (const Entry& e : bins) out.push_back(e.bin);
    return out;
  }
};

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
