// Text, JSON and HTML renderings of a Comparison (compare.hpp). Text and HTML
// are built from the same tables so they never disagree.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tremor/analysis/compare.hpp"
#include "tremor/analysis/html_view.hpp"
#include "tremor/json_text.hpp"

namespace tremor::analysis {
namespace {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> highlighted;  // per row and column: differs from the reference
  std::string note;                            // shown below (or instead of) the rows
};

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string seconds(double value) { return format("%.4g s", value); }
std::string change(const std::optional<double>& value) {
  if (!value) return "-";
  return std::fabs(*value) < 0.05 ? std::string("0.0 %") : format("%+.1f %%", *value);  // never "-0.0"
}
nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

Table make_table(std::string title, std::vector<std::string> header) {
  Table table;
  table.title = std::move(title);
  table.header = std::move(header);
  return table;
}

void add_row(Table& table, std::vector<std::string> cells, std::vector<bool> highlighted = {}) {
  highlighted.resize(cells.size(), false);
  table.rows.push_back(std::move(cells));
  table.highlighted.push_back(std::move(highlighted));
}

std::vector<std::string> run_labels(const Comparison& comparison) {
  std::vector<std::string> labels;
  for (const RunRow& row : comparison.runs) labels.push_back(row.label);
  return labels;
}

std::string range(double low, double high) { return format("%.3g", low) + "-" + format("%.3g", high); }

// The run's table label (A, B ...) for its name, the name itself when unknown.
std::string label_of(const Comparison& comparison, const std::string& name) {
  for (const RunRow& row : comparison.runs) {
    if (row.name == name) return row.label;
  }
  return name;
}

// `group_rows`: how many groups to list (the largest impact first); a note says how many more.
std::vector<Table> build_tables(const Comparison& comparison, std::size_t group_rows) {
  std::vector<Table> tables;
  const std::vector<std::string> labels = run_labels(comparison);
  const std::string& reference = labels.front();

  Table runs = make_table("Runs (reference: " + reference + ")",
                          {"run", "processes", "run time", "lost %", "95 % interval", "intrinsic run time", "class"});
  for (const RunRow& row : comparison.runs) {
    if (!row.estimate_possible) {
      add_row(runs, {row.label, std::to_string(row.processes), seconds(row.run_time_s), "-", "-", "-", "none"});
      continue;
    }
    add_row(runs,
            {row.label, std::to_string(row.processes), seconds(row.run_time_s), format("%.2f", row.lost_percent),
             format("%.2f", row.lost_percent_low) + " - " + format("%.2f", row.lost_percent_high),
             seconds(row.intrinsic_run_time_s), row.interference_class},
            {false, row.processes != comparison.runs.front().processes, false, false, false, false,
             row.interference_class != comparison.runs.front().interference_class});
  }
  tables.push_back(std::move(runs));

  Table groups = make_table("Groups that lost most: intrinsic segment time in " + reference +
                                ", change in the others (- : no matching group)",
                            {"group", "closing call", "segments", "lost s", reference});
  for (std::size_t r = 1; r < labels.size(); ++r) groups.header.push_back(labels[r]);
  groups.header.push_back("matched by");
  const std::size_t shown = std::min(group_rows, comparison.groups.size());
  for (std::size_t g = 0; g < shown; ++g) {
    const GroupComparison& group = comparison.groups[g];
    std::vector<std::string> cells = {std::to_string(group.group), group.closing_call, std::to_string(group.segments),
                                      format("%.3g", group.impact_s), seconds(*group.intrinsic_s[0])};
    for (std::size_t r = 1; r < group.change_percent.size(); ++r) cells.push_back(change(group.change_percent[r]));
    cells.push_back(group.matched_by.empty() ? "no match" : group.matched_by);
    add_row(groups, std::move(cells));
  }
  if (comparison.groups.empty()) {
    groups.note = "the reference run has no usable group";
  } else {
    groups.note = "group: its number in `tremor analyze` of " + reference + "; lost s: the most it lost in any run";
    if (shown < comparison.groups.size()) {
      groups.note += "\n" + std::to_string(comparison.groups.size() - shown) +
                     " more groups, in the same order: tremor compare --json, or --html FILE";
    }
  }
  tables.push_back(std::move(groups));

  Table nodes =
      make_table("Node speed: time outside MPI and I/O per work unit (non-interfered segments)", {"node", reference});
  for (std::size_t r = 1; r < labels.size(); ++r) nodes.header.push_back(labels[r]);
  for (const NodeDrift& node : comparison.nodes) {
    std::vector<std::string> cells = {
        node.hostname, node.seconds_per_work[0] ? format("%.4g", *node.seconds_per_work[0]) : std::string("-")};
    for (std::size_t r = 1; r < node.change_percent.size(); ++r) cells.push_back(change(node.change_percent[r]));
    add_row(nodes, std::move(cells));
  }
  if (!comparison.node_drift_unavailable.empty()) nodes.note = "not available: " + comparison.node_drift_unavailable;
  tables.push_back(std::move(nodes));

  Table environment = make_table("Environment fields that differ", {"field"});
  environment.header.insert(environment.header.end(), labels.begin(), labels.end());
  for (const EnvironmentDifference& difference : comparison.environment) {
    std::vector<std::string> cells = {difference.field};
    std::vector<bool> marks = {false};
    for (const std::string& value : difference.values) {
      cells.push_back(value);
      marks.push_back(value != difference.values.front());
    }
    add_row(environment, std::move(cells), std::move(marks));
  }
  if (comparison.environment.empty()) environment.note = "none: the recorded environments agree";
  tables.push_back(std::move(environment));

  Table predictions = make_table(
      "Predictions of smaller runs for larger runs (CI: of the expected run time; PI: for one run; "
      "+ : the smaller run's headline method)",
      {"from", "to", "method", "processes", "median s", "CI s", "PI s", "actual s", "in PI", "in CI"});
  for (const PredictionCheck& check : comparison.predictions) {
    add_row(predictions,
            {label_of(comparison, check.from_run), label_of(comparison, check.to_run),
             check.method + (check.headline ? " +" : ""), format("%g", check.processes), format("%.4g", check.median_s),
             range(check.ci_low_s, check.ci_high_s), range(check.pi_low_s, check.pi_high_s),
             format("%.4g", check.actual_s), check.inside ? "yes" : "no", check.inside_ci ? "yes" : "no"},
            {false, false, false, false, false, false, false, false, !check.inside, false});
  }
  predictions.note = comparison.predictions_note;
  tables.push_back(std::move(predictions));
  return tables;
}

// `text` cut to `width` columns, "..." marking the cut.
std::string shortened(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return width <= 3 ? text.substr(0, width) : text.substr(0, width - 3) + "...";
}

// Word-wrapped to kCompareTextColumns; continuation lines indented by `indent`.
std::string wrapped(const std::string& text, std::size_t indent) {
  std::string out;
  std::string line = text.substr(0, std::min(text.find_first_not_of(' '), text.size()));
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > kCompareTextColumns) {
      out += line + '\n';
      line = std::string(indent, ' ');
    } else if (!line.empty() && line.find_first_not_of(' ') != std::string::npos) {
      line += ' ';
    }
    line += shortened(word, kCompareTextColumns - line.size());
  }
  return out + line + '\n';
}

