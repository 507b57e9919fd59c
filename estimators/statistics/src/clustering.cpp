#include "tremor/estimators/clustering.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <utility>

namespace tremor::estimators {
namespace {

bool joins(double lower, double upper, double threshold) {
  const double gap = upper - lower;
  if (gap == 0.0) return true;
  const double smaller_magnitude = std::min(std::fabs(lower), std::fabs(upper));
  if (smaller_magnitude == 0.0) return false;
  // Canonical division form with a strict '<': 10 → 11 (exactly 0.1) splits.
  return gap / smaller_magnitude < threshold;
}

// Maps a non-NaN double to an unsigned key with the same order (−0 sorts before +0,
// which is harmless: they are equal and always join).
std::uint64_t order_preserving_key(double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  return (bits & kSignBit) ? ~bits : (bits | kSignBit);
}

struct KeyedIndex {
  std::uint64_t key;
  std::uint64_t index;
};

// LSD radix sort, 16-bit digits; passes whose digit is constant are skipped.
// Stable, so equal values keep input order, exactly like sorting (value, index) pairs.
// About 5× faster than std::sort for 1e6 values, which the 150 ms budget needs.
void radix_sort(std::vector<KeyedIndex>& items) {
  std::vector<KeyedIndex> buffer(items.size());
  constexpr int kDigitBits = 16;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
  std::vector<std::size_t> counts(kBuckets);
  for (int shift = 0; shift < 64; shift += kDigitBits) {
    std::fill(counts.begin(), counts.end(), 0);
    for (const KeyedIndex& item : items) ++counts[(item.key >> shift) & (kBuckets - 1)];
    if (counts[(items.front().key >> shift) & (kBuckets - 1)] == items.size()) continue;
    std::size_t offset = 0;
    for (std::size_t& count : counts) {
      const std::size_t bucket_size = count;
      count = offset;
      offset += bucket_size;
    }
    for (const KeyedIndex& item : items) buffer[counts[(item.key >> shift) & (kBuckets - 1)]++] = item;
    items.swap(buffer);
  }
}

}  // namespace

Clustering cluster_by_relative_distance(std::span<const double> values, const ClusterOptions& options) {
  Clustering result;
  std::vector<KeyedIndex> keyed;
  keyed.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      ++result.dropped_nan;
      continue;
    }
    keyed.push_back({order_preserving_key(values[i]), i});
  }
  if (!keyed.empty()) radix_sort(keyed);
  result.order.resize(keyed.size());
  std::vector<double> sorted(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    result.order[i] = keyed[i].index;
    sorted[i] = values[keyed[i].index];
  }

  auto close_cluster = [&](std::size_t first, std::size_t end, double sum) {
    Cluster cluster;
    cluster.first = first;
    cluster.size = end - first;
    cluster.min = sorted[first];
    cluster.max = sorted[end - 1];
    cluster.mean = sum / static_cast<double>(cluster.size);
    cluster.usable = cluster.size >= options.min_size;
    result.clusters.push_back(cluster);
  };
  if (sorted.empty()) return result;
  std::size_t first = 0;
  double sum = sorted[0];
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (!joins(sorted[i - 1], sorted[i], options.threshold)) {
      close_cluster(first, i, sum);
      first = i;
      sum = 0.0;
    }
    sum += sorted[i];
  }
  close_cluster(first, sorted.size(), sum);
  return result;
}

std::vector<SignatureGroup> group_by_signature(const Clustering& clustering, std::span<const std::uint64_t> signatures,
                                               std::size_t min_size) {
  std::vector<SignatureGroup> groups;
  std::vector<std::pair<std::uint64_t, std::size_t>> keyed;
  for (std::size_t c = 0; c < clustering.clusters.size(); ++c) {
    keyed.clear();
    for (const std::size_t index : clustering.members(clustering.clusters[c])) {
      keyed.emplace_back(signatures[index], index);
    }
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < keyed.size();) {
      SignatureGroup group;
      group.cluster = c;
      group.signature = keyed[i].first;
      for (; i < keyed.size() && keyed[i].first == group.signature; ++i) {
        group.members.push_back(keyed[i].second);
      }
      group.usable = group.members.size() >= min_size;
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

}  // namespace tremor::estimators
