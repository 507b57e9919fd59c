#include "finalize_exchange.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

namespace tremor::interpose {

double monotonic_s() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

Completion complete_by(std::span<MPI_Request> requests, double until, const std::function<bool()>& give_up) noexcept {
  constexpr double kYieldingSeconds = 0.02;
  const double yield_until = monotonic_s() + kYieldingSeconds;
  long pause_ns = 10000;
  for (;;) {
    int all_done = 0;
    if (PMPI_Testall(static_cast<int>(requests.size()), requests.data(), &all_done, MPI_STATUSES_IGNORE) !=
        MPI_SUCCESS) {
      return Completion::failed;
    }
    if (all_done) return Completion::done;
    const double now = monotonic_s();
    if (now > until) return Completion::late;
    try {
      if (give_up && give_up()) return Completion::late;
    } catch (...) {
      return Completion::failed;
    }
    if (now < yield_until) {
      sched_yield();
      continue;
    }
    const timespec pause{0, pause_ns};
    nanosleep(&pause, nullptr);
    pause_ns = std::min(2 * pause_ns, 1000000L);
  }
}

ByteBlock::ByteBlock(std::size_t bytes) noexcept {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  if (bytes == 0 || bytes > static_cast<std::size_t>(INT32_MAX)) return;
  if (PMPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type) != MPI_SUCCESS) return;
  if (PMPI_Type_commit(&type) != MPI_SUCCESS) {
    PMPI_Type_free(&type);
    return;
  }
  type_ = type;
}

// Freeing a type or an operation still used by a pending collective only
// marks it: the collective completes normally.
ByteBlock::~ByteBlock() {
  if (type_ != MPI_DATATYPE_NULL) PMPI_Type_free(&type_);
}

UserOp::UserOp(MPI_User_function* function) noexcept {
  MPI_Op op = MPI_OP_NULL;
  if (PMPI_Op_create(function, 1, &op) == MPI_SUCCESS) op_ = op;
}

UserOp::~UserOp() {
  if (op_ != MPI_OP_NULL) PMPI_Op_free(&op_);
}

}  // namespace tremor::interpose
