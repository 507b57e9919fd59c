// The crash-recovery spill (docs/spill.md): each rank appends its segments
// to <stem>.r<rank>.spill while the run goes on, so a run that never reaches
// MPI_Finalize can still be analysed (`tremor analyze --recover`). MPI-free:
// the profiler encodes, the `tremor` tool decodes.
//
// Layout: a fixed 32-byte prefix (magic, version, text length, record size,
// text checksum), a text header of key=value lines, then blocks, one per
// append: a 32-byte block header (tag, first segment, counts, checksum of the
// block), the segment kinds first seen since the previous block, and one
// 16-byte record per segment (its six log codes and its kind). A block is
// written at most once per interval, so a boundary does nothing for the
// spill; a torn or corrupt block ends the stream and is dropped.
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
// 2: records gained off_cpu_time. 3: blocks of log-coded records.
inline constexpr std::uint32_t kSpillVersion = 3;
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

// One segment in a block: its values' log codes and its kind's index in the
// file's kind table (kinds are numbered in the order their blocks give them).
struct SpillSegmentRecord {
  std::array<std::uint16_t, kQuantizedCount> codes{};
  std::uint32_t kind = 0;
};
static_assert(sizeof(SpillSegmentRecord) == 2 * kQuantizedCount + 4, "packed 16-byte records");
inline constexpr std::size_t kSpillRecordBytes = sizeof(SpillSegmentRecord);

// A segment kind, given once, in the first block that has a segment of it.
struct SpillKindRecord {
  FeatureVector features{};
  std::uint16_t closing_call = 0;
  std::array<std::uint8_t, 6> padding{};
};
static_assert(sizeof(SpillKindRecord) == 8 * kFeatureCount + 8, "packed kind records");

struct SpillBlockHeader {
  std::uint32_t tag = 0;  // kBlockTag or kEndTag
  std::uint16_t end_reason = 0;  // SpillEnd, end blocks only
  std::uint16_t reserved = 0;
  std::uint64_t first_segment = 0;  // number of the block's first segment; for the end block, the count
  std::uint32_t segments = 0;       // SpillSegmentRecords in the block
  std::uint32_t kinds = 0;          // SpillKindRecords in the block, before the segments
  std::uint64_t checksum = 0;       // of this header before it, then of the block's records

  static constexpr std::uint32_t kBlockTag = 0x334b4c42;  // "BLK3"
  static constexpr std::uint32_t kEndTag = 0x33444e45;    // "END3"
};
static_assert(sizeof(SpillBlockHeader) == 32);

// A block's checksum over its header (up to the checksum) and its records.
std::uint64_t spill_block_checksum(const SpillBlockHeader& header, std::span<const char> records) noexcept;
// The prefix's checksum of the header text (the fuzzing harness repairs it to reach the parser behind it).
std::uint64_t spill_text_checksum(std::span<const char> text) noexcept;
// Appends one block (the kinds first given in it, then its segments) or the
// end block to `out`; may throw std::bad_alloc.
void append_spill_block(std::vector<char>& out, std::uint64_t first_segment, std::span<const SpillKindRecord> kinds,
                        std::span<const SpillSegmentRecord> segments);
void append_spill_end(std::vector<char>& out, std::uint64_t segment_count, SpillEnd reason);

// The same written in place, without copying the records (the profiler's
// path): a block takes spill_block_bytes; begin_spill_block writes the kinds
// and returns where the caller writes the segment records, then
// seal_spill_block writes the header. write_spill_end writes the
// kSpillEndBytes of the end block.
inline constexpr std::size_t kSpillEndBytes = sizeof(SpillBlockHeader);
constexpr std::size_t spill_block_bytes(std::size_t kinds, std::size_t segments) noexcept {
  return sizeof(SpillBlockHeader) + kinds * sizeof(SpillKindRecord) + segments * sizeof(SpillSegmentRecord);
}
char* begin_spill_block(char* block, std::span<const SpillKindRecord> kinds) noexcept;
void seal_spill_block(char* block, std::uint64_t first_segment, std::size_t kinds, std::size_t segments) noexcept;
void write_spill_end(char* out, std::uint64_t segment_count, SpillEnd reason) noexcept;

// One recovered segment, its values decoded from their log codes.
struct SpilledSegment {
  std::uint64_t sequence = 0;
  std::uint16_t closing_call = 0;
  QuantizedValues values{};
  FeatureVector features{};
};

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
  JobRecord job;  // job_* lines, each only where known
  std::string tremor_version;
  std::string mpi_flavour;
  std::string mpi_library_version;
  CounterKind counter_source = CounterKind::papi;
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

struct SpillFile {
  std::filesystem::path path;
  SpillHeader header;
  std::vector<SpilledSegment> segments;  // sequence 0..n-1, in order
  SpillEnd end = SpillEnd::none;
  std::uint64_t dropped_bytes = 0;  // a torn or corrupt tail that was ignored
  std::string dropped_reason;       // why the tail was dropped
};

// Reads and validates one spill file; std::nullopt with a one-line reason in
// `error` when the header is missing, corrupt, of another version or of a
// build with other metrics. A bad block ends the stream (counted as dropped).
std::optional<SpillFile> read_spill(const std::filesystem::path& path, std::string& error);
// Same, from bytes already in memory (unit tests, fuzzing).
std::optional<SpillFile> parse_spill(std::span<const char> bytes, std::string& error);

// Incremental reading (`tremor watch`): where the whole blocks read so far
// end in the file, and the kinds they gave.
struct SpillCursor {
  std::size_t offset = 0;
  std::vector<SpillKindRecord> kinds;
};
// The header of a file's first bytes (parse_spill's checks); the cursor is set after it.
std::optional<SpillFile> parse_spill_header(std::span<const char> bytes, SpillCursor& cursor, std::string& error);
// Appends the whole blocks of `tail` (the file's bytes from cursor.offset on)
// to `file`, moving the cursor past them; stops at a torn or bad block (its
// reason in file.dropped_reason, the cursor before it) or an end record
// (file.end). parse_spill is the header, then this over the rest.
void take_spill_blocks(std::span<const char> tail, SpillFile& file, SpillCursor& cursor);

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
// storing each rank's segments through SegmentStore as the profiler does
// (the decoded values encode to the same codes). Only the boundaries every rank recorded (the common prefix) are used:
// boundaries are global collectives, so segment s is the same interval on
// every rank, and the program-wide reductions (longest duration, late rank)
// are only right when every rank's row is present. std::nullopt with `error`
// for files of different runs, missing or repeated ranks, or no segment.
std::optional<RecoveredRun> recover_run(const std::vector<SpillFile>& files, std::string& error);

// "abort", "exit_without_finalize", "finalize_unsaved" or "unknown".
std::string_view partial_reason_code(SpillEnd end);

}  // namespace tremor
