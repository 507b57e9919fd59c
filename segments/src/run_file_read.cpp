// Reader of the run file: every dataset is checked for presence, type class,
// rank and shape, and stored indices for range, before RunData is returned.
#include <algorithm>
#include <limits>

#include "environment_file.hpp"
#include "hdf5_util.hpp"
#include "run_file_layout.hpp"
#include "tremor/run_file.hpp"

namespace tremor {
namespace {

using hdf5::Handle;
using hdf5::same_length;

bool fail(std::string& error, std::string message) {
  error = std::move(message);
  return false;
}

// Schema 4 stores the kind as an enum, converted by member name; older files
// store its name.
bool read_counter_source(hid_t root, CounterKind& kind, std::string& error) {
  const std::string name = layout::kCounterSourceAttribute;
  if (H5Aexists(root, name.c_str()) <= 0) return fail(error, "missing attribute /@" + name);
  H5T_class_t type_class = H5T_NO_CLASS;
  {
    Handle attribute(H5Aopen(root, name.c_str(), H5P_DEFAULT), H5Aclose);
    Handle file_type(attribute.valid() ? H5Aget_type(attribute.get()) : H5I_INVALID_HID, H5Tclose);
    if (file_type.valid()) type_class = H5Tget_class(file_type.get());
  }
  if (type_class == H5T_STRING) {
    std::string text;
    if (!hdf5::read_string_attribute(root, name, text, error)) return false;
    const std::optional<CounterKind> named = counter_kind_named(text);
    if (!named)
      return fail(error, "attribute /@" + name + " '" + text + "' is not papi, thread_cputime or thread_oncpu");
    kind = *named;
    return true;
  }
  if (type_class != H5T_ENUM) return fail(error, "attribute /@" + name + " is neither an enum nor a string");
  Handle attribute(H5Aopen(root, name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle space(attribute.valid() ? H5Aget_space(attribute.get()) : H5I_INVALID_HID, H5Sclose);
  const Handle memory_type = hdf5::uint8_enum_type(layout::kCounterKindNames);
  std::uint8_t value = 0xff;  // a member this build does not know converts to all ones
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1 || !memory_type.valid() ||
      H5Aread(attribute.get(), memory_type.get(), &value) < 0 || value >= kCounterKinds.size())
    return fail(error, "attribute /@" + name + " is not one of papi, thread_cputime or thread_oncpu");
  kind = kCounterKinds[value];
  return true;
}

// Only the attributes present: the job record is written where known.
bool read_job(hid_t root, JobRecord& job, std::string& error) {
  job = JobRecord{};
  if (H5Aexists(root, layout::kJobSchedulerAttribute) > 0 &&
      !hdf5::read_string_attribute(root, layout::kJobSchedulerAttribute, job.scheduler, error))
    return false;
  for (const auto& [name, member] : layout::kJobStrings) {
    if (H5Aexists(root, name) <= 0) continue;
    std::string value;
    if (!hdf5::read_string_attribute(root, name, value, error)) return false;
    job.*member = std::move(value);
  }
  return true;
}

bool read_metadata(hid_t file, RunMetadata& meta, std::string& error) {
  Handle root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
  if (!root.valid()) return fail(error, "cannot open the root group");
  const std::string version_name(layout::kSchemaVersionAttribute);
  if (H5Aexists(root.get(), version_name.c_str()) <= 0)
    return fail(error, "not a Tremor run file: no '" + version_name + "' attribute");
  std::int32_t version = 0;
  if (!hdf5::read_attribute(root.get(), version_name, H5T_NATIVE_INT32, true, &version, error)) return false;
  if (version < kOldestReadableSchemaVersion || version > kSchemaVersion)
    return fail(error, "unsupported schema version " + std::to_string(version) + " (this build reads versions " +
                           std::to_string(kOldestReadableSchemaVersion) + " to " + std::to_string(kSchemaVersion) +
                           ")");
  meta.schema_version = version;
  for (const auto& [name, member] : layout::kMetadataStrings)
    if (!hdf5::read_string_attribute(root.get(), name, meta.*member, error)) return false;
  for (const auto& [name, member] : layout::kMetadataIntegers)
    if (!hdf5::read_attribute(root.get(), name, H5T_NATIVE_INT32, true, &(meta.*member), error)) return false;
  for (const auto& [name, member] : layout::kMetadataNumbers)
    if (!hdf5::read_attribute(root.get(), name, H5T_NATIVE_DOUBLE, false, &(meta.*member), error)) return false;
  if (!read_counter_source(root.get(), meta.counter_source, error)) return false;
  std::uint8_t partial = 0;
  if (!hdf5::read_attribute(root.get(), layout::kPartialAttribute, H5T_NATIVE_UINT8, true, &partial, error))
    return false;
  meta.partial = partial != 0;
  if (H5Aexists(root.get(), layout::kPartialReasonAttribute) > 0 &&
      !hdf5::read_string_attribute(root.get(), layout::kPartialReasonAttribute, meta.partial_reason, error))
    return false;
  if (!read_job(root.get(), meta.job, error)) return false;
  if (!validate_run_metadata(meta, error)) return false;
  std::vector<std::string> names, values;
  if (!hdf5::read_strings(file, layout::kCounterEvents, meta.counter_events, error) ||
      !hdf5::read_strings(file, layout::kCallNames, meta.call_names, error) ||
      !hdf5::read_strings(file, "/configuration/name", names, error) ||
      !hdf5::read_strings(file, "/configuration/value", values, error) ||
      !same_length(values.size(), names.size(), "/configuration/value", error))
    return false;
  meta.configuration.clear();
  for (std::size_t i = 0; i < names.size(); ++i) meta.configuration.emplace_back(names[i], values[i]);
  return true;
}

bool read_ranks(hid_t file, std::size_t world_size, std::vector<RankInfo>& ranks, std::string& error) {
  std::vector<std::int32_t> rank, node_id, local_rank;
  std::vector<std::string> hostname;
  if (!hdf5::read_vector(file, "/ranks/rank", rank, error) ||
      !hdf5::read_strings(file, "/ranks/hostname", hostname, error) ||
      !hdf5::read_vector(file, "/ranks/node_id", node_id, error) ||
      !hdf5::read_vector(file, "/ranks/local_rank", local_rank, error) ||
      !same_length(rank.size(), world_size, "/ranks/rank", error) ||
      !same_length(hostname.size(), world_size, "/ranks/hostname", error) ||
      !same_length(node_id.size(), world_size, "/ranks/node_id", error) ||
      !same_length(local_rank.size(), world_size, "/ranks/local_rank", error))
    return false;
  ranks.resize(world_size);
  ranks.assign(world_size, RankInfo{});
  for (std::size_t i = 0; i < world_size; ++i) {
    ranks[i].rank = rank[i];
    ranks[i].hostname = hostname[i];
    ranks[i].node_id = node_id[i];
    ranks[i].local_rank = local_rank[i];
  }
  // Files written before they were recorded: not measured (NaN).
  for (const auto& [name, member] : {std::pair{"/ranks/run_queue_delay_s", &RankInfo::run_queue_delay_s},
                                     std::pair{"/ranks/slept_s", &RankInfo::slept_s},
                                     std::pair{"/ranks/own_sleep_s", &RankInfo::own_sleep_s},
                                     std::pair{"/ranks/injected_s", &RankInfo::injected_s}}) {
    if (!hdf5::link_exists(file, name)) continue;
    std::vector<double> values;
    if (!hdf5::read_vector(file, name, values, error) || !same_length(values.size(), world_size, name, error))
      return false;
    for (std::size_t i = 0; i < world_size; ++i) ranks[i].*member = values[i];
  }
  return true;
}

// A metric the file's schema version predates: absent, read as value 0.
bool absent_in_schema(std::size_t metric, std::int32_t schema_version) {
  if (schema_version >= 2) return false;
  return std::ranges::any_of(kQuantizedAddedInSchema2, [&](Quantized q) { return index(q) == metric; });
}

bool read_bins(hid_t file, std::int32_t schema_version, std::array<BinTable, kQuantizedCount>& bins,
               std::string& error) {
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    if (absent_in_schema(m, schema_version)) {
      bins[m] = {Bin{}};
      continue;
    }
    const std::string group = "/bins/" + std::string(kQuantizedMetrics[m].name) + "/";
    std::vector<std::uint64_t> count;
    if (schema_version >= 3) {
      std::vector<std::uint16_t> code;
      std::vector<double> value;
      if (!hdf5::read_vector(file, group + layout::kBinCode, code, error) ||
          !hdf5::read_vector(file, group + layout::kBinCount, count, error) ||
          !hdf5::read_vector(file, group + layout::kBinValue, value, error) ||
          !same_length(count.size(), code.size(), group + layout::kBinCount, error) ||
          !same_length(value.size(), code.size(), group + layout::kBinValue, error))
        return false;
      if (code.size() > std::numeric_limits<std::uint16_t>::max() + std::size_t{1})
        return fail(error, group + " has more bins than a uint16 index can address");
      bins[m].resize(code.size());
      for (std::size_t i = 0; i < code.size(); ++i)
        bins[m][i] = Bin{.sum = value[i] * static_cast<double>(count[i]), .count = count[i], .min = value[i],
                         .max = value[i], .code = code[i]};
      continue;
    }
    std::vector<double> sum, min, max;
    if (!hdf5::read_vector(file, group + layout::kMergedBinColumns[0], sum, error) ||
        !hdf5::read_vector(file, group + layout::kMergedBinColumns[1], count, error) ||
        !hdf5::read_vector(file, group + layout::kMergedBinColumns[2], min, error) ||
        !hdf5::read_vector(file, group + layout::kMergedBinColumns[3], max, error) ||
        !same_length(count.size(), sum.size(), group + "count", error) ||
        !same_length(min.size(), sum.size(), group + "min", error) ||
        !same_length(max.size(), sum.size(), group + "max", error))
      return false;
    if (sum.size() > std::numeric_limits<std::uint16_t>::max() + std::size_t{1})
      return fail(error, group + " has more bins than a uint16 index can address");
    bins[m].resize(sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i)
      bins[m][i] = Bin{.sum = sum[i], .count = count[i], .min = min[i], .max = max[i], .code = 0};
  }
  return true;
}

bool read_segments(hid_t file, SegmentTable& segments, std::string& error) {
  bool ok = true;
  for (const auto& [name, member] : layout::kSegmentNumbers)
    ok = ok && hdf5::read_vector(file, std::string("/segments/") + name, segments.*member, error);
  ok = ok &&
       hdf5::read_vector(file, std::string("/segments/") + layout::kSegmentSignature, segments.signature, error) &&
       hdf5::read_vector(file, std::string("/segments/") + layout::kSegmentLateRank, segments.late_rank, error) &&
       hdf5::read_vector(file, std::string("/segments/") + layout::kSegmentClosingCall, segments.closing_call, error);
  if (!ok) return false;
  const std::size_t n = segments.size();
  for (const auto& [name, member] : layout::kSegmentNumbers)
    ok = ok && same_length((segments.*member).size(), n, std::string("/segments/") + name, error);
  return ok && same_length(segments.signature.size(), n, "/segments/signature", error) &&
         same_length(segments.late_rank.size(), n, "/segments/late_rank", error) &&
         same_length(segments.closing_call.size(), n, "/segments/closing_call", error);
}

bool read_detail(hid_t file, const RunData& run, DetailRanks& detail, std::string& error) {
  if (!hdf5::read_vector(file, "/detail/ranks", detail.ranks, error)) return false;
  const std::size_t rows = detail.ranks.size();
  std::vector<hsize_t> dims;
  bool first = true;
  auto read_matrix = [&](const std::string& name, auto& values) {
    if (!hdf5::read_array(file, name, 2, dims, values, error)) return false;
    if (first) detail.segments = static_cast<std::size_t>(dims[1]);
    first = false;
    if (dims[0] != rows || dims[1] != detail.segments)
      return fail(error, "inconsistent sizes: " + name + " is " + std::to_string(dims[0]) + " x " +
                             std::to_string(dims[1]) + ", expected " + std::to_string(rows) + " x " +
                             std::to_string(detail.segments));
    return true;
  };
  std::vector<std::size_t> absent;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    if (absent_in_schema(m, run.meta.schema_version)) {
      absent.push_back(m);
      continue;
    }
    const std::string name = "/detail/" + std::string(kQuantizedMetrics[m].name);
    if (!read_matrix(name, detail.global_index[m])) return false;
    for (std::uint16_t index : detail.global_index[m])
      if (index >= run.global_bins[m].size())
        return fail(error, name + " holds bin index " + std::to_string(index) + " but there are only " +
                               std::to_string(run.global_bins[m].size()) + " bins");
  }
  if (!read_matrix("/detail/signature_index", detail.signature_index)) return false;
  for (const std::size_t m : absent) detail.global_index[m].assign(rows * detail.segments, 0);
  if (rows > 0 && detail.segments != run.segments.size())
    return fail(error, "inconsistent sizes: /detail has " + std::to_string(detail.segments) +
                           " segments, /segments has " + std::to_string(run.segments.size()));
  std::vector<std::uint64_t> flat;
  if (!hdf5::read_array(file, "/detail/signatures", 2, dims, flat, error)) return false;
  if (dims[1] != kFeatureCount)
    return fail(error, "/detail/signatures has " + std::to_string(dims[1]) + " columns, expected " +
                           std::to_string(kFeatureCount));
  detail.signatures.resize(static_cast<std::size_t>(dims[0]));
  for (std::size_t e = 0; e < detail.signatures.size(); ++e)
    for (std::size_t f = 0; f < kFeatureCount; ++f) detail.signatures[e][f] = flat[e * kFeatureCount + f];
  if (!hdf5::read_vector(file, "/detail/signature_offset", detail.signature_offset, error) ||
      !same_length(detail.signature_offset.size(), rows, "/detail/signature_offset", error))
    return false;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t begin = detail.signature_offset[r];
    const std::size_t end = r + 1 < rows ? detail.signature_offset[r + 1] : detail.signatures.size();
    if (begin > end || end > detail.signatures.size())
      return fail(error, "/detail/signature_offset is not an ascending list of offsets into /detail/signatures");
    for (std::size_t s = 0; s < detail.segments; ++s)
      if (detail.signature_index[r * detail.segments + s] >= end - begin)
        return fail(error,
                    "/detail/signature_index of rank row " + std::to_string(r) + " points past that rank's dictionary");
  }
  return true;
}

