#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <span>

#include "environment_collect.hpp"
#include "finalize_driver.hpp"
#include "process_facts.hpp"
#include "recorder.hpp"
#include "tremor/inject_api.h"
#include "tremor/code_column.hpp"
#include "tremor/run_assembly.hpp"

namespace tremor::interpose {
namespace {

constexpr int kTagDetail = 7301;
constexpr std::size_t kReduceChunk = 1 << 16;
constexpr int kHostLength = 256;

struct Context {
  MPI_Comm comm;
  int rank = 0;
  int size = 1;
  bool root() const { return rank == 0; }
};

void gather_ranks(const Context& ctx, RunData* run) {
  char host[kHostLength] = {};
  int length = 0;
  PMPI_Get_processor_name(host, &length);
  std::vector<char> all(ctx.root() ? static_cast<std::size_t>(ctx.size) * kHostLength : 0);
  PMPI_Gather(host, kHostLength, MPI_CHAR, all.data(), kHostLength, MPI_CHAR, 0, ctx.comm);
  const SchedulerTimes times = scheduler_times_since_init();
  const double local[2] = {times.run_queue_delay_s, times.slept_s};
  std::vector<double> scheduler(ctx.root() ? 2 * static_cast<std::size_t>(ctx.size) : 0);
  PMPI_Gather(local, 2, MPI_DOUBLE, scheduler.data(), 2, MPI_DOUBLE, 0, ctx.comm);
  if (!ctx.root()) return;
  std::vector<std::string> hosts;
  for (int r = 0; r < ctx.size; ++r) {
    const char* name = &all[static_cast<std::size_t>(r) * kHostLength];
    hosts.emplace_back(name, strnlen(name, kHostLength));
  }
  run->meta.node_count = assign_nodes(hosts, run->ranks);
  for (std::size_t r = 0; r < run->ranks.size() && 2 * r + 1 < scheduler.size(); ++r) {
    run->ranks[r].run_queue_delay_s = scheduler[2 * r];
    run->ranks[r].slept_s = scheduler[2 * r + 1];
  }
}

void gather_totals(const Context& ctx, const FinalizedSegments& local, RunData* run) {
  const int n = ctx.root() ? ctx.size : 0;
  if (ctx.root()) {
    run->raw_totals.resize(static_cast<std::size_t>(n));
    run->raw_feature_totals.resize(static_cast<std::size_t>(n));
  }
  PMPI_Gather(local.raw_totals.data(), kQuantizedCount, MPI_DOUBLE, ctx.root() ? run->raw_totals.data() : nullptr,
              kQuantizedCount, MPI_DOUBLE, 0, ctx.comm);
  PMPI_Gather(local.raw_feature_totals.data(), kFeatureCount, MPI_UINT64_T,
              ctx.root() ? run->raw_feature_totals.data() : nullptr, kFeatureCount, MPI_UINT64_T, 0, ctx.comm);
}

// The program-wide bins of one metric: the union of the log codes every rank
// used (a bitwise OR of 8 KiB), counts summed on the root. Exact, and the
// same as merge_program_bins on the gathered tables. Returns this rank's
// local -> global index map.
std::vector<std::uint16_t> merge_metric_bins(const Context& ctx, Quantized metric, const BinTable& local_bins,
                                             BinTable* global_bins) {
  constexpr std::size_t kWords = 65536 / 64;
  std::vector<std::uint64_t> used(kWords, 0);
  for (const Bin& bin : local_bins) used[bin.code / 64] |= std::uint64_t{1} << (bin.code % 64);
  PMPI_Allreduce(MPI_IN_PLACE, used.data(), static_cast<int>(kWords), MPI_UINT64_T, MPI_BOR, ctx.comm);
  // Global index of a code: the number of used codes below it.
  std::vector<std::uint32_t> before_word(kWords + 1, 0);
  for (std::size_t w = 0; w < kWords; ++w)
    before_word[w + 1] = before_word[w] + static_cast<std::uint32_t>(std::popcount(used[w]));
  auto global_of = [&](std::uint16_t code) {
    const std::uint64_t below = used[code / 64] & ((std::uint64_t{1} << (code % 64)) - 1);
    return static_cast<std::uint16_t>(before_word[code / 64] + static_cast<std::uint32_t>(std::popcount(below)));
  };
  const std::size_t global_count = before_word[kWords];
  std::vector<std::uint64_t> counts(global_count, 0), totals(ctx.root() ? global_count : 0, 0);
  std::vector<std::uint16_t> map;
  map.reserve(local_bins.size());
  for (const Bin& bin : local_bins) {
    map.push_back(global_of(bin.code));
    counts[map.back()] = bin.count;
  }
  PMPI_Reduce(counts.data(), totals.data(), static_cast<int>(global_count), MPI_UINT64_T, MPI_SUM, 0, ctx.comm);
  if (ctx.root()) {
    global_bins->clear();
    global_bins->reserve(global_count);
    std::size_t g = 0;
    for (std::size_t w = 0; w < kWords; ++w)
      for (std::uint64_t bits = used[w]; bits != 0; bits &= bits - 1) {
        const auto code = static_cast<std::uint16_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        global_bins->push_back(code_bin(code, totals[g++], code_scale(metric)));
      }
  }
  return map;
}

// Ground truth from libtremor-inject when it is loaded (found by dlsym, no
// link dependency). The root keeps at most 2^22 records in the file; every
// rank's CSV log has them all.
constexpr std::size_t kMaxInjectionRecords = std::size_t{1} << 22;

void gather_injection(const Context& ctx, RunData* run) {
  std::vector<tremor_inject_record> records;
  const auto count =
      reinterpret_cast<tremor_inject_record_count_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_RECORD_COUNT_SYMBOL));
  const auto copy =
      reinterpret_cast<tremor_inject_copy_records_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_COPY_RECORDS_SYMBOL));
  if (count && copy) {
    const std::size_t cap = std::max<std::size_t>(1, kMaxInjectionRecords / static_cast<std::size_t>(ctx.size));
    records.resize(std::min(count(), cap));
    records.resize(static_cast<std::size_t>(std::max(0, copy(records.data(), records.size()))));
  }
  const int mine = static_cast<int>(records.size() * sizeof(tremor_inject_record));
  std::vector<int> sizes(ctx.root() ? static_cast<std::size_t>(ctx.size) : 0), displs;
  PMPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, ctx.comm);
  std::vector<tremor_inject_record> all;
  if (ctx.root()) {
    int offset = 0;
    for (int size : sizes) {
      displs.push_back(offset);
      offset += size;
    }
    all.resize(static_cast<std::size_t>(offset) / sizeof(tremor_inject_record));
  }
  PMPI_Gatherv(records.data(), mine, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, 0, ctx.comm);
  if (!ctx.root()) return;
  for (int r = 0; r < ctx.size; ++r) {
    const std::size_t first =
        static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]) / sizeof(tremor_inject_record);
    const std::size_t n = static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]) / sizeof(tremor_inject_record);
    for (std::size_t i = first; i < first + n; ++i) {
      const tremor_inject_record& record = all[i];
      run->injection.push_back(InjectionRecord{r, record.time_s,
                                               std::string(record.call, strnlen(record.call, sizeof record.call)),
                                               record.requested_us, record.spent_us, record.segment});
    }
  }
}

