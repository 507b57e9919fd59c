// Configuration of libtremor-inject, parsed from the settings table
// (tremor/inject_settings.hpp). All values come from environment variables
// read once, right after MPI_Init / MPI_Init_thread returns.
//
// Injection is OFF by default: it starts only when TREMOR_INJECT_MEAN_US or
// TREMOR_INJECT_SD_US is above zero and TREMOR_INJECT_PROBABILITY is above
// zero. A variable that is unset or empty takes its default. Any invalid
// value disables the whole injector for the run (one message on rank 0's
// stderr); the application itself runs unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tremor/inject_settings.hpp"

namespace tremor::inject {

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
