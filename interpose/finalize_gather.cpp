#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <limits>
#include <span>

#include "environment_collect.hpp"
#include "finalize_driver.hpp"
#include "process_facts.hpp"
#include "recorder.hpp"
#include "tremor/code_column.hpp"
#include "tremor/inject_api.h"
#include "tremor/run_assembly.hpp"

namespace tremor::interpose {
namespace {

constexpr std::size_t kCodeWords = 65536 / 64;
constexpr int kHostLength = 256;

// Collective 1's contribution. Every rank learns the common segment count and
// which log codes any rank used: the program-wide bins, exact, the same as
// merge_program_bins on the gathered tables.
struct Summary {
  std::uint64_t fewest_segments;
  std::uint64_t most_segments;
  double longest_elapsed_s;
  std::uint64_t used_codes[kQuantizedCount][kCodeWords];
};

void combine_summaries(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const Summary*>(in);
  auto* b = static_cast<Summary*>(inout);
  for (int i = 0; i < *len; ++i, ++a, ++b) {
    b->fewest_segments = std::min(a->fewest_segments, b->fewest_segments);
    b->most_segments = std::max(a->most_segments, b->most_segments);
    b->longest_elapsed_s = std::max(a->longest_elapsed_s, b->longest_elapsed_s);
    for (std::size_t m = 0; m < kQuantizedCount; ++m)
      for (std::size_t w = 0; w < kCodeWords; ++w) b->used_codes[m][w] |= a->used_codes[m][w];
  }
}

// Collective 4 reduces an array of these: first one per program-wide bin
// (`sum` holds the rank's count of it, the other fields stay neutral), then
// one per segment. The late rank of a segment is the one that spent the
// least time inside MPI in it: the others waited for it, in the closing
// collective or in an earlier exchange that resynchronised them.
struct SegmentRecord {
  std::uint64_t sum;    // SUM: the signature hash, or a bin's count
  double least_mpi_s;   // MINLOC with least_mpi_rank (lowest rank on ties)
  double least_wait_s;  // MIN
  std::int32_t least_mpi_rank;
  std::uint16_t longest_index;  // MAX: the global duration bin index
  std::uint16_t unused;
};
static_assert(sizeof(SegmentRecord) == 32);

constexpr SegmentRecord kNeutralRecord{0,
                                       std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<std::int32_t>::max(),
                                       0,
                                       0};

// Records per datatype element: a few thousand, so an MPI that pipelines a
// long reduction can cut it between elements. The same on every rank. A test
// copy of the library sets fewer (interpose/CMakeLists.txt).
#ifndef TREMOR_GATHER_RECORDS_PER_ELEMENT
#define TREMOR_GATHER_RECORDS_PER_ELEMENT 4096
#endif
constexpr std::size_t kMaxRecordsPerElement = TREMOR_GATHER_RECORDS_PER_ELEMENT;
std::atomic<std::size_t> g_records_per_element{1};

void combine_records(void* in, void* inout, int* len, MPI_Datatype*) {
  const std::size_t count = static_cast<std::size_t>(*len) * g_records_per_element.load(std::memory_order_relaxed);
  const auto* a = static_cast<const SegmentRecord*>(in);
  auto* b = static_cast<SegmentRecord*>(inout);
  for (std::size_t i = 0; i < count; ++i) {
    b[i].sum += a[i].sum;
    if (a[i].least_mpi_s < b[i].least_mpi_s ||
        (a[i].least_mpi_s == b[i].least_mpi_s && a[i].least_mpi_rank < b[i].least_mpi_rank)) {
      b[i].least_mpi_s = a[i].least_mpi_s;
      b[i].least_mpi_rank = a[i].least_mpi_rank;
    }
    b[i].least_wait_s = std::min(a[i].least_wait_s, b[i].least_wait_s);
    b[i].longest_index = std::max(a[i].longest_index, b[i].longest_index);
  }
}

// Collective 2: what each rank sends in collective 3 beyond its fixed part.
struct RankSizes {
  std::uint64_t environment_bytes;
  std::uint64_t injection_records;
  std::uint64_t signatures;  // the rank's dictionary of segment kinds
};

// The fixed head of each rank's part of collective 3.
struct RankFacts {
  char host[kHostLength];
  double run_queue_delay_s;
  double slept_s;
  double own_sleep_s;
  double injected_s;  // a stacked injector's total spent delay on this rank; NaN without one
  QuantizedValues raw_totals;
  FeatureVector raw_feature_totals;
};
static_assert(sizeof(RankFacts) % 8 == 0);

constexpr std::size_t units_of(std::size_t bytes) { return (bytes + 7) / 8; }

// Collective 3's part of one rank, in 8-byte units.
std::size_t payload_units(const RankSizes& sizes, bool detail, std::size_t segments) {
  std::size_t units = units_of(sizeof(RankFacts)) + units_of(sizes.environment_bytes) +
                      units_of(sizes.injection_records * sizeof(tremor_inject_record));
  if (detail) {
    units += units_of(kQuantizedCount * segments * sizeof(std::uint16_t)) + units_of(segments * sizeof(std::uint32_t)) +
             sizes.signatures * kFeatureCount;
  }
  return units;
}

// Appends byte ranges to an array of 8-byte units, each padded to a unit.
class PayloadWriter {
 public:
  explicit PayloadWriter(std::vector<std::uint64_t>& out) : out_(out) {}
  void put(const void* data, std::size_t bytes) {
    const std::size_t at = out_.size();
    out_.resize(at + units_of(bytes), 0);
    if (bytes > 0) std::memcpy(out_.data() + at, data, bytes);
  }

