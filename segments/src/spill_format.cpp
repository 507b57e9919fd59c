// Encoding and decoding of the crash-recovery spill (docs/spill.md).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <system_error>

#include "run_file_layout.hpp"
#include "tremor/log_code.hpp"
#include "tremor/spill.hpp"

namespace tremor {
namespace {

constexpr std::uint64_t kMultiplier = 0x100000001B3ULL * 0x9E3779B97F4A7C15ULL | 1ULL;

std::uint64_t finish_hash(std::uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// One multiply per 8 bytes: cheap enough for every boundary, and any single
// changed or truncated word changes the result.
std::uint64_t checksum_of(const void* data, std::size_t bytes) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = 0x6A09E667F3BCC908ULL ^ bytes;
  std::size_t i = 0;
#pragma GCC unroll 4  // the loop's own compare and branch were a third of it
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    h = (h ^ word) * kMultiplier;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * kMultiplier;
  return finish_hash(h);
}

struct Prefix {
  std::array<char, 8> magic;
  std::uint32_t version;
  std::uint32_t text_bytes;
  std::uint32_t record_bytes;
  std::uint16_t quantized_count;
  std::uint16_t feature_count;
  std::uint64_t text_checksum;
};
static_assert(sizeof(Prefix) == kSpillPrefixBytes);

std::string one_line(std::string_view value) {
  std::string out(value);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

std::string number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

template <typename Int>
bool to_int(std::string_view text, Int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

bool to_real(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

bool parse_text(std::string_view text, SpillHeader& h, std::string& error) {
  std::map<std::string, std::string, std::less<>> single;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty()) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      error = "header line '" + std::string(line.substr(0, 60)) + "' is not key=value";
      return false;
    }
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "counter_event") {
      h.counter_events.emplace_back(value);
    } else if (key == "call_name") {
      h.call_names.emplace_back(value);
    } else if (key == "environment") {
      h.environment.append(value).append("\n");
    } else if (key == "config") {
      const std::size_t inner = value.find('=');
      h.configuration.emplace_back(std::string(value.substr(0, inner)),
                                   inner == std::string_view::npos ? "" : std::string(value.substr(inner + 1)));
    } else {
      single[std::string(key)] = std::string(value);
    }
  }
  auto get = [&](const char* key) -> std::string {
    const auto it = single.find(key);
    return it == single.end() ? std::string() : it->second;
  };
  if (!to_int(get("run_id"), h.run_id) || !to_int(get("rank"), h.rank) || !to_int(get("world_size"), h.world_size) ||
      !to_int(get("pid"), h.pid) || !to_real(get("start_time_unix"), h.start_time_unix) ||
      !to_real(get("seconds_per_tick"), h.seconds_per_tick)) {
    error = "header lacks a valid run_id, rank, world_size, pid, start_time_unix or seconds_per_tick";
    return false;
  }
  if (h.world_size < 1 || h.rank < 0 || h.rank >= h.world_size) {
    error = "header has rank " + std::to_string(h.rank) + " outside a world of " + std::to_string(h.world_size);
    return false;
  }
  h.host = get("host");
  h.program = get("program");
  h.command_line = get("command_line");
  h.job_id = get("job_id");
  h.job.scheduler = get(layout::kJobSchedulerAttribute);
  for (const auto& [key, member] : layout::kJobStrings)
    if (const auto it = single.find(key); it != single.end()) h.job.*member = it->second;
  h.tremor_version = get("tremor_version");
  h.mpi_flavour = get("mpi_flavour");
  h.mpi_library_version = get("mpi_library_version");
  const std::optional<CounterKind> counter_source = counter_kind_named(get("counter_source"));
  if (!counter_source) {
    error = "header's counter_source '" + get("counter_source") + "' is not papi, thread_cputime or thread_oncpu";
    return false;
  }
  h.counter_source = *counter_source;
  h.counter_unit = get("counter_unit");
  return true;
}

}  // namespace

std::string_view describe(SpillEnd end) {
  switch (end) {
    case SpillEnd::none:
      return "unknown: killed (signal, walltime) or lost before its end record";
    case SpillEnd::abort:
      return "MPI_Abort";
    case SpillEnd::exit_without_finalize:
      return "exit without MPI_Finalize";
    case SpillEnd::finalize_unsaved:
      return "MPI_Finalize reached but the run file was not written";
  }
  return "unknown";
}

