// The full text report (TREMOR_REPORT_DETAIL=full, tremor analyze --full):
// the headline, every table, all warnings; <= 80 columns. The short report is
// report_text_short.cpp; both share report_text_format.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "report_text_format.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/analysis/truth_line.hpp"

namespace tremor::analysis {
namespace {

using text::clock_text;
using text::counted;
using text::format;
using text::kWidth;
using text::light;
using text::partial_reason_text;
using text::upper;
using text::wrap;

constexpr std::size_t kMaxListed = 10;  // stragglers / nodes / groups shown

// What was measured directly rather than inferred, when it weighs on the run
// (at least 2 % of it): the delays charged, then each kind of evidence apart.
// The kinds overlap (a rank off the CPU inside a collective is also a late
// collective) and each segment is charged the largest, at most its time
// beyond its work, so the charge is no sum of the kinds and may be below one.
void measured_line(std::ostringstream& out, const RunData& run, const RunAnalysis& analysis) {
  const EvidenceTotals& evidence = analysis.primary.evidence;
  if (!(evidence.measured_delay_s > 0.02 * analysis.run_time_s) && !analysis.primary.taking_turns) return;
  std::string text = format(
      "Measured: %.3f s of delays charged (each segment: its largest kind of evidence below, at most its time "
      "beyond its work). By kind, each summed over the segments, overlapping: ranks off the CPU or stalled "
      "in I/O %.3f s (of it I/O stalls %.3f s); late collectives %.3f s",
      evidence.measured_delay_s, evidence.rank_excess_s, evidence.io_peer_excess_s, evidence.boundary_excess_s);
  if (evidence.foreign_cpu_loss_s > 0.0) text += format("; CPU taken by other processes %.3f s", evidence.foreign_cpu_loss_s);
  if (evidence.shared_turns_loss_s > evidence.foreign_cpu_loss_s)
    text += format("; lost by turns taken beside them %.3f s (that CPU time included)", evidence.shared_turns_loss_s);
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

// "Job 1234 (name) on node[01-04]" from the scheduler's record; "" without one.
std::string job_line(const RunMetadata& meta) {
  if (meta.job.scheduler.empty() || meta.job_id.empty()) return {};
  std::string line = "Job " + meta.job_id;
  if (meta.job.name) line += " (" + *meta.job.name + ")";
  if (meta.job.nodelist) line += " on " + *meta.job.nodelist;
  return line;
}

void header(std::ostringstream& out, const RunData& run, const RunAnalysis& analysis, const std::string& file) {
  out << "=== Tremor: interference report (full) " << std::string(kWidth - 40, '=') << '\n';
  if (run.meta.partial) {
    wrap(out, "PARTIAL RUN (" + partial_reason_text(run.meta.partial_reason) +
                  "): recovered from the crash-recovery spill; only the segments every rank recorded are analysed.");
  }
  if (analysis.estimate_possible) {
    const std::string level = upper(estimators::to_string(analysis.interference_class));
    const PrimaryEstimate& primary = analysis.primary;
    out << "[" << light(analysis.interference_class) << "] " << level << '\n';
    int decimals = 1;
    const std::string interval = interval_text(primary.lost_percent_low, primary.lost_percent_high, &decimals);
    const int shown = analysis.parameters.method == "mad4" ? 1 : decimals;
    wrap(out, format("%.*f %% of this run was lost to interference \u2014 %s, p(high) = %.2f", shown,
                     analysis.interference_percent, level.c_str(), analysis.probability_high));
    const std::string meaning = format("%.0f %% interval %s: ", 100.0 * analysis.parameters.ci, interval.c_str()) +
                                text::interval_meaning(analysis.parameters.ci);
    if (analysis.parameters.method == "mad4") {
      wrap(out, format("Method: the 4\u00b7MAD figure (see below). Tremor's primary estimate: %.*f %%, ", decimals,
                       primary.lost_percent) +
                    meaning);
    } else {
      wrap(out, meaning);
    }
    wrap(out, format("Without the lost time the run would have taken %.3f s (intrinsic run time).",
                     primary.intrinsic_run_time_s));
    wrap(out, format("4\u00b7MAD figure: %.1f %% (the rule of the segment-clustering method Tremor starts from: "
                     "a segment's time beyond its group's median + 4 median absolute deviations)",
                     analysis.paper_mad4_percent));
    if (primary.taking_turns) {
      wrap(out, format("Oversubscribed: ranks outnumber their node's CPUs and take turns on them, the job's own "
                       "cost, not interference. %.1f %% of the run went to turns beside another process that "
                       "cannot be told from that process's cost (reported apart, not in the figure above).",
                       primary.oversubscription_percent));
    }
    wrap(out, format("Continuous interference: at most %.1f %% (each group's median segment time beyond its "
                     "fastest, for every segment of it; an upper bound, reported apart)",
                     analysis.continuous_interference_percent));
    measured_line(out, run, analysis);
  } else {
    out << "[GREY] NO ESTIMATE\n";
    wrap(out, "No interference estimate possible: " + analysis.no_estimate_reason + ".");
  }
  const double rate =
      analysis.run_time_s > 0.0 ? static_cast<double>(analysis.segment_count) / analysis.run_time_s : 0.0;
  wrap(out, format("Run: %.3f s, %s on %s, %s (%.1f Hz), counter: %s", analysis.run_time_s,
                   counted(static_cast<std::size_t>(std::max(0, run.meta.world_size)), "process", "processes").c_str(),
                   counted(static_cast<std::size_t>(std::max(0, run.meta.node_count)), "node", "nodes").c_str(),
                   counted(analysis.segment_count, "segment", "segments").c_str(), rate,
                   std::string(to_string(run.meta.counter_source)).c_str()));
  if (const std::string job = job_line(run.meta); !job.empty()) wrap(out, job);
  if (!file.empty()) wrap(out, "Data: " + file);
}

void groups(std::ostringstream& out, const RunAnalysis& analysis) {
  out << '\n';
  wrap(out,
       format("Groups: %zu usable of %zu (%.1f %% of run time)%s", analysis.usable_groups, analysis.groups.size(),
              100.0 * analysis.usable_time_fraction, analysis.signature_fallback ? ", median-feature signatures" : ""));
  if (analysis.usable_groups == 0) return;
  wrap(out,
       "Segments of similar work between the same MPI calls. intr.: intrinsic (undisturbed) time; lost: "
       "charged to interference; 4MAD n, s: segments beyond the 4\u00b7MAD rule and their excess; GEV k: "
       "shape of the extreme-value law fitted to the segment maxima by probability-weighted moments / by "
       "moments (! where they disagree).");
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
  wrap(out, format("Stragglers: the rank last to arrive at each of the %zu interfered boundaries, charged that "
                   "segment's lost time (Where, below, names only ranks beyond their share):",
                   analysis.interfered_segments.size()));
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

// Where (ranks and nodes the others waited for; ranks with more work apart),
// when (episodes), what (components).
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
  if (!d.imbalanced_ranks.empty()) {
    out << "Imbalance: ranks with more work (the application's, not lost time)\n";
    for (std::size_t i = 0; i < d.imbalanced_ranks.size() && i < kMaxListed; ++i) {
      const ImbalancedRank& rank = d.imbalanced_ranks[i];
      out << format("  rank %-6d node %-4d %-22.22s work %+4.0f %%  others waited %5.1f %%\n", rank.rank,
                    rank.node_id, rank.hostname.c_str(), 100.0 * rank.extra_work, rank.wait_percent);
    }
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

// The headline first (one time per size, from the method the data support,
// with its weak-scaling assumption), then every method with both intervals.
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
  wrap(out, std::string("Assumes ") + kPredictionAssumption + ".");
  wrap(out, format("All methods (s): median and %.0f %% CI of the expected run time, %.0f %% prediction "
                   "interval (PI) for one run:",
                   level, level));
  out << "  method         factor  procs   median   CI expected run      PI one run\n";
  for (const Prediction& prediction : analysis.predictions) {
    out << format("  %-14s %6g %6g %8.3f  %8.3f-%-8.3f  %8.3f-%-8.3f\n", prediction.method.c_str(), prediction.factor,
                  prediction.processes, prediction.median_s, prediction.ci_low_s, prediction.ci_high_s,
                  prediction.pi_low_s, prediction.pi_high_s);
  }
  wrap(out, format("Segment-time variance inflation (autocorrelation): %.2f: slow periods last several segments, "
                   "so their sum varies more than independent segments would; intervals widened \u00d7%.2f.",
                   analysis.prediction_variance_inflation, std::sqrt(analysis.prediction_variance_inflation)));
}

void warnings(std::ostringstream& out, const RunAnalysis& analysis) {
  if (analysis.warnings.empty()) return;
  out << "\nWarnings (most important first):\n";
  for (const Warning* warning : warnings_by_importance(analysis)) wrap(out, "- " + warning->message, "    ");
}

}  // namespace

// The fewest decimals at which the ends differ: "3.3-3.3 %" would claim a
// precision the interval has and hide it.
std::string interval_text(double low_percent, double high_percent, int* decimals) {
  constexpr int kMostDecimals = 3;
  for (int places = 1; places <= kMostDecimals; ++places) {
    const std::string low = format("%.*f", places, low_percent);
    const std::string high = format("%.*f", places, high_percent);
    if (low != high) {
      if (decimals) *decimals = places;
      return low + "-" + high + " %";
    }
  }
  if (decimals) *decimals = kMostDecimals;
  return format("%.*f %% (interval < 0.001 pp wide)", kMostDecimals, 0.5 * (low_percent + high_percent));
}

std::string render_text_report(const RunData& run, const RunAnalysis& analysis, const std::string& output_file,
                               ReportDetail detail) {
  if (detail == ReportDetail::short_report) return render_short_text_report(run, analysis, output_file);
  std::ostringstream out;
  header(out, run, analysis, output_file);
  groups(out, analysis);
  if (analysis.estimate_possible) {
    stragglers(out, analysis);
    diagnosis(out, analysis);
    predictions(out, analysis);
  }
  warnings(out, analysis);
  out << injector_truth_text(run);
  return out.str();
}

}  // namespace tremor::analysis