bool read_totals(hid_t file, RunData& run, std::size_t world_size, std::string& error) {
  run.raw_totals.assign(world_size, QuantizedValues{});
  run.raw_feature_totals.assign(world_size, FeatureVector{});
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    if (absent_in_schema(m, run.meta.schema_version)) continue;  // zeros
    const std::string name = "/totals/" + std::string(kQuantizedMetrics[m].name);
    std::vector<double> values;
    if (!hdf5::read_vector(file, name, values, error) || !same_length(values.size(), world_size, name, error))
      return false;
    for (std::size_t r = 0; r < world_size; ++r) run.raw_totals[r][m] = values[r];
  }
  for (std::size_t f = 0; f < kFeatureCount; ++f) {
    const std::string name = "/totals/" + std::string(kFeatureMetrics[f].name);
    std::vector<std::uint64_t> values;
    if (!hdf5::read_vector(file, name, values, error) || !same_length(values.size(), world_size, name, error))
      return false;
    for (std::size_t r = 0; r < world_size; ++r) run.raw_feature_totals[r][f] = values[r];
  }
  return true;
}

bool read_injection(hid_t file, std::vector<InjectionRecord>& records, std::string& error) {
  std::vector<std::int32_t> rank;
  std::vector<std::string> call;
  if (!hdf5::read_vector(file, "/injection/rank", rank, error) ||
      !hdf5::read_strings(file, "/injection/call", call, error) ||
      !same_length(call.size(), rank.size(), "/injection/call", error))
    return false;
  records.assign(rank.size(), InjectionRecord{});
  for (std::size_t i = 0; i < rank.size(); ++i) {
    records[i].rank = rank[i];
    records[i].call = call[i];
  }
  for (const auto& [name, member] : layout::kInjectionNumbers) {
    std::vector<double> values;
    const std::string path = std::string("/injection/") + name;
    if (!hdf5::read_vector(file, path, values, error) || !same_length(values.size(), rank.size(), path, error))
      return false;
    for (std::size_t i = 0; i < rank.size(); ++i) records[i].*member = values[i];
  }
  // Files written before the segment column was added keep -1 (unknown).
  if (hdf5::link_exists(file, "/injection/segment")) {
    std::vector<std::int64_t> segment;
    if (!hdf5::read_vector(file, "/injection/segment", segment, error) ||
        !same_length(segment.size(), rank.size(), "/injection/segment", error))
      return false;
    for (std::size_t i = 0; i < rank.size(); ++i) records[i].segment = segment[i];
  }
  return true;
}