std::uint64_t spill_block_checksum(const SpillBlockHeader& header, std::span<const char> records) noexcept {
  const std::uint64_t head = checksum_of(&header, offsetof(SpillBlockHeader, checksum));
  return finish_hash(head ^ (checksum_of(records.data(), records.size()) * kMultiplier));
}

std::uint64_t spill_text_checksum(std::span<const char> text) noexcept { return checksum_of(text.data(), text.size()); }

char* begin_spill_block(char* block, std::span<const SpillKindRecord> kinds) noexcept {
  char* records = block + sizeof(SpillBlockHeader);
  if (!kinds.empty()) std::memcpy(records, kinds.data(), kinds.size_bytes());
  return records + kinds.size_bytes();
}

void seal_spill_block(char* block, std::uint64_t first_segment, std::size_t kinds, std::size_t segments) noexcept {
  SpillBlockHeader header;
  header.tag = SpillBlockHeader::kBlockTag;
  header.first_segment = first_segment;
  header.segments = static_cast<std::uint32_t>(segments);
  header.kinds = static_cast<std::uint32_t>(kinds);
  const std::size_t record_bytes = spill_block_bytes(kinds, segments) - sizeof header;
  header.checksum = spill_block_checksum(header, std::span<const char>(block + sizeof header, record_bytes));
  std::memcpy(block, &header, sizeof header);
}

void write_spill_end(char* out, std::uint64_t segment_count, SpillEnd reason) noexcept {
  SpillBlockHeader header;
  header.tag = SpillBlockHeader::kEndTag;
  header.end_reason = static_cast<std::uint16_t>(reason);
  header.first_segment = segment_count;
  header.checksum = spill_block_checksum(header, {});
  std::memcpy(out, &header, sizeof header);
}

void append_spill_block(std::vector<char>& out, std::uint64_t first_segment, std::span<const SpillKindRecord> kinds,
                        std::span<const SpillSegmentRecord> segments) {
  const std::size_t start = out.size();
  out.resize(start + spill_block_bytes(kinds.size(), segments.size()));
  char* records = begin_spill_block(out.data() + start, kinds);
  if (!segments.empty()) std::memcpy(records, segments.data(), segments.size_bytes());
  seal_spill_block(out.data() + start, first_segment, kinds.size(), segments.size());
}

void append_spill_end(std::vector<char>& out, std::uint64_t segment_count, SpillEnd reason) {
  const std::size_t start = out.size();
  out.resize(start + kSpillEndBytes);
  write_spill_end(out.data() + start, segment_count, reason);
}

std::vector<char> encode_spill_header(const SpillHeader& h) {
  std::string text;
  auto line = [&text](std::string_view key, std::string_view value) {
    text.append(key).append("=").append(one_line(value)).append("\n");
  };
  line("run_id", std::to_string(h.run_id));
  line("rank", std::to_string(h.rank));
  line("world_size", std::to_string(h.world_size));
  line("pid", std::to_string(h.pid));
  line("host", h.host);
  line("program", h.program);
  line("command_line", h.command_line);
  line("job_id", h.job_id);
  // The job record under the run file's attribute names, each only where known.
  if (!h.job.scheduler.empty()) line(layout::kJobSchedulerAttribute, h.job.scheduler);
  for (const auto& [key, member] : layout::kJobStrings)
    if (const auto& value = h.job.*member) line(key, *value);
  line("tremor_version", h.tremor_version);
  line("mpi_flavour", h.mpi_flavour);
  line("mpi_library_version", h.mpi_library_version);
  line("counter_source", std::string(to_string(h.counter_source)));
  line("counter_unit", h.counter_unit);
  line("start_time_unix", number(h.start_time_unix));
  line("seconds_per_tick", number(h.seconds_per_tick));
  for (const std::string& event : h.counter_events) line("counter_event", event);
  for (const auto& [name, value] : h.configuration) line("config", name + "=" + value);
  for (const std::string& name : h.call_names) line("call_name", name);
  // Already one line per fact (encode_environment escapes line breaks).
  for (std::string_view rest = h.environment; !rest.empty();) {
    const std::size_t newline = rest.find('\n');
    line("environment", rest.substr(0, newline));
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
  }
  if (text.size() > kSpillMaxTextBytes) text.resize(kSpillMaxTextBytes);  // a giant command line, cut

  Prefix prefix{kSpillMagic,
                kSpillVersion,
                static_cast<std::uint32_t>(text.size()),
                static_cast<std::uint32_t>(kSpillRecordBytes),
                static_cast<std::uint16_t>(kQuantizedCount),
                static_cast<std::uint16_t>(kFeatureCount),
                checksum_of(text.data(), text.size())};
  std::vector<char> bytes(sizeof prefix + text.size());
  std::memcpy(bytes.data(), &prefix, sizeof prefix);
  std::memcpy(bytes.data() + sizeof prefix, text.data(), text.size());
  return bytes;
}

