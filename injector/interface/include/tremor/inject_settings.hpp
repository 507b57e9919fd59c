// The injector's settings table (name, default, meaning): it drives the
// injector's parsing and messages, the README table and `tremor config`.
// Header only and free of MPI, so the `tremor` tool reads it without
// depending on the injector library.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace tremor::inject {

struct SettingInfo {
  std::string_view name;
  std::string_view default_value;
  std::string_view meaning;
};

enum class Setting : std::size_t {
  mean_us,
  sd_us,
  probability,
  calls,
  ranks,
  seed,
  mode,
  after_s,
  for_s,
  slowdown,
  trace,
  output_dir,
  count_
};

inline constexpr std::array<SettingInfo, static_cast<std::size_t>(Setting::count_)> kSettings{{
    {"TREMOR_INJECT_MEAN_US", "0",
     "Mean of the Normal delay per affected call, microseconds (>= 0, <= 1e8). "
     "Injection is off while both mean and SD are 0."},
    {"TREMOR_INJECT_SD_US", "0",
     "Standard deviation of the delay, microseconds (>= 0, <= 1e8). The Normal "
     "is truncated at 0 by redrawing negative values."},
    {"TREMOR_INJECT_PROBABILITY", "0.01", "Probability in [0,1] that an eligible call is delayed."},
    {"TREMOR_INJECT_CALLS", "p2p,coll,rma,mpiio,posix",
     "Comma list of call families to delay: p2p, coll, rma, mpiio, posix (or all; posix: calls on regular "
     "files only); docs/intercepted_calls.md gives each call's family."},
    {"TREMOR_INJECT_RANKS", "all",
     "Ranks of MPI_COMM_WORLD to delay: all, or a list of ranks and ranges such as 0,2-3, each a rank of the run."},
    {"TREMOR_INJECT_SEED", "1",
     "Seed (unsigned 64-bit); each rank's engine is seeded from seed and rank, so "
     "the same seed and call sequence give the same delays."},
    {"TREMOR_INJECT_MODE", "sleep",
     "How a delay is spent: sleep (clock_nanosleep, frees the core) or spin (busy wait)."},
    {"TREMOR_INJECT_AFTER_S", "0", "Start of the injection window, seconds after MPI_Init returned (>= 0)."},
    {"TREMOR_INJECT_FOR_S", "inf", "Length of the injection window in seconds (> 0), or inf for no end."},
    {"TREMOR_INJECT_SLOWDOWN", "0",
     "Persistent slow rank: each eligible call on the selected ranks first waits this factor times the time "
     "since the thread's previous intercepted call returned (0.2: the code between calls runs 20 % slower). "
     "Waits are paid once they add up to 200 us, and a sleep's overshoot is repaid from the next ones. "
     "In [0, 100]; independent of MEAN_US, SD_US and PROBABILITY, and limited by the window."},
    {"TREMOR_INJECT_TRACE", "none",
     "Comma list of call families (as TREMOR_INJECT_CALLS), or none: every call of these families is logged on "
     "every rank, delayed or not (requested_us and spent_us 0 when not), with its entry and return times; each "
     "rank's arrival at a collective is what an injected truth needs. Traced rows count toward the log's bound."},
    {"TREMOR_OUTPUT_DIR", ".", "Directory of the per-rank delay logs (tremor-inject_*.csv)."},
}};

constexpr const SettingInfo& info(Setting setting) noexcept { return kSettings[static_cast<std::size_t>(setting)]; }

}  // namespace tremor::inject
