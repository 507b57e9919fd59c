// Busy work for the counter tests that does not depend on machine load.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>

namespace tremor::counters::testing {

inline std::uint64_t process_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(now.tv_nsec);
}

// Spins until the PROCESS has used `cpu_ns` more CPU time: other builds share
// the two cores, so a wall-clock spin could get almost no CPU. The process
// clock is not the thread clock under test, and the wall cap bounds the test.
inline void spin_cpu(std::uint64_t cpu_ns, std::chrono::seconds wall_cap = std::chrono::seconds(5)) {
  const std::uint64_t target = process_cpu_ns() + cpu_ns;
  const auto give_up = std::chrono::steady_clock::now() + wall_cap;
  volatile std::uint64_t sink = 0;
  while (process_cpu_ns() < target && std::chrono::steady_clock::now() < give_up) sink = sink + 1;
}

struct ThreadDeltas {
  std::uint64_t busy = 0;      // the thread that used 50 ms of CPU
  std::uint64_t sleeping = 0;  // the thread that slept 100 ms
};

// How far a per-thread counter (source.read()) advances in two threads that
// run at once, one busy and one asleep: each must see only its own time.
template <typename Source>
ThreadDeltas busy_and_sleeping_thread_deltas(const Source& source) {
  ThreadDeltas deltas;
  std::thread busy([&] {
    const std::uint64_t before = source.read();
    spin_cpu(50'000'000);
    deltas.busy = source.read() - before;
  });
  std::thread sleeper([&] {
    const std::uint64_t before = source.read();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    deltas.sleeping = source.read() - before;
  });
  busy.join();
  sleeper.join();
  return deltas;
}

}  // namespace tremor::counters::testing