std::optional<SpillFile> parse_spill_header(std::span<const char> bytes, SpillCursor& cursor, std::string& error) {
  Prefix prefix{};
  if (bytes.size() < sizeof prefix) {
    error = "too short for a spill header (" + std::to_string(bytes.size()) + " bytes)";
    return std::nullopt;
  }
  std::memcpy(&prefix, bytes.data(), sizeof prefix);
  if (prefix.magic != kSpillMagic) {
    error = "not a Tremor spill file (bad magic)";
    return std::nullopt;
  }
  if (prefix.version != kSpillVersion) {
    error = "spill format version " + std::to_string(prefix.version) + " (this build reads version " +
            std::to_string(kSpillVersion) + ")";
    return std::nullopt;
  }
  if (prefix.record_bytes != kSpillRecordBytes || prefix.quantized_count != kQuantizedCount ||
      prefix.feature_count != kFeatureCount) {
    error = "written by a Tremor build with other metrics (" + std::to_string(prefix.quantized_count) + " + " +
            std::to_string(prefix.feature_count) + ")";
    return std::nullopt;
  }
  if (prefix.text_bytes > kSpillMaxTextBytes || prefix.text_bytes > bytes.size() - sizeof prefix) {
    error = "header truncated";
    return std::nullopt;
  }
  const char* text = bytes.data() + sizeof prefix;
  if (checksum_of(text, prefix.text_bytes) != prefix.text_checksum) {
    error = "header corrupt (checksum mismatch)";
    return std::nullopt;
  }
  SpillFile file;
  if (!parse_text(std::string_view(text, prefix.text_bytes), file.header, error)) return std::nullopt;
  cursor = SpillCursor{sizeof prefix + prefix.text_bytes, {}};
  return file;
}

void take_spill_blocks(std::span<const char> tail, SpillFile& file, SpillCursor& cursor) {
  std::size_t offset = 0;  // in `tail`
  std::vector<SpillKindRecord>& kinds = cursor.kinds;
  file.dropped_reason.clear();
  // One block; false (with the reason) ends the stream there.
  auto take_block = [&]() -> bool {
    const std::uint64_t n = file.segments.size();
    SpillBlockHeader block;
    if (tail.size() - offset < sizeof block) {
      file.dropped_reason = "truncated last block";
      return false;
    }
    std::memcpy(&block, tail.data() + offset, sizeof block);
    const std::uint64_t payload = std::uint64_t{block.kinds} * sizeof(SpillKindRecord) +
                                  std::uint64_t{block.segments} * sizeof(SpillSegmentRecord);
    if (payload > tail.size() - offset - sizeof block) {
      file.dropped_reason = "truncated last block";
      return false;
    }
    const char* records = tail.data() + offset + sizeof block;
    if (spill_block_checksum(block, std::span<const char>(records, payload)) != block.checksum) {
      file.dropped_reason = "the block of segment " + std::to_string(n) + " fails its checksum";
      return false;
    }
    if (block.first_segment != n) {
      file.dropped_reason = "the block of segment " + std::to_string(n) + " is out of sequence";
      return false;
    }
    if (block.tag == SpillBlockHeader::kEndTag && payload == 0 && block.end_reason >= 1 && block.end_reason <= 3) {
      file.end = static_cast<SpillEnd>(block.end_reason);
      offset += sizeof block;
      if (offset < tail.size()) file.dropped_reason = "data after the end record";
      return false;
    }
    if (block.tag != SpillBlockHeader::kBlockTag) {
      file.dropped_reason = "the block of segment " + std::to_string(n) + " has an unknown tag";
      return false;
    }
    const std::size_t known_kinds = kinds.size();
    for (std::uint32_t k = 0; k < block.kinds; ++k) {
      SpillKindRecord kind;
      std::memcpy(&kind, records + std::size_t{k} * sizeof kind, sizeof kind);
      kinds.push_back(kind);
    }
    const char* segment_records = records + std::size_t{block.kinds} * sizeof(SpillKindRecord);
    std::vector<SpilledSegment> decoded(block.segments);
    for (std::uint32_t i = 0; i < block.segments; ++i) {
      SpillSegmentRecord record;
      std::memcpy(&record, segment_records + std::size_t{i} * sizeof record, sizeof record);
      if (record.kind >= kinds.size()) {
        kinds.resize(known_kinds);
        file.dropped_reason = "segment " + std::to_string(n + i) + " names an unknown kind";
        return false;
      }
      SpilledSegment& segment = decoded[i];
      segment.sequence = n + i;
      segment.closing_call = kinds[record.kind].closing_call;
      segment.features = kinds[record.kind].features;
      for (std::size_t m = 0; m < kQuantizedCount; ++m)
        segment.values[m] = decode_value(record.codes[m], code_scale(static_cast<Quantized>(m)));
    }
    file.segments.insert(file.segments.end(), decoded.begin(), decoded.end());
    offset += sizeof block + payload;
    return true;
  };
  while (file.end == SpillEnd::none && offset < tail.size() && take_block()) {
  }
  cursor.offset += offset;
}

