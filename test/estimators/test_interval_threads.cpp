// The interference interval is the same, digit for digit, on any number of
// threads (estimators/parallel.hpp): every replica's draws are made in one
// thread in the serial order and only the refits run in parallel. The
// expected values are the serial bootstrap's, as it was before it ran in
// parallel (its numbers are fixed by the accuracy campaigns). Fails for an
// implementation whose workers draw their own replica's blocks or normals
// from the shared engine (the draws then depend on which thread gets there
// first, and differ from the serial order even on one thread if a replica's
// draws are reordered), or that combines the replicas out of order.
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "tremor/estimators/intrinsic.hpp"
#include "tremor/estimators/lost_interval.hpp"

using namespace tremor::estimators;

namespace {

// 12 groups of 150 segments with a work column: 1 % jitter, 15 % of the
// segments delayed by 5 % of their time on average.
struct Groups {
  std::vector<std::vector<double>> values, work;
  std::vector<std::span<const double>> spans, work_spans;
};

Groups planted_groups() {
  Groups groups;
  std::mt19937_64 engine(424242);
  std::normal_distribution<double> jitter(0.0, 0.01);
  std::bernoulli_distribution delayed(0.15);
  std::exponential_distribution<double> delay(1.0 / 0.05);
  for (int g = 0; g < 12; ++g) {
    const double intrinsic = 0.002 * (g + 1);
    std::vector<double>& values = groups.values.emplace_back();
    std::vector<double>& work = groups.work.emplace_back();
    for (int i = 0; i < 150; ++i) {
      const double clean = intrinsic * (1.0 + jitter(engine));
      values.push_back(clean + (delayed(engine) ? intrinsic * delay(engine) : 0.0));
      work.push_back(1e6 * clean / intrinsic);
    }
  }
  groups.spans.assign(groups.values.begin(), groups.values.end());
  groups.work_spans.assign(groups.work.begin(), groups.work.end());
  return groups;
}

// The serial bootstrap's ends for these groups, as bit patterns (0.17613037...,
// 0.21069575...): replicas refitted from the run's own fit with SQUAREM on
// their residuals merged into bins of sigma / 64 (lost_interval.hpp). On the
// residuals themselves they were 0.176130451... and 0.210694616...; the
// cold-started refits of 25 plain EM steps gave 0.176134... and 0.210681...
constexpr std::uint64_t kExpectedLow = 0x3fc68b709a09957bULL;
constexpr std::uint64_t kExpectedHigh = 0x3fcaf81412bfc208ULL;

LostInterval interval_on(int threads, const Groups& groups) {
  const IntrinsicEstimate estimate = estimate_intrinsic(groups.spans, {}, groups.work_spans);
  std::mt19937_64 engine(99);
  LostIntervalOptions options;
  options.threads = threads;
  return lost_interval(groups.spans, groups.work_spans, {}, estimate, 0.03, 0.004, engine, options);
}

}  // namespace

TEST_CASE("the interference interval is the serial bootstrap's, digit for digit, on 1 and on 4 threads", "[interval]") {
  const Groups groups = planted_groups();
  const LostInterval serial = interval_on(1, groups);
  const LostInterval parallel = interval_on(4, groups);
  INFO("low " << std::bit_cast<std::uint64_t>(serial.low) << " high " << std::bit_cast<std::uint64_t>(serial.high));
  CHECK(std::bit_cast<std::uint64_t>(parallel.low) == std::bit_cast<std::uint64_t>(serial.low));
  CHECK(std::bit_cast<std::uint64_t>(parallel.high) == std::bit_cast<std::uint64_t>(serial.high));
  // The serial bootstrap's own numbers.
  CHECK(std::bit_cast<std::uint64_t>(serial.low) == kExpectedLow);
  CHECK(std::bit_cast<std::uint64_t>(serial.high) == kExpectedHigh);
  CHECK(serial.low < serial.high);
}