herr_t note_error_description(unsigned, const H5E_error2_t* entry, void* data) {
  auto& description = *static_cast<std::string*>(data);
  const std::string text = entry->desc != nullptr ? entry->desc : "";
  // The innermost entry comes first; a checksum failure anywhere names the damage best.
  if (description.empty() || text.find("checksum") != std::string::npos) description = text;
  return 0;
}

// After a failed read: whether HDF5 finds the file's structure damaged.
// Visiting every object loads every object header, group B-tree and heap, so
// a flipped byte in any of them surfaces as the checksum error it is rather
// than as the "missing dataset" the failed lookup reported.
std::optional<std::string> damage_report(hid_t file) {
  const auto visit = [](hid_t, const char*, const H5O_info_t*, void*) -> herr_t { return 0; };
  if (H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, nullptr, H5O_INFO_BASIC) >= 0) return std::nullopt;
  std::string description;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, note_error_description, &description);
  return "the file is damaged: HDF5 cannot read its structure (" +
         (description.empty() ? std::string("no detail") : description) + ")";
}

}  // namespace

std::optional<RunData> read_run(const std::filesystem::path& path, std::string& error) {
  hdf5::SilenceHdf5Errors silence;
  std::error_code status_error;
  if (!std::filesystem::is_regular_file(path, status_error)) {
    error = "'" + path.string() + "' does not exist or is not a regular file";
    return std::nullopt;
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    error = "'" + path.string() + "' is not an HDF5 file";
    return std::nullopt;
  }
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) {
    error = "cannot open '" + path.string() + "' as HDF5 (truncated or corrupted?)";
    return std::nullopt;
  }
  RunData run;
  std::string reason;
  bool ok = false;
  try {  // a corrupted shape can ask for more memory than exists
    ok = read_metadata(file.get(), run.meta, reason) &&
         read_ranks(file.get(), static_cast<std::size_t>(run.meta.world_size), run.ranks, reason) &&
         read_bins(file.get(), run.meta.schema_version, run.global_bins, reason) &&
         read_segments(file.get(), run.segments, reason) && read_detail(file.get(), run, run.detail, reason) &&
         read_totals(file.get(), run, static_cast<std::size_t>(run.meta.world_size), reason) &&
         read_injection(file.get(), run.injection, reason) &&
         read_environment(file.get(), static_cast<std::size_t>(run.meta.world_size), run.environment, reason) &&
         validate_run(run, reason);
  } catch (const std::exception& exception) {
    reason = std::string("cannot load: ") + exception.what();
  }
  if (!ok) reason = damage_report(file.get()).value_or(reason);
  if (!ok) {
    error = "'" + path.string() + "': " + reason;
    return std::nullopt;
  }
  return run;
}

}  // namespace tremor
