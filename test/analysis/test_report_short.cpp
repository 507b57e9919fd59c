// The short text report (the default): a screenful however much the run has
// to say, an interval printed at a precision its width supports, the
// predictions' weak-scaling assumption, warnings by importance, and
// TREMOR_REPORT_DETAIL / tremor analyze --full for every table.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "synthetic_run.hpp"
#include "temp_dir.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/report.hpp"

namespace fs = std::filesystem;
using namespace tremor;
using namespace tremor::analysis;
using tremor::test::longest_line;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;
using tremor::test::file_text;
using tremor::test::TempDir;

namespace {

// The report without its "Data: PATH" line, which is printed whole (the path
// is what the reader copies) and may be longer than the screen is wide.
std::string without_data_line(const std::string& text, const std::string& path) {
  std::string rest = text;
  const std::string line = "Data: " + path + "\n";
  const std::size_t at = rest.find(line);
  if (at != std::string::npos) rest.erase(at, line.size());
  return rest;
}

// Lines as a terminal of 80 columns shows them: a longer line takes more.
std::size_t screen_lines(const std::string& text) {
  std::size_t lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t columns = 0;
    for (const char ch : line) columns += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
    lines += std::max<std::size_t>(1, (columns + 79) / 80);
  }
  return lines;
}

// Many usable groups whose heavy-tailed maxima make PWM and MOM disagree, and
// planted delays on rank 3: groups, warnings, stragglers and predictions galore.
RunData many_groups_run() {
  SyntheticSpec spec;
  spec.groups.clear();
  for (int g = 0; g < 40; ++g) spec.groups.push_back({1e6 * std::pow(1.2, g), 0.002 * (1 + g % 7), 30});
  for (int j = 0; j < 30; ++j) {
    const double p = (j * 17 % 30 + 0.5) / 30.0;
    spec.relative_pattern.push_back(0.02 * (1.0 - std::pow(-std::log(p), -0.8)) / -0.8);
  }
  for (std::size_t s = 5; s < 1200; s += 37) spec.delays.push_back({s, 0.004, 3});
  return tremor::test::synthetic_run(spec);
}

// Everything the short report can be asked to say at once: a partial run on
// oversubscribed nodes with slow ranks and nodes, imbalance, many episodes
// and a dozen long warnings.
RunAnalysis crowded(RunAnalysis analysis) {
  analysis.primary.taking_turns = true;
  analysis.primary.oversubscription_percent = 12.5;
  Diagnosis& d = analysis.diagnosis;
  d.available = true;
  for (int r = 0; r < 6; ++r)
    d.slow_ranks.push_back({r, r / 2, "a-rather-long-host-name-" + std::to_string(r), 3.0 - 0.1 * r, 0.3, 30, "slow"});
  for (int n = 0; n < 3; ++n) d.slow_nodes.push_back({n, "node-with-a-long-name-" + std::to_string(n), 2, 4.0, 0.4, 40, "slow"});
  for (int r = 0; r < 4; ++r) d.imbalanced_ranks.push_back({r, 0, "host", 0.25, 6.0, 0.5});
  for (int e = 0; e < 30; ++e) {
    Episode episode;
    episode.start_s = 10.0 * e;
    episode.end_s = 10.0 * e + 5.0;
    episode.start_unix = 1.7e9 + 10.0 * e;
    episode.lost_percent = 1.0 + e;
    episode.ranks = {1, 2, 3, 4, 5, 6, 7, 8};
    d.episodes.push_back(episode);
  }
  for (int w = 0; w < 12; ++w) {
    analysis.warnings.push_back({"made_up_" + std::to_string(w),
                                 "A long warning that goes on and on about something that matters a great deal, "
                                 "with many words, figures such as 12.5 % and 3.25 s, and advice that takes "
                                 "several lines to give in full; it ends here."});
  }
  return analysis;
}

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

Outcome run_tremor(const TempDir& dir, const std::string& environment, const std::string& arguments) {
  const fs::path out = dir.path() / "stdout.txt";
  const fs::path err = dir.path() / "stderr.txt";
  const std::string command = "env -u TREMOR_REPORT_DETAIL " + environment + " " + std::string(TREMOR_CLI) + " " +
                              arguments + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, file_text(out), file_text(err)};
}

std::string printed_by_report_run(const RunData& run, const Config& config) {
  std::FILE* text_out = std::tmpfile();
  REQUIRE(text_out);
  report_run(run, config, std::nullopt, std::nullopt, text_out);
  std::rewind(text_out);
  std::string printed;
  for (int ch; (ch = std::fgetc(text_out)) != EOF;) printed += static_cast<char>(ch);
  std::fclose(text_out);
  return printed;
}

// The full report's tables, none of which the short report has.
bool has_detail(const std::string& text) {
  return text.find("Groups: ") != std::string::npos && text.find("All methods") != std::string::npos &&
         text.find("Stragglers") != std::string::npos;
}

}  // namespace

