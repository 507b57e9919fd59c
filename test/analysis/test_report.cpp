// The report in its three forms, report_run, and `tremor analyze` / `tremor
// config` run as a real process against files written with write_run.
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "synthetic_run.hpp"
#include "temp_dir.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/report.hpp"

namespace fs = std::filesystem;
using namespace tremor;
using namespace tremor::analysis;
using tremor::test::file_text;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;
using tremor::test::TempDir;
using tremor::test::longest_line;

namespace {

struct Outcome {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the real `tremor` binary; stdout and stderr go to files in `dir`.
Outcome run_tremor(const TempDir& dir, const std::string& arguments) {
  const fs::path out = dir.path() / "stdout.txt";
  const fs::path err = dir.path() / "stderr.txt";
  const std::string command = std::string(TREMOR_CLI) + " " + arguments + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(command.c_str());
  Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = file_text(out);
  outcome.err = file_text(err);
  return outcome;
}

SyntheticSpec medium_spec() {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 100}, SyntheticGroup{5e6, 0.025, 100}};
  spec.delays = {{10, 0.08, 3}, {51, 0.08, 3}, {120, 0.24, 1}};
  return spec;
}

fs::path write_file(const TempDir& dir, const RunData& run, const std::string& name = "run.h5") {
  const fs::path path = dir.path() / name;
  std::string error;
  REQUIRE(write_run(path, run, error));
  return path;
}

}  // namespace

TEST_CASE("full text report: header first, key sentence, sections, <= 80 columns", "[report]") {
  const RunData run = tremor::test::synthetic_run(medium_spec());
  const RunAnalysis result = analyze_run(run, AnalysisParameters{});
  const std::string text = render_text_report(run, result, "/a/very/long/path/" + std::string(120, 'x') + ".h5",
                                              ReportDetail::full_report);
  CHECK(longest_line(text) <= 80);
  CHECK(text.rfind("=== Tremor", 0) == 0);
  CHECK_THAT(text, Catch::Contains("[YELLOW] MEDIUM"));
  // The figure has the decimals its interval needs to show two different ends.
  int decimals = 0;
  interval_text(result.primary.lost_percent_low, result.primary.lost_percent_high, &decimals);
  char sentence[128];
  std::snprintf(sentence, sizeof sentence, "%.*f %% of this run was lost to interference \u2014 MEDIUM, p(high) = %.2f",
                decimals, result.interference_percent, result.probability_high);
  CHECK_THAT(text, Catch::Contains(sentence));
  CHECK_THAT(text, Catch::Contains("Groups: 2 usable of 2"));
  CHECK_THAT(text, Catch::Contains("Stragglers"));
  CHECK_THAT(text, Catch::Contains("pwm-internode"));
  CHECK(text.find("nan") == std::string::npos);
  // The headline (one time per size, its method and why) leads the table of all methods.
  std::string unwrapped = text;  // wrapped lines continue after "\n  "
  for (std::size_t at; (at = unwrapped.find("\n  ")) != std::string::npos;) unwrapped.replace(at, 3, " ");
  const std::size_t headline = unwrapped.find("Predicted run time (95 % prediction interval for one run), method " +
                                              result.prediction_headline.method + ": ");
  REQUIRE(headline != std::string::npos);
  CHECK(headline < unwrapped.find("All methods (s)"));
}

