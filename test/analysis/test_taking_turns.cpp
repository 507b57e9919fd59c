// Measured delays where ranks take turns on their node's CPUs, or share them
// with another process (estimators/analysis/src/measured_cells.cpp,
// shared_turns.cpp): what they slept, their turns, the CPU time others took.
#include <catch2/catch.hpp>
#include <numeric>

#include "measured_cells_fixtures.hpp"
#include "tremor/analysis/report.hpp"

using namespace tremor;
using namespace tremor::analysis;
using namespace tremor::test::measured;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;

TEST_CASE("ranks taking turns on an oversubscribed node: what one slept beyond its run-queue delay is lost",
          "[analysis]") {
  // 4 ranks on one node of 2 CPUs: every rank waits 1-3 ms per segment for a
  // CPU (its run-queue delay), which is the job's own; rank 1 also sleeps 1 ms
  // inside the collective in 9 of 10 segments. The turns spread too much for
  // a clean level to show that.
  std::vector<std::size_t> delayed;
  for (std::size_t s = 0; s < 200; ++s) {
    if (s % 10 != 0) delayed.push_back(s);
  }
  RunData run = cputime_run(delayed, 0.001, 4e6);  // 4 ranks' 4 ms fit 2 CPUs in 10 ms
  one_node(run, "2");
  const auto asleep = [](std::size_t r, std::size_t s) { return r == 1 && s % 10 != 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::wait_time, [](std::size_t, std::size_t) { return 2e-6; });
  const auto turns = [](std::size_t r, std::size_t s) {
    return 0.001 * (1.0 + 0.2 * static_cast<double>((7 * r + 13 * s) % 11));
  };
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return turns(r, s) + (asleep(r, s) ? 0.001 : 0.0); });
  for (std::size_t r = 0; r < 4; ++r) {
    run.ranks[r].run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < 200; ++s) run.ranks[r].run_queue_delay_s += turns(r, s);
  }
  const double truth = 100.0 * static_cast<double>(delayed.size()) * 0.001 / run.meta.run_time_s;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.waiting_ranks == 0);  // the job's own turns: the run queue is not used for waiting
  CHECK(result.primary.lost_percent == Approx(truth).margin(1.0));
  // Nobody slept: the turns alone are not charged.
  set_cells(run, Quantized::off_cpu_time, turns);
  for (const std::size_t s : delayed) run.segments.duration_s[s] -= 0.001;
  run.meta.run_time_s -= static_cast<double>(delayed.size()) * 0.001;
  CHECK(analyze_run(run, quick_parameters()).primary.lost_percent < 0.5);
}

TEST_CASE("ranks taking turns: their own turns cost nothing, another process costs the CPU time it took",
          "[analysis]") {
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  set_turns(run, [&](std::size_t s) { return 0.5 * clean[s]; });
  const RunAnalysis alone = analyze_run(run, quick_parameters());
  REQUIRE(alone.estimate_possible);
  CHECK(alone.primary.taking_turns);
  CHECK(alone.primary.lost_percent < 0.5);  // the durations spread by half: their lower part is no clean level
  // The interval reaches the most the work allows: 4 ranks' 2 ms on 2 CPUs
  // take at least 4 ms a segment, not the median rank's 2 ms.
  CHECK(alone.primary.work_critical_path_s == Approx(200 * 0.004).epsilon(0.01));
  // Nothing else ran: the turns are the job's own cost, neither in the
  // figure, nor in its interval, nor reported apart.
  CHECK(alone.primary.lost_percent_low <= alone.primary.lost_percent);
  CHECK(alone.primary.lost_percent_high < 0.5);
  CHECK(alone.primary.oversubscription_percent == 0.0);
  CHECK(alone.interference_class == estimators::InterferenceClass::low);
  // Segments 50-149: another busy process shares the node and takes a fifth
  // of its CPU time; they last 25 % longer and each rank is off 60 % of them.
  double lost = 0.0;
  for (std::size_t s = 50; s < 150; ++s) {
    run.segments.duration_s[s] = 1.25 * clean[s];
    lost += 0.25 * clean[s];
  }
  run.meta.run_time_s += lost;
  set_turns(run, [&](std::size_t s) { return (s >= 50 && s < 150 ? 0.6 : 0.5) * run.segments.duration_s[s]; });
  const RunAnalysis shared = analyze_run(run, quick_parameters());
  CHECK(shared.primary.evidence.foreign_cpu_loss_s == Approx(lost).epsilon(0.01));
  // Read over 10 short segments either side, the share reaches 10 segments
  // past each edge of the span, where each is charged at least its share.
  CHECK(shared.primary.lost_percent == Approx(100.0 * lost / run.meta.run_time_s).margin(1.0));
  CHECK(shared.primary.lost_percent_low <= shared.primary.lost_percent);
  CHECK(shared.primary.lost_percent_high >= shared.primary.lost_percent);
  CHECK(shared.primary.lost_percent_high < shared.primary.lost_percent + 1.0);
}

