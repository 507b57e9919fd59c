// What the diagnosis finds (docs/report.md#diagnosis), part of RunAnalysis:
// slow ranks and nodes, slow windows, the compute / MPI / I/O split and the
// speed map. Filled by diagnose_run (diagnosis.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tremor::analysis {

// A rank (or node) the others waited for beyond what its work needs, named
// when its charge stands out of an equal share by more than clean runs show
// (kMinNamedExcessPercent, docs/statistics.md#where). Charges are parts of
// the primary lost time: all ranks' together are at most the headline.
struct SlowRank {
  std::int32_t rank = 0;
  std::int32_t node_id = 0;
  std::string hostname;
  double lost_percent = 0.0;      // 100 * time the others waited for its interference / run time
  double last_share = 0.0;        // share of all segments it arrived last
  std::size_t last_segments = 0;  // segments it arrived last
  std::string kind = "slow";      // always "slow": extra work is imbalance (ImbalancedRank), never lost time
  double time_ratio = 0.0;        // its time outside MPI / the other ranks' median (NaN unknown)
  double work_ratio = 0.0;        // its work / the other ranks' median (NaN unknown)
};
struct SlowNode {
  std::int32_t node_id = 0;
  std::string hostname;
  std::size_t ranks = 0;
  double lost_percent = 0.0;
  double last_share = 0.0;
  std::size_t last_segments = 0;
  std::string kind = "slow";
  double time_ratio = 0.0;  // per-rank means of the node against the other nodes' median
  double work_ratio = 0.0;
};

// A rank with more work than the others (load imbalance of the application,
// not interference): the time the others waited for its extra work is
// reported here and never in the lost time.
struct ImbalancedRank {
  std::int32_t rank = 0;
  std::int32_t node_id = 0;
  std::string hostname;
  double extra_work = 0.0;        // its work / the other ranks' median - 1 (exact totals)
  double wait_percent = 0.0;      // 100 * time the others waited for its extra work / run time
  double last_share = 0.0;        // share of all segments it arrived last
};

// A contiguous window in which segments ran slower than their intrinsic time.
struct Episode {
  std::size_t first_segment = 0;
  std::size_t last_segment = 0;  // inclusive
  double start_s = 0.0;          // since MPI_Init
  double end_s = 0.0;
  double start_unix = 0.0;  // wall clock (NaN when the run's start is unknown)
  double end_unix = 0.0;
  double lost_percent = 0.0;        // primary charges inside the window / run time
  std::vector<std::int32_t> ranks;  // last at its delayed boundaries, most often first
};

struct ComponentShares {  // percent of the run time
  double compute = 0.0;
  double mpi = 0.0;
  double io = 0.0;
};

// Normalised speed (intrinsic / actual) per detail rank and time bin.
struct SpeedMap {
  std::vector<std::int32_t> ranks;  // rows
  std::vector<double> edges_s;      // bins + 1 edges, s since MPI_Init
  std::vector<double> speed;        // rows x bins, row-major; NaN where no usable segment
};

struct Diagnosis {
  bool available = false;            // false without an estimate or without detail ranks
  std::vector<SlowRank> slow_ranks;  // descending lost_percent
  std::vector<SlowNode> slow_nodes;
  std::vector<ImbalancedRank> imbalanced_ranks;  // descending wait_percent
  std::vector<Episode> episodes;  // in time order
  ComponentShares run_components;
  ComponentShares lost_components;  // sums to about lost_percent
  SpeedMap speed;
  // Every rank, in rank order (for /analysis/diagnosis/ranks).
  std::vector<double> rank_last_share;
  std::vector<double> rank_lost_percent;
  std::vector<double> rank_time_ratio;
  std::vector<double> rank_work_ratio;
  std::vector<double> rank_imbalance_percent;  // the others' wait for its extra work, % of run
  // The naming rule's reference: an equal share of all charges plus
  // kMinNamedExcessPercent, % of run (a rank is named above it).
  double named_above_percent = 0.0;
};

}  // namespace tremor::analysis
