// The names the writer and the reader share (docs/schema.md). Metric
// datasets are named from metrics.def; the rest from these tables, so the two
// sides cannot drift apart.
#pragma once
#include <array>
#include <string_view>
#include <utility>

#include "tremor/run_data.hpp"

namespace tremor::layout {

inline constexpr std::string_view kSchemaVersionAttribute = "schema_version";

inline constexpr std::array kMetadataStrings = {
    std::pair{"tremor_version", &RunMetadata::tremor_version},
    std::pair{"command_line", &RunMetadata::command_line},
    std::pair{"mpi_flavour", &RunMetadata::mpi_flavour},
    std::pair{"mpi_library_version", &RunMetadata::mpi_library_version},
    std::pair{"counter_unit", &RunMetadata::counter_unit},
    std::pair{"job_id", &RunMetadata::job_id},
};
inline constexpr std::array kMetadataIntegers = {
    std::pair{"world_size", &RunMetadata::world_size},
    std::pair{"node_count", &RunMetadata::node_count},
};
inline constexpr std::array kMetadataNumbers = {
    std::pair{"start_time_unix", &RunMetadata::start_time_unix},
    std::pair{"end_time_unix", &RunMetadata::end_time_unix},
    std::pair{"run_time_s", &RunMetadata::run_time_s},
};
// An HDF5 enum over uint8 (CounterKind's names and values) since schema 4, a
// string before.
inline constexpr const char* kCounterSourceAttribute = "counter_source";
inline constexpr std::array<std::string_view, kCounterKinds.size()> kCounterKindNames = {
    to_string(CounterKind::papi), to_string(CounterKind::thread_cputime), to_string(CounterKind::thread_oncpu)};
static_assert(static_cast<std::size_t>(CounterKind::papi) == 0 &&
              static_cast<std::size_t>(CounterKind::thread_cputime) == 1 &&
              static_cast<std::size_t>(CounterKind::thread_oncpu) == 2);
// The job record beyond /@job_id: each attribute only where the scheduler
// set it (files without them read as no scheduler, fields unknown).
inline constexpr const char* kJobSchedulerAttribute = "job_scheduler";
inline constexpr std::array kJobStrings = {
    std::pair{"job_name", &JobRecord::name},
    std::pair{"job_user", &JobRecord::user},
    std::pair{"job_nodelist", &JobRecord::nodelist},
    std::pair{"job_step", &JobRecord::step},
};
inline constexpr const char* kPartialAttribute = "partial";
inline constexpr const char* kPartialReasonAttribute = "partial_reason";  // only when partial
inline constexpr const char* kCounterEvents = "/counter_events";
inline constexpr const char* kCallNames = "/call_names";

inline constexpr std::array kSegmentNumbers = {
    std::pair{"duration_s", &SegmentTable::duration_s},
    std::pair{"duration_upper_s", &SegmentTable::duration_upper_s},
    std::pair{"work", &SegmentTable::work},
    std::pair{"mpi_time_s", &SegmentTable::mpi_time_s},
    std::pair{"io_time_s", &SegmentTable::io_time_s},
    std::pair{"late_wait_s", &SegmentTable::late_wait_s},
};
inline constexpr const char* kSegmentSignature = "signature";
inline constexpr const char* kSegmentLateRank = "late_rank";
inline constexpr const char* kSegmentClosingCall = "closing_call";

// Schema 3: a bin is one log code; sum, min and max follow from its value.
inline constexpr const char* kBinCode = "code";
inline constexpr const char* kBinCount = "count";
inline constexpr const char* kBinValue = "value";
// Schemas 1 and 2: merged bins.
inline constexpr std::array kMergedBinColumns = {"sum", "count", "min", "max"};

inline constexpr std::array kInjectionNumbers = {
    std::pair{"time_s", &InjectionRecord::time_s},
    std::pair{"requested_us", &InjectionRecord::requested_us},
    std::pair{"spent_us", &InjectionRecord::spent_us},
};

}  // namespace tremor::layout
