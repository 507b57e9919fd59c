// Measured off-CPU time as evidence: a slow rank's excess is charged, clean
// jitter and an application's own sleeping are not.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tremor/estimators/measured_delay.hpp"

using namespace tremor::estimators;

namespace {

// [ranks x segments] off-CPU times: `level` ± `jitter` (normal, clipped at 0),
// plus `extra` on every segment of rank `slow` (none when slow < 0).
std::vector<double> cells(std::uint64_t seed, std::size_t ranks, std::size_t segments, double level, double jitter,
                          int slow = -1, double extra = 0.0) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> noise(level, jitter);
  std::vector<double> values(ranks * segments);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t s = 0; s < segments; ++s) {
      double value = std::max(0.0, noise(engine));
      if (static_cast<int>(r) == slow) value += extra;
      values[r * segments + s] = value;
    }
  }
  return values;
}

}  // namespace

TEST_CASE("off-CPU: one slow rank of two is charged its excess on every segment", "[off_cpu]") {
  const std::size_t segments = 200;
  const auto values = cells(1, 2, segments, 0.0, 1e-6, 1, 800e-6);
  const MeasuredDelayGroup group = measured_excess(values, 2, segments);
  REQUIRE(group.excess_s.size() == segments);
  CHECK(group.clean_level_s < 5e-6);
  // 800 us per segment over the clean level.
  CHECK(group.total_excess_s == Approx(segments * 800e-6).epsilon(0.03));
  for (const double excess : group.excess_s) CHECK(excess > 700e-6);
}

TEST_CASE("off-CPU: a delayed cell is charged its excess over the clean level, not over the threshold",
          "[off_cpu]") {
  // Rank 0 is off the CPU 4 +- 2 ms per segment on its own; rank 1 as much plus
  // a 50 ms sleep in each. The threshold (level + 3 spreads) only decides that
  // rank 1's cells were delayed: charged beyond it they would read 19 % short.
  const std::size_t segments = 40;
  const auto values = cells(6, 2, segments, 4e-3, 2e-3, 1, 50e-3);
  const MeasuredDelayGroup group = measured_excess(values, 2, segments);
  CHECK(group.threshold_s > group.clean_level_s + 5e-3);
  CHECK(group.total_excess_s == Approx(segments * 50e-3).epsilon(0.06));
}

TEST_CASE("off-CPU: clean jitter and an application's own sleep charge about nothing", "[off_cpu]") {
  for (const std::uint64_t seed : {2u, 3u, 4u}) {
    // A busy code: a few microseconds off the CPU.
    const MeasuredDelayGroup busy = measured_excess(cells(seed, 4, 500, 2e-6, 1e-6), 4, 500);
    CHECK(busy.total_excess_s < 500 * 1e-6);
    // A code that sleeps 2 ms +- 20 us per segment on purpose.
    const MeasuredDelayGroup sleeping = measured_excess(cells(seed, 4, 500, 2e-3, 20e-6), 4, 500);
    CHECK(sleeping.clean_level_s == Approx(2e-3).epsilon(0.02));
    CHECK(sleeping.total_excess_s < 500 * 5e-6);
  }
}

TEST_CASE("off-CPU: a sleeping code with one rank stolen from charges the theft", "[off_cpu]") {
  auto values = cells(5, 4, 100, 2e-3, 20e-6);
  values[2 * 100 + 40] += 5e-3;  // rank 2, segment 40: 5 ms descheduled
  const MeasuredDelayGroup group = measured_excess(values, 4, 100);
  CHECK(group.excess_s[40] == Approx(5e-3).epsilon(0.05));
  CHECK(group.total_excess_s == Approx(5e-3).epsilon(0.1));
}

TEST_CASE("off-CPU: degenerate input", "[off_cpu]") {
  CHECK(measured_excess({}, 0, 0).excess_s.empty());
  const std::vector<double> short_input = {1.0, 2.0};
  CHECK(measured_excess(short_input, 2, 5).excess_s.empty());  // fewer cells than ranks x segments
  const std::vector<double> bad = {-1.0, std::nan(""), 1e-3, 0.0};
  const MeasuredDelayGroup group = measured_excess(bad, 1, 4);
  REQUIRE(group.excess_s.size() == 4);
  CHECK(group.excess_s[0] == 0.0);
  CHECK(group.excess_s[1] == 0.0);
  CHECK(group.excess_s[2] > 0.0);
}

