// The quantizer as it was before the gap heap (full least-gap scan on every
// insert into a full table), kept verbatim as the reference that the fast
// StreamingQuantizer must reproduce bit for bit, ties included.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tremor/run_data.hpp"

namespace tremor::test {

class ScanQuantizer {
 public:
  using Id = std::uint32_t;  // never renumbered: the test streams stay short
  static constexpr std::size_t kSlots = 256;

  explicit ScanQuantizer(std::size_t max_bins) : max_bins_(std::clamp<std::size_t>(max_bins, 1, kSlots)) {}

  Id insert(double value) {
    if (!std::isfinite(value)) value = 0.0;
    const double* reps = rep_.data();
    const std::size_t position = static_cast<std::size_t>(std::lower_bound(reps, reps + size_, value) - reps);
    if (position < size_ && rep_[position] == value) {
      sum_[position] += value;
      ++count_[position];
      rep_[position] = sum_[position] / static_cast<double>(count_[position]);
      return id_[position];
    }
    const Id new_id = static_cast<Id>(forward_.size());
    forward_.push_back(new_id);
    if (size_ < max_bins_) {
      move_range(position, size_, position + 1);
      place(position, value, new_id);
      ++size_;
      return new_id;
    }
    const std::size_t n = size_;
    double best = std::numeric_limits<double>::infinity();
    std::size_t pair = 0;
    if (position >= 2) least_gap(0, position - 1, 0, best, pair);
    if (position >= 1 && value - rep_[position - 1] < best) {
      best = value - rep_[position - 1];
      pair = position - 1;
    }
    if (position < n && rep_[position] - value < best) {
      best = rep_[position] - value;
      pair = position;
    }
    if (position + 1 < n) least_gap(position, n - 1, 1, best, pair);

    if (pair + 1 == position) {
      absorb_value(position - 1, value);
      forward_[new_id] = id_[position - 1];
    } else if (pair == position) {
      absorb_value(position, value);
      forward_[id_[position]] = new_id;
      id_[position] = new_id;
    } else if (pair + 1 < position) {
      absorb_bin(pair, pair + 1);
      move_range(pair + 2, position, pair + 1);
      place(position - 1, value, new_id);
    } else {
      absorb_bin(pair - 1, pair);
      move_range(pair - 1, pair, pair);
      move_range(position, pair - 1, position + 1);
      place(position, value, new_id);
    }
    return new_id;
  }

  // Position (ascending rep) of the bin that holds every id issued so far.
  std::vector<std::size_t> dense_all() const {
    std::vector<std::size_t> position_of(forward_.size(), 0);
    for (std::size_t p = 0; p < size_; ++p) position_of[id_[p]] = p;
    std::vector<std::size_t> dense(forward_.size());
    for (std::size_t id = 0; id < forward_.size(); ++id) {
      Id root = static_cast<Id>(id);
      while (forward_[root] != root) root = forward_[root];
      dense[id] = position_of[root];
    }
    return dense;
  }

  BinTable bins() const {
    BinTable table(size_);
    for (std::size_t i = 0; i < size_; ++i) table[i] = Bin{sum_[i], count_[i], min_[i], max_[i]};
    return table;
  }

 private:
  // Verbatim from the scan implementation: SSE2 minimum, then the first index.
  void least_gap(std::size_t begin, std::size_t end, std::size_t shift, double& best, std::size_t& best_index) const {
    const double* rep = rep_.data();
    if (begin >= end) return;
    double least = rep[begin + 1] - rep[begin];
    std::size_t i = begin + 1;
#if defined(__SSE2__)
    __m128d least2 = _mm_set1_pd(least);
    for (; i + 2 <= end; i += 2) {
      const __m128d gap = _mm_sub_pd(_mm_loadu_pd(rep + i + 1), _mm_loadu_pd(rep + i));
      least2 = _mm_min_pd(least2, gap);
    }
    least = std::min(_mm_cvtsd_f64(least2), _mm_cvtsd_f64(_mm_unpackhi_pd(least2, least2)));
#endif
    for (; i < end; ++i) least = std::min(least, rep[i + 1] - rep[i]);
    if (!(least < best)) return;
    for (i = begin; rep[i + 1] - rep[i] != least; ++i) {
    }
    best = least;
    best_index = i + shift;
  }
  void move_range(std::size_t begin, std::size_t end, std::size_t to) {
    const std::size_t count = end - begin;
    if (count == 0) return;
    auto move = [&](auto& column) { std::memmove(&column[to], &column[begin], count * sizeof(column[0])); };
    move(rep_);
    move(sum_);
    move(count_);
    move(min_);
    move(max_);
    move(id_);
  }
  void place(std::size_t slot, double value, Id id) {
    rep_[slot] = sum_[slot] = min_[slot] = max_[slot] = value;
    count_[slot] = 1;
    id_[slot] = id;
  }
  void absorb_value(std::size_t slot, double value) {
    sum_[slot] += value;
    ++count_[slot];
    min_[slot] = std::min(min_[slot], value);
    max_[slot] = std::max(max_[slot], value);
    rep_[slot] = sum_[slot] / static_cast<double>(count_[slot]);
  }
  void absorb_bin(std::size_t into, std::size_t from) {
    sum_[into] += sum_[from];
    count_[into] += count_[from];
    min_[into] = std::min(min_[into], min_[from]);
    max_[into] = std::max(max_[into], max_[from]);
    rep_[into] = sum_[into] / static_cast<double>(count_[into]);
    forward_[id_[from]] = id_[into];
  }

  std::size_t max_bins_;
  std::size_t size_ = 0;
  std::array<double, kSlots> rep_{}, sum_{}, min_{}, max_{};
  std::array<std::uint64_t, kSlots> count_{};
  std::array<Id, kSlots> id_{};
  std::vector<Id> forward_;
};

}  // namespace tremor::test
