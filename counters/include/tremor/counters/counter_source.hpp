// The computation counter: one value per thread that grows with the work the
// thread does, read at segment boundaries (and possibly around MPI calls).
//
// Sources
//   papi            one PAPI event (preset, native, or SDE such as
//                   sde:::Lib::counter); the first event of TREMOR_COUNTERS that
//                   can be added to an event set, started AND read wins.
//   thread_oncpu    the thread's CPU time in ns without a system call per read:
//                   CLOCK_MONOTONIC minus the time the thread was switched out,
//                   from perf context-switch records in a per-thread ring
//                   buffer (src/oncpu_thread_reader.cpp). Only when named
//                   (TREMOR_COUNTERS=oncpu) and perf_event_open allows it: in
//                   a VM it counts the time the hypervisor took the vCPU away
//                   (steal time) as the thread's, which the kernel's thread
//                   clock leaves out, and each context switch of the thread
//                   costs ~1 us more (the kernel writes the records).
//   thread_cputime  the thread's CPU time in ns; when no requested event works
//                   (e.g. a VM without a PMU), or when TREMOR_COUNTERS=cputime. Where perf allows the
//                   context-switch records and the node is not oversubscribed,
//                   CLOCK_THREAD_CPUTIME_ID (a system call) is read at most
//                   once per clock_read_period_ns and thread_oncpu's
//                   extrapolation serves the reads between; any time the
//                   hypervisor stole from such a window (< 1 ms) counts as
//                   work until the next clock read takes it back. Otherwise,
//                   or with TREMOR_COUNTERS=cputime_syscall, every read is the
//                   system call.
// Default order when TREMOR_COUNTERS is unset or empty: PAPI_FP_INS,PAPI_TOT_INS.
//
// Per-thread semantics
//   read() returns the counter of the CALLING thread: two threads reading the
//   same source see two independent values. For PAPI every thread gets its own
//   event set, created lazily on that thread's first read() (PAPI_thread_init
//   is called when the source is opened) and destroyed when the thread exits.
//   Values are only comparable within one thread: take deltas on one thread.
//   SDE counters are whatever the defining library counts, usually one
//   process-wide number, so every thread sees the same deltas for them.
//   Only one PAPI source should be read at a time: reading a different one on
//   a thread rebuilds that thread's event set (values stay monotonic).
//
// Cost per read of each source: counters/README.md (bench_counters); read()
// adds at most a few ns to the raw call.
//
// Caveat of both CPU-time fallbacks: it ignores time the thread is
// descheduled (CPU contention shows as longer segments, not as more work), but
// memory-bandwidth stalls inflate it, so bandwidth interference can move a
// segment into another cluster and be under-counted.
//
// Safety for an LD_PRELOADed profiler: nothing here runs at load time, nothing
// throws across this API, read() is noexcept, lock-free and allocation-free
// after a thread's first read. A failure never aborts the host process.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "tremor/counter_kind.hpp"

namespace tremor::counters {

namespace detail {
// Out of line: per-thread context-switch buffer, opened on the thread's first
// read; a thread that cannot open one reads CLOCK_THREAD_CPUTIME_ID.
// Reads CLOCK_THREAD_CPUTIME_ID again when the last clock read is more than
// clock_period_ns old (never_read_clock: only when records were lost).
// Hidden (so are the others a boundary calls): the preloaded library that
// links them calls them directly, not through its PLT.
[[gnu::visibility("hidden")]] std::uint64_t read_oncpu_on_calling_thread(std::uint64_t clock_period_ns) noexcept;
inline constexpr std::uint64_t never_read_clock = ~std::uint64_t{0};
// Empty if this process may open the context-switch event, else why.
std::string probe_oncpu_source() noexcept;
// The calling thread's time switched out of its own accord (blocked, not
// preempted), ns, from the records its reads consumed since the last take;
// 0 on a thread that reads no records. A variable, not a call: a boundary
// takes it.
[[gnu::visibility("hidden")]] extern constinit thread_local std::uint64_t t_own_blocking_ns
    __attribute__((tls_model("initial-exec")));
// The kernel marks a switch-out that preempted the thread (Linux >= 4.17);
// known once probe_oncpu_source ran.
bool preemption_is_flagged() noexcept;

// Out of line: per-thread PAPI event set, built on the thread's first read.
[[gnu::visibility("hidden")]] std::uint64_t read_papi_on_calling_thread(int event_code,
                                                                        std::uint32_t generation) noexcept;
// PAPI runs one event set per thread and component: opening a source stops the
// opening thread's own set first; its next read rebuilds it.
void release_calling_thread_event_set() noexcept;

inline std::uint64_t read_thread_cputime_ns() noexcept {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(now.tv_nsec);
}
}  // namespace detail

// A small copyable value; read() is a branch plus the underlying call, no
// virtual dispatch.
class CounterSource {
 public:
  // The thread CPU-time fallback; always works.
  CounterSource() noexcept = default;

