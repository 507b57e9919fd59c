// The exit statuses of every `tremor` command (analyze, compare, plot, fit,
// predict, config) and of tremor-plot: one table. `tremor --help` prints it,
// `tremor config --markdown exit-codes` renders the README's copy, and
// scripts/tremor_plot/exit_codes.py repeats the numbers (test/hostile checks
// that both agree with this table).
#pragma once
#include <array>
#include <string_view>

namespace tremor::cli {

enum class Exit : int {
  ok = 0,
  usage = 1,
  bad_input = 2,
  gate = 3,
  output = 4,
  internal = 70,
  missing_program = 127,
};

struct ExitCodeInfo {
  Exit code;
  std::string_view meaning;
};

inline constexpr std::array kExitCodes{
    ExitCodeInfo{Exit::ok, "done"},
    ExitCodeInfo{Exit::usage,
                 "usage error: unknown option, a value that is not a finite number or is out of range, wrong number "
                 "of files"},
    ExitCodeInfo{Exit::bad_input,
                 "unreadable or invalid input: a run, spill or sample file that is missing, not a regular file, "
                 "damaged or holds values out of range"},
    ExitCodeInfo{Exit::gate, "`analyze --fail-on`: the run reached that interference class (CI gate)"},
    ExitCodeInfo{Exit::output,
                 "output error: the output names an input or a file that is not Tremor's own output of that kind, "
                 "or writing it failed (nothing is left half-written)"},
    ExitCodeInfo{Exit::internal, "internal error (a bug: please report it)"},
    ExitCodeInfo{Exit::missing_program,
                 "`tremor plot`, `compare --html`: tremor-plot, its Python or the tremor tool it needs is missing"},
};

constexpr int status(Exit code) { return static_cast<int>(code); }

}  // namespace tremor::cli
