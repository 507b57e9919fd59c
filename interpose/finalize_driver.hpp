// Runs at MPI_Finalize, before PMPI_Finalize, on a private duplicate of
// MPI_COMM_WORLD: gathers the run (finalize_gather.cpp), and on rank 0 writes
// the HDF5 file, runs the analysis and prints the report (run_output.cpp).
#pragma once
#include <mpi.h>

#include <optional>

#include "tremor/run_data.hpp"
#include "tremor/segment_store.hpp"

namespace tremor::interpose {

class Recorder;

void run_finalize_driver(Recorder& recorder) noexcept;

// Collective over comm. Returns the program-wide RunData on rank 0 of comm,
// nullopt elsewhere. Memory on the root is bounded: the segment table is
// O(segments), per-rank detail is at most 2^24 rank-segment cells, bins are
// gathered one metric at a time (256 x ranks).
std::optional<RunData> gather_run(MPI_Comm comm, const Recorder& recorder, const FinalizedSegments& local);

// Output on the root: file, analysis, JSON and text report. True when the
// run file was written completely. file_seconds: wall time of writing the
// HDF5 file (for the debug log).
bool write_outputs(RunData& run, const Recorder& recorder, double& file_seconds) noexcept;

}  // namespace tremor::interpose
