// Text, JSON and HTML renderings of a Comparison (compare.hpp). Text and HTML
// are built from the same tables so they never disagree.
#include <cstdio>
#include <sstream>

#include "tremor/analysis/compare.hpp"

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
std::string change(const std::optional<double>& value) { return value ? format("%+.1f %%", *value) : std::string("-"); }
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

std::vector<std::string> run_names(const Comparison& comparison) {
  std::vector<std::string> names;
  for (const RunRow& row : comparison.runs) names.push_back(row.name);
  return names;
}

std::vector<Table> build_tables(const Comparison& comparison) {
  std::vector<Table> tables;
  const std::vector<std::string> names = run_names(comparison);
  const std::string& reference = names.front();

  Table runs = make_table("Runs (reference: " + reference + ")",
                          {"run", "processes", "run time", "lost %", "95 % interval", "intrinsic run time", "class"});
  for (const RunRow& row : comparison.runs) {
    if (!row.estimate_possible) {
      add_row(runs, {row.name, std::to_string(row.processes), seconds(row.run_time_s), "-", "-", "-", "none"});
      continue;
    }
    add_row(runs,
            {row.name, std::to_string(row.processes), seconds(row.run_time_s), format("%.2f", row.lost_percent),
             format("%.2f", row.lost_percent_low) + " - " + format("%.2f", row.lost_percent_high),
             seconds(row.intrinsic_run_time_s), row.interference_class},
            {false, row.processes != comparison.runs.front().processes, false, false, false, false,
             row.interference_class != comparison.runs.front().interference_class});
  }
  tables.push_back(std::move(runs));

  Table groups =
      make_table("Groups: intrinsic segment time, change against " + reference, {"group", "segments", reference});
  for (std::size_t r = 1; r < names.size(); ++r) groups.header.push_back(names[r]);
  groups.header.push_back("matched by");
  for (const GroupComparison& group : comparison.groups) {
    std::vector<std::string> cells = {group.label, std::to_string(group.segments), seconds(*group.intrinsic_s[0])};
    std::vector<bool> marks(cells.size(), false);
    for (std::size_t r = 1; r < group.change_percent.size(); ++r) {
      cells.push_back(change(group.change_percent[r]));
      marks.push_back(!group.change_percent[r]);
    }
    cells.push_back(group.matched_by.empty() ? "no match" : group.matched_by);
    add_row(groups, std::move(cells), std::move(marks));
  }
  if (comparison.groups.empty()) groups.note = "the reference run has no usable group";
  tables.push_back(std::move(groups));

  Table nodes =
      make_table("Node speed: time outside MPI and I/O per work unit (non-interfered segments)", {"node", reference});
  for (std::size_t r = 1; r < names.size(); ++r) nodes.header.push_back(names[r]);
  for (const NodeDrift& node : comparison.nodes) {
    std::vector<std::string> cells = {
        node.hostname, node.seconds_per_work[0] ? format("%.4g", *node.seconds_per_work[0]) : std::string("-")};
    for (std::size_t r = 1; r < node.change_percent.size(); ++r) cells.push_back(change(node.change_percent[r]));
    add_row(nodes, std::move(cells));
  }
  if (!comparison.node_drift_unavailable.empty()) nodes.note = "not available: " + comparison.node_drift_unavailable;
  tables.push_back(std::move(nodes));

  Table environment = make_table("Environment fields that differ (* = differs from " + reference + ")", {"field"});
  environment.header.insert(environment.header.end(), names.begin(), names.end());
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
      "Predictions of smaller runs against larger runs (method + = headline; CI of the expected run time, "
      "prediction interval for one run)",
      {"from", "to", "method", "factor", "processes", "median", "CI expected", "PI one run", "actual", "in PI",
       "in CI"});
  for (const PredictionCheck& check : comparison.predictions) {
    add_row(predictions,
            {check.from_run, check.to_run, check.method + (check.headline ? " +" : ""), format("%g", check.factor),
             format("%g", check.processes), seconds(check.median_s),
             seconds(check.ci_low_s) + " - " + seconds(check.ci_high_s),
             seconds(check.pi_low_s) + " - " + seconds(check.pi_high_s), seconds(check.actual_s),
             check.inside ? "yes" : "no", check.inside_ci ? "yes" : "no"},
            {false, false, false, false, false, false, false, false, false, !check.inside, false});
  }
  predictions.note = comparison.predictions_note;
  tables.push_back(std::move(predictions));
  return tables;
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
  std::ostringstream out;
  out << table.title << '\n';
  const auto line = [&](const std::vector<std::string>& cells) {
    out << ' ';
    for (std::size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
      out << ' ' << cells[c] << std::string(widths[c] - cells[c].size() + 1, ' ');
    }
    out << '\n';
  };
  if (!table.rows.empty()) {
    line(table.header);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      std::vector<std::string> cells;
      for (std::size_t c = 0; c < table.rows[r].size(); ++c) cells.push_back(cell_text(r, c));
      line(cells);
    }
  }
  if (!table.note.empty()) out << "  " << table.note << '\n';
  return out.str();
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_compare_text(const Comparison& comparison) {
  std::string out;
  for (const std::string& warning : comparison.warnings) out += "Warning: " + warning + '\n';
  if (!comparison.warnings.empty()) out += '\n';
  for (const Table& table : build_tables(comparison)) out += render_table_text(table) + '\n';
  for (const Verdict& verdict : comparison.verdicts) out += "Verdict: " + verdict.text + '\n';
  return out;
}

std::string render_compare_html(const Comparison& comparison) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">" << kCompareHtmlMarker
      << "<title>Tremor comparison</title>\n<style>"
         "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
         "th,td{border:1px solid #bbb;padding:3px 8px;text-align:left}th{background:#eee}"
         "td.differs{background:#ffe08a;font-weight:bold}p.verdict{font-size:1.2em;font-weight:bold}"
         "p.warning{color:#a00;font-weight:bold}</style></head><body>\n<h1>Tremor comparison</h1>\n";
  for (const std::string& warning : comparison.warnings) {
    out << "<p class=\"warning\">Warning: " << html_escape(warning) << "</p>\n";
  }
  for (const Verdict& verdict : comparison.verdicts) {
    out << "<p class=\"verdict\">" << html_escape(verdict.text) << "</p>\n";
  }
  for (const Table& table : build_tables(comparison)) {
    out << "<h2>" << html_escape(table.title) << "</h2>\n";
    if (!table.rows.empty()) {
      out << "<table>\n<tr>";
      for (const std::string& cell : table.header) out << "<th>" << html_escape(cell) << "</th>";
      out << "</tr>\n";
      for (std::size_t r = 0; r < table.rows.size(); ++r) {
        out << "<tr>";
        for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
          out << (table.highlighted[r][c] ? "<td class=\"differs\">" : "<td>") << html_escape(table.rows[r][c])
              << "</td>";
        }
        out << "</tr>\n";
      }
      out << "</table>\n";
    }
    if (!table.note.empty()) out << "<p>" << html_escape(table.note) << "</p>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

nlohmann::json compare_json(const Comparison& comparison) {
  nlohmann::json out;
  out["reference"] = comparison.runs.front().name;
  out["runs"] = nlohmann::json::array();
  for (const RunRow& row : comparison.runs) {
    out["runs"].push_back({{"name", row.name},
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
    for (const auto& value : group.intrinsic_s) intrinsic.push_back(optional_json(value));
    for (const auto& value : group.change_percent) changes.push_back(optional_json(value));
    out["groups"].push_back({{"label", group.label},
                             {"segments", group.segments},
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

}  // namespace tremor::analysis
