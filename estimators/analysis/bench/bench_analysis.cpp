// analyze_run on synthetic runs of 10^4..10^6 segments (2 groups, 16 detail
// ranks on 2 nodes, 1000 replicas), with a PAPI work counter and with the
// CPU-time counter (then every detail cell's off-CPU time is read as well),
// with every rank waiting for a CPU (the serial waits read per group), and
// with the ranks taking turns on nodes of 4 CPUs beside another process for
// the middle third of the run (its CPU time read over neighbours, the turns
// charged against each group's segments outside that span). Peak RSS is
// reported as a counter.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "synthetic_run.hpp"
#include "tremor/environment.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/diagnosis.hpp"
#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/lost_interval.hpp"

namespace {

// 8 ranks on each node of 4 CPUs, off the CPU half of each segment (their
// turns), 60 % of it in the middle third (another process shares the node);
// every off-CPU time spent waiting for a CPU, none asleep.
void take_turns(tremor::RunData& run) {
  const auto cpu_count = static_cast<std::size_t>(
      std::find(tremor::kNodeFacts.begin(), tremor::kNodeFacts.end(), "cpu_count") - tremor::kNodeFacts.begin());
  run.environment.nodes.resize(static_cast<std::size_t>(run.meta.node_count));
  for (tremor::NodeEnvironment& node : run.environment.nodes) node.facts[cpu_count] = "4";
  const std::size_t n = run.detail.segments;
  const auto shared = [n](std::size_t s) { return s >= n / 3 && s < 2 * n / 3; };
  std::vector<double> values;
  for (std::size_t s = 0; s < n; ++s) values.push_back((shared(s) ? 0.6 : 0.5) * run.segments.duration_s[s]);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  tremor::BinTable& bins = run.global_bins[tremor::index(tremor::Quantized::off_cpu_time)];
  bins.clear();
  for (const double v : sorted) bins.push_back({v, 1, v, v, static_cast<std::uint16_t>(bins.size())});
  std::vector<std::uint16_t>& cells = run.detail.global_index[tremor::index(tremor::Quantized::off_cpu_time)];
  for (std::size_t r = 0; r < run.detail.ranks.size(); ++r) {
    for (std::size_t s = 0; s < n; ++s) {
      cells[r * n + s] =
          static_cast<std::uint16_t>(std::lower_bound(sorted.begin(), sorted.end(), values[s]) - sorted.begin());
    }
  }
  double off_total = 0.0;
  for (const double v : values) off_total += v;
  for (tremor::RankInfo& rank : run.ranks) {
    rank.run_queue_delay_s = off_total;
    rank.slept_s = 0.0;
  }
}

void analyze_synthetic(benchmark::State& state, bool cputime, bool waiting = false, bool turns = false) {
  tremor::test::SyntheticSpec spec;
  const auto half = static_cast<std::size_t>(state.range(0) / 2);
  spec.groups = {{1e6, 0.010, half}, {5e6, 0.025, half}};
  for (std::size_t s = 7; s < 2 * half; s += 997) spec.delays.push_back({s, 0.004, 3});
  spec.world_size = 16;
  spec.ranks_per_node = 8;
  spec.detail_ranks = 16;
  if (cputime) spec.counter_source = tremor::CounterKind::thread_cputime;
  tremor::RunData run = tremor::test::synthetic_run(spec);
  if (cputime) {
    run.meta.schema_version = 3;
    run.meta.counter_unit = "ns";
  }
  // A co-runner for the whole run: ranks 0 and 1 off the CPU about 0.5 ms in
  // every segment, all of it waiting for a CPU, so every segment's serial
  // waits are read.
  if (waiting) {
    const tremor::BinTable& off_cpu = run.global_bins[tremor::index(tremor::Quantized::off_cpu_time)];
    std::vector<std::uint16_t>& cells = run.detail.global_index[tremor::index(tremor::Quantized::off_cpu_time)];
    std::fill(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(2 * run.detail.segments),
              static_cast<std::uint16_t>(off_cpu.size() / 2));
    for (tremor::RankInfo& rank : run.ranks) rank.run_queue_delay_s = 2.0 * 5e-4 * static_cast<double>(half);
  }
  if (turns) take_turns(run);
  const tremor::analysis::AnalysisParameters parameters;  // 1000 replicas, scales 2,4,8
  for (auto _ : state) {
    tremor::analysis::RunAnalysis result = tremor::analysis::analyze_run(run, parameters);
    benchmark::DoNotOptimize(result.interference_percent);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["segments"] = static_cast<double>(run.segments.size());
}
void BM_AnalyzeRun(benchmark::State& state) { analyze_synthetic(state, false); }
void BM_AnalyzeRunCpuTime(benchmark::State& state) { analyze_synthetic(state, true); }
void BM_AnalyzeRunWaiting(benchmark::State& state) { analyze_synthetic(state, true, true); }
void BM_AnalyzeRunTakingTurns(benchmark::State& state) { analyze_synthetic(state, true, false, true); }
BENCHMARK(BM_AnalyzeRun)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AnalyzeRunCpuTime)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AnalyzeRunWaiting)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AnalyzeRunTakingTurns)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

