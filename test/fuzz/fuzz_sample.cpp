// libFuzzer harness: arbitrary bytes as the sample file of `tremor fit` and
// `tremor predict` (one number per line), then the fits and a small bootstrap
// on whatever the parser accepts. Bad input must end in CommandFailure only.
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "sample_input.hpp"
#include "tremor/estimators/bootstrap.hpp"
#include "tremor/estimators/gev_fit.hpp"

namespace est = tremor::estimators;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream input(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<double> sample;
  try {
    sample = tremor::cli::parse_sample(input, "<fuzz>", 3);
  } catch (const tremor::cli::CommandFailure&) {
    return 0;
  }
  est::PwmOptions newton;
  newton.refine_by_newton = true;
  (void)est::fit_pwm(sample, est::PwmOptions{});
  (void)est::fit_pwm(sample, newton);
  (void)est::fit_mom(sample);
  if (sample.size() > 2000) return 0;  // the bootstrap is O(replicas x n): keep inputs fast
  std::mt19937_64 engine(1);
  const est::BootstrapOptions bootstrap{4, 0.9};
  const std::vector<double> scales{2.0, 1000.0};
  (void)est::nonparametric_projection(sample, scales, bootstrap, engine);
  (void)est::parametric_projection(sample, scales, est::FitMethod::pwm, bootstrap, engine);
  (void)est::parametric_projection(sample, scales, est::FitMethod::mom, bootstrap, engine);
  return 0;
}
