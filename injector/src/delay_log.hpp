// In-memory log of injected delays (the ground truth) and its CSV file, with
// the traced calls that were not delayed (TREMOR_INJECT_TRACE).
//
// Bound: the log starts with room for kInitialRecords and doubles up to
// kMaxRecords (1 Mi records, 112 MiB per rank). When it is full the injector
// stops injecting on that rank, so the log never under-reports, and the CSV
// ends with a comment line saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tremor/inject_api.h"

namespace tremor::inject {

struct LogEntry {
  tremor_inject_record record;
  long long sequence;  // index of the eligible call on this rank, -1 for a traced call that was not eligible
  double entered_s;    // CLOCK_MONOTONIC when the call entered the injector (the delay's start)
  double returned_s;   // CLOCK_MONOTONIC when the call returned, 0 until it has
  // The thread's run-queue delay so far (the kernel's schedstat: runnable,
  // not running), s, when the call was forwarded (after its delay) and when
  // it returned; -1 where the kernel does not report it. What the machine's
  // other processes took from the rank between calls: the truth of the
  // machine's own interference, beside the planted one.
  double queued_entered_s;
  double queued_returned_s;
  bool delayed;  // false: a traced call, logged but not delayed
};
static_assert(sizeof(LogEntry) == 112, "the bound in bytes is documented (injector/README.md)");

class DelayLog {
 public:
  static constexpr std::size_t kInitialRecords = 4096;
  static constexpr std::size_t kMaxRecords = std::size_t{1} << 20;

  DelayLog() = default;
  ~DelayLog();
  DelayLog(const DelayLog&) = delete;
  DelayLog& operator=(const DelayLog&) = delete;

  // Preallocates; remembers the output directory. False if out of memory.
  bool open(const std::string& output_dir, int rank) noexcept;
  // Makes room for one more entry (grows if needed); false when full.
  bool reserve_one() noexcept;
  // Appends one entry and returns its index; reserve_one() must have succeeded before.
  std::size_t append(const LogEntry& entry) noexcept;
  // Notes when the call of entry `index` returned.
  void set_returned(std::size_t index, double returned_s, double queued_s) noexcept {
    entries_[index].returned_s = returned_s;
    entries_[index].queued_returned_s = queued_s;
  }
  // The delayed entries (the C API's records); traced-only ones are in the CSV only.
  std::size_t delays() const noexcept { return delays_; }
  // Sums over the delayed entries, µs, kept as they are appended.
  double requested_us_total() const noexcept { return requested_us_total_; }
  double spent_us_total() const noexcept { return spent_us_total_; }
  std::size_t copy_to(tremor_inject_record* out, std::size_t max) const noexcept;
  // Writes the CSV file (never overwriting one); reports a failure on rank 0.
  void write_csv(int rank) const noexcept;

 private:
  LogEntry* entries_ = nullptr;
  std::size_t size_ = 0;
  std::size_t delays_ = 0;
  double requested_us_total_ = 0.0;
  double spent_us_total_ = 0.0;
  std::size_t reserved_ = 0;
  std::size_t capacity_ = 0;
  bool full_ = false;
  std::string output_dir_;
  std::string job_tag_;
};

}  // namespace tremor::inject
