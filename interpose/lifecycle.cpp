// MPI_Init, MPI_Init_thread, MPI_Finalize and MPI_Abort (and their PMPI_
// names, which Fortran bindings call directly): the recorder starts when
// initialisation succeeded, hands over to the finalize driver before the MPI
// library shuts down, and ends the spill before an abort. A process that
// never calls MPI_Init stays inert.
#include <mpi.h>

#include "finalize_driver.hpp"
#include "process_facts.hpp"
#include "recorder.hpp"

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
}

int start_after_init(int* argc, char*** argv) {
  static const auto real = reinterpret_cast<InitFn>(next_mpi_symbol("PMPI_Init"));
  if (!real) return MPI_ERR_INTERN;
  const int rc = real(argc, argv);
  if (rc == MPI_SUCCESS) begin_recording();
  return rc;
}

int start_after_init_thread(int* argc, char*** argv, int required, int* provided) {
  static const auto real = reinterpret_cast<InitThreadFn>(next_mpi_symbol("PMPI_Init_thread"));
  if (!real) return MPI_ERR_INTERN;
  const int rc = real(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) begin_recording();
  return rc;
}

int report_then_finalize() {
  static const auto real = reinterpret_cast<FinalizeFn>(next_mpi_symbol("PMPI_Finalize"));
  if (!real) return MPI_ERR_INTERN;
  Recorder& recorder = Recorder::instance();
  if (recorder.finish()) {
    InsideTremor guard;
    run_finalize_driver(recorder);
  }
  return real();
}

// The spill gets its end record before the MPI library kills the job.
int flush_then_abort(MPI_Comm comm, int code) {
  static const auto real = reinterpret_cast<AbortFn>(next_mpi_symbol("PMPI_Abort"));
  Recorder& recorder = Recorder::instance();
  if (recorder.started()) recorder.end_spill(SpillEnd::abort);
  if (!real) return MPI_ERR_INTERN;
  return real(comm, code);
}

}  // namespace

// For a stacked libtremor-inject: the segment its delays fall in (inject_api.h).
extern "C" TREMOR_EXPORT long long tremor_current_segment(void) {
  return tremor::interpose::Recorder::instance().current_segment();
}
extern "C" TREMOR_EXPORT int MPI_Abort(MPI_Comm comm, int code) { return flush_then_abort(comm, code); }
extern "C" TREMOR_EXPORT int PMPI_Abort(MPI_Comm comm, int code) { return flush_then_abort(comm, code); }
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
