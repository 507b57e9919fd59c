// Speed and memory figures of the segment store (not run by CTest):
//   bench_segments --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <bit>
#include <random>
#include <span>
#include <vector>

#include "tremor/program_merge.hpp"
#include "tremor/segment_store.hpp"
#include "tremor/spill.hpp"

namespace {

// Continuous random values (log-normal durations) with a handful of signatures.
struct SegmentStream {
  std::mt19937_64 engine{42};
  std::lognormal_distribution<double> seconds{-7.0, 1.0};
  std::uniform_int_distribution<int> signature{0, 4};
  tremor::QuantizedValues values() {
    tremor::QuantizedValues v{};
    for (double& x : v) x = seconds(engine);
    return v;
  }
  tremor::FeatureVector features() {
    tremor::FeatureVector f{};
    f[0] = static_cast<std::uint64_t>(signature(engine));
    f[8] = 4096 * f[0];
    return f;
  }
};

void BM_SegmentStoreAppend(benchmark::State& state) {
  SegmentStream stream;
  // Pre-draw the inputs so only append is timed.
  std::vector<tremor::QuantizedValues> values(1 << 16);
  std::vector<tremor::FeatureVector> features(1 << 16);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = stream.values();
    features[i] = stream.features();
  }
  auto store = std::make_unique<tremor::SegmentStore>();
  std::size_t i = 0;
  for (auto _ : state) {
    if (store->size() >= 4'000'000) {  // bounded memory over long benchmark runs
      state.PauseTiming();
      store = std::make_unique<tremor::SegmentStore>();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(store->append(values[i], features[i], 3));
    i = (i + 1) & (values.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SegmentStoreAppend);

void BM_CodeAppend(benchmark::State& state) {
  std::mt19937_64 engine(3);
  std::lognormal_distribution<double> seconds(-7.0, 1.0);
  std::vector<double> values(1 << 16);
  for (double& v : values) v = seconds(engine);
  tremor::CodeColumn column;  // stores the code like the recorder does
  std::size_t i = 0;
  for (auto _ : state) {
    if (column.size() >= 50'000'000) {
      state.PauseTiming();
      column = tremor::CodeColumn();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(column.append(values[i]));
    i = (i + 1) & (values.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CodeAppend);

void BM_MemoryPerSegment(benchmark::State& state) {
  const auto segments = static_cast<std::size_t>(state.range(0));
  double bytes_per_segment = 0;
  for (auto _ : state) {
    SegmentStream stream;
    tremor::SegmentStore store;
    for (std::size_t i = 0; i < segments; ++i) store.append(stream.values(), stream.features(), 1);
    bytes_per_segment = static_cast<double>(store.memory_bytes()) / static_cast<double>(segments);
  }
  state.counters["bytes_per_segment"] = bytes_per_segment;
}
BENCHMARK(BM_MemoryPerSegment)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_Finalize(benchmark::State& state) {
  SegmentStream stream;
  tremor::SegmentStore store;
  for (std::int64_t i = 0; i < state.range(0); ++i) store.append(stream.values(), stream.features(), 1);
  for (auto _ : state) benchmark::DoNotOptimize(store.finalize());
}
BENCHMARK(BM_Finalize)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Per rank, the code table of 2000 segment times spread over a factor of
// about 20 (lognormal, sigma 0.5): about 1000 codes each.
std::vector<tremor::BinTable> rank_code_tables(std::size_t ranks) {
  std::mt19937_64 engine(7);
  std::lognormal_distribution<double> seconds(-7.0, 0.5);
  std::vector<tremor::BinTable> tables(ranks);
  for (auto& table : tables) {
    tremor::CodeColumn column;
    for (int i = 0; i < 2000; ++i) column.append(seconds(engine));
    table = column.finalize().bins;
  }
  return tables;
}

// The exact union of the codes (the profiler does it with one MPI_Allreduce
// of a bitmap and one MPI_Reduce of the counts; this is the same work on one
// process).
void BM_ProgramMerge(benchmark::State& state) {
  const auto tables = rank_code_tables(static_cast<std::size_t>(state.range(0)));
  std::size_t input = 0;
  for (const auto& table : tables) input += table.size();
  for (auto _ : state) benchmark::DoNotOptimize(tremor::merge_program_bins(tables));
  state.counters["input_bins"] = static_cast<double>(input);
}
BENCHMARK(BM_ProgramMerge)->Arg(10'000)->Unit(benchmark::kMillisecond);

// The profiler's path at MPI_Finalize, on its critical path: a rank marks
// its codes in an 8 KiB bitmap and numbers them in the union; a binomial-tree
// MPI_Allreduce (OR of bitmaps) and MPI_Reduce (sum of the global counts)
// cost the root ceil(log2 P) combinations each. Network latency excluded.
void BM_ProgramMergeCriticalPath(benchmark::State& state) {
  const auto ranks = static_cast<std::size_t>(state.range(0));
  const auto tables = rank_code_tables(ranks);
  std::vector<std::uint64_t> union_bits(1024, 0);
  for (const auto& table : tables)
    for (const auto& bin : table) union_bits[bin.code / 64] |= std::uint64_t{1} << (bin.code % 64);
  std::size_t global = 0;
  for (const std::uint64_t word : union_bits) global += static_cast<std::size_t>(std::popcount(word));
  const std::size_t rounds = static_cast<std::size_t>(std::bit_width(ranks - 1));
  std::vector<std::uint64_t> partner(global, 1);
  for (auto _ : state) {
    const auto& mine = tables.front();
    std::vector<std::uint64_t> bits(1024, 0);
    for (const auto& bin : mine) bits[bin.code / 64] |= std::uint64_t{1} << (bin.code % 64);
    for (std::size_t round = 0; round < rounds; ++round)
      for (std::size_t w = 0; w < bits.size(); ++w) bits[w] |= union_bits[w];
    std::vector<std::uint32_t> before(1025, 0);
    for (std::size_t w = 0; w < 1024; ++w) before[w + 1] = before[w] + static_cast<std::uint32_t>(std::popcount(bits[w]));
    std::vector<std::uint64_t> counts(global, 0);
    for (const auto& bin : mine) {
      const std::uint64_t below = bits[bin.code / 64] & ((std::uint64_t{1} << (bin.code % 64)) - 1);
      counts[before[bin.code / 64] + static_cast<std::uint32_t>(std::popcount(below))] = bin.count;
    }
    for (std::size_t round = 0; round < rounds; ++round)
      for (std::size_t g = 0; g < global; ++g) counts[g] += partner[g];
    benchmark::DoNotOptimize(counts.data());
  }
  state.counters["global_codes"] = static_cast<double>(global);
}
BENCHMARK(BM_ProgramMergeCriticalPath)->Arg(10'000)->Unit(benchmark::kMillisecond);

// The paper's 512 program-wide bins derived from the program-wide codes.
void BM_PaperBins(benchmark::State& state) {
  const auto tables = rank_code_tables(static_cast<std::size_t>(state.range(0)));
  const tremor::BinTable codes = tremor::merge_program_bins(tables).bins;
  for (auto _ : state) benchmark::DoNotOptimize(tremor::merge_closest_bins(std::span(&codes, 1)));
  state.counters["code_bins"] = static_cast<double>(codes.size());
}
BENCHMARK(BM_PaperBins)->Arg(10'000)->Unit(benchmark::kMillisecond);

// The crash-recovery spill: encoding one block of 2048 segments from the
// store (its kinds and 16-byte records, checksummed), and its write(2). A
// boundary itself only compares; this is paid once per TREMOR_SPILL_INTERVAL
// or per 2048 segments. The file is truncated between batches, so it stays in
// the page cache as a spill on a local or burst-buffer file system would.
void BM_SpillBlock(benchmark::State& state) {
  SegmentStream stream;
  tremor::SegmentStore store;
  for (int i = 0; i < 2048; ++i) store.append(stream.values(), stream.features(), 1);
  std::vector<tremor::SpillKindRecord> kinds;
  for (std::size_t k = 0; k < store.kind_count(); ++k)
    kinds.push_back({store.kind_features(k), store.kind_closing_call(k), {}});
  std::vector<tremor::SpillSegmentRecord> records(store.size());
  std::vector<char> block;
  for (auto _ : state) {
    block.clear();
    for (std::size_t s = 0; s < store.size(); ++s) records[s] = {store.codes(s), store.kind_of(s)};
    tremor::append_spill_block(block, 0, kinds, records);
    benchmark::DoNotOptimize(block.data());
  }
  state.counters["ns_per_segment"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2048,
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SpillBlock)->Unit(benchmark::kMicrosecond);

void BM_SpillAppendFullBlock(benchmark::State& state) {
  char path[] = "/tmp/tremor-bench-spill-XXXXXX";
  const int fd = ::mkstemp(path);
  ::unlink(path);
  const std::vector<char> block(sizeof(tremor::SpillBlockHeader) + 2048 * sizeof(tremor::SpillSegmentRecord));
  int batches = 0;
  for (auto _ : state) {
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) state.SkipWithError("write failed");
    if (++batches % 256 == 0) {
      state.PauseTiming();
      if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) state.SkipWithError("truncate failed");
      state.ResumeTiming();
    }
  }
  ::close(fd);
  state.counters["ns_per_segment"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2048,
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SpillAppendFullBlock)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
