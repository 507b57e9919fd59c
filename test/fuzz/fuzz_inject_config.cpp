// libFuzzer harness: the injector's TREMOR_INJECT_* settings, read right
// after MPI_Init. The input's first two bytes are the rank (its low bits also
// set the world's size); the rest holds
// the values of the settings in table order, separated by NUL (a missing one
// is unset). An accepted configuration must lie within the documented
// ranges; a refused one must give one line naming the variable.
#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "fuzz_support.hpp"
#include "tremor/inject_config.hpp"

namespace {

namespace inject = tremor::inject;

std::array<std::optional<std::string>, inject::kSettings.size()> values;

const char* lookup(const char* name) {
  for (std::size_t i = 0; i < inject::kSettings.size(); ++i)
    if (inject::kSettings[i].name == name) return values[i] ? values[i]->c_str() : nullptr;
  return nullptr;
}

bool within(double value, double low, double high) { return std::isfinite(value) && value >= low && value <= high; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int rank = data[0] | (data[1] << 8);
  const auto pieces = tremor::fuzz::split(tremor::fuzz::as_text(data + 2, size - 2), std::string_view("\0", 1));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = i < pieces.size() ? std::optional<std::string>(pieces[i]) : std::nullopt;
  // A world of up to 3 more ranks than this one, so that TREMOR_INJECT_RANKS
  // may name ranks both inside and outside the run.
  const int world_size = rank + 1 + (data[0] & 3);
  const inject::ParseResult result = inject::parse_config(lookup, rank, world_size);
  if (!result.ok) {
    if (result.error.find("TREMOR_") == std::string::npos || result.error.find('\n') != std::string::npos)
      std::abort();
    return 0;
  }
  const inject::Config& c = result.config;
  const bool in_range = within(c.mean_us, 0, 1e8) && within(c.sd_us, 0, 1e8) && within(c.probability, 0, 1) &&
                        within(c.after_s, 0, 1e9) && (!c.has_end || (within(c.for_s, 0, 1e9) && c.for_s > 0)) &&
                        within(c.slowdown, 0, 100) && (c.families & ~inject::kAllFamilies) == 0;
  if (!in_range) std::abort();
  return 0;
}