TEST_CASE("ranks taking turns beside another process: their polling for descheduled ranks is lost too", "[analysis]") {
  // The process takes a fifth of the node's CPU time where it runs, but the
  // segments last twice as long: ranks waiting for a descheduled one poll on.
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  const double clean_run_s = run.meta.run_time_s;
  const auto beside = [&](std::size_t from, std::size_t to) {
    RunData shared = run;
    double lost = 0.0;
    for (std::size_t s = from; s < to; ++s) {
      shared.segments.duration_s[s] = 2.0 * clean[s];
      lost += clean[s];
    }
    shared.meta.run_time_s = clean_run_s + lost;
    set_turns(shared, [&](std::size_t s) { return (s >= from && s < to ? 0.6 : 0.5) * shared.segments.duration_s[s]; });
    return std::pair{shared, lost};
  };
  // For a window (segments 50-149): the rest of each group tells what a segment needs.
  const auto [window, window_lost] = beside(50, 150);
  const RunAnalysis part = analyze_run(window, quick_parameters());
  CHECK(part.primary.evidence.foreign_cpu_loss_s == Approx(0.4 * window_lost).epsilon(0.01));
  CHECK(part.primary.lost_percent == Approx(100.0 * window_lost / window.meta.run_time_s).margin(1.0));
  CHECK(part.primary.lost_percent_low >= 100.0 * 0.4 * window_lost / window.meta.run_time_s - 0.5);
  CHECK(part.primary.lost_percent_low <= part.primary.lost_percent);
  CHECK(part.primary.oversubscription_percent == 0.0);  // the rest of each group tells what the turns cost
  // For the whole run nothing tells what the job's own turns cost beside the
  // process: the figure holds the CPU time it took (measured), and the time
  // beyond the ranks' work over the CPUs that cannot be told from the turns
  // is reported apart, never in the figure; the interval reaches it.
  const auto [whole, whole_lost] = beside(0, 200);
  const RunAnalysis all = analyze_run(whole, quick_parameters());
  const double bound = 100.0 * (whole.meta.run_time_s - 200 * 0.004) / whole.meta.run_time_s;
  CHECK(all.primary.evidence.foreign_cpu_loss_s == Approx(0.4 * whole_lost).epsilon(0.02));
  CHECK(all.primary.lost_percent == Approx(100.0 * 0.4 * whole_lost / whole.meta.run_time_s).margin(0.5));
  CHECK(all.primary.lost_percent + all.primary.oversubscription_percent == Approx(bound).margin(0.5));
  CHECK(all.primary.lost_percent_high == Approx(bound).margin(0.5));
  CHECK(all.primary.lost_percent_low <= all.primary.lost_percent);
  // The headline says the job oversubscribes its node and what is reported apart.
  const auto says_apart = [](const RunData& r, const RunAnalysis& a) {
    std::string text = render_text_report(r, a, "run.h5");
    std::replace(text.begin(), text.end(), '\n', ' ');
    text.erase(std::unique(text.begin(), text.end(), [](char x, char y) { return x == ' ' && y == ' '; }), text.end());
    return text.find("Oversubscribed: ranks outnumber their node's CPUs") != std::string::npos &&
           text.find("(reported apart, not in the figure above)") != std::string::npos;
  };
  CHECK(says_apart(whole, all));
  CHECK(says_apart(window, part));
}

