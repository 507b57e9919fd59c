// Rank 0's output at MPI_Finalize: the HDF5 file, the analysis, the JSON and
// the text report. A failure here is reported and never reaches the host.
#include <dlfcn.h>
#include <errno.h>
#include <sys/resource.h>
#include <time.h>

#include <array>
#include <cstdio>
#include <string_view>

#include "file_size_signal.hpp"
#include "finalize_driver.hpp"
#include "recorder.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/inject_api.h"
#include "tremor/output_path.hpp"
#include "tremor/run_file.hpp"

namespace tremor::interpose {

namespace {

double clock_seconds(clockid_t clock) noexcept {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double peak_rss_mb() noexcept {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// The finalize phase's cost on the root, for scripts/bench-finalize.py
// (TREMOR_LOG_LEVEL=debug).
struct FinalizeTimer {
  double wall = clock_seconds(CLOCK_MONOTONIC);
  double cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  double rss_before = peak_rss_mb();
  double gathered_wall = 0.0;
  double file_seconds = 0.0;

  void log(Recorder& recorder, const RunData& run) const {
    char line[320];
    std::snprintf(line, sizeof line,
                  "finalize: %zu segments from %d processes in %.3f s wall (gather %.3f s, HDF5 file %.3f s, "
                  "analysis + report %.3f s), %.3f s CPU; peak RSS %.1f MB before, %.1f MB after",
                  run.segments.size(), recorder.world_size(), clock_seconds(CLOCK_MONOTONIC) - wall,
                  gathered_wall - wall, file_seconds, clock_seconds(CLOCK_MONOTONIC) - gathered_wall - file_seconds,
                  clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu, rss_before, peak_rss_mb());
    recorder.debug0(line);
  }
};

}  // namespace

bool write_outputs(RunData& run, const Recorder& recorder, double& file_seconds) noexcept {
  Recorder& log = Recorder::instance();
  // A full file system (RLIMIT_FSIZE) fails these writes with EFBIG; the
  // SIGXFSZ they raise must not kill the application.
  FileSizeSignalShield shield;
  bool written = false;
  try {
    const double file_start = clock_seconds(CLOCK_MONOTONIC);
    std::string error;
    constexpr std::array<std::string_view, 2> extensions{".h5", ".json"};
    const auto reserved = reserve_output_files(recorder.config().output_dir, program_invocation_short_name,
                                               run.meta.job_id, extensions, error);
    std::optional<std::filesystem::path> h5_path, json_path;
    if (!reserved) {
      log.warn0("cannot create output files in TREMOR_OUTPUT_DIR='" + recorder.config().output_dir + "': " + error +
                "; the report is printed but not saved" + recorder.spill_kept_note());
    } else if (!write_run(reserved->paths[0], run, error, ExistingFile::fill_empty_reservation)) {
      log.warn0("cannot write " + reserved->paths[0].string() + ": " + error + "; the report is printed but not saved" +
                recorder.spill_kept_note());
      std::error_code ignored;
      std::filesystem::remove(reserved->paths[1], ignored);
    } else {
      h5_path = reserved->paths[0];
      json_path = reserved->paths[1];
      written = true;
    }
    file_seconds = clock_seconds(CLOCK_MONOTONIC) - file_start;
    analysis::report_run(run, recorder.config(), h5_path, json_path, stderr);
  } catch (const std::exception& e) {
    log.warn0(std::string("end-of-run output failed: ") + e.what());
  } catch (...) {
    log.warn0("end-of-run output failed");
  }
  return written;
}

void run_finalize_driver(Recorder& recorder) noexcept {
  MPI_Comm comm = MPI_COMM_NULL;
  try {
    FinalizeTimer timer;
    // Tremor's own finalize traffic must not be delayed by a stacked injector.
    if (const auto suspend =
            reinterpret_cast<tremor_inject_suspend_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_SUSPEND_SYMBOL))) {
      suspend();
    }
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return;
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    std::optional<RunData> run;
    {  // this rank's finalised tables are gathered, then freed before the analysis's peak
      const FinalizedSegments local = recorder.store().finalize();
      run = gather_run(comm, recorder, local);
    }
    timer.gathered_wall = clock_seconds(CLOCK_MONOTONIC);
    // Every rank removes its own spill once rank 0 has the run file.
    int written = 0;
    if (run) {
      written = write_outputs(*run, recorder, timer.file_seconds) ? 1 : 0;
      timer.log(recorder, *run);
    }
    PMPI_Bcast(&written, 1, MPI_INT, 0, comm);
    recorder.settle_spill(written == 1);
  } catch (const std::exception& e) {
    recorder.warn(std::string("end-of-run gather failed: ") + e.what());
  } catch (...) {
    recorder.warn("end-of-run gather failed");
  }
  if (comm != MPI_COMM_NULL) PMPI_Comm_free(&comm);
}

}  // namespace tremor::interpose
