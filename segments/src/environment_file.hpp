// /environment in the run file (docs/schema.md): written when the run has one,
// read when the file has one (files of older Tremor builds do not).
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <string>

#include "tremor/environment.hpp"

namespace tremor {

bool write_environment(hid_t file, const RunEnvironment& environment, std::string& error);
// Leaves `environment` empty when the file has no /environment.
bool read_environment(hid_t file, std::size_t world_size, RunEnvironment& environment, std::string& error);

}  // namespace tremor
