// Building the program-wide RunData from per-rank segments. The profiler does
// the per-segment reductions with MPI at MPI_Finalize (finalize_gather.cpp);
// crash recovery does them in one process from the spill files. Both share
// the choice of detail ranks, the node numbering and the segment table.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tremor/run_data.hpp"
#include "tremor/segment_store.hpp"

namespace tremor {

// Ranks with per-segment detail: evenly spaced, rank 0 always included, at
// most 2^24 rank-segment cells.
std::vector<std::int32_t> detail_ranks(int world, int wanted, std::size_t segments);

// RankInfo for every rank from its host name (node ids dense, by first rank
// on the node); returns the node count.
std::int32_t assign_nodes(const std::vector<std::string>& hosts, std::vector<RankInfo>& ranks);

// Per-segment results of the reductions over all ranks.
struct SegmentReductions {
  std::vector<std::uint16_t> longest_index;  // max over ranks of the global duration bin index
  std::vector<double> least_mpi_s;           // min over ranks of the MPI-time bin rep
  std::vector<std::int32_t> least_mpi_rank;  // its rank (lowest on ties)
  std::vector<double> least_wait_s;          // min over ranks of the wait bin rep
  std::vector<std::uint64_t> signature_sum;  // sum over ranks of signature hashes, mod 2^64
};

// Fills run.segments from the reductions, run.global_bins and run.detail
// (whose matrices must already hold detail.segments columns).
void build_segment_table(RunData& run, const SegmentReductions& reductions,
                         std::span<const std::uint16_t> closing_call);

// The whole program-wide record from every rank's finalised segments, in one
// process: bins merged, reductions, detail and segment table, raw totals.
// Every rank must hold `segments` segments or more (the first are used).
// meta and ranks are left to the caller.
RunData assemble_run(std::span<const FinalizedSegments> per_rank, std::size_t segments, int detail_wanted);

}  // namespace tremor
