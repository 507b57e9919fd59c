// Writes a run file with many groups (as a real application has: NWChem had
// 251), analysed and with /analysis, for the page and compare tests
// (check_many_groups.py). Usage: write_many_groups_run OUT.h5 clean|planted
//
// Group g (0-based) has segments of base duration 1 ms · (1 + g/100), so the
// groups' total times grow with g. In `planted` runs, kPlanted's groups get
// delays whose total shrinks along the list (by 0.8 per step) and whose group
// numbers are in no particular order: ordering by group number or by total
// time shows other groups first. Prints the truth as JSON on stdout: each
// planted group's base duration and planted extra time, largest first.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "synthetic_run.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/config.hpp"
#include "tremor/run_file.hpp"

namespace {

constexpr std::size_t kGroups = 200;
constexpr std::size_t kSegmentsPerGroup = 30;
constexpr std::size_t kDelayedSegmentsPerGroup = 4;
constexpr double kLargestDelayS = 0.004;
constexpr double kDelayRatio = 0.8;
// Largest planted total first.
constexpr std::size_t kPlanted[] = {187, 3, 142, 61, 199, 95, 28, 170, 116, 49, 133, 8, 77, 158, 104};

double base_duration_s(std::size_t group) { return 1e-3 * (1.0 + static_cast<double>(group) / 100.0); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[2], "clean") != 0 && std::strcmp(argv[2], "planted") != 0)) {
    std::fprintf(stderr, "usage: %s <new file.h5> clean|planted\n", argv[0]);
    return 2;
  }
  const bool planted = std::strcmp(argv[2], "planted") == 0;
  tremor::test::SyntheticSpec spec;
  spec.groups.clear();
  for (std::size_t g = 0; g < kGroups; ++g) {
    spec.groups.push_back({1e6 * (1.0 + static_cast<double>(g) / 100.0), base_duration_s(g), kSegmentsPerGroup});
  }
  spec.world_size = 2;
  spec.ranks_per_node = 2;
  spec.detail_ranks = 2;
  std::string truth = "{\"planted\": [";
  if (planted) {
    const std::vector<std::size_t> group_of = tremor::test::synthetic_group_of(spec);
    double delay = kLargestDelayS;
    for (std::size_t k = 0; k < std::size(kPlanted); ++k, delay *= kDelayRatio) {
      std::size_t delayed = 0;
      // Every seventh member of the group, from its fifth on.
      for (std::size_t s = 0, member = 0; s < group_of.size() && delayed < kDelayedSegmentsPerGroup; ++s) {
        if (group_of[s] != kPlanted[k]) continue;
        if (member++ % 7 == 4) {
          spec.delays.push_back({s, delay, 1});
          ++delayed;
        }
      }
      char item[160];
      std::snprintf(item, sizeof item, "%s{\"group\": %zu, \"base_duration_s\": %.9g, \"extra_s\": %.9g}",
                    k ? ", " : "", kPlanted[k], base_duration_s(kPlanted[k]), delay * static_cast<double>(delayed));
      truth += item;
    }
  }
  truth += "]}";

  tremor::RunData run = tremor::test::synthetic_run(spec);
  tremor::Config config;
  config.bootstrap_replicas = 20;  // 200 groups: keep the test's analysis short
  config.report = "none";
  run.meta.configuration = tremor::effective_configuration(config);
  // A command line longer than compare's text lines: its cell must be cut, not widen the table.
  run.meta.command_line = std::string("many_groups_app ") + argv[2] +
                          " --input /scratch/project/inputs/water_cluster_large_basis_set_def2-tzvp_"
                          "with_diffuse_functions_and_tight_convergence.nw --restart";
  std::string error;
  if (!tremor::write_run(argv[1], run, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  const tremor::analysis::AnalysisParameters parameters =
      tremor::analysis::parameters_from_stored_configuration(run.meta.configuration, {});
  const tremor::analysis::RunAnalysis result = tremor::analysis::analyze_run(run, parameters);
  const nlohmann::json report = tremor::analysis::report_json(run, result, argv[1]);
  auto appender = tremor::RunFileAppender::open(argv[1], error);
  if (!appender || !tremor::analysis::write_analysis(*appender, result, report) || !appender->close()) {
    std::fprintf(stderr, "append: %s\n", appender ? appender->error().c_str() : error.c_str());
    return 1;
  }
  std::printf("%s\n", truth.c_str());
  return 0;
}
