#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <cmath>

#include "sample_run.hpp"
#include "temp_dir.hpp"
#include "tremor/output_path.hpp"
#include "file_image.hpp"
#include "tremor/run_file.hpp"

namespace fs = std::filesystem;
using tremor::RunData;
using tremor::test::TempDir;  // a fresh directory per test case

namespace {

void require_equal(const RunData& a, const RunData& b) {
  CHECK(a.meta.tremor_version == b.meta.tremor_version);
  CHECK(a.meta.schema_version == b.meta.schema_version);
  CHECK(a.meta.command_line == b.meta.command_line);
  CHECK(a.meta.mpi_flavour == b.meta.mpi_flavour);
  CHECK(a.meta.mpi_library_version == b.meta.mpi_library_version);
  CHECK(a.meta.world_size == b.meta.world_size);
  CHECK(a.meta.node_count == b.meta.node_count);
  CHECK(a.meta.counter_source == b.meta.counter_source);
  CHECK(a.meta.counter_events == b.meta.counter_events);
  CHECK(a.meta.counter_unit == b.meta.counter_unit);
  CHECK(a.meta.job_id == b.meta.job_id);
  CHECK(a.meta.job == b.meta.job);
  CHECK(a.meta.start_time_unix == b.meta.start_time_unix);
  CHECK(a.meta.end_time_unix == b.meta.end_time_unix);
  CHECK(a.meta.run_time_s == b.meta.run_time_s);
  CHECK(a.meta.partial == b.meta.partial);
  CHECK(a.meta.partial_reason == b.meta.partial_reason);
  CHECK(a.meta.configuration == b.meta.configuration);
  CHECK(a.meta.call_names == b.meta.call_names);
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    CHECK(a.ranks[r].rank == b.ranks[r].rank);
    CHECK(a.ranks[r].hostname == b.ranks[r].hostname);
    CHECK(a.ranks[r].node_id == b.ranks[r].node_id);
    CHECK(a.ranks[r].local_rank == b.ranks[r].local_rank);
    CHECK((a.ranks[r].run_queue_delay_s == b.ranks[r].run_queue_delay_s ||
           (std::isnan(a.ranks[r].run_queue_delay_s) && std::isnan(b.ranks[r].run_queue_delay_s))));
    CHECK((a.ranks[r].slept_s == b.ranks[r].slept_s || (std::isnan(a.ranks[r].slept_s) && std::isnan(b.ranks[r].slept_s))));
    CHECK((a.ranks[r].own_sleep_s == b.ranks[r].own_sleep_s ||
           (std::isnan(a.ranks[r].own_sleep_s) && std::isnan(b.ranks[r].own_sleep_s))));
    CHECK((a.ranks[r].injected_s == b.ranks[r].injected_s ||
           (std::isnan(a.ranks[r].injected_s) && std::isnan(b.ranks[r].injected_s))));
  }
  for (std::size_t m = 0; m < tremor::kQuantizedCount; ++m) {
    REQUIRE(a.global_bins[m].size() == b.global_bins[m].size());
    for (std::size_t i = 0; i < a.global_bins[m].size(); ++i) {
      CHECK(a.global_bins[m][i].sum == b.global_bins[m][i].sum);
      CHECK(a.global_bins[m][i].count == b.global_bins[m][i].count);
      CHECK(a.global_bins[m][i].min == b.global_bins[m][i].min);
      CHECK(a.global_bins[m][i].max == b.global_bins[m][i].max);
      CHECK(a.global_bins[m][i].code == b.global_bins[m][i].code);
    }
    CHECK(a.detail.global_index[m] == b.detail.global_index[m]);
  }
  CHECK(a.segments.duration_s == b.segments.duration_s);
  CHECK(a.segments.duration_upper_s == b.segments.duration_upper_s);
  CHECK(a.segments.work == b.segments.work);
  CHECK(a.segments.mpi_time_s == b.segments.mpi_time_s);
  CHECK(a.segments.io_time_s == b.segments.io_time_s);
  CHECK(a.segments.signature == b.segments.signature);
  CHECK(a.segments.late_rank == b.segments.late_rank);
  CHECK(a.segments.late_wait_s == b.segments.late_wait_s);
  CHECK(a.segments.closing_call == b.segments.closing_call);
  CHECK(a.detail.ranks == b.detail.ranks);
  CHECK(a.detail.segments == b.detail.segments);
  CHECK(a.detail.signature_index == b.detail.signature_index);
  CHECK(a.detail.signatures == b.detail.signatures);
  CHECK(a.detail.signature_offset == b.detail.signature_offset);
  CHECK(a.raw_totals == b.raw_totals);
  CHECK(a.raw_feature_totals == b.raw_feature_totals);
  REQUIRE(a.injection.size() == b.injection.size());
  for (std::size_t i = 0; i < a.injection.size(); ++i) {
    CHECK(a.injection[i].rank == b.injection[i].rank);
    CHECK(a.injection[i].time_s == b.injection[i].time_s);
    CHECK(a.injection[i].call == b.injection[i].call);
    CHECK(a.injection[i].requested_us == b.injection[i].requested_us);
    CHECK(a.injection[i].spent_us == b.injection[i].spent_us);
    CHECK(a.injection[i].segment == b.injection[i].segment);
  }
}

