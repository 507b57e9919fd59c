#include "tremor/estimators/parallel.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tremor::estimators {

int affinity_cpus() noexcept {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(std::min<long>(online, 1L << 20)) : 1;
}

int analysis_threads(int setting) noexcept {
  return setting > 0 ? setting : std::min(affinity_cpus(), kMaxAnalysisThreads);
}

void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& work) {
  const std::size_t workers = std::min(static_cast<std::size_t>(std::max(1, threads)), count);
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_lock;
  const auto drain = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        work(i);
      } catch (...) {
        const std::lock_guard<std::mutex> hold(failure_lock);
        if (!failure) failure = std::current_exception();
        next.store(count);  // the others stop at their next item
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(workers - 1);
    for (std::size_t t = 1; t < workers; ++t) {
      try {
        helpers.emplace_back(drain);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: those started and this one do the work
      }
    }
    drain();
  }  // joined here
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tremor::estimators
