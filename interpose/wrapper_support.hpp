// What the generated MPI wrappers (mpi_wrappers.cpp) call: the runtime hot
// path plus small helpers that turn call arguments into features. Helpers run
// only after a successful call, so arguments the MPI standard says are
// ignored (e.g. the send type with MPI_IN_PLACE) are never interpreted.
#pragma once
#include <dlfcn.h>
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "call_ids.hpp"
#include "runtime.hpp"
#include "tremor/counters/counter_source.hpp"

namespace tremor::interpose {
// Internal to the library: the hot path reads its globals directly, not through the GOT.
#pragma GCC visibility push(hidden)

// The next definition of an MPI symbol after Tremor's (a stacked injector or
// the MPI library): Tremor defines both MPI_X and PMPI_X.
inline void* next_mpi_symbol(const char* name) noexcept { return dlsym(RTLD_NEXT, name); }

// A process that runs another MPI than the one Tremor was built for
// (mpi_library_check.cpp) gets no recording: every exported MPI_X / PMPI_X is a
// forwarding entry that jumps to Tremor's wrapper, or, once forward_only is
// set, straight to the real PMPI_X with the caller's registers and stack
// untouched. A C++ forward cannot do this: it passes arguments with this
// build's types, and the two MPIs' handles differ (MPICH: int, Open MPI:
// pointers, which an int would cut to 32 bits). The test is one compare of a
// byte set once, before main, and a branch always predicted the same way.
// (bool tremor_forward_only is declared in runtime.hpp.)
#if defined(__x86_64__)
#define TREMOR_FORWARDING_ENTRY(exported, recorded, next)                                                   \
  asm(".text\n.globl " #exported "\n.type " #exported ", @function\n.p2align 4\n" #exported ":\n"          \
      "  cmpb $0, tremor_forward_only(%rip)\n  jne 1f\n  jmp " #recorded "\n1:\n  jmp *" #next "(%rip)\n" \
      ".size " #exported ", . - " #exported "\n");
#elif defined(__aarch64__)
#define TREMOR_FORWARDING_ENTRY(exported, recorded, next)                                                     \
  asm(".text\n.globl " #exported "\n.type " #exported ", %function\n.p2align 4\n" #exported ":\n"            \
      "  adrp x16, tremor_forward_only\n  ldrb w16, [x16, :lo12:tremor_forward_only]\n  cbnz w16, 1f\n"       \
      "  b " #recorded "\n1:\n  adrp x16, " #next "\n  ldr x16, [x16, :lo12:" #next "]\n  br x16\n"          \
      ".size " #exported ", . - " #exported "\n");
#else
#error "TREMOR_FORWARDING_ENTRY: no forwarding entry for this architecture (x86-64 and AArch64 only)"
#endif

// The program's MPI's PMPI_X for a forwarding entry (looked up in that
// library: the first in dlsym(RTLD_NEXT)'s order may be Tremor's own MPI); a
// function that returns an error when that MPI has no such call.
void* forwarding_target(const char* name) noexcept;
// The real call for Tremor's own wrappers: the next definition, or the
// forwarding target in a process that runs another MPI.
inline void* real_mpi_call(const char* name) noexcept {
  return forward_only() ? forwarding_target(name) : next_mpi_symbol(name);
}
// Generated (mpi_wrappers.cpp): points every forwarding entry's next_X at the
// real call. Before main, while the process has one thread.
void forward_every_mpi_call() noexcept;

// MPICH handles are ints, Open MPI handles are pointers.
template <typename Handle>
std::uintptr_t handle_key(Handle handle) noexcept {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<std::uintptr_t>(handle);
  } else {
    return static_cast<std::uintptr_t>(static_cast<std::make_unsigned_t<Handle>>(handle));
  }
}

// Type sizes, cached per thread (PMPI_Type_size was half of a send's added
// instructions). A handle's size is fixed from its creation to its
// MPI_Type_free, after which the handle may be reused: every free moves the
// generation on and so retires every thread's entries. The hit is inline.
struct TypeSizeEntry {
  std::uintptr_t key;
  std::uint64_t generation;
  std::uint64_t size;
};
inline constexpr unsigned kTypeSizeSlotBits = 4;
extern std::atomic<std::uint64_t> g_type_generation;  // starts at 1: empty entries never match
extern constinit thread_local std::array<TypeSizeEntry, 1U << kTypeSizeSlotBits> t_type_sizes
    __attribute__((tls_model("initial-exec")));
// The miss: PMPI_Type_size, remembered in the entry; 0 for MPI_DATATYPE_NULL
// or a type MPI refuses (never cached).
std::uint64_t type_size_miss(MPI_Datatype datatype, TypeSizeEntry& entry, std::uint64_t generation) noexcept;
inline std::uint64_t type_bytes(long long count, MPI_Datatype datatype) noexcept {
  if (count <= 0) return 0;
#if defined(MPICH)
  // A predefined MPICH type's handle holds its size (kind bits 01, size in
  // bits 8-15: what MPICH's own MPI_Type_size reads).
  if ((static_cast<unsigned>(datatype) >> 30) == 1U)
    return static_cast<std::uint64_t>(count) * ((static_cast<unsigned>(datatype) >> 8) & 0xFFU);
#endif
  const std::uintptr_t key = handle_key(datatype);
  const std::uint64_t generation = g_type_generation.load(std::memory_order_acquire);
  // Fibonacci hashing spreads both MPICH's small ints and Open MPI's pointers.
  TypeSizeEntry& entry =
      t_type_sizes[(static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL) >> (64 - kTypeSizeSlotBits)];
  const std::uint64_t size =
      entry.key == key && entry.generation == generation ? entry.size : type_size_miss(datatype, entry, generation);
  return static_cast<std::uint64_t>(count) * size;
}
// At MPI_Type_free: the handle may be reused for a type of another size.
void forget_type_sizes() noexcept;
// Exactly what arrived. MPICH and Open MPI keep it in bytes in the status
// (the fields PMPI_Get_count divides; the call cost ~80 instructions); other
// MPIs: the element count times the type's size.
inline std::uint64_t received_bytes(const MPI_Status* status, [[maybe_unused]] MPI_Datatype datatype) noexcept {
#if defined(MPICH)
  return (static_cast<std::uint64_t>(static_cast<unsigned>(status->count_hi_and_cancelled) >> 1) << 32) +
         static_cast<unsigned>(status->count_lo);
#elif defined(OPEN_MPI)
  return status->_ucount;
#else
  int count = 0;
  if (PMPI_Get_count(status, datatype, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) return 0;
  return type_bytes(count, datatype);
#endif
}
long long sum_counts(const int counts[], int n) noexcept;
std::uint64_t typed_sum(const int counts[], const MPI_Datatype types[], int n) noexcept;
// Remote group size for intercommunicators, local size otherwise.
int comm_size(MPI_Comm comm) noexcept;
int comm_rank(MPI_Comm comm) noexcept;
bool is_root(int root, MPI_Comm comm) noexcept;
inline bool in_place(const void* buffer) noexcept { return buffer == MPI_IN_PLACE; }

// True when a collective on comm closes a segment: an intracommunicator whose
// group is all of MPI_COMM_WORLD. Cached per handle; the entry is dropped at
// MPI_Comm_free/MPI_Comm_disconnect so a reused handle is decided afresh.
bool spans_other_world(MPI_Comm comm) noexcept;
inline bool spans_world(MPI_Comm comm) noexcept { return comm == MPI_COMM_WORLD || spans_other_world(comm); }
void forget_communicator(MPI_Comm comm) noexcept;

// Persistent requests: what MPI_Start will start, remembered at *_init.
struct PersistentFacts {
  bool known = false;
  bool send = false;
  std::uint64_t bytes = 0;
};
struct PersistentBatch {
  std::uint64_t sends = 0, recvs = 0, bytes_sent = 0, bytes_received = 0;
};
void remember_persistent(MPI_Request request, bool send, std::uint64_t bytes) noexcept;
void forget_persistent(MPI_Request request) noexcept;
PersistentFacts persistent_facts(MPI_Request request) noexcept;
PersistentBatch persistent_facts(int count, const MPI_Request requests[]) noexcept;
void count_started(ThreadState& state, const PersistentFacts& facts) noexcept;
void count_started(ThreadState& state, const PersistentBatch& batch) noexcept;

// Work counter of the calling thread at the entry of a boundary collective.
struct WorkReading {
  std::uint64_t value = 0;
  bool valid = false;
};
WorkReading read_work() noexcept;
// The recorder's counter source, set before recording starts.
extern constinit const counters::CounterSource* g_counter;
WorkReading busy_since_last_read(const ThreadState& state, std::uint64_t since) noexcept;
// The same as read_work, but without the counter read when the thread read it
// very recently. With the CPU-time counter a read is a system call (0.4-0.8 us
// on the build VM, most of a boundary's cost). A thread that read it less than
// 20 us ago cannot have been descheduled for longer than that since, so the
// time since is taken as busy, as for a short MPI call, and the read is
// skipped: only back-to-back boundaries (segments under 20 us) skip it, and
// the next real reading takes any difference (at most that 20 us) into the
// next segment. Inline: it is on every boundary's path.
[[gnu::always_inline]] inline WorkReading boundary_entry_work(ThreadState& state) noexcept {
  if (g_boundary_busy_ticks != 0) {
    const std::uint64_t since = ticks() - state.last_counter_tick;
    if (since < g_boundary_busy_ticks) return busy_since_last_read(state, since);
  }
  return WorkReading{g_counter->read(), true};
}
// Closes the open segment after a boundary collective returned.
void close_segment(CallId call, std::uint64_t start, std::uint64_t end, WorkReading work_at_entry) noexcept;

#pragma GCC visibility pop
}  // namespace tremor::interpose