std::string render_table_text(const Table& table) {
  std::vector<std::size_t> widths(table.header.size(), 0);
  const auto cell_text = [&](std::size_t row, std::size_t column) {
    return (table.highlighted[row][column] ? "*" : "") + table.rows[row][column];
  };
  for (std::size_t c = 0; c < table.header.size(); ++c) widths[c] = table.header[c].size();
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    for (std::size_t c = 0; c < table.rows[r].size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], cell_text(r, c).size());
    }
  }
  // Two leading spaces, a space before and after each cell; over the limit,
  // the widest column is cut (long paths and library lists; --json has them whole).
  const auto line_width = [&] {
    std::size_t total = 1;
    for (const std::size_t width : widths) total += width + 2;
    return total;
  };
  while (line_width() > kCompareTextColumns + 1) {  // the trailing space is trimmed
    auto widest = std::max_element(widths.begin(), widths.end());
    if (*widest <= 8) break;
    --*widest;
  }
  std::ostringstream out;
  out << wrapped(table.title, 2);
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = " ";
    for (std::size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
      const std::string cell = shortened(cells[c], widths[c]);
      text += ' ' + cell + std::string(widths[c] - cell.size() + 1, ' ');
    }
    out << text.substr(0, text.find_last_not_of(' ') + 1) << '\n';
  };
  if (!table.rows.empty()) {
    line(table.header);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      std::vector<std::string> cells;
      for (std::size_t c = 0; c < table.rows[r].size(); ++c) cells.push_back(cell_text(r, c));
      line(cells);
    }
  }
  std::istringstream notes(table.note);
  for (std::string note; std::getline(notes, note);) out << wrapped("  " + note, 4);
  return out.str();
}

}  // namespace

