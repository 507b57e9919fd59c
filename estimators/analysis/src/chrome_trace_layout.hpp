// Where each part of a run goes in its Chrome trace (chrome_trace.cpp): the
// shown ranks and their processes, the segments' times, each segment's
// critical rank (the one its lost time is charged to) and the per-cell
// values. It takes the options one by one: including chrome_trace.hpp here
// would make the two units include each other (repository.layers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "detail_cells.hpp"
#include "tremor/analysis/report.hpp"

namespace tremor::analysis::chrome_trace_detail {

// Process and thread ids start at 1: Perfetto takes pid and tid 0 for the
// kernel's idle task ("swapper") and shows them apart. Thread ids are unique
// over the whole trace, as Linux's are: rank r is r + 1, its injected track
// P + r + 1 (P: world size) and the Tremor track 2P + 1. Process-wide events
// (names, counters) carry the tid of the process's first thread.
constexpr std::int64_t pid_of_node(std::int32_t node_id) { return std::int64_t{node_id} + 1; }
constexpr std::int64_t tid_of_rank(std::int32_t rank) { return std::int64_t{rank} + 1; }

struct ShownRank {
  std::size_t row = 0;  // in the detail matrices
  std::int32_t rank = 0;
  std::int64_t pid = 0;  // its node's process
  std::string hostname;
};

// One rank's values in one segment; NaN where the file has none.
struct CellValues {
  double duration_s = 0.0;
  double mpi_s = 0.0;
  double io_s = 0.0;
  double work = 0.0;
  double bytes = 0.0;     // sent + received
  double io_bytes = 0.0;  // read + written
};

class TraceLayout {
 public:
  // `ranks`: the detail ranks to show (empty: all); [from_s, to_s]: the
  // window. Throws std::invalid_argument for a rank that is no detail rank.
  TraceLayout(const ReportInput& input, const std::vector<std::int32_t>& ranks, double from_s, double to_s,
              bool injected);

  std::vector<ShownRank> shown;  // in rank order
  std::size_t first_segment = 0;  // the window's segments: [first_segment, end_segment)
  std::size_t end_segment = 0;
  // Per segment, the detail row charged with its lost time: the rank the
  // others waited for when it is a detail rank, else the detail rank with the
  // most time outside MPI (as the diagnosis charges it); -1 without detail.
  std::vector<std::int64_t> critical_row;
  std::vector<std::int64_t> pid_of_row;
  std::int64_t tremor_pid = 0;  // after every node
  std::int64_t tremor_tid = 1;
  bool injected_tracks = false;

  std::int64_t time_ns(double seconds) const;
  std::int64_t start_ns(std::size_t segment) const { return segment ? end_ns_[segment - 1] : 0; }
  std::int64_t end_ns(std::size_t segment) const { return end_ns_[segment]; }
  std::int64_t run_end_ns() const { return end_ns_.empty() ? 0 : end_ns_.back(); }
  // Whether [begin_s, end_s] meets the window.
  bool overlaps(double begin_s, double end_s) const { return end_s >= from_s_ && begin_s <= to_s_; }

  double excess_s(std::size_t segment) const;
  double intrinsic_s(std::size_t segment) const;  // NaN outside usable groups
  bool interfered(std::size_t segment) const;
  CellValues cell(std::size_t row, std::size_t segment) const;

  bool shown_rank(std::int32_t rank) const;
  std::int64_t pid_of_rank(std::int32_t rank) const;
  std::int64_t injected_tid(std::int32_t rank) const { return world_size_ + tid_of_rank(rank); }
  // The tid of the first shown rank on the node of `pid`.
  std::int64_t main_tid(std::int64_t pid) const;
  std::vector<std::int32_t> shown_ranks() const;

 private:
  void choose_ranks(const std::vector<std::int32_t>& wanted);
  void place_segments();
  void find_critical_rows();
  double feature_sum(std::size_t row, std::size_t segment, Feature a, Feature b) const;

  const RunData& run_;
  const RunAnalysis& analysis_;
  double from_s_ = 0.0;
  double to_s_ = 0.0;
  std::int64_t world_size_ = 0;
  std::vector<std::int64_t> end_ns_;  // per segment, since the first segment's start
  detail::DetailCells duration_, mpi_, io_, work_;
};

}  // namespace tremor::analysis::chrome_trace_detail
