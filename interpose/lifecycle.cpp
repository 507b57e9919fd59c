// MPI_Init, MPI_Init_thread, MPI_Finalize and MPI_Abort (and their PMPI_
// names, which Fortran bindings call directly): the recorder starts when
// initialisation succeeded, hands over to the finalize driver before the MPI
// library shuts down, and ends the spill before an abort. A process that
// never calls MPI_Init stays inert, and so does one with TREMOR_DISABLE=1.
#include <mpi.h>

#include <atomic>

#include "early_checks.hpp"
#include "finalize_driver.hpp"
#include "process_facts.hpp"
#include "recorder.hpp"
#include "wrapper_support.hpp"

namespace tremor::interpose {
namespace {

using InitFn = int (*)(int*, char***);
using InitThreadFn = int (*)(int*, char***, int, int*);
using FinalizeFn = int (*)();
using AbortFn = int (*)(MPI_Comm, int);

// After a successful PMPI_Init(_thread): the recorder, then the scheduler
// baseline, so that Tremor's own start-up (reading the node's facts) is not
// counted with the run's segments.
void begin_recording() {
  Recorder::instance().start();
  note_scheduler_at_init();
  run_early_checks(Recorder::instance());
}

// MPI_Init's and MPI_Init_thread's arguments have the same types in every
// MPI, so these forward in C++ even in a process that runs another MPI
// (forward_only, mpi_library_check.cpp): there the success code is only
// compared with 0, which every MPI's MPI_SUCCESS is.
int start_after_init(int* argc, char*** argv) {
  static const auto real = reinterpret_cast<InitFn>(real_mpi_call("PMPI_Init"));
  if (!real) return MPI_ERR_INTERN;
  const int rc = real(argc, argv);
  if (rc == MPI_SUCCESS && !forward_only() && !disabled_by_environment()) begin_recording();
  return rc;
}

int start_after_init_thread(int* argc, char*** argv, int required, int* provided) {
  static const auto real = reinterpret_cast<InitThreadFn>(real_mpi_call("PMPI_Init_thread"));
  if (!real) return MPI_ERR_INTERN;
  const int rc = real(argc, argv, required, provided);
  if (rc == MPI_SUCCESS && !forward_only() && !disabled_by_environment()) begin_recording();
  return rc;
}

int report_then_finalize() {
  static const auto real = reinterpret_cast<FinalizeFn>(real_mpi_call("PMPI_Finalize"));
  if (!real) return MPI_ERR_INTERN;
  Recorder& recorder = Recorder::instance();
  if (recorder.finish()) {
    InsideTremor guard;
    run_finalize_driver(recorder);
  }
  return real();
}

}  // namespace

// The spill gets its end record before the MPI library kills the job.
// MPI_Abort takes a communicator, so it is exported through a forwarding
// entry (wrapper_support.hpp) like the generated wrappers.
[[gnu::used]] constinit std::atomic<AbortFn> next_abort asm("tremor_next_Abort"){nullptr};
[[gnu::used]] int flush_then_abort(MPI_Comm comm, int code) asm("tremor_record_Abort");
int flush_then_abort(MPI_Comm comm, int code) {
  AbortFn real = next_abort.load(std::memory_order_relaxed);
  if (!real) {
    real = reinterpret_cast<AbortFn>(next_mpi_symbol("PMPI_Abort"));
    next_abort.store(real, std::memory_order_relaxed);
  }
  Recorder& recorder = Recorder::instance();
  if (recorder.started()) recorder.end_spill(SpillEnd::abort);
  if (!real) return MPI_ERR_INTERN;
  return real(comm, code);
}
void forward_abort() noexcept {
  next_abort.store(reinterpret_cast<AbortFn>(forwarding_target("PMPI_Abort")), std::memory_order_relaxed);
}
TREMOR_FORWARDING_ENTRY(MPI_Abort, tremor_record_Abort, tremor_next_Abort)
TREMOR_FORWARDING_ENTRY(PMPI_Abort, tremor_record_Abort, tremor_next_Abort)

// For a stacked libtremor-inject: the segment its delays fall in (inject_api.h).
extern "C" TREMOR_EXPORT long long tremor_current_segment(void) {
  return tremor::interpose::Recorder::instance().current_segment();
}
extern "C" TREMOR_EXPORT int MPI_Init(int* argc, char*** argv) { return start_after_init(argc, argv); }
extern "C" TREMOR_EXPORT int PMPI_Init(int* argc, char*** argv) { return start_after_init(argc, argv); }
extern "C" TREMOR_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return start_after_init_thread(argc, argv, required, provided);
}
extern "C" TREMOR_EXPORT int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return start_after_init_thread(argc, argv, required, provided);
}
extern "C" TREMOR_EXPORT int MPI_Finalize(void) { return report_then_finalize(); }
extern "C" TREMOR_EXPORT int PMPI_Finalize(void) { return report_then_finalize(); }

}  // namespace tremor::interpose