TEST_CASE("off-CPU: ranks waiting for a CPU on every segment have no clean level of their own", "[off_cpu]") {
  // Every rank off the CPU about 3 ms on every segment (another job shares
  // the node): the group's own quantiles call 3 ms clean, so only the
  // run-queue evidence can charge it.
  const std::size_t segments = 100;
  const auto values = cells(7, 2, segments, 3e-3, 1e-4);
  const MeasuredDelayGroup own_level = measured_excess(values, 2, segments);
  CHECK(own_level.total_excess_s < 0.05 * segments * 3e-3);
  const std::vector<std::uint8_t> waiting{1, 1};
  const MeasuredDelayGroup waited = measured_excess(values, 2, segments, {}, waiting);
  // The worst of two ranks per segment: a little above the 3 ms mean.
  CHECK(waited.total_excess_s == Approx(segments * 3.06e-3).epsilon(0.03));
  // Only the flagged row loses its level.
  const std::vector<std::uint8_t> first_only{1, 0};
  const MeasuredDelayGroup one = measured_excess(values, 2, segments, {}, first_only);
  CHECK(one.total_excess_s == Approx(segments * 3e-3).epsilon(0.03));
}

TEST_CASE("off-CPU: waiting when the run queue holds at least half of it", "[off_cpu]") {
  CHECK(off_cpu_mostly_waiting(1.0, 1.5));
  CHECK_FALSE(off_cpu_mostly_waiting(0.2, 1.5));  // mostly sleeping on its own
  CHECK(off_cpu_mostly_waiting(0.0, 0.0));
  CHECK_FALSE(off_cpu_mostly_waiting(std::nan(""), 1.0));  // not measured
  CHECK_FALSE(off_cpu_mostly_waiting(-1.0, 1.0));
  CHECK_FALSE(off_cpu_mostly_waiting(1.0, std::numeric_limits<double>::infinity()));
}

TEST_CASE("node CPU time: on an oversubscribed node, what the job's ranks did not use while none slept", "[off_cpu]") {
  const auto free_of = [](double cpus, const std::vector<double>& own, const std::vector<double>& off,
                          const std::vector<double>& slept) { return node_cpu_time(cpus, own, off, slept).free_s; };
  const std::vector<double> unknown;  // no run-queue figures: any off-CPU time may have been sleep
  const std::vector<double> none(4, 0.0);
  const std::vector<double> ten_ms(4, 0.010);
  // 4 ranks on 2 CPUs, 10 ms: each off the CPU half the time fills both CPUs.
  const std::vector<double> own_turns(4, 0.005);
  CHECK(node_cpu_time(2.0, ten_ms, own_turns, none).capacity_s == Approx(0.020));
  CHECK(free_of(2.0, ten_ms, own_turns, none) == Approx(0.0).margin(1e-12));
  // Each off 6 ms: 4 ms of the node's 20 went elsewhere.
  const std::vector<double> shared(4, 0.006);
  CHECK(free_of(2.0, ten_ms, shared, none) == Approx(0.004));
  // Had they slept 1 ms each, the CPUs may have stood idle instead.
  const std::vector<double> slept(4, 0.001);
  CHECK(free_of(2.0, ten_ms, shared, slept) == Approx(0.0).margin(1e-12));
  CHECK(free_of(2.0, ten_ms, shared, unknown) == Approx(-0.020));  // all 24 ms off may have been sleep
  const std::vector<double> one_slept{0.0005, -0.1, 0.0, 0.0};     // negative: it slept not at all
  CHECK(free_of(2.0, ten_ms, shared, one_slept) == Approx(0.0035));
  const std::vector<double> one_unknown{0.0, std::nan(""), 0.0, 0.0};
  CHECK(free_of(2.0, ten_ms, shared, one_unknown) == Approx(-0.002));
  // Off-CPU beyond the rank's time or not finite reads as off all of it.
  const std::vector<double> odd{0.02, std::numeric_limits<double>::infinity(), 0.0, 0.0};
  CHECK(free_of(2.0, ten_ms, odd, none) == Approx(0.0).margin(1e-12));
  // Each rank's own time: a rank that left the previous boundary 2 ms late
  // ran 2 ms less in this segment, and the capacity is the ranks' mean.
  const std::vector<double> skewed{0.010, 0.008, 0.010, 0.010};
  CHECK(node_cpu_time(2.0, skewed, shared, none).capacity_s == Approx(0.019));
  CHECK(free_of(2.0, skewed, shared, none) == Approx(0.019 - 0.014));  // 4 + 2 (its 6 ms off of 8) + 4 + 4 ms ran
  // Signed: a segment the ranks' skew makes look over-full reads below 0.
  CHECK(free_of(2.0, {0.010, 0.010, 0.010, 0.010}, {0.001, 0.001, 0.001, 0.001}, none) == Approx(-0.016));
  CHECK(node_cpu_time(0.0, ten_ms, shared, none).capacity_s == 0.0);
  CHECK(node_cpu_time(2.0, {}, shared, none).capacity_s == 0.0);
}

