// Checks at MPI_Init whose findings would otherwise come late or never
// (early_checks.cpp).
#pragma once

namespace tremor::interpose {

class Recorder;

// After the recorder started (or found itself disabled): rank 0 warns once
// about unknown TREMOR_* names (environment and TREMOR_CONFIG file) and an
// output directory it cannot write.
void run_early_checks(Recorder& recorder) noexcept;

// Whether run_early_checks said the output directory cannot be written (then
// the end of the run says nothing more of it).
bool output_dir_reported_at_init() noexcept;

}  // namespace tremor::interpose