  [[nodiscard]] CounterKind kind() const noexcept { return kind_; }
  // "papi", "thread_oncpu" or "thread_cputime".
  [[nodiscard]] std::string_view name() const noexcept;
  // Both fallbacks count the thread's CPU time in ns (the recorder treats
  // the CPU of MPI calls differently then).
  [[nodiscard]] bool measures_cpu_time() const noexcept { return tremor::measures_cpu_time(kind_); }
  // The events in use: the winning PAPI event, "CLOCK_THREAD_CPUTIME_ID"
  // (followed by "PERF_RECORD_SWITCH" when context-switch records fill in
  // between clock reads), or "PERF_RECORD_SWITCH" for thread_oncpu.
  [[nodiscard]] const std::vector<std::string>& events() const noexcept { return events_; }
  // counter_unit(kind()) ("ns") for the CPU-time sources; PAPI's unit for
  // the event when it has one, otherwise "instructions" for *_INS presets
  // and "count" for the rest.
  [[nodiscard]] const std::string& unit() const noexcept { return unit_; }

  // Counter of the calling thread; never decreases on that thread. If a
  // thread cannot set up or read its PAPI event set, its value stays frozen
  // and papi_thread_failures() counts it.
  [[nodiscard]] std::uint64_t read() const noexcept {
    // PAPI first: the normal case on hardware with counters.
    if (kind_ == CounterKind::papi) return detail::read_papi_on_calling_thread(papi_event_code_, papi_generation_);
    if (clock_period_ns_ == 0) return detail::read_thread_cputime_ns();
    return detail::read_oncpu_on_calling_thread(clock_period_ns_);
  }
  // Reads come from context-switch records: thread_oncpu always,
  // thread_cputime between its clock reads.
  [[nodiscard]] bool uses_switch_records() const noexcept { return kind_ != CounterKind::papi && clock_period_ns_ != 0; }
  // Whether take_slept() tells the thread's own blocking from preemption.
  [[nodiscard]] bool tells_own_blocking() const noexcept { return tells_own_blocking_; }
  // The calling thread's own blocking (switch-outs that did not preempt it),
  // ns, up to its last read(), since its last take; 0 where not told apart.
  static std::uint64_t take_slept() noexcept {
    const std::uint64_t slept = detail::t_own_blocking_ns;
    if (slept != 0) [[unlikely]]
      detail::t_own_blocking_ns = 0;
    return slept;
  }
  // After a read at the exit of a call the thread spent `off_cpu_ns` of off
  // the CPU: blocking inside it was no choice of the thread's (the caller
  // polls there), so up to that much is no longer its own.
  static void drop_slept(std::uint64_t off_cpu_ns) noexcept {
    detail::t_own_blocking_ns -= std::min(detail::t_own_blocking_ns, off_cpu_ns);
  }

 private:
  friend struct SourceFactory;
  CounterKind kind_ = CounterKind::thread_cputime;
  int papi_event_code_ = 0;
  std::uint32_t papi_generation_ = 0;
  // CPU-time sources: 0 = the clock on every read.
  std::uint64_t clock_period_ns_ = 0;
  bool tells_own_blocking_ = false;  // context-switch records on a kernel that flags preemption
  std::vector<std::string> events_;
  std::string unit_{counter_unit(CounterKind::thread_cputime)};
};

struct EventRejection {
  std::string event;
  std::string reason;  // PAPI_strerror of the failing step, or ours
};

struct OpenedCounterSource {
  CounterSource source;
  // Every requested event tried before the winner, in order, with why it failed.
  std::vector<EventRejection> rejections;
  // One human-readable line for the log and the output file; empty when the
  // first requested event (or the requested cputime) was used.
  std::string explanation;
  // thread_cputime reading the clock on every read although not asked to:
  // why the context-switch records are not used. Empty otherwise.
  std::string switch_records_note;
};

// How often thread_cputime reads the kernel clock when context-switch records
// fill in between: a boundary or call every <= 1 ms then costs no system call,
// and time the hypervisor steals in longer windows is always left out.
inline constexpr std::uint64_t clock_read_period_ns = 1'000'000;

struct CounterOptions {
  // thread_cputime may use context-switch records between clock reads. The
  // recorder turns it off when more ranks than CPUs share the node: each
  // switch then costs ~1 us more, and such ranks switch all the time.
  bool switch_records = true;
};

// The default spec used when TREMOR_COUNTERS is unset or blank.
inline constexpr std::string_view default_counter_spec = "PAPI_FP_INS,PAPI_TOT_INS";

// Splits TREMOR_COUNTERS: comma-separated, items trimmed of blanks, empty
// items dropped; blank spec → the default. Items are not validated here.
std::vector<std::string> parse_counter_spec(std::string_view spec);

// Opens the first usable source for `spec` (the value of TREMOR_COUNTERS;
// "cputime" forces the fallback, "cputime_syscall" the fallback with the
// clock on every read, and "oncpu" asks for thread_oncpu, also as items of a
// list; when no item works, thread_cputime). Initialises PAPI
// (library + thread support) on first use: call it after MPI_Init, not at
// load time. Never throws; on any failure returns the fallback with a reason.
OpenedCounterSource open_counter_source(std::string_view spec, CounterOptions options = {}) noexcept;

// Threads whose PAPI event set could not be built or read, since start.
std::uint64_t papi_thread_failures() noexcept;
// thread_oncpu: re-anchorings on CLOCK_THREAD_CPUTIME_ID after lost records.
std::uint64_t oncpu_resynchronisations() noexcept;
// Reads of CLOCK_THREAD_CPUTIME_ID by threads with context-switch records
// (thread_cputime's periodic reads, opening, re-anchoring), since start.
std::uint64_t switch_record_clock_reads() noexcept;

}  // namespace tremor::counters