std::optional<SpillFile> parse_spill(std::span<const char> bytes, std::string& error) {
  SpillCursor cursor;
  std::optional<SpillFile> file = parse_spill_header(bytes, cursor, error);
  if (!file) return std::nullopt;
  take_spill_blocks(bytes.subspan(cursor.offset), *file, cursor);
  file->dropped_bytes = bytes.size() - cursor.offset;
  if (file->dropped_bytes > 0 && file->dropped_reason.empty()) file->dropped_reason = "truncated last block";
  return file;
}

std::optional<SpillFile> read_spill(const std::filesystem::path& path, std::string& error) {
  std::error_code code;
  if (!std::filesystem::is_regular_file(path, code)) {
    error = "not a regular file";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = "cannot be read";
    return std::nullopt;
  }
  auto file = parse_spill(bytes, error);
  if (file) file->path = path;
  return file;
}

std::filesystem::path spill_path(const std::filesystem::path& stem, int rank) {
  return stem.string() + ".r" + std::to_string(rank) + std::string(kSpillExtension);
}

namespace {

// "<stem>.r<rank>.spill" -> (stem, rank)
std::optional<std::pair<std::string, int>> split_spill_name(const std::string& name) {
  if (name.size() <= kSpillExtension.size() || !name.ends_with(kSpillExtension)) return std::nullopt;
  const std::string base = name.substr(0, name.size() - kSpillExtension.size());
  const std::size_t dot = base.rfind(".r");
  int rank = -1;
  if (dot == std::string::npos || !to_int(std::string_view(base).substr(dot + 2), rank) || rank < 0) {
    return std::nullopt;
  }
  return std::pair{base.substr(0, dot), rank};
}

}  // namespace

std::vector<std::filesystem::path> find_spill_files(const std::vector<std::string>& names, std::string& error) {
  std::map<std::pair<std::string, int>, std::filesystem::path> found;  // (stem, rank) -> path
  for (const std::string& name : names) {
    const std::filesystem::path given(name);
    std::string stem_name = given.filename().string();
    if (const auto split = split_spill_name(stem_name)) stem_name = split->first;
    const std::filesystem::path directory = given.has_parent_path() ? given.parent_path() : ".";
    std::error_code code;
    std::size_t matches = 0;
    for (std::filesystem::directory_iterator it(directory, code), end; !code && it != end; it.increment(code)) {
      const auto split = split_spill_name(it->path().filename().string());
      if (split && split->first == stem_name) {
        found[{directory.string() + "/" + split->first, split->second}] = it->path();
        ++matches;
      }
    }
    if (matches == 0) {
      error = "no spill files '" + (directory / stem_name).string() + ".r<rank>.spill'" +
              (code ? " (" + code.message() + ")" : "");
      return {};
    }
  }
  std::vector<std::pair<std::pair<int, std::string>, std::filesystem::path>> ordered;
  for (const auto& [key, path] : found) ordered.push_back({{key.second, key.first}, path});
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : ordered) paths.push_back(entry.second);
  return paths;
}

}  // namespace tremor
