// The crash-recovery spill (docs/spill.md): each rank appends its raw
// per-segment records to <stem>.r<rank>.spill while the run goes on, so a run
// that never reaches MPI_Finalize can still be analysed (`tremor analyze
// --recover`). MPI-free: the profiler encodes, the `tremor` tool decodes.
//
// Layout: a fixed 32-byte prefix (magic, version, text length, record size,
// text checksum), a text header of key=value lines, then fixed-size records
// each carrying its own sequence number and checksum, so a torn or corrupt
// tail is detected and dropped.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tremor/metrics.hpp"
#include "tremor/run_data.hpp"

namespace tremor {

inline constexpr std::array<char, 8> kSpillMagic{'T', 'R', 'E', 'M', 'S', 'P', 'I', 'L'};
inline constexpr std::uint32_t kSpillVersion = 2;  // 2: records gained off_cpu_time
inline constexpr std::string_view kSpillExtension = ".spill";
inline constexpr std::size_t kSpillPrefixBytes = 32;
inline constexpr std::size_t kSpillMaxTextBytes = 1 << 20;

// Why the record stream ended; stored in the end record.
enum class SpillEnd : std::uint16_t {
  none = 0,                   // no end record: killed (signal, walltime) or lost power
  abort = 1,                  // the application called MPI_Abort
  exit_without_finalize = 2,  // the process exited without MPI_Finalize
  finalize_unsaved = 3,       // MPI_Finalize ran but the run file was not written
};
std::string_view describe(SpillEnd end);

struct SpillRecord {
  std::uint32_t tag = 0;  // kSegmentTag or kEndTag
  std::uint16_t closing_call = 0;
  std::uint16_t end_reason = 0;  // SpillEnd, end records only
  std::uint64_t sequence = 0;    // segment number; for the end record, the segment count
  QuantizedValues values{};
  FeatureVector features{};
  std::uint64_t checksum = 0;  // of every byte before it

  static constexpr std::uint32_t kSegmentTag = 0x31474553;  // "SEG1"
  static constexpr std::uint32_t kEndTag = 0x31444e45;      // "END1"
};
static_assert(sizeof(SpillRecord) == 16 + 8 * kQuantizedCount + 8 * kFeatureCount + 8,
              "spill records are packed fixed-size rows");
inline constexpr std::size_t kSpillRecordBytes = sizeof(SpillRecord);

// What each rank writes once, at MPI_Init.
struct SpillHeader {
  std::uint64_t run_id = 0;  // the same on every rank of one run
  std::int32_t rank = 0;
  std::int32_t world_size = 0;
  std::int64_t pid = 0;
  std::string host;
  std::string program;
  std::string command_line;
  std::string job_id;
  std::string tremor_version;
  std::string mpi_flavour;
  std::string mpi_library_version;
  std::string counter_source;
  std::string counter_unit;
  std::vector<std::string> counter_events;
  std::vector<std::pair<std::string, std::string>> configuration;
  std::vector<std::string> call_names;
  double start_time_unix = 0.0;
  double seconds_per_tick = 0.0;
  // The rank's /environment collection (encode_environment), one line per fact.
  std::string environment;
};

// Encoded header bytes (prefix + text). Newlines inside values become spaces.
std::vector<char> encode_spill_header(const SpillHeader& header);
// Fills in the checksum.
void seal(SpillRecord& record) noexcept;

struct SpillFile {
  std::filesystem::path path;
  SpillHeader header;
  std::vector<SpillRecord> segments;  // sequence 0..n-1, in order
  SpillEnd end = SpillEnd::none;
  std::uint64_t dropped_bytes = 0;  // a torn or corrupt tail that was ignored
  std::string dropped_reason;       // why the tail was dropped
};

// Reads and validates one spill file; std::nullopt with a one-line reason in
// `error` when the header is missing, corrupt, of another version or of a
// build with other metrics. A bad record ends the stream (counted as dropped).
std::optional<SpillFile> read_spill(const std::filesystem::path& path, std::string& error);
// Same, from bytes already in memory (unit tests, fuzzing).
std::optional<SpillFile> parse_spill(std::span<const char> bytes, std::string& error);

// Path of rank `rank`'s spill for a run stem ("<dir>/<name>-<time>-<pid>-<n>").
std::filesystem::path spill_path(const std::filesystem::path& stem, int rank);
// The spill files a user named: a stem or any of one run's .spill files
// (their siblings are found too), sorted by rank. Empty with `error` set when
// nothing matches.
std::vector<std::filesystem::path> find_spill_files(const std::vector<std::string>& names, std::string& error);

}  // namespace tremor

namespace tremor {

struct RecoveredRun {
  RunData run;                     // meta.partial set, meta.partial_reason a code
  std::vector<std::string> notes;  // one line per rank and per dropped tail
};

// Merges one run's spill files (every rank exactly once) into a RunData,
// re-quantizing each rank's raw records through SegmentStore as the profiler
// does. Only the boundaries every rank recorded (the common prefix) are used:
// boundaries are global collectives, so segment s is the same interval on
// every rank, and the program-wide reductions (longest duration, late rank)
// are only right when every rank's row is present. std::nullopt with `error`
// for files of different runs, missing or repeated ranks, or no segment.
std::optional<RecoveredRun> recover_run(const std::vector<SpillFile>& files, std::string& error);

// "abort", "exit_without_finalize", "finalize_unsaved" or "unknown".
std::string_view partial_reason_code(SpillEnd end);

}  // namespace tremor
