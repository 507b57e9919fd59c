// The per-process recorder: configuration, counter source, the open segment
// and the store of closed ones. Wrappers reach it only at segment boundaries
// and at MPI_Init/MPI_Finalize; ordinary calls touch only their ThreadState.
#pragma once

#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "call_ids.hpp"
#include "runtime.hpp"
#include "spill_writer.hpp"
#include "tremor/config.hpp"
#include "tremor/counters/counter_source.hpp"
#include "tremor/segment_store.hpp"
#include "wrapper_support.hpp"

namespace spdlog {
class logger;
}

namespace tremor::interpose {

// The boundary lock. Nearly every boundary finds it free (one thread closes
// at a time), where std::mutex costs ~55 instructions and this an exchange;
// a waiter yields, as the holder may be writing a spill block.
class BoundaryLock {
 public:
  void lock() noexcept {
    if (busy_.exchange(true, std::memory_order_acquire)) [[unlikely]]
      wait_and_lock();
  }
  bool try_lock() noexcept {
    return !busy_.load(std::memory_order_relaxed) && !busy_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { busy_.store(false, std::memory_order_release); }

 private:
  // Out of line: the boundary's code keeps its registers.
  [[gnu::noinline]] void wait_and_lock() noexcept {
    do {
      while (busy_.load(std::memory_order_relaxed)) sched_yield();
    } while (busy_.exchange(true, std::memory_order_acquire));
  }
  std::atomic<bool> busy_{false};
};

class Recorder {
 public:
  static Recorder& instance() noexcept;

  // After PMPI_Init(_thread) succeeded: reads the configuration, opens the
  // counter source and opens segment 0. Never throws.
  void start() noexcept;
  // At MPI_Finalize entry: closes the last segment and stops recording.
  // Returns false if nothing was recorded.
  bool finish() noexcept;

  // The crash-recovery spill: the end record at MPI_Abort or at an exit
  // without MPI_Finalize (never blocks for long: a boundary stuck elsewhere
  // loses at most one interval); after the end-of-run output, removed when
  // the run file was written, else kept (write_outputs says so).
  void end_spill(SpillEnd reason) noexcept;
  void settle_spill(bool run_file_written) noexcept;
  // For the message saying the run file was not written ("" without a spill).
  std::string spill_kept_note() const;
  // The spill files' common stem (what tremor analyze --recover takes); empty without a spill.
  std::string spill_stem() const;

  void close_segment(CallId call, std::uint64_t start, std::uint64_t end, WorkReading work_at_entry) noexcept;
  WorkReading read_work() const noexcept;

  int world_size() const noexcept { return world_size_; }
  int world_rank() const noexcept { return world_rank_; }
  bool started() const noexcept { return started_; }
  const Config& config() const noexcept { return config_; }
  const counters::CounterSource& counter() const noexcept { return counter_; }
  // The counter's kind as the run file records it.
  CounterKind counter_kind() const noexcept;
  SegmentStore& store() noexcept { return *store_; }
  // Tremor's private duplicate of MPI_COMM_WORLD for the end-of-run gather,
  // made at MPI_Init so that MPI_Finalize pays no collective for it
  // (MPI_COMM_NULL if that failed).
  MPI_Comm finalize_comm() const noexcept { return finalize_comm_; }
  double start_time_unix() const noexcept { return start_time_unix_; }
  double elapsed_s() const noexcept;  // MPI_Init exit to MPI_Finalize entry
  // The boundary thread's own blocking outside calls, left out of off_cpu_time
  // (NaN where context-switch records did not tell it apart).
  double own_sleep_s() const noexcept {
    return counter_.tells_own_blocking() ? own_sleep_s_ : std::numeric_limits<double>::quiet_NaN();
  }
  // The open segment's index (boundaries closed so far), -1 outside recording;
  // a stacked injector tags its delays with it (tremor_current_segment).
  long long current_segment() const noexcept { return current_segment_.load(std::memory_order_relaxed); }

  // Logging that never shows up as the application's I/O. Rank-0-only
  // variants keep a 1000-rank job from printing 1000 copies.
  void info0(const std::string& message) noexcept;
  void warn0(const std::string& message) noexcept;
  void debug0(const std::string& message) noexcept;
  void warn(const std::string& message) noexcept;

 private:
  Recorder() = default;
  struct ProcessCpu {
    double process_s = 0.0;  // CLOCK_PROCESS_CPUTIME_ID
    double thread_s = 0.0;   // CLOCK_THREAD_CPUTIME_ID of the reading thread
  };
  struct NewCounts {
    FeatureVector features;
    std::uint64_t mpi_ticks;
    std::uint64_t io_ticks;
  };
  // The threads' counts since the last boundary, summed, marked as taken;
  // true if their features and `call` are the last stored segment's, and
  // then counts.features is left unwritten. Under the boundary lock.
  bool take_new_counts(NewCounts& counts, std::uint16_t call, ThreadState* caller) noexcept;
  // close_segment after a short collective (its entry reading opens the next
  // segment) or a long one (read at its exit, off-CPU time inside it counted).
  template <bool kLongCollective>
  void close_segment_after(CallId call, std::uint64_t start, std::uint64_t end, WorkReading work_at_entry) noexcept;
  // The same with more than one thread registered.
  [[gnu::noinline]] bool take_counts_of_all_threads(NewCounts& counts, std::uint16_t call) noexcept;
  [[gnu::noinline, gnu::cold]] void stop_out_of_memory() noexcept;
  bool store_segment(const QuantizedValues& values, const NewCounts& counts, std::uint16_t call,
                     bool same_kind) noexcept;
  void open_spill() noexcept;
  static ProcessCpu process_and_thread_cpu_s() noexcept;
  // The part of `off_cpu_s` the closing thread spent waiting for its own
  // process's other threads outside calls (at most `blocked_outside_calls_s`).
  [[gnu::noinline, gnu::cold]] double own_blocking_s(double blocked_outside_calls_s, double off_cpu_s) noexcept;

  Config config_;
  counters::CounterSource counter_;
  std::unique_ptr<SegmentStore> store_;
  std::shared_ptr<spdlog::logger> logger_;
  BoundaryLock boundary_lock_;
  SpillWriter spill_;
  std::uint64_t segment_start_tick_ = 0;
  std::uint64_t init_tick_ = 0;
  std::uint64_t finalize_tick_ = 0;
  WorkReading work_at_segment_start_;
  std::uint64_t work_start_tick_ = 0;  // when work_at_segment_start_ was read
  double own_sleep_s_ = 0.0;  // taken out of the segments' off-CPU time so far
  ProcessCpu others_cpu_mark_;  // at the last own-blocking reading
  // A thread's own blocking shorter than this is left in the off-CPU time:
  // the two clock reads that weigh it cost about 1 us (the long-call bound).
  static constexpr std::uint64_t kOwnBlockingReadFloorNs = 20'000;
  double start_time_unix_ = 0.0;
  double tick_seconds_ = 1e-9;  // seconds_per_tick(), fixed once recording starts
  double ns_per_tick_ = 1.0;
  // The last stored segment's kind, compared at each boundary while its
  // features are taken (a store lookup only when it changes).
  FeatureVector last_features_{};
  std::uint16_t last_call_ = 0;
  bool has_last_kind_ = false;
  MPI_Comm finalize_comm_ = MPI_COMM_NULL;
  int world_size_ = 1;
  int world_rank_ = 0;
  bool started_ = false;
  bool store_failed_ = false;
  bool storing_ = false;  // started_ and not store_failed_: one test per boundary
  std::atomic<long long> current_segment_{-1};
};

}  // namespace tremor::interpose