std::string render_compare_text(const Comparison& comparison) {
  std::string out;
  for (const std::string& warning : comparison.warnings) out += wrapped("Warning: " + warning, 2);
  if (!comparison.warnings.empty()) out += '\n';
  for (const RunRow& row : comparison.runs) {
    // A file name too long for the line keeps its end: the name, not the folders.
    const std::string lead = row.label + ": ";
    const std::string tail = &row == &comparison.runs.front() ? " (reference)" : "";
    const std::size_t room = kCompareTextColumns - lead.size() - tail.size();
    const std::string file = row.file.size() <= room ? row.file : "..." + row.file.substr(row.file.size() - room + 3);
    out += lead + file + tail + '\n';
  }
  out += "* marks a value that differs from the reference run " + comparison.runs.front().label + ".\n\n";
  for (const Table& table : build_tables(comparison, kCompareTextGroups)) out += render_table_text(table) + '\n';
  for (const Verdict& verdict : comparison.verdicts) out += wrapped("Verdict: " + verdict.text, 2);
  return out;
}

nlohmann::json compare_view(const Comparison& comparison) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const std::string& warning : comparison.warnings) {
    blocks.push_back({{"paragraph", "Warning: " + warning}, {"class", "warning"}});
  }
  for (const Verdict& verdict : comparison.verdicts) blocks.push_back({{"paragraph", verdict.text}, {"class", "verdict"}});
  for (const RunRow& row : comparison.runs) {
    blocks.push_back(
        {{"paragraph", row.label + ": " + row.file + (&row == &comparison.runs.front() ? " (reference)" : "")}});
  }
  for (const Table& table : build_tables(comparison, comparison.groups.size())) {
    blocks.push_back({{"heading", table.title}});
    if (!table.rows.empty()) {
      blocks.push_back({{"table",
                         {{"header", table.header},
                          {"rows", table.rows},
                          {"highlighted", table.highlighted},
                          {"text_columns", table.header.size()}}}});
    }
    std::istringstream notes(table.note);
    for (std::string note; std::getline(notes, note);) blocks.push_back({{"paragraph", note}});
  }
  return {{"title", "Tremor comparison"}, {"marker", kCompareHtmlMarker}, {"blocks", std::move(blocks)}};
}

std::string render_compare_html(const Comparison& comparison) { return render_html_view(compare_view(comparison)); }

