// The per-rank crash-recovery spill (docs/spill.md): segments are buffered in
// memory and appended with write(2) at the first boundary at least
// TREMOR_SPILL_INTERVAL after the previous append, or when the buffer is full,
// so a crash, MPI_Abort or kill loses at most one interval. Called with the
// recorder's boundary lock held (or at exit / abort, after taking it).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "tremor/config.hpp"
#include "tremor/spill.hpp"

namespace tremor::interpose {

class Recorder;

class SpillWriter {
 public:
  // Collective over MPI_COMM_WORLD: rank 0 reserves the run's file name
  // (O_EXCL, mode 0644) and broadcasts it, every rank then creates its own
  // file and writes its header. Never throws; on failure the spill stays off.
  void open(const Config& config, SpillHeader header, Recorder& log) noexcept;

  // Buffers one closed segment; appends the buffer when the interval has
  // passed or it is full.
  void add(const QuantizedValues& values, const FeatureVector& features, std::uint16_t call,
           std::uint64_t now_tick) noexcept;

  // Appends what is buffered plus an end record and closes the file (kept).
  // Idempotent: only the first call writes.
  void finish(SpillEnd reason) noexcept;

  // Removes this rank's file (after the run file was written).
  void remove() noexcept;

  bool active() const noexcept { return fd_ >= 0; }
  bool created() const noexcept { return !path_.empty(); }
  const std::filesystem::path& stem() const noexcept { return stem_; }

 private:
  bool flush() noexcept;
  bool write_all(const void* data, std::size_t bytes) noexcept;
  void fail(const std::string& what) noexcept;

  static constexpr std::size_t kBufferRecords = 2048;  // 384 KiB
  int fd_ = -1;
  std::filesystem::path stem_;
  std::filesystem::path path_;
  std::unique_ptr<SpillRecord[]> buffer_;
  std::size_t buffered_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t interval_ticks_ = 0;
  std::uint64_t last_flush_tick_ = 0;
  Recorder* log_ = nullptr;
  std::uint64_t device_ = 0;  // identity of the file opened, checked before each append
  std::uint64_t inode_ = 0;
  bool fd_foreign_ = false;  // the descriptor was closed and reused by the application
};

}  // namespace tremor::interpose
