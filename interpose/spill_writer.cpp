#include "spill_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

#include "file_size_signal.hpp"
#include "runtime.hpp"
#include "tremor/output_path.hpp"

namespace tremor::interpose {
namespace {

constexpr std::size_t kMaxStem = 4096;

// Tremor's own file I/O goes straight to the kernel: an interposer stacked
// behind Tremor (the injector's POSIX family) must neither delay it nor
// take it for the application's.
int open_direct(const char* path, int flags, mode_t mode) noexcept {
  return static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}
ssize_t write_direct(int fd, const void* data, std::size_t bytes) noexcept {
  return static_cast<ssize_t>(syscall(SYS_write, fd, data, bytes));
}
void close_direct(int fd) noexcept { syscall(SYS_close, fd); }

// What rank 0 broadcasts at MPI_Init: the run's file stem and its id.
struct Announcement {
  std::uint64_t run_id = 0;
  char stem[kMaxStem] = {};
};

std::uint64_t new_run_id(const SpillHeader& header) {
  const auto now = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::uint64_t x = now ^ (static_cast<std::uint64_t>(header.pid) << 32) ^ std::hash<std::string>{}(header.host);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string spill_fallback_dir() {
  const char* const tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
}

void SpillWriter::open(const Config& config, SpillHeader header, SpillLog log) noexcept {
  log_ = log;
  InsideTremor guard;
  try {
    Announcement announcement;
    const bool wanted = config.spill_interval_s >= 0.0;
    if (header.rank == 0 && wanted) {
      std::string error;
      constexpr std::string_view first_rank = ".r0.spill";
      std::string directory = config.output_dir;
      auto reserved = reserve_output_files(directory, header.program, header.job_id, std::span(&first_rank, 1), error);
      if (!reserved) {  // an output directory that cannot be written: said at MPI_Init (early_checks.cpp)
        directory = spill_fallback_dir();
        reserved = reserve_output_files(directory, header.program, header.job_id, std::span(&first_rank, 1), error);
      }
      const std::string stem = reserved ? (std::filesystem::path(directory) / reserved->stem).string() : "";
      if (!reserved) {
        log_.debug0("crash-recovery spill off: " + error);
      } else if (stem.size() >= kMaxStem) {
        ::unlink(reserved->paths[0].c_str());
        log_.debug0("crash-recovery spill off: output path too long");
      } else {
        std::memcpy(announcement.stem, stem.data(), stem.size());
        announcement.run_id = new_run_id(header);
      }
    }
    PMPI_Bcast(&announcement, static_cast<int>(sizeof announcement), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!wanted || announcement.stem[0] == '\0') return;

    stem_ = std::string(announcement.stem, strnlen(announcement.stem, kMaxStem));
    header.run_id = announcement.run_id;
    const std::filesystem::path path = spill_path(stem_, header.rank);
    // Rank 0's file is the reservation it just made; every other rank's is
    // new. O_EXCL and O_NOFOLLOW: never an existing file, never a symlink.
    const int create = header.rank == 0 ? 0 : O_CREAT | O_EXCL;
    const int fd = open_direct(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | create, 0644);
    if (fd < 0) {
      log_.warn("crash-recovery spill off: cannot create '" + path.string() + "': " + std::strerror(errno));
      if (header.rank == 0) ::unlink(path.c_str());
      return;
    }
    fd_ = fd;
    path_ = path;
    struct stat opened {};
    ::fstat(fd, &opened);
    device_ = opened.st_dev;
    inode_ = opened.st_ino;
    try {
      new_kinds_.reserve(kBlockSegments);
    } catch (const std::bad_alloc&) {
      fail("out of memory");
      return;
    }
    if (!reserve_block(spill_block_bytes(kBlockSegments, kBlockSegments) + kSpillEndBytes)) {
      fail("out of memory");
      return;
    }
    interval_ticks_ = static_cast<std::uint64_t>(config.spill_interval_s / seconds_per_tick());
    last_flush_tick_ = ticks();
    const std::vector<char> bytes = encode_spill_header(header);
    if (!write_all(bytes.data(), bytes.size())) fail(std::strerror(errno));
    schedule_next();
  } catch (...) {
    if (fd_ >= 0) fail("setup failed");
  }
}

bool SpillWriter::reserve_block(std::size_t bytes) noexcept {
  if (bytes <= block_capacity_) return true;
  try {
    block_ = std::make_unique_for_overwrite<char[]>(bytes);
  } catch (const std::bad_alloc&) {
    block_capacity_ = 0;
    return false;
  }
  block_capacity_ = bytes;
  return true;
}

bool SpillWriter::encode_new(SegmentStore& store) noexcept {
  block_bytes_ = 0;
  store.store_pending();
  const std::size_t first = spilled_segments_;
  const std::size_t segments = store.size() - first;
  try {
    new_kinds_.clear();
    for (std::size_t k = spilled_kinds_; k < store.kind_count(); ++k)
      new_kinds_.push_back(SpillKindRecord{store.kind_features(k), store.kind_closing_call(k), {}});
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return false;
  }
  if (!new_kinds_.empty() || segments > 0) {
    const std::size_t bytes = spill_block_bytes(new_kinds_.size(), segments);
    if (!reserve_block(bytes + kSpillEndBytes)) {
      errno = ENOMEM;
      return false;
    }
    // Straight from the store into the block: no intermediate copy.
    store.copy_spill_records(first, segments, begin_spill_block(block_.get(), new_kinds_));
    seal_spill_block(block_.get(), first, new_kinds_.size(), segments);
    block_bytes_ = bytes;
  }
  spilled_kinds_ = store.kind_count();
  spilled_segments_ = store.size();
  return true;
}

void SpillWriter::append_new(SegmentStore& store, std::uint64_t now_tick) noexcept {
  last_flush_tick_ = now_tick;
  if (!encode_new(store) || (block_bytes_ > 0 && !write_all(block_.get(), block_bytes_))) {
    fail(std::strerror(errno));
    return;
  }
  schedule_next();
}

void SpillWriter::schedule_next() noexcept {
  if (fd_ < 0) {
    next_block_size_ = SIZE_MAX;
    next_append_tick_ = UINT64_MAX;
    return;
  }
  next_block_size_ = spilled_segments_ + kBlockSegments;
  next_append_tick_ = interval_ticks_ > UINT64_MAX - last_flush_tick_ ? UINT64_MAX : last_flush_tick_ + interval_ticks_;
}

void SpillWriter::finish(SegmentStore& store, SpillEnd reason) noexcept {
  if (fd_ < 0) return;
  bool written = encode_new(store) && reserve_block(block_bytes_ + kSpillEndBytes);
  if (written) {
    write_spill_end(block_.get() + block_bytes_, spilled_segments_, reason);
    block_bytes_ += kSpillEndBytes;
  } else {
    errno = ENOMEM;
  }
  if (!written || !write_all(block_.get(), block_bytes_)) {
    fail(std::strerror(errno));
    return;
  }
  InsideTremor guard;
  close_direct(fd_);
  fd_ = -1;
  schedule_next();
}

void SpillWriter::remove() noexcept {
  if (path_.empty()) return;
  InsideTremor guard;
  if (fd_ >= 0 && !fd_foreign_) close_direct(fd_);
  fd_ = -1;
  schedule_next();
  ::unlink(path_.c_str());
  path_.clear();
}

bool SpillWriter::write_all(const void* data, std::size_t bytes) noexcept {
  InsideTremor guard;
  // An application that closed descriptors it did not open may have the
  // number for one of its own files now: never write into that.
  struct stat now {};
  if (::fstat(fd_, &now) != 0 || now.st_dev != device_ || now.st_ino != inode_) {
    fd_foreign_ = true;
    errno = EBADF;
    return false;
  }
  FileSizeSignalShield shield;
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write_direct(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

void SpillWriter::fail(const std::string& what) noexcept {
  if (!fd_foreign_) {
    InsideTremor guard;
    close_direct(fd_);
  }
  fd_ = -1;
  schedule_next();
  if (log_.warn) {
    log_.warn("crash-recovery spill '" + path_.string() + "' stopped (" + what +
               "); the segments so far stay in it, recording goes on");
  }
}

}  // namespace tremor::interpose