 private:
  std::vector<std::uint64_t>& out_;
};

class PayloadReader {
 public:
  explicit PayloadReader(const std::uint64_t* at) : at_(at) {}
  const char* take(std::size_t bytes) {
    const char* here = reinterpret_cast<const char*>(at_);
    at_ += units_of(bytes);
    return here;
  }

 private:
  const std::uint64_t* at_;
};

// Ground truth from libtremor-inject when it is loaded (found by dlsym, no
// link dependency). The root keeps at most 2^22 records in the file; every
// rank's CSV log has them all.
constexpr std::size_t kMaxInjectionRecords = std::size_t{1} << 22;

std::vector<tremor_inject_record> injected_delays(int world_size) {
  std::vector<tremor_inject_record> records;
  const auto count =
      reinterpret_cast<tremor_inject_record_count_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_RECORD_COUNT_SYMBOL));
  const auto copy =
      reinterpret_cast<tremor_inject_copy_records_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_COPY_RECORDS_SYMBOL));
  if (count && copy) {
    const std::size_t cap = std::max<std::size_t>(1, kMaxInjectionRecords / static_cast<std::size_t>(world_size));
    records.resize(std::min(count(), cap));
    records.resize(static_cast<std::size_t>(std::max(0, copy(records.data(), records.size()))));
  }
  return records;
}

// The rank's truth from a stacked injector: its own running total of the
// delays it spent (tremor_inject_get_totals), every delay counted even when
// the records above are capped; NaN when no injector is loaded.
double injected_seconds() {
  const auto totals =
      reinterpret_cast<tremor_inject_get_totals_fn>(dlsym(RTLD_DEFAULT, TREMOR_INJECT_GET_TOTALS_SYMBOL));
  tremor_inject_totals value{};
  if (totals == nullptr || totals(&value) != 1) return std::numeric_limits<double>::quiet_NaN();
  return value.spent_s;
}

}  // namespace