TEST_CASE("short report: a screenful on a run with many groups, and on one with everything to say", "[report]") {
  const RunData run = many_groups_run();
  const RunAnalysis result = analyze_run(run, tremor::test::quick_parameters(100));
  REQUIRE(result.estimate_possible);
  REQUIRE(result.usable_groups >= 30);
  const std::string long_path = "/a/very/long/path/" + std::string(120, 'x') + ".h5";
  const std::string text = render_text_report(run, result, long_path);
  INFO(text);
  CHECK(screen_lines(text) <= kShortReportMaxLines);
  CHECK_THAT(text, Catch::Contains("Data: " + long_path + "\n"));
  CHECK(longest_line(without_data_line(text, long_path)) <= 80);
  CHECK_FALSE(has_detail(text));
  // The same run in full is longer than a screen: the bound above is no accident.
  const std::string full = render_text_report(run, result, long_path, ReportDetail::full_report);
  CHECK(screen_lines(full) > kShortReportMaxLines);
  CHECK(has_detail(full));

  // A partial run with an injector's truth line, too.
  RunData injected = run;
  injected.meta.partial = true;
  injected.meta.partial_reason = "finalize_unsaved";
  for (std::size_t r = 0; r < injected.ranks.size(); ++r) {
    injected.ranks[r].injected_s = 0.01 * static_cast<double>(r + 1);
    injected.ranks[r].run_queue_delay_s = 0.002;
  }
  // A path of one screen line here: a longer one takes the warnings' lines.
  const RunAnalysis everything = crowded(result);
  const std::string path = "/scratch/a-project/runs/" + std::string(40, 'x') + ".h5";
  const std::string busy = render_text_report(injected, everything, path);
  INFO(busy);
  CHECK(screen_lines(busy) <= kShortReportMaxLines);
  CHECK(longest_line(busy) <= 80);
  CHECK_THAT(busy, Catch::Contains("PARTIAL RUN"));
  CHECK_THAT(busy, Catch::Contains("Oversubscribed:"));
  CHECK_THAT(busy, Catch::Contains("Where: the others waited for rank 0"));
  CHECK_THAT(busy, Catch::Contains("Imbalance: rank 0 has 25 % more work"));
  CHECK_THAT(busy, Catch::Contains("When: 30 slow windows"));
  CHECK_THAT(busy, Catch::Contains("in the JSON report"));
}

TEST_CASE("the interval's ends differ at the precision they are printed with", "[report]") {
  CHECK(interval_text(3.31, 3.34) == "3.31-3.34 %");
  CHECK(interval_text(3.1, 3.6) == "3.1-3.6 %");
  CHECK(interval_text(14.71, 14.74) == "14.71-14.74 %");
  CHECK(interval_text(3.3001, 3.3012) == "3.300-3.301 %");
  CHECK(interval_text(3.3, 3.3) == "3.300 % (interval < 0.001 pp wide)");
  int decimals = 0;
  interval_text(0.041, 0.048, &decimals);
  CHECK(decimals == 2);
  // Every interval at least 0.001 pp wide prints two different ends.
  const std::regex ends(R"((\d+\.\d+)-(\d+\.\d+) %)");
  for (int i = 0; i < 2000; ++i) {
    const double low = 0.37 * i;
    const double high = low + 0.0011 + 0.0007 * (i % 13);
    const std::string text = interval_text(low, high);
    std::smatch match;
    INFO(text);
    REQUIRE(std::regex_search(text, match, ends));
    CHECK(match[1] != match[2]);
    CHECK(std::stod(match[1]) <= std::stod(match[2]));
  }

  // In both reports, beside the headline, with a sentence saying what it counts.
  const RunData run = many_groups_run();
  RunAnalysis result = analyze_run(run, tremor::test::quick_parameters(50));
  REQUIRE(result.estimate_possible);
  result.primary.lost_percent = 3.32;
  result.interference_percent = 3.32;
  result.primary.lost_percent_low = 3.31;
  result.primary.lost_percent_high = 3.34;
  for (const ReportDetail detail : {ReportDetail::short_report, ReportDetail::full_report}) {
    std::string text = render_text_report(run, result, "run.h5", detail);
    for (std::size_t at; (at = text.find("\n  ")) != std::string::npos;) text.replace(at, 3, " ");
    INFO(text);
    CHECK_THAT(text, Catch::Contains("3.32 % of this run was lost to interference"));
    CHECK_THAT(text, Catch::Contains("95 % interval 3.31-3.34 %: it counts the delays Tremor sees"));
    CHECK_THAT(text, Catch::Contains("the machine's own share; 95 % of such intervals hold the true lost share."));
    CHECK(text.find("3.3-3.3") == std::string::npos);
  }
}

TEST_CASE("predictions state their weak-scaling assumption in the text and the JSON", "[report]") {
  const RunData run = many_groups_run();
  const RunAnalysis result = analyze_run(run, tremor::test::quick_parameters(50));
  REQUIRE_FALSE(result.prediction_headline.method.empty());
  for (const ReportDetail detail : {ReportDetail::short_report, ReportDetail::full_report}) {
    std::string text = render_text_report(run, result, "run.h5", detail);
    for (std::size_t at; (at = text.find("\n  ")) != std::string::npos;) text.replace(at, 3, " ");
    INFO(text);
    CHECK_THAT(text, Catch::Contains("weak scaling"));
    CHECK_THAT(text, Catch::Contains("each process keeps its work"));
  }
  const nlohmann::json json = report_json(run, result, "run.h5");
  REQUIRE(json.contains("prediction_scaling"));
  CHECK(json["prediction_scaling"]["mode"] == "weak");
  CHECK_THAT(json["prediction_scaling"]["assumption"].get<std::string>(),
             Catch::Contains("each process keeps its work"));
}

