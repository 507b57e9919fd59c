// /environment on the MPI side: each process collects its facts once at
// MPI_Init (node facts on one rank per node), and the finalize gather brings
// every rank's collection to the root (docs/schema.md).
#pragma once
#include <mpi.h>

#include "tremor/environment.hpp"
#include "tremor/run_data.hpp"

namespace tremor::interpose {

// Called once by Recorder::start, after PMPI_Init and the counter set-up
// (PAPI's version is known then). Never throws.
void collect_environment() noexcept;
const ProcessEnvironment& collected_environment() noexcept;

// Collective over comm (at MPI_Finalize, after run->ranks is known on the
// root): fills run->environment on rank 0 of comm. Memory on the root is
// bounded: each rank sends at most max(4 KiB, 64 MiB / size) bytes.
void gather_environment(MPI_Comm comm, int rank, int size, RunData* run);

}  // namespace tremor::interpose