TEST_CASE("a warning raised per group is one line per kind, its cases kept in the JSON and /analysis", "[report]") {
  // 12 groups of 40 heavy-tailed maxima (GEV k = -0.8 quantiles): MOM cannot
  // follow such a tail, so PWM and MOM disagree in every group.
  SyntheticSpec spec;
  spec.groups.clear();
  for (int g = 0; g < 12; ++g) spec.groups.push_back({1e6 * std::pow(1.5, g), 0.010 * (1 + g), 40});
  for (int j = 0; j < 40; ++j) {
    const double p = (j * 17 % 40 + 0.5) / 40.0;
    spec.relative_pattern.push_back(0.02 * (1.0 - std::pow(-std::log(p), -0.8)) / -0.8);
  }
  const RunData run = tremor::test::synthetic_run(spec);
  const RunAnalysis result = analyze_run(run, AnalysisParameters{});
  const std::size_t disagreeing = static_cast<std::size_t>(
      std::count_if(result.groups.begin(), result.groups.end(), [](const GroupResult& g) { return g.fits_disagree; }));
  REQUIRE(disagreeing > 4);
  const auto warning = std::find_if(result.warnings.begin(), result.warnings.end(),
                                    [](const Warning& w) { return w.code == "fit_disagreement"; });
  REQUIRE(warning != result.warnings.end());
  CHECK(std::count_if(result.warnings.begin(), result.warnings.end(),
                      [](const Warning& w) { return w.code == "fit_disagreement"; }) == 1);
  REQUIRE(warning->cases.size() == disagreeing);
  for (std::size_t i = 1; i < warning->cases.size(); ++i)
    CHECK(warning->cases[i - 1].severity >= warning->cases[i].severity);  // worst first
  CHECK_THAT(warning->message, Catch::Contains("disagree in " + std::to_string(disagreeing) + " groups"));
  CHECK_THAT(warning->message, Catch::Contains("Worst: " + warning->cases[0].subject + " ("));
  CHECK_THAT(warning->message, Catch::Contains("; " + std::to_string(disagreeing - 3) + " more."));

  const std::string text = render_text_report(run, result, "run.h5", ReportDetail::full_report);
  std::size_t lines = 0;
  for (std::size_t at = text.find("\n- PWM and MOM"); at != std::string::npos;
       at = text.find("\n- PWM and MOM", at + 1))
    ++lines;
  CHECK(lines == 1);
  CHECK(text.find("Group 0:") == std::string::npos);

  const nlohmann::json json = report_json(run, result, "run.h5");
  const auto entry = std::find_if(json["warnings"].begin(), json["warnings"].end(),
                                  [](const nlohmann::json& w) { return w["code"] == "fit_disagreement"; });
  REQUIRE(entry != json["warnings"].end());
  CHECK((*entry)["count"] == disagreeing);
  REQUIRE((*entry)["cases"].size() == disagreeing);
  const nlohmann::json& worst = (*entry)["cases"][0];
  CHECK(worst["subject"] == warning->cases[0].subject);
  for (const char* key : {"group", "segments", "k_pwm", "k_mom", "apart_percent_of_run"}) {
    INFO(key);
    CHECK(worst["values"].contains(key));
  }
  CHECK(result.groups[worst["values"]["group"].get<std::size_t>()].fits_disagree);
}

TEST_CASE("JSON report carries the documented fields", "[report]") {
  const RunData run = tremor::test::synthetic_run(medium_spec());
  const RunAnalysis result = analyze_run(run, AnalysisParameters{});
  const nlohmann::json json = report_json(run, result, "run.h5");
  for (const char* key : {"interference_percent", "continuous_interference_percent", "class", "probability_high",
                          "run_time_s", "segments", "groups", "interfered_segments", "stragglers", "predictions",
                          "warnings", "counter_source", "output_file", "parameters"}) {
    INFO(key);
    CHECK(json.contains(key));
  }
  CHECK(json["class"] == "medium");
  CHECK(json["segments"] == 200);
  CHECK(json["interfered_segments"] == nlohmann::json({10, 51, 120}));
  CHECK(json["stragglers"]["ranks"][0]["rank"] == 1);
  CHECK(json["parameters"]["seed"] == 20260101u);
  CHECK(json["groups"].size() == 2);
  CHECK(json["predictions"].size() == 15);  // 5 methods x 3 factors
  for (const auto& prediction : json["predictions"]) {
    for (const char* key : {"method", "factor", "processes", "median_s", "ci_low_s", "ci_high_s", "pi_low_s",
                            "pi_high_s", "variance_inflation"}) {
      CHECK(prediction.contains(key));
    }
    CHECK(prediction["variance_inflation"].get<double>() >= 1.0);
    CHECK(prediction["pi_low_s"].get<double>() < prediction["pi_high_s"].get<double>());
  }
  const nlohmann::json& headline = json["prediction_headline"];
  REQUIRE(headline.is_object());
  CHECK(headline["method"] == result.prediction_headline.method);
  CHECK(headline["predictions"].size() == 3);
  for (const auto& row : headline["predictions"]) CHECK(row["method"] == headline["method"]);
  for (const auto& warning : json["warnings"]) {
    CHECK(warning.contains("count"));
    CHECK(warning["cases"].is_array());
  }
}

