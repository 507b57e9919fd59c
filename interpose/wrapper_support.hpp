// What the generated MPI wrappers (mpi_wrappers.cpp) call: the runtime hot
// path plus small helpers that turn call arguments into features. Helpers run
// only after a successful call, so arguments the MPI standard says are
// ignored (e.g. the send type with MPI_IN_PLACE) are never interpreted.
#pragma once
#include <dlfcn.h>
#include <mpi.h>

#include <cstdint>

#include "call_ids.hpp"
#include "runtime.hpp"

namespace tremor::interpose {

// The next definition of an MPI symbol after Tremor's (a stacked injector or
// the MPI library): Tremor defines both MPI_X and PMPI_X.
inline void* next_mpi_symbol(const char* name) noexcept { return dlsym(RTLD_NEXT, name); }

std::uint64_t type_bytes(long long count, MPI_Datatype datatype) noexcept;
// At MPI_Type_free: the handle may be reused for a type of another size.
void forget_type_sizes() noexcept;
std::uint64_t received_bytes(const MPI_Status* status, MPI_Datatype datatype) noexcept;
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
bool spans_world(MPI_Comm comm) noexcept;
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
// The same, but without the counter read when the thread read it very
// recently (CPU-time counter only): see Recorder::boundary_entry_work.
WorkReading boundary_entry_work(ThreadState& state) noexcept;
// Closes the open segment after a boundary collective returned.
void close_segment(CallId call, std::uint64_t start, std::uint64_t end, WorkReading work_at_entry) noexcept;

}  // namespace tremor::interpose
