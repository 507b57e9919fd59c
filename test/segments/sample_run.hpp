// A RunData with every field populated and distinctive values, shared by the
// round-trip test and the h5py schema check.
#pragma once
#include "tremor/run_data.hpp"

namespace tremor::test {
RunData sample_run(std::size_t world_size = 3, std::size_t segments = 7);
}
