// The crash-recovery spill: round trip, a torn or corrupt tail dropped, bad
// headers refused with a reason (never a crash), and the merge of one run's
// ranks into a partial RunData.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>

#include "temp_dir.hpp"
#include "tremor/log_code.hpp"
#include "tremor/segment_store.hpp"
#include "tremor/spill.hpp"

namespace {

using tremor::SpillEnd;
using tremor::SpillHeader;

SpillHeader header_for(int rank, int world, std::uint64_t run_id = 42) {
  SpillHeader h;
  h.run_id = run_id;
  h.rank = rank;
  h.world_size = world;
  h.pid = 1000 + rank;
  h.host = rank < 2 ? "node-a" : "node-b";
  h.program = "bsp_demo";
  h.command_line = "./bsp_demo -n 10\n-q";  // a newline must not break the header
  h.tremor_version = "0.1.0";
  h.mpi_flavour = "mpich";
  h.counter_source = tremor::CounterKind::thread_cputime;
  h.counter_unit = "ns of CPU time";
  h.counter_events = {"cputime"};
  h.configuration = {{"TREMOR_DETAIL_RANKS", "256"}, {"TREMOR_OUTPUT_DIR", "/tmp/a=b"}};
  h.call_names = {"MPI_Barrier", "MPI_Allreduce", "MPI_Finalize"};
  h.start_time_unix = 1.7e9 + 0.125;
  h.seconds_per_tick = 1e-9 / 3.0;
  return h;
}

// Segment `sequence` of `rank` as the recorder would store it: values, and
// the features and call of its kind (two kinds, alternating).
struct TestSegment {
  tremor::QuantizedValues values;
  tremor::FeatureVector features;
  std::uint16_t closing_call;
};
TestSegment segment(std::uint64_t sequence, int rank) {
  TestSegment t{};
  t.closing_call = 1;
  t.values = {0.01 * static_cast<double>(1 + sequence % 3) + 0.001 * rank, 0.002, 0.0, 0.001 * (rank + 1),
              1e6 * static_cast<double>(1 + sequence % 2)};
  t.features[0] = 1;
  t.features[8] = 4096 + sequence % 2;
  return t;
}

// The values a spill gives back: through the log code.
tremor::QuantizedValues coded(const tremor::QuantizedValues& values) {
  tremor::QuantizedValues out{};
  for (std::size_t m = 0; m < tremor::kQuantizedCount; ++m) {
    const auto scale = tremor::code_scale(static_cast<tremor::Quantized>(m));
    out[m] = tremor::decode_value(tremor::encode_value(values[m], scale), scale);
  }
  return out;
}

// Header, then one block per segment (as with TREMOR_SPILL_INTERVAL=0);
// `block_start` receives each block's offset.
std::vector<char> spill_bytes(const SpillHeader& h, std::size_t segments, SpillEnd end = SpillEnd::none,
                              std::vector<std::size_t>* block_start = nullptr) {
  std::vector<char> bytes = tremor::encode_spill_header(h);
  tremor::SegmentStore store;
  std::size_t kinds_written = 0;
  for (std::size_t s = 0; s < segments; ++s) {
    const TestSegment t = segment(s, h.rank);
    REQUIRE(store.append(t.values, t.features, t.closing_call));
    std::vector<tremor::SpillKindRecord> kinds;
    for (; kinds_written < store.kind_count(); ++kinds_written)
      kinds.push_back({store.kind_features(kinds_written), store.kind_closing_call(kinds_written), {}});
    const tremor::SpillSegmentRecord record{store.codes(s), store.kind_of(s)};
    if (block_start) block_start->push_back(bytes.size());
    tremor::append_spill_block(bytes, s, kinds, std::span(&record, 1));
  }
  if (end != SpillEnd::none) tremor::append_spill_end(bytes, segments, end);
  return bytes;
}

tremor::SpillFile parsed(const std::vector<char>& bytes) {
  std::string error;
  auto file = tremor::parse_spill(bytes, error);
  INFO(error);
  REQUIRE(file);
  return *file;
}

}  // namespace

TEST_CASE("spill round trip keeps the header and every record") {
  const SpillHeader h = header_for(1, 4);
  const auto file = parsed(spill_bytes(h, 7, SpillEnd::abort));
  CHECK(file.header.run_id == h.run_id);
  CHECK(file.header.rank == 1);
  CHECK(file.header.world_size == 4);
  CHECK(file.header.host == h.host);
  CHECK(file.header.command_line == "./bsp_demo -n 10 -q");
  CHECK(file.header.configuration == h.configuration);
  CHECK(file.header.call_names == h.call_names);
  CHECK(file.header.counter_events == h.counter_events);
  CHECK(file.header.start_time_unix == h.start_time_unix);
  CHECK(file.header.seconds_per_tick == h.seconds_per_tick);
  REQUIRE(file.segments.size() == 7);
  CHECK(file.segments[5].values == coded(segment(5, 1).values));
  CHECK(file.segments[5].features == segment(5, 1).features);
  CHECK(file.segments[5].closing_call == 1);
  CHECK(file.segments[5].sequence == 5);
  CHECK(file.end == SpillEnd::abort);
  CHECK(file.dropped_bytes == 0);
}

