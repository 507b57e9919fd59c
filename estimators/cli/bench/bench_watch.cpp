// One `tremor watch` refresh over a job's spill files of 10^6 segments so far
// (docs/live.md): a generator writes 2 ranks' files (2 kinds of segment,
// 1 000 segments a block, one rank late in one segment of 997 by 4 ms), then
//   BM_FullRefresh         a follower that has read nothing: every byte is read;
//   BM_IncrementalRefresh  a follower that read the files before one more
//                          block (1 000 segments) per rank was appended.
// Each refresh is the watch's: the follower's update, then the snapshot's
// recovery and analysis in a child process. Counters: read_s (the update),
// analysis_s (the child), bytes_read, the peak RSS of this process and of
// its largest child (getrusage), and pair_peak_MiB: the peak over the
// refresh of this process's proportional set size plus its child's
// (/proc/PID/smaps_rollup, sampled every 5 ms), the memory the two use
// together (the child shares the segments read with this process).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../cli_watch.hpp"
#include "tremor/json_text.hpp"
#include "tremor/log_code.hpp"
#include "tremor/spill.hpp"

namespace {

namespace fs = std::filesystem;
using tremor::cli::watch::SpillFollower;

constexpr int kRanks = 2;
constexpr std::size_t kBlockSegments = 1000;

tremor::SpillHeader header_for(int rank) {
  tremor::SpillHeader h;
  h.run_id = 7;
  h.rank = rank;
  h.world_size = kRanks;
  h.pid = 4000 + rank;
  h.host = "node-" + std::to_string(rank);
  h.program = "bench_watch";
  h.command_line = "bench_watch";
  h.tremor_version = "0.7.0";
  h.mpi_flavour = "mpich";
  h.counter_source = tremor::CounterKind::thread_cputime;
  h.counter_unit = "ns";
  h.counter_events = {"cputime"};
  h.configuration = {{"TREMOR_SPILL_INTERVAL", "1"}};
  h.call_names = {"MPI_Barrier", "MPI_Allreduce", "MPI_Finalize"};
  h.start_time_unix = 1.8e9;
  h.seconds_per_tick = 1e-9;
  return h;
}

// Segment s of `rank`: kind s % 2 (10 ms or 25 ms of work), a fixed 5-value
// jitter of 0.1 %, rank 1 late by 4 ms in segment 7 of every 997 (rank 0 waits).
tremor::SpillSegmentRecord record_for(std::size_t s, int rank) {
  const std::size_t kind = s % 2;
  const double base = kind == 0 ? 0.010 : 0.025;
  const double jitter = 1.0 + 1e-3 * (static_cast<double>(s / 2 % 5) - 2.0);
  const bool planted = s % 997 == 7;
  const double work_s = base * jitter + (planted && rank == 1 ? 0.004 : 0.0);
  const double wait_s = 2e-4 + (planted && rank == 0 ? 0.004 : 0.0);
  const tremor::QuantizedValues values{work_s + wait_s, wait_s, 0.0, wait_s, work_s * 1e9, 0.0};
  tremor::SpillSegmentRecord record;
  for (std::size_t m = 0; m < tremor::kQuantizedCount; ++m)
    record.codes[m] = tremor::encode_value(values[m], tremor::code_scale(static_cast<tremor::Quantized>(m)));
  record.kind = static_cast<std::uint32_t>(kind);
  return record;
}

// Appends the blocks of segments [first, last) to each rank's file.
void append_segments(const std::vector<fs::path>& paths, std::size_t first, std::size_t last) {
  for (int rank = 0; rank < kRanks; ++rank) {
    std::vector<char> bytes;
    if (first == 0) bytes = tremor::encode_spill_header(header_for(rank));
    for (std::size_t start = first; start < last; start += kBlockSegments) {
      std::vector<tremor::SpillKindRecord> kinds;
      if (start == 0) {
        for (std::uint16_t k = 0; k < 2; ++k) {
          tremor::SpillKindRecord kind{};
          kind.features[6] = 1;  // one all-to-all collective
          kind.features[8] = 8u << k;
          kind.closing_call = 1;
          kinds.push_back(kind);
        }
      }
      std::vector<tremor::SpillSegmentRecord> records;
      for (std::size_t s = start; s < std::min(last, start + kBlockSegments); ++s) records.push_back(record_for(s, rank));
      tremor::append_spill_block(bytes, start, kinds, records);
    }
    std::ofstream out(paths[static_cast<std::size_t>(rank)], std::ios::binary | std::ios::app);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
}

struct Job {
  fs::path directory;
  std::vector<fs::path> paths;
  std::size_t segments = 0;
};

Job write_job(std::size_t segments) {
  Job job;
  job.directory = fs::temp_directory_path() / ("tremor-bench-watch-" + std::to_string(getpid()));
  fs::remove_all(job.directory);
  fs::create_directories(job.directory);
  for (int rank = 0; rank < kRanks; ++rank)
    job.paths.push_back(tremor::spill_path(job.directory / "bench_watch-20261207-4000-0", rank));
  append_segments(job.paths, 0, segments);
  job.segments = segments;
  return job;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Pss of a process in KiB (0 when it is gone).
double pss_kib(const std::string& pid) {
  std::ifstream rollup("/proc/" + pid + "/smaps_rollup");
  for (std::string line; std::getline(rollup, line);)
    if (line.starts_with("Pss:")) return std::stod(line.substr(4));
  return 0.0;
}

// This process's Pss plus its children's, KiB.
double pair_pss_kib() {
  const std::string self = std::to_string(getpid());
  double total = pss_kib(self);
  std::ifstream children("/proc/" + self + "/task/" + self + "/children");
  for (std::string child; children >> child;) total += pss_kib(child);
  return total;
}

// Samples pair_pss_kib() until destroyed; peak() the largest.
class PairMemory {
 public:
  PairMemory()
      : sampler_([this] {
          while (!stop_) {
            peak_ = std::max(peak_.load(), pair_pss_kib());
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }) {}
  ~PairMemory() {
    stop_ = true;
    sampler_.join();
  }
  PairMemory(const PairMemory&) = delete;
  PairMemory& operator=(const PairMemory&) = delete;
  double peak_mib() const { return peak_ / 1024.0; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<double> peak_{0.0};
  std::thread sampler_;
};

// One refresh: the update, then the analysis in a child; its times as counters.
void refresh(SpillFollower& follower, const Job& job, benchmark::State& state) {
  const PairMemory memory;
  const auto start = std::chrono::steady_clock::now();
  follower.update(job.paths);
  const double read_s = seconds_since(start);
  const auto analysed = std::chrono::steady_clock::now();
  const nlohmann::json snapshot =
      tremor::cli::watch::in_child([&follower] { return tremor::cli::watch::take_snapshot(follower); }, 600);
  const double analysis_s = seconds_since(analysed);
  if (!snapshot.contains("lost_percent") || snapshot["segments"].get<std::size_t>() != job.segments) {
    state.SkipWithError(("no figure: " + tremor::json_text(snapshot).substr(0, 300)).c_str());
    return;
  }
  state.counters["read_s"] = read_s;
  state.counters["analysis_s"] = analysis_s;
  state.counters["bytes_read"] = static_cast<double>(follower.bytes_read());
  state.counters["segments"] = static_cast<double>(job.segments);
  state.counters["pair_peak_MiB"] = std::max(state.counters["pair_peak_MiB"].value, memory.peak_mib());
}

void peak_rss(benchmark::State& state) {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  state.counters["peak_rss_MiB"] = static_cast<double>(self.ru_maxrss) / 1024.0;
  state.counters["child_peak_rss_MiB"] = static_cast<double>(children.ru_maxrss) / 1024.0;
}

void BM_FullRefresh(benchmark::State& state) {
  const Job job = write_job(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    SpillFollower follower;
    refresh(follower, job, state);
  }
  peak_rss(state);
  fs::remove_all(job.directory);
}

void BM_IncrementalRefresh(benchmark::State& state) {
  Job job = write_job(static_cast<std::size_t>(state.range(0)));
  SpillFollower follower;
  follower.update(job.paths);
  for (auto _ : state) {
    state.PauseTiming();
    append_segments(job.paths, job.segments, job.segments + kBlockSegments);
    job.segments += kBlockSegments;
    state.ResumeTiming();
    refresh(follower, job, state);
  }
  peak_rss(state);
  fs::remove_all(job.directory);
}

}  // namespace

BENCHMARK(BM_FullRefresh)->Arg(10'000)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IncrementalRefresh)
    ->Arg(10'000)
    ->Arg(1'000'000)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
