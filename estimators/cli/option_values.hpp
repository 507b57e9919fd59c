// Numeric command-line options, parsed strictly. CLI11 2.1's own conversion
// lets NaN through its Range check, reads integers with strtoll/strtoull in
// base 0 (so "010" is 8, an overflow is clamped silently and "-1" becomes
// 2^64-1) and lets a list option swallow the file names after it. Every
// numeric option of every command is declared here instead: it takes exactly
// one argument (a list is one comma-separated argument), and a value that is
// not a finite decimal number in range is a usage error naming the option.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tremor::cli {

struct RealRange {
  double low = 0.0;
  double high = 0.0;
  bool low_open = false;  // (low, high] instead of [low, high]
};

// The value, or nullopt with `why` set ("is not a number", "must be in (0, 100]").
std::optional<double> parse_real(std::string_view text, const RealRange& range, std::string& why);
std::optional<std::vector<double>> parse_real_list(std::string_view text, const RealRange& range, std::size_t max_count,
                                                   std::string& why);
std::optional<std::uint64_t> parse_whole(std::string_view text, std::uint64_t low, std::uint64_t high,
                                         std::string& why);

CLI::Option* add_real_option(CLI::App* command, const std::string& name, std::function<void(double)> store,
                             const std::string& help, RealRange range);
// Comma-separated, e.g. --scales 2,4,8.
CLI::Option* add_real_list_option(CLI::App* command, const std::string& name,
                                  std::function<void(const std::vector<double>&)> store, const std::string& help,
                                  RealRange range, std::size_t max_count);
CLI::Option* add_whole_option(CLI::App* command, const std::string& name, std::function<void(std::uint64_t)> store,
                              const std::string& help, std::uint64_t low, std::uint64_t high);

}  // namespace tremor::cli