TEST_CASE("a torn or corrupt tail is dropped, the blocks before it kept") {
  const SpillHeader h = header_for(0, 2);
  std::vector<std::size_t> block;
  std::vector<char> bytes = spill_bytes(h, 6, SpillEnd::none, &block);
  SECTION("truncated last block") {
    bytes.resize(bytes.size() - 5);
    const auto file = parsed(bytes);
    CHECK(file.segments.size() == 5);
    CHECK(file.dropped_bytes == bytes.size() - block[5]);
    CHECK(file.dropped_reason == "truncated last block");
    CHECK(file.end == SpillEnd::none);
  }
  SECTION("one flipped byte in block 3") {
    bytes[block[3] + sizeof(tremor::SpillBlockHeader) + 3] ^= 0x10;
    const auto file = parsed(bytes);
    CHECK(file.segments.size() == 3);
    CHECK(file.dropped_bytes == bytes.size() - block[3]);
    CHECK(file.dropped_reason.find("checksum") != std::string::npos);
  }
  SECTION("a block repeated (out of sequence)") {
    std::memcpy(bytes.data() + block[4], bytes.data() + block[2], block[3] - block[2]);
    const auto file = parsed(bytes);
    CHECK(file.segments.size() == 4);
    CHECK(file.dropped_reason.find("sequence") != std::string::npos);
  }
  SECTION("a segment naming a kind no block gave") {
    std::vector<char> more = tremor::encode_spill_header(h);
    const tremor::SpillSegmentRecord record{{1, 2, 3, 4, 5, 6}, 0};
    tremor::append_spill_block(more, 0, {}, std::span(&record, 1));
    const auto file = parsed(more);
    CHECK(file.segments.empty());
    CHECK(file.dropped_reason.find("unknown kind") != std::string::npos);
  }
}

// `tremor watch` reads a growing file in pieces: the header, then whatever
// was appended since the last look, a torn block kept for the next look.
// Read so at every split point, the file equals parse_spill's. Fails a reader
// that loses a block cut by a split, forgets the kinds of earlier pieces, or
// moves its cursor past a torn block.
TEST_CASE("a spill read in two pieces equals the file read at once") {
  const SpillHeader h = header_for(1, 2);
  std::vector<std::size_t> block;
  const std::vector<char> bytes = spill_bytes(h, 5, SpillEnd::exit_without_finalize, &block);
  const tremor::SpillFile whole = parsed(bytes);
  for (std::size_t split = block[0]; split <= bytes.size(); ++split) {
    INFO("split at byte " << split);
    tremor::SpillCursor cursor;
    std::string error;
    const std::span<const char> all(bytes);
    std::optional<tremor::SpillFile> file = tremor::parse_spill_header(all.first(split), cursor, error);
    REQUIRE(file);
    tremor::take_spill_blocks(all.subspan(cursor.offset, split - cursor.offset), *file, cursor);
    CHECK(cursor.offset <= split);
    if (file->end == SpillEnd::none) tremor::take_spill_blocks(all.subspan(cursor.offset), *file, cursor);
    CHECK(cursor.offset == bytes.size());
    REQUIRE(file->segments.size() == whole.segments.size());
    for (std::size_t s = 0; s < whole.segments.size(); ++s) {
      CHECK(file->segments[s].values == whole.segments[s].values);
      CHECK(file->segments[s].features == whole.segments[s].features);
      CHECK(file->segments[s].sequence == s);
    }
    CHECK(file->end == whole.end);
  }
}

