// Writes sample_run() to argv[1] (used by check_schema.py) and adds an
// /analysis group through RunFileAppender, as the analysis will.
#include <cstdio>
#include <string>
#include <vector>

#include "sample_run.hpp"
#include "tremor/run_file.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <new file.h5>\n", argv[0]);
    return 2;
  }
  std::string error;
  // Every documented item present: the job attributes are written only where known.
  tremor::RunData run = tremor::test::sample_run();
  run.meta.job = {"slurm", "sample", "alice", "node[01-02]", "0"};
  if (!tremor::write_run(argv[1], run, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  auto appender = tremor::RunFileAppender::open(argv[1], error);
  const std::vector<double> impact{0.5, 1.5};
  const std::vector<std::int64_t> members{12, 30};
  const std::vector<std::string> labels{"low", "high"};
  const bool ok = appender && appender->write("/analysis/groups", "impact_s", impact) &&
                  appender->write("/analysis/groups", "members", members) &&
                  appender->write("/analysis/groups", "label", labels) &&
                  appender->write_text("/analysis", "report_json", "{\"interference_percent\": 3.5}") &&
                  appender->set_number("/analysis", "interference_percent", 3.5) &&
                  appender->set_integer("/analysis", "groups_used", 2) &&
                  appender->set_text("/analysis/groups/impact_s", "unit", "s") && appender->close();
  if (!ok) {
    std::fprintf(stderr, "append: %s\n", appender ? appender->error().c_str() : error.c_str());
    return 1;
  }
  return 0;
}
