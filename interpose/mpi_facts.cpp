// Argument helpers, the per-communicator boundary cache and the persistent
// request table used by the generated wrappers.
#include <array>
#include <atomic>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "recorder.hpp"
#include "wrapper_support.hpp"

namespace tremor::interpose {
namespace {

bool is_inter(MPI_Comm comm) noexcept {
  int flag = 0;
  return PMPI_Comm_test_inter(comm, &flag) == MPI_SUCCESS && flag != 0;
}

struct CommunicatorCache {
  std::mutex mutex;
  std::unordered_map<std::uintptr_t, bool> spans;
};
CommunicatorCache& communicator_cache() {
  // Function-local: no work at load time; never destroyed (MPI_Finalize may
  // come from an exit-time destructor, docs/reliability.md#exit-time-finalize).
  static CommunicatorCache& cache = *new CommunicatorCache();
  return cache;
}

struct PersistentTable {
  std::mutex mutex;
  std::unordered_map<std::uintptr_t, PersistentFacts> requests;
  std::atomic<std::size_t> size{0};
};
PersistentTable& persistent_table() {
  static PersistentTable& table = *new PersistentTable();  // never destroyed, as above
  return table;
}

}  // namespace

std::atomic<std::uint64_t> g_type_generation{1};
constinit thread_local std::array<TypeSizeEntry, 1U << kTypeSizeSlotBits> t_type_sizes
    __attribute__((tls_model("initial-exec"))){};

void forget_type_sizes() noexcept { g_type_generation.fetch_add(1, std::memory_order_acq_rel); }

std::uint64_t type_size_miss(MPI_Datatype datatype, TypeSizeEntry& entry, std::uint64_t generation) noexcept {
  if (datatype == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS || size <= 0) return 0;
  entry = TypeSizeEntry{handle_key(datatype), generation, static_cast<std::uint64_t>(size)};
  return entry.size;
}

long long sum_counts(const int counts[], int n) noexcept {
  long long total = 0;
  if (counts == nullptr) return 0;
  for (int i = 0; i < n; ++i) total += counts[i] > 0 ? counts[i] : 0;
  return total;
}

std::uint64_t typed_sum(const int counts[], const MPI_Datatype types[], int n) noexcept {
  std::uint64_t total = 0;
  if (counts == nullptr || types == nullptr) return 0;
  for (int i = 0; i < n; ++i) total += type_bytes(counts[i], types[i]);
  return total;
}

int comm_size(MPI_Comm comm) noexcept {
  int size = 0;
  if (is_inter(comm)) {
    PMPI_Comm_remote_size(comm, &size);
  } else {
    PMPI_Comm_size(comm, &size);
  }
  return size;
}

int comm_rank(MPI_Comm comm) noexcept {
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

bool is_root(int root, MPI_Comm comm) noexcept {
  if (root == MPI_ROOT) return true;
  if (root == MPI_PROC_NULL || root < 0 || is_inter(comm)) return false;
  return comm_rank(comm) == root;
}

bool spans_other_world(MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_SELF || comm == MPI_COMM_NULL) return false;
  auto& cache = communicator_cache();
  const std::uintptr_t key = handle_key(comm);
  try {
    std::lock_guard lock(cache.mutex);
    if (const auto it = cache.spans.find(key); it != cache.spans.end()) return it->second;
    int size = 0;
    // Within one MPI_COMM_WORLD (no dynamic processes) an intracommunicator
    // of the world's size has the world's group.
    const bool spans =
        !is_inter(comm) && PMPI_Comm_size(comm, &size) == MPI_SUCCESS && size == Recorder::instance().world_size();
    cache.spans.emplace(key, spans);
    return spans;
  } catch (...) {
    return false;
  }
}

void forget_communicator(MPI_Comm comm) noexcept {
  auto& cache = communicator_cache();
  try {
    std::lock_guard lock(cache.mutex);
    cache.spans.erase(handle_key(comm));
  } catch (...) {
  }
}

void remember_persistent(MPI_Request request, bool send, std::uint64_t bytes) noexcept {
  auto& table = persistent_table();
  try {
    std::lock_guard lock(table.mutex);
    table.requests[handle_key(request)] = PersistentFacts{true, send, bytes};
    table.size.store(table.requests.size(), std::memory_order_relaxed);
  } catch (...) {
  }
}

void forget_persistent(MPI_Request request) noexcept {
  auto& table = persistent_table();
  if (table.size.load(std::memory_order_relaxed) == 0 || request == MPI_REQUEST_NULL) return;
  std::lock_guard lock(table.mutex);
  table.requests.erase(handle_key(request));
  table.size.store(table.requests.size(), std::memory_order_relaxed);
}

PersistentFacts persistent_facts(MPI_Request request) noexcept {
  auto& table = persistent_table();
  if (table.size.load(std::memory_order_relaxed) == 0 || request == MPI_REQUEST_NULL) return {};
  std::lock_guard lock(table.mutex);
  const auto it = table.requests.find(handle_key(request));
  return it == table.requests.end() ? PersistentFacts{} : it->second;
}

PersistentBatch persistent_facts(int count, const MPI_Request requests[]) noexcept {
  PersistentBatch batch;
  if (requests == nullptr) return batch;
  for (int i = 0; i < count; ++i) {
    const PersistentFacts facts = persistent_facts(requests[i]);
    if (!facts.known) continue;
    if (facts.send) {
      ++batch.sends;
      batch.bytes_sent += facts.bytes;
    } else {
      ++batch.recvs;
      batch.bytes_received += facts.bytes;
    }
  }
  return batch;
}

void count_started(ThreadState& state, const PersistentFacts& facts) noexcept {
  if (!facts.known) return;
  if (facts.send) {
    state.add(Feature::p2p_send_nonblocking, 1);
    state.add(Feature::bytes_sent, facts.bytes);
  } else {
    state.add(Feature::p2p_recv_nonblocking, 1);
    state.add(Feature::bytes_received, facts.bytes);
  }
}

void count_started(ThreadState& state, const PersistentBatch& batch) noexcept {
  state.add(Feature::p2p_send_nonblocking, batch.sends);
  state.add(Feature::p2p_recv_nonblocking, batch.recvs);
  state.add(Feature::bytes_sent, batch.bytes_sent);
  state.add(Feature::bytes_received, batch.bytes_received);
}

}  // namespace tremor::interpose
