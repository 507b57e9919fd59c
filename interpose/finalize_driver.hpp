// Runs at MPI_Finalize, before PMPI_Finalize, on the private duplicate of
// MPI_COMM_WORLD made at MPI_Init: gathers the run (finalize_gather.cpp), and
// on rank 0 writes the HDF5 file, runs the analysis and prints the report
// (run_output.cpp), all within TREMOR_FINALIZE_LIMIT (finalize_exchange.hpp).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "finalize_exchange.hpp"
#include "tremor/run_data.hpp"
#include "tremor/segment_store.hpp"

namespace tremor::interpose {

class Recorder;

void run_finalize_driver(Recorder& recorder) noexcept;

// The end-of-run gather: a fixed number of nonblocking collectives on comm,
// whatever the number of ranks, metrics and (up to 2^31 records) segments:
//   1. an allreduce of the segment counts, run time and the log codes every
//      rank used (a bitmap per metric): the program-wide bins;
//   2. a gather of the sizes of what each rank sends in 3;
//   3. a gatherv of each rank's facts (host, scheduler times, totals), its
//      environment, its injected delays and, for the detail ranks, their
//      per-segment bin indices and signatures;
//   4. a reduction of the bins' counts and the per-segment MAX / MINLOC /
//      MIN / SUM over ranks (one user-defined operation).
// The driver adds a broadcast of the root's outcome. Memory on the root is
// bounded: per-rank detail is at most 2^24 rank-segment cells, the
// environment at most 64 MiB, injected delays 2^22 records.
class FinalizeGather {
 public:
  FinalizeGather(MPI_Comm comm, const Recorder& recorder, const FinalizedSegments& local);
  // A collective still pending may read or write its buffers until
  // MPI_Finalize: they are then kept to the end of the process.
  ~FinalizeGather();
  FinalizeGather(const FinalizeGather&) = delete;
  FinalizeGather& operator=(const FinalizeGather&) = delete;

  // Collectives 1 and 2, waited for without limit: they complete once every
  // rank has reached MPI_Finalize. False if MPI failed.
  bool meet();
  // Collectives 3 and 4; needs nothing of `local` afterwards.
  bool post_rest();
  // The broadcast of the root's outcome (the root's `value`: 1 once the run
  // file exists), after post_rest.
  bool post_outcome(int value);
  int outcome() const noexcept;
  // Collectives 3 and 4, then all posted ones (with the outcome).
  std::span<MPI_Request> gather_requests() noexcept {
    return std::span(requests_).first(std::min<std::size_t>(2, requests_.size()));
  }
  std::span<MPI_Request> all_requests() noexcept { return requests_; }
  // On the root, once gather_requests() completed: the program-wide record.
  RunData assemble();

  bool root() const noexcept { return rank_ == 0; }
  int collectives() const noexcept { return collectives_; }

 private:
  struct Buffers;
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  const Recorder& recorder_;
  const FinalizedSegments& local_;
  std::unique_ptr<Buffers> buffers_;
  std::vector<MPI_Request> requests_;
  int collectives_ = 0;
};

// Output on the root. write_run_file reserves the output names and writes
// the HDF5 file (the report still printed when it cannot); report_outputs
// appends the analysis, writes the JSON and prints the text report. A
// failure here is reported and never reaches the host.
struct OutputFiles {
  std::optional<std::filesystem::path> h5;
  std::optional<std::filesystem::path> json;
};
OutputFiles write_run_file(const RunData& run, const Recorder& recorder) noexcept;
void report_outputs(RunData& run, Recorder& recorder, const OutputFiles& files) noexcept;

}  // namespace tremor::interpose