// Changes one root attribute or removes one dataset with the raw C API, to
// make files this library would never write.
void set_schema_version(const fs::path& file, int version) {
  const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(id >= 0);
  const hid_t attribute = H5Aopen_by_name(id, "/", "schema_version", H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Awrite(attribute, H5T_NATIVE_INT, &version) >= 0);
  H5Aclose(attribute);
  H5Fclose(id);
}

void delete_link(const fs::path& file, const char* path) {
  const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(id >= 0);
  REQUIRE(H5Ldelete(id, path, H5P_DEFAULT) >= 0);
  H5Fclose(id);
}

}  // namespace

TEST_CASE("write_run -> read_run round trip preserves every field", "[hdf5]") {
  TempDir dir;
  for (auto [ranks, segments] : {std::pair{3, 7}, std::pair{4, 5000}, std::pair{3, 0}}) {
    INFO("ranks " << ranks << " segments " << segments);
    const RunData run = tremor::test::sample_run(static_cast<std::size_t>(ranks), static_cast<std::size_t>(segments));
    const fs::path file = dir.path() / ("run-" + std::to_string(ranks) + "-" + std::to_string(segments) + ".h5");
    std::string error;
    REQUIRE(tremor::write_run(file, run, error));
    const auto back = tremor::read_run(file, error);
    INFO(error);
    REQUIRE(back.has_value());
    require_equal(run, *back);
  }
}

// Fails a writer that drops a field, or a reader that reads an absent
// attribute as "" instead of unknown.
TEST_CASE("the job record round-trips, its unknown fields stay unknown", "[hdf5]") {
  TempDir dir;
  tremor::JobRecord full{"slurm", "cfd run", "alice", "node[01-04]", "0"};
  tremor::JobRecord some{"pbs", "solver", std::nullopt, std::nullopt, std::nullopt};
  int n = 0;
  for (const tremor::JobRecord& job : {full, some, tremor::JobRecord{}}) {
    RunData run = tremor::test::sample_run(3, 5);
    run.meta.job = job;
    const fs::path file = dir.path() / ("job-" + std::to_string(n++) + ".h5");
    std::string error;
    REQUIRE(tremor::write_run(file, run, error));
    const auto back = tremor::read_run(file, error);
    INFO(error);
    REQUIRE(back.has_value());
    CHECK(back->meta.job == job);
  }
}

