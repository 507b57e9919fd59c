// Bias of the GEV projections (docs/statistics.md#emma): PWM fits of 150
// segment maxima over 4 ranks, projected to m = 1..16 by EMMA and by the exact
// expected maximum, against the mean of the maximum over 4·m ranks, for
// Normal, lognormal, Gumbel and Fréchet (k = −0.3) per-rank times. Prints one
// line per law and m: the bias of each, in % and in standard deviations of
// the estimate. Not run by CTest.
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "tremor/estimators/gev_fit.hpp"

namespace {
namespace est = tremor::estimators;

double uniform_open(std::mt19937_64& e) { return (static_cast<double>(e() >> 11) + 0.5) / 9007199254740992.0; }
double standard_normal(std::mt19937_64& e) {
  const double u1 = uniform_open(e), u2 = uniform_open(e);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
double maximum_of(const std::function<double(std::mt19937_64&)>& draw, int ranks, std::mt19937_64& e) {
  double maximum = -INFINITY;
  for (int r = 0; r < ranks; ++r) maximum = std::max(maximum, draw(e));
  return maximum;
}
}  // namespace

int main() {
  struct Law {
    const char* name;
    std::function<double(std::mt19937_64&)> draw;
  };
  const std::vector<Law> laws = {
      {"normal", [](std::mt19937_64& e) { return 0.02 + 0.002 * standard_normal(e); }},
      {"lognormal", [](std::mt19937_64& e) { return 0.02 * std::exp(0.3 * standard_normal(e) - 0.045); }},
      {"gumbel", [](std::mt19937_64& e) { return 0.02 - 0.002 * std::log(-std::log(uniform_open(e))); }},
      {"frechet", [](std::mt19937_64& e) { return 0.02 * (1 + 0.05 * std::pow(-std::log(uniform_open(e)), -0.3)); }},
  };
  constexpr int kSamples = 2000, kMaxima = 150, kRanks = 4, kTruthDraws = 400000;
  std::printf("law        m   EMMA bias %%  (sd)   exact bias %%  (sd)\n");
  for (const Law& law : laws) {
    std::mt19937_64 engine(1);
    for (const double m : {1.0, 2.0, 4.0, 8.0, 16.0}) {
      double emma_sum = 0.0, emma_squares = 0.0, exact_sum = 0.0;
      for (int s = 0; s < kSamples; ++s) {
        std::vector<double> maxima(kMaxima);
        for (double& value : maxima) value = maximum_of(law.draw, kRanks, engine);
        const est::GevFit fit = est::fit_pwm(maxima);
        const double emma = est::emma(fit.params, m);
        emma_sum += emma;
        emma_squares += emma * emma;
        exact_sum += est::exact_expected_maximum(fit.params, m);
      }
      double truth = 0.0;
      for (int d = 0; d < kTruthDraws; ++d) truth += maximum_of(law.draw, kRanks * static_cast<int>(m), engine);
      truth /= kTruthDraws;
      const double emma = emma_sum / kSamples, exact = exact_sum / kSamples;
      const double sd = std::sqrt(emma_squares / kSamples - emma * emma);
      std::printf("%-9s %3g   %+8.2f  (%+5.2f)   %+8.2f  (%+5.2f)\n", law.name, m, 100.0 * (emma - truth) / truth,
                  (emma - truth) / sd, 100.0 * (exact - truth) / truth, (exact - truth) / sd);
    }
  }
  return 0;
}