// Many groups, as real applications have them (NWChem: 251 groups in 6,926
// segments): state.range(0) groups of state.range(1) / state.range(0)
// segments each on 2 ranks of one node (both prediction variants but the
// inter-node one run), every group's own work and signature, durations with
// 1 % lognormal jitter and one segment in 50 delayed by 20-60 %. Default
// parameters (1000 replicas, scales 2, 4, 8).
tremor::RunData many_groups_run(std::size_t groups, std::size_t segments) {
  tremor::test::SyntheticSpec spec;
  std::mt19937_64 engine(29);
  std::uniform_real_distribution<double> base(0.2e-3, 5e-3);
  for (std::size_t g = 0; g < groups; ++g)
    spec.groups.push_back({1e6 * (1.0 + static_cast<double>(g)), base(engine), segments / groups});
  std::lognormal_distribution<double> jitter(0.0, 0.01);
  for (int i = 0; i < 997; ++i) spec.relative_pattern.push_back(jitter(engine) - 1.0);
  std::uniform_real_distribution<double> delay(0.2, 0.6);
  const std::size_t total = segments / groups * groups;
  for (std::size_t s = 13; s < total; s += 50) spec.delays.push_back({s, delay(engine) * 2e-3, 1});
  spec.world_size = 2;
  spec.ranks_per_node = 2;
  spec.detail_ranks = 2;
  return tremor::test::synthetic_run(spec);
}
void BM_AnalyzeManyGroups(benchmark::State& state) {
  const tremor::RunData run =
      many_groups_run(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  const tremor::analysis::AnalysisParameters parameters;
  std::size_t usable = 0;
  for (auto _ : state) {
    tremor::analysis::RunAnalysis result = tremor::analysis::analyze_run(run, parameters);
    usable = result.usable_groups;
    benchmark::DoNotOptimize(result.predictions.data());
  }
  state.counters["segments"] = static_cast<double>(run.segments.size());
  state.counters["usable_groups"] = static_cast<double>(usable);
  state.counters["run_s"] = run.meta.run_time_s;  // the bound: max(1 s, 5 % of it)
}
BENCHMARK(BM_AnalyzeManyGroups)
    ->Args({250, 7'000})
    ->Args({1'000, 100'000})
    ->Args({10'000, 1'000'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The diagnosis alone (diagnose_run, part of analyze_run above): state.range(0)
// segments, state.range(1) processes on nodes of 8, 16 detail ranks.
void BM_Diagnosis(benchmark::State& state) {
  tremor::test::SyntheticSpec spec;
  const auto half = static_cast<std::size_t>(state.range(0) / 2);
  spec.groups = {{1e6, 0.010, half}, {5e6, 0.025, half}};
  for (std::size_t s = 7; s < 2 * half; s += 997) spec.delays.push_back({s, 0.004, 3});
  spec.world_size = static_cast<std::int32_t>(state.range(1));
  spec.ranks_per_node = 8;
  spec.detail_ranks = 16;
  const tremor::RunData run = tremor::test::synthetic_run(spec);
  tremor::analysis::AnalysisParameters parameters;
  parameters.replicas = 20;
  const tremor::analysis::RunAnalysis analysis = tremor::analysis::analyze_run(run, parameters);
  for (auto _ : state) {
    tremor::analysis::Diagnosis diagnosis = tremor::analysis::diagnose_run(run, analysis);
    benchmark::DoNotOptimize(diagnosis.available);
  }
  state.counters["segments"] = static_cast<double>(run.segments.size());
  state.counters["ranks"] = static_cast<double>(spec.world_size);
}
BENCHMARK(BM_Diagnosis)
    ->Args({1'000'000, 16})
    ->Args({100'000, 10'000})
    ->Args({1'000'000, 10'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// The primary model alone on state.range(0) segments in two groups (1 %
// jitter, 2 % of segments delayed): the point estimate's two fits (on the
// durations, then on what the measured delays leave), and the interval
// (200 replicas, each refitting the model: estimators::lost_interval).
struct PrimaryGroups {
  std::vector<std::vector<double>> values;
  std::vector<std::span<const double>> spans;
};
PrimaryGroups primary_groups(std::size_t segments) {
  PrimaryGroups groups;
  std::mt19937_64 engine(7);
  std::normal_distribution<double> jitter(0.0, 0.01);
  std::bernoulli_distribution delayed(0.02);
  std::exponential_distribution<double> delay(1.0 / 0.3);
  for (const double intrinsic : {0.010, 0.025}) {
    std::vector<double>& values = groups.values.emplace_back();
    for (std::size_t i = 0; i < segments / 2; ++i)
      values.push_back(intrinsic * (1.0 + jitter(engine) + (delayed(engine) ? delay(engine) : 0.0)));
  }
  groups.spans.assign(groups.values.begin(), groups.values.end());
  return groups;
}
void BM_PrimaryPoint(benchmark::State& state) {
  const PrimaryGroups groups = primary_groups(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const tremor::estimators::IntrinsicEstimate first = tremor::estimators::estimate_intrinsic(groups.spans);
    const tremor::estimators::IntrinsicEstimate second = tremor::estimators::estimate_intrinsic(groups.spans);
    benchmark::DoNotOptimize(first.total_lost + second.total_lost);
  }
}
void BM_PrimaryInterval(benchmark::State& state) {
  const PrimaryGroups groups = primary_groups(static_cast<std::size_t>(state.range(0)));
  const tremor::estimators::IntrinsicEstimate estimate = tremor::estimators::estimate_intrinsic(groups.spans);
  for (auto _ : state) {
    std::mt19937_64 engine(11);
    const tremor::estimators::LostInterval interval =
        tremor::estimators::lost_interval(groups.spans, {}, {}, estimate, 0.0, 0.0, engine);
    benchmark::DoNotOptimize(interval.high);
  }
}
BENCHMARK(BM_PrimaryPoint)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PrimaryInterval)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
