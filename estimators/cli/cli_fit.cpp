// `tremor fit --method pwm|mom FILE [--json] [--newton]`
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "sample_input.hpp"
#include "tremor/estimators/gev_fit.hpp"
#include "tremor/json_text.hpp"

namespace tremor::cli {
namespace {

namespace est = tremor::estimators;

struct FitCommandOptions {
  std::string path;
  std::string method = "pwm";
  bool json = false;
  bool newton = false;
};

est::GevFit fit_sample(const FitCommandOptions& options, const std::vector<double>& sample) {
  if (options.method == "mom") return est::fit_mom(sample);
  est::PwmOptions pwm_options;
  pwm_options.refine_by_newton = options.newton;
  return est::fit_pwm(sample, pwm_options);
}

void run_fit(const FitCommandOptions& options) {
  const std::vector<double> sample = read_sample(options.path);
  const est::GevFit fit = fit_sample(options, sample);
  if (fit.flags & (est::kInvalid | est::kInsufficientN)) {
    throw CommandFailure(options.path + ": no valid GEV fit (" + est::describe_fit_flags(fit.flags) + ")",
                         Exit::bad_input);
  }
  const std::string type(est::to_string(est::classify_gev_type(fit.params.k)));
  if (options.json) {
    nlohmann::json out = {{"method", est::to_string(fit.method)},
                          {"n", fit.n},
                          {"loc", fit.params.loc},
                          {"scale", fit.params.scale},
                          {"k", fit.params.k},
                          {"type", type},
                          {"usable", fit.usable()},
                          {"flags", est::fit_flag_names(fit.flags)}};
    std::cout << json_text(out, 2) << '\n';
    return;
  }
  std::cout.precision(12);
  std::cout << "method: " << est::to_string(fit.method) << '\n'
            << "n:      " << fit.n << '\n'
            << "loc:    " << fit.params.loc << '\n'
            << "scale:  " << fit.params.scale << '\n'
            << "k:      " << fit.params.k << "  (Hosking sign; scipy c = k, Coles xi = -k)\n"
            << "type:   " << type << '\n'
            << "usable: " << (fit.usable() ? "yes" : "no (data outside the fitted support)") << '\n'
            << "flags:  " << (fit.flags ? est::describe_fit_flags(fit.flags) : "none") << '\n';
}

}  // namespace

void register_fit(CLI::App& app) {
  auto options = std::make_shared<FitCommandOptions>();
  CLI::App* command = app.add_subcommand("fit", "Fit a GEV distribution to a sample of maxima");
  command->add_option("file", options->path, "One number per line ('-' = stdin, '#' comments)")->required();
  command->add_option("--method", options->method, "pwm (probability-weighted moments) or mom")
      ->check(CLI::IsMember({"pwm", "mom"}))
      ->capture_default_str();
  command->add_flag("--newton", options->newton, "PWM: refine k by exact tau3 inversion");
  command->add_flag("--json", options->json, "Print a JSON object");
  command->callback([options] { run_fit(*options); });
}

}  // namespace tremor::cli
