// Tremor draws every HTML page with one renderer, tremor-plot's (Python, with
// the run page's style and tables). A C++ command hands it a view: a JSON
// object {"title", "marker", "blocks"}, each block {"heading": text},
// {"paragraph": text, "class": css class} or {"table": {"header", "rows",
// "highlighted", "text_columns"}} (scripts/tremor_plot/html_page.py). CLI only:
// this runs a program, so it is never linked into the profiler.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace tremor::analysis {

// Why no page came back; `renderer_missing`: tremor-plot or its Python could not be found.
class HtmlRendererFailure : public std::runtime_error {
 public:
  HtmlRendererFailure(const std::string& message, bool renderer_missing)
      : std::runtime_error(message), renderer_missing_(renderer_missing) {}
  [[nodiscard]] bool renderer_missing() const { return renderer_missing_; }

 private:
  bool renderer_missing_;
};

// The page of `view`, from `tremor-plot --view -`: the tremor-plot beside this
// executable (build tree or bin/ of an install), else the one on PATH.
std::string render_html_view(const nlohmann::json& view);

}  // namespace tremor::analysis
