// Per-process store of closed segments: one QuantizedColumn per quantized
// metric, a dictionary of feature signatures, the closing call, and raw
// (unquantized) totals. About 18 bytes per segment: 6 x 2-byte bin ids,
// a 4-byte signature index and a 2-byte call id (docs/schema.md).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tremor/metrics.hpp"
#include "tremor/quantizer.hpp"
#include "tremor/run_data.hpp"

namespace tremor {

// Deterministic 64-bit hash of a signature, identical on every process, run
// and platform (splitmix64 mixing, no std::hash); the finalize driver sums it
// over ranks.
std::uint64_t signature_hash(const FeatureVector& features) noexcept;

struct FinalizedSegments {
  std::size_t segments = 0;
  std::array<BinTable, kQuantizedCount> bins;                        // per metric, <= 256, ascending rep
  std::array<std::vector<std::uint8_t>, kQuantizedCount> bin_index;  // per metric, [segments]
  std::vector<FeatureVector> signatures;                             // dictionary, first-seen order
  std::vector<std::uint32_t> signature_index;                        // [segments]
  std::vector<std::uint16_t> closing_call;                           // [segments]
  QuantizedValues raw_totals{};                                      // unquantized sums
  FeatureVector raw_feature_totals{};
  std::uint64_t non_finite_values = 0;  // values stored as 0 because they were NaN/Inf
  std::uint64_t dropped_segments = 0;   // not stored because memory ran out
};

class SegmentStore {
 public:
  explicit SegmentStore(std::size_t max_bins = StreamingQuantizer::kMaxBins);

  // Records one closed segment. noexcept; returns false if memory ran out, in
  // which case nothing of the segment is stored (it is counted as dropped).
  bool append(const QuantizedValues& values, const FeatureVector& features, std::uint16_t closing_call) noexcept;

  // Finalised tables; the store stays usable (appending may continue).
  FinalizedSegments finalize();
  std::size_t size() const noexcept { return closing_call_.size(); }
  std::size_t signature_count() const noexcept { return signatures_.size(); }
  std::size_t memory_bytes() const noexcept;

 private:
  struct SignatureHasher {
    std::size_t operator()(const FeatureVector& f) const noexcept {
      return static_cast<std::size_t>(signature_hash(f));
    }
  };
  std::array<QuantizedColumn, kQuantizedCount> columns_;
  std::unordered_map<FeatureVector, std::uint32_t, SignatureHasher> signature_ids_;
  std::vector<FeatureVector> signatures_;
  // Consecutive segments usually share their signature: compared before hashing.
  std::uint32_t last_signature_ = 0;
  ChunkedArray<std::uint32_t> signature_index_;
  ChunkedArray<std::uint16_t> closing_call_;
  // Neumaier-compensated sums: totals stay exact to rounding over 1e9 segments.
  QuantizedValues raw_totals_{};
  QuantizedValues raw_compensation_{};
  FeatureVector raw_feature_totals_{};
  std::uint64_t dropped_ = 0;
};

}  // namespace tremor