TEST_CASE("JSON report carries the class limits and logistic its class and p(high) follow", "[report]") {
  const RunData run = tremor::test::synthetic_run(medium_spec());
  const RunAnalysis result = analyze_run(run, AnalysisParameters{});
  const nlohmann::json json = report_json(run, result, "run.h5");
  REQUIRE(json.contains("classification"));
  const nlohmann::json& limits = json["classification"];
  // docs/statistics.md#classification: low < 7.5 % <= medium <= 15 % < high; logistic 0.35, 11.25 %.
  CHECK(limits["medium_from_percent"] == 7.5);
  CHECK(limits["high_above_percent"] == 15.0);
  CHECK(limits["logistic_steepness"] == 0.35);
  CHECK(limits["logistic_midpoint_percent"] == 11.25);
  // A reader scoring the headline with them gets the report's own class and p(high).
  const double x = json["interference_percent"].get<double>();
  const double k = limits["logistic_steepness"].get<double>();
  const double x0 = limits["logistic_midpoint_percent"].get<double>();
  CHECK(json["probability_high"].get<double>() == Approx(1.0 / (1.0 + std::exp(-k * (x - x0)))).epsilon(1e-12));
  const char* expected = x < limits["medium_from_percent"].get<double>()  ? "low"
                         : x > limits["high_above_percent"].get<double>() ? "high"
                                                                            : "medium";
  CHECK(json["class"] == expected);
  // Present without an estimate too: the limits do not depend on the run.
  SyntheticSpec single;
  single.groups = {SyntheticGroup{1e6, 2.0, 1}};
  const RunData empty = tremor::test::synthetic_run(single);
  const nlohmann::json none = report_json(empty, analyze_run(empty, AnalysisParameters{}), "");
  CHECK(none["estimate_possible"] == false);
  CHECK(none["classification"] == limits);
}

