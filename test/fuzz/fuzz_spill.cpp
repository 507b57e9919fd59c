// libFuzzer harness: arbitrary bytes as one run's crash-recovery spill files
// (pieces joined by kRunSeparator, one file each) through everything `tremor
// analyze --recover` does with them: parse_spill, recover_run, validate_run,
// the analysis and both reports. Checksums would stop nearly every mutation
// at the first one, so each piece's text and block checksums are repaired
// before it is parsed (the unrepaired piece is parsed too, for the checksum
// paths). Bad input must end in a reason; no input may crash, leak or hit
// undefined behaviour.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "tremor/analysis/analysis.hpp"
#include "tremor/analysis/parameters.hpp"
#include "tremor/analysis/report.hpp"
#include "tremor/json_text.hpp"
#include "tremor/run_file.hpp"
#include "tremor/spill.hpp"

namespace {

// Offsets in the 32-byte prefix (docs/spill.md).
constexpr std::size_t kTextLengthAt = 12;
constexpr std::size_t kTextChecksumAt = 24;

// The piece with every checksum the parser would check set to match, as far
// as the sizes it states fit the piece.
std::string with_checksums(std::string_view piece) {
  std::string bytes(piece);
  if (bytes.size() < tremor::kSpillPrefixBytes) return bytes;
  std::uint32_t text_bytes = 0;
  std::memcpy(&text_bytes, bytes.data() + kTextLengthAt, sizeof text_bytes);
  if (text_bytes > bytes.size() - tremor::kSpillPrefixBytes) return bytes;
  const std::uint64_t text_checksum =
      tremor::spill_text_checksum(std::span<const char>(bytes.data() + tremor::kSpillPrefixBytes, text_bytes));
  std::memcpy(bytes.data() + kTextChecksumAt, &text_checksum, sizeof text_checksum);
  std::size_t offset = tremor::kSpillPrefixBytes + text_bytes;
  tremor::SpillBlockHeader block;
  while (bytes.size() - offset >= sizeof block) {
    std::memcpy(&block, bytes.data() + offset, sizeof block);
    const std::uint64_t payload = std::uint64_t{block.kinds} * sizeof(tremor::SpillKindRecord) +
                                  std::uint64_t{block.segments} * sizeof(tremor::SpillSegmentRecord);
    if (payload > bytes.size() - offset - sizeof block) break;
    block.checksum =
        tremor::spill_block_checksum(block, std::span<const char>(bytes.data() + offset + sizeof block, payload));
    std::memcpy(bytes.data() + offset, &block, sizeof block);
    offset += sizeof block + payload;
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<tremor::SpillFile> files;
  std::string error;
  for (const std::string_view piece :
       tremor::fuzz::split(tremor::fuzz::as_text(data, size), tremor::fuzz::kRunSeparator)) {
    (void)tremor::parse_spill(std::span<const char>(piece.data(), piece.size()), error);
    const std::string repaired = with_checksums(piece);
    std::optional<tremor::SpillFile> file = tremor::parse_spill(std::span<const char>(repaired), error);
    if (!file) return 0;
    if (file->dropped_bytes > 0 && file->dropped_reason.empty()) std::abort();  // a dropped tail has its reason
    file->path = "rank" + std::to_string(files.size()) + ".spill";
    files.push_back(std::move(*file));
  }
  std::optional<tremor::RecoveredRun> recovered = tremor::recover_run(files, error);
  if (!recovered || !tremor::validate_run(recovered->run, error)) return 0;
  tremor::analysis::ParameterOverrides overrides;
  overrides.replicas = 8;  // as in fuzz_run_file: the same code per input, not a long run
  const auto parameters =
      tremor::analysis::parameters_from_stored_configuration(recovered->run.meta.configuration, overrides);
  const auto result = tremor::analysis::analyze_run(recovered->run, parameters);
  const std::string text =
      tremor::analysis::render_text_report(recovered->run, result, "fuzz.h5") +
      tremor::analysis::render_text_report(recovered->run, result, "fuzz.h5", tremor::ReportDetail::full_report);
  const std::string json = tremor::json_text(tremor::analysis::report_json(recovered->run, result, "fuzz.h5"), 2);
  if (text.empty() || json.empty()) std::abort();  // every recovered run gets a report
  return 0;
}
