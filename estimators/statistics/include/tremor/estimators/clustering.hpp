// Relative-distance 1-D clustering (docs/statistics.md#clustering) and grouping of clusters
// by exact communication/I-O signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tremor::estimators {

struct ClusterOptions {
  double threshold = 0.1;    ///< join iff d / min(|a|,|b|) < threshold (strict)
  std::size_t min_size = 5;  ///< clusters with fewer members are kept but not usable
};

/// One cluster: its members are `Clustering::order[first, first + size)`,
/// i.e. indices into the caller's input in ascending value order.
struct Cluster {
  std::size_t first = 0;
  std::size_t size = 0;
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  bool usable = false;
};

struct Clustering {
  std::vector<std::size_t> order;  ///< input indices sorted by value (NaNs dropped)
  std::vector<Cluster> clusters;   ///< ascending by value
  std::size_t dropped_nan = 0;

  [[nodiscard]] std::span<const std::size_t> members(const Cluster& cluster) const {
    return std::span<const std::size_t>(order).subspan(cluster.first, cluster.size);
  }
};

/// Single linkage on sorted values with the relative gap rule; O(n log n).
/// Equal values always join; a zero next to a non-zero splits; negatives use |.|.
Clustering cluster_by_relative_distance(std::span<const double> values, const ClusterOptions& options = {});

/// Items of one cluster that share an exact signature.
struct SignatureGroup {
  std::size_t cluster = 0;  ///< index into Clustering::clusters
  std::uint64_t signature = 0;
  std::vector<std::size_t> members;  ///< input indices, ascending
  bool usable = false;               ///< members.size() >= min_size
};

/// Splits every cluster by `signatures[input index]`. Groups are ordered by
/// cluster, then by ascending signature, so the result does not depend on input order.
std::vector<SignatureGroup> group_by_signature(const Clustering& clustering, std::span<const std::uint64_t> signatures,
                                               std::size_t min_size = 5);

}  // namespace tremor::estimators