TEST_CASE("report_run writes /analysis and the reserved JSON, tremor analyze agrees", "[report][cli]") {
  TempDir dir;
  const RunData run = tremor::test::synthetic_run(medium_spec());
  const fs::path h5 = write_file(dir, run);
  const fs::path json_path = dir.path() / "run.json";
  std::ofstream(json_path).close();  // the profiler reserves it empty
  Config config;
  config.report = "both";
  config.report_detail = ReportDetail::full_report;  // TREMOR_REPORT_DETAIL=full: every table
  std::FILE* text_out = std::tmpfile();
  REQUIRE(text_out);
  report_run(run, config, h5, json_path, text_out);
  std::rewind(text_out);
  std::string printed;
  for (int ch; (ch = std::fgetc(text_out)) != EOF;) printed += static_cast<char>(ch);
  std::fclose(text_out);
  CHECK_THAT(printed, Catch::Contains("of this run was lost to interference"));
  CHECK_THAT(printed, Catch::Contains("\"probability_high\""));
  CHECK_THAT(printed, Catch::Contains("Segment-time variance inflation"));

  const nlohmann::json in_process = nlohmann::json::parse(file_text(json_path));
  CHECK(in_process["class"] == "medium");

  // /analysis was added and the run file is still readable.
  const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(H5Lexists(file, "/analysis", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/segments", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/predictions", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/predictions/variance_inflation", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/predictions/pi_low_s", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/predictions/pi_high_s", H5P_DEFAULT) > 0);
  CHECK(H5Aexists_by_name(file, "/analysis/predictions", "headline_method", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/warnings/count", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/warnings/cases", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(file, "/analysis/report_json", H5P_DEFAULT) > 0);
  H5Fclose(file);

  const Outcome json_run = run_tremor(dir, "analyze --json " + h5.string());
  REQUIRE(json_run.status == 0);
  CHECK(nlohmann::json::parse(json_run.out) == in_process);
  CHECK(json_run.out == in_process.dump(2) + "\n");

  const Outcome text_run = run_tremor(dir, "analyze " + h5.string());
  CHECK(text_run.status == 0);
  CHECK(text_run.out == render_text_report(run, analyze_run(run, AnalysisParameters{}), h5.string()));
  const Outcome full_run = run_tremor(dir, "analyze --full " + h5.string());
  CHECK(full_run.status == 0);
  CHECK(full_run.out == render_text_report(run, analyze_run(run, AnalysisParameters{}), h5.string(),
                                           ReportDetail::full_report));

  SECTION("--fail-on: exit 3 when the class is reached") {
    CHECK(run_tremor(dir, "analyze --fail-on medium " + h5.string()).status == 3);
    CHECK(run_tremor(dir, "analyze --fail-on high " + h5.string()).status == 0);
  }
  SECTION("overrides change the analysis") {
    const Outcome strict =
        run_tremor(dir, "analyze --json --mad-factor 100 --scales 2 --replicas 100 --seed 9 " + h5.string());
    REQUIRE(strict.status == 0);
    const auto json = nlohmann::json::parse(strict.out);
    CHECK(json["parameters"]["mad_factor"] == 100.0);
    CHECK(json["parameters"]["seed"] == 9);
    const auto& group = json["groups"][0];
    CHECK(group["threshold_s"].get<double>() ==
          Approx(group["median_s"].get<double>() + 100.0 * group["mad_s"].get<double>()));
    const Outcome too_strict = run_tremor(dir, "analyze --json --min-group 150 " + h5.string());
    REQUIRE(too_strict.status == 0);
    CHECK(nlohmann::json::parse(too_strict.out)["estimate_possible"] == false);
    CHECK(json["predictions"].size() == 5);
  }
}

TEST_CASE("report_run on a run without estimate writes a valid /analysis", "[report]") {
  TempDir dir;
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 2.0, 1}};
  const RunData run = tremor::test::synthetic_run(spec);
  const fs::path h5 = write_file(dir, run);
  Config config;
  config.report = "text";
  std::FILE* text_out = std::tmpfile();
  report_run(run, config, h5, std::nullopt, text_out);
  std::rewind(text_out);
  std::string printed;
  for (int ch; (ch = std::fgetc(text_out)) != EOF;) printed += static_cast<char>(ch);
  std::fclose(text_out);
  CHECK_THAT(printed, Catch::Contains("no global collective"));
  CHECK_THAT(printed, !Catch::Contains("cannot add"));
  const Outcome offline = run_tremor(dir, "analyze --json " + h5.string());
  REQUIRE(offline.status == 0);
  CHECK(nlohmann::json::parse(offline.out)["estimate_possible"] == false);
}

TEST_CASE("report_run reports a missing JSON reservation in one line, never throws", "[report]") {
  TempDir dir;
  const RunData run = tremor::test::synthetic_run(medium_spec());
  Config config;
  config.report = "none";
  std::FILE* text_out = std::tmpfile();
  report_run(run, config, dir.path() / "absent" / "x.h5", dir.path() / "absent.json", text_out);
  std::rewind(text_out);
  std::string printed;
  for (int ch; (ch = std::fgetc(text_out)) != EOF;) printed += static_cast<char>(ch);
  std::fclose(text_out);
  CHECK_THAT(printed, Catch::Contains("cannot add /analysis"));
  CHECK_THAT(printed, Catch::Contains("cannot write the JSON report"));
  CHECK_FALSE(fs::exists(dir.path() / "absent.json"));  // no O_CREAT
}

TEST_CASE("tremor analyze rejects bad files with one message and a non-zero exit", "[cli]") {
  TempDir dir;
  SECTION("not HDF5") {
    std::ofstream(dir.path() / "text.h5") << "this is not HDF5\n";
    const Outcome o = run_tremor(dir, "analyze " + (dir.path() / "text.h5").string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("not an HDF5 file"));
    CHECK(o.out.empty());
  }
  SECTION("missing") {
    const Outcome o = run_tremor(dir, "analyze " + (dir.path() / "none.h5").string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("does not exist"));
  }
  SECTION("truncated") {
    const fs::path h5 = write_file(dir, tremor::test::synthetic_run(medium_spec()));
    fs::resize_file(h5, fs::file_size(h5) / 2);
    const Outcome o = run_tremor(dir, "analyze " + h5.string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("not a readable Tremor run file"));
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  }
  SECTION("HDF5 with another schema") {
    const fs::path h5 = dir.path() / "other.h5";
    const hid_t file = H5Fcreate(h5.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(file >= 0);
    const hid_t group = H5Gcreate2(file, "/something", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(group);
    H5Fclose(file);
    const Outcome o = run_tremor(dir, "analyze " + h5.string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("not a Tremor run file"));
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  }
}

TEST_CASE("tremor analyze --recover rejects unusable spill files with one message and exit 2", "[cli]") {
  TempDir dir;
  SECTION("no spill files under that stem") {
    const Outcome o = run_tremor(dir, "analyze --recover " + (dir.path() / "app-1-2-0").string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("no spill files"));
    CHECK(o.out.empty());
  }
  SECTION("garbage named like a spill file (found automatically by its extension)") {
    std::ofstream(dir.path() / "app-1-2-0.r0.spill") << "TREMSPIL but nothing after that makes sense, at all";
    const Outcome o = run_tremor(dir, "analyze " + (dir.path() / "app-1-2-0.r0.spill").string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("not a usable Tremor spill file"));
    CHECK(o.out.empty());
  }
  SECTION("empty file") {
    std::ofstream(dir.path() / "app-1-2-0.r0.spill").flush();
    const Outcome o = run_tremor(dir, "analyze --recover " + (dir.path() / "app-1-2-0").string());
    CHECK(o.status == 2);
    CHECK_THAT(o.err, Catch::Contains("too short"));
  }
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    CHECK(entry.path().extension() != ".h5");  // nothing written for unusable input
  }
}

TEST_CASE("tremor config lists every setting with default and meaning", "[cli]") {
  TempDir dir;
  const Outcome o = run_tremor(dir, "config");
  REQUIRE(o.status == 0);
  for (const Setting& setting : settings()) {
    CHECK_THAT(o.out,
               Catch::Contains(std::string(setting.name) + " (default: '" + default_text(setting) + "')"));
    CHECK_THAT(o.out, Catch::Contains(std::string(setting.meaning)));
  }
}

TEST_CASE("tremor config --markdown prints the README's settings tables", "[cli]") {
  TempDir dir;
  const Outcome profiler = run_tremor(dir, "config --markdown profiler");
  REQUIRE(profiler.status == 0);
  CHECK(profiler.out.rfind("| variable | default | meaning |\n|---|---|---|\n", 0) == 0);
  for (const Setting& setting : settings()) {
    const std::string default_cell =
        default_text(setting).empty() ? "*(empty)*" : "`" + default_text(setting) + "`";
    CHECK_THAT(profiler.out, Catch::Contains("| `" + std::string(setting.name) + "` | " + default_cell + " | " +
                                             std::string(setting.meaning) + " |\n"));
  }
  CHECK(std::count(profiler.out.begin(), profiler.out.end(), '\n') == static_cast<long>(settings().size() + 2));

  const Outcome injector = run_tremor(dir, "config --markdown injector");
  REQUIRE(injector.status == 0);
  CHECK_THAT(injector.out, Catch::Contains("| `TREMOR_INJECT_CALLS` | `p2p,coll,rma,mpiio,posix` | "));
  CHECK_THAT(injector.out, Catch::Contains("| `TREMOR_INJECT_PROBABILITY` | `0.01` | "));

  const Outcome bad = run_tremor(dir, "config --markdown readme");
  CHECK(bad.status != 0);
  CHECK(bad.out.empty());
}