TEST_CASE("validate_run names the dataset, index and rule of the first value out of range", "[hdf5]") {
  const RunData valid = tremor::test::sample_run(4, 20);
  std::string error;
  REQUIRE(tremor::validate_run(valid, error));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  using Edit = std::function<void(RunData&)>;
  const std::vector<std::pair<Edit, std::string>> cases = {
      {[](RunData& r) { r.meta.world_size = 0; }, "root attribute 'world_size' = 0: a run has at least 1 process"},
      {[](RunData& r) { r.meta.node_count = 5; }, "root attribute 'node_count' = 5: must be between 1 and world_size"},
      {[](RunData& r) { r.meta.run_time_s = -5.0; }, "root attribute 'run_time_s' = -5: must be finite and >= 0"},
      {[&](RunData& r) { r.meta.end_time_unix = inf; }, "root attribute 'end_time_unix' = inf"},
      {[](RunData& r) { r.ranks[2].rank = 7; }, "/ranks/rank[2] = 7: rank ids must be 0, 1, ... in order"},
      {[](RunData& r) { r.ranks[3].node_id = -1; }, "/ranks/node_id[3] = -1: must be in [0, node_count = 2)"},
      {[](RunData& r) { r.ranks[0].local_rank = 4; }, "/ranks/local_rank[0] = 4"},
      {[&](RunData& r) { r.ranks[0].slept_s = -inf; }, "/ranks/slept_s[0] = -inf"},
      {[](RunData& r) { r.ranks[1].own_sleep_s = -0.5; }, "/ranks/own_sleep_s[1] = -0.5"},
      {[](RunData& r) { r.ranks[3].injected_s = -0.25; }, "/ranks/injected_s[3] = -0.25"},
      {[&](RunData& r) { r.global_bins[1][2].min = nan; }, "/bins/mpi_time/value[2] = nan"},
      {[&](RunData& r) { r.segments.duration_s[7] = nan; }, "/segments/duration_s[7] = nan: must be finite and >= 0"},
      {[](RunData& r) { r.segments.work[3] = -1.0; }, "/segments/work[3] = -1"},
      {[&](RunData& r) { r.segments.late_wait_s[19] = inf; }, "/segments/late_wait_s[19] = inf"},
      {[](RunData& r) { r.segments.late_rank[5] = 4; },
       "/segments/late_rank[5] = 4: must be a rank in [0, world_size = 4)"},
      {[](RunData& r) { r.segments.closing_call[6] = 3; }, "/segments/closing_call[6] = 3: must index /call_names"},
      {[](RunData& r) {
         r.detail.ranks = {0, 2, 2};
       },
       "/detail/ranks[2] = 2: must be ascending ranks"},
      {[&](RunData& r) { r.raw_totals[1][0] = nan; }, "/totals/duration[1] = nan"},
      {[](RunData& r) { r.injection[1].rank = 9; }, "/injection/rank[1] = 9: must be in [0, world_size)"},
      {[&](RunData& r) { r.injection[0].spent_us = nan; }, "/injection/spent_us[0] = nan"},
      {[](RunData& r) { r.injection[0].segment = -2; }, "/injection/segment[0] = -2"},
  };
  for (const auto& [edit, expected] : cases) {
    RunData run = valid;
    edit(run);
    INFO(expected);
    CHECK_FALSE(tremor::validate_run(run, error));
    CHECK(error.find(expected) != std::string::npos);
  }
  // -1 is an unknown late rank (and NaN an unmeasured run-queue delay): valid.
  RunData unknown = valid;
  unknown.segments.late_rank[0] = -1;
  unknown.ranks[0].run_queue_delay_s = nan;
  CHECK(tremor::validate_run(unknown, error));
  // read_run applies the rules to what it reads.
  TempDir dir;
  const fs::path file = dir.path() / "nan.h5";
  RunData bad = valid;
  bad.segments.duration_s[7] = nan;
  REQUIRE(tremor::write_run(file, bad, error));
  CHECK_FALSE(tremor::read_run(file, error));
  CHECK(error.find("/segments/duration_s[7] = nan") != std::string::npos);
}