nlohmann::json compare_json(const Comparison& comparison) {
  nlohmann::json out;
  out["reference"] = comparison.runs.front().name;
  out["runs"] = nlohmann::json::array();
  for (const RunRow& row : comparison.runs) {
    out["runs"].push_back({{"name", row.name},
                           {"label", row.label},
                           {"file", row.file},
                           {"processes", row.processes},
                           {"run_time_s", row.run_time_s},
                           {"estimate_possible", row.estimate_possible},
                           {"lost_percent", row.lost_percent},
                           {"lost_percent_low", row.lost_percent_low},
                           {"lost_percent_high", row.lost_percent_high},
                           {"intrinsic_run_time_s", row.intrinsic_run_time_s},
                           {"interference_class", row.interference_class}});
  }
  out["groups"] = nlohmann::json::array();
  for (const GroupComparison& group : comparison.groups) {
    nlohmann::json intrinsic = nlohmann::json::array();
    nlohmann::json changes = nlohmann::json::array();
    nlohmann::json lost = nlohmann::json::array();
    for (const auto& value : group.intrinsic_s) intrinsic.push_back(optional_json(value));
    for (const auto& value : group.change_percent) changes.push_back(optional_json(value));
    for (const auto& value : group.lost_s) lost.push_back(optional_json(value));
    out["groups"].push_back({{"label", group.label},
                             {"group", group.group},
                             {"closing_call", group.closing_call},
                             {"segments", group.segments},
                             {"lost_s", lost},
                             {"impact_s", group.impact_s},
                             {"matched_by", group.matched_by},
                             {"intrinsic_s", intrinsic},
                             {"change_percent", changes}});
  }
  out["nodes"] = nlohmann::json::array();
  for (const NodeDrift& node : comparison.nodes) {
    nlohmann::json speeds = nlohmann::json::array();
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& value : node.seconds_per_work) speeds.push_back(optional_json(value));
    for (const auto& value : node.change_percent) changes.push_back(optional_json(value));
    out["nodes"].push_back({{"hostname", node.hostname}, {"seconds_per_work", speeds}, {"change_percent", changes}});
  }
  out["node_drift_unavailable"] = comparison.node_drift_unavailable;
  out["environment_differences"] = nlohmann::json::array();
  for (const EnvironmentDifference& difference : comparison.environment) {
    out["environment_differences"].push_back({{"field", difference.field}, {"values", difference.values}});
  }
  out["predictions"] = nlohmann::json::array();
  for (const PredictionCheck& check : comparison.predictions) {
    out["predictions"].push_back({{"from", check.from_run},
                                  {"to", check.to_run},
                                  {"method", check.method},
                                  {"factor", check.factor},
                                  {"processes", check.processes},
                                  {"median_s", check.median_s},
                                  {"ci_low_s", check.ci_low_s},
                                  {"ci_high_s", check.ci_high_s},
                                  {"pi_low_s", check.pi_low_s},
                                  {"pi_high_s", check.pi_high_s},
                                  {"actual_s", check.actual_s},
                                  {"inside", check.inside},
                                  {"inside_ci", check.inside_ci},
                                  {"headline", check.headline}});
  }
  out["predictions_note"] = comparison.predictions_note;
  out["warnings"] = comparison.warnings;
  out["verdicts"] = nlohmann::json::array();
  for (const Verdict& verdict : comparison.verdicts) {
    out["verdicts"].push_back({{"available", verdict.available},
                               {"reference", verdict.reference},
                               {"compared", verdict.compared},
                               {"intrinsic_change_percent", verdict.intrinsic_change_percent},
                               {"uncertainty_percent", verdict.uncertainty_percent},
                               {"total_change_percent", verdict.total_change_percent},
                               {"interference_share", verdict.interference_share},
                               {"tolerance_percent", verdict.tolerance_percent},
                               {"intrinsic_differs", verdict.intrinsic_differs},
                               {"text", verdict.text}});
  }
  return out;
}

namespace {
std::string render_compare_json(const Comparison& comparison) { return json_text(compare_json(comparison), 2) + "\n"; }

constexpr std::array<CompareFormatter, 3> kCompareFormatters{{
    {"text", ".txt", render_compare_text},
    {"json", ".json", render_compare_json},
    {"html", ".html", render_compare_html},
}};
}  // namespace

std::span<const CompareFormatter> compare_formatters() { return kCompareFormatters; }

}  // namespace tremor::analysis
