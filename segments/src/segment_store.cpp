#include "tremor/segment_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>
#include <unordered_map>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tremor/spill.hpp"

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

namespace {

// Each metric's units per value (log_code.hpp): 2^30 for times, 1 for counts.
alignas(16) constexpr std::array<double, kQuantizedCount> kUnits = [] {
  std::array<double, kQuantizedCount> units{};
  for (std::size_t m = 0; m < kQuantizedCount; ++m)
    units[m] = code_scale(static_cast<Quantized>(m)) == CodeScale::seconds ? kUnitsPerSecond : 1.0;
  return units;
}();

#if defined(__SSE2__)
// encode_value for six finite values held as three pairs, without branches:
// the units are clamped to [1 - 2^-11, the largest double below 2^63], whose
// codes are 0 and kMaxCode, so the code is the bits shifted once (maxpd
// gives the bound for NaN and negative values too).
[[gnu::always_inline]] inline void encode_six(const __m128d (&pairs)[3],
                                              std::array<std::uint16_t, kQuantizedCount>& codes) noexcept {
  constexpr std::int64_t kBiasedOne = std::int64_t{1023} << kCodeFractionBits;
  const __m128d lowest = _mm_set1_pd(1.0 - 0x1p-11);
  const __m128d highest = _mm_set1_pd(0x1p63 - 0x1p10);
  const __m128i bias = _mm_set1_epi64x(kBiasedOne - 1);
  __m128i pair_codes[3];
#pragma GCC unroll 3
  for (int p = 0; p < 3; ++p) {
    const __m128d units = _mm_mul_pd(pairs[p], _mm_load_pd(&kUnits[2 * p]));
    const __m128d clamped = _mm_min_pd(_mm_max_pd(units, lowest), highest);
    pair_codes[p] = _mm_sub_epi64(_mm_srli_epi64(_mm_castpd_si128(clamped), 52 - kCodeFractionBits), bias);
  }
  // 64-bit lanes holding 16-bit codes to six adjacent words: a c b d as 32-bit
  // words, then a b c d, then their low halves.
  const __m128i four =
      _mm_shuffle_epi32(_mm_or_si128(pair_codes[0], _mm_slli_epi64(pair_codes[1], 32)), _MM_SHUFFLE(3, 1, 2, 0));
  const __m128i halves =
      _mm_shufflehi_epi16(_mm_shufflelo_epi16(four, _MM_SHUFFLE(3, 3, 2, 0)), _MM_SHUFFLE(3, 3, 2, 0));
  const __m128i first_four = _mm_shuffle_epi32(halves, _MM_SHUFFLE(3, 3, 2, 0));
  const __m128i last_two =
      _mm_shufflelo_epi16(_mm_shuffle_epi32(pair_codes[2], _MM_SHUFFLE(3, 3, 2, 0)), _MM_SHUFFLE(3, 3, 2, 0));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(codes.data()), first_four);
  const auto last = static_cast<std::uint32_t>(_mm_cvtsi128_si32(last_two));
  std::memcpy(&codes[4], &last, sizeof last);
}
#endif

}  // namespace

[[gnu::always_inline]] inline void SegmentStore::store_reserved(const QuantizedValues& values,
                                                                std::uint32_t kind) noexcept {
  static_assert(kQuantizedCount == 6);
  Record record;
#if defined(__SSE2__)
  __m128d pairs[3] = {_mm_loadu_pd(&values[0]), _mm_loadu_pd(&values[2]), _mm_loadu_pd(&values[4])};
  // x * 0 is 0 for every finite x and NaN otherwise: one test for all six.
  const __m128d zero = _mm_setzero_pd();
  const __m128d probe =
      _mm_add_pd(_mm_add_pd(_mm_mul_pd(pairs[0], zero), _mm_mul_pd(pairs[1], zero)), _mm_mul_pd(pairs[2], zero));
  if (_mm_movemask_pd(_mm_cmpunord_pd(probe, probe)) != 0) [[unlikely]] {
    QuantizedValues finite = values;
    count_non_finite(finite);  // non-finite values count as 0, in the codes and the totals
    for (int p = 0; p < 3; ++p) pairs[p] = _mm_loadu_pd(&finite[2 * p]);
  }
  for (int p = 0; p < 3; ++p)
    _mm_storeu_pd(&raw_totals_[2 * p], _mm_add_pd(_mm_loadu_pd(&raw_totals_[2 * p]), pairs[p]));
  encode_six(pairs, record.codes);
#else
  QuantizedValues finite = values;
  count_non_finite(finite);
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    record.codes[m] = encode_value(finite[m], code_scale(static_cast<Quantized>(m)));
    raw_totals_[m] += finite[m];
  }