TEST_CASE("foreign CPU share: free CPU over capacity, short segments summed over neighbours", "[off_cpu]") {
  using tremor::estimators::NodeCpuTime;
  constexpr double kAlone = 0.1;  // segments of 20 ms on 2 CPUs (40 ms of capacity) are short
  // Skew alone: segments alternately over- and under-full by 4 ms of 20.
  std::vector<NodeCpuTime> skew;
  for (int s = 0; s < 40; ++s) skew.push_back({0.020, s % 2 ? 0.004 : -0.004});
  const std::vector<double> clean = foreign_cpu_share(skew, kAlone, 10);
  for (std::size_t s = 0; s < clean.size(); ++s) CHECK(clean[s] <= 0.05 + 1e-12);  // an odd window keeps one
  CHECK(*std::max_element(clean.begin() + 10, clean.end() - 10) == Approx(0.004 / 0.42));
  // Another process takes half the node over segments 20..39, read with skew.
  std::vector<NodeCpuTime> window = skew;
  for (std::size_t s = 20; s < window.size(); ++s) window[s].free_s += 0.010;
  const std::vector<double> share = foreign_cpu_share(window, kAlone, 10);
  CHECK(share[5] < 0.05);
  CHECK(share[35] == Approx(0.5).margin(0.02));
  // Each side of the edge the window sees part of it: what is read before the
  // edge is what is missed after it.
  double read = 0.0;
  for (const double s : share) read += s * 0.020;
  CHECK(read == Approx(20 * 0.010).epsilon(0.05));
  // A long segment is read alone and not spread over its short neighbours,
  // and a segment of no capacity has no reading and no part in a window.
  std::vector<NodeCpuTime> after_long = skew;
  after_long[10] = {0.6, 0.24};
  after_long[11] = {};
  const std::vector<double> long_share = foreign_cpu_share(after_long, kAlone, 10);
  CHECK(long_share[10] == Approx(0.4));
  CHECK(long_share[11] == 0.0);
  for (const std::size_t s : {9, 12, 13}) CHECK(long_share[s] <= 0.05 + 1e-12);
  // Clamped; a window of 0 reads each segment alone.
  CHECK(foreign_cpu_share(std::vector<NodeCpuTime>{{0.02, 0.05}}, kAlone, 10).front() == 1.0);
  CHECK(foreign_cpu_share(skew, kAlone, 0)[0] == 0.0);
  CHECK(foreign_cpu_share(skew, kAlone, 0)[1] == Approx(0.2));
  CHECK(foreign_cpu_share({}, kAlone, 10).empty());
}

TEST_CASE("I/O stalls: against the fastest rank that did every kind of I/O, scaled to the amounts", "[io]") {
  const auto writer = [](double time_s, double writes, double bytes, double files = 1) {
    RankIo io;
    io.time_s = time_s;
    io.amounts = {files, files, 0, writes, 0, bytes};
    return io;
  };
  std::vector<double> beyond;
  // The same writes: 15 times the fastest is a stall, 3 times is not.
  std::vector<RankIo> ranks{writer(0.0002, 4, 65536), writer(0.003, 4, 65536), writer(0.0006, 4, 65536)};
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[0] == 0.0);
  CHECK(beyond[1] == Approx(0.0028));
  CHECK(beyond[2] == 0.0);
  // A tenth of the files, writes and bytes of a rank that took 0.6 ms: 0.06 ms at its speed.
  ranks = {writer(0.0006, 160, 640000, 10), writer(0.080, 16, 64000)};
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[0] == 0.0);
  CHECK(beyond[1] == Approx(0.080 - 0.00006));
  // More bytes than the peer: scaled by the larger ratio, 0.6 ms x 100 is no stall at 80 ms.
  ranks[1].amounts[5] = 64000000;
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[1] == 0.0);
  // A peer that only read says nothing of writes.
  RankIo reader;
  reader.time_s = 0.0001;
  reader.amounts = {1, 1, 10, 0, 65536, 0};
  ranks = {reader, writer(0.080, 16, 64000)};
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[0] == 0.0);
  CHECK(beyond[1] == 0.0);
  // Ranks taking turns: only beyond the longest turn off the CPU of a rank with I/O.
  ranks = {writer(0.0002, 4, 65536), writer(0.003, 4, 65536), RankIo{}};
  for (RankIo& rank : ranks) rank.takes_turns = true;
  ranks[0].off_cpu_s = 0.004;
  ranks[2].off_cpu_s = 0.050;  // no I/O: its turns do not count
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[1] == 0.0);
  ranks[1].time_s = 0.010;
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[1] == Approx(0.0098));
  CHECK(beyond[2] == 0.0);
  // One rank alone has nothing to be compared with.
  ranks = {writer(1.0, 4, 65536)};
  io_stalls(ranks, 10.0, beyond);
  CHECK(beyond[0] == 0.0);
}
