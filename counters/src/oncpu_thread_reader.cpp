// The thread_oncpu source: a thread's CPU time without a system call per read.
//
// CLOCK_THREAD_CPUTIME_ID is a system call (most of a boundary's cost,
// counters/README.md; without cap_user_time perf cannot extrapolate it in user
// space either). Instead each thread opens a perf software event that only
// records its context switches (PERF_RECORD_SWITCH, timestamped with
// CLOCK_MONOTONIC) into a ring buffer mapped into the process. A read is then
// a vDSO clock read minus the time the thread spent switched out, summed from
// the records that arrived since the last read: memory reads only.
//
// The value is anchored to CLOCK_THREAD_CPUTIME_ID when the thread's buffer is
// opened, and again whenever the kernel reports lost records (the buffer was
// full), so it stays the thread's CPU time, and it never decreases.
//
// thread_cputime uses the same reader with a clock period: a read more than
// that after the last anchor anchors again. The extrapolation can only exceed
// the kernel's clock (by time the hypervisor stole or interrupts took while
// the thread ran), never fall short, so the anchor's reading, held below the
// last value returned, takes that excess back from the next reads; and a
// steal longer than the period always ends in an anchored read.
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "tremor/counters/counter_source.hpp"

namespace tremor::counters {

namespace detail {
constinit thread_local std::uint64_t t_own_blocking_ns __attribute__((tls_model("initial-exec"))) = 0;
}  // namespace detail

namespace {

// 8 data pages: 2048 switch records (16 bytes each) between two reads.
constexpr std::size_t data_pages = 8;
// The largest record this event writes (PERF_RECORD_LOST with its time).
constexpr std::uint64_t max_record_size = 32;

std::atomic<std::uint64_t> resynchronisations{0};
// PERF_RECORD_MISC_SWITCH_OUT_PREEMPT is set from Linux 4.17 on; before, every
// switch-out would look like the thread's own block.
std::atomic<bool> preemption_flagged{false};
std::atomic<std::uint64_t> clock_reads{0};

std::uint64_t monotonic_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(now.tv_nsec);
}

// close(2) without the symbol: an I/O profiler or injector preloaded with
// Tremor must not see (or delay) Tremor's own descriptor.
void close_quietly(int fd) noexcept { syscall(SYS_close, fd); }

long perf_event_open(perf_event_attr* attr) noexcept {
  return syscall(SYS_perf_event_open, attr, 0 /* calling thread */, -1 /* any CPU */, -1, PERF_FLAG_FD_CLOEXEC);
}

// Trivially constructible and destructible (no TLS init wrapper on the read
// path).
struct OncpuThreadState {
  bool opened = false;  // a buffer was tried on this thread
  bool failed = false;  // this thread reads CLOCK_THREAD_CPUTIME_ID instead
  int fd = -1;
  perf_event_mmap_page* meta = nullptr;
  const unsigned char* data = nullptr;
  std::uint64_t data_size = 0;
  std::uint64_t tail = 0;
  std::uint64_t anchor_cputime = 0;  // thread CPU time at anchor_wall
  std::uint64_t anchor_wall = 0;
  std::uint64_t off_cpu = 0;          // switched-out ns since anchor_wall
  std::uint64_t switched_out_at = 0;  // 0: no open switch-out record
  bool switched_out_runnable = false;  // that switch-out preempted the thread
  std::uint64_t last = 0;
};

[[gnu::tls_model("initial-exec")]] thread_local OncpuThreadState tls_oncpu;

void close_buffer(OncpuThreadState& state) noexcept {
  if (state.meta != nullptr) munmap(state.meta, (data_pages + 1) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  if (state.fd >= 0) close_quietly(state.fd);
  state.meta = nullptr;
  state.data = nullptr;
  state.fd = -1;
}

struct OncpuThreadTeardown {
  OncpuThreadTeardown() = default;
  OncpuThreadTeardown(const OncpuThreadTeardown&) = delete;
  OncpuThreadTeardown& operator=(const OncpuThreadTeardown&) = delete;
  // Reads after this (other thread-exit destructors may call MPI) use the clock.
  ~OncpuThreadTeardown() {
    close_buffer(tls_oncpu);
    tls_oncpu.failed = true;
  }
};

void anchor(OncpuThreadState& state) noexcept {
  clock_reads.fetch_add(1, std::memory_order_relaxed);
  state.anchor_cputime = detail::read_thread_cputime_ns();
  state.anchor_wall = monotonic_ns();
  state.off_cpu = 0;
  state.switched_out_at = 0;
}

// The events' settings; also used by the probe on the opening thread.
perf_event_attr switch_recording_attr() noexcept {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  attr.context_switch = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  // Nobody waits on the descriptor: wake nobody until the buffer is nearly full.
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<std::uint32_t>(data_pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) / 2);
  return attr;
}

// Empty on success, else why (errno text).
std::string open_buffer(OncpuThreadState& state) noexcept {
  perf_event_attr attr = switch_recording_attr();
  const long fd = perf_event_open(&attr);
  if (fd < 0) return std::string("perf_event_open: ") + std::strerror(errno);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, (data_pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  if (map == MAP_FAILED) {
    const int error = errno;
    close_quietly(static_cast<int>(fd));
    return std::string("mmap of the perf buffer: ") + std::strerror(error);
  }
  state.fd = static_cast<int>(fd);
  state.meta = static_cast<perf_event_mmap_page*>(map);
  state.data = static_cast<const unsigned char*>(map) + (state.meta->data_offset ? state.meta->data_offset : page);
  state.data_size = state.meta->data_size ? state.meta->data_size : data_pages * page;
  state.tail = __atomic_load_n(&state.meta->data_head, __ATOMIC_ACQUIRE);
  anchor(state);
  return {};
}

// The child's only thread must not read the parent's buffer (the event
// follows the parent's thread): it drops its copy and opens its own.
void fork_child() noexcept {
  close_buffer(tls_oncpu);
  tls_oncpu.opened = false;
  // The child's thread is a new thread: its CPU clock starts again near 0.
  tls_oncpu.last = 0;
  detail::t_own_blocking_ns = 0;
}

[[gnu::noinline, gnu::cold]] std::uint64_t open_on_this_thread(OncpuThreadState& state) noexcept {
  thread_local OncpuThreadTeardown teardown;
  close_buffer(state);
  state.opened = true;
  state.failed = !open_buffer(state).empty();
  state.last = std::max(state.last, detail::read_thread_cputime_ns());
  return state.last;
}

// Copies one record, which may wrap around the end of the ring.
void copy_out(const OncpuThreadState& state, std::uint64_t at, void* out, std::size_t size) noexcept {
  const std::uint64_t offset = at % state.data_size;
  const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(size, state.data_size - offset));
  std::memcpy(out, state.data + offset, first);
  if (first < size) std::memcpy(static_cast<unsigned char*>(out) + first, state.data, size - first);
}

// Consumes the records since the last read; false if some may be lost. Out
// of line: most reads find no record, and skip it.
[[gnu::noinline]] bool drain(OncpuThreadState& state) noexcept {
  const std::uint64_t head = __atomic_load_n(&state.meta->data_head, __ATOMIC_ACQUIRE);
  // The kernel reports lost records only once it can write again, i.e. after
  // this read: a buffer without room for one more record may have lost some.
  bool complete = head - state.tail + 2 * max_record_size <= state.data_size;
  while (state.tail + sizeof(perf_event_header) <= head) {
    perf_event_header header{};
    copy_out(state, state.tail, &header, sizeof header);
    if (header.size < sizeof header || state.tail + header.size > head) {
      complete = false;  // never written by a sane kernel; start over from here
      state.tail = head;
      break;
    }
    if (header.type == PERF_RECORD_SWITCH && header.size >= sizeof header + sizeof(std::uint64_t)) {
      std::uint64_t time = 0;  // sample_id: just the time (PERF_SAMPLE_TIME)
      copy_out(state, state.tail + header.size - sizeof time, &time, sizeof time);
      if ((header.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0) {
        state.switched_out_at = time;
        state.switched_out_runnable = (header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
      } else if (state.switched_out_at != 0) {
        // Only the part after the anchor: the anchor's CPU time holds the rest.
        const std::uint64_t from = std::max(state.switched_out_at, state.anchor_wall);
        if (time > from) state.off_cpu += time - from;
        // A thread that blocked (a join, a lock, a sleep) gave up its CPU;
        // one preempted while runnable did not. The wake-up's wait for a CPU
        // stays in the blocked interval: the count is an upper bound.
        if (!state.switched_out_runnable && time > state.switched_out_at &&
            preemption_flagged.load(std::memory_order_relaxed))
          detail::t_own_blocking_ns += time - state.switched_out_at;
        state.switched_out_at = 0;
      }
    } else if (header.type == PERF_RECORD_LOST) {
      complete = false;
    }
    state.tail += header.size;
  }
  __atomic_store_n(&state.meta->data_tail, state.tail, __ATOMIC_RELEASE);
  return complete;
}

bool kernel_flags_preemption() noexcept {
  utsname name{};
  if (uname(&name) != 0) return false;
  unsigned major = 0, minor = 0;
  if (std::sscanf(name.release, "%u.%u", &major, &minor) != 2) return false;
  return major > 4 || (major == 4 && minor >= 17);
}

}  // namespace

namespace detail {

bool preemption_is_flagged() noexcept { return preemption_flagged.load(std::memory_order_relaxed); }

std::uint64_t read_oncpu_on_calling_thread(std::uint64_t clock_period_ns) noexcept {
  OncpuThreadState& state = tls_oncpu;
  if (!state.opened) [[unlikely]]
    return open_on_this_thread(state);
  if (state.failed) [[unlikely]] {
    state.last = std::max(state.last, read_thread_cputime_ns());
    return state.last;
  }
  const bool new_records = __atomic_load_n(&state.meta->data_head, __ATOMIC_ACQUIRE) != state.tail;
  if (new_records && !drain(state)) [[unlikely]] {
    resynchronisations.fetch_add(1, std::memory_order_relaxed);
    anchor(state);
    state.last = std::max(state.last, state.anchor_cputime);
    return state.last;
  }
  const std::uint64_t wall = monotonic_ns();
  if (wall - state.anchor_wall > clock_period_ns) {
    anchor(state);
    state.last = std::max(state.last, state.anchor_cputime);
    return state.last;
  }
  const std::uint64_t on_cpu = wall - state.anchor_wall - std::min(state.off_cpu, wall - state.anchor_wall);
  state.last = std::max(state.last, state.anchor_cputime + on_cpu);
  return state.last;
}

std::string probe_oncpu_source() noexcept {
  static const bool registered = [] { return pthread_atfork(nullptr, nullptr, &fork_child) == 0; }();
  (void)registered;
  preemption_flagged.store(kernel_flags_preemption(), std::memory_order_relaxed);
  perf_event_attr attr = switch_recording_attr();
  const long fd = perf_event_open(&attr);
  if (fd < 0) return std::string("perf_event_open: ") + std::strerror(errno);
  close_quietly(static_cast<int>(fd));
  return {};
}

}  // namespace detail

std::uint64_t oncpu_resynchronisations() noexcept { return resynchronisations.load(std::memory_order_relaxed); }
std::uint64_t switch_record_clock_reads() noexcept { return clock_reads.load(std::memory_order_relaxed); }

}  // namespace tremor::counters
