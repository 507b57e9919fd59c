#include "option_values.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace tremor::cli {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string shown(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string describe(const RealRange& range) {
  return (range.low_open ? "(" : "[") + shown(range.low) + ", " + shown(range.high) + "]";
}

// A usage error naming the option and the text given (CLI11 prints it with the option's name).
[[noreturn]] void reject(const std::string& name, std::string_view text, const std::string& why) {
  throw CLI::ValidationError(name, "'" + std::string(text.substr(0, 80)) + "' " + why);
}

}  // namespace

std::optional<double> parse_real(std::string_view text, const RealRange& range, std::string& why) {
  text = trim(text);
  // from_chars rejects an explicit '+'; people do write it.
  const std::string_view digits = text.starts_with('+') ? text.substr(1) : text;
  double value = 0.0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error == std::errc::invalid_argument || end != digits.data() + digits.size()) {
    why = "is not a number";
    return std::nullopt;
  }
  if (error == std::errc::result_out_of_range || !std::isfinite(value)) {
    why = "is not a finite number in " + describe(range);
    return std::nullopt;
  }
  if ((range.low_open ? value <= range.low : value < range.low) || value > range.high) {
    why = "must be in " + describe(range);
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<double>> parse_real_list(std::string_view text, const RealRange& range, std::size_t max_count,
                                                   std::string& why) {
  std::vector<double> values;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    const std::optional<double> value = parse_real(item, range, why);
    if (!value) {
      why = "holds '" + std::string(item.substr(0, 40)) + "', which " + why + " (give a comma-separated list)";
      return std::nullopt;
    }
    values.push_back(*value);
    if (values.size() > max_count) {
      why = "lists more than " + std::to_string(max_count) + " values";
      return std::nullopt;
    }
    if (comma == std::string_view::npos) return values;
    text.remove_prefix(comma + 1);
  }
}

std::optional<std::uint64_t> parse_whole(std::string_view text, std::uint64_t low, std::uint64_t high,
                                         std::string& why) {
  text = trim(text);
  const std::string_view digits = text.starts_with('+') ? text.substr(1) : text;
  std::uint64_t value = 0;
  // Decimal only: no sign (a '-' is rejected here, not wrapped), no octal or hex.
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 10);
  const bool complete = error == std::errc() && end == digits.data() + digits.size() && !digits.empty();
  if (!complete || value < low || value > high) {
    why = "is not a whole number in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
    return std::nullopt;
  }
  return value;
}

CLI::Option* add_real_option(CLI::App* command, const std::string& name, std::function<void(double)> store,
                             const std::string& help, RealRange range) {
  return command
      ->add_option_function<std::string>(
          name,
          [name, store, range](const std::string& text) {
            std::string why;
            const std::optional<double> value = parse_real(text, range, why);
            if (!value) reject(name, text, why);
            store(*value);
          },
          help + " " + describe(range))
      ->type_name("NUMBER");
}

CLI::Option* add_real_list_option(CLI::App* command, const std::string& name,
                                  std::function<void(const std::vector<double>&)> store, const std::string& help,
                                  RealRange range, std::size_t max_count) {
  return command
      ->add_option_function<std::string>(
          name,
          [name, store, range, max_count](const std::string& text) {
            std::string why;
            const std::optional<std::vector<double>> values = parse_real_list(text, range, max_count, why);
            if (!values) reject(name, text, why);
            store(*values);
          },
          help + " (each in " + describe(range) + ")")
      ->type_name("LIST");
}

CLI::Option* add_whole_option(CLI::App* command, const std::string& name, std::function<void(std::uint64_t)> store,
                              const std::string& help, std::uint64_t low, std::uint64_t high) {
  return command
      ->add_option_function<std::string>(
          name,
          [name, store, low, high](const std::string& text) {
            std::string why;
            const std::optional<std::uint64_t> value = parse_whole(text, low, high, why);
            if (!value) reject(name, text, why);
            store(*value);
          },
          help + " [" + std::to_string(low) + ", " + std::to_string(high) + "]")
      ->type_name("N");
}

}  // namespace tremor::cli
