#include "recorder.hpp"

#include <errno.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "environment_collect.hpp"
#include "process_facts.hpp"

namespace tremor::interpose {

namespace {

void flush_spill_at_exit() { Recorder::instance().end_spill(SpillEnd::exit_without_finalize); }

}  // namespace

Recorder& Recorder::instance() noexcept {
  // Never destroyed: wrappers may run during the host's static destruction.
  static Recorder* recorder = new Recorder();
  return *recorder;
}

WorkReading read_work() noexcept { return Recorder::instance().read_work(); }

namespace {
// Set once recording starts; wrappers reach close_segment only after that.
constinit Recorder* g_started_recorder = nullptr;
}  // namespace
constinit const counters::CounterSource* g_counter = nullptr;

// Flattened: the wrappers' one call at a boundary.
[[gnu::flatten]] void close_segment(CallId call, std::uint64_t start, std::uint64_t end,
                                    WorkReading work_at_entry) noexcept {
  g_started_recorder->close_segment(call, start, end, work_at_entry);
}

namespace {

// Ranks the launcher put on this node (Open MPI, MPICH Hydra), 0 if unknown.
int ranks_on_this_node() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* value = std::getenv(name)) {
      const int ranks = std::atoi(value);
      if (ranks > 0) return ranks;
    }
  }
  return 0;
}

// With more ranks than CPUs the ranks yield to each other all the time, and
// context-switch records make each switch cost ~1 us more (2.1 -> 4.3 us per
// yield between two threads on one CPU on the build VM). Empty if not so.
std::string oversubscription() {
  const int ranks = ranks_on_this_node();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (ranks <= 0 || cpus <= 0 || ranks <= cpus) return {};
  return std::to_string(ranks) + " ranks on " + std::to_string(cpus) + " CPUs";
}

}  // namespace

WorkReading Recorder::read_work() const noexcept { return WorkReading{counter_.read(), true}; }

CounterKind Recorder::counter_kind() const noexcept { return counter_.kind(); }

WorkReading busy_since_last_read(const ThreadState& state, std::uint64_t since) noexcept {
  const double busy_ns = static_cast<double>(since) * seconds_per_tick() * 1e9;
  return WorkReading{state.last_counter + static_cast<std::uint64_t>(busy_ns), true};
}

void refresh_counter(ThreadState& state, std::uint64_t now) noexcept {
  state.last_counter = Recorder::instance().counter().read();
  state.last_counter_tick = now;
}

// CPU time inside a long MPI or I/O call, without a read at its entry: the
// CPU used since the thread's last reading, minus the wall time outside the
// call since then (taken as busy), clamped to [0, the call's wall time]. A
// call that sleeps or is descheduled (injected delays, more ranks than cores)
// then counts as no CPU, one that busy-polls as all of it.
void account_long_call(ThreadState& state, std::uint64_t start, std::uint64_t end) noexcept {
  const Recorder& recorder = Recorder::instance();
  const std::uint64_t now_value = recorder.counter().read();
  const std::uint64_t now_tick = ticks();
  const double ns_per_tick = seconds_per_tick() * 1e9;
  const double used = static_cast<double>(now_value - state.last_counter);
  const double outside = static_cast<double>(start - state.last_counter_tick) * ns_per_tick;
  const double call = static_cast<double>(end - start) * ns_per_tick;
  const double inside = std::clamp(used - outside, 0.0, call);
  state.long_inside_counter += static_cast<std::uint64_t>(inside);
  // A block inside an MPI or I/O call is a delay (MPI polls) or the I/O's own
  // time, not the thread's choice (the boundary's off-CPU time keeps it).
  counters::CounterSource::drop_slept(static_cast<std::uint64_t>(call - inside));
  state.last_counter = now_value;
  state.last_counter_tick = now_tick;
}

double Recorder::elapsed_s() const noexcept {
  const std::uint64_t end = finalize_tick_ ? finalize_tick_ : ticks();
  return static_cast<double>(end - init_tick_) * seconds_per_tick();
}

