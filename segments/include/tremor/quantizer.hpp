// Streaming histogram quantizer (STATISTICS.md §7, Ben-Haim & Tom-Tov 2010).
//
// Bins are kept as parallel arrays sorted by rep = sum/count. An insert is a
// binary search and, when the table is full, a look-up of the closest pair of
// "bins + new value" followed by a single shift of the slots between the new
// value and that pair. The closest stored pair comes from a min-heap of gaps
// invalidated lazily: each slot holds a ticket for the gap to its right, a
// changed gap gets a new ticket and entries whose ticket is dead are skipped.
// Ties go to the lower pair (entries are ordered by gap, then by the left
// bin's rep), exactly as a left-to-right scan would. Should rounding ever make
// two reps equal or out of order, the heap is switched off and a full scan
// used until the order is strict again. No allocation after construction.
//
#pragma once
#include <array>
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
  // Copies keep the heap's full capacity, so inserts never allocate.
  StreamingQuantizer(const StreamingQuantizer& other);
  StreamingQuantizer& operator=(const StreamingQuantizer& other);
  StreamingQuantizer(StreamingQuantizer&&) noexcept = default;
  StreamingQuantizer& operator=(StreamingQuantizer&&) noexcept = default;

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
  bool rebuild_heap() noexcept;  // false (heap unusable) unless reps strictly increase
  struct GapEntry;
  const GapEntry* least_stored_gap() noexcept;
  void renew_gap(std::size_t slot) noexcept;
  bool ordered_around(std::size_t slot) const noexcept;

  struct GapEntry {
    double gap;       // rep[slot + 1] - rep[slot] when pushed
    double left_rep;  // finds the slot (reps are strictly increasing) and breaks ties
    std::uint32_t ticket;
  };

  static constexpr std::size_t kSlots = kMaxBins;
  std::size_t max_bins_;
  std::size_t size_ = 0;
  std::array<double, kSlots> rep_{};
  std::array<double, kSlots> sum_{};
  std::array<std::uint64_t, kSlots> count_{};
  std::array<double, kSlots> min_{};
  std::array<double, kSlots> max_{};
  std::array<Id, kSlots> id_{};
  // Tickets are issued afresh after each heap rebuild, one per changed gap,
  // so there are at most as many as the heap has room for (plus the dead ticket).
  std::array<std::uint32_t, kSlots> ticket_{};  // of the gap to the slot's right
  std::vector<GapEntry> heap_;  // capacity fixed at construction (~50 KB for 256 bins)
  std::vector<std::uint8_t> ticket_alive_;
  std::uint32_t next_ticket_ = 0;
  std::uint32_t dead_ticket_ = 0;  // held by the last slot and by a gap being replaced
  bool heap_active_ = false;  // only ever true while the table is full
  std::vector<Id> forward_;  // kIdSpace entries, allocated once: insert never allocates
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