TEST_CASE("ranks taking turns beside another process: charged in the ranks' own time, as the run is", "[analysis]") {
  // Ranks leave each boundary apart: rank r's own segment time is (1 - r/10)
  // of the segment's duration (the longest rank's), so the durations sum to
  // 1/0.85 of the run. Segments 50-149 take twice as long beside a busy loop.
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  double lost = 0.0;
  for (std::size_t s = 50; s < 150; ++s) {
    run.segments.duration_s[s] = 2.0 * clean[s];
    lost += 0.85 * clean[s];
  }
  const auto own = [&](std::size_t r, std::size_t s) {
    return (1.0 - 0.1 * static_cast<double>(r)) * run.segments.duration_s[s];
  };
  run.meta.run_time_s = 0.0;
  for (const double duration : run.segments.duration_s) run.meta.run_time_s += 0.85 * duration;
  const auto off = [&](std::size_t r, std::size_t s) { return (s >= 50 && s < 150 ? 0.7 : 0.5) * own(r, s); };
  set_cells(run, Quantized::duration, own);
  set_cells(run, Quantized::off_cpu_time, off);
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {  // all of it run-queue delay
    run.ranks[r].run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < run.segments.size(); ++s) run.ranks[r].run_queue_delay_s += off(r, s);
  }
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.primary.taking_turns);
  // Charged in the segments' durations it would read 1/0.85 of that (39 %).
  CHECK(result.primary.lost_percent == Approx(100.0 * lost / run.meta.run_time_s).margin(1.5));
}

TEST_CASE("ranks taking turns: a write outlasting every turn is a stall, one within a turn is not", "[analysis]") {
  // Ranks 1 and 2 write the same file in every segment; rank 2 takes 0.2 ms.
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  set_turns(run, [&](std::size_t s) { return 0.5 * clean[s]; });
  FeatureVector writing{};
  writing[tremor::index(Feature::coll_all_to_all)] = 1;
  writing[tremor::index(Feature::bytes_sent)] = 8;
  writing[tremor::index(Feature::io_writes)] = 4;
  writing[tremor::index(Feature::io_bytes_written)] = 65536;
  for (const std::size_t r : {1, 2}) run.detail.signatures[run.detail.signature_offset[r]] = writing;
  const auto io = [](double rank_1) {
    return [rank_1](std::size_t r, std::size_t) { return r == 1 ? rank_1 : r == 2 ? 0.0002 : 0.0; };
  };
  // 2.2 ms, 11 times rank 2's, but shorter than the 2.5-10 ms each rank
  // waits for its turns: it may have waited for one inside the call.
  set_cells(run, Quantized::io_time, io(0.0022));
  CHECK(analyze_run(run, quick_parameters()).primary.evidence.io_peer_excess_s == 0.0);
  // 30 ms on every 10th segment: no turn explains it.
  for (std::size_t s = 0; s < 200; s += 10) run.segments.duration_s[s] += 0.0298;
  run.meta.run_time_s += 20 * 0.0298;
  set_cells(run, Quantized::io_time, [](std::size_t r, std::size_t s) {
    return r == 1 ? (s % 10 == 0 ? 0.030 : 0.0022) : r == 2 ? 0.0002 : 0.0;
  });
  const RunAnalysis stalled = analyze_run(run, quick_parameters());
  CHECK(stalled.primary.evidence.io_peer_excess_s == Approx(20 * 0.0298).epsilon(0.01));
  CHECK(stalled.primary.lost_percent == Approx(100.0 * 20 * 0.0298 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("ranks taking turns: what a rank slept bounds the loss from below, once", "[analysis]") {
  // 4 ranks on 2 CPUs, each off the CPU 1 ms per segment by turns (4 ms of
  // work in 10). Rank 1 sleeps 1.99 s reading the input in segment 0 (no
  // usable group), where the others read the same in 10 ms: an I/O stall,
  // and what it slept over the run (/ranks/slept_s). Both measure the same 1.99 s.
  RunData run = input_read_run(4e6);
  one_node(run, "2");
  set_cells(run, Quantized::io_time, [](std::size_t r, std::size_t s) { return s != 0 ? 0.0 : r == 1 ? 2.0 : 0.01; });
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t s) { return s == 0 && r != 1 ? 1.99 : 2e-6; });
  set_turns(run, [](std::size_t) { return 0.001; });
  for (RankInfo& rank : run.ranks) rank.slept_s = rank.rank == 1 ? 1.99 : 0.0;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.taking_turns);
  CHECK(result.primary.lost_percent == Approx(100.0 * 1.99 / run.meta.run_time_s).margin(0.5));
  // Slept elsewhere too: the rest of what it slept is lost where it was off the CPU.
  run.ranks[1].slept_s = 2.19;
  CHECK(analyze_run(run, quick_parameters()).primary.lost_percent == Approx(100.0 * 2.19 / run.meta.run_time_s).margin(0.5));
}