struct FinalizeGather::Buffers {
  Summary summary{};
  RankSizes sizes{};
  std::vector<RankSizes> all_sizes;  // root
  std::string environment;
  std::vector<tremor_inject_record> injection;
  std::size_t segments = 0;
  std::vector<std::int32_t> detail_ranks;
  std::array<std::size_t, kQuantizedCount> global_counts{};
  std::vector<std::uint64_t> payload;   // this rank's part of collective 3
  std::vector<std::uint64_t> gathered;  // root: every rank's
  std::vector<int> counts, displacements;
  std::vector<SegmentRecord> records;  // this rank's contribution to collective 4
  std::vector<SegmentRecord> reduced;  // root
  std::vector<std::uint16_t> closing_call;
  int outcome = 0;
  ByteBlock summary_type{sizeof(Summary)};
  ByteBlock sizes_type{sizeof(RankSizes)};
  ByteBlock unit_type{8};
  std::optional<ByteBlock> record_type;
  UserOp summary_op{&combine_summaries};
  UserOp record_op{&combine_records};
};

FinalizeGather::FinalizeGather(MPI_Comm comm, const Recorder& recorder, const FinalizedSegments& local)
    : comm_(comm), recorder_(recorder), local_(local), buffers_(std::make_unique<Buffers>()) {
  PMPI_Comm_rank(comm, &rank_);
  PMPI_Comm_size(comm, &size_);
}

FinalizeGather::~FinalizeGather() {
  const bool pending =
      std::any_of(requests_.begin(), requests_.end(), [](MPI_Request request) { return request != MPI_REQUEST_NULL; });
  if (pending) static_cast<void>(buffers_.release());
}

bool FinalizeGather::post_outcome(int value) {
  if (root()) buffers_->outcome = value;
  MPI_Request request = MPI_REQUEST_NULL;
  if (PMPI_Ibcast(&buffers_->outcome, 1, MPI_INT, 0, comm_, &request) != MPI_SUCCESS) return false;
  requests_.push_back(request);
  ++collectives_;
  return true;
}

int FinalizeGather::outcome() const noexcept { return buffers_->outcome; }

bool FinalizeGather::meet() {
  Buffers& b = *buffers_;
  if (!b.summary_type.valid() || !b.sizes_type.valid() || !b.unit_type.valid() || !b.summary_op.valid() ||
      !b.record_op.valid()) {
    return false;
  }
  b.summary.fewest_segments = local_.segments;
  b.summary.most_segments = local_.segments;
  b.summary.longest_elapsed_s = recorder_.elapsed_s();
  for (std::size_t m = 0; m < kQuantizedCount; ++m)
    for (const Bin& bin : local_.bins[m]) b.summary.used_codes[m][bin.code / 64] |= std::uint64_t{1} << (bin.code % 64);
  b.environment = encoded_environment(size_);
  b.injection = injected_delays(size_);
  b.sizes = {b.environment.size(), b.injection.size(), local_.signatures.size()};
  if (root()) b.all_sizes.resize(static_cast<std::size_t>(size_));

  requests_.assign(2, MPI_REQUEST_NULL);
  if (PMPI_Iallreduce(MPI_IN_PLACE, &b.summary, 1, b.summary_type.type(), b.summary_op.op(), comm_, &requests_[0]) !=
      MPI_SUCCESS) {
    return false;
  }
  ++collectives_;
  if (PMPI_Igather(&b.sizes, 1, b.sizes_type.type(), b.all_sizes.data(), 1, b.sizes_type.type(), 0, comm_,
                   &requests_[1]) != MPI_SUCCESS) {
    return false;
  }
  ++collectives_;
  if (complete_by(requests_, FinalizeDeadline::kNever) != Completion::done) return false;
  requests_.clear();
  return true;
}

