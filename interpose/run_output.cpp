// The end of the run: the gather, rank 0's output (the HDF5 file, the
// analysis, the JSON and the text report) and the spill files' fate, within
// TREMOR_FINALIZE_LIMIT. A failure here is reported and never reaches the host.
#include <dlfcn.h>
#include <errno.h>
#include <sys/resource.h>
#include <time.h>

#include <array>
#include <cstdio>
#include <string_view>

#include "analysis_cpus.hpp"
#include "analysis_notice.hpp"
#include "early_checks.hpp"
#include "file_size_signal.hpp"
#include "finalize_driver.hpp"
#include "recorder.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/estimators/parallel.hpp"
#include "tremor/inject_api.h"
#include "tremor/output_path.hpp"
#include "tremor/run_file.hpp"

namespace tremor::interpose {

namespace {

double cpu_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double peak_rss_mb() noexcept {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// The finalize phase's cost on the root, for scripts/bench-finalize.py
// (TREMOR_LOG_LEVEL=debug). "meeting": until every rank had reached
// MPI_Finalize and the first two collectives completed.
struct FinalizeTimer {
  double wall = monotonic_s();
  double cpu = cpu_seconds();
  double rss_before = peak_rss_mb();
  double met = 0.0;
  double gathered = 0.0;
  double file_seconds = 0.0;

  void log(Recorder& recorder, const RunData& run, int collectives) const {
    const double now = monotonic_s();
    char line[400];
    std::snprintf(line, sizeof line,
                  "finalize: %zu segments from %d processes in %.3f s wall (meeting %.3f s, gather %.3f s, HDF5 file "
                  "%.3f s, analysis + report %.3f s), %d collectives, %.3f s CPU; peak RSS %.1f MB before, %.1f MB "
                  "after",
                  run.segments.size(), recorder.world_size(), now - wall, met - wall, gathered - met, file_seconds,
                  now - gathered - file_seconds, collectives, cpu_seconds() - cpu, rss_before, peak_rss_mb());
    recorder.debug0(line);
  }
};

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

// The watchdog's one line on the root.
void say_stopped(Recorder& recorder, const FinalizeDeadline& deadline, const std::string& what) {
  recorder.warn0("end-of-run work stopped at TREMOR_FINALIZE_LIMIT=" + seconds_text(deadline.limit_s()) + " s " + what);
}

}  // namespace

OutputFiles write_run_file(const RunData& run, const Recorder& recorder) noexcept {
  Recorder& log = Recorder::instance();
  // A full file system (RLIMIT_FSIZE) fails these writes with EFBIG; the
  // SIGXFSZ they raise must not kill the application.
  FileSizeSignalShield shield;
  OutputFiles files;
  try {
    std::string error;
    constexpr std::array<std::string_view, 2> extensions{".h5", ".json"};
    const auto reserved = reserve_output_files(recorder.config().output_dir, program_invocation_short_name,
                                               run.meta.job_id, extensions, error);
    if (!reserved) {
      if (!output_dir_reported_at_init())
        log.warn0("cannot create output files in TREMOR_OUTPUT_DIR='" + recorder.config().output_dir + "': " + error +
                  "; the report is printed but not saved" + recorder.spill_kept_note());
    } else if (!write_run(reserved->paths[0], run, error, ExistingFile::fill_empty_reservation)) {
      log.warn0("cannot write " + reserved->paths[0].string() + ": " + error + "; the report is printed but not saved" +
                recorder.spill_kept_note());
      std::error_code ignored;
      std::filesystem::remove(reserved->paths[1], ignored);
    } else {
      files.h5 = reserved->paths[0];
      files.json = reserved->paths[1];
    }
  } catch (const std::exception& e) {
    log.warn0(std::string("end-of-run output failed: ") + e.what());
  } catch (...) {
    log.warn0("end-of-run output failed");
  }
  return files;
}

void report_outputs(RunData& run, Recorder& recorder, const OutputFiles& files) noexcept {
  FileSizeSignalShield shield;
  const AnalysisNotice notice(run.segments.size());  // one line if the report is a second away
  // The node's other ranks wait in MPI_Finalize: their CPUs are free for the analysis.
  const WidenedAffinity idle_cpus(node_rank_cpus(run.environment, recorder.world_rank()));
  try {
    const int threads = estimators::analysis_threads(recorder.config().analysis_threads);
    recorder.debug0("analysis on " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
                    (idle_cpus.widened() ? ", the node's other ranks' CPUs included" : ""));
  } catch (...) {  // no memory for the line: the analysis goes on without it
  }
  analysis::report_run(run, recorder.config(), files.h5, files.json, stderr);
}

// Every rank: the gather (rank 0 then writes, broadcasts whether the run file
// exists and analyses), then each rank removes its spill once the run file
// exists. Ranks other than the root never print: the root says in one line
// when the limit stopped the work.
void run_finalize_driver(Recorder& recorder) noexcept {
  const MPI_Comm comm = recorder.finalize_comm();
  if (comm == MPI_COMM_NULL) {
    recorder.warn0("no end-of-run gather: the private communicator could not be made at MPI_Init" +
                   recorder.spill_kept_note());
    return;
  }
  try {
    FinalizeTimer timer;
    // Tremor's own finalize traffic must not be delayed by a stacked injector.
    if (const auto suspend =
            reinterpret_cast<tremor_inject_suspend_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_SUSPEND_SYMBOL))) {
      suspend();
    }
    FinalizeDeadline deadline(recorder.config().finalize_limit_s);
    std::optional<FinalizedSegments> local(recorder.store().finalize());
    FinalizeGather gather(comm, recorder, *local);
    if (!gather.meet()) {
      recorder.warn("end-of-run gather failed in MPI" + recorder.spill_kept_note());
      return;
    }
    deadline.arm();
    timer.met = monotonic_s();
    const bool posted = gather.post_rest();
    local.reset();  // this rank's tables are copied out; freed before the analysis's peak