TEST_CASE("ranks taking turns: two ranks asleep in different segments both cost the run", "[analysis]") {
  // Rank 1 sleeps 1 ms in every even segment, rank 2 in every odd one; each
  // segment waits for the one asleep in it: 200 ms in all, 100 ms each. Their
  // turns are short here (1 % of each segment), so where each slept shows.
  // (Where turns are much longer than the sleeps, a rank's sleep is spread
  // over all its segments and the estimate falls toward the one that slept
  // most.)
  RunData run = taking_turns_run();
  const std::vector<double> clean = run.segments.duration_s;
  for (std::size_t s = 0; s < 200; ++s) run.segments.duration_s[s] += 0.001;
  run.meta.run_time_s += 0.2;
  const auto asleep = [](std::size_t r, std::size_t s) { return (r == 1 && s % 2 == 0) || (r == 2 && s % 2 == 1); };
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return 0.01 * clean[s] + (asleep(r, s) ? 0.001 : 0.0); });
  for (RankInfo& rank : run.ranks) {
    rank.run_queue_delay_s = 0.0;
    for (std::size_t s = 0; s < 200; ++s) rank.run_queue_delay_s += 0.01 * clean[s];
    rank.slept_s = rank.rank == 1 || rank.rank == 2 ? 0.1 : 0.0;
  }
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.lost_percent == Approx(100.0 * 0.2 / run.meta.run_time_s).margin(1.0));
}