TEST_CASE("bad spill headers are refused with a reason") {
  const SpillHeader h = header_for(0, 2);
  const std::vector<char> good = spill_bytes(h, 2);
  std::string error;
  auto refused = [&error](const std::vector<char>& bytes) {
    error.clear();
    const bool refused_it = !tremor::parse_spill(bytes, error);
    return refused_it && !error.empty();
  };
  CHECK(refused({}));
  CHECK(refused(std::vector<char>(good.begin(), good.begin() + 20)));
  CHECK(error.find("too short") != std::string::npos);
  auto changed = [&good](std::size_t at, char value) {
    std::vector<char> bytes = good;
    bytes[at] = value;
    return bytes;
  };
  CHECK(refused(changed(0, 'X')));
  CHECK(error.find("not a Tremor spill") != std::string::npos);
  CHECK(refused(changed(8, 9)));  // format version
  CHECK(error.find("version") != std::string::npos);
  CHECK(refused(changed(20, 9)));  // quantized metric count
  CHECK(error.find("other metrics") != std::string::npos);
  CHECK(refused(changed(40, '#')));  // inside the header text
  CHECK(error.find("corrupt") != std::string::npos);
  CHECK(refused(std::vector<char>(good.begin(), good.begin() + 60)));
  CHECK(error.find("truncated") != std::string::npos);
  CHECK(refused(spill_bytes(header_for(3, 2), 1)));
  CHECK(error.find("outside") != std::string::npos);
  SpillHeader unknown_counter = header_for(0, 2);  // a kind this build does not know is written as "unknown"
  unknown_counter.counter_source = static_cast<tremor::CounterKind>(7);
  CHECK(refused(spill_bytes(unknown_counter, 1)));
  CHECK(error.find("counter_source 'unknown'") != std::string::npos);

  // Random bytes and random cuts of a good file: refused or parsed, never a crash.
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<char> bytes = good;
    bytes.resize(random() % (good.size() + 1));
    for (int flips = static_cast<int>(random() % 4); flips > 0 && !bytes.empty(); --flips) {
      bytes[random() % bytes.size()] = static_cast<char>(random());
    }
    std::string ignored;
    const auto file = tremor::parse_spill(bytes, ignored);
    if (file) CHECK(file->segments.size() <= 2);
  }
}

TEST_CASE("recovery merges ranks over the common prefix and marks the run partial") {
  std::vector<tremor::SpillFile> files;
  files.push_back(parsed(spill_bytes(header_for(0, 3), 9)));                   // killed
  files.push_back(parsed(spill_bytes(header_for(1, 3), 6, SpillEnd::abort)));  // called MPI_Abort
  files.push_back(parsed(spill_bytes(header_for(2, 3), 7)));
  std::string error;
  const auto recovered = tremor::recover_run(files, error);
  INFO(error);
  REQUIRE(recovered);
  const tremor::RunData& run = recovered->run;
  CHECK(run.meta.partial);
  CHECK(run.meta.partial_reason == "abort");
  CHECK(run.meta.world_size == 3);
  CHECK(run.meta.node_count == 2);
  CHECK(run.meta.call_names == files[0].header.call_names);
  REQUIRE(run.segments.size() == 6);
  REQUIRE(run.ranks.size() == 3);
  CHECK(run.ranks[2].hostname == "node-b");
  CHECK(run.detail.ranks == std::vector<std::int32_t>{0, 1, 2});
  for (std::size_t s = 0; s < 6; ++s) {
    // Values within the log code's 1/2048. The longest rank
    // is rank 2 (+0.002 s); the late one has the least MPI time (all equal:
    // the lowest rank, as MPI_MINLOC picks).
    CHECK(run.segments.duration_s[s] == Approx(segment(s, 2).values[0]).epsilon(1.0 / 2048));
    CHECK(run.segments.late_rank[s] == 0);
    CHECK(run.segments.late_wait_s[s] == Approx(0.001).epsilon(1.0 / 2048));
    CHECK(run.segments.closing_call[s] == 1);
  }
  double expected_time = 0.0;
  for (std::size_t s = 0; s < 6; ++s) expected_time += segment(s, 2).values[0];
  CHECK(run.meta.run_time_s == Approx(expected_time).epsilon(1.0 / 2048));  // the spill keeps log codes
  REQUIRE(run.raw_totals.size() == 3);
  CHECK(run.raw_totals[1][4] == Approx(1e6 * (1 + 2 + 1 + 2 + 1 + 2)).epsilon(1.0 / 2048));
  bool prefix_noted = false;
  for (const auto& note : recovered->notes) prefix_noted |= note.find("between 6 and 9") != std::string::npos;
  CHECK(prefix_noted);

  SECTION("no end record anywhere: reason unknown") {
    files[1] = parsed(spill_bytes(header_for(1, 3), 6));
    const auto unknown = tremor::recover_run(files, error);
    REQUIRE(unknown);
    CHECK(unknown->run.meta.partial_reason == "unknown");
  }
}

