// The HDF5 run file (docs/schema.md): written once per run, read back by
// `tremor analyze`, extended later by the analysis (RunFileAppender).
// Nothing here throws on a bad file or prints HDF5's error stack: failures
// come back as false / std::nullopt with a one-line reason in `error`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tremor/run_data.hpp"

namespace tremor {

enum class ExistingFile {
  refuse,                  // the path must not exist (H5F_ACC_EXCL)
  fill_empty_reservation,  // the path may be an empty file made by reserve_output_files()
};

// Creates the file and writes the whole run. Never overwrites data: an
// existing non-empty file is refused. On failure the partial file is removed.
bool write_run(const std::filesystem::path& path, const RunData& run, std::string& error,
               ExistingFile existing = ExistingFile::refuse);

// Reads and validates a run file (schema version, presence, shapes, index
// ranges, then validate_run); std::nullopt with the reason in `error` on any
// problem. A file HDF5 finds damaged (a checksum error) is reported as such.
std::optional<RunData> read_run(const std::filesystem::path& path, std::string& error);

// The values of a run (run_file_validate.cpp): times, durations and metrics
// finite and >= 0, world size >= 1, rank, node, call and bin ids in range.
// false with "invalid value in <dataset>[<i>] = <v>: <rule>" in `error`.
bool validate_run(const RunData& run, std::string& error);
bool validate_run_metadata(const RunMetadata& meta, std::string& error);

// Adds groups, datasets and attributes to an existing run file (Tremor's
// own: it is edited in memory and replaced atomically at close(), so a full
// file system leaves the original intact). Group paths are absolute
// ("/analysis/groups"); missing groups are created; an existing dataset or
// attribute is never replaced (the call fails instead).
class RunFileAppender {
 public:
  static std::optional<RunFileAppender> open(const std::filesystem::path& path, std::string& error);
  RunFileAppender(RunFileAppender&& other) noexcept;
  RunFileAppender& operator=(RunFileAppender&& other) noexcept;
  RunFileAppender(const RunFileAppender&) = delete;
  RunFileAppender& operator=(const RunFileAppender&) = delete;
  ~RunFileAppender();

  bool write(std::string_view group_path, std::string_view name, std::span<const double> values);
  bool write(std::string_view group_path, std::string_view name, std::span<const float> values);
  bool write(std::string_view group_path, std::string_view name, std::span<const std::int64_t> values);
  bool write(std::string_view group_path, std::string_view name, std::span<const std::string> values);
  // A scalar string dataset, e.g. the JSON report.
  bool write_text(std::string_view group_path, std::string_view name, std::string_view text);
  // Attributes on a group or dataset (created if it is a missing group).
  bool set_number(std::string_view object_path, std::string_view name, double value);
  bool set_integer(std::string_view object_path, std::string_view name, std::int64_t value);
  bool set_text(std::string_view object_path, std::string_view name, std::string_view value);

  const std::string& error() const { return error_; }  // reason of the last failure
  // Flushes and closes; false if HDF5 reported an error while closing.
  bool close();

 private:
  explicit RunFileAppender(std::int64_t file) : file_(file) {}
  std::int64_t file_ = -1;      // hid_t of the in-memory copy, kept opaque so this header needs no hdf5.h
  std::filesystem::path path_;  // written back (replaced) at close()
  std::string error_;
};

}  // namespace tremor
