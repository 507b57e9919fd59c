// Tremor's end-of-run collectives are nonblocking and waited for with a
// deadline (the finalize watchdog, TREMOR_FINALIZE_LIMIT): a rank that runs
// out of time stops waiting and goes on to MPI_Finalize. Every rank posts
// every collective of the end-of-run exchange whatever happens, so none is
// left with a send that no receive will ever match (MPICH's MPI_Finalize
// waits for such a send forever).
#pragma once
#include <mpi.h>

#include <functional>
#include <limits>
#include <span>

namespace tremor::interpose {

double monotonic_s() noexcept;

// No limit until armed; armed once every rank has reached MPI_Finalize (the
// application's own imbalance is not Tremor's work), then limit_s seconds.
class FinalizeDeadline {
 public:
  explicit FinalizeDeadline(double limit_s) noexcept : limit_s_(limit_s) {}
  void arm() noexcept { end_ = limit_s_ < 0.0 ? kNever : monotonic_s() + limit_s_; }
  double end() const noexcept { return end_; }
  bool passed() const noexcept { return monotonic_s() > end_; }
  double limit_s() const noexcept { return limit_s_; }
  // How long ranks other than the root wait for its outcome beyond the
  // limit: the root decides before its own deadline, and the ranks' clocks
  // start within one collective of each other.
  double grace_s() const noexcept { return limit_s_ < 0.0 ? 0.0 : limit_s_ / 10.0 + 2.0; }
  static constexpr double kNever = std::numeric_limits<double>::infinity();

 private:
  double limit_s_;
  double end_ = kNever;
};

enum class Completion { done, late, failed };

// Tests the requests until all have completed, the monotonic clock passes
// `until` (late) or `give_up` says so (late). For the first 20 ms each test
// is followed by sched_yield (a collective's steps follow each other at once
// even when ranks outnumber the cores), then by a sleep growing to 1 ms, so
// that ranks waiting long (for the root's file) leave the cores to it.
Completion complete_by(std::span<MPI_Request> requests, double until,
                       const std::function<bool()>& give_up = {}) noexcept;

// A committed contiguous datatype of `bytes` bytes, freed with the object.
class ByteBlock {
 public:
  explicit ByteBlock(std::size_t bytes) noexcept;
  ~ByteBlock();
  ByteBlock(const ByteBlock&) = delete;
  ByteBlock& operator=(const ByteBlock&) = delete;
  MPI_Datatype type() const noexcept { return type_; }
  bool valid() const noexcept { return type_ != MPI_DATATYPE_NULL; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A commutative user-defined reduction, freed with the object.
class UserOp {
 public:
  explicit UserOp(MPI_User_function* function) noexcept;
  ~UserOp();
  UserOp(const UserOp&) = delete;
  UserOp& operator=(const UserOp&) = delete;
  MPI_Op op() const noexcept { return op_; }
  bool valid() const noexcept { return op_ != MPI_OP_NULL; }

 private:
  MPI_Op op_ = MPI_OP_NULL;
};

}  // namespace tremor::interpose
