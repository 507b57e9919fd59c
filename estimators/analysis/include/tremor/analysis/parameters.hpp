// Parameters of the end-of-run analysis: taken from the profiler's Config in
// process, or from a run file's stored effective configuration (plus command
// line overrides) offline, so both paths analyse with the same numbers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tremor/config.hpp"

namespace tremor::analysis {

// The settings' defaults are the configuration table's (tremor/config.hpp),
// so AnalysisParameters{} analyses as the profiler does by default.
struct AnalysisParameters {
  double mad_factor = default_config().mad_factor;
  double cluster_threshold = default_config().cluster_threshold;
  int min_group = default_config().min_group;
  std::vector<double> scales = default_config().scales;
  int replicas = default_config().bootstrap_replicas;
  std::uint64_t seed = default_config().seed;
  // Threads (0: automatic); they change how long the analysis takes, never its numbers.
  int threads = default_config().analysis_threads;
  // Not settings: the level of every interval, and the headline's method.
  double ci = 0.95;
  // The headline figure: "primary" (Tremor's intrinsic-baseline estimate) or
  // "mad4" (the paper's median + 4 MAD rule); both are always computed.
  std::string method = "primary";
};

AnalysisParameters parameters_from_config(const Config& config);

// Values given on the command line; unset ones keep the stored configuration.
struct ParameterOverrides {
  std::optional<double> mad_factor;
  std::optional<double> cluster_threshold;
  std::optional<int> min_group;
  std::optional<std::vector<double>> scales;
  std::optional<int> replicas;
  std::optional<std::uint64_t> seed;
  std::optional<std::string> method;
  std::optional<int> threads;
};

// Parses the stored TREMOR_* name/value pairs with the configuration table's
// own parsers (unknown names are ignored, bad values keep the default and add
// a sentence to `messages`), then applies the overrides. The threads are
// this process's, not the recording's: the override, else
// TREMOR_ANALYSIS_THREADS from the environment, else automatic.
AnalysisParameters parameters_from_stored_configuration(
    const std::vector<std::pair<std::string, std::string>>& configuration, const ParameterOverrides& overrides,
    std::vector<std::string>* messages = nullptr);

}  // namespace tremor::analysis