bool FinalizeGather::post_rest() {
  Buffers& b = *buffers_;
  const std::size_t n = b.summary.fewest_segments;
  b.segments = n;
  if (root() && b.summary.most_segments != n) {
    // Boundaries are global collectives, so this means a rank stopped early.
    Recorder::instance().warn0("ranks recorded between " + std::to_string(n) + " and " +
                               std::to_string(b.summary.most_segments) + " segments; the common prefix is analysed");
  }

  // Global index of a code: the number of used codes below it.
  std::array<std::vector<std::uint16_t>, kQuantizedCount> to_global;  // per metric, local bin -> global index
  std::size_t bins_total = 0;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    const std::uint64_t* used = b.summary.used_codes[m];
    std::vector<std::uint32_t> before_word(kCodeWords + 1, 0);
    for (std::size_t w = 0; w < kCodeWords; ++w)
      before_word[w + 1] = before_word[w] + static_cast<std::uint32_t>(std::popcount(used[w]));
    for (const Bin& bin : local_.bins[m]) {
      const std::uint64_t below = used[bin.code / 64] & ((std::uint64_t{1} << (bin.code % 64)) - 1);
      to_global[m].push_back(
          static_cast<std::uint16_t>(before_word[bin.code / 64] + static_cast<std::uint32_t>(std::popcount(below))));
    }
    b.global_counts[m] = before_word[kCodeWords];
    bins_total += b.global_counts[m];
  }

  // Collective 3: facts, environment, injected delays, detail.
  b.detail_ranks = detail_ranks(size_, recorder_.config().detail_ranks, n);
  const bool detail = std::binary_search(b.detail_ranks.begin(), b.detail_ranks.end(), rank_);
  PayloadWriter writer(b.payload);
  b.payload.reserve(payload_units(b.sizes, detail, n));
  RankFacts facts{};
  const std::string host = processor_name();
  std::memcpy(facts.host, host.data(), std::min<std::size_t>(host.size(), kHostLength - 1));
  const SchedulerTimes times = scheduler_times_since_init();
  facts.run_queue_delay_s = times.run_queue_delay_s;
  facts.slept_s = times.slept_s;
  facts.own_sleep_s = recorder_.own_sleep_s();
  facts.injected_s = injected_seconds();
  facts.raw_totals = local_.raw_totals;
  facts.raw_feature_totals = local_.raw_feature_totals;
  writer.put(&facts, sizeof facts);
  writer.put(b.environment.data(), b.environment.size());
  writer.put(b.injection.data(), b.injection.size() * sizeof(tremor_inject_record));
  if (detail) {
    std::vector<std::uint16_t> indices;
    indices.reserve(kQuantizedCount * n);
    for (std::size_t m = 0; m < kQuantizedCount; ++m)
      for (std::size_t s = 0; s < n; ++s) indices.push_back(to_global[m][local_.bin_index[m][s]]);
    writer.put(indices.data(), indices.size() * sizeof(std::uint16_t));
    writer.put(local_.signature_index.data(), n * sizeof(std::uint32_t));
    writer.put(local_.signatures.data(), local_.signatures.size() * sizeof(FeatureVector));
  }
  std::string().swap(b.environment);
  std::vector<tremor_inject_record>().swap(b.injection);
  if (root()) {
    long long offset = 0;
    for (int r = 0; r < size_; ++r) {
      const auto& sizes = b.all_sizes[static_cast<std::size_t>(r)];
      const bool is_detail = std::binary_search(b.detail_ranks.begin(), b.detail_ranks.end(), r);
      const auto units = static_cast<long long>(payload_units(sizes, is_detail, n));
      b.counts.push_back(static_cast<int>(units));
      b.displacements.push_back(static_cast<int>(offset));
      offset += units;
    }
    if (offset > std::numeric_limits<int>::max()) return false;
    b.gathered.resize(static_cast<std::size_t>(offset));
    b.closing_call.assign(local_.closing_call.begin(), local_.closing_call.begin() + static_cast<std::ptrdiff_t>(n));
  }
  MPI_Request request = MPI_REQUEST_NULL;
  if (PMPI_Igatherv(b.payload.data(), static_cast<int>(b.payload.size()), b.unit_type.type(), b.gathered.data(),
                    b.counts.data(), b.displacements.data(), b.unit_type.type(), 0, comm_, &request) != MPI_SUCCESS) {
    return false;
  }
  requests_.push_back(request);
  ++collectives_;

  // Collective 4: the bins' counts, then the per-segment reductions.
  const std::size_t total = bins_total + n;
  const std::size_t per_element = std::clamp<std::size_t>(total, 1, kMaxRecordsPerElement);
  const std::size_t elements = (total + per_element - 1) / per_element;
  b.records.assign(std::max<std::size_t>(1, elements) * per_element, kNeutralRecord);
  std::size_t first_bin = 0;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    for (std::size_t i = 0; i < local_.bins[m].size(); ++i)
      b.records[first_bin + to_global[m][i]].sum = local_.bins[m][i].count;
    first_bin += b.global_counts[m];
  }
  const BinTable& mpi_bins = local_.bins[index(Quantized::mpi_time)];
  const BinTable& wait_bins = local_.bins[index(Quantized::wait_time)];
  for (std::size_t s = 0; s < n; ++s) {
    SegmentRecord& record = b.records[bins_total + s];
    record.sum = signature_hash(local_.signatures[local_.signature_index[s]]);
    record.least_mpi_s = mpi_bins[local_.bin_index[index(Quantized::mpi_time)][s]].rep();
    record.least_mpi_rank = rank_;
    record.least_wait_s = wait_bins[local_.bin_index[index(Quantized::wait_time)][s]].rep();
    record.longest_index = to_global[index(Quantized::duration)][local_.bin_index[index(Quantized::duration)][s]];
  }
  if (root()) b.reduced.resize(b.records.size());
  g_records_per_element.store(per_element, std::memory_order_relaxed);
  b.record_type.emplace(per_element * sizeof(SegmentRecord));
  if (!b.record_type->valid() || PMPI_Ireduce(b.records.data(), root() ? b.reduced.data() : nullptr,
                                              static_cast<int>(b.records.size() / per_element), b.record_type->type(),
                                              b.record_op.op(), 0, comm_, &request) != MPI_SUCCESS) {
    return false;
  }
  requests_.push_back(request);
  ++collectives_;
  return true;
}

