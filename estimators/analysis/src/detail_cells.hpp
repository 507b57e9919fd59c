// The one reader of a per-rank detail cell: /detail/<metric> holds, per
// detail rank and segment, the index of a program-wide bin, and a cell's
// value is that bin's representative (docs/schema.md). Each bin's value is
// read once, so a cell costs two loads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor::analysis::detail {

class DetailCells {
 public:
  // `scale` multiplies every value (1e-9 turns a CPU-time work counter in ns into s).
  DetailCells(const RunData& run, Quantized metric, double scale = 1.0)
      : index_(run.detail.global_index[tremor::index(metric)]),
        rows_(run.detail.ranks.size()),
        segments_(run.detail.segments) {
    for (const Bin& bin : run.global_bins[tremor::index(metric)]) values_.push_back(scale * bin.rep());
  }
  std::size_t rows() const { return rows_; }
  std::size_t segments() const { return segments_; }
  // The matrix covers every detail rank and segment.
  bool complete() const { return rows_ > 0 && index_.size() == rows_ * segments_; }
  // A cell's value; nullopt past the table or for a bin that does not exist (a damaged file).
  std::optional<double> find(std::size_t row, std::size_t segment) const {
    const std::size_t cell = row * segments_ + segment;
    if (row >= rows_ || segment >= segments_ || cell >= index_.size()) return std::nullopt;
    const std::uint16_t bin = index_[cell];
    return bin < values_.size() ? std::optional<double>(values_[bin]) : std::nullopt;
  }
  // A cell's value, 0 where find() has none.
  double operator()(std::size_t row, std::size_t segment) const { return find(row, segment).value_or(0.0); }

 private:
  std::vector<double> values_;
  std::span<const std::uint16_t> index_;
  std::size_t rows_ = 0;
  std::size_t segments_ = 0;
};

}  // namespace tremor::analysis::detail