    if (!gather.root()) {
      if (!posted || !gather.post_outcome(0)) return;
      // Once the root said it wrote no run file there is nothing to wait for.
      auto root_gave_up = [&] {
        return complete_by(gather.all_requests().last(1), 0.0) == Completion::done && gather.outcome() != 1;
      };
      if (complete_by(gather.all_requests(), deadline.end() + deadline.grace_s(), root_gave_up) == Completion::done &&
          gather.outcome() == 1) {
        recorder.settle_spill(true);
      }
      return;
    }

    const Completion gathered = posted ? complete_by(gather.gather_requests(), deadline.end()) : Completion::failed;
    std::optional<RunData> run;
    OutputFiles files;
    if (gathered == Completion::done) {
      run = gather.assemble();
      timer.gathered = monotonic_s();
      if (!deadline.passed()) {
        files = write_run_file(*run, recorder);
        timer.file_seconds = monotonic_s() - timer.gathered;
      }
    }
    // Posted whatever happened, so that no rank is left with a collective
    // that the root never joins.
    const bool outcome_posted = posted && gather.post_outcome(files.h5 ? 1 : 0);
    if (outcome_posted) complete_by(gather.all_requests().last(1), monotonic_s() + 0.01);  // starts its sends
    if (files.h5) recorder.settle_spill(true);

    if (gathered == Completion::failed) {
      recorder.warn0("end-of-run gather failed in MPI; no run file was written" + recorder.spill_kept_note());
    } else if (gathered == Completion::late) {
      say_stopped(recorder, deadline,
                  "while gathering the ranks' records; no run file was written" + recorder.spill_kept_note());
    } else if (!files.h5 && deadline.passed()) {
      say_stopped(recorder, deadline, "before writing the run file; none was written" + recorder.spill_kept_note());
    } else if (deadline.passed()) {
      say_stopped(recorder, deadline,
                  "after writing " + files.h5->string() + " without its analysis; `tremor analyze " +
                      files.h5->string() + "` prints the report");
    } else {
      report_outputs(*run, recorder, files);
      timer.log(recorder, *run, gather.collectives());
    }
    if (outcome_posted) {
      complete_by(gather.all_requests().last(1), std::max(deadline.end() + deadline.grace_s(), monotonic_s() + 1.0));
    }
  } catch (const std::exception& e) {
    recorder.warn(std::string("end-of-run gather failed: ") + e.what());
  } catch (...) {
    recorder.warn("end-of-run gather failed");
  }
}

}  // namespace tremor::interpose
