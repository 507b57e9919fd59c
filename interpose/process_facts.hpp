// Facts about this process that the run file and the spill header record.
#pragma once
#include <string>

namespace tremor::interpose {

std::string read_command_line();    // /proc/self/cmdline, arguments joined by spaces
std::string job_id();               // from the batch system, else ""
std::string mpi_library_version();  // first line of MPI_Get_library_version
std::string processor_name();       // MPI_Get_processor_name

}  // namespace tremor::interpose
