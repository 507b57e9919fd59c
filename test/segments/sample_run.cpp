#include "sample_run.hpp"

#include <limits>

#include "tremor/code_column.hpp"
#include "tremor/environment_assembly.hpp"

namespace tremor::test {

RunData sample_run(std::size_t world_size, std::size_t segments) {
  RunData run;
  RunMetadata& meta = run.meta;
  meta.tremor_version = "0.1.0";
  meta.command_line = "./app --size 128 \"quoted arg\"";
  meta.mpi_flavour = "mpich";
  meta.mpi_library_version = "MPICH Version: 4.0.2\nMPICH Release date: …";  // non-ASCII on purpose
  meta.world_size = static_cast<std::int32_t>(world_size);
  meta.node_count = 2;
  meta.counter_source = tremor::CounterKind::papi;
  meta.counter_events = {"PAPI_FP_INS", "sde:::Demo::work"};
  meta.counter_unit = "instructions";
  meta.job_id = "12345";
  meta.start_time_unix = 1.7e9 + 0.25;
  meta.end_time_unix = 1.7e9 + 12.75;
  meta.run_time_s = 12.5;
  meta.partial = true;
  meta.partial_reason = "abort";
  meta.configuration = {{"TREMOR_OUTPUT_DIR", "/tmp"}, {"TREMOR_LOG_LEVEL", "info"}};
  meta.call_names = {"MPI_Barrier", "MPI_Allreduce", "MPI_Finalize"};

  for (std::size_t r = 0; r < world_size; ++r)
    run.ranks.push_back({static_cast<std::int32_t>(r), "node" + std::to_string(r / 2), static_cast<std::int32_t>(r / 2),
                         static_cast<std::int32_t>(r % 2),
                         r == 1 ? std::numeric_limits<double>::quiet_NaN() : 0.125 * static_cast<double>(r),
                         r == 1 ? std::numeric_limits<double>::quiet_NaN() : 0.0625 * static_cast<double>(r),
                         r == 1 ? std::numeric_limits<double>::quiet_NaN() : 0.03125 * static_cast<double>(r),
                         r == 2 ? std::numeric_limits<double>::quiet_NaN() : 0.375 * static_cast<double>(r)});
  // One bin per log code, ascending, as the profiler writes them.
  for (std::size_t m = 0; m < kQuantizedCount; ++m)
    for (std::size_t b = 0; b < 4 + m; ++b) {
      const auto code = static_cast<std::uint16_t>(20000 + 700 * b + 13 * m);
      run.global_bins[m].push_back(code_bin(code, 3 + b, code_scale(static_cast<Quantized>(m))));
    }
  SegmentTable& table = run.segments;
  for (std::size_t s = 0; s < segments; ++s) {
    const double x = static_cast<double>(s) + 0.5;
    table.duration_s.push_back(0.01 * x);
    table.duration_upper_s.push_back(0.011 * x);
    table.work.push_back(1e6 * x);
    table.mpi_time_s.push_back(0.002 * x);
    table.io_time_s.push_back(0.0001 * x);
    table.signature.push_back(0xF000000000000000ULL + s);  // needs all 64 bits
    table.late_rank.push_back(static_cast<std::int32_t>(s % world_size));
    table.late_wait_s.push_back(1e-5 * x);
    table.closing_call.push_back(static_cast<std::uint16_t>(s % 3));
  }
  DetailRanks& detail = run.detail;
  detail.segments = segments;
  for (std::size_t r = 0; r < world_size; ++r) {
    detail.ranks.push_back(static_cast<std::int32_t>(r));
    detail.signature_offset.push_back(static_cast<std::uint32_t>(detail.signatures.size()));
    for (std::size_t e = 0; e < 2; ++e) {
      FeatureVector f{};
      for (std::size_t i = 0; i < kFeatureCount; ++i) f[i] = r * 1000 + e * 100 + i;
      detail.signatures.push_back(f);
    }
  }
  for (std::size_t m = 0; m < kQuantizedCount; ++m)
    for (std::size_t r = 0; r < world_size; ++r)
      for (std::size_t s = 0; s < segments; ++s)
        detail.global_index[m].push_back(static_cast<std::uint16_t>((r + s) % run.global_bins[m].size()));
  for (std::size_t r = 0; r < world_size; ++r)
    for (std::size_t s = 0; s < segments; ++s) detail.signature_index.push_back(static_cast<std::uint32_t>(s % 2));
  for (std::size_t r = 0; r < world_size; ++r) {
    QuantizedValues totals{};
    FeatureVector feature_totals{};
    for (std::size_t m = 0; m < kQuantizedCount; ++m) totals[m] = 0.1 * static_cast<double>(r + m);
    for (std::size_t f = 0; f < kFeatureCount; ++f) feature_totals[f] = (r + 1) * (f + 7);
    run.raw_totals.push_back(totals);
    run.raw_feature_totals.push_back(feature_totals);
  }
  run.injection = {{0, 0.5, "MPI_Allreduce", 100.0, 101.5, 17}, {2, 1.25, "write", 50.0, 49.0, -1}};
  // Every rank collected; rank 1 runs another binary build.
  std::vector<ProcessEnvironment> collected(world_size);
  for (std::size_t r = 0; r < world_size; ++r) {
    ProcessEnvironment& mine = collected[r];
    if (r % 2 == 0) {
      for (std::string_view name : kNodeFacts)
        mine.node.emplace_back(std::string(name), name == "governor"
                                                      ? unknown_fact("/sys/devices/system/cpu/cpu0/cpufreq: missing")
                                                      : "value of " + std::string(name));
      mine.node.front().second = "Test CPU\nsecond line";
    }
    mine.process = {{"binary_path", "/apps/app"}, {"binary_build_id", r == 1 ? "beef" : "dead"}};
    mine.affinity = std::to_string(r % 2);
    mine.variables = {{"OMP_NUM_THREADS", "3"}};
  }
  run.environment = assemble_environment(run.ranks, collected);
  return run;
}

}  // namespace tremor::test