TEST_CASE("recovery refuses files that do not make one run") {
  std::string error;
  auto fails = [&error](std::vector<tremor::SpillFile> files, const char* expected) {
    error.clear();
    const bool failed = !tremor::recover_run(files, error);
    INFO(error);
    CHECK(error.find(expected) != std::string::npos);
    return failed;
  };
  CHECK(fails({}, "no spill files"));
  CHECK(fails({parsed(spill_bytes(header_for(0, 2), 3)), parsed(spill_bytes(header_for(1, 2, 43), 3))}, "another run"));
  CHECK(fails({parsed(spill_bytes(header_for(0, 3), 3)), parsed(spill_bytes(header_for(2, 3), 3))}, "rank(s) 1 of 3"));
  // A header's world size sizes nothing (fuzz regression spill/world_size_two_billion).
  CHECK(fails({parsed(spill_bytes(header_for(3, 2000000000), 3))},
              "rank(s) 0, 1, 2, 4, 5, 6, 7, 8 and 1999999991 more of 2000000000"));
  CHECK(fails({parsed(spill_bytes(header_for(0, 2), 3)), parsed(spill_bytes(header_for(0, 2), 3))}, "appears twice"));
  CHECK(fails({parsed(spill_bytes(header_for(0, 2), 3)), parsed(spill_bytes(header_for(1, 2), 0))},
              "nothing to analyse"));
  SpillHeader few_calls = header_for(0, 1);
  few_calls.call_names = {"MPI_Barrier"};
  CHECK(fails({parsed(spill_bytes(few_calls, 2))}, "closing call"));
}

TEST_CASE("spill files are found from a stem or any one of them") {
  const tremor::test::TempDir scratch;
  const std::filesystem::path& dir = scratch.path();
  for (const char* name :
       {"app-1-2-0.r0.spill", "app-1-2-0.r1.spill", "app-1-2-0.r10.spill", "app-1-2-1.r0.spill", "app-1-2-0.h5"}) {
    std::ofstream(dir / name) << "x";
  }
  std::string error;
  const auto by_stem = tremor::find_spill_files({(dir / "app-1-2-0").string()}, error);
  REQUIRE(by_stem.size() == 3);
  CHECK(by_stem[0].filename() == "app-1-2-0.r0.spill");
  CHECK(by_stem[2].filename() == "app-1-2-0.r10.spill");  // by rank number, not by text
  CHECK(tremor::find_spill_files({(dir / "app-1-2-0.r1.spill").string()}, error) == by_stem);
  CHECK(tremor::find_spill_files({(dir / "nothing").string()}, error).empty());
  CHECK(error.find("no spill files") != std::string::npos);
  std::string read_error;
  CHECK_FALSE(tremor::read_spill(dir / "app-1-2-0.r0.spill", read_error));
  CHECK(read_error.find("too short") != std::string::npos);
}

TEST_CASE("recovery carries each rank's environment from its spill header") {
  std::vector<tremor::SpillFile> files;
  std::string error;
  for (int rank = 0; rank < 3; ++rank) files.push_back(parsed(spill_bytes(header_for(rank, 3), 4)));
  const auto without = tremor::recover_run(files, error);
  REQUIRE(without);
  CHECK_FALSE(without->run.environment.recorded());  // spills of builds without /environment

  files.clear();
  for (int rank = 0; rank < 3; ++rank) {
    SpillHeader h = header_for(rank, 3);  // ranks 0 and 1 on node-a, 2 on node-b
    tremor::ProcessEnvironment env;
    if (rank != 1) env.node = {{"governor", "powersave"}, {"mpi_library_version", "MPICH\nline 2"}};
    env.affinity = std::to_string(rank);
    env.variables = {{"OMP_NUM_THREADS", std::to_string(rank + 1)}};
    h.environment = tremor::encode_environment(env);
    files.push_back(parsed(spill_bytes(h, 4)));
  }
  const auto with = tremor::recover_run(files, error);
  INFO(error);
  REQUIRE(with);
  const tremor::RunEnvironment& env = with->run.environment;
  REQUIRE(env.nodes.size() == 2);
  CHECK(env.nodes[1].hostname == "node-b");
  CHECK(env.nodes[0].fact("governor") == "powersave");
  CHECK(env.nodes[0].fact("mpi_library_version") == "MPICH\nline 2");
  REQUIRE(env.ranks.size() == 3);
  CHECK(env.ranks[2].affinity == "2");
  REQUIRE(env.differences.size() == 1);
  CHECK(env.differences[0].rank == 1);
  CHECK(env.differences[0].value == "2");
}

// Fails a header that drops a job line, reads an absent one as "", or a
// recovery that leaves the job out of the recovered run.
TEST_CASE("the job record goes through the spill header into the recovered run") {
  const tremor::JobRecord job{"slurm", "cfd", "alice", "node[01-02]", std::nullopt};
  std::vector<tremor::SpillFile> files;
  for (int rank = 0; rank < 2; ++rank) {
    SpillHeader h = header_for(rank, 2);
    h.job_id = "77";
    h.job = job;
    files.push_back(parsed(spill_bytes(h, 6)));
  }
  CHECK(files[0].header.job == job);
  CHECK(parsed(spill_bytes(header_for(0, 1), 2)).header.job == tremor::JobRecord{});
  std::string error;
  const auto recovered = tremor::recover_run(files, error);
  INFO(error);
  REQUIRE(recovered);
  CHECK(recovered->run.meta.job_id == "77");
  CHECK(recovered->run.meta.job == job);
}
