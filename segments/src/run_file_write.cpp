// Writer of the run file (docs/schema.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "environment_file.hpp"
#include "file_image.hpp"
#include "hdf5_util.hpp"
#include "run_file_layout.hpp"
#include "tremor/run_file.hpp"

namespace tremor {
namespace {

using hdf5::column;
using hdf5::Handle;

bool write_job(hid_t root, const JobRecord& job, std::string& error) {
  if (job.scheduler.empty()) return true;
  bool ok = hdf5::write_string_attribute(root, layout::kJobSchedulerAttribute, job.scheduler, error);
  for (const auto& [name, member] : layout::kJobStrings)
    if (const auto& value = job.*member) ok = ok && hdf5::write_string_attribute(root, name, *value, error);
  return ok;
}

bool write_metadata(hid_t file, const RunMetadata& meta, std::string& error) {
  Handle root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
  const std::int32_t version = kSchemaVersion;  // always the version this code writes
  bool ok = hdf5::write_attribute(root.get(), std::string(layout::kSchemaVersionAttribute), H5T_NATIVE_INT32, &version,
                                  error);
  for (const auto& [name, member] : layout::kMetadataStrings)
    ok = ok && hdf5::write_string_attribute(root.get(), name, meta.*member, error);
  for (const auto& [name, member] : layout::kMetadataIntegers)
    ok = ok && hdf5::write_attribute(root.get(), name, H5T_NATIVE_INT32, &(meta.*member), error);
  for (const auto& [name, member] : layout::kMetadataNumbers)
    ok = ok && hdf5::write_attribute(root.get(), name, H5T_NATIVE_DOUBLE, &(meta.*member), error);
  const hdf5::Handle counter_kind = hdf5::uint8_enum_type(layout::kCounterKindNames);
  const auto counter_source = static_cast<std::uint8_t>(meta.counter_source);
  ok = ok && counter_kind.valid() &&
       hdf5::write_attribute(root.get(), layout::kCounterSourceAttribute, counter_kind.get(), &counter_source, error);
  ok = ok && write_job(root.get(), meta.job, error);
  const std::uint8_t partial = meta.partial ? 1 : 0;
  ok = ok && hdf5::write_attribute(root.get(), layout::kPartialAttribute, H5T_NATIVE_UINT8, &partial, error);
  if (meta.partial) {
    ok = ok && hdf5::write_string_attribute(root.get(), layout::kPartialReasonAttribute, meta.partial_reason, error);
  }
  ok = ok && hdf5::write_strings(file, layout::kCounterEvents, meta.counter_events, error);
  ok = ok && hdf5::write_strings(file, layout::kCallNames, meta.call_names, error);
  if (!ok) return false;
  Handle configuration = hdf5::open_or_create_group(file, "/configuration", error);
  return configuration.valid() &&
         hdf5::write_strings(configuration.get(), "name",
                             column(meta.configuration, &std::pair<std::string, std::string>::first), error) &&
         hdf5::write_strings(configuration.get(), "value",
                             column(meta.configuration, &std::pair<std::string, std::string>::second), error);
}

bool write_ranks(hid_t file, const std::vector<RankInfo>& ranks, std::string& error) {
  Handle group = hdf5::open_or_create_group(file, "/ranks", error);
  return group.valid() && hdf5::write_vector(group.get(), "rank", column(ranks, &RankInfo::rank), error) &&
         hdf5::write_strings(group.get(), "hostname", column(ranks, &RankInfo::hostname), error) &&
         hdf5::write_vector(group.get(), "node_id", column(ranks, &RankInfo::node_id), error) &&
         hdf5::write_vector(group.get(), "local_rank", column(ranks, &RankInfo::local_rank), error) &&
         hdf5::write_vector(group.get(), "run_queue_delay_s", column(ranks, &RankInfo::run_queue_delay_s), error) &&
         hdf5::write_vector(group.get(), "slept_s", column(ranks, &RankInfo::slept_s), error) &&
         hdf5::write_vector(group.get(), "own_sleep_s", column(ranks, &RankInfo::own_sleep_s), error) &&
         hdf5::write_vector(group.get(), "injected_s", column(ranks, &RankInfo::injected_s), error);
}

bool describe(hid_t object, const MetricInfo& metric, std::string& error) {
  return hdf5::write_string_attribute(object, "unit", metric.unit, error) &&
         hdf5::write_string_attribute(object, "meaning", metric.meaning, error);
}

bool write_bins(hid_t file, const std::array<BinTable, kQuantizedCount>& bins, std::string& error) {
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    const MetricInfo& metric = kQuantizedMetrics[m];
    Handle group = hdf5::open_or_create_group(file, "/bins/" + std::string(metric.name), error);
    if (!group.valid() || !describe(group.get(), metric, error) ||
        !hdf5::write_vector(group.get(), layout::kBinCode, column(bins[m], &Bin::code), error) ||
        !hdf5::write_vector(group.get(), layout::kBinCount, column(bins[m], &Bin::count), error) ||
        !hdf5::write_vector(group.get(), layout::kBinValue, column(bins[m], &Bin::min), error))
      return false;
  }
  return true;
}

bool write_segments(hid_t file, const SegmentTable& segments, std::string& error) {
  Handle group = hdf5::open_or_create_group(file, "/segments", error);
  if (!group.valid()) return false;
  for (const auto& [name, member] : layout::kSegmentNumbers)
    if (!hdf5::write_vector(group.get(), name, segments.*member, error)) return false;
  return hdf5::write_vector(group.get(), layout::kSegmentSignature, segments.signature, error) &&
         hdf5::write_vector(group.get(), layout::kSegmentLateRank, segments.late_rank, error) &&
         hdf5::write_vector(group.get(), layout::kSegmentClosingCall, segments.closing_call, error);
}

bool write_detail(hid_t file, const DetailRanks& detail, std::string& error) {
  Handle group = hdf5::open_or_create_group(file, "/detail", error);
  if (!group.valid() || !hdf5::write_vector(group.get(), "ranks", detail.ranks, error)) return false;
  const std::vector<hsize_t> matrix{detail.ranks.size(), detail.segments};
  const std::size_t cells = detail.ranks.size() * detail.segments;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    if (detail.global_index[m].size() != cells) {
      error = "detail matrix of " + std::string(kQuantizedMetrics[m].name) + " has " +
              std::to_string(detail.global_index[m].size()) +
              " cells, expected ranks x segments = " + std::to_string(cells);
      return false;
    }
    if (!hdf5::write_numeric(group.get(), std::string(kQuantizedMetrics[m].name), H5T_NATIVE_UINT16,
                             detail.global_index[m].data(), matrix, error))
      return false;
  }
  if (detail.signature_index.size() != cells) {
    error = "detail signature_index has " + std::to_string(detail.signature_index.size()) +
            " cells, expected ranks x segments = " + std::to_string(cells);
    return false;
  }
  std::vector<std::string> feature_names;
  for (const MetricInfo& feature : kFeatureMetrics) feature_names.emplace_back(feature.name);
  return hdf5::write_numeric(group.get(), "signature_index", H5T_NATIVE_UINT32, detail.signature_index.data(), matrix,
                             error) &&
         hdf5::write_numeric(group.get(), "signatures", H5T_NATIVE_UINT64, detail.signatures.data(),
                             {detail.signatures.size(), kFeatureCount}, error) &&
         hdf5::write_strings(group.get(), "signature_features", feature_names, error) &&
         hdf5::write_vector(group.get(), "signature_offset", detail.signature_offset, error);
}