#endif
  record.kind = static_cast<std::uint16_t>(std::min(kind, kWideKind));
  if (kind >= kWideKind) [[unlikely]]
    wide_kinds_.push_reserved({records_.size(), kind});
  records_.push_reserved(record);
}

bool SegmentStore::append(const QuantizedValues& values, const FeatureVector& features,
                          std::uint16_t closing_call) noexcept {
  if (pending_count_ != 0 && !store_pending()) [[unlikely]] {
    ++dropped_;
    return false;
  }
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
  store_reserved(values, kind);
  return true;
}

bool SegmentStore::store_pending() noexcept {
  const std::size_t count = std::exchange(pending_count_, 0);
#if defined(__SSE2__)
  // The common batch: one short kind id, room in the current chunk and
  // finite values (their sums stay finite): totals first, then codes, without
  // a test per segment.
  if (count != 0 && last_kind_ < kWideKind && records_.room() >= count) {
    __m128d totals[3];
    for (int p = 0; p < 3; ++p) totals[p] = _mm_loadu_pd(&raw_totals_[2 * p]);
    for (std::size_t i = 0; i < count; ++i)
      for (int p = 0; p < 3; ++p) totals[p] = _mm_add_pd(totals[p], _mm_loadu_pd(&pending_[i][2 * p]));
    const __m128d zero = _mm_setzero_pd();
    const __m128d probe =
        _mm_add_pd(_mm_add_pd(_mm_mul_pd(totals[0], zero), _mm_mul_pd(totals[1], zero)), _mm_mul_pd(totals[2], zero));
    if (_mm_movemask_pd(_mm_cmpunord_pd(probe, probe)) == 0) [[likely]] {
      for (int p = 0; p < 3; ++p) _mm_storeu_pd(&raw_totals_[2 * p], totals[p]);
      Record* const out = records_.claim(count);
      const auto kind = static_cast<std::uint16_t>(last_kind_);
      for (std::size_t i = 0; i < count; ++i) {
        const __m128d pairs[3] = {_mm_loadu_pd(&pending_[i][0]), _mm_loadu_pd(&pending_[i][2]),
                                  _mm_loadu_pd(&pending_[i][4])};
        Record record;
        encode_six(pairs, record.codes);
        record.kind = kind;
        out[i] = record;
      }
      return true;
    }
  }
#endif
  for (std::size_t i = 0; i < count; ++i) {
    if (!records_.reserve_next() || (last_kind_ >= kWideKind && !wide_kinds_.reserve_next())) [[unlikely]] {
      dropped_ += count - i;
      return false;
    }
    store_reserved(pending_[i], last_kind_);
  }
  return true;
}

void SegmentStore::copy_spill_records(std::size_t first, std::size_t count, char* out) const noexcept {
  constexpr std::size_t kChunk = decltype(records_)::kChunkSize;
  for (std::size_t s = first, end = first + count; s < end;) {
    // A run within one chunk: plain pointer steps.
    const Record* stored = &records_[s];
    const std::size_t run = std::min(end - s, kChunk - s % kChunk);
    for (std::size_t i = 0; i < run; ++i) {
      // Field by field into the record's place: codes, then the 4-byte kind.
      static_assert(offsetof(SpillSegmentRecord, kind) == sizeof(Record::codes));
      const std::uint32_t kind = stored[i].kind != kWideKind ? stored[i].kind : wide_kind_of(s + i);
      std::memcpy(out, stored[i].codes.data(), sizeof(Record::codes));
      std::memcpy(out + sizeof(Record::codes), &kind, sizeof kind);
      out += sizeof(SpillSegmentRecord);
    }
    s += run;
  }
}

FinalizedSegments SegmentStore::finalize() {
  store_pending();
  FinalizedSegments out;
  const std::size_t n = records_.size();
  out.segments = n;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    QuantizedColumnResult column =
        bin_codes(n, code_scale(static_cast<Quantized>(m)), [this, m](std::size_t s) { return records_[s].codes[m]; });
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
    for (std::size_t f = 0; f < kFeatureCount; ++f)
      out.raw_feature_totals[f] += segments_of_kind[k] * kinds_[k].features[f];
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