TEST_CASE("a schema-1 run file (before off_cpu_time) is still read, that metric as 0", "[hdf5]") {
  std::string error;
  using tremor::index;
  using tremor::Quantized;
  const std::optional<RunData> run = tremor::read_run(std::string(TREMOR_RUN_FILE_CORPUS) + "/tiny_real_run.h5", error);
  INFO(error);
  REQUIRE(run);
  CHECK(run->meta.schema_version == 1);
  const std::size_t off_cpu = index(Quantized::off_cpu_time);
  REQUIRE(run->global_bins[off_cpu].size() == 1);
  CHECK(run->global_bins[off_cpu][0].rep() == 0.0);
  CHECK(run->detail.global_index[off_cpu].size() == run->detail.ranks.size() * run->detail.segments);
  CHECK(std::ranges::all_of(run->detail.global_index[off_cpu], [](auto i) { return i == 0; }));
  for (const tremor::QuantizedValues& totals : run->raw_totals) CHECK(totals[off_cpu] == 0.0);
  // The metrics it has are read as written.
  CHECK(run->global_bins[index(Quantized::duration)].size() > 1);
}

// Schema 4 stores the kind as an enum; files of schemas 1 to 3 store its name
// and are still read, into the same enum.
TEST_CASE("the counter's kind is an HDF5 enum, and older files' names are read into it", "[hdf5]") {
  TempDir dir;
  for (const tremor::CounterKind kind : tremor::kCounterKinds) {
    const std::string name(tremor::to_string(kind));
    INFO(name);
    RunData run = tremor::test::sample_run(3, 7);
    run.meta.counter_source = kind;
    const fs::path file = dir.path() / (name + ".h5");
    std::string error;
    REQUIRE(tremor::write_run(file, run, error));
    {
      const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      REQUIRE(id >= 0);
      const hid_t attribute = H5Aopen_by_name(id, "/", "counter_source", H5P_DEFAULT, H5P_DEFAULT);
      const hid_t type = H5Aget_type(attribute);
      CHECK(H5Tget_class(type) == H5T_ENUM);
      std::uint8_t value = 0xff;
      REQUIRE(H5Aread(attribute, H5T_NATIVE_UINT8, &value) >= 0);
      CHECK(value == static_cast<std::uint8_t>(kind));  // the documented mapping (docs/schema.md)
      char member[32] = {};
      REQUIRE(H5Tenum_nameof(type, &value, member, sizeof member) >= 0);
      CHECK(std::string(member) == name);
      H5Tclose(type);
      H5Aclose(attribute);
      H5Fclose(id);
    }
    const auto back = tremor::read_run(file, error);
    INFO(error);
    REQUIRE(back);
    CHECK(back->meta.counter_source == kind);

    // The same file as schema 3 wrote it: the name as a fixed-length string.
    const auto store_name = [&](const std::string& text) {
      const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      REQUIRE(id >= 0);
      REQUIRE(H5Adelete(id, "counter_source") >= 0);
      const hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, text.size());
      const hid_t space = H5Screate(H5S_SCALAR);
      const hid_t attribute = H5Acreate2(id, "counter_source", type, space, H5P_DEFAULT, H5P_DEFAULT);
      REQUIRE(H5Awrite(attribute, type, text.data()) >= 0);
      H5Aclose(attribute);
      H5Sclose(space);
      H5Tclose(type);
      H5Fclose(id);
    };
    store_name(name);
    set_schema_version(file, 3);
    const auto old = tremor::read_run(file, error);
    INFO(error);
    REQUIRE(old);
    CHECK(old->meta.counter_source == kind);
    CHECK(old->meta.schema_version == 3);
    store_name("cputime");  // not a kind's name
    CHECK_FALSE(tremor::read_run(file, error));
    CHECK_THAT(error, Catch::Contains("counter_source 'cputime'"));
  }
  // Files written by earlier builds.
  std::string error;
  const auto corpus = [&](const char* name) {
    const auto run = tremor::read_run(std::string(TREMOR_RUN_FILE_CORPUS) + "/" + name, error);
    INFO(name << ": " << error);
    REQUIRE(run);
    return run->meta.counter_source;
  };
  CHECK(corpus("sample_run_all_groups.h5") == tremor::CounterKind::papi);
  CHECK(corpus("bsp_demo_two_ranks.h5") == tremor::CounterKind::thread_cputime);
}

