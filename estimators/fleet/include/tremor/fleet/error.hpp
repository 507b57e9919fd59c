// What the fleet database throws: one line saying what failed and why.
#pragma once
#include <stdexcept>

namespace tremor::fleet {

class FleetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tremor::fleet