RunData FinalizeGather::assemble() {
  Buffers& b = *buffers_;
  const std::size_t n = b.segments;
  RunData run;
  std::vector<SegmentRecord>().swap(b.records);
  std::vector<std::uint64_t>().swap(b.payload);

  // The program-wide bins: the codes in order, with their summed counts.
  std::size_t first_bin = 0;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    BinTable& bins = run.global_bins[m];
    bins.reserve(b.global_counts[m]);
    const std::uint64_t* used = b.summary.used_codes[m];
    for (std::size_t w = 0; w < kCodeWords; ++w) {
      for (std::uint64_t bits = used[w]; bits != 0; bits &= bits - 1) {
        const auto code = static_cast<std::uint16_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        bins.push_back(code_bin(code, b.reduced[first_bin + bins.size()].sum, code_scale(static_cast<Quantized>(m))));
      }
    }
    first_bin += b.global_counts[m];
  }

  // Every rank's part of collective 3.
  std::vector<std::string> hosts;
  std::vector<std::string_view> environments;
  struct SchedulerFacts {
    double run_queue_delay_s, slept_s, own_sleep_s, injected_s;
  };
  std::vector<SchedulerFacts> scheduler;
  DetailRanks& detail = run.detail;
  detail.ranks = b.detail_ranks;
  detail.segments = n;
  for (auto& matrix : detail.global_index) matrix.resize(detail.ranks.size() * n);
  detail.signature_index.resize(detail.ranks.size() * n);
  std::size_t detail_row = 0;
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const RankSizes& sizes = b.all_sizes[i];
    PayloadReader reader(b.gathered.data() + b.displacements[i]);
    RankFacts facts;
    std::memcpy(&facts, reader.take(sizeof facts), sizeof facts);
    hosts.emplace_back(facts.host, strnlen(facts.host, kHostLength));
    scheduler.push_back({facts.run_queue_delay_s, facts.slept_s, facts.own_sleep_s, facts.injected_s});
    run.raw_totals.push_back(facts.raw_totals);
    run.raw_feature_totals.push_back(facts.raw_feature_totals);
    environments.emplace_back(reader.take(sizes.environment_bytes), sizes.environment_bytes);
    const char* injected = reader.take(sizes.injection_records * sizeof(tremor_inject_record));
    for (std::size_t k = 0; k < sizes.injection_records; ++k) {
      tremor_inject_record record;
      std::memcpy(&record, injected + k * sizeof record, sizeof record);
      run.injection.push_back(InjectionRecord{r, record.time_s,
                                              std::string(record.call, strnlen(record.call, sizeof record.call)),
                                              record.requested_us, record.spent_us, record.segment});
    }
    if (detail_row >= detail.ranks.size() || detail.ranks[detail_row] != r) continue;
    const char* indices = reader.take(kQuantizedCount * n * sizeof(std::uint16_t));
    for (std::size_t m = 0; m < kQuantizedCount; ++m) {
      std::memcpy(detail.global_index[m].data() + detail_row * n, indices + m * n * sizeof(std::uint16_t),
                  n * sizeof(std::uint16_t));
    }
    std::memcpy(detail.signature_index.data() + detail_row * n, reader.take(n * sizeof(std::uint32_t)),
                n * sizeof(std::uint32_t));
    detail.signature_offset.push_back(static_cast<std::uint32_t>(detail.signatures.size()));
    const char* signatures = reader.take(sizes.signatures * sizeof(FeatureVector));
    for (std::size_t k = 0; k < sizes.signatures; ++k) {
      FeatureVector features;
      std::memcpy(features.data(), signatures + k * sizeof features, sizeof features);
      detail.signatures.push_back(features);
    }
    ++detail_row;
  }
  run.meta.node_count = assign_nodes(hosts, run.ranks);
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    run.ranks[r].run_queue_delay_s = scheduler[r].run_queue_delay_s;
    run.ranks[r].slept_s = scheduler[r].slept_s;
    run.ranks[r].own_sleep_s = scheduler[r].own_sleep_s;
    run.ranks[r].injected_s = scheduler[r].injected_s;
  }
  assemble_gathered_environment(environments, &run);
  std::vector<std::uint64_t>().swap(b.gathered);

  // The program-wide segment table.
  SegmentReductions reductions;
  for (std::size_t s = 0; s < n; ++s) {
    const SegmentRecord& record = b.reduced[first_bin + s];
    reductions.longest_index.push_back(record.longest_index);
    reductions.least_mpi_s.push_back(record.least_mpi_s);
    reductions.least_mpi_rank.push_back(record.least_mpi_rank);
    reductions.least_wait_s.push_back(record.least_wait_s);
    reductions.signature_sum.push_back(record.sum);
  }
  std::vector<SegmentRecord>().swap(b.reduced);
  build_segment_table(run, reductions, b.closing_call);

  RunMetadata& meta = run.meta;
  meta.tremor_version = TREMOR_VERSION;
  meta.command_line = read_command_line();
  meta.mpi_flavour = TREMOR_MPI_FLAVOUR;
  meta.mpi_library_version = mpi_library_version();
  meta.world_size = size_;
  meta.counter_source = recorder_.counter_kind();
  meta.counter_events = recorder_.counter().events();
  meta.counter_unit = recorder_.counter().unit();
  meta.job_id = job_id();
  meta.job = job_record();
  meta.start_time_unix = recorder_.start_time_unix();
  meta.end_time_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  meta.run_time_s = b.summary.longest_elapsed_s;
  meta.configuration = effective_configuration(recorder_.config());
  for (std::string_view name : kCallNames) meta.call_names.emplace_back(name);
  return run;
}

}  // namespace tremor::interpose
