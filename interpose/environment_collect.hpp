// /environment on the MPI side: each process collects its facts once at
// MPI_Init (node facts on one rank per node), and the finalize gather brings
// every rank's collection to the root (docs/schema.md).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tremor/environment.hpp"
#include "tremor/run_data.hpp"

namespace tremor::interpose {

// Called once by Recorder::start, after PMPI_Init and the counter set-up
// (PAPI's version is known then). Never throws.
void collect_environment() noexcept;
const ProcessEnvironment& collected_environment() noexcept;

// This rank's collection as the finalize gather sends it: at most
// max(4 KiB, 64 MiB / world_size) bytes, so the root's share stays bounded.
std::string encoded_environment(int world_size);

// On the root, once run->ranks is known: run->environment from every rank's
// encoded collection, in rank order.
void assemble_gathered_environment(const std::vector<std::string_view>& per_rank, RunData* run);

}  // namespace tremor::interpose