void Recorder::start() noexcept {
  if (started_) return;
  InsideTremor guard;
  try {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size_);
    ConfigResult loaded = load_config(process_environment());
    config_ = std::move(loaded.config);

    logger_ = std::make_shared<spdlog::logger>("tremor", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger_->set_pattern("[tremor] %v");
    logger_->set_level(spdlog::level::from_str(config_.log_level == "warn" ? "warning" : config_.log_level));
    for (const std::string& message : loaded.messages) warn0(message);
    if (!config_.enabled) return;

    calibrate_ticks();
    // Only for the automatic CPU-time reader: oncpu, asked for, only warns.
    const std::string oversubscribed = oversubscription();
    auto opened = counters::open_counter_source(config_.counters, {.switch_records = oversubscribed.empty()});
    counter_ = opened.source;
    g_counter = &counter_;
    store_ = std::make_unique<SegmentStore>();
    start_time_unix_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

    // One line on rank 0 (quiet by default): version, counter source and why
    // it was chosen, output directory. A counter the user asked for and did
    // not get is a warning of its own.
    std::string counter_line = std::string(counter_.name());
    if (counter_.uses_switch_records() && counter_.kind() == CounterKind::thread_cputime) {
      counter_line += " (CLOCK_THREAD_CPUTIME_ID at most every 1 ms, context-switch records between)";
    } else if (!opened.switch_records_note.empty()) {
      counter_line += " (CLOCK_THREAD_CPUTIME_ID on every read; " + opened.switch_records_note + ")";
    } else if (!counter_.events().empty()) {
      counter_line += " (" + counter_.events().front() + ")";
    }
    std::string reasons;
    for (const auto& rejection : opened.rejections) {
      reasons += (reasons.empty() ? "" : "; ") + rejection.event + ": " + rejection.reason;
    }
    const bool fallback = counter_.kind() == CounterKind::thread_cputime && config_.counters != "cputime" &&
                          config_.counters != "cputime_syscall";
    if (fallback && config_.counters.empty()) counter_line += ", no usable hardware counter";
    info0("Tremor " TREMOR_VERSION " recording " + std::to_string(world_size_) +
          (world_size_ == 1 ? " process" : " processes") + "; work counter: " + counter_line + "; output in " + config_.output_dir);
    if (fallback && !config_.counters.empty()) {
      warn0("TREMOR_COUNTERS: no usable event (" + reasons + "); work is measured as thread CPU time");
    } else if (!reasons.empty() && world_rank_ == 0) {
      logger_->debug("counter events rejected: " + reasons);
    }
    if (counter_.kind() == CounterKind::thread_oncpu && !oversubscribed.empty()) {
      warn0("TREMOR_COUNTERS=oncpu with " + oversubscribed +
            ": every context switch costs ~1 us more; cputime is cheaper when ranks share cores");
    }
    collect_environment();  // once, here: nothing of it runs in the recording loop
    open_spill();
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &finalize_comm_) == MPI_SUCCESS) {
      PMPI_Comm_set_errhandler(finalize_comm_, MPI_ERRORS_RETURN);
    } else {
      finalize_comm_ = MPI_COMM_NULL;
    }
    started_ = true;
    storing_ = true;
    tick_seconds_ = seconds_per_tick();
    ns_per_tick_ = tick_seconds_ * 1e9;
    g_started_recorder = this;
    init_tick_ = ticks();
    segment_start_tick_ = init_tick_;
    NewCounts before_start;  // nothing is counted before recording starts; to be sure
    take_new_counts(before_start, 0, t_state);
    work_at_segment_start_ = read_work();
    work_start_tick_ = ticks();
    (void)counters::CounterSource::take_slept();  // what the thread slept before recording began
    others_cpu_mark_ = process_and_thread_cpu_s();
    current_segment_.store(0, std::memory_order_relaxed);
    if (ThreadState* const self = t_state ? t_state : register_current_thread()) {
      self->last_counter = work_at_segment_start_.value;
      self->last_counter_tick = ticks();
    }
    if (counter_.measures_cpu_time()) {
      g_long_call_ticks = static_cast<std::uint64_t>(20e-6 / seconds_per_tick());
      g_refresh_ticks = static_cast<std::uint64_t>(100e-6 / seconds_per_tick());
      // Only a system call is worth skipping; with context-switch records a
      // read is mostly memory (and knows about deschedules).
      if (!counter_.uses_switch_records()) g_boundary_busy_ticks = g_long_call_ticks;
    }
    g_recording.store(true, std::memory_order_release);
  } catch (...) {
    g_recording.store(false);
    started_ = false;
    storing_ = false;
  }
}