TEST_CASE("write_run never overwrites and reports unusable targets", "[hdf5]") {
  TempDir dir;
  const fs::path file = dir.path() / "run.h5";
  const RunData run = tremor::test::sample_run();
  std::string error;
  REQUIRE(tremor::write_run(file, run, error));
  const auto size = fs::file_size(file);
  CHECK_FALSE(tremor::write_run(file, tremor::test::sample_run(1, 1), error));
  CHECK_THAT(error, Catch::Contains("already exists"));
  CHECK(fs::file_size(file) == size);
  CHECK(tremor::read_run(file, error).has_value());
  // A non-empty file is refused even in reservation mode.
  CHECK_FALSE(tremor::write_run(file, run, error, tremor::ExistingFile::fill_empty_reservation));

  error.clear();
  CHECK_FALSE(tremor::write_run(dir.path() / "no" / "such" / "dir.h5", run, error));
  CHECK_THAT(error, Catch::Contains("not writable"));

  // An empty reservation is filled.
  const fs::path reserved = dir.path() / "reserved.h5";
  std::ofstream(reserved).close();
  CHECK_FALSE(tremor::write_run(reserved, run, error));
  REQUIRE(tremor::write_run(reserved, run, error, tremor::ExistingFile::fill_empty_reservation));
  CHECK(tremor::read_run(reserved, error).has_value());

  // A reservation swapped for a symlink to someone else's empty file: the
  // link is never followed, the other file stays empty.
  const fs::path victim = dir.path() / "victim";
  std::ofstream(victim).close();
  const fs::path swapped = dir.path() / "swapped.h5";
  fs::create_symlink(victim, swapped);
  CHECK_FALSE(tremor::write_run(swapped, run, error, tremor::ExistingFile::fill_empty_reservation));
  CHECK(fs::file_size(victim) == 0);
}

TEST_CASE("RunFileAppender leaves the run file intact when the new copy cannot be written", "[hdf5]") {
  TempDir dir;
  const fs::path file = dir.path() / "run.h5";
  std::string error;
  REQUIRE(tremor::write_run(file, tremor::test::sample_run(), error));
  const auto before = fs::file_size(file);
  auto appender = tremor::RunFileAppender::open(file, error);
  REQUIRE(appender.has_value());
  REQUIRE(appender->write("/extra", "values", std::vector<double>(1000, 1.0)));
  // A full file system: the soft RLIMIT_FSIZE below the new copy's size
  // (SIGXFSZ blocked here and consumed after, as the profiler does).
  sigset_t xfsz;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  sigprocmask(SIG_BLOCK, &xfsz, nullptr);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = before / 2;
  setrlimit(RLIMIT_FSIZE, &small);
  const bool closed = appender->close();
  setrlimit(RLIMIT_FSIZE, &saved);
  const timespec no_wait{0, 0};
  sigtimedwait(&xfsz, nullptr, &no_wait);
  sigprocmask(SIG_UNBLOCK, &xfsz, nullptr);
  CHECK_FALSE(closed);
  CHECK_THAT(appender->error(), Catch::Contains("File too large"));
  CHECK(fs::file_size(file) == before);
  CHECK(tremor::read_run(file, error).has_value());
  for (const auto& entry : fs::directory_iterator(dir.path())) CHECK(entry.path() == file);  // no temporary left
}

