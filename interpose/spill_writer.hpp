// The per-rank crash-recovery spill (docs/spill.md): at the first boundary at
// least TREMOR_SPILL_INTERVAL after the previous append, or once 2048
// segments wait, the segments the store gained since are appended as one
// block with write(2), so a crash, MPI_Abort or kill loses at most one
// interval, and a boundary in between costs a comparison. Called with the
// recorder's boundary lock held (or at exit / abort, after taking it).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tremor/config.hpp"
#include "tremor/segment_store.hpp"
#include "tremor/spill.hpp"

namespace tremor::interpose {

// Where the spill reports: debug0 a note for rank 0's debug log, warn a
// warning of this rank. Function pointers, so the spill needs nothing of the
// recorder that owns it (the recorder passes its own logging).
struct SpillLog {
  void (*debug0)(const std::string& message) noexcept = nullptr;
  void (*warn)(const std::string& message) noexcept = nullptr;
};

// Where the spill goes when the output directory cannot be written: $TMPDIR
// (an absolute path) or /tmp.
std::string spill_fallback_dir();

class SpillWriter {
 public:
  // Collective over MPI_COMM_WORLD: rank 0 reserves the run's file name
  // (O_EXCL, mode 0644) and broadcasts it, every rank then creates its own
  // file and writes its header. Never throws; on failure the spill stays off.
  void open(const Config& config, SpillHeader header, SpillLog log) noexcept;

  // After a segment was stored: appends the store's new segments when the
  // interval has passed or enough wait.
  void add(SegmentStore& store, std::uint64_t now_tick) noexcept {
    if (store.size() >= next_block_size_ || now_tick >= next_append_tick_) append_new(store, now_tick);
  }

  // Appends the store's remaining segments plus an end record and closes the
  // file (kept). Idempotent: only the first call writes.
  void finish(SegmentStore& store, SpillEnd reason) noexcept;

  // Removes this rank's file (after the run file was written).
  void remove() noexcept;

  bool active() const noexcept { return fd_ >= 0; }
  bool created() const noexcept { return !path_.empty(); }
  const std::filesystem::path& stem() const noexcept { return stem_; }

 private:
  void append_new(SegmentStore& store, std::uint64_t now_tick) noexcept;
  // Encodes the store's segments and kinds not yet written into block_,
  // leaving room for an end block.
  bool encode_new(SegmentStore& store) noexcept;
  bool write_all(const void* data, std::size_t bytes) noexcept;
  void fail(const std::string& what) noexcept;

  static constexpr std::size_t kBlockSegments = 2048;
  int fd_ = -1;
  std::filesystem::path stem_;
  std::filesystem::path path_;
  // Room for the block being encoded, never zero-filled; block_bytes_ of it used.
  bool reserve_block(std::size_t bytes) noexcept;
  std::unique_ptr<char[]> block_;
  std::size_t block_capacity_ = 0;
  std::size_t block_bytes_ = 0;
  std::vector<SpillKindRecord> new_kinds_;
  std::size_t spilled_segments_ = 0;
  std::size_t spilled_kinds_ = 0;
  std::uint64_t interval_ticks_ = 0;
  std::uint64_t last_flush_tick_ = 0;
  // When add appends next: the store's size or the tick (never while off).
  std::size_t next_block_size_ = SIZE_MAX;
  std::uint64_t next_append_tick_ = UINT64_MAX;
  void schedule_next() noexcept;
  SpillLog log_;
  std::uint64_t device_ = 0;  // identity of the file opened, checked before each append
  std::uint64_t inode_ = 0;
  bool fd_foreign_ = false;  // the descriptor was closed and reused by the application
};

}  // namespace tremor::interpose
