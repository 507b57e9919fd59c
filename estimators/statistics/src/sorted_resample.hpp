// A bootstrap resample in ascending order, from the same draws as drawing
// source[pick(engine)] once per value and sorting: one pick per value, in
// order, counted by the picked value's rank. The sorted multiset is the same,
// so every statistic read from it is the same, bit for bit; the sort of each
// replica (n log n) becomes a count (n).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <vector>

namespace tremor::estimators::detail {

class SortedResampler {
 public:
  explicit SortedResampler(std::span<const double> source) : rank_of_(source.size()), counts_(source.size()) {
    std::vector<std::uint32_t> order(source.size());
    std::iota(order.begin(), order.end(), 0U);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return source[a] < source[b]; });
    sorted_.reserve(source.size());
    for (std::uint32_t rank = 0; rank < order.size(); ++rank) {
      rank_of_[order[rank]] = rank;
      sorted_.push_back(source[order[rank]]);
    }
  }

  /// `target`: as many values as the source, drawn with replacement, ascending.
  void draw(std::vector<double>& target, std::mt19937_64& engine) {
    target.resize(sorted_.size());
    if (sorted_.empty()) return;
    std::uniform_int_distribution<std::size_t> pick(0, sorted_.size() - 1);
    std::fill(counts_.begin(), counts_.end(), 0U);
    for (std::size_t i = 0; i < sorted_.size(); ++i) ++counts_[rank_of_[pick(engine)]];
    std::size_t next = 0;
    for (std::size_t rank = 0; rank < sorted_.size(); ++rank) {
      for (std::uint32_t copy = 0; copy < counts_[rank]; ++copy) target[next++] = sorted_[rank];
    }
  }

 private:
  std::vector<double> sorted_;
  std::vector<std::uint32_t> rank_of_;  // per source index, its rank in sorted_
  std::vector<std::uint32_t> counts_;
};

}  // namespace tremor::estimators::detail
