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
    : max_bins_(std::clamp<std::size_t>(max_bins, 1, kMaxBins)), forward_(kIdSpace) {
  // Two to four new tickets per insert into a full table; when they run out
  // the heap is rebuilt from the table (~20k instructions for 256 bins), so
  // 8 tickets per bin keep that below ~25 instructions per insert.
  heap_.reserve(8 * max_bins_ + 8);
  dead_ticket_ = static_cast<std::uint32_t>(heap_.capacity());
  ticket_alive_.resize(dead_ticket_ + 1);  // the dead ticket is never alive
}

StreamingQuantizer::StreamingQuantizer(const StreamingQuantizer& other)
    : max_bins_(other.max_bins_),
      size_(other.size_),
      rep_(other.rep_),
      sum_(other.sum_),
      count_(other.count_),
      min_(other.min_),
      max_(other.max_),
      id_(other.id_),
      ticket_(other.ticket_),
      ticket_alive_(other.ticket_alive_),
      next_ticket_(other.next_ticket_),
      dead_ticket_(other.dead_ticket_),
      heap_active_(other.heap_active_),
      forward_(other.forward_),
      next_id_(other.next_id_),
      non_finite_(other.non_finite_) {
  heap_.reserve(dead_ticket_);
  heap_.assign(other.heap_.begin(), other.heap_.end());
}

StreamingQuantizer& StreamingQuantizer::operator=(const StreamingQuantizer& other) {
  if (this != &other) *this = StreamingQuantizer(other);
  return *this;
}

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

// Heap order: the top is the least gap, the lowest pair among equal gaps.
struct WorseGap {
  template <typename Entry>
  bool operator()(const Entry& a, const Entry& b) const noexcept {
    return a.gap > b.gap || (a.gap == b.gap && a.left_rep > b.left_rep);
  }
};

}  // namespace

