// Program-wide bin merges (docs/statistics.md#quantization): pure functions of
// every rank's finalised BinTable for one metric, so the result is
// reproducible whatever the gather order or the number of ranks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor {

// The paper's program-wide bin count, for merge_closest_bins.
inline constexpr std::size_t kPaperGlobalBins = 512;

struct ProgramBins {
  BinTable bins;  // ascending rep
  // local_to_global[r][i]: global index of rank r's local bin i.
  std::vector<std::vector<std::uint16_t>> local_to_global;
};

// Exact merge of log-coded tables (one bin per code, ascending): the union of
// the codes used, counts added. O(N + 65536) for N input bins.
ProgramBins merge_program_bins(std::span<const BinTable> per_rank);

// per_rank[r] is rank r's finalised table (ascending rep). Bins are sorted by
// (rep, rank, local index) and the closest adjacent pair (leftmost on ties) is
// merged until at most max_bins remain. The initial gaps are sorted once and
// gaps created by merges go into a 4-ary min-heap; stale gaps are skipped
// when popped (lazy deletion). O(N log N) for N input bins. max_bins is
// clamped to [1, 65536] (global indices are uint16).
// The paper's streaming-histogram merge, used to derive its 256/512 bins
// from the codes.
ProgramBins merge_closest_bins(std::span<const BinTable> per_rank, std::size_t max_bins = kPaperGlobalBins);

// Replaces every metric's program-wide codes by at most max_bins bins made
// with merge_closest_bins (the paper uses 512), for comparison with the
// literature: the detail indices follow, and every segment-table value
// becomes its new bin's representative (duration_upper_s its maximum).
void coarsen_to_paper_bins(RunData& run, std::size_t max_bins = kPaperGlobalBins);

}  // namespace tremor
