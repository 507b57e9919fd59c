// The values of a run (run_file.hpp, validate_run): every time, duration and
// metric finite and non-negative, every rank, node and index in range. One
// set of rules for every reader: read_run applies them to each file, so
// `tremor analyze`, `compare`, `analyze --check` (tremor-plot) and the run
// file fuzzer see the same verdict; a recovered run gets them too.
#include <cmath>
#include <sstream>

#include "run_file_layout.hpp"
#include "tremor/run_file.hpp"

namespace tremor {
namespace {

std::string shown(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Fails with "<dataset>[<index>] = <value>: <rule>".
bool fail_at(std::string& error, const std::string& dataset, std::size_t index, const std::string& value,
             const std::string& rule) {
  error = "invalid value in " + dataset + "[" + std::to_string(index) + "] = " + value + ": " + rule;
  return false;
}

bool fail_attribute(std::string& error, const std::string& attribute, const std::string& value,
                    const std::string& rule) {
  error = "invalid value of the root attribute '" + attribute + "' = " + value + ": " + rule;
  return false;
}

constexpr const char* kNonNegative = "must be finite and >= 0";

bool non_negative(double value) { return std::isfinite(value) && value >= 0.0; }

template <typename Values>
bool all_non_negative(const Values& values, const std::string& dataset, std::string& error) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!non_negative(values[i])) return fail_at(error, dataset, i, shown(values[i]), kNonNegative);
  }
  return true;
}

// An id in [low, count), e.g. a rank in [0, world_size).
bool in_range(std::int64_t value, std::int64_t low, std::int64_t count) { return value >= low && value < count; }

}  // namespace

bool validate_run_metadata(const RunMetadata& meta, std::string& error) {
  if (meta.world_size < 1) {
    return fail_attribute(error, "world_size", std::to_string(meta.world_size), "a run has at least 1 process");
  }
  if (meta.node_count < 1 || meta.node_count > meta.world_size) {
    return fail_attribute(error, "node_count", std::to_string(meta.node_count),
                          "must be between 1 and world_size (" + std::to_string(meta.world_size) + ")");
  }
  for (const auto& [name, member] : layout::kMetadataNumbers) {
    if (!non_negative(meta.*member)) return fail_attribute(error, name, shown(meta.*member), kNonNegative);
  }
  return true;
}

namespace {

bool validate_ranks(const RunData& run, std::string& error) {
  const std::int64_t world = run.meta.world_size;
  for (std::size_t i = 0; i < run.ranks.size(); ++i) {
    const RankInfo& rank = run.ranks[i];
    if (rank.rank != static_cast<std::int64_t>(i)) {
      return fail_at(error, "/ranks/rank", i, std::to_string(rank.rank), "rank ids must be 0, 1, ... in order");
    }
    if (!in_range(rank.node_id, 0, run.meta.node_count)) {
      return fail_at(error, "/ranks/node_id", i, std::to_string(rank.node_id),
                     "must be in [0, node_count = " + std::to_string(run.meta.node_count) + ")");
    }
    if (!in_range(rank.local_rank, 0, world)) {
      return fail_at(error, "/ranks/local_rank", i, std::to_string(rank.local_rank), "must be in [0, world_size)");
    }
    // NaN: not measured (files written before these were recorded).
    for (const auto& [dataset, value] :
         {std::pair{"/ranks/run_queue_delay_s", rank.run_queue_delay_s}, std::pair{"/ranks/slept_s", rank.slept_s},
          std::pair{"/ranks/own_sleep_s", rank.own_sleep_s}, std::pair{"/ranks/injected_s", rank.injected_s}}) {
      if (!std::isnan(value) && !non_negative(value)) {
        return fail_at(error, dataset, i, shown(value), "must be >= 0 (or NaN: not measured)");
      }
    }
  }
  return true;
}

bool validate_bins(const RunData& run, std::string& error) {
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    const std::string group = "/bins/" + std::string(kQuantizedMetrics[m].name);
    const bool codes = run.meta.schema_version >= 3;
    const BinTable& bins = run.global_bins[m];
    for (std::size_t i = 0; i < bins.size(); ++i) {
      const Bin& bin = bins[i];
      if (!non_negative(bin.sum))
        return fail_at(error, group + (codes ? "/value" : "/sum"), i, shown(bin.sum), kNonNegative);
      if (!non_negative(bin.min))
        return fail_at(error, group + (codes ? "/value" : "/min"), i, shown(bin.min), kNonNegative);
      if (!non_negative(bin.max))
        return fail_at(error, group + (codes ? "/value" : "/max"), i, shown(bin.max), kNonNegative);
      if (bin.min > bin.max) return fail_at(error, group + "/min", i, shown(bin.min), "must not exceed max");
    }
  }
  return true;
}

bool validate_segments(const RunData& run, std::string& error) {
  const SegmentTable& segments = run.segments;
  for (const auto& [name, member] : layout::kSegmentNumbers) {
    if (!all_non_negative(segments.*member, std::string("/segments/") + name, error)) return false;
  }
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (!in_range(segments.late_rank[s], -1, run.meta.world_size)) {
      return fail_at(error, "/segments/late_rank", s, std::to_string(segments.late_rank[s]),
                     "must be a rank in [0, world_size = " + std::to_string(run.meta.world_size) + ") or -1");
    }
    if (segments.closing_call[s] >= run.meta.call_names.size()) {
      return fail_at(error, "/segments/closing_call", s, std::to_string(segments.closing_call[s]),
                     "must index /call_names (" + std::to_string(run.meta.call_names.size()) + " names)");
    }
  }
  return true;
}

bool validate_detail_and_totals(const RunData& run, std::string& error) {
  const std::vector<std::int32_t>& ranks = run.detail.ranks;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!in_range(ranks[r], 0, run.meta.world_size) || (r > 0 && ranks[r] <= ranks[r - 1])) {
      return fail_at(error, "/detail/ranks", r, std::to_string(ranks[r]),
                     "must be ascending ranks in [0, world_size = " + std::to_string(run.meta.world_size) + ")");
    }
  }
  for (std::size_t r = 0; r < run.raw_totals.size(); ++r) {
    for (std::size_t m = 0; m < kQuantizedCount; ++m) {
      if (!non_negative(run.raw_totals[r][m])) {
        return fail_at(error, "/totals/" + std::string(kQuantizedMetrics[m].name), r, shown(run.raw_totals[r][m]),
                       kNonNegative);
      }
    }
  }
  return true;
}

bool validate_injection(const RunData& run, std::string& error) {
  for (std::size_t i = 0; i < run.injection.size(); ++i) {
    const InjectionRecord& record = run.injection[i];
    if (!in_range(record.rank, 0, run.meta.world_size)) {
      return fail_at(error, "/injection/rank", i, std::to_string(record.rank), "must be in [0, world_size)");
    }
    for (const auto& [name, member] : layout::kInjectionNumbers) {
      if (!non_negative(record.*member)) {
        return fail_at(error, std::string("/injection/") + name, i, shown(record.*member), kNonNegative);
      }
    }
    if (record.segment < -1) {
      return fail_at(error, "/injection/segment", i, std::to_string(record.segment), "must be >= -1 (-1: unknown)");
    }
  }
  return true;
}

}  // namespace

bool validate_run(const RunData& run, std::string& error) {
  return validate_run_metadata(run.meta, error) && validate_ranks(run, error) && validate_bins(run, error) &&
         validate_segments(run, error) && validate_detail_and_totals(run, error) && validate_injection(run, error);
}

}  // namespace tremor
