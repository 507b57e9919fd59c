// Streaming histogram quantizer (docs/statistics.md#quantization,
// Ben-Haim & Tom-Tov 2010).
//
// Bins are kept as parallel arrays sorted by rep = sum/count. An insert is a
// binary search and, when the table is full, a look-up of the closest pair of
// "bins + new value" followed by a single shift of the slots between the new
// value and that pair. The closest stored pair comes from a two-level index
// of the gaps rep[i+1] - rep[i]: the gaps themselves and the least gap of
// each block of 16, so a look-up reads 16 block minima and one block, and a
// changed gap refreshes its block. Ties go to the lowest pair, exactly as a
// left-to-right scan would, whatever the order of the reps (rounding can make
// neighbouring reps equal or even swap them). Once a rep is infinite (a sum
// overflowed) gaps can be NaN and the full scan is used for good. No
// allocation after construction.
//
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tremor/chunked_array.hpp"
#include "tremor/run_data.hpp"

namespace tremor {

class StreamingQuantizer {
 public:
  using Id = std::uint16_t;
  static constexpr std::size_t kMaxBins = 256;
  static constexpr std::size_t kIdSpace = 65536;

  // max_bins is clamped to [1, kMaxBins].
  explicit StreamingQuantizer(std::size_t max_bins = kMaxBins);

  // Returns the id of the value's bin. Callers that store ids must renumber()
  // when ids_exhausted(); otherwise insert retires all ids issued so far.
  // Non-finite values are counted as 0 (non_finite_count() tells how many)
  // so the sorted order stays valid.
  Id insert(double value) noexcept;
  bool ids_exhausted() const noexcept { return next_id_ >= kIdSpace; }

  // Id of the live bin that absorbed `id` (path compression).
  Id find(Id id) noexcept;

  // Gives live bins the ids 0..size-1 in ascending rep order and writes, for
  // every id issued so far, its new id into new_id_of (size >= ids_issued()).
  void renumber(std::span<Id> new_id_of) noexcept;

  // Dense index (position in ascending rep order) of every issued id, written
  // into dense_of (size >= ids_issued()); does not change the bins.
  void dense_indices(std::span<Id> dense_of) noexcept;

  BinTable bins() const;  // ascending rep
  std::size_t size() const noexcept { return size_; }
  std::size_t max_bins() const noexcept { return max_bins_; }
  std::size_t ids_issued() const noexcept { return next_id_; }
  std::uint64_t non_finite_count() const noexcept { return non_finite_; }
  std::size_t memory_bytes() const noexcept;

 private:
  void renumber_without_map() noexcept;
  void move_range(std::size_t begin, std::size_t end, std::size_t to) noexcept;
  void place(std::size_t slot, double value, Id id) noexcept;
  void absorb_value(std::size_t slot, double value) noexcept;
  void absorb_bin(std::size_t into, std::size_t from) noexcept;

  // Closest pair of the virtual table "bins + value at position" (virtual
  // index of its lower member), first one on ties.
  std::size_t closest_pair(std::size_t position, double value) noexcept;
  std::size_t closest_pair_by_scan(std::size_t position, double value) const noexcept;
  void build_gap_index() noexcept;
  // Recomputes the gaps right of slots [first, last] and their blocks' minima.
  void renew_gaps(std::size_t first, std::size_t last) noexcept;
  void note_rep(double rep) noexcept { infinite_rep_ = infinite_rep_ || !std::isfinite(rep); }

  static constexpr std::size_t kSlots = kMaxBins;
  static constexpr std::size_t kBlock = 16;
  static constexpr std::size_t kBlocks = kSlots / kBlock;
  std::size_t max_bins_;
  std::size_t size_ = 0;
  std::array<double, kSlots> rep_{};
  std::array<double, kSlots> sum_{};
  std::array<std::uint64_t, kSlots> count_{};
  std::array<double, kSlots> min_{};
  std::array<double, kSlots> max_{};
  std::array<Id, kSlots> id_{};
  // Valid once the table is full (gaps_ready_): gap_[i] = rep[i+1] - rep[i],
  // +infinity past the last pair; block_least_[b] = least of gap_[16b, 16b+16).
  std::array<double, kSlots> gap_{};
  std::array<double, kBlocks> block_least_{};
  bool gaps_ready_ = false;
  bool infinite_rep_ = false;  // sticky: some rep overflowed, gaps may be NaN
  std::vector<Id> forward_;    // kIdSpace entries, allocated once: insert never allocates
  std::size_t next_id_ = 0;
  std::uint64_t non_finite_ = 0;
};

// Finalised view of one quantized column: bins ascending by rep and, per
// stored sample, the dense index of its bin.
struct QuantizedColumnResult {
  BinTable bins;
  std::vector<std::uint8_t> index;
};

// A quantizer plus the per-sample ids it hands out: 2 bytes per sample.
// When the id space runs out, only the samples stored since the previous
// renumbering (the current epoch) are rewritten; older epochs keep the small
// map of their epoch's start ids, and finalize() composes those maps
// backwards. Each epoch holds at least 65536 - 257 samples, so the rewrite
// is amortized O(1) per sample and the maps cost < 0.01 byte per sample.
class QuantizedColumn {
 public:
  explicit QuantizedColumn(std::size_t max_bins = StreamingQuantizer::kMaxBins);

  // Makes room for one more sample (may renumber); false if memory ran out.
  bool reserve_next() noexcept {
    return samples_.reserve_next() && (!quantizer_.ids_exhausted() || renumber_for_next());
  }
  // Precondition: reserve_next() returned true since the last append.
  void append_reserved(double value) noexcept;
  bool append(double value) noexcept {
    if (!reserve_next()) return false;
    append_reserved(value);
    return true;
  }
  QuantizedColumnResult finalize();
  std::size_t size() const noexcept { return samples_.size(); }
  std::size_t memory_bytes() const noexcept;
  const StreamingQuantizer& quantizer() const noexcept { return quantizer_; }

 private:
  void start_new_epoch();
  bool renumber_for_next() noexcept;  // start_new_epoch, false if memory ran out

  struct Epoch {
    std::size_t first_sample = 0;
    // Start ids of this epoch -> start ids of the next one (set when it ends).
    std::vector<StreamingQuantizer::Id> exit_map;
    std::size_t start_ids = 0;
  };
  StreamingQuantizer quantizer_;
  ChunkedArray<StreamingQuantizer::Id> samples_;
  std::vector<Epoch> epochs_;
  std::vector<StreamingQuantizer::Id> scratch_;  // id -> new id, kIdSpace entries, made on first renumbering
};

}  // namespace tremor
