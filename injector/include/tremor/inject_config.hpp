// Configuration of libtremor-inject: one table of settings (name, default,
// meaning) that drives parsing, validation messages, the README table and the
// `tremor config` listing. All values come from environment variables read
// once, right after MPI_Init / MPI_Init_thread returns.
//
// Injection is OFF by default: it starts only when TREMOR_INJECT_MEAN_US or
// TREMOR_INJECT_SD_US is above zero and TREMOR_INJECT_PROBABILITY is above
// zero. A variable that is unset or empty takes its default. Any invalid
// value disables the whole injector for the run (one message on rank 0's
// stderr); the application itself runs unchanged.
#pragma once

#include <array>
#include <cstdint>
#include <string>
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
     "Comma list of call families to delay: p2p, coll, rma, mpiio, posix (or all); "
     "docs/intercepted_calls.md gives each call's family."},
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

// Bit per call family; TREMOR_INJECT_CALLS is parsed into a mask of these.
enum Family : unsigned { p2p = 1u, coll = 2u, mpiio = 4u, posix = 8u, rma = 16u };
inline constexpr unsigned kAllFamilies = p2p | coll | mpiio | posix | rma;

enum class DelayMode { sleep, spin };

struct Config {
  double mean_us = 0.0;
  double sd_us = 0.0;
  double probability = 0.01;
  unsigned families = kAllFamilies;
  bool rank_selected = true;  // TREMOR_INJECT_RANKS evaluated for this rank
  std::uint64_t seed = 1;
  DelayMode mode = DelayMode::sleep;
  double after_s = 0.0;
  double for_s = 0.0;     // meaningful only when has_end is true
  bool has_end = false;   // false: window never closes (inf)
  double slowdown = 0.0;  // factor of the time since the previous call's return
  unsigned traced = 0;    // families logged on every call (TREMOR_INJECT_TRACE)
  std::string output_dir = ".";

  // True when random delays are drawn (a mean or SD and a probability above 0).
  bool random_delays() const noexcept { return (mean_us > 0.0 || sd_us > 0.0) && probability > 0.0; }
  // True when this rank can inject at all.
  bool injecting() const noexcept { return (random_delays() || slowdown > 0.0) && families != 0 && rank_selected; }
  // True when this rank logs anything: it injects, or it traces calls.
  bool logging() const noexcept { return injecting() || traced != 0; }
  // True when a time window restricts injection (needs a clock read per call).
  bool has_window() const noexcept { return after_s > 0.0 || has_end; }
};

struct ParseResult {
  Config config;
  bool ok = true;
  std::string error;  // one line naming the variable, bad value, consequence
};

// Looks a variable up; returns nullptr when unset (getenv in production).
using EnvLookup = const char* (*)(const char* name);

// Parses and validates every setting for the given MPI_COMM_WORLD rank of a
// run of world_size processes (TREMOR_INJECT_RANKS may name only its ranks).
ParseResult parse_config(EnvLookup lookup, int rank, int world_size);

// Individual validators, exposed for unit tests. Each returns false on a bad
// value and leaves `out` untouched.
bool parse_nonnegative(std::string_view text, double max_value, double& out);
bool parse_probability(std::string_view text, double& out);
bool parse_families(std::string_view text, unsigned& out);
// `largest`, if given, receives the largest rank named (-1 for "all").
bool parse_rank_selection(std::string_view text, int rank, bool& selected, long long* largest = nullptr);
bool parse_seed(std::string_view text, std::uint64_t& out);

}  // namespace tremor::inject
