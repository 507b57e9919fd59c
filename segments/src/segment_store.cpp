#include "tremor/segment_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <unordered_map>
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

bool SegmentStore::new_kind_id(const FeatureVector& features, std::uint16_t closing_call, std::uint32_t* id) noexcept {
  // A loop that alternates two kinds (a file written every n-th iteration)
  // finds the other one here, without hashing.
  if (!kinds_.empty() && kinds_[previous_kind_].closing_call == closing_call &&
      kinds_[previous_kind_].features == features) {
    std::swap(last_kind_, previous_kind_);
    *id = last_kind_;
    return true;
  }
  try {
    const Kind key{features, closing_call};
    auto [it, inserted] = kind_ids_.try_emplace(key, static_cast<std::uint32_t>(kinds_.size()));
    if (inserted) {
      try {
        kinds_.push_back(key);
      } catch (...) {
        kind_ids_.erase(it);
        throw;
      }
    }
    previous_kind_ = last_kind_;
    last_kind_ = it->second;
    *id = last_kind_;
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

void SegmentStore::count_non_finite(QuantizedValues& values) noexcept {
  for (double& value : values) {
    if (!std::isfinite(value)) {
      value = 0.0;  // its code is 0 either way
      ++non_finite_;
    }
  }
}

bool SegmentStore::append(const QuantizedValues& values, const FeatureVector& features,
                          std::uint16_t closing_call) noexcept {
  static constexpr auto kScales = [] {
    std::array<CodeScale, kQuantizedCount> scales{};
    for (std::size_t m = 0; m < kQuantizedCount; ++m) scales[m] = code_scale(static_cast<Quantized>(m));
    return scales;
  }();
  // Reserve everything first so a failed allocation leaves no partial segment.
  // Consecutive segments usually share their kind: compared before hashing.
  std::uint32_t kind = last_kind_;
  const bool same_kind =
      !kinds_.empty() && kinds_[kind].closing_call == closing_call && kinds_[kind].features == features;
  if (!records_.reserve_next() || (!same_kind && !new_kind_id(features, closing_call, &kind)) ||
      (kind >= kWideKind && !wide_kinds_.reserve_next())) [[unlikely]] {
    ++dropped_;
    return false;
  }
  QuantizedValues finite = values;
  // x * 0 is 0 for every finite x and NaN otherwise: one test for all six,
  // two at a time.
  static_assert(kQuantizedCount == 6);
  using Pair = double __attribute__((vector_size(16)));
  Pair pairs[3];
  std::memcpy(pairs, finite.data(), sizeof pairs);
  const Pair probe = pairs[0] * 0.0 + pairs[1] * 0.0 + pairs[2] * 0.0;
  if (probe[0] + probe[1] != 0.0) [[unlikely]]
    count_non_finite(finite);  // non-finite values count as 0, in the codes and the totals
  Record record;
#pragma GCC unroll 6  // each metric's scale becomes a constant
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    record.codes[m] = encode_value(finite[m], kScales[m]);
    raw_totals_[m] += finite[m];
  }
  record.kind = static_cast<std::uint16_t>(std::min(kind, kWideKind));
  if (kind >= kWideKind) [[unlikely]]
    wide_kinds_.push_reserved({records_.size(), kind});
  records_.push_reserved(record);
  return true;
}

FinalizedSegments SegmentStore::finalize() {
  FinalizedSegments out;
  const std::size_t n = records_.size();
  out.segments = n;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    QuantizedColumnResult column = bin_codes(n, code_scale(static_cast<Quantized>(m)),
                                             [this, m](std::size_t s) { return records_[s].codes[m]; });
    out.bins[m] = std::move(column.bins);
    out.bin_index[m] = std::move(column.index);
    out.raw_totals[m] = raw_totals_[m];
  }
  out.non_finite_values = non_finite_;
  // Signatures in first-seen order: kinds were added in segment order.
  struct FeatureHasher {
    std::size_t operator()(const FeatureVector& f) const noexcept {
      return static_cast<std::size_t>(signature_hash(f));
    }
  };
  std::unordered_map<FeatureVector, std::uint32_t, FeatureHasher> signature_of;
  std::vector<std::uint32_t> signature_of_kind(kinds_.size());
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    auto [it, inserted] =
        signature_of.try_emplace(kinds_[k].features, static_cast<std::uint32_t>(out.signatures.size()));
    if (inserted) out.signatures.push_back(kinds_[k].features);
    signature_of_kind[k] = it->second;
  }
  out.signature_index.resize(n);
  out.closing_call.resize(n);
  std::vector<std::uint64_t> segments_of_kind(kinds_.size(), 0);
  std::size_t next_wide = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const std::uint32_t kind = records_[s].kind == kWideKind ? wide_kinds_[next_wide++].kind : records_[s].kind;
    out.signature_index[s] = signature_of_kind[kind];
    out.closing_call[s] = kinds_[kind].closing_call;
    ++segments_of_kind[kind];
  }
  // Exact feature totals from the kinds (the features are integers).
  for (std::size_t k = 0; k < kinds_.size(); ++k)
    for (std::size_t f = 0; f < kFeatureCount; ++f) out.raw_feature_totals[f] += segments_of_kind[k] * kinds_[k].features[f];
  out.dropped_segments = dropped_;
  return out;
}

std::uint32_t SegmentStore::wide_kind_of(std::size_t segment) const noexcept {
  std::size_t low = 0, high = wide_kinds_.size();  // the entry of this segment, by binary search
  while (high - low > 1) {
    const std::size_t middle = (low + high) / 2;
    if (wide_kinds_[middle].segment <= segment) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return wide_kinds_[low].kind;
}

std::size_t SegmentStore::memory_bytes() const noexcept {
  std::size_t bytes = sizeof(*this);
  bytes += records_.memory_bytes() + wide_kinds_.memory_bytes();
  bytes += kinds_.capacity() * sizeof(Kind);
  // unordered_map: one node (key, value, next pointer, cached hash) per entry plus buckets.
  bytes += kind_ids_.size() * (sizeof(Kind) + 4 * sizeof(void*)) + kind_ids_.bucket_count() * sizeof(void*);
  return bytes;
}

}  // namespace tremor
