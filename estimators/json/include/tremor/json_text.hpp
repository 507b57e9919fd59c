// The one way Tremor turns JSON into text (every report, comparison, fit and
// prediction, in the tool and at MPI_Finalize). Strings come from run files,
// command lines, host names and environment values, which may hold invalid
// UTF-8; nlohmann::json throws on those by default. Here each invalid byte
// becomes U+FFFD, so the output is always valid JSON. Header-only: it needs
// nlohmann::json, which the statistics library itself does not use.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace tremor {

// indent < 0: compact, one line; otherwise pretty-printed with that indent.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tremor
