#include "tremor/quantizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <new>

namespace tremor {

StreamingQuantizer::StreamingQuantizer(std::size_t max_bins)
    : max_bins_(std::clamp<std::size_t>(max_bins, 1, kMaxBins)), forward_(kIdSpace) {}

namespace {

// Least gap rep[i+1] - rep[i] over i in [begin, end), and the first i that
// has it. The minimum is found with SSE2 (two gaps per instruction) and the
// index by a second, early-exit pass: both passes compute the same
// differences, so the comparison is exact.
void least_gap(const double* rep, std::size_t begin, std::size_t end, std::size_t virtual_shift, double& best,
               std::size_t& best_index) noexcept {
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
  if (!(least < best)) return;  // an earlier block wins ties
  for (i = begin; rep[i + 1] - rep[i] != least; ++i) {
  }
  best = least;
  best_index = i + virtual_shift;
}

// Least of 16 doubles (none NaN: infinite reps switch the gap index off).
template <std::size_t N>
double least_of(const double* values) noexcept {
  static_assert(N % 4 == 0);
#if defined(__SSE2__)
  __m128d a = _mm_loadu_pd(values);
  __m128d b = _mm_loadu_pd(values + 2);
  for (std::size_t i = 4; i < N; i += 4) {
    a = _mm_min_pd(a, _mm_loadu_pd(values + i));
    b = _mm_min_pd(b, _mm_loadu_pd(values + i + 2));
  }
  a = _mm_min_pd(a, b);
  return std::min(_mm_cvtsd_f64(a), _mm_cvtsd_f64(_mm_unpackhi_pd(a, a)));
#else
  double least = values[0];
  for (std::size_t i = 1; i < N; ++i) least = std::min(least, values[i]);
  return least;
#endif
}

// std::lower_bound's probe sequence exactly (so even reps that rounding put
// out of order give the same position), without branches on the data.
std::size_t lower_bound_position(const double* reps, std::size_t size, double value) noexcept {
  std::size_t first = 0;
  std::size_t length = size;
  while (length > 0) {
    const std::size_t half = length >> 1;
    const bool below = reps[first + half] < value;
    first = below ? first + half + 1 : first;
    length = below ? length - half - 1 : half;
  }
  return first;
}

constexpr double kNoGap = std::numeric_limits<double>::infinity();

}  // namespace

StreamingQuantizer::Id StreamingQuantizer::insert(double value) noexcept {
  if (!std::isfinite(value)) {
    ++non_finite_;
    value = 0.0;
  }
  const std::size_t position = lower_bound_position(rep_.data(), size_, value);
  if (position < size_ && rep_[position] == value) {
    const double old_rep = rep_[position];
    sum_[position] += value;
    ++count_[position];
    rep_[position] = sum_[position] / static_cast<double>(count_[position]);
    note_rep(rep_[position]);
    if (gaps_ready_ && rep_[position] != old_rep) renew_gaps(position == 0 ? 0 : position - 1, position);
    return id_[position];
  }
  // Callers that keep ids renumber before this point (QuantizedColumn); for
  // the others (bin tables only) the old ids are simply retired.
  if (ids_exhausted()) renumber_without_map();
  const Id new_id = static_cast<Id>(next_id_);
  forward_[new_id] = new_id;
  ++next_id_;
  if (size_ < max_bins_) {
    move_range(position, size_, position + 1);
    place(position, value, new_id);
    ++size_;
    return new_id;
  }
  const std::size_t pair = closest_pair(position, value);
  // Lowest slot whose right gap changed (the slots in between moved, so their
  // gaps are recomputed too; recomputing an unchanged gap gives the same value).
  const auto below = [](std::size_t slot, std::size_t by) { return slot >= by ? slot - by : 0; };
  if (pair + 1 == position) {  // the value joins the bin below it
    absorb_value(position - 1, value);
    forward_[new_id] = id_[position - 1];
    if (gaps_ready_) renew_gaps(below(position, 2), position - 1);
  } else if (pair == position) {  // the value is the lower bin: it keeps the new id
    absorb_value(position, value);
    forward_[id_[position]] = new_id;
    id_[position] = new_id;
    if (gaps_ready_) renew_gaps(below(position, 1), position);
  } else if (pair + 1 < position) {  // two stored bins below the value merge
    absorb_bin(pair, pair + 1);
    move_range(pair + 2, position, pair + 1);
    place(position - 1, value, new_id);
    if (gaps_ready_) renew_gaps(below(pair, 1), position - 1);
  } else {  // stored bins pair-1 and pair (above the value) merge into slot pair
    absorb_bin(pair - 1, pair);
    move_range(pair - 1, pair, pair);
    move_range(position, pair - 1, position + 1);
    place(position, value, new_id);
    if (gaps_ready_) renew_gaps(below(position, 1), pair);
  }
  return new_id;
}

std::size_t StreamingQuantizer::closest_pair(std::size_t position, double value) noexcept {
  if (infinite_rep_) {
    gaps_ready_ = false;
    return closest_pair_by_scan(position, value);
  }
  if (!gaps_ready_) build_gap_index();
  // The gap the value splits is not a candidate (it is renewed after the insert).
  if (position >= 1) {
    gap_[position - 1] = kNoGap;
    const std::size_t block = (position - 1) / kBlock;
    block_least_[block] = least_of<kBlock>(&gap_[block * kBlock]);
  }
  const double least = least_of<kBlocks>(block_least_.data());
  // The value's own pairs come first when strictly closer (the lower one on
  // ties): then the stored pair's slot is not needed.
  const double below_gap = position >= 1 ? value - rep_[position - 1] : kNoGap;
  const double above_gap = position < size_ ? rep_[position] - value : kNoGap;
  if (below_gap < least || above_gap < least) return below_gap <= above_gap ? position - 1 : position;
  // The first stored pair with the least gap: first block, then first slot.
  std::size_t stored = 0;
  if (least != kNoGap) {
    std::size_t block = 0;
    while (block_least_[block] != least) ++block;
    stored = block * kBlock;
    while (gap_[stored] != least) ++stored;
  }
  // Candidates in virtual order, strict comparisons: the first least wins.
  // Stored pair `stored` is below the value if stored < position - 1, above
  // it (virtual index + 1) if stored >= position.
  double best = kNoGap;
  std::size_t pair = 0;
  if (stored + 1 < position && least < best) {
    best = least;
    pair = stored;
  }
  if (below_gap < best) {
    best = below_gap;
    pair = position - 1;
  }
  if (above_gap < best) {
    best = above_gap;
    pair = position;
  }
  if (stored >= position && least < best) pair = stored + 1;
  return pair;
}

// Virtual gap j is the stored gap j before the new value and stored gap j-1
// after it; the stored gap the value splits is not a candidate.
std::size_t StreamingQuantizer::closest_pair_by_scan(std::size_t position, double value) const noexcept {
  const double* reps = rep_.data();
  const std::size_t n = size_;
  double best = std::numeric_limits<double>::infinity();
  std::size_t pair = 0;
  if (position >= 2) least_gap(reps, 0, position - 1, 0, best, pair);
  if (position >= 1 && value - rep_[position - 1] < best) {
    best = value - rep_[position - 1];
    pair = position - 1;
  }
  if (position < n && rep_[position] - value < best) {
    best = rep_[position] - value;
    pair = position;
  }
  if (position + 1 < n) least_gap(reps, position, n - 1, 1, best, pair);
  return pair;
}

void StreamingQuantizer::build_gap_index() noexcept {
  gap_.fill(kNoGap);
  block_least_.fill(kNoGap);
  gaps_ready_ = true;
  renew_gaps(0, size_ - 1);
}

void StreamingQuantizer::renew_gaps(std::size_t first, std::size_t last) noexcept {
  if (infinite_rep_) {  // NaN gaps possible: the scan takes over
    gaps_ready_ = false;
    return;
  }
  const std::size_t end = std::min(last + 1, size_ - 1);  // gaps past the last pair stay kNoGap
  for (std::size_t slot = first; slot < end; ++slot) gap_[slot] = rep_[slot + 1] - rep_[slot];
  for (std::size_t block = first / kBlock; block <= last / kBlock; ++block)
    block_least_[block] = least_of<kBlock>(&gap_[block * kBlock]);
}

void StreamingQuantizer::move_range(std::size_t begin, std::size_t end, std::size_t to) noexcept {
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

void StreamingQuantizer::place(std::size_t slot, double value, Id id) noexcept {
  rep_[slot] = value;
  sum_[slot] = value;
  count_[slot] = 1;
  min_[slot] = value;
  max_[slot] = value;
  id_[slot] = id;
}

void StreamingQuantizer::absorb_value(std::size_t slot, double value) noexcept {
  sum_[slot] += value;
  ++count_[slot];
  min_[slot] = std::min(min_[slot], value);
  max_[slot] = std::max(max_[slot], value);
  rep_[slot] = sum_[slot] / static_cast<double>(count_[slot]);
  note_rep(rep_[slot]);
}

// Slot `into` (the lower bin) absorbs slot `from`; the caller moves slots.
void StreamingQuantizer::absorb_bin(std::size_t into, std::size_t from) noexcept {
  sum_[into] += sum_[from];
  count_[into] += count_[from];
  min_[into] = std::min(min_[into], min_[from]);
  max_[into] = std::max(max_[into], max_[from]);
  rep_[into] = sum_[into] / static_cast<double>(count_[into]);
  note_rep(rep_[into]);
  forward_[id_[from]] = id_[into];
}

StreamingQuantizer::Id StreamingQuantizer::find(Id id) noexcept {
  Id root = id;
  while (forward_[root] != root) root = forward_[root];
  while (forward_[id] != root) {
    const Id next = forward_[id];
    forward_[id] = root;
    id = next;
  }
  return root;
}

void StreamingQuantizer::dense_indices(std::span<Id> dense_of) noexcept {
  // Roots are exactly the live bins' ids: give them their positions first,
  // then every other id takes its root's position.
  for (std::size_t id = 0; id < next_id_; ++id) find(static_cast<Id>(id));
  for (std::size_t position = 0; position < size_; ++position) dense_of[id_[position]] = static_cast<Id>(position);
  for (std::size_t id = 0; id < next_id_; ++id)
    if (forward_[id] != id) dense_of[id] = dense_of[forward_[id]];
}

void StreamingQuantizer::renumber(std::span<Id> new_id_of) noexcept {
  dense_indices(new_id_of);
  renumber_without_map();
}

void StreamingQuantizer::renumber_without_map() noexcept {
  for (std::size_t position = 0; position < size_; ++position) {
    id_[position] = static_cast<Id>(position);
    forward_[position] = static_cast<Id>(position);
  }
  next_id_ = size_;
}

BinTable StreamingQuantizer::bins() const {
  BinTable table(size_);
  for (std::size_t i = 0; i < size_; ++i) table[i] = Bin{sum_[i], count_[i], min_[i], max_[i]};
  return table;
}

std::size_t StreamingQuantizer::memory_bytes() const noexcept {
  return sizeof(*this) + forward_.capacity() * sizeof(Id);
}

// ---------------------------------------------------------------------------

QuantizedColumn::QuantizedColumn(std::size_t max_bins) : quantizer_(max_bins) { epochs_.push_back(Epoch{}); }

bool QuantizedColumn::renumber_for_next() noexcept {
  try {
    start_new_epoch();
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

void QuantizedColumn::append_reserved(double value) noexcept { samples_.push_reserved(quantizer_.insert(value)); }

void QuantizedColumn::start_new_epoch() {
  if (scratch_.empty()) scratch_.resize(StreamingQuantizer::kIdSpace);
  epochs_.reserve(epochs_.size() + 1);
  Epoch& ending = epochs_.back();
  std::vector<StreamingQuantizer::Id> exit_map(ending.start_ids);
  quantizer_.renumber(scratch_);
  for (std::size_t i = 0; i < ending.start_ids; ++i) exit_map[i] = scratch_[i];
  for (std::size_t i = ending.first_sample; i < samples_.size(); ++i) samples_[i] = scratch_[samples_[i]];
  ending.exit_map = std::move(exit_map);
  epochs_.push_back(Epoch{samples_.size(), {}, quantizer_.size()});
}

QuantizedColumnResult QuantizedColumn::finalize() {
  using Id = StreamingQuantizer::Id;
  QuantizedColumnResult result;
  result.bins = quantizer_.bins();
  result.index.resize(samples_.size());
  std::vector<Id> current_dense(std::max<std::size_t>(quantizer_.ids_issued(), 1));
  quantizer_.dense_indices(current_dense);
  // Samples of the last epoch hold current ids; samples of an earlier epoch e
  // hold epoch e+1's start ids. next_start_dense maps those start ids to the
  // final dense index and is built backwards through the exit maps.
  std::vector<Id> next_start_dense;
  for (std::size_t e = epochs_.size(); e-- > 0;) {
    const Epoch& epoch = epochs_[e];
    const bool last = e + 1 == epochs_.size();
    const std::vector<Id>& map = last ? current_dense : next_start_dense;
    const std::size_t end = last ? samples_.size() : epochs_[e + 1].first_sample;
    for (std::size_t i = epoch.first_sample; i < end; ++i)
      result.index[i] = static_cast<std::uint8_t>(map[samples_[i]]);
    std::vector<Id> start_dense(epoch.start_ids);
    for (std::size_t s = 0; s < epoch.start_ids; ++s)
      start_dense[s] = last ? current_dense[s] : next_start_dense[epoch.exit_map[s]];
    next_start_dense = std::move(start_dense);
  }
  return result;
}

std::size_t QuantizedColumn::memory_bytes() const noexcept {
  std::size_t bytes = sizeof(*this) + quantizer_.memory_bytes() - sizeof(quantizer_);
  bytes += samples_.memory_bytes();
  bytes += epochs_.capacity() * sizeof(Epoch);
  for (const Epoch& epoch : epochs_) bytes += epoch.exit_map.capacity() * sizeof(StreamingQuantizer::Id);
  bytes += scratch_.capacity() * sizeof(StreamingQuantizer::Id);
  return bytes;
}

}  // namespace tremor
