// The output interface (formatters.hpp): every registered format renders and
// is found by its name, a list picks formats in order, and TREMOR_REPORT /
// --format take lists with the old values (text, json, both, none) kept. Bad
// names get one message and the default, never a lost report.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <set>

#include "synthetic_run.hpp"
#include "temp_dir.hpp"
#include "test_helpers.hpp"
#include "tremor/analysis/compare.hpp"
#include "tremor/analysis/report.hpp"

namespace fs = std::filesystem;
using namespace tremor;
using namespace tremor::analysis;
using tremor::test::file_text;
using tremor::test::SyntheticGroup;
using tremor::test::SyntheticSpec;
using tremor::test::TempDir;

namespace {

RunData small_run() {
  SyntheticSpec spec;
  spec.groups = {SyntheticGroup{1e6, 0.010, 60}, SyntheticGroup{5e6, 0.025, 60}};
  spec.delays = {{10, 0.08, 3}, {51, 0.08, 3}};
  return tremor::test::synthetic_run(spec);
}

template <typename Input>
std::vector<std::string_view> names_of(const FormatChoice<Input>& choice) {
  std::vector<std::string_view> names;
  for (const auto* formatter : choice.formatters) names.push_back(formatter->name);
  return names;
}

std::vector<std::string_view> report_names(std::string_view list) {
  return names_of(choose_formats(report_formatters(), list));
}

// What report_run prints for TREMOR_REPORT=`list` (no run file, no JSON file).
std::string printed_by_report_run(const RunData& run, const std::string& list) {
  Config config;
  config.report = list;
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  report_run(run, config, std::nullopt, std::nullopt, out);
  std::rewind(out);
  std::string printed;
  for (int ch; (ch = std::fgetc(out)) != EOF;) printed += static_cast<char>(ch);
  std::fclose(out);
  return printed;
}

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

Outcome run_tremor(const TempDir& dir, const std::string& arguments) {
  const fs::path out = dir.path() / "stdout.txt";
  const fs::path err = dir.path() / "stderr.txt";
  const int raw =
      std::system((std::string(TREMOR_CLI) + " " + arguments + " >" + out.string() + " 2>" + err.string()).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, file_text(out), file_text(err)};
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

}  // namespace

// Fails a registry entry that renders nothing or the wrong form, two entries
// sharing a name or suffix, and a lookup that does not find an entry by its name.
TEST_CASE("every report format renders and is found by its name", "[report][formats]") {
  const RunData run = small_run();
  const RunAnalysis analysis = analyze_run(run, tremor::test::quick_parameters());
  const ReportInput input{run, analysis, "run.h5", ReportDetail::short_report, report_json(run, analysis, "run.h5")};
  std::set<std::string_view> names, suffixes;
  for (const ReportFormatter& formatter : report_formatters()) {
    INFO(formatter.name);
    CHECK(names.insert(formatter.name).second);
    CHECK(suffixes.insert(formatter.suffix).second);
    CHECK(formatter.suffix.starts_with("."));
    CHECK(report_names(formatter.name) == std::vector<std::string_view>{formatter.name});
    CHECK(find_format(report_formatters(), formatter.name) == &formatter);
    const std::string rendered = formatter.render(input);
    REQUIRE_FALSE(rendered.empty());
    CHECK(rendered.back() == '\n');
  }
  CHECK(report_formatters().front().name == "text");  // the safe default
  // Each form round-trips to what the report functions make.
  CHECK(find_format(report_formatters(), "text")->render(input) == render_text_report(run, analysis, "run.h5"));
  CHECK(nlohmann::json::parse(find_format(report_formatters(), "json")->render(input)) == input.json);
  for (const CompareFormatter& formatter : compare_formatters()) {
    CHECK(names_of(choose_formats(compare_formatters(), formatter.name)) ==
          std::vector<std::string_view>{formatter.name});
  }
}

// Fails a parser that keeps only the first name, sorts or repeats names, drops
// the old values, or answers an unknown name with no format (a lost report).
TEST_CASE("a format list picks formats in order, an unknown name gets one message and text", "[report][formats]") {
  using Names = std::vector<std::string_view>;
  CHECK(report_names("text,json") == Names{"text", "json"});
  CHECK(report_names(" json , text ") == Names{"json", "text"});
  CHECK(report_names("both") == Names{"text", "json"});
  CHECK(report_names("json,both") == Names{"json", "text"});
  CHECK(report_names("none").empty());
  CHECK(report_names("text,text,,json").size() == 2);
  CHECK(choose_formats(report_formatters(), "both").problem.empty());
  for (const std::string_view bad : {"html", "text,html", "", ",", "TEXT"}) {
    INFO("'" << bad << "'");
    const auto choice = choose_formats(report_formatters(), bad);
    CHECK_FALSE(choice.problem.empty());
    CHECK_THAT(choice.problem, Catch::Contains("known: text, json"));
    CHECK(names_of(choice) == Names{"text"});
  }
  CHECK_THAT(choose_formats(report_formatters(), "text,html").problem, Catch::Contains("'html'"));
  CHECK(names_of(choose_formats(compare_formatters(), "html,text")) == Names{"html", "text"});
}

// Fails a report_run that prints only the first listed form, ignores the old
// values, or prints nothing (or several messages) for an unknown name.
TEST_CASE("TREMOR_REPORT=text,json prints both, old values still work, a bad name prints one line then text",
          "[report][formats]") {
  const RunData run = small_run();
  const std::string text_mark = "of this run was lost to interference";
  const std::string json_mark = "\"probability_high\"";
  for (const std::string list : {"text,json", "both"}) {
    const std::string printed = printed_by_report_run(run, list);
    CHECK_THAT(printed, Catch::Contains(text_mark));
    CHECK_THAT(printed, Catch::Contains(json_mark));
    CHECK(printed.find(text_mark) < printed.find(json_mark));
  }
  const std::string json_first = printed_by_report_run(run, "json,text");
  CHECK(json_first.find(json_mark) < json_first.find(text_mark));
  const std::string json_only = printed_by_report_run(run, "json");
  CHECK_THAT(json_only, !Catch::Contains(text_mark));
  CHECK(nlohmann::json::parse(json_only)["class"].is_string());
  CHECK(printed_by_report_run(run, "none").empty());
  CHECK_THAT(printed_by_report_run(run, "text"), Catch::Contains(text_mark));
  const std::string bad = printed_by_report_run(run, "text,htm");
  CHECK(count_of(bad, "[tremor]") == 1);
  CHECK_THAT(bad, Catch::Contains("TREMOR_REPORT='text,htm'") && Catch::Contains("'htm'"));
  CHECK_THAT(bad, Catch::Contains(text_mark));
  CHECK_THAT(bad, !Catch::Contains(json_mark));
}

// Fails an --format that prints one form only, accepts unknown names, or
// forgets the old values; and a compare that ignores --format.
TEST_CASE("tremor analyze and compare --format take lists", "[report][formats][cli]") {
  TempDir dir;
  const RunData run = small_run();
  const fs::path h5 = dir.path() / "run.h5";
  std::string error;
  REQUIRE(write_run(h5, run, error));
  const Outcome text = run_tremor(dir, "analyze " + h5.string());
  const Outcome json = run_tremor(dir, "analyze --json " + h5.string());
  REQUIRE(text.status == 0);
  REQUIRE(json.status == 0);
  CHECK(run_tremor(dir, "analyze --format text,json " + h5.string()).out == text.out + json.out);
  CHECK(run_tremor(dir, "analyze --format both " + h5.string()).out == text.out + json.out);
  CHECK(run_tremor(dir, "analyze --format json,text " + h5.string()).out == json.out + text.out);
  CHECK(run_tremor(dir, "analyze --format none " + h5.string()).out.empty());
  const Outcome unknown = run_tremor(dir, "analyze --format text,pdf " + h5.string());
  CHECK(unknown.status == 1);  // a usage error
  CHECK(unknown.out.empty());
  CHECK_THAT(unknown.err, Catch::Contains("'pdf'") && Catch::Contains("known: text, json"));
  CHECK(run_tremor(dir, "analyze --json --format text " + h5.string()).status == 1);

  const fs::path other = dir.path() / "other.h5";
  REQUIRE(write_run(other, run, error));
  const std::string files = " " + h5.string() + " " + other.string();
  const Outcome compared = run_tremor(dir, "compare --format json,html" + files);
  REQUIRE(compared.status == 0);
  CHECK(compared.out.starts_with("{"));
  CHECK_THAT(compared.out, Catch::Contains(std::string(kCompareHtmlMarker)));
  CHECK(run_tremor(dir, "compare --json" + files).out == run_tremor(dir, "compare --format json" + files).out);
}
