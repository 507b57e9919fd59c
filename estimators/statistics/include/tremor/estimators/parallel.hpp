// The analysis's threads (TREMOR_ANALYSIS_THREADS). Work is split so that
// every random draw is made in the calling thread, in the serial order, and
// results are combined in index order: any thread count gives the same
// numbers, digit for digit.
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace tremor::estimators {

// Automatic thread counts stop here: the parallel parts (the interval's
// refits, the predictions' per-group bootstraps) are about two thirds of the
// analysis of a real application (docs/analysis-time.md), so beyond 8 threads
// the serial rest dominates (Amdahl: 8 give at most ~2.5x, 64 ~2.9x), while
// each thread holds its own refit buffers.
inline constexpr int kMaxAnalysisThreads = 8;

// The CPUs in this process's affinity mask (sched_getaffinity; the online
// CPUs if that fails), at least 1.
int affinity_cpus() noexcept;

// The threads to use for `setting`: itself when positive, else (automatic)
// the affinity CPUs, at most kMaxAnalysisThreads.
int analysis_threads(int setting) noexcept;

// Calls work(i) for every i in [0, count) on up to `threads` threads (the
// caller is one of them) and returns once all are done. work(i) must write
// only what belongs to i. The first exception thrown is rethrown here.
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& work);

// compute(i) for every i in [0, count) on up to `threads` threads, a batch of
// 16 per thread at a time (the results held at once stay bounded), then
// consume(i, result) in index order in the calling thread. compute(i) must
// draw only from its own engine.
template <class Result, class Compute, class Consume>
void parallel_in_order(std::size_t count, int threads, Compute compute, Consume consume) {
  const std::size_t batch = 16 * static_cast<std::size_t>(std::max(1, threads));
  std::vector<std::optional<Result>> results;
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t size = std::min(batch, count - first);
    results.assign(size, std::nullopt);
    parallel_for(size, threads, [&](std::size_t i) { results[i].emplace(compute(first + i)); });
    for (std::size_t i = 0; i < size; ++i) consume(first + i, *results[i]);
  }
}

}  // namespace tremor::estimators
