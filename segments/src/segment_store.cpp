#include "tremor/segment_store.hpp"

#include <cmath>
#include <new>
#include <utility>

namespace tremor {
namespace {

constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t signature_hash(const FeatureVector& features) noexcept {
  // Chained mixing: position matters, so (1,0) and (0,1) hash differently.
  std::uint64_t h = splitmix64(features.size());
  for (std::uint64_t value : features) h = splitmix64(h ^ splitmix64(value));
  return h;
}

SegmentStore::SegmentStore(std::size_t max_bins)
    : columns_([max_bins]<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<QuantizedColumn, kQuantizedCount>{((void)I, QuantizedColumn(max_bins))...};
      }(std::make_index_sequence<kQuantizedCount>{})) {}

bool SegmentStore::append(const QuantizedValues& values, const FeatureVector& features,
                          std::uint16_t closing_call) noexcept {
  // Reserve everything first so a failed allocation leaves no partial segment.
  bool reserved = signature_index_.reserve_next() && closing_call_.reserve_next();
  for (QuantizedColumn& column : columns_) reserved = reserved && column.reserve_next();
  std::uint32_t signature = 0;
  if (reserved && !signatures_.empty() && signatures_[last_signature_] == features) {
    signature = last_signature_;
  } else if (reserved) {
    try {
      auto [it, inserted] = signature_ids_.try_emplace(features, static_cast<std::uint32_t>(signatures_.size()));
      if (inserted) {
        try {
          signatures_.push_back(features);
        } catch (...) {
          signature_ids_.erase(it);
          throw;
        }
      }
      signature = it->second;
      last_signature_ = signature;
    } catch (const std::bad_alloc&) {
      reserved = false;
    }
  }
  if (!reserved) {
    ++dropped_;
    return false;
  }
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    columns_[m].append_reserved(values[m]);
    // Neumaier summation of the raw value (non-finite values count as 0, as in the bins).
    const double v = std::isfinite(values[m]) ? values[m] : 0.0;
    const double t = raw_totals_[m] + v;
    raw_compensation_[m] +=
        std::abs(raw_totals_[m]) >= std::abs(v) ? (raw_totals_[m] - t) + v : (v - t) + raw_totals_[m];
    raw_totals_[m] = t;
  }
  for (std::size_t f = 0; f < kFeatureCount; ++f) raw_feature_totals_[f] += features[f];
  signature_index_.push_reserved(signature);
  closing_call_.push_reserved(closing_call);
  return true;
}

FinalizedSegments SegmentStore::finalize() {
  FinalizedSegments out;
  out.segments = size();
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    QuantizedColumnResult column = columns_[m].finalize();
    out.bins[m] = std::move(column.bins);
    out.bin_index[m] = std::move(column.index);
    out.non_finite_values += columns_[m].quantizer().non_finite_count();
    out.raw_totals[m] = raw_totals_[m] + raw_compensation_[m];
  }
  out.signatures = signatures_;
  out.signature_index = signature_index_.to_vector();
  out.closing_call = closing_call_.to_vector();
  out.raw_feature_totals = raw_feature_totals_;
  out.dropped_segments = dropped_;
  return out;
}

std::size_t SegmentStore::memory_bytes() const noexcept {
  std::size_t bytes = sizeof(*this) - sizeof(columns_);
  for (const QuantizedColumn& column : columns_) bytes += column.memory_bytes();
  bytes += signature_index_.memory_bytes() + closing_call_.memory_bytes();
  bytes += signatures_.capacity() * sizeof(FeatureVector);
  // unordered_map: one node (key, value, next pointer, cached hash) per entry plus buckets.
  bytes += signature_ids_.size() * (sizeof(FeatureVector) + 4 * sizeof(void*)) +
           signature_ids_.bucket_count() * sizeof(void*);
  return bytes;
}

}  // namespace tremor
