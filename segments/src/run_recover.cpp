// Crash recovery: one run's spill files -> the program-wide RunData.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "tremor/environment_assembly.hpp"
#include "tremor/run_assembly.hpp"
#include "tremor/segment_store.hpp"
#include "tremor/spill.hpp"

namespace tremor {
namespace {

// The most telling end over all ranks: an abort explains the others being
// killed; an exit without MPI_Finalize explains ranks without an end record.
int strength(SpillEnd end) {
  switch (end) {
    case SpillEnd::abort:
      return 3;
    case SpillEnd::exit_without_finalize:
      return 2;
    case SpillEnd::finalize_unsaved:
      return 1;
    case SpillEnd::none:
      return 0;
  }
  return 0;
}

int configured_detail_ranks(const SpillHeader& header) {
  for (const auto& [name, value] : header.configuration) {
    if (name != "TREMOR_DETAIL_RANKS") continue;
    int parsed = 0;  // from_chars: a number too large for int is refused, not undefined as with atoi
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec == std::errc{} && end == value.data() + value.size() && parsed >= 1) return parsed;
  }
  return 256;
}

// The ranks of [0, world) without a file, the first few listed: a header's
// world size is not trusted with a loop or an allocation of its size.
std::string missing_ranks(const std::map<std::int32_t, const SpillFile*>& present, std::size_t world) {
  constexpr std::size_t kListed = 8;
  std::string listed;
  std::size_t shown = 0;
  std::size_t next = 0;  // the lowest rank not looked at
  auto list_below = [&](std::size_t end) {
    for (; next < end && shown < kListed; ++next, ++shown)
      listed += (listed.empty() ? "" : ", ") + std::to_string(next);
  };
  for (const auto& [rank, file] : present) {
    list_below(static_cast<std::size_t>(rank));
    next = static_cast<std::size_t>(rank) + 1;
  }
  list_below(world);
  const std::size_t missing = world - present.size();
  if (missing > shown) listed += " and " + std::to_string(missing - shown) + " more";
  return listed;
}

}  // namespace

std::string_view partial_reason_code(SpillEnd end) {
  switch (end) {
    case SpillEnd::abort:
      return "abort";
    case SpillEnd::exit_without_finalize:
      return "exit_without_finalize";
    case SpillEnd::finalize_unsaved:
      return "finalize_unsaved";
    case SpillEnd::none:
      return "unknown";
  }
  return "unknown";
}