namespace {

// What closed segments do not hold yet of another thread's count; marks it taken.
[[gnu::always_inline]] inline std::uint64_t take(std::uint64_t& count, std::uint64_t& taken) noexcept {
  const std::uint64_t now = std::atomic_ref<std::uint64_t>(count).load(std::memory_order_relaxed);
  const std::uint64_t part = now - taken;
  taken = now;
  return part;
}

// The calling thread's own counts with other threads registered, read
// plainly and reset to 0: only it writes them, and another closing thread
// reads them only under the boundary lock, which the caller holds.
[[gnu::always_inline]] inline void take_own_counts(ThreadState& state, FeatureVector& features,
                                                   std::uint64_t& mpi_ticks, std::uint64_t& io_ticks) noexcept {
  for (std::size_t i = 0; i < kFeatureCount; ++i) features[i] = state.features[i] - state.taken_features[i];
  mpi_ticks = state.mpi_ticks - state.taken_mpi_ticks;
  io_ticks = state.io_ticks - state.taken_io_ticks;
  state.features = {};
  state.taken_features = {};
  state.mpi_ticks = state.taken_mpi_ticks = 0;
  state.io_ticks = state.taken_io_ticks = 0;
}

// Whether all of the calling thread's own features are 0: sixteen words ORed
// two at a time.
[[gnu::always_inline]] inline bool own_features_zero(const ThreadState& state) noexcept {
  using Pair = std::uint64_t __attribute__((vector_size(16)));
  static_assert(kFeatureCount % 2 == 0);
  Pair any{};
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kFeatureCount; i += 2) {
    Pair now;
    std::memcpy(&now, &state.features[i], sizeof now);
    any |= now;
  }
  return (any[0] | any[1]) == 0;
}

// Counts and tick differences, far below 2^63: one instruction, where an
// unsigned conversion tests the top bit first (a difference wrapped by a
// clock going back reads as negative, whose code is 0).
[[gnu::always_inline]] inline double signed_double(std::uint64_t value) noexcept {
  return static_cast<double>(static_cast<std::int64_t>(value));
}

}  // namespace

bool Recorder::take_new_counts(NewCounts& counts, std::uint16_t call, ThreadState* caller) noexcept {
  ThreadState* const threads = registered_threads();
  if (caller != nullptr && threads == caller && caller->next == nullptr) [[likely]] {
    // The only thread, so only it takes its counts. Its features restart
    // from its last kind's negated (and so do its taken ones): they read 0
    // exactly when the segment has the last kind's features (mod 2^64).
    counts.mpi_ticks = caller->mpi_ticks - caller->taken_mpi_ticks;
    counts.io_ticks = caller->io_ticks - caller->taken_io_ticks;
    caller->mpi_ticks = caller->taken_mpi_ticks = 0;
    caller->io_ticks = caller->taken_io_ticks = 0;
    if (has_last_kind_ && call == last_call_ && own_features_zero(*caller)) {
      caller->features = caller->taken_features;
      return true;
    }
    for (std::size_t i = 0; i < kFeatureCount; ++i) {
      counts.features[i] = caller->features[i] - caller->taken_features[i];
      caller->features[i] = caller->taken_features[i] = 0 - counts.features[i];  // the kind stored next
    }
    return false;
  }
  return take_counts_of_all_threads(counts, call);
}

bool Recorder::take_counts_of_all_threads(NewCounts& counts, std::uint16_t call) noexcept {
  ThreadState* const caller = t_state;
  ThreadState* const threads = registered_threads();
  counts = NewCounts{};
  if (caller != nullptr) take_own_counts(*caller, counts.features, counts.mpi_ticks, counts.io_ticks);
  for (ThreadState* state = threads; state != nullptr; state = state->next) {
    if (state == caller) continue;
    for (std::size_t i = 0; i < kFeatureCount; ++i)
      counts.features[i] += take(state->features[i], state->taken_features[i]);
    counts.mpi_ticks += take(state->mpi_ticks, state->taken_mpi_ticks);
    counts.io_ticks += take(state->io_ticks, state->taken_io_ticks);
  }
  return has_last_kind_ && call == last_call_ && counts.features == last_features_;
}

bool Recorder::store_segment(const QuantizedValues& values, const NewCounts& counts, std::uint16_t call,
                             bool same_kind) noexcept {
  if (same_kind) return store_->append_same_kind(values);
  if (!store_->append(values, counts.features, call)) return false;
  last_features_ = counts.features;
  last_call_ = call;
  has_last_kind_ = true;
  return true;
}

