// `tremor predict FILE --scales 2,4,8 --method nonparametric|pwm|mom --replicas N --seed S [--ci C]
//  [--segments N]`: the expected maximum at each scale, and one run of N such
// segments (default: as many as the sample): the CI of its expected total and
// the prediction interval of one run's total (docs/statistics.md#prediction).
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.hpp"
#include "sample_input.hpp"
#include "tremor/estimators/bootstrap.hpp"

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
                           std::to_string(prediction.factor) + " (every refit was invalid)");
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
    std::cout << out.dump(2) << '\n';
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
  command->add_option("--scales", options->scales, "Scale factors m (process-count multipliers)")
      ->delimiter(',')
      ->check(CLI::Range(1e-300, 1e12))
      ->capture_default_str();
  command->add_option("--method", options->method, "nonparametric, pwm or mom")
      ->check(CLI::IsMember({"nonparametric", "pwm", "mom"}))
      ->capture_default_str();
  command->add_option("--replicas", options->replicas, "Bootstrap replicas")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000000}))
      ->capture_default_str();
  command->add_option("--seed", options->seed, "Seed of the std::mt19937_64 engine")->capture_default_str();
  command->add_option("--ci", options->ci, "Confidence level in (0, 1]")
      ->check(CLI::Range(1e-9, 1.0))
      ->capture_default_str();
  command
      ->add_option("--segments", options->segments,
                   "Segments of one run at the larger scale (default: as many as the sample)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000000}));
  command->add_flag("--json", options->json, "Print a JSON object");
  command->callback([options] { run_predict(*options); });
}

}  // namespace tremor::cli
