// What `tremor fleet runs` and `tremor fleet html` show, built from the
// database's rows: per application and day the lost % (median and
// interquartile range), and the fleet page's view for render_html_view.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tremor/fleet/ranking.hpp"
#include "tremor/fleet/store.hpp"

namespace tremor::fleet {

inline constexpr const char* kFleetHtmlMarker = "<meta name=\"generator\" content=\"tremor fleet\">";

struct ApplicationDay {
  std::string application;  // "(unknown)" when the report named none
  std::string day;          // UTC, YYYY-MM-DD
  long long runs = 0;
  long long estimated = 0;                  // runs with a lost %
  double median = 0.0, q1 = 0.0, q3 = 0.0;  // of lost %, over the estimated runs (NaN when none)
};

// Linear-interpolation quantile (type 7, numpy's default) of ascending values.
double quantile(const std::vector<double>& ascending, double q);
// Rows of `runs` sorted by application then start, as FleetStore::runs returns them.
std::vector<ApplicationDay> application_days(const std::vector<RunRow>& runs);

struct ViewLimits {
  std::size_t nodes = 40;  // heat-map rows: the top of the ranking
  std::size_t days = 60;   // heat-map columns: the latest days with runs
};
// {"title", "marker", "blocks"}: a heading, the heat map of lost seconds per
// node and day, and the ranking table.
nlohmann::json fleet_view(const std::vector<NodeScore>& ranking, const std::vector<NodeDay>& days,
                          const ViewLimits& limits = {});

}  // namespace tremor::fleet