bool write_totals(hid_t file, const RunData& run, std::string& error) {
  Handle group = hdf5::open_or_create_group(file, "/totals", error);
  if (!group.valid()) return false;
  for (std::size_t m = 0; m < kQuantizedCount; ++m) {
    std::vector<double> values;
    for (const QuantizedValues& row : run.raw_totals) values.push_back(row[m]);
    const std::string name(kQuantizedMetrics[m].name);
    if (!hdf5::write_vector(group.get(), name, values, error)) return false;
    Handle dataset(H5Dopen2(group.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!describe(dataset.get(), kQuantizedMetrics[m], error)) return false;
  }
  for (std::size_t f = 0; f < kFeatureCount; ++f) {
    std::vector<std::uint64_t> values;
    for (const FeatureVector& row : run.raw_feature_totals) values.push_back(row[f]);
    const std::string name(kFeatureMetrics[f].name);
    if (!hdf5::write_vector(group.get(), name, values, error)) return false;
    Handle dataset(H5Dopen2(group.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!describe(dataset.get(), kFeatureMetrics[f], error)) return false;
  }
  return true;
}

bool write_injection(hid_t file, const std::vector<InjectionRecord>& records, std::string& error) {
  Handle group = hdf5::open_or_create_group(file, "/injection", error);
  if (!group.valid() || !hdf5::write_vector(group.get(), "rank", column(records, &InjectionRecord::rank), error) ||
      !hdf5::write_strings(group.get(), "call", column(records, &InjectionRecord::call), error) ||
      !hdf5::write_vector(group.get(), "segment", column(records, &InjectionRecord::segment), error))
    return false;
  for (const auto& [name, member] : layout::kInjectionNumbers)
    if (!hdf5::write_vector(group.get(), name, column(records, member), error)) return false;
  return true;
}

// Decides whether the path may be created, with a message users understand.
bool check_target(const std::filesystem::path& path, ExistingFile existing, std::string& error) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (existing == ExistingFile::fill_empty_reservation && S_ISREG(info.st_mode) && info.st_size == 0) return true;
    error = "'" + path.string() + "' already exists; refusing to overwrite it";
    return false;
  }
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : ".";
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    error = "cannot create '" + path.string() + "': directory '" + directory.string() + "' is not writable (" +
            std::strerror(errno) + ")";
    return false;
  }
  return true;
}

}  // namespace