TEST_CASE("another process beside the whole run: two ranks waiting for a CPU in turn in every segment of a group",
          "[analysis]") {
  // A co-runner on the ranks' cores: in every segment of the 10 ms group
  // rank 0 and then rank 1 are descheduled 4 ms each, one after the other,
  // while the ranks on the CPU poll for them, so each takes 18 ms; the 5 ms
  // group is spared. No segment of the first group is clean, and its lowest
  // durations hold the waits too: only the summed waits show the loss.
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e7, 0.010, 100}, SyntheticGroup{5e6, 0.005, 100}};
  spec.counter_source = tremor::CounterKind::thread_cputime;
  const auto chained = [](std::size_t s) { return s % 2 == 0; };  // the 10 ms group's segments
  for (std::size_t s = 0; s < 200; s += 2) spec.delays.push_back({s, 0.008, 1});
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.schema_version = 3;
  run.meta.counter_unit = "ns";
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
  set_cells(run, Quantized::work, [&](std::size_t, std::size_t s) { return run.segments.work[s]; });
  set_cells(run, Quantized::wait_time,
            [&](std::size_t r, std::size_t s) { return r == 0 && chained(s) ? 0.008 + 2e-6 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time,
            [&](std::size_t r, std::size_t s) { return r < 2 && chained(s) ? 0.004 : 0.0; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.4;  // of 0.4 s off the CPU
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.waiting_ranks == 4);
  const double truth = 100.0 * 100 * 0.008 / run.meta.run_time_s;
  CHECK(result.primary.lost_percent == Approx(truth).margin(0.5));
  CHECK(result.primary.work_critical_path_s == Approx(100 * 0.010 + 100 * 0.005).epsilon(1e-6));

  SECTION("descheduled at the same time, nobody polling: their waits overlap") {
    // The machine stalled 4 ms in each of those segments, both ranks at once.
    for (std::size_t s = 0; s < 200; s += 2) run.segments.duration_s[s] -= 0.004;
    run.meta.run_time_s -= 100 * 0.004;
    set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
    set_cells(run, Quantized::wait_time, [](std::size_t, std::size_t) { return 2e-6; });
    const RunAnalysis stalled = analyze_run(run, quick_parameters());
    CHECK(stalled.primary.lost_percent == Approx(100.0 * 100 * 0.004 / run.meta.run_time_s).margin(0.5));
  }
  SECTION("ranks leaving the boundaries apart: the segments overlap, the run lost at most its time beyond the work") {
    // Each rank's segment runs from its own previous exit, so the segments'
    // maxima add up to more than the run when the exits are skewed.
    run.meta.run_time_s -= 0.2;
    const RunAnalysis skewed = analyze_run(run, quick_parameters());
    const double most_s = run.meta.run_time_s - (100 * 0.010 + 100 * 0.005);
    const double most = 100.0 * most_s / run.meta.run_time_s;
    CHECK(skewed.primary.lost_percent == Approx(most).margin(1e-6));
    CHECK(skewed.primary.lost_percent_high <= most + 1e-9);
    const double charged = std::accumulate(skewed.primary.segment_lost_s.begin(), skewed.primary.segment_lost_s.end(), 0.0);
    CHECK(charged == Approx(most_s).epsilon(1e-6));
  }
}

TEST_CASE(
    "two ranks waiting for a CPU in turn in a segment of no group: their waits add up, up to its time beyond "
    "the work",
    "[analysis]") {
  // Segment 0 (its own signature, no usable group) does 10 ms of work and
  // takes 1.99 s more: ranks 0 and 1 were each descheduled 0.995 s, one
  // after the other.
  RunData run = input_read_run();
  set_cells(run, Quantized::wait_time, [](std::size_t r, std::size_t s) { return s == 0 && r == 0 ? 1.99 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t s) { return s == 0 && r < 2 ? 0.995 : 0.0; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.995;
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.segment_primary_group[0] < 0);
  CHECK(result.primary.segment_lost_s[0] == Approx(1.99).epsilon(0.01));
  // Descheduled at the same time (the whole machine stalled), the segment
  // took 0.995 s beyond its work, and that is all it lost.
  run.segments.duration_s[0] -= 0.995;
  run.meta.run_time_s -= 0.995;
  CHECK(analyze_run(run, quick_parameters()).primary.segment_lost_s[0] == Approx(0.995).epsilon(0.01));
}

TEST_CASE("ranks descheduled at the same time while the others wait for a busier rank: their waits overlap",
          "[analysis]") {
  // Segments of 10 ms, 4 of them work on every rank and the rest
  // communication. In every segment the machine stalls 3 ms with ranks 0 and
  // 1 off the CPU at once. In 3 of 4 segments ranks 1-3 have 1 ms of work
  // where rank 0 has 4: they poll 3 ms more for rank 0, which holds up no
  // one beyond it.
  std::vector<std::size_t> every(200);
  std::iota(every.begin(), every.end(), std::size_t{0});
  RunData run = cputime_run(every, 0.003, 4e6);
  const auto lighter = [](std::size_t r, std::size_t s) { return r > 0 && s % 4 != 0; };
  for (double& wait : run.segments.late_wait_s) wait = 2e-6;
  set_cells(run, Quantized::duration, [&](std::size_t, std::size_t s) { return run.segments.duration_s[s]; });
  set_cells(run, Quantized::work, [&](std::size_t r, std::size_t s) { return lighter(r, s) ? 1e6 : 4e6; });
  set_cells(run, Quantized::wait_time, [&](std::size_t r, std::size_t s) { return lighter(r, s) ? 0.003 : 2e-6; });
  set_cells(run, Quantized::off_cpu_time, [](std::size_t r, std::size_t) { return r < 2 ? 0.003 : 0.0; });
  for (RankInfo& rank : run.ranks) rank.run_queue_delay_s = 0.6;  // of 0.6 s off the CPU
  const RunAnalysis result = analyze_run(run, quick_parameters());
  REQUIRE(result.estimate_possible);
  CHECK(result.primary.waiting_ranks == 4);
  CHECK(result.primary.lost_percent == Approx(100.0 * 200 * 0.003 / run.meta.run_time_s).margin(0.5));
}