TEST_CASE("the short report lists the most important warnings first and counts the rest", "[report]") {
  const RunData run = many_groups_run();
  RunAnalysis result = analyze_run(run, tremor::test::quick_parameters(50));
  result.warnings = {{"counter_fallback", "Counter note."},
                     {"fit_disagreement", "Fits disagree."},
                     {"environment_unpinned", "Ranks not pinned."},
                     {"low_coverage", "Little of the run assessed."},
                     {"environment_unknown", "Governor unknown."}};
  std::vector<std::string> order;
  for (const Warning* warning : warnings_by_importance(result)) order.push_back(warning->code);
  CHECK(order == std::vector<std::string>{"low_coverage", "environment_unpinned", "fit_disagreement",
                                          "counter_fallback", "environment_unknown"});
  const std::string text = render_text_report(run, result, "run.h5");
  INFO(text);
  const std::size_t coverage = text.find("- Little of the run assessed.");
  const std::size_t pinned = text.find("- Ranks not pinned.");
  const std::size_t fits = text.find("- Fits disagree.");
  REQUIRE(coverage != std::string::npos);
  REQUIRE(pinned != std::string::npos);
  REQUIRE(fits != std::string::npos);
  CHECK(coverage < pinned);
  CHECK(pinned < fits);
  CHECK(text.find("Counter note.") == std::string::npos);
  CHECK_THAT(text, Catch::Contains("2 more in the JSON report"));
  const std::string full = render_text_report(run, result, "run.h5", ReportDetail::full_report);
  CHECK_THAT(full, Catch::Contains("- Counter note."));
  CHECK(full.find("- Little of the run assessed.") < full.find("- Counter note."));
}

TEST_CASE("TREMOR_REPORT_DETAIL=full restores every table, and a bad value gets one message and the default",
          "[report][config]") {
  const RunData run = many_groups_run();
  const auto lookup_with = [](std::string value) {
    return [value](std::string_view name) -> std::optional<std::string> {
      if (name == "TREMOR_REPORT_DETAIL") return value;
      return std::nullopt;
    };
  };
  Config quick;
  quick.bootstrap_replicas = 50;

  const ConfigResult full = load_config(lookup_with("full"));
  CHECK(full.messages.empty());
  REQUIRE(full.config.report_detail == ReportDetail::full_report);
  Config full_quick = quick;
  full_quick.report_detail = full.config.report_detail;
  CHECK(has_detail(printed_by_report_run(run, full_quick)));

  const ConfigResult bad = load_config(lookup_with("verbose"));
  REQUIRE(bad.messages.size() == 1);
  CHECK_THAT(bad.messages[0], Catch::Contains("TREMOR_REPORT_DETAIL='verbose' must be short or full"));
  CHECK_THAT(bad.messages[0], Catch::Contains("using the default 'short'"));
  CHECK(bad.config.report_detail == ReportDetail::short_report);
  Config bad_quick = quick;
  bad_quick.report_detail = bad.config.report_detail;
  const std::string short_text = printed_by_report_run(run, bad_quick);
  CHECK_FALSE(has_detail(short_text));
  CHECK(screen_lines(short_text) <= kShortReportMaxLines);
  CHECK(load_config(lookup_with("short")).config.report_detail == ReportDetail::short_report);
  CHECK(default_config().report_detail == ReportDetail::short_report);

  SECTION("tremor analyze: --full, the setting, a bad setting") {
    TempDir dir;
    const fs::path h5 = dir.path() / "run.h5";
    std::string error;
    REQUIRE(write_run(h5, run, error));
    const std::string file = " --replicas 50 " + h5.string();
    const Outcome plain = run_tremor(dir, "", "analyze" + file);
    REQUIRE(plain.status == 0);
    CHECK_FALSE(has_detail(plain.out));
    CHECK(screen_lines(plain.out) <= kShortReportMaxLines);
    const Outcome flag = run_tremor(dir, "", "analyze --full" + file);
    REQUIRE(flag.status == 0);
    CHECK(has_detail(flag.out));
    const Outcome setting = run_tremor(dir, "TREMOR_REPORT_DETAIL=full", "analyze" + file);
    REQUIRE(setting.status == 0);
    CHECK(setting.out == flag.out);
    const Outcome wrong = run_tremor(dir, "TREMOR_REPORT_DETAIL=everything", "analyze" + file);
    REQUIRE(wrong.status == 0);
    CHECK(wrong.out == plain.out);
    CHECK(std::count(wrong.err.begin(), wrong.err.end(), '\n') == 1);
    CHECK_THAT(wrong.err, Catch::Contains("TREMOR_REPORT_DETAIL='everything' must be short or full"));
  }
}
