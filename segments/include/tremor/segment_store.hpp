// Per-process store of closed segments: one CodeColumn per quantized metric,
// a dictionary of segment kinds (feature signature + closing call), and raw
// (unquantized) totals. 14 bytes per segment: 6 x 2-byte codes and a 2-byte
// kind id (4 bytes once a process has seen more than 65535 kinds).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tremor/metrics.hpp"
#include "tremor/code_column.hpp"
#include "tremor/run_data.hpp"

namespace tremor {

// Deterministic 64-bit hash of a signature, identical on every process, run
// and platform (splitmix64 mixing, no std::hash); the finalize driver sums it
// over ranks.
std::uint64_t signature_hash(const FeatureVector& features) noexcept;

struct FinalizedSegments {
  std::size_t segments = 0;
  std::array<BinTable, kQuantizedCount> bins;                         // per metric, one per code used, ascending
  std::array<std::vector<std::uint16_t>, kQuantizedCount> bin_index;  // per metric, [segments]
  std::vector<FeatureVector> signatures;                              // dictionary, first-seen order
  std::vector<std::uint32_t> signature_index;                         // [segments]
  std::vector<std::uint16_t> closing_call;                            // [segments]
  QuantizedValues raw_totals{};                                       // unquantized sums
  FeatureVector raw_feature_totals{};
  std::uint64_t non_finite_values = 0;  // values stored as 0 because they were NaN/Inf
  std::uint64_t dropped_segments = 0;   // not stored because memory ran out
};

class SegmentStore {
 public:
  SegmentStore() noexcept = default;

  // Records one closed segment. noexcept; returns false if memory ran out, in
  // which case nothing of the segment is stored (it is counted as dropped).
  bool append(const QuantizedValues& values, const FeatureVector& features, std::uint16_t closing_call) noexcept;
  // The same for a segment whose features and closing call the caller found
  // equal to those of the last segment appended: no comparison, no lookup;
  // its values wait in a small buffer and are coded a buffer at a time.
  // Precondition: a segment was appended.
  bool append_same_kind(const QuantizedValues& values) noexcept {
    if (pending_count_ == kPendingSegments && !store_pending()) [[unlikely]] {
      ++dropped_;
      return false;
    }
    pending_[pending_count_++] = values;
    return true;
  }
  // Codes and stores the segments append_same_kind left waiting (append,
  // finalize and the spill do it first); false if memory ran out, and then
  // those segments are dropped (counted).
  bool store_pending() noexcept;

  // Finalised tables; the store stays usable (appending may continue).
  FinalizedSegments finalize();
  std::size_t size() const noexcept { return records_.size() + pending_count_; }
  std::size_t signature_count() const noexcept { return kinds_.size(); }
  std::size_t memory_bytes() const noexcept;

  // What the crash-recovery spill copies, a block at a time; segments below
  // size() once store_pending() ran.
  std::size_t kind_count() const noexcept { return kinds_.size(); }
  const FeatureVector& kind_features(std::size_t kind) const noexcept { return kinds_[kind].features; }
  std::uint16_t kind_closing_call(std::size_t kind) const noexcept { return kinds_[kind].closing_call; }
  const std::array<std::uint16_t, kQuantizedCount>& codes(std::size_t segment) const noexcept {
    return records_[segment].codes;
  }
  std::uint32_t kind_of(std::size_t segment) const noexcept {
    const std::uint16_t kind = records_[segment].kind;
    return kind != kWideKind ? kind : wide_kind_of(segment);
  }
  // Segments [first, first + count) as the spill's 16-byte records (tremor/spill.hpp), to `out`.
  void copy_spill_records(std::size_t first, std::size_t count, char* out) const noexcept;

 private:
  // One segment: the metrics' codes and the id of its kind, 14 bytes.
  struct Record {
    std::array<std::uint16_t, kQuantizedCount> codes;
    std::uint16_t kind;
  };
  static_assert(sizeof(Record) == 2 * (kQuantizedCount + 1));
  // A kind id that does not fit: the record holds kWideKind and the id is in
  // wide_kinds_, in segment order.
  static constexpr std::uint32_t kWideKind = 0xFFFF;
  struct WideKind {
    std::uint64_t segment;
    std::uint32_t kind;
  };
  // A kind is what segments share: feature signature and closing call.
  struct Kind {
    FeatureVector features;
    std::uint16_t closing_call;
    bool operator==(const Kind&) const = default;
  };
  struct KindHasher {
    std::size_t operator()(const Kind& kind) const noexcept {
      return static_cast<std::size_t>(signature_hash(kind.features) ^ kind.closing_call);
    }
  };
  std::uint32_t wide_kind_of(std::size_t segment) const noexcept;
  // The id of a kind other than the last one, adding it if new; false if
  // memory ran out.
  bool new_kind_id(const FeatureVector& features, std::uint16_t closing_call, std::uint32_t* id) noexcept;
  // Counts the values that are not finite and sets them to 0.
  void count_non_finite(QuantizedValues& values) noexcept;
  // Codes, totals and record of a segment of a known kind; room for it is reserved.
  void store_reserved(const QuantizedValues& values, std::uint32_t kind) noexcept;

  // Values of segments of the last kind not coded yet: the boundary copies
  // six doubles, and the coding loop runs without calls.
  static constexpr std::size_t kPendingSegments = 32;
  std::array<QuantizedValues, kPendingSegments> pending_;
  std::size_t pending_count_ = 0;
  ChunkedArray<Record> records_;
  ChunkedArray<WideKind> wide_kinds_;
  std::unordered_map<Kind, std::uint32_t, KindHasher> kind_ids_;
  std::vector<Kind> kinds_;
  // Consecutive segments usually share their kind: compared before hashing.
  std::uint32_t last_kind_ = 0;
  std::uint32_t previous_kind_ = 0;  // the last kind before last_kind_
  // Plain sums: over 1e9 segments their rounding (< 1e-7 relative) stays far
  // below the codes' 1/2048, which is what the totals are there to check.
  QuantizedValues raw_totals_{};
  std::uint64_t non_finite_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace tremor
