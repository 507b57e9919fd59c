// Program-wide bin merge (docs/statistics.md#quantization): a pure function of every rank's
// finalised BinTable for one metric, so the result is reproducible whatever
// the gather order or the number of ranks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor {

inline constexpr std::size_t kGlobalMaxBins = 512;

struct ProgramBins {
  BinTable bins;  // ascending rep, <= max_bins
  // local_to_global[r][i]: global index of rank r's local bin i.
  std::vector<std::vector<std::uint16_t>> local_to_global;
};

// per_rank[r] is rank r's finalised table (ascending rep). Bins are sorted by
// (rep, rank, local index) and the closest adjacent pair (leftmost on ties) is
// merged until at most max_bins remain. The initial gaps are sorted once and
// gaps created by merges go into a 4-ary min-heap; stale gaps are skipped
// when popped (lazy deletion). O(N log N) for N input bins. max_bins is
// clamped to [1, 65536] (global indices are uint16).
ProgramBins merge_program_bins(std::span<const BinTable> per_rank, std::size_t max_bins = kGlobalMaxBins);

}  // namespace tremor