std::optional<RecoveredRun> recover_run(const std::vector<SpillFile>& files, std::string& error) {
  if (files.empty()) {
    error = "no spill files";
    return std::nullopt;
  }
  const SpillHeader& first = files.front().header;
  const auto world = static_cast<std::size_t>(first.world_size);
  std::map<std::int32_t, const SpillFile*> present;  // by rank
  for (const SpillFile& file : files) {
    const SpillHeader& h = file.header;
    if (h.run_id != first.run_id || h.world_size != first.world_size) {
      error = file.path.string() + " belongs to another run (run id " + std::to_string(h.run_id) + ", " +
              std::to_string(h.world_size) + " ranks) than " + files.front().path.string() + " (run id " +
              std::to_string(first.run_id) + ", " + std::to_string(first.world_size) + " ranks)";
      return std::nullopt;
    }
    const auto [slot, added] = present.try_emplace(h.rank, &file);
    if (!added) {
      error = "rank " + std::to_string(h.rank) + " appears twice: " + slot->second->path.string() + " and " +
              file.path.string();
      return std::nullopt;
    }
  }
  if (present.size() != world) {
    error = "no spill file for rank(s) " + missing_ranks(present, world) + " of " + std::to_string(world);
    return std::nullopt;
  }
  std::vector<const SpillFile*> by_rank;  // every rank of [0, world) is present: at most one per file
  for (const auto& [rank, file] : present) by_rank.push_back(file);

  RecoveredRun out;
  std::size_t fewest = by_rank[0]->segments.size(), most = 0;
  SpillEnd reason = SpillEnd::none;
  int reason_rank = -1;
  const SpillHeader& root = by_rank[0]->header;
  for (std::size_t r = 0; r < world; ++r) {
    const SpillFile& file = *by_rank[r];
    fewest = std::min(fewest, file.segments.size());
    most = std::max(most, file.segments.size());
    if (strength(file.end) > strength(reason)) {
      reason = file.end;
      reason_rank = static_cast<int>(r);
    }
    std::string note = "rank " + std::to_string(r) + ": " + std::to_string(file.segments.size()) +
                       " segments, ended by " + std::string(describe(file.end));
    if (file.dropped_bytes > 0) {
      note += "; " + std::to_string(file.dropped_bytes) + " bytes dropped (" + file.dropped_reason + ")";
    }
    out.notes.push_back(std::move(note));
    for (const SpilledSegment& record : file.segments) {
      if (record.closing_call >= root.call_names.size()) {
        error = file.path.string() + ": segment " + std::to_string(record.sequence) + " has closing call " +
                std::to_string(record.closing_call) + " of " + std::to_string(root.call_names.size()) + " known";
        return std::nullopt;
      }
    }
  }
  if (fewest == 0) {
    error = "no segment was recorded on every rank (the fewest is 0); nothing to analyse";
    return std::nullopt;
  }
  if (fewest != most) {
    out.notes.push_back("ranks recorded between " + std::to_string(fewest) + " and " + std::to_string(most) +
                        " segments; the " + std::to_string(fewest) + " every rank recorded are analysed");
  }

  // Re-quantize every rank's raw records exactly as the recorder does.
  std::vector<FinalizedSegments> per_rank;
  std::vector<std::string> hosts;
  double longest = 0.0;
  for (std::size_t r = 0; r < world; ++r) {
    SegmentStore store;
    double elapsed = 0.0;
    for (std::size_t s = 0; s < fewest; ++s) {
      const SpilledSegment& record = by_rank[r]->segments[s];
      if (!store.append(record.values, record.features, record.closing_call)) {
        error = "out of memory while re-quantizing rank " + std::to_string(r);
        return std::nullopt;
      }
      const double duration = record.values[index(Quantized::duration)];
      if (std::isfinite(duration)) elapsed += duration;
    }
    longest = std::max(longest, elapsed);
    per_rank.push_back(store.finalize());
    hosts.push_back(by_rank[r]->header.host);
  }
  out.run = assemble_run(per_rank, fewest, configured_detail_ranks(root));

  RunMetadata& meta = out.run.meta;
  meta.tremor_version = root.tremor_version;
  meta.command_line = root.command_line;
  meta.mpi_flavour = root.mpi_flavour;
  meta.mpi_library_version = root.mpi_library_version;
  meta.world_size = root.world_size;
  meta.node_count = assign_nodes(hosts, out.run.ranks);
  // Spills of builds without /environment carry none: the run then has none.
  std::vector<ProcessEnvironment> environments;
  bool any_environment = false;
  for (std::size_t r = 0; r < world; ++r) {
    environments.push_back(decode_environment(by_rank[r]->header.environment));
    any_environment = any_environment || !by_rank[r]->header.environment.empty();
  }
  if (any_environment) out.run.environment = assemble_environment(out.run.ranks, environments);
  meta.counter_source = root.counter_source;
  meta.counter_events = root.counter_events;
  meta.counter_unit = root.counter_unit;
  meta.job_id = root.job_id;
  meta.job = root.job;
  meta.start_time_unix = root.start_time_unix;
  meta.run_time_s = longest;
  meta.end_time_unix = root.start_time_unix + longest;  // the last boundary every rank reached
  meta.configuration = root.configuration;
  meta.call_names = root.call_names;
  meta.partial = true;
  meta.partial_reason = std::string(partial_reason_code(reason));
  if (reason_rank >= 0) {
    out.notes.push_back("partial run: " + std::string(describe(reason)) + " on rank " + std::to_string(reason_rank));
  } else {
    out.notes.push_back("partial run: no rank wrote an end record (killed by a signal or the walltime)");
  }
  return out;
}

}  // namespace tremor