bool write_run(const std::filesystem::path& path, const RunData& run, std::string& error, ExistingFile existing) {
  if (!check_target(path, existing, error)) return false;
  hdf5::SilenceHdf5Errors silence;
  struct stat info {};
  // An empty reservation is the only file ever written into: it holds no data.
  const bool reserved = ::stat(path.c_str(), &info) == 0;
  // Built in memory, then written by write_new_file (file_image.hpp says why).
  Handle access(hdf5::memory_file_access(nullptr), H5Pclose);
  Handle file(access.valid() ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()) : H5I_INVALID_HID,
              H5Fclose);
  if (!file.valid()) {
    error = "cannot create HDF5 file '" + path.string() + "' in memory";
    if (reserved) ::unlink(path.c_str());  // the caller's empty reservation (check_target)
    return false;
  }
  bool ok = write_metadata(file.get(), run.meta, error) && write_ranks(file.get(), run.ranks, error) &&
            write_bins(file.get(), run.global_bins, error) && write_segments(file.get(), run.segments, error) &&
            write_detail(file.get(), run.detail, error) && write_totals(file.get(), run, error) &&
            write_injection(file.get(), run.injection, error) && write_environment(file.get(), run.environment, error);
  std::vector<char> image;
  if (ok) {
    image = hdf5::file_image(file.get());
    if (image.empty()) {
      error = "cannot build the image of '" + path.string() + "'";
      ok = false;
    }
  }
  file.reset();
  if (ok) return hdf5::write_new_file(path, image, reserved, error);
  error = "writing '" + path.string() + "': " + error;
  if (reserved) ::unlink(path.c_str());
  return ok;
}

}  // namespace tremor