TEST_CASE("read_run gives clear errors on bad files", "[hdf5]") {
  TempDir dir;
  std::string error;
  CHECK_FALSE(tremor::read_run(dir.path() / "missing.h5", error).has_value());
  CHECK_THAT(error, Catch::Contains("does not exist"));

  const fs::path text = dir.path() / "text.h5";
  std::ofstream(text) << "this is not HDF5\n";
  CHECK_FALSE(tremor::read_run(text, error).has_value());
  CHECK_THAT(error, Catch::Contains("not an HDF5 file"));

  const fs::path good = dir.path() / "good.h5";
  REQUIRE(tremor::write_run(good, tremor::test::sample_run(4, 5000), error));
  const auto size = fs::file_size(good);
  for (double fraction : {0.9, 0.5, 0.1, 0.01}) {
    INFO("truncated to " << fraction);
    const fs::path cut = dir.path() / ("cut-" + std::to_string(fraction) + ".h5");
    fs::copy_file(good, cut);
    fs::resize_file(cut, static_cast<std::uintmax_t>(static_cast<double>(size) * fraction));
    error.clear();
    CHECK_FALSE(tremor::read_run(cut, error).has_value());
    CHECK_FALSE(error.empty());
  }

  // Random byte flips: read_run must return (data or a reason), never crash.
  {
    std::ifstream in(good, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::mt19937 engine(17);
    std::uniform_int_distribution<std::size_t> offset(0, bytes.size() - 1);
    int detected = 0;
    constexpr int kTrials = 60;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<char> copy = bytes;
      for (int k = 0; k < 4; ++k) copy[offset(engine)] ^= static_cast<char>(1 + engine() % 255);
      const fs::path corrupted = dir.path() / ("corrupted-" + std::to_string(trial) + ".h5");
      std::ofstream(corrupted, std::ios::binary).write(copy.data(), static_cast<std::streamsize>(copy.size()));
      error.clear();
      if (!tremor::read_run(corrupted, error)) {
        ++detected;
        CHECK_FALSE(error.empty());
      }
    }
    // Flips in raw numbers cannot be detected; metadata is checksummed.
    CHECK(detected > kTrials / 2);
  }

  const fs::path wrong_version = dir.path() / "v99.h5";
  fs::copy_file(good, wrong_version);
  set_schema_version(wrong_version, 99);
  CHECK_FALSE(tremor::read_run(wrong_version, error).has_value());
  CHECK_THAT(error, Catch::Contains("unsupported schema version 99"));

  const fs::path no_version = dir.path() / "noversion.h5";
  {
    const hid_t id = H5Fcreate(no_version.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(id >= 0);
    H5Fclose(id);
  }
  CHECK_FALSE(tremor::read_run(no_version, error).has_value());
  CHECK_THAT(error, Catch::Contains("no 'schema_version'"));

  const fs::path missing = dir.path() / "missing-dataset.h5";
  fs::copy_file(good, missing);
  delete_link(missing, "/segments/work");
  CHECK_FALSE(tremor::read_run(missing, error).has_value());
  CHECK_THAT(error, Catch::Contains("missing dataset '/segments/work'"));

  RunData uneven = tremor::test::sample_run();
  uneven.segments.late_rank.pop_back();
  const fs::path inconsistent = dir.path() / "inconsistent.h5";
  REQUIRE(tremor::write_run(inconsistent, uneven, error));
  CHECK_FALSE(tremor::read_run(inconsistent, error).has_value());
  CHECK_THAT(error, Catch::Contains("inconsistent sizes") && Catch::Contains("late_rank"));

  RunData out_of_range = tremor::test::sample_run();
  out_of_range.detail.global_index[0][0] = 400;
  const fs::path bad_index = dir.path() / "bad-index.h5";
  REQUIRE(tremor::write_run(bad_index, out_of_range, error));
  CHECK_FALSE(tremor::read_run(bad_index, error).has_value());
  CHECK_THAT(error, Catch::Contains("bin index 400"));
}

TEST_CASE("RunFileAppender adds groups and refuses to replace", "[hdf5]") {
  TempDir dir;
  const fs::path file = dir.path() / "run.h5";
  std::string error;
  REQUIRE(tremor::write_run(file, tremor::test::sample_run(), error));
  {
    auto appender = tremor::RunFileAppender::open(file, error);
    REQUIRE(appender.has_value());
    const std::vector<double> values{1.5, 2.5};
    REQUIRE(appender->write("/analysis/groups", "impact_s", values));
    CHECK_FALSE(appender->write("/analysis/groups", "impact_s", values));
    CHECK_THAT(appender->error(), Catch::Contains("already exists"));
    REQUIRE(appender->set_number("/analysis", "interference_percent", 3.25));
    CHECK_FALSE(appender->set_number("/analysis", "interference_percent", 4.0));
    REQUIRE(appender->write_text("/analysis", "report_json", "{\"a\": 1}"));
    REQUIRE(appender->close());
  }
  // The run itself still reads back, and the new dataset holds what was written.
  REQUIRE(tremor::read_run(file, error).has_value());
  const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(id >= 0);
  double read[2] = {0, 0};
  const hid_t dataset = H5Dopen2(id, "/analysis/groups/impact_s", H5P_DEFAULT);
  REQUIRE(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, read) >= 0);
  H5Dclose(dataset);
  H5Fclose(id);
  CHECK(read[0] == 1.5);
  CHECK(read[1] == 2.5);

  CHECK_FALSE(tremor::RunFileAppender::open(dir.path() / "absent.h5", error).has_value());
}

