// RunFileAppender: generic additions (the analysis's /analysis group) to an
// existing run file.
#include <unistd.h>

#include "file_image.hpp"
#include "hdf5_util.hpp"
#include "tremor/run_file.hpp"

namespace tremor {

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "RunFileAppender keeps hid_t in an int64");
namespace {

using hdf5::Handle;

std::string join(std::string_view group_path, std::string_view name) {
  std::string path(group_path);
  if (path.empty() || path.back() != '/') path += '/';
  return path + std::string(name);
}

}  // namespace

std::optional<RunFileAppender> RunFileAppender::open(const std::filesystem::path& path, std::string& error) {
  hdf5::SilenceHdf5Errors silence;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    error = "'" + path.string() + "' is not an existing HDF5 file";
    return std::nullopt;
  }
  // Edited in memory and written back by replace_own_file (file_image.hpp).
  std::vector<char> image;
  if (!hdf5::read_file(path, image, error)) return std::nullopt;
  Handle access(hdf5::memory_file_access(&image), H5Pclose);
  // The core driver refuses an image under the name of an existing file; the
  // name only identifies the in-memory copy and is never created.
  const std::string memory_name = path.string() + ".in-memory-" + std::to_string(::getpid());
  const hid_t file = access.valid() ? H5Fopen(memory_name.c_str(), H5F_ACC_RDWR, access.get()) : H5I_INVALID_HID;
  if (file < 0) {
    error = "cannot open '" + path.string() + "' for appending";
    return std::nullopt;
  }
  RunFileAppender appender(file);
  appender.path_ = path;
  return appender;
}

RunFileAppender::RunFileAppender(RunFileAppender&& other) noexcept
    : file_(other.file_), path_(std::move(other.path_)), error_(std::move(other.error_)) {
  other.file_ = -1;
}

RunFileAppender& RunFileAppender::operator=(RunFileAppender&& other) noexcept {
  if (this != &other) {
    close();
    file_ = other.file_;
    path_ = std::move(other.path_);
    error_ = std::move(other.error_);
    other.file_ = -1;
  }
  return *this;
}

RunFileAppender::~RunFileAppender() { close(); }

bool RunFileAppender::close() {
  if (file_ < 0) return true;
  hdf5::SilenceHdf5Errors silence;
  const std::vector<char> image = hdf5::file_image(static_cast<hid_t>(file_));
  const bool closed = H5Fclose(static_cast<hid_t>(file_)) >= 0;
  file_ = -1;
  if (image.empty() || !closed) {
    error_ = "error while closing the run file";
    return false;
  }
  std::string error;
  if (!hdf5::replace_own_file(path_, image, error)) {
    error_ = error;
    return false;
  }
  return true;
}

namespace {

// Opens (creating if needed) the group and checks the dataset is new.
Handle group_for_new_dataset(hid_t file, std::string_view group_path, std::string_view name, std::string& error) {
  if (file < 0) {
    error = "the run file is closed";
    return {};
  }
  Handle group = hdf5::open_or_create_group(file, group_path, error);
  if (group.valid() && hdf5::link_exists(group.get(), std::string(name))) {
    error = "'" + join(group_path, name) + "' already exists; refusing to replace it";
    return {};
  }
  return group;
}

}  // namespace

bool RunFileAppender::write(std::string_view group_path, std::string_view name, std::span<const double> values) {
  hdf5::SilenceHdf5Errors silence;
  Handle group = group_for_new_dataset(file_, group_path, name, error_);
  return group.valid() &&
         hdf5::write_numeric(group.get(), std::string(name), H5T_NATIVE_DOUBLE, values.data(), {values.size()}, error_);
}

bool RunFileAppender::write(std::string_view group_path, std::string_view name, std::span<const float> values) {
  hdf5::SilenceHdf5Errors silence;
  Handle group = group_for_new_dataset(file_, group_path, name, error_);
  return group.valid() &&
         hdf5::write_numeric(group.get(), std::string(name), H5T_NATIVE_FLOAT, values.data(), {values.size()}, error_);
}

bool RunFileAppender::write(std::string_view group_path, std::string_view name, std::span<const std::int64_t> values) {
  hdf5::SilenceHdf5Errors silence;
  Handle group = group_for_new_dataset(file_, group_path, name, error_);
  return group.valid() &&
         hdf5::write_numeric(group.get(), std::string(name), H5T_NATIVE_INT64, values.data(), {values.size()}, error_);
}

bool RunFileAppender::write(std::string_view group_path, std::string_view name, std::span<const std::string> values) {
  hdf5::SilenceHdf5Errors silence;
  Handle group = group_for_new_dataset(file_, group_path, name, error_);
  return group.valid() && hdf5::write_strings(group.get(), std::string(name),
                                              std::vector<std::string>(values.begin(), values.end()), error_);
}

bool RunFileAppender::write_text(std::string_view group_path, std::string_view name, std::string_view text) {
  hdf5::SilenceHdf5Errors silence;
  Handle group = group_for_new_dataset(file_, group_path, name, error_);
  return group.valid() && hdf5::write_scalar_string(group.get(), std::string(name), text, error_);
}

namespace {

// Opens a dataset or group for an attribute; a missing path becomes a group.
Handle open_object(hid_t file, std::string_view object_path, std::string_view name, std::string& error) {
  if (file < 0) {
    error = "the run file is closed";
    return {};
  }
  const std::string path(object_path.empty() ? "/" : object_path);
  Handle object;
  if (path == "/" || hdf5::link_exists(file, path)) {
    object = Handle(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
    if (!object.valid()) error = "cannot open '" + path + "'";
  } else {
    object = hdf5::open_or_create_group(file, path, error);
  }
  if (object.valid() && H5Aexists(object.get(), std::string(name).c_str()) > 0) {
    error = "attribute '" + std::string(name) + "' of '" + path + "' already exists; refusing to replace it";
    return {};
  }
  return object;
}

}  // namespace

bool RunFileAppender::set_number(std::string_view object_path, std::string_view name, double value) {
  hdf5::SilenceHdf5Errors silence;
  Handle object = open_object(file_, object_path, name, error_);
  return object.valid() && hdf5::write_attribute(object.get(), std::string(name), H5T_NATIVE_DOUBLE, &value, error_);
}

bool RunFileAppender::set_integer(std::string_view object_path, std::string_view name, std::int64_t value) {
  hdf5::SilenceHdf5Errors silence;
  Handle object = open_object(file_, object_path, name, error_);
  return object.valid() && hdf5::write_attribute(object.get(), std::string(name), H5T_NATIVE_INT64, &value, error_);
}

bool RunFileAppender::set_text(std::string_view object_path, std::string_view name, std::string_view value) {
  hdf5::SilenceHdf5Errors silence;
  Handle object = open_object(file_, object_path, name, error_);
  return object.valid() && hdf5::write_string_attribute(object.get(), std::string(name), value, error_);
}

}  // namespace tremor
