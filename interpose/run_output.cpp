// Rank 0's output at MPI_Finalize: the HDF5 file, the analysis, the JSON and
// the text report. A failure here is reported and never reaches the host.
#include <dlfcn.h>
#include <errno.h>

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

bool write_outputs(RunData& run, const Recorder& recorder) noexcept {
  Recorder& log = Recorder::instance();
  // A full file system (RLIMIT_FSIZE) fails these writes with EFBIG; the
  // SIGXFSZ they raise must not kill the application.
  FileSizeSignalShield shield;
  bool written = false;
  try {
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
    // Tremor's own finalize traffic must not be delayed by a stacked injector.
    if (const auto suspend = reinterpret_cast<tremor_inject_suspend_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_SUSPEND_SYMBOL))) {
      suspend();
    }
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return;
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const FinalizedSegments local = recorder.store().finalize();
    std::optional<RunData> run = gather_run(comm, recorder, local);
    // Every rank removes its own spill once rank 0 has the run file.
    int written = run ? (write_outputs(*run, recorder) ? 1 : 0) : 0;
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