StreamingQuantizer::Id StreamingQuantizer::insert(double value) noexcept {
  if (!std::isfinite(value)) {
    ++non_finite_;
    value = 0.0;
  }
  const double* reps = rep_.data();
  const std::size_t position =
      static_cast<std::size_t>(std::lower_bound(reps, reps + size_, value) - reps);
  if (position < size_ && rep_[position] == value) {
    const double old_rep = rep_[position];
    sum_[position] += value;
    ++count_[position];
    rep_[position] = sum_[position] / static_cast<double>(count_[position]);
    if (heap_active_ && rep_[position] != old_rep) {  // rounding moved the rep
      heap_active_ = ordered_around(position);
      renew_gap(position - 1);
      renew_gap(position);
    }
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
  if (pair + 1 == position) {  // the value joins the bin below it
    absorb_value(position - 1, value);
    forward_[new_id] = id_[position - 1];
    if (!heap_active_) return new_id;
    heap_active_ = ordered_around(position - 1);
    renew_gap(position - 2);
    renew_gap(position - 1);
  } else if (pair == position) {  // the value is the lower bin: it keeps the new id
    absorb_value(position, value);
    forward_[id_[position]] = new_id;
    id_[position] = new_id;
    if (!heap_active_) return new_id;
    heap_active_ = ordered_around(position);
    renew_gap(position - 1);
    renew_gap(position);
  } else if (pair + 1 < position) {  // two stored bins below the value merge
    absorb_bin(pair, pair + 1);
    move_range(pair + 2, position, pair + 1);
    place(position - 1, value, new_id);
    if (!heap_active_) return new_id;
    heap_active_ = ordered_around(pair);
    renew_gap(pair - 1);
    renew_gap(pair);
    if (pair + 2 < position) renew_gap(position - 2);
    renew_gap(position - 1);
  } else {  // stored bins pair-1 and pair (above the value) merge into slot pair
    absorb_bin(pair - 1, pair);
    move_range(pair - 1, pair, pair);
    move_range(position, pair - 1, position + 1);
    place(position, value, new_id);
    if (!heap_active_) return new_id;
    heap_active_ = ordered_around(pair);
    renew_gap(position - 1);
    renew_gap(position);
    if (position + 1 < pair) renew_gap(pair - 1);
    renew_gap(pair);
  }
  return new_id;
}

std::size_t StreamingQuantizer::closest_pair(std::size_t position, double value) noexcept {
  if (!heap_active_) heap_active_ = rebuild_heap();
  if (!heap_active_) return closest_pair_by_scan(position, value);
  // The gap the value splits is gone whatever happens next.
  if (position >= 1) {
    ticket_alive_[ticket_[position - 1]] = 0;
    ticket_[position - 1] = dead_ticket_;
  }
  const GapEntry* const stored = least_stored_gap();
  // Candidates in virtual order, strict comparisons: the first least wins.
  // Reps strictly increase, so the stored pair's side of the value follows
  // from its left rep; its slot is looked up only if it wins.
  double best = std::numeric_limits<double>::infinity();
  bool stored_wins = false;
  std::size_t pair = 0;
  if (stored != nullptr && stored->left_rep < value && stored->gap < best) {
    best = stored->gap;
    stored_wins = true;
  }
  if (position >= 1 && value - rep_[position - 1] < best) {
    best = value - rep_[position - 1];
    stored_wins = false;
    pair = position - 1;
  }
  if (position < size_ && rep_[position] - value < best) {
    best = rep_[position] - value;
    stored_wins = false;
    pair = position;
  }
  if (stored != nullptr && stored->left_rep > value && stored->gap < best) stored_wins = true;
  if (!stored_wins) return pair;
  const double* reps = rep_.data();
  const auto slot = static_cast<std::size_t>(std::lower_bound(reps, reps + size_, stored->left_rep) - reps);
  return slot < position ? slot : slot + 1;  // virtual index of its lower bin
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

bool StreamingQuantizer::rebuild_heap() noexcept {
  heap_.clear();
  for (std::size_t i = 0; i + 1 < size_; ++i)
    if (!(rep_[i] < rep_[i + 1])) return false;
  std::fill(ticket_alive_.begin(), ticket_alive_.end(), 0);
  next_ticket_ = 0;
  for (std::size_t i = 0; i + 1 < size_; ++i) {
    ticket_[i] = next_ticket_++;
    ticket_alive_[ticket_[i]] = 1;
    heap_.push_back(GapEntry{rep_[i + 1] - rep_[i], rep_[i], ticket_[i]});
  }
  ticket_[size_ - 1] = dead_ticket_;
  std::make_heap(heap_.begin(), heap_.end(), WorseGap{});
  return true;
}

// Drops stale entries from the top; nullptr if no gap is left.
const StreamingQuantizer::GapEntry* StreamingQuantizer::least_stored_gap() noexcept {
  while (!heap_.empty() && !ticket_alive_[heap_.front().ticket]) {
    std::pop_heap(heap_.begin(), heap_.end(), WorseGap{});
    heap_.pop_back();
  }
  return heap_.empty() ? nullptr : &heap_.front();
}

// The gap right of `slot` changed (out-of-range slots are ignored).
void StreamingQuantizer::renew_gap(std::size_t slot) noexcept {
  if (!heap_active_ || slot >= size_) return;
  ticket_alive_[ticket_[slot]] = 0;
  if (slot + 1 == size_) {
    ticket_[slot] = dead_ticket_;
    return;
  }
  if (next_ticket_ == dead_ticket_) {  // mostly stale by now: start afresh
    heap_active_ = rebuild_heap();
    return;
  }
  ticket_[slot] = next_ticket_++;
  ticket_alive_[ticket_[slot]] = 1;
  heap_.push_back(GapEntry{rep_[slot + 1] - rep_[slot], rep_[slot], ticket_[slot]});
  std::push_heap(heap_.begin(), heap_.end(), WorseGap{});
}

bool StreamingQuantizer::ordered_around(std::size_t slot) const noexcept {
  return (slot == 0 || rep_[slot - 1] < rep_[slot]) && (slot + 1 >= size_ || rep_[slot] < rep_[slot + 1]);
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
  move(ticket_);
}

void StreamingQuantizer::place(std::size_t slot, double value, Id id) noexcept {
  rep_[slot] = value;
  sum_[slot] = value;
  count_[slot] = 1;
  min_[slot] = value;
  max_[slot] = value;
  id_[slot] = id;
  ticket_[slot] = dead_ticket_;  // the slot may hold a copy of a moved bin's ticket
}

void StreamingQuantizer::absorb_value(std::size_t slot, double value) noexcept {
  sum_[slot] += value;
  ++count_[slot];
  min_[slot] = std::min(min_[slot], value);
  max_[slot] = std::max(max_[slot], value);
  rep_[slot] = sum_[slot] / static_cast<double>(count_[slot]);
}

// Slot `into` (the lower bin) absorbs slot `from`; the caller moves slots.
void StreamingQuantizer::absorb_bin(std::size_t into, std::size_t from) noexcept {
  sum_[into] += sum_[from];
  count_[into] += count_[from];
  min_[into] = std::min(min_[into], min_[from]);
  max_[into] = std::max(max_[into], max_[from]);
  rep_[into] = sum_[into] / static_cast<double>(count_[into]);
  forward_[id_[from]] = id_[into];
  ticket_alive_[ticket_[from]] = 0;  // its gap is gone with it
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
  for (std::size_t position = 0; position < size_; ++position)
    dense_of[id_[position]] = static_cast<Id>(position);
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
  return sizeof(*this) + forward_.capacity() * sizeof(Id) + heap_.capacity() * sizeof(GapEntry) + ticket_alive_.capacity();
}

// ---------------------------------------------------------------------------

QuantizedColumn::QuantizedColumn(std::size_t max_bins) : quantizer_(max_bins) {
  epochs_.push_back(Epoch{});
}

bool QuantizedColumn::renumber_for_next() noexcept {
  try {
    start_new_epoch();
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

void QuantizedColumn::append_reserved(double value) noexcept {
  samples_.push_reserved(quantizer_.insert(value));
}

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
