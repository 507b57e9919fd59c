#include "tremor/analysis/parameters.hpp"

namespace tremor::analysis {

AnalysisParameters parameters_from_config(const Config& config) {
  AnalysisParameters parameters;
  parameters.mad_factor = config.mad_factor;
  parameters.cluster_threshold = config.cluster_threshold;
  parameters.min_group = config.min_group;
  parameters.scales = config.scales;
  parameters.replicas = config.bootstrap_replicas;
  parameters.seed = config.seed;
  parameters.threads = config.analysis_threads;
  return parameters;
}

namespace {

// TREMOR_ANALYSIS_THREADS of this process's environment (a bad value: one
// sentence, automatic).
int threads_from_environment(std::vector<std::string>* messages) {
  constexpr std::string_view kName = "TREMOR_ANALYSIS_THREADS";
  Config config;
  const Setting* setting = find_setting(kName);
  const std::optional<std::string> value = process_environment()(kName);
  if (setting && value) {
    if (auto error = setting->parse(*value, config); error && messages) {
      messages->push_back(std::string(kName) + "='" + value->substr(0, 80) + "' " + *error + "; using the default");
    }
  }
  return config.analysis_threads;
}

}  // namespace

AnalysisParameters parameters_from_stored_configuration(
    const std::vector<std::pair<std::string, std::string>>& configuration, const ParameterOverrides& overrides,
    std::vector<std::string>* messages) {
  Config config;
  for (const auto& [name, value] : configuration) {
    for (const Setting& setting : settings()) {
      if (setting.name != name) continue;
      if (auto error = setting.parse(value, config); error && messages) {
        messages->push_back("stored " + name + "='" + value + "' " + *error + "; using the default");
      }
    }
  }
  AnalysisParameters parameters = parameters_from_config(config);
  if (overrides.mad_factor) parameters.mad_factor = *overrides.mad_factor;
  if (overrides.cluster_threshold) parameters.cluster_threshold = *overrides.cluster_threshold;
  if (overrides.min_group) parameters.min_group = *overrides.min_group;
  if (overrides.scales) parameters.scales = *overrides.scales;
  if (overrides.replicas) parameters.replicas = *overrides.replicas;
  if (overrides.seed) parameters.seed = *overrides.seed;
  if (overrides.method) parameters.method = *overrides.method;
  parameters.threads = overrides.threads ? *overrides.threads : threads_from_environment(messages);
  return parameters;
}

}  // namespace tremor::analysis