struct DoubleInt {
  double value;
  int rank;
};

}  // namespace

std::optional<RunData> gather_run(MPI_Comm comm, const Recorder& recorder, const FinalizedSegments& local) {
  Context ctx{comm};
  PMPI_Comm_rank(comm, &ctx.rank);
  PMPI_Comm_size(comm, &ctx.size);
  RunData run;

  // Every rank sees the same boundaries; if not, use the common prefix.
  const unsigned long long mine = local.segments;
  unsigned long long fewest = 0, most = 0;
  PMPI_Allreduce(&mine, &fewest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  PMPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  const auto n = static_cast<std::size_t>(fewest);
  if (most != fewest && ctx.rank == 0) {
    // Boundaries are global collectives, so this means a rank stopped early.
    Recorder::instance().warn0("ranks recorded between " + std::to_string(fewest) + " and " + std::to_string(most) +
                               " segments; the common prefix is analysed");
  }
  double elapsed = recorder.elapsed_s(), longest = 0.0;
  PMPI_Reduce(&elapsed, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);

  gather_ranks(ctx, &run);
  gather_environment(comm, ctx.rank, ctx.size, &run);
  gather_totals(ctx, local, &run);
  gather_injection(ctx, &run);

  // Program-wide bins and this rank's segments as global bin indices.
  std::array<std::vector<std::uint16_t>, kQuantizedCount> global_index;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    const auto map = merge_metric_bins(ctx, static_cast<Quantized>(m), local.bins[m], &run.global_bins[m]);
    global_index[m].resize(n);
    for (std::size_t s = 0; s < n; ++s) global_index[m][s] = map[local.bin_index[m][s]];
  }

  // Exact reductions over all ranks, in bounded chunks.
  std::vector<std::uint16_t> longest_index(ctx.root() ? n : 0);
  std::vector<DoubleInt> least_mpi(ctx.root() ? n : 0);
  std::vector<double> least_wait(ctx.root() ? n : 0);
  std::vector<std::uint64_t> signature_sum(ctx.root() ? n : 0);
  // The late rank is the one that spent the least time inside MPI in the
  // segment: the others waited for it, in the closing collective or in any
  // earlier exchange that resynchronised them.
  const BinTable& wait_bins = local.bins[index(Quantized::wait_time)];
  const BinTable& mpi_bins = local.bins[index(Quantized::mpi_time)];
  for (std::size_t first = 0; first < n; first += kReduceChunk) {
    const std::size_t count = std::min(kReduceChunk, n - first);
    std::vector<DoubleInt> mpi_times(count);
    std::vector<double> waits(count);
    std::vector<std::uint64_t> hashes(count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t s = first + i;
      mpi_times[i] = {mpi_bins[local.bin_index[index(Quantized::mpi_time)][s]].rep(), ctx.rank};
      waits[i] = wait_bins[local.bin_index[index(Quantized::wait_time)][s]].rep();
      hashes[i] = signature_hash(local.signatures[local.signature_index[s]]);
    }
    const int c = static_cast<int>(count);
    PMPI_Reduce(global_index[index(Quantized::duration)].data() + first,
                ctx.root() ? longest_index.data() + first : nullptr, c, MPI_UINT16_T, MPI_MAX, 0, comm);
    PMPI_Reduce(mpi_times.data(), ctx.root() ? least_mpi.data() + first : nullptr, c, MPI_DOUBLE_INT, MPI_MINLOC, 0,
                comm);
    PMPI_Reduce(waits.data(), ctx.root() ? least_wait.data() + first : nullptr, c, MPI_DOUBLE, MPI_MIN, 0, comm);
    PMPI_Reduce(hashes.data(), ctx.root() ? signature_sum.data() + first : nullptr, c, MPI_UINT64_T, MPI_SUM, 0, comm);
  }

  // Per-segment detail of a bounded set of ranks, sent to the root.
  const auto ranks = detail_ranks(ctx.size, recorder.config().detail_ranks, n);
  const bool i_am_detail = std::binary_search(ranks.begin(), ranks.end(), ctx.rank);
  const int ncount = static_cast<int>(n);
  if (i_am_detail && !ctx.root()) {
    for (std::size_t m = 0; m < kQuantizedCount; ++m) {
      PMPI_Send(global_index[m].data(), ncount, MPI_UINT16_T, 0, kTagDetail, comm);
    }
    PMPI_Send(local.signature_index.data(), ncount, MPI_UINT32_T, 0, kTagDetail, comm);
    const int words = static_cast<int>(local.signatures.size() * kFeatureCount);
    PMPI_Send(&words, 1, MPI_INT, 0, kTagDetail, comm);
    PMPI_Send(local.signatures.data(), words, MPI_UINT64_T, 0, kTagDetail, comm);
  }
  if (!ctx.root()) return std::nullopt;

  DetailRanks& detail = run.detail;
  detail.ranks = ranks;
  detail.segments = n;
  for (auto& matrix : detail.global_index) matrix.resize(ranks.size() * n);
  detail.signature_index.resize(ranks.size() * n);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    detail.signature_offset.push_back(static_cast<std::uint32_t>(detail.signatures.size()));
    if (ranks[r] == 0) {
      for (std::size_t m = 0; m < kQuantizedCount; ++m) {
        std::copy_n(global_index[m].begin(), n, detail.global_index[m].begin() + static_cast<std::ptrdiff_t>(r * n));
      }
      std::copy_n(local.signature_index.begin(), n,
                  detail.signature_index.begin() + static_cast<std::ptrdiff_t>(r * n));
      detail.signatures.insert(detail.signatures.end(), local.signatures.begin(), local.signatures.end());
      continue;
    }
    for (std::size_t m = 0; m < kQuantizedCount; ++m) {
      PMPI_Recv(detail.global_index[m].data() + r * n, ncount, MPI_UINT16_T, ranks[r], kTagDetail, comm,
                MPI_STATUS_IGNORE);
    }
    PMPI_Recv(detail.signature_index.data() + r * n, ncount, MPI_UINT32_T, ranks[r], kTagDetail, comm,
              MPI_STATUS_IGNORE);
    int words = 0;
    PMPI_Recv(&words, 1, MPI_INT, ranks[r], kTagDetail, comm, MPI_STATUS_IGNORE);
    std::vector<FeatureVector> dictionary(static_cast<std::size_t>(words) / kFeatureCount);
    PMPI_Recv(dictionary.data(), words, MPI_UINT64_T, ranks[r], kTagDetail, comm, MPI_STATUS_IGNORE);
    detail.signatures.insert(detail.signatures.end(), dictionary.begin(), dictionary.end());
  }

  // The program-wide segment table.
  SegmentReductions reductions{std::move(longest_index), {}, {}, std::move(least_wait), std::move(signature_sum)};
  for (const DoubleInt& least : least_mpi) {
    reductions.least_mpi_s.push_back(least.value);
    reductions.least_mpi_rank.push_back(least.rank);
  }
  build_segment_table(run, reductions, std::span(local.closing_call).first(n));

  RunMetadata& meta = run.meta;
  meta.tremor_version = TREMOR_VERSION;
  meta.command_line = read_command_line();
  meta.mpi_flavour = TREMOR_MPI_FLAVOUR;
  meta.mpi_library_version = mpi_library_version();
  meta.world_size = ctx.size;
  meta.counter_source = std::string(recorder.counter().name());
  meta.counter_events = recorder.counter().events();
  meta.counter_unit = recorder.counter().unit();
  meta.job_id = job_id();
  meta.start_time_unix = recorder.start_time_unix();
  meta.end_time_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  meta.run_time_s = longest;
  meta.configuration = effective_configuration(recorder.config());
  for (std::string_view name : kCallNames) meta.call_names.emplace_back(name);
  return run;
}

}  // namespace tremor::interpose
