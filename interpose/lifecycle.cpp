// MPI_Init, MPI_Init_thread and MPI_Finalize: the recorder starts when
// initialisation succeeded and hands over to the finalize driver before the
// MPI library shuts down. A process that never calls MPI_Init stays inert.
#include <mpi.h>

#include "finalize_driver.hpp"
#include "recorder.hpp"

namespace tremor::interpose {

extern "C" TREMOR_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    Recorder::instance().start(provided);
  }
  return rc;
}

extern "C" TREMOR_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) Recorder::instance().start(provided ? *provided : required);
  return rc;
}

extern "C" TREMOR_EXPORT int MPI_Finalize(void) {
  Recorder& recorder = Recorder::instance();
  if (recorder.finish()) {
    InsideTremor guard;
    run_finalize_driver(recorder);
  }
  return PMPI_Finalize();
}

}  // namespace tremor::interpose
