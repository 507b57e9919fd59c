// Text form of the report: header with the traffic light and the key
// sentence, then groups, stragglers, predictions and warnings; <= 80 columns.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "tremor/analysis/report.hpp"

namespace tremor::analysis {
namespace {

constexpr std::size_t kWidth = 80;
constexpr std::size_t kMaxListed = 10;  // stragglers / nodes / groups shown

std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* pattern, ...) {
  char buffer[512];
  va_list arguments;
  va_start(arguments, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, arguments);
  va_end(arguments);
  return buffer;
}

// Greedy word wrap to kWidth columns; continuation lines get `indent`.
void wrap(std::ostringstream& out, const std::string& text, const std::string& indent = "  ") {
  std::istringstream words(text);
  std::string word;
  std::string line;
  while (words >> word) {
    while (word.size() > kWidth - indent.size()) {  // a very long path: hard break
      if (!line.empty()) {
        out << line << '\n';
        line = indent;
      }
      const std::size_t room = kWidth - line.size();
      out << line << word.substr(0, room) << '\n';
      word.erase(0, room);
      line = indent;
    }
    if (!line.empty() && line != indent && line.size() + 1 + word.size() > kWidth) {
      out << line << '\n';
      line = indent;
    }
    line += (line.empty() || line == indent) ? word : " " + word;
  }
  if (!line.empty() && line != indent) out << line << '\n';
}

const char* light(estimators::InterferenceClass interference_class) {
  switch (interference_class) {
    case estimators::InterferenceClass::low:
      return "GREEN";
    case estimators::InterferenceClass::medium:
      return "YELLOW";
    case estimators::InterferenceClass::high:
      return "RED";
  }
  return "GREEN";
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
  return out;
}

std::string partial_reason_text(const std::string& code) {
  if (code == "abort") return "reason: MPI_Abort";
  if (code == "exit_without_finalize") return "reason: exit without MPI_Finalize";
  if (code == "finalize_unsaved") return "reason: MPI_Finalize ran but the run file was not written";
  return "reason: unknown, killed by a signal or the walltime";
}

// What was measured directly rather than inferred, when it weighs on the run
// (at least 2 % of it): the measured delays, and ranks that waited for a CPU
// (run queue) when that waiting weighs on the run too.
void measured_line(std::ostringstream& out, const RunData& run, const RunAnalysis& analysis) {
  if (!(analysis.primary.evidence.measured_delay_s > 0.02 * analysis.run_time_s) && !analysis.primary.taking_turns) return;
  std::string text = format(
      "Measured: %.3f s of delays: ranks off the CPU or stalled in I/O %.3f s (I/O stalls "
      "%.3f s), late collectives %.3f s (a rank off the CPU inside a collective counts in both)",
      analysis.primary.evidence.measured_delay_s, analysis.primary.evidence.rank_excess_s, analysis.primary.evidence.io_peer_excess_s, analysis.primary.evidence.boundary_excess_s);
  if (analysis.primary.evidence.foreign_cpu_loss_s > 0.0)
    text += format(", CPU taken by other processes %.3f s", analysis.primary.evidence.foreign_cpu_loss_s);
  if (analysis.primary.evidence.shared_turns_loss_s > analysis.primary.evidence.foreign_cpu_loss_s)
    text += format(", lost by turns taken beside them %.3f s (that CPU time included)", analysis.primary.evidence.shared_turns_loss_s);
  text += ".";
  if (analysis.primary.taking_turns) {
    text +=
        " The job puts more ranks than CPUs on a node: its ranks take turns on them, so only measured delays "
        "are charged, not the spread of the durations.";
  }
  double waited = 0.0;
  for (const std::int32_t rank : run.detail.ranks) {
    const auto r = static_cast<std::size_t>(rank);
    if (r < run.ranks.size() && std::isfinite(run.ranks[r].run_queue_delay_s)) waited += run.ranks[r].run_queue_delay_s;
  }
  const double per_rank = run.detail.ranks.empty() ? 0.0 : waited / static_cast<double>(run.detail.ranks.size());
  if (analysis.primary.waiting_ranks > 0 && per_rank > 0.02 * analysis.run_time_s) {
    text += format(" %zu of %zu detail ranks waited %.3f s in all for a CPU (run queue)%s.", analysis.primary.waiting_ranks,
                   run.detail.ranks.size(), waited,
                   per_rank > 0.05 * analysis.run_time_s ? ": something else runs on their cores" : "");
  }
  wrap(out, text);
}

void header(std::ostringstream& out, const RunData& run, const RunAnalysis& analysis, const std::string& file) {
  out << "=== Tremor: interference report " << std::string(kWidth - 32, '=') << '\n';
  if (run.meta.partial) {
    wrap(out, "PARTIAL RUN (" + partial_reason_text(run.meta.partial_reason) +
                  "): recovered from the crash-recovery spill; only the segments every rank recorded are analysed.");
  }
  if (analysis.estimate_possible) {
    const std::string level = upper(estimators::to_string(analysis.interference_class));
    out << "[" << light(analysis.interference_class) << "] " << level << '\n';
    wrap(out, format("%.1f %% of this run was lost to interference \u2014 %s, p(high) = %.2f",
                     analysis.interference_percent, level.c_str(), analysis.probability_high));
    if (analysis.parameters.method == "mad4") {
      wrap(out, format("Method: the paper's median + 4 MAD rule. Tremor's primary estimate: %.1f %% "
                       "(95 %% interval %.1f-%.1f %%), intrinsic run time %.3f s",
                       analysis.primary.lost_percent, analysis.primary.lost_percent_low, analysis.primary.lost_percent_high,
                       analysis.primary.intrinsic_run_time_s));
    } else {
      wrap(out, format("95 %% interval %.1f-%.1f %%; without it the run would have taken %.3f s "
                       "(intrinsic run time). Paper's median + 4 MAD figure: %.1f %%",
                       analysis.primary.lost_percent_low, analysis.primary.lost_percent_high, analysis.primary.intrinsic_run_time_s,
                       analysis.paper_mad4_percent));
    }
    if (analysis.primary.taking_turns) {
      wrap(out, format("Oversubscribed: ranks outnumber their node's CPUs and take turns on them, the job's own "
                       "cost, not interference. %.1f %% of the run went to turns beside another process that "
                       "cannot be told from that process's cost (reported apart, not in the figure above).",
                       analysis.primary.oversubscription_percent));
    }
    wrap(out, format("Continuous interference (upper bound, reported apart): %.1f %%",
                     analysis.continuous_interference_percent));
    measured_line(out, run, analysis);
  } else {
    out << "[GREY] NO ESTIMATE\n";
    wrap(out, "No interference estimate possible: " + analysis.no_estimate_reason + ".");
  }
  const double rate =
      analysis.run_time_s > 0.0 ? static_cast<double>(analysis.segment_count) / analysis.run_time_s : 0.0;
  wrap(out, format("Run: %.3f s, %d processes on %d node(s), %zu segments (%.1f Hz), counter: %s", analysis.run_time_s,
                   run.meta.world_size, run.meta.node_count, analysis.segment_count, rate,
                   std::string(to_string(run.meta.counter_source)).c_str()));
  if (!file.empty()) wrap(out, "Data: " + file);
}

void groups(std::ostringstream& out, const RunAnalysis& analysis) {
  out << '\n';
  wrap(out,
       format("Groups: %zu usable of %zu (%.1f %% of run time)%s", analysis.usable_groups, analysis.groups.size(),
              100.0 * analysis.usable_time_fraction, analysis.signature_fallback ? ", median-feature signatures" : ""));
  if (analysis.usable_groups == 0) return;
  out << "     # segments  median ms  intr. ms    lost s  4MAD n  4MAD s  GEV k pwm/mom\n";
  std::size_t listed = 0;
  for (std::size_t g = 0; g < analysis.groups.size() && listed < kMaxListed; ++g) {
    const GroupResult& group = analysis.groups[g];
    if (!group.usable) continue;
    ++listed;
    const std::string pwm = group.pwm.usable ? format("%+.2f", group.pwm.k) : "-";
    const std::string mom = group.mom.usable ? format("%+.2f", group.mom.k) : "-";
    out << format("%6zu %8zu %10.3f %9.3f %9.4f %7zu %7.4f  %s/%s%s\n", g, group.members.size(), 1e3 * group.median_s,
                  1e3 * group.intrinsic_s, group.lost_s, group.interfered, group.impact_s, pwm.c_str(), mom.c_str(),
                  group.fits_disagree ? " !" : "");
  }
  if (analysis.usable_groups > listed) out << format("  ... %zu more\n", analysis.usable_groups - listed);
}

void stragglers(std::ostringstream& out, const RunAnalysis& analysis) {
  out << '\n';
  if (analysis.stragglers.empty()) {
    out << "Stragglers: none (no interfered segment)\n";
    return;
  }
  out << format("Stragglers (last to arrive at %zu interfered boundaries):\n", analysis.interfered_segments.size());
  for (std::size_t i = 0; i < analysis.stragglers.size() && i < kMaxListed; ++i) {
    const RankImpact& rank = analysis.stragglers[i];
    out << format("  rank %-6d node %-4d %-24.24s %6zu segs %10.4f s\n", rank.rank, rank.node_id, rank.hostname.c_str(),
                  rank.segments, rank.impact_s);
  }
  out << "Worst nodes:\n";
  for (std::size_t i = 0; i < analysis.nodes.size() && i < kMaxListed; ++i) {
    const NodeImpact& node = analysis.nodes[i];
    out << format("  node %-4d %-34.34s %6zu segs %10.4f s\n", node.node_id, node.hostname.c_str(), node.segments,
                  node.impact_s);
  }
}

std::string clock_text(double unix_seconds) {
  if (!std::isfinite(unix_seconds) || unix_seconds <= 0.0) return "";
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm parts{};
  gmtime_r(&whole, &parts);
  return format("%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec);
}

// Where (ranks and nodes the others waited for), when (episodes), what (components).
void diagnosis(std::ostringstream& out, const RunAnalysis& analysis) {
  const Diagnosis& d = analysis.diagnosis;
  if (!d.available) return;
  out << '\n';
  if (d.slow_ranks.empty()) {
    out << "Where: no slow rank (none kept the others waiting beyond its share)\n";
  } else {
    out << "Where: ranks the others waited for (last = share of boundaries)\n";
    for (std::size_t i = 0; i < d.slow_ranks.size() && i < kMaxListed; ++i) {
      const SlowRank& rank = d.slow_ranks[i];
      out << format("  rank %-6d node %-4d %-22.22s last %3.0f %%  lost %5.1f %%  %s\n", rank.rank, rank.node_id,
                    rank.hostname.c_str(), 100.0 * rank.last_share, rank.lost_percent, rank.kind.c_str());
    }
  }
  for (std::size_t i = 0; i < d.slow_nodes.size() && i < kMaxListed; ++i) {
    const SlowNode& node = d.slow_nodes[i];
    out << format("  node %-4d %-5zu ranks %-21.21s last %3.0f %%  lost %5.1f %%  %s\n", node.node_id, node.ranks,
                  node.hostname.c_str(), 100.0 * node.last_share, node.lost_percent, node.kind.c_str());
  }
  if (d.episodes.empty()) {
    out << "When: no episode (no window of segments slower than intrinsic)\n";
  } else {
    out << "When: episodes, s since MPI_Init (UTC)\n";
    for (std::size_t i = 0; i < d.episodes.size() && i < kMaxListed; ++i) {
      const Episode& episode = d.episodes[i];
      std::string ranks;
      for (const std::int32_t rank : episode.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
      const std::string clock = clock_text(episode.start_unix);
      out << format("  %9.3f-%-9.3f %-10s lost %5.1f %%  last: %.24s\n", episode.start_s, episode.end_s,
                    clock.empty() ? "" : ("(" + clock + ")").c_str(), episode.lost_percent,
                    ranks.empty() ? "-" : ranks.c_str());
    }
    if (d.episodes.size() > kMaxListed) out << format("  ... %zu more\n", d.episodes.size() - kMaxListed);
  }
  out << "What: % of the run time    compute       MPI  file I/O\n";
  out << format("  run time               %9.1f %9.1f %9.1f\n", d.run_components.compute, d.run_components.mpi,
                d.run_components.io);
  out << format("  lost time              %9.1f %9.1f %9.1f\n", d.lost_components.compute, d.lost_components.mpi,
                d.lost_components.io);
}

// The headline first (one time per size, from the method the data support),
// then every method with both intervals.
void predictions(std::ostringstream& out, const RunAnalysis& analysis) {
  if (analysis.predictions.empty()) return;
  const double level = 100.0 * analysis.parameters.ci;
  const PredictionHeadline& headline = analysis.prediction_headline;
  out << '\n';
  if (!headline.method.empty()) {
    wrap(out, format("Predicted run time (%.0f %% prediction interval for one run), method %s: %s:", level,
                     headline.method.c_str(), headline.reason.c_str()));
    for (const Prediction& prediction : analysis.predictions) {
      if (prediction.method != headline.method) continue;
      out << format("  %6g processes (x%g): %10.3f s   [%.3f, %.3f] s\n", prediction.processes, prediction.factor,
                    prediction.median_s, prediction.pi_low_s, prediction.pi_high_s);
    }
  }
  wrap(out, format("All methods (s): median and %.0f %% CI of the expected run time, %.0f %% prediction "
                   "interval (PI) for one run:",
                   level, level));
  out << "  method         factor  procs   median   CI expected run      PI one run\n";
  for (const Prediction& prediction : analysis.predictions) {
    out << format("  %-14s %6g %6g %8.3f  %8.3f-%-8.3f  %8.3f-%-8.3f\n", prediction.method.c_str(), prediction.factor,
                  prediction.processes, prediction.median_s, prediction.ci_low_s, prediction.ci_high_s,
                  prediction.pi_low_s, prediction.pi_high_s);
  }
  wrap(out, format("Segment-time variance inflation (autocorrelation): %.2f; intervals widened \u00d7%.2f.",
                   analysis.prediction_variance_inflation, std::sqrt(analysis.prediction_variance_inflation)));
}

void warnings(std::ostringstream& out, const RunAnalysis& analysis) {
  if (analysis.warnings.empty()) return;
  out << "\nWarnings:\n";
  for (const Warning& warning : analysis.warnings) wrap(out, "- " + warning.message, "    ");
}

}  // namespace

std::string render_text_report(const RunData& run, const RunAnalysis& analysis, const std::string& output_file) {
  std::ostringstream out;
  header(out, run, analysis, output_file);
  groups(out, analysis);
  if (analysis.estimate_possible) {
    stragglers(out, analysis);
    diagnosis(out, analysis);
    predictions(out, analysis);
  }
  warnings(out, analysis);
  return out.str();
}

}  // namespace tremor::analysis