template <bool kLongCollective>
[[gnu::always_inline]] inline void Recorder::close_segment_after(CallId call, std::uint64_t start, std::uint64_t end,
                                                                 WorkReading work_at_entry) noexcept {
  std::lock_guard lock(boundary_lock_);
  ThreadState* const caller = t_state;
  const bool cputime = !kLongCollective || counter_.measures_cpu_time();  // a short one was tested for it
  const WorkReading at_exit = kLongCollective ? read_work() : work_at_entry;
  const std::uint64_t exit_tick = kLongCollective ? ticks() : start;
  NewCounts counts;
  const bool same_kind = take_new_counts(counts, static_cast<std::uint16_t>(call), caller);
  const double tick = tick_seconds_;

  QuantizedValues values{};
  values[index(Quantized::duration)] = signed_double(end - segment_start_tick_) * tick;
  values[index(Quantized::mpi_time)] = signed_double(counts.mpi_ticks) * tick;
  values[index(Quantized::io_time)] = signed_double(counts.io_ticks) * tick;
  values[index(Quantized::wait_time)] = signed_double(end - start) * tick;
  const bool work_known =
      work_at_entry.valid && work_at_segment_start_.valid && work_at_entry.value >= work_at_segment_start_.value;
  double work = work_known ? signed_double(work_at_entry.value - work_at_segment_start_.value) : 0.0;
  if (cputime && caller != nullptr) {
    // The counter is read at boundaries and at the exit of long calls only
    // (a read costs 0.2-1 us), so the CPU of the segment's other MPI and I/O
    // calls is in the delta: short calls busy-poll (their wall time is CPU
    // time), long ones were measured (account_long_call).
    const double inside_ns =
        signed_double(caller->short_inside_ticks) * ns_per_tick_ + signed_double(caller->long_inside_counter);
    work = std::max(0.0, work - inside_ns);
  }
  const std::uint64_t slept_ns = counters::CounterSource::take_slept();
  if (caller != nullptr) {
    caller->short_inside_ticks = 0;
    caller->long_inside_counter = 0;
  }
  values[index(Quantized::work)] = work;
  if (cputime && work_known) {
    // Off the CPU before the boundary (docs/statistics-primary.md): the wall
    // time from the reading that opened the segment to the boundary's entry,
    // minus the CPU time in between (nanoseconds) and the I/O calls' wall
    // time (blocking on a file is the I/O's own cost, measured apart).
    const double wall = signed_double(start - work_start_tick_) * tick;
    const double cpu = signed_double(work_at_entry.value - work_at_segment_start_.value) * 1e-9;
    double off_cpu = std::max(0.0, wall - values[index(Quantized::io_time)] - cpu);
    // And inside a long boundary collective: MPI polls while it waits, so time
    // off the CPU there was slept (a delay inside the call) or taken by
    // something else. The analysis removes what a rank spent waiting for a
    // later rank anyway (a library that blocks while it waits).
    double closing = 0.0;
    if (kLongCollective && at_exit.valid && at_exit.value >= work_at_entry.value) {
      const double inside_wall = signed_double(exit_tick - start) * tick;
      closing = std::max(0.0, inside_wall - signed_double(at_exit.value - work_at_entry.value) * 1e-9);
      off_cpu += closing;
    }
    // Not the thread's own blocking outside MPI and I/O calls (a join, a
    // lock, a sleep: its helper threads' work, docs/statistics-primary.md).
    // Inside calls it counts: MPI polls, so a block there was a delay (the
    // long calls' were dropped at their exits, the closing one's here).
    if (slept_ns >= kOwnBlockingReadFloorNs) [[unlikely]]
      off_cpu -= own_blocking_s(signed_double(slept_ns) * 1e-9 - closing, off_cpu);
    values[index(Quantized::off_cpu_time)] = off_cpu;
  }

  if (!store_segment(values, counts, static_cast<std::uint16_t>(call), same_kind)) [[unlikely]] {
    stop_out_of_memory();
  } else {
    spill_.add(*store_, end);
  }
  segment_start_tick_ = end;
  current_segment_.store(current_segment_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // One counter read per boundary: the entry's or the exit's opens the next segment.
  work_at_segment_start_ = at_exit;
  work_start_tick_ = exit_tick;
  if (!kLongCollective) {
    // The short collective's wall time is CPU time, taken out of the next
    // segment like a short call's.
    caller->short_inside_ticks = end - start;
    caller->last_counter = work_at_entry.value;
    caller->last_counter_tick = start;
    return;
  }
  if (caller != nullptr) {
    caller->last_counter = work_at_segment_start_.value;
    caller->last_counter_tick = work_start_tick_;
  }
}

Recorder::ProcessCpu Recorder::process_and_thread_cpu_s() noexcept {
  timespec process{};
  timespec thread{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &process);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &thread);
  return {static_cast<double>(process.tv_sec) + 1e-9 * static_cast<double>(process.tv_nsec),
          static_cast<double>(thread.tv_sec) + 1e-9 * static_cast<double>(thread.tv_nsec)};
}

