// Facts about this process that the run file and the spill header record.
#pragma once
#include <string>

#include "tremor/run_data.hpp"

namespace tremor::interpose {

std::string read_command_line();    // /proc/self/cmdline, arguments joined by spaces
std::string job_id();               // from the batch system, else ""
JobRecord job_record();             // the rest of the job's record (environment_probe::scheduler_job)
// TREMOR_DISABLE set to anything but "" or "0": the library records nothing
// and prints nothing (a site's module may preload it for every job).
bool disabled_by_environment();
std::string mpi_library_version();  // first line of MPI_Get_library_version
std::string processor_name();       // MPI_Get_processor_name

// What the thread that initialised MPI did with its time since the recorder
// started in MPI_Init (/proc/<tid>/schedstat, noted then, read once at
// MPI_Finalize, never at a boundary): runnable but waiting for a CPU
// (run_delay), and neither on a CPU nor waiting for one (asleep, blocked:
// the wall time less both). NaN where the kernel does not report them.
struct SchedulerTimes {
  double run_queue_delay_s;
  double slept_s;
};
void note_scheduler_at_init();
SchedulerTimes scheduler_times_since_init();

}  // namespace tremor::interpose
