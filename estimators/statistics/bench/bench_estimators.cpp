// Speed targets of the estimators (not run by CTest):
//   PWM fit n=1000 <= 20 us, MOM fit n=1000 <= 50 us,
//   1000-replica parametric bootstrap of n=100 <= 50 ms,
//   clustering 1e6 values <= 150 ms, 4·MAD over 1e6 values <= 100 ms.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tremor/estimators/bootstrap.hpp"
#include "tremor/estimators/clustering.hpp"
#include "tremor/estimators/gev.hpp"
#include "tremor/estimators/gev_fit.hpp"
#include "tremor/estimators/interference.hpp"

namespace {
namespace est = tremor::estimators;

std::vector<double> gev_sample(std::size_t n, double k, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(1e-12, 1.0 - 1e-12);
  std::vector<double> sample(n);
  for (double& value : sample) value = est::gev_quantile({10.0, 1.0, k}, uniform(engine));
  return sample;
}

// Segment-like durations: a few modes, lognormal jitter.
std::vector<double> durations(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::lognormal_distribution<double> jitter(0.0, 0.02);
  std::uniform_int_distribution<int> mode(0, 7);
  std::vector<double> values(n);
  for (double& value : values) value = (1.0 + 2.0 * mode(engine)) * jitter(engine);
  return values;
}

void BM_FitPwm(benchmark::State& state) {
  const auto sample = gev_sample(static_cast<std::size_t>(state.range(0)), -0.1, 1);
  for (auto _ : state) benchmark::DoNotOptimize(est::fit_pwm(sample));
}
BENCHMARK(BM_FitPwm)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_FitPwmNewton(benchmark::State& state) {
  const auto sample = gev_sample(static_cast<std::size_t>(state.range(0)), -0.1, 1);
  for (auto _ : state) benchmark::DoNotOptimize(est::fit_pwm(sample, {.refine_by_newton = true}));
}
BENCHMARK(BM_FitPwmNewton)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_FitMom(benchmark::State& state) {
  const auto sample = gev_sample(static_cast<std::size_t>(state.range(0)), -0.1, 2);
  for (auto _ : state) benchmark::DoNotOptimize(est::fit_mom(sample));
}
BENCHMARK(BM_FitMom)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_ParametricBootstrap(benchmark::State& state) {
  const auto sample = gev_sample(100, 0.1, 3);
  const std::vector<double> factors{2.0, 4.0, 8.0};
  const auto method = state.range(0) == 0 ? est::FitMethod::pwm : est::FitMethod::mom;
  std::mt19937_64 engine(7);
  for (auto _ : state) {
    benchmark::DoNotOptimize(est::parametric_projection(sample, factors, method, {1000, 0.95}, engine));
  }
  state.SetLabel(method == est::FitMethod::pwm ? "pwm, 1000 replicas, n=100" : "mom, 1000 replicas, n=100");
}
BENCHMARK(BM_ParametricBootstrap)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Clustering(benchmark::State& state) {
  const auto values = durations(static_cast<std::size_t>(state.range(0)), 4);
  for (auto _ : state) benchmark::DoNotOptimize(est::cluster_by_relative_distance(values));
}
BENCHMARK(BM_Clustering)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_MadInterference(benchmark::State& state) {
  const auto values = durations(static_cast<std::size_t>(state.range(0)), 5);
  for (auto _ : state) benchmark::DoNotOptimize(est::detect_mad_interference(values));
}
BENCHMARK(BM_MadInterference)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
