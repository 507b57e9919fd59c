#include "tremor/analysis/truth_line.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tremor::analysis {
namespace {

constexpr std::size_t kColumns = 80;
// Joins a unit to its number while wrapping; a space in the text.
constexpr char kNoBreak = '\x01';
// A longer list of ranks is only counted, so the truth fits in 3 lines.
constexpr std::size_t kLongestRankList = 24;

struct Aggregate {
  double max = 0.0;
  double sum = 0.0;
  bool any = false;  // at least one finite value
};

Aggregate aggregate(const std::vector<double>& values) {
  Aggregate result;
  for (double value : values) {
    if (!std::isfinite(value)) continue;
    result.any = true;
    result.max = std::max(result.max, value);
    result.sum += value;
  }
  return result;
}

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value < 1.0 ? "%.3g s" : "%.3f s", value);
  return text;
}

std::string percent_of_run(double value, double run_time_s) {
  if (!(run_time_s > 0.0)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100.0 * value / run_time_s);
  return text;
}

std::vector<int> delayed_ranks(const InjectorTruth& truth) {
  std::vector<int> ranks;
  for (std::size_t r = 0; r < truth.injected_s.size(); ++r)
    if (std::isfinite(truth.injected_s[r]) && truth.injected_s[r] > 0.0) ranks.push_back(static_cast<int>(r));
  return ranks;
}

// "rank 3", "ranks 0,2-5", or "12 ranks" when the list would be long.
std::string rank_list(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]);
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (j < i + 2) j = i;  // two neighbours read better as 0,1 than as 0-1
    pieces.push_back(j == i ? std::to_string(ranks[i]) : std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]));
    i = j + 1;
  }
  std::string text = "ranks ";
  for (std::size_t i = 0; i < pieces.size(); ++i) text += (i ? "," : "") + pieces[i];
  return text.size() > kLongestRankList ? std::to_string(ranks.size()) + " ranks" : text;
}

// Wraps at kColumns with a two-space indent; a unit ("s", "%") stays with its number.
std::string wrapped(const std::string& sentence) {
  std::istringstream tokens(sentence);
  std::vector<std::string> words;
  for (std::string token; tokens >> token;) {
    const bool unit = token == "s" || token.rfind("s)", 0) == 0 || token.rfind("s;", 0) == 0 ||
                      token.rfind("s,", 0) == 0 || token.front() == '%';
    if (unit && !words.empty()) {
      words.back() += kNoBreak + token;
    } else {
      words.push_back(token);
    }
  }
  std::string line, text;
  for (const std::string& word : words) {
    if (!line.empty() && line.size() + 1 + word.size() > kColumns) {
      text += line + "\n";
      line = "  ";
    } else if (!line.empty() && line != "  ") {
      line += " ";
    }
    line += word;
  }
  text += line + "\n";
  std::replace(text.begin(), text.end(), kNoBreak, ' ');
  return text;
}

nlohmann::json number_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

}  // namespace

std::optional<InjectorTruth> injector_truth(const RunData& run) {
  InjectorTruth truth;
  for (const RankInfo& rank : run.ranks) {
    truth.injected_s.push_back(rank.injected_s);
    truth.run_queue_delay_s.push_back(rank.run_queue_delay_s);
  }
  if (!aggregate(truth.injected_s).any) return std::nullopt;
  truth.run_time_s = run.meta.run_time_s;
  return truth;
}

std::string truth_line(const InjectorTruth& truth) {
  const Aggregate planted = aggregate(truth.injected_s);
  const std::vector<int> ranks = delayed_ranks(truth);
  std::string sentence = "Planted by the injector: ";
  if (ranks.empty()) {
    sentence += "nothing (no delay was spent)";
  } else {
    sentence += seconds(planted.max) + " on " + rank_list(ranks);
    const std::string share = percent_of_run(planted.max, truth.run_time_s);
    std::string note;
    if (ranks.size() > 1) note = "largest rank";
    if (!share.empty()) note += (note.empty() ? "" : "; ") + share + " of the run if on the critical path";
    if (ranks.size() > 1) note += "; " + seconds(planted.sum) + " summed over ranks";
    if (!note.empty()) sentence += " (" + note + ")";
  }
  sentence += "; the machine's own run-queue delay (kernel): ";
  const Aggregate machine = aggregate(truth.run_queue_delay_s);
  if (!machine.any) {
    sentence += "not measured";
  } else {
    sentence += seconds(machine.max);
    const std::string share = percent_of_run(machine.max, truth.run_time_s);
    const bool several = truth.run_queue_delay_s.size() > 1;
    if (several || !share.empty()) {
      sentence += " (";
      if (several) sentence += "largest rank";
      if (!share.empty()) sentence += (several ? "; " : "") + share;
      sentence += ")";
    }
  }
  return wrapped(sentence);
}

nlohmann::json truth_json(const InjectorTruth& truth) {
  const Aggregate planted = aggregate(truth.injected_s);
  const Aggregate machine = aggregate(truth.run_queue_delay_s);
  nlohmann::json injected = nlohmann::json::array();
  for (double value : truth.injected_s) injected.push_back(number_or_null(value));
  nlohmann::json queued = nlohmann::json::array();
  for (double value : truth.run_queue_delay_s) queued.push_back(number_or_null(value));
  const auto share = [&](double value) {
    return truth.run_time_s > 0.0 ? nlohmann::json(100.0 * value / truth.run_time_s) : nlohmann::json();
  };
  return {
      {"injected_s", injected},
      {"injected_max_s", planted.max},
      {"injected_sum_s", planted.sum},
      {"injected_max_percent", share(planted.max)},
      {"delayed_ranks", delayed_ranks(truth)},
      {"machine_run_queue_delay_s", queued},
      {"machine_run_queue_delay_max_s", machine.any ? nlohmann::json(machine.max) : nlohmann::json()},
      {"machine_run_queue_delay_sum_s", machine.any ? nlohmann::json(machine.sum) : nlohmann::json()},
      {"machine_run_queue_delay_max_percent", machine.any ? share(machine.max) : nlohmann::json()},
  };
}

std::string injector_truth_text(const RunData& run) {
  const std::optional<InjectorTruth> truth = injector_truth(run);
  return truth ? truth_line(*truth) : std::string();
}

nlohmann::json injector_truth_json(const RunData& run) {
  const std::optional<InjectorTruth> truth = injector_truth(run);
  return truth ? truth_json(*truth) : nlohmann::json();
}

}  // namespace tremor::analysis
