// Strings from a run file (command line, host names, environment values,
// partial reason) may hold bytes that are not UTF-8; every JSON output must
// still be valid JSON (tremor::json_text replaces them with U+FFFD): the
// report in memory, at MPI_Finalize (report_run), `tremor analyze --json` and
// `tremor compare --json`. nlohmann::json::parse rejects invalid UTF-8, so
// parsing is the check.
#include <hdf5.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "synthetic_run.hpp"
#include "temp_dir.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/compare.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/json_text.hpp"

namespace fs = std::filesystem;
using namespace tremor;
using namespace tremor::analysis;
using tremor::test::file_text;
using tremor::test::TempDir;

namespace {

const std::string kInvalid = "\xff\xfe\xc3(\xed\xa0\x80";  // a lone byte, a bad continuation, a surrogate
const std::string kReplacement = "\xef\xbf\xbd";        // U+FFFD

struct Outcome {
  int status = -1;
  std::string out;
};

Outcome run_tremor(const TempDir& dir, const std::string& arguments) {
  const fs::path out = dir.path() / "stdout.txt";
  const std::string command = std::string(TREMOR_CLI) + " " + arguments + " >" + out.string() + " 2>/dev/null";
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, file_text(out)};
}

// A run with invalid UTF-8 in every string a report can show.
RunData hostile_run(const std::string& variable_value) {
  tremor::test::SyntheticSpec spec;
  spec.groups = {tremor::test::SyntheticGroup{1e6, 0.010, 100}, tremor::test::SyntheticGroup{5e6, 0.025, 100}};
  spec.delays = {{10, 0.08, 3}, {51, 0.08, 3}, {120, 0.24, 1}};
  RunData run = tremor::test::synthetic_run(spec);
  run.meta.command_line = "./app --name=" + kInvalid;
  run.meta.partial = true;
  run.meta.partial_reason = "abort " + kInvalid;
  run.meta.counter_unit = "units" + kInvalid;
  for (RankInfo& rank : run.ranks) rank.hostname = "node" + kInvalid + std::to_string(rank.node_id);
  const auto governor = std::ranges::find(kNodeFacts, "governor") - kNodeFacts.begin();
  for (std::int32_t node = 0; node < run.meta.node_count; ++node) {
    NodeEnvironment facts{"node" + kInvalid + std::to_string(node), {}};
    facts.facts[static_cast<std::size_t>(governor)] = "powersave" + kInvalid;
    run.environment.nodes.push_back(facts);
    run.environment.variables.push_back({node, "OMP_PLACES", variable_value});
  }
  for (const RankInfo& rank : run.ranks)
    run.environment.ranks.push_back({rank.rank, rank.hostname, "0-1", "", ""});
  return run;
}

fs::path written(const TempDir& dir, const RunData& run, const std::string& name) {
  const fs::path path = dir.path() / name;
  std::string error;
  REQUIRE(write_run(path, run, error));
  return path;
}

}  // namespace

TEST_CASE("the JSON report of strings that are not UTF-8 is valid JSON", "[report][utf8]") {
  const RunData run = hostile_run("cores" + kInvalid);
  const RunAnalysis analysis = analyze_run(run, AnalysisParameters{});
  const nlohmann::json parsed = nlohmann::json::parse(json_text(report_json(run, analysis, "out" + kInvalid + ".h5")));
  const std::string reason = parsed["partial_reason"];
  CHECK(reason.starts_with("abort " + kReplacement));  // replaced, not dropped
  CHECK(reason.find('(') != std::string::npos);        // the valid bytes between kept
  CHECK(parsed["output_file"].get<std::string>().find(kReplacement) != std::string::npos);
  CHECK(parsed["counter_unit"].get<std::string>().starts_with("units" + kReplacement));
  // The indented form too, and valid UTF-8 is left alone.
  CHECK(nlohmann::json::parse(json_text(report_json(run, analysis, "caf\xc3\xa9"), 2))["output_file"] ==
        "caf\xc3\xa9");
}

TEST_CASE("report_run and tremor analyze --json write valid JSON for such a run", "[report][utf8][cli]") {
  TempDir dir;
  const RunData run = hostile_run("cores" + kInvalid);
  const fs::path h5 = written(dir, run, "run.h5");
  const fs::path json_path = dir.path() / "run.json";
  std::ofstream(json_path).close();  // the profiler reserves it empty
  Config config;
  config.report = "both";
  std::FILE* text_out = std::tmpfile();
  REQUIRE(text_out);
  report_run(run, config, h5, json_path, text_out);
  std::rewind(text_out);
  std::string printed;
  for (int ch; (ch = std::fgetc(text_out)) != EOF;) printed += static_cast<char>(ch);
  std::fclose(text_out);
  CHECK(printed.find("analysis failed") == std::string::npos);
  const nlohmann::json in_process = nlohmann::json::parse(file_text(json_path));
  CHECK(in_process["partial_reason"].get<std::string>().find(kReplacement) != std::string::npos);

  // The copy in the run file, /analysis/report_json.
  const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t dataset = H5Dopen2(file, "/analysis/report_json", H5P_DEFAULT);
  REQUIRE(dataset >= 0);
  const hid_t type = H5Dget_type(dataset);
  std::string stored(H5Tget_size(type), '\0');
  REQUIRE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored.data()) >= 0);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
  CHECK(nlohmann::json::parse(stored.substr(0, stored.find('\0'))) == in_process);

  const Outcome analyzed = run_tremor(dir, "analyze --json " + h5.string());
  REQUIRE(analyzed.status == 0);
  CHECK(nlohmann::json::parse(analyzed.out)["partial_reason"] == in_process["partial_reason"]);
  CHECK(run_tremor(dir, "analyze " + h5.string()).status == 0);
}

TEST_CASE("tremor compare --json of such runs is valid JSON", "[compare][utf8][cli]") {
  TempDir dir;
  const fs::path first = written(dir, hostile_run("cores" + kInvalid), "first.h5");
  const fs::path second = written(dir, hostile_run("threads" + kInvalid), "second.h5");
  const Outcome compared = run_tremor(dir, "compare --json " + first.string() + " " + second.string());
  REQUIRE(compared.status == 0);
  const nlohmann::json parsed = nlohmann::json::parse(compared.out);
  // The differing variable is listed with both values, each byte that is not UTF-8 replaced.
  CHECK(parsed.dump().find("threads" + kReplacement) != std::string::npos);
  const fs::path page = dir.path() / "page.html";
  CHECK(run_tremor(dir, "compare --html " + page.string() + " " + first.string() + " " + second.string()).status == 0);
  CHECK(fs::file_size(page) > 0);
}