TEST_CASE("reserve_output_files gives unique, exclusive names", "[output]") {
  TempDir dir;
  const std::vector<std::string_view> extensions{".h5", ".json"};
  std::string error;
  const auto first = tremor::reserve_output_files(dir.path(), "/usr/bin/my app", "job/7", extensions, error);
  REQUIRE(first.has_value());
  const std::string expected_stem = "my_app-job_7-" + std::to_string(::getpid()) + "-0";
  CHECK(first->stem == expected_stem);
  REQUIRE(first->paths.size() == 2);
  CHECK(first->paths[0] == dir.path() / (expected_stem + ".h5"));
  CHECK(fs::exists(first->paths[1]));

  // A stray .json with the next stem makes the next reservation skip that n.
  std::ofstream(dir.path() / ("my_app-job_7-" + std::to_string(::getpid()) + "-1.json")) << "{}";
  const auto second = tremor::reserve_output_files(dir.path(), "my app", "job/7", extensions, error);
  REQUIRE(second.has_value());
  CHECK(second->stem == "my_app-job_7-" + std::to_string(::getpid()) + "-2");
  CHECK_FALSE(fs::exists(dir.path() / ("my_app-job_7-" + std::to_string(::getpid()) + "-1.h5")));

  const auto timed = tremor::reserve_output_files(dir.path(), "app", "", extensions, error);
  REQUIRE(timed.has_value());
  CHECK(timed->stem.size() == std::string("app-yyyymmdd-hhmmss-").size() + std::to_string(::getpid()).size() + 2);

  std::string message;
  CHECK_FALSE(tremor::reserve_output_files(dir.path() / "absent", "app", "", extensions, message).has_value());
  CHECK_THAT(message, Catch::Contains("cannot create"));

  // The reserved .h5 is filled by write_run in reservation mode.
  REQUIRE(tremor::write_run(first->paths[0], tremor::test::sample_run(), error,
                            tremor::ExistingFile::fill_empty_reservation));
}

// HDF5's own lookup3 (exported by libhdf5, not in its public headers): the
// superblock repair of in-memory images must compute exactly the same sums.
extern "C" std::uint32_t H5_checksum_metadata(const void* data, std::size_t length, std::uint32_t initval);

TEST_CASE("the superblock checksum matches HDF5's", "[hdf5]") {
  std::vector<unsigned char> bytes(200);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  for (std::size_t length = 0; length <= bytes.size(); ++length) {
    INFO(length);
    CHECK(tremor::hdf5::metadata_checksum(bytes.data(), length) == H5_checksum_metadata(bytes.data(), length, 0));
  }
}
