// The truth line of an injected run: the injector's per-rank totals and the
// kernel's run-queue delay, as given, never an estimate.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "tremor/analysis/truth_line.hpp"

namespace {

using tremor::RunData;
using namespace tremor::analysis;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

RunData run_with(const std::vector<double>& injected, const std::vector<double>& queued, double run_time_s) {
  RunData run;
  run.meta.run_time_s = run_time_s;
  for (std::size_t r = 0; r < injected.size(); ++r) {
    tremor::RankInfo rank;
    rank.rank = static_cast<std::int32_t>(r);
    rank.injected_s = injected[r];
    rank.run_queue_delay_s = queued[r];
    run.ranks.push_back(rank);
  }
  return run;
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  std::string squeezed;
  for (char c : text)
    if (!(c == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += c;
  return squeezed;
}

void check_columns(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 80);
  CHECK(text.back() == '\n');
}

}  // namespace

TEST_CASE("no injector loaded: no truth line and no JSON figures", "[truth]") {
  const RunData run = run_with({kNaN, kNaN}, {0.01, 0.02}, 2.0);
  CHECK_FALSE(injector_truth(run).has_value());
  CHECK(injector_truth_text(run).empty());
  CHECK(injector_truth_json(run).is_null());
}

TEST_CASE("delays on two ranks: largest total, share of the run, sum and the machine's delay", "[truth]") {
  const RunData run = run_with({0.2, 0.412}, {0.031, 0.0105}, 1.416);
  const auto truth = injector_truth(run);
  REQUIRE(truth.has_value());
  CHECK(injector_truth_json(run) == truth_json(*truth));
  const std::string text = injector_truth_text(run);
  check_columns(text);
  const std::string line = one_line(text);
  CHECK(line.rfind("Planted by the injector: 0.412 s on ranks 0,1 (", 0) == 0);
  CHECK(line.find("(largest rank; 29.1 % of the run if on the critical path;") != std::string::npos);
  CHECK(line.find("0.612 s summed over ranks") != std::string::npos);
  CHECK(line.find("run-queue delay (kernel): 0.031 s (largest rank; 2.2 %)") != std::string::npos);

  const nlohmann::json json = truth_json(*truth);
  CHECK(json["injected_s"] == nlohmann::json::array({0.2, 0.412}));
  CHECK(json["injected_max_s"].get<double>() == 0.412);
  CHECK(json["injected_sum_s"].get<double>() == Approx(0.612));
  CHECK(json["injected_max_percent"].get<double>() == Approx(100.0 * 0.412 / 1.416));
  CHECK(json["delayed_ranks"] == nlohmann::json::array({0, 1}));
  CHECK(json["machine_run_queue_delay_s"] == nlohmann::json::array({0.031, 0.0105}));
  CHECK(json["machine_run_queue_delay_max_s"].get<double>() == 0.031);
  CHECK(json["machine_run_queue_delay_sum_s"].get<double>() == Approx(0.0415));
}

TEST_CASE("one delayed rank: named alone, no sum", "[truth]") {
  const std::string line = one_line(injector_truth_text(run_with({0.0, 0.05, 0.0}, {0.0, 0.0, 0.002}, 0.5)));
  CHECK(line.rfind("Planted by the injector: 0.05 s on rank 1 (10.0 % of the run if on the critical path);", 0) == 0);
  CHECK(line.find("summed") == std::string::npos);
  CHECK(line.find("(kernel): 0.002 s") != std::string::npos);
}

TEST_CASE("injector loaded but no delay spent, kernel not read", "[truth]") {
  const RunData run = run_with({0.0, 0.0}, {kNaN, kNaN}, 1.0);
  const std::string line = one_line(injector_truth_text(run));
  CHECK(line.rfind("Planted by the injector: nothing (no delay was spent);", 0) == 0);
  CHECK(line.find("(kernel): not measured") != std::string::npos);
  const nlohmann::json json = truth_json(*injector_truth(run));
  CHECK(json["machine_run_queue_delay_s"] == nlohmann::json::array({nullptr, nullptr}));
  CHECK(json["machine_run_queue_delay_max_s"].is_null());
  CHECK(json["delayed_ranks"].empty());
}

TEST_CASE("rank lists: ranges, then only a count", "[truth]") {
  std::vector<double> injected(20, 0.0);
  for (int r : {0, 1, 2, 3, 5}) injected[static_cast<std::size_t>(r)] = 0.01;
  const std::vector<double> queued(20, 0.0);
  CHECK(one_line(injector_truth_text(run_with(injected, queued, 1.0))).find("on ranks 0-3,5 (") != std::string::npos);
  for (int r = 0; r < 20; r += 2) injected[static_cast<std::size_t>(r)] = 0.01;
  CHECK(one_line(injector_truth_text(run_with(injected, queued, 1.0))).find("on 13 ranks (") != std::string::npos);
}

TEST_CASE("the longest figures still fit in 3 lines of 80 columns", "[truth]") {
  std::vector<double> injected(20000, 0.0);
  for (std::size_t start = 10000; start < 16000; start += 1000)
    for (std::size_t r = start; r < start + 500; ++r) injected[r] = 0.000123;
  const std::string text = injector_truth_text(run_with(injected, std::vector<double>(20000, 0.000123), 1e-6));
  check_columns(text);
  CHECK(std::count(text.begin(), text.end(), '\n') <= 3);
  CHECK(one_line(text).find("on 3000 ranks (") != std::string::npos);
}
