// Shared by the diagnosis's parts (diagnosis.cpp: when and what;
// diagnosis_where.cpp: where): the detail matrices and the per-segment charges.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "detail_cells.hpp"
#include "tremor/analysis/diagnosis_types.hpp"
#include "tremor/analysis/run_analysis.hpp"
#include "tremor/run_data.hpp"

namespace tremor::analysis::diagnosis_detail {

// The detail matrices of every metric (detail_cells.hpp).
class DetailView {
 public:
  DetailView(const RunData& run, std::size_t segments) {
    rows_ = run.detail.ranks.size();
    valid_ = rows_ > 0 && run.detail.segments == segments;
    for (std::size_t m = 0; m < kQuantizedCount; ++m) {
      cells_.emplace_back(run, static_cast<Quantized>(m));
      valid_ = valid_ && cells_.back().complete();
    }
  }
  bool valid() const { return valid_; }
  std::size_t rows() const { return rows_; }
  double value(Quantized metric, std::size_t row, std::size_t segment) const {
    return cells_[index(metric)](row, segment);
  }
  // Time outside MPI: compute and file I/O.
  double busy(std::size_t row, std::size_t segment) const {
    return std::max(0.0, value(Quantized::duration, row, segment) - value(Quantized::mpi_time, row, segment));
  }

 private:
  std::size_t rows_ = 0;
  bool valid_ = false;
  std::vector<detail::DetailCells> cells_;
};

struct SegmentCharges {
  // Per rank, summed over the segments it was last in: the others' wait for
  // its interference (at most each segment's primary lost time) and for its
  // extra work (imbalance).
  std::vector<double> interference_by_rank;
  std::vector<double> imbalance_by_rank;
  // Per segment the late rank's compute, MPI and I/O time; float: it is kept for every segment.
  std::vector<std::array<float, 3>> critical_path;
};

// row_of: the detail row of each rank, -1 when it is no detail rank.
SegmentCharges charge_segments(const RunData& run, const RunAnalysis& analysis, const DetailView& view,
                               const std::vector<std::int64_t>& row_of);

// Fills the per-rank arrays, slow_ranks, slow_nodes and imbalanced_ranks.
void name_ranks(const RunData& run, const RunAnalysis& analysis, const SegmentCharges& charges, Diagnosis& out);

}  // namespace tremor::analysis::diagnosis_detail
