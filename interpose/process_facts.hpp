// Facts about this process that the run file and the spill header record.
#pragma once
#include <string>

namespace tremor::interpose {

std::string read_command_line();    // /proc/self/cmdline, arguments joined by spaces
std::string job_id();               // from the batch system, else ""
std::string mpi_library_version();  // first line of MPI_Get_library_version
std::string processor_name();       // MPI_Get_processor_name

// Time the thread that initialised MPI spent runnable but waiting for a CPU
// (run_delay in /proc/<tid>/schedstat): noted once at MPI_Init, read once at
// MPI_Finalize, never at a boundary. NaN where the kernel does not report it.
void note_run_queue_delay_at_init();
double run_queue_delay_since_init_s();

}  // namespace tremor::interpose
