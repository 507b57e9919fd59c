// The crash-recovery spill: round trip, a torn or corrupt tail dropped, bad
// headers refused with a reason (never a crash), and the merge of one run's
// ranks into a partial RunData.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>

#include "temp_dir.hpp"
#include "tremor/spill.hpp"

namespace {

using tremor::SpillEnd;
using tremor::SpillHeader;
using tremor::SpillRecord;

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
  h.counter_source = "thread_cputime";
  h.counter_unit = "ns of CPU time";
  h.counter_events = {"cputime"};
  h.configuration = {{"TREMOR_DETAIL_RANKS", "256"}, {"TREMOR_OUTPUT_DIR", "/tmp/a=b"}};
  h.call_names = {"MPI_Barrier", "MPI_Allreduce", "MPI_Finalize"};
  h.start_time_unix = 1.7e9 + 0.125;
  h.seconds_per_tick = 1e-9 / 3.0;
  return h;
}

SpillRecord segment(std::uint64_t sequence, int rank) {
  SpillRecord r;
  r.tag = SpillRecord::kSegmentTag;
  r.closing_call = 1;
  r.sequence = sequence;
  r.values = {0.01 * static_cast<double>(1 + sequence % 3) + 0.001 * rank, 0.002, 0.0, 0.001 * (rank + 1),
              1e6 * static_cast<double>(1 + sequence % 2)};
  r.features[0] = 1;
  r.features[8] = 4096 + sequence % 2;
  tremor::seal(r);
  return r;
}

SpillRecord end_record(std::uint64_t count, SpillEnd reason) {
  SpillRecord r;
  r.tag = SpillRecord::kEndTag;
  r.end_reason = static_cast<std::uint16_t>(reason);
  r.sequence = count;
  tremor::seal(r);
  return r;
}

std::vector<char> spill_bytes(const SpillHeader& h, std::size_t segments, SpillEnd end = SpillEnd::none) {
  std::vector<char> bytes = tremor::encode_spill_header(h);
  auto append = [&bytes](const SpillRecord& r) {
    const auto* p = reinterpret_cast<const char*>(&r);
    bytes.insert(bytes.end(), p, p + sizeof r);
  };
  for (std::size_t s = 0; s < segments; ++s) append(segment(s, h.rank));
  if (end != SpillEnd::none) append(end_record(segments, end));
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
  CHECK(file.segments[5].values == segment(5, 1).values);
  CHECK(file.segments[5].features == segment(5, 1).features);
  CHECK(file.end == SpillEnd::abort);
  CHECK(file.dropped_bytes == 0);
}

TEST_CASE("a torn or corrupt tail is dropped, the records before it kept") {
  const SpillHeader h = header_for(0, 2);
  std::vector<char> bytes = spill_bytes(h, 6);
  SECTION("truncated last record") {
    bytes.resize(bytes.size() - 50);
    const auto file = parsed(bytes);
    CHECK(file.segments.size() == 5);
    CHECK(file.dropped_bytes == tremor::kSpillRecordBytes - 50);
    CHECK(file.dropped_reason == "truncated last record");
    CHECK(file.end == SpillEnd::none);
  }
  SECTION("one flipped byte in record 3") {
    const std::size_t header = tremor::encode_spill_header(h).size();
    bytes[header + 3 * tremor::kSpillRecordBytes + 40] ^= 0x10;
    const auto file = parsed(bytes);
    CHECK(file.segments.size() == 3);
    CHECK(file.dropped_bytes == 3 * tremor::kSpillRecordBytes);
    CHECK(file.dropped_reason.find("checksum") != std::string::npos);
  }
  SECTION("a record repeated (out of sequence)") {
    const std::size_t header = tremor::encode_spill_header(h).size();
    std::memcpy(bytes.data() + header + 4 * tremor::kSpillRecordBytes,
                bytes.data() + header + 2 * tremor::kSpillRecordBytes, tremor::kSpillRecordBytes);
    const auto file = parsed(bytes);
    CHECK(file.segments.size() == 4);
    CHECK(file.dropped_reason.find("sequence") != std::string::npos);
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
  CHECK(run.meta.run_time_s == Approx(expected_time));
  REQUIRE(run.raw_totals.size() == 3);
  CHECK(run.raw_totals[1][4] == Approx(1e6 * (1 + 2 + 1 + 2 + 1 + 2)));
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
