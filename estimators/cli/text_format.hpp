// Small text forms the CLI's tables and refresh lines share.
#pragma once
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

namespace tremor::cli {

// 2026-12-07T17:20:41Z: UTC to the second.
inline std::string utc_text(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm parts{};
  gmtime_r(&whole, &parts);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// `digits` decimals; "-" for a value that is not finite.
inline std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace tremor::cli