double Recorder::own_blocking_s(double blocked_outside_calls_s, double off_cpu_s) noexcept {
  // The thread waited for its own process's work only as far as the
  // process's other threads used CPUs meanwhile (helpers, OpenMP workers):
  // a block with nothing else of the process running (a sleep, a slowed
  // core's stand-in) stays in the off-CPU time. Since the last reading: at
  // most a few segments more than this one's.
  const ProcessCpu now = process_and_thread_cpu_s();
  const double others = (now.process_s - others_cpu_mark_.process_s) - (now.thread_s - others_cpu_mark_.thread_s);
  others_cpu_mark_ = now;
  const double own = std::clamp(std::min(blocked_outside_calls_s, others), 0.0, off_cpu_s);
  own_sleep_s_ += own;
  return own;
}

void Recorder::close_segment(CallId call, std::uint64_t start, std::uint64_t end, WorkReading work_at_entry) noexcept {
  if (!storing_) return;
  // A short collective busy-polls: its entry reading also opens the next
  // segment (one counter read per boundary). After a long one the counter is
  // read at once (its busy-wait is not work), before anything else runs.
  if (counter_.measures_cpu_time() && t_state != nullptr && work_at_entry.valid && end - start < g_long_call_ticks)
      [[likely]] {
    close_segment_after<false>(call, start, end, work_at_entry);
  } else {
    close_segment_after<true>(call, start, end, work_at_entry);
  }
}

void Recorder::stop_out_of_memory() noexcept {
  store_failed_ = true;
  storing_ = false;
  warn("out of memory for segments; recording stops here, the data so far is kept");
}

bool Recorder::finish() noexcept {
  if (!started_) return false;
  g_recording.store(false, std::memory_order_release);
  finalize_tick_ = ticks();
  // The last segment runs from the last boundary to MPI_Finalize.
  close_segment(CallId::Finalize, finalize_tick_, finalize_tick_, read_work());
  current_segment_.store(-1, std::memory_order_relaxed);
  end_spill(SpillEnd::finalize_unsaved);
  return true;
}

void Recorder::open_spill() noexcept {
  try {
    SpillHeader header;
    header.rank = world_rank_;
    header.world_size = world_size_;
    header.pid = ::getpid();
    header.host = processor_name();
    header.program = program_invocation_short_name;
    header.command_line = read_command_line();
    header.job_id = job_id();
    header.job = job_record();
    header.tremor_version = TREMOR_VERSION;
    header.mpi_flavour = TREMOR_MPI_FLAVOUR;
    header.mpi_library_version = mpi_library_version();
    header.counter_source = counter_kind();
    header.counter_unit = counter_.unit();
    header.counter_events = counter_.events();
    header.configuration = effective_configuration(config_);
    for (std::string_view name : kCallNames) header.call_names.emplace_back(name);
    header.environment = encode_environment(collected_environment(), std::size_t{256} << 10);
    header.start_time_unix = start_time_unix_;
    header.seconds_per_tick = seconds_per_tick();
    spill_.open(config_, std::move(header),
                {[](const std::string& note) noexcept { instance().debug0(note); },
                 [](const std::string& warning) noexcept { instance().warn(warning); }});
    if (spill_.active()) std::atexit(flush_spill_at_exit);
  } catch (...) {
  }
}

void Recorder::end_spill(SpillEnd reason) noexcept {
  // Another thread may be inside a boundary; never wait on it for long (200 ms).
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (boundary_lock_.try_lock()) {
      std::lock_guard lock(boundary_lock_, std::adopt_lock);
      if (store_) spill_.finish(*store_, reason);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Recorder::settle_spill(bool run_file_written) noexcept {
  if (run_file_written) spill_.remove();
}

std::string Recorder::spill_stem() const { return spill_.created() ? spill_.stem().string() : std::string(); }

std::string Recorder::spill_kept_note() const {
  if (!spill_.created()) return {};
  return "; the crash-recovery spill files are kept: tremor analyze --recover " + spill_.stem().string();
}

void Recorder::info0(const std::string& message) noexcept {
  if (world_rank_ != 0 || !logger_) return;
  InsideTremor guard;
  try {
    logger_->info(message);
  } catch (...) {
  }
}

void Recorder::warn0(const std::string& message) noexcept {
  if (world_rank_ != 0 || !logger_) return;
  InsideTremor guard;
  try {
    logger_->warn("warning: " + message);
  } catch (...) {
  }
}

void Recorder::debug0(const std::string& message) noexcept {
  if (world_rank_ != 0 || !logger_) return;
  InsideTremor guard;
  try {
    logger_->debug(message);
  } catch (...) {
  }
}

void Recorder::warn(const std::string& message) noexcept {
  if (!logger_) return;
  InsideTremor guard;
  try {
    logger_->warn("warning: rank " + std::to_string(world_rank_) + ": " + message);
  } catch (...) {
  }
}

}  // namespace tremor::interpose
