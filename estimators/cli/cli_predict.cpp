// `tremor predict FILE --scales 2,4,8 --method nonparametric|pwm|mom --replicas N --seed S [--ci C]
//  [--segments N]`: the expected maximum at each scale, and one run of N such
// segments (default: as many as the sample): the CI of its expected total and
// the prediction interval of one run's total (docs/statistics.md#prediction).
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.hpp"
#include "option_values.hpp"
#include "sample_input.hpp"
#include "tremor/estimators/bootstrap.hpp"
#include "tremor/json_text.hpp"

namespace tremor::cli {
namespace {

namespace est = tremor::estimators;

struct PredictCommandOptions {
  std::string path;
  std::vector<double> scales{2.0, 4.0, 8.0};
  std::string method = "pwm";
  std::size_t replicas = est::kDefaultReplicas;
  std::uint64_t seed = 1;
  double ci = est::kDefaultConfidence;
  std::size_t segments = 0;  // 0: the sample size
  bool json = false;
};

std::vector<est::ScalePrediction> predict(const PredictCommandOptions& options, const std::vector<double>& sample) {
  std::mt19937_64 engine(options.seed);
  const est::BootstrapOptions bootstrap{options.replicas, options.ci,
                                        options.segments > 0 ? options.segments : sample.size()};
  if (options.method == "nonparametric") {
    return est::nonparametric_projection(sample, options.scales, bootstrap, engine);
  }
  const est::FitMethod method = options.method == "mom" ? est::FitMethod::mom : est::FitMethod::pwm;
  return est::parametric_projection(sample, options.scales, method, bootstrap, engine);
}

void run_predict(const PredictCommandOptions& options) {
  const std::vector<double> sample = read_sample(options.path);
  const std::vector<est::ScalePrediction> predictions = predict(options, sample);
  const std::size_t segments = options.segments > 0 ? options.segments : sample.size();
  for (const est::ScalePrediction& prediction : predictions) {
    if (prediction.replicas_used == 0) {
      throw CommandFailure(options.path + ": no usable bootstrap replica at scale " +
                               std::to_string(prediction.factor) + " (every refit was invalid)",
                           Exit::bad_input);
    }
    const est::PercentileSummary& summary = prediction.replicas;
    const auto finite = [](const est::PercentileSummary& s) {
      return std::isfinite(s.median) && std::isfinite(s.ci_low) && std::isfinite(s.ci_high);
    };
    if (!finite(summary) || !finite(prediction.run_expected) || !finite(prediction.one_run)) {
      throw CommandFailure(options.path + ": the projection at scale " + std::to_string(prediction.factor) +
                               " (or one run's total) leaves the range of double precision numbers; rescale the sample (other units)",
                           Exit::bad_input);
    }
    if (!(summary.ci_low <= summary.median && summary.median <= summary.ci_high)) {
      throw CommandFailure("the median at scale " + std::to_string(prediction.factor) + " is outside its interval",
                           Exit::internal);
    }
  }
  if (options.json) {
    nlohmann::json scales = nlohmann::json::array();
    for (const est::ScalePrediction& prediction : predictions) {
      scales.push_back(
          {{"factor", prediction.factor},
           {"median", prediction.replicas.median},
           {"ci_low", prediction.replicas.ci_low},
           {"ci_high", prediction.replicas.ci_high},
           // JSON has no NaN: an unusable full-sample fit gives null.
           {"point", std::isfinite(prediction.point) ? nlohmann::json(prediction.point) : nlohmann::json(nullptr)},
           {"replicas_used", prediction.replicas_used},
           {"replicas_failed", prediction.replicas_failed},
           {"run",
            {{"segments", segments},
             {"median", prediction.run_expected.median},
             {"ci_low", prediction.run_expected.ci_low},
             {"ci_high", prediction.run_expected.ci_high},
             {"pi_low", prediction.one_run.ci_low},
             {"pi_high", prediction.one_run.ci_high}}}});
    }
    const nlohmann::json out = {{"method", options.method}, {"n", sample.size()}, {"replicas", options.replicas},
                                {"seed", options.seed},     {"ci", options.ci},   {"scales", scales}};
    std::cout << json_text(out, 2) << '\n';
    return;
  }
  std::cout.precision(10);
  std::cout << "method " << options.method << ", n = " << sample.size() << ", " << options.replicas
            << " replicas, seed " << options.seed << ", " << options.ci * 100.0 << " % CI\n";
  if (options.method == "nonparametric") {
    std::cout << "(non-parametric: expected maximum of m resampled values; never above the sample maximum)\n";
  }
  for (const est::ScalePrediction& prediction : predictions) {
    std::cout << "scale " << prediction.factor << ": median " << prediction.replicas.median << "  CI ["
              << prediction.replicas.ci_low << ", " << prediction.replicas.ci_high << "]";
    if (prediction.replicas_failed > 0) {
      std::cout << "  (" << prediction.replicas_failed << " replicas whose fit failed took the fallback)";
    }
    std::cout << '\n';
    std::cout << "  one run of " << segments << " segments: expected total " << prediction.run_expected.median
              << "  CI [" << prediction.run_expected.ci_low << ", " << prediction.run_expected.ci_high
              << "]  prediction interval [" << prediction.one_run.ci_low << ", " << prediction.one_run.ci_high << "]\n";
  }
}

}  // namespace

void register_predict(CLI::App& app) {
  auto options = std::make_shared<PredictCommandOptions>();
  CLI::App* command =
      app.add_subcommand("predict", "Project observed maxima to larger process counts with bootstrap intervals");
  command->add_option("file", options->path, "Observed maxima at the current scale, one per line")->required();
  add_real_list_option(
      command, "--scales", [options](const std::vector<double>& v) { options->scales = v; },
      "Scale factors m (process-count multipliers; default 2,4,8)", {0.0, 1e12, true}, 64);
  command->add_option("--method", options->method, "nonparametric, pwm or mom")
      ->check(CLI::IsMember({"nonparametric", "pwm", "mom"}))
      ->capture_default_str();
  add_whole_option(
      command, "--replicas", [options](std::uint64_t v) { options->replicas = static_cast<std::size_t>(v); },
      "Bootstrap replicas (default 1000)", 1, 10000000);
  add_whole_option(
      command, "--seed", [options](std::uint64_t v) { options->seed = v; },
      "Seed of the std::mt19937_64 engine (default 1)", 0, std::numeric_limits<std::uint64_t>::max());
  add_real_option(command, "--ci", [options](double v) { options->ci = v; }, "Confidence level (default 0.95)",
                  {0.0, 1.0, true});
  add_whole_option(
      command, "--segments", [options](std::uint64_t v) { options->segments = static_cast<std::size_t>(v); },
      "Segments of one run at the larger scale (default: as many as the sample)", 1, 1000000000);
  command->add_flag("--json", options->json, "Print a JSON object");
  command->callback([options] { run_predict(*options); });
}

}  // namespace tremor::cli
