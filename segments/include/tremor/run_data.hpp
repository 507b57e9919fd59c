// The program-wide record of one run: what the finalize driver gathers, what
// the HDF5 file stores (docs/schema.md) and what the analysis reads. The
// in-process analysis and `tremor analyze` both start from a RunData, which is
// why they agree bit for bit.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tremor/counter_kind.hpp"
#include "tremor/environment.hpp"
#include "tremor/metrics.hpp"

namespace tremor {

// 2: /bins, /detail and /totals gained off_cpu_time. Version 1 files are
// still read (that metric as 0).
// 3: every bin is one log code (/bins/<metric>/code); older files are read
// as they are (their bins span several values).
// 4: /@counter_source is an HDF5 enum (CounterKind); older files store its
// name as a string, parsed when the file is read.
inline constexpr int kSchemaVersion = 5;
inline constexpr int kOldestReadableSchemaVersion = 1;

// The run's work counter: CounterKind (tremor/counter_kind.hpp, the run file's enum).

// One bin (docs/statistics.md#quantization): the representative is sum/count, the
// count-weighted mean; min and max keep the extremes for the EVT layer. Since
// schema 3 a bin is one log code (tremor/log_code.hpp), all four are the
// code's value, and `code` is set; bins merged to the paper's 256/512
// (merge_closest_bins) and those of older files span several values.
struct Bin {
  double sum = 0.0;
  std::uint64_t count = 0;
  double min = 0.0;
  double max = 0.0;
  std::uint16_t code = 0;
  double rep() const { return count ? sum / static_cast<double>(count) : 0.0; }
};
using BinTable = std::vector<Bin>;  // ascending rep

struct RankInfo {
  std::int32_t rank = 0;
  std::string hostname;
  std::int32_t node_id = 0;     // dense 0..nodes-1, by first rank on the node
  std::int32_t local_rank = 0;  // index of the rank within its node
  // Time the rank's MPI_Init thread waited runnable for a CPU between
  // the recorder's start in MPI_Init and MPI_Finalize (schedstat); NaN when
  // not measured.
  double run_queue_delay_s = std::numeric_limits<double>::quiet_NaN();
  // Time that thread was neither on a CPU nor waiting for one (asleep,
  // blocked) over the same interval; NaN when not measured.
  double slept_s = std::numeric_limits<double>::quiet_NaN();
  // Time the thread closing the segments blocked of its own accord outside
  // MPI and I/O calls (context-switch records), summed over the segments and
  // left out of their off_cpu_time; NaN when not told apart.
  double own_sleep_s = std::numeric_limits<double>::quiet_NaN();
  // Time the rank spent in delays planted by a stacked libtremor-inject, from
  // the injector's own running totals at MPI_Finalize (its log's spent_us
  // summed); NaN when no injector was loaded.
  double injected_s = std::numeric_limits<double>::quiet_NaN();
};

// The batch job the run belongs to, from the scheduler's variables on the
// root (its id is RunMetadata::job_id). A field the scheduler does not set
// is nullopt; scheduler is "" when no scheduler's job id was set.
struct JobRecord {
  std::string scheduler;  // slurm | pbs | lsf | flux | cobalt
  std::optional<std::string> name;
  std::optional<std::string> user;      // the scheduler's, else the process's
  std::optional<std::string> nodelist;  // Slurm's compact form, e.g. node[01-04]
  std::optional<std::string> step;      // Slurm's step id
  bool operator==(const JobRecord&) const = default;
};

struct RunMetadata {
  std::string tremor_version;
  std::int32_t schema_version = kSchemaVersion;
  std::string command_line;
  std::string mpi_flavour;          // "mpich" | "openmpi"
  std::string mpi_library_version;  // MPI_Get_library_version
  std::int32_t world_size = 0;
  std::int32_t node_count = 0;
  CounterKind counter_source = CounterKind::papi;
  std::vector<std::string> counter_events;
  std::string counter_unit;      // "instructions", "ns of CPU time", event unit
  std::string job_id;            // from the batch system, else ""
  JobRecord job;                 // the rest of the job's record
  double start_time_unix = 0.0;  // MPI_Init exit on rank 0
  double end_time_unix = 0.0;    // MPI_Finalize entry on rank 0
  double run_time_s = 0.0;       // init exit to finalize entry, max over ranks
  bool partial = false;          // recovered from a spill after a crash
  // Why the run is partial: abort | exit_without_finalize | finalize_unsaved
  // | unknown (no end record: killed); "" when complete.
  std::string partial_reason;
  // Effective configuration: every TREMOR_* setting with the value used.
  std::vector<std::pair<std::string, std::string>> configuration;
  std::vector<std::string> call_names;  // CallId -> name, for closing_call
};

// One row per segment, program-wide. Reductions over all ranks are exact;
// "sampled" fields come from the detail ranks (all ranks when P <= the bound).
struct SegmentTable {
  std::vector<double> duration_s;           // max over ranks of the duration bin rep
  std::vector<double> duration_upper_s;     // max over ranks of the duration bin max (GEV maxima)
  std::vector<double> work;                 // median over detail ranks of the work bin rep
  std::vector<double> mpi_time_s;           // median over detail ranks
  std::vector<double> io_time_s;            // median over detail ranks
  std::vector<std::uint64_t> signature;     // sum over ranks of hash(FeatureVector) mod 2^64
  std::vector<std::int32_t> late_rank;      // rank with the least time inside MPI: the others waited for it
  std::vector<double> late_wait_s;          // least wait in the closing collective over ranks (its own latency)
  std::vector<std::uint16_t> closing_call;  // index into RunMetadata::call_names
  std::size_t size() const { return duration_s.size(); }
};

// Per-segment detail of a bounded set of ranks (all when world_size <= bound).
struct DetailRanks {
  std::vector<std::int32_t> ranks;  // row r of every matrix below is ranks[r]
  std::size_t segments = 0;
  // Row-major [ranks x segments] global bin indices, one matrix per quantized metric.
  std::array<std::vector<std::uint16_t>, kQuantizedCount> global_index;
  // Row-major [ranks x segments] index into that rank's signature dictionary.
  std::vector<std::uint32_t> signature_index;
  // Concatenated dictionaries; rank r's entries start at signature_offset[r].
  std::vector<FeatureVector> signatures;
  std::vector<std::uint32_t> signature_offset;
};

// One injected delay (ground truth from libtremor-inject).
struct InjectionRecord {
  std::int32_t rank = 0;
  double time_s = 0.0;  // since the injector's init
  std::string call;
  double requested_us = 0.0;
  double spent_us = 0.0;
  std::int64_t segment = -1;  // the profiler's segment on that rank when the delay started; -1 unknown
};

struct RunData {
  RunMetadata meta;
  std::vector<RankInfo> ranks;                        // world_size entries
  std::array<BinTable, kQuantizedCount> global_bins;  // ascending; one per code used (schema 3)
  SegmentTable segments;
  DetailRanks detail;
  // Unquantized per-rank totals, [world_size] each: the analysis checks its
  // quantization error against them.
  std::vector<QuantizedValues> raw_totals;
  std::vector<FeatureVector> raw_feature_totals;
  std::vector<InjectionRecord> injection;
  RunEnvironment environment;  // empty in files written before /environment existed
};

}  // namespace tremor
