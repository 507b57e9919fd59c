// Small RAII and typed helpers over the HDF5 C API, shared by the run-file
// writer, reader and appender. Every function reports failure by value; none
// throws or prints (callers hold a SilenceHdf5Errors while they run).
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tremor::hdf5 {

// Owns one hid_t and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Turns off HDF5's automatic error-stack printing and restores it after.
class SilenceHdf5Errors {
 public:
  SilenceHdf5Errors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~SilenceHdf5Errors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  SilenceHdf5Errors(const SilenceHdf5Errors&) = delete;
  SilenceHdf5Errors& operator=(const SilenceHdf5Errors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

template <typename T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, double>)
    return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return H5T_NATIVE_UINT64;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return H5T_NATIVE_UINT32;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return H5T_NATIVE_INT32;
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return H5T_NATIVE_UINT16;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return H5T_NATIVE_UINT8;
  else
    static_assert(!sizeof(T), "no HDF5 type for T");
}

// Every string is stored fixed-length (NUL-padded UTF-8): a variable-length
// one lives in HDF5's unchecksummed global heap, whose lengths HDF5 1.10
// trusts, so the readers refuse variable-length strings.
Handle fixed_string_type(std::size_t width);
// An enum over uint8 whose member `names[i]` has the value i.
Handle uint8_enum_type(std::span<const std::string_view> names);
// Creates every missing group along path ("/a/b"); returns the last one.
Handle open_or_create_group(hid_t file, std::string_view path, std::string& error);
bool link_exists(hid_t location, const std::string& path);

// Numeric dataset of rank 1 or 2 (dims.size()); large ones are chunked and
// deflated. data holds the product of dims elements, row-major.
bool write_numeric(hid_t location, const std::string& name, hid_t memory_type, const void* data,
                   const std::vector<hsize_t>& dims, std::string& error);
template <typename T>
bool write_vector(hid_t location, const std::string& name, const std::vector<T>& values, std::string& error) {
  return write_numeric(location, name, native_type<T>(), values.data(), {values.size()}, error);
}
bool write_strings(hid_t location, const std::string& name, const std::vector<std::string>& values, std::string& error);
bool write_scalar_string(hid_t location, const std::string& name, std::string_view text, std::string& error);

bool write_attribute(hid_t object, const std::string& name, hid_t memory_type, const void* value, std::string& error);
bool write_string_attribute(hid_t object, const std::string& name, std::string_view text, std::string& error);

// Reading: the dataset must exist, have the given rank and a matching type
// class (integer or float); dims receives its shape.
bool read_numeric(hid_t location, const std::string& name, hid_t memory_type, bool integer, int rank,
                  std::vector<hsize_t>& dims, std::vector<unsigned char>& bytes, std::size_t element_size,
                  std::string& error);
template <typename T>
bool read_array(hid_t location, const std::string& name, int rank, std::vector<hsize_t>& dims, std::vector<T>& values,
                std::string& error) {
  std::vector<unsigned char> bytes;
  if (!read_numeric(location, name, native_type<T>(), std::is_integral_v<T>, rank, dims, bytes, sizeof(T), error))
    return false;
  values.resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return true;
}
template <typename T>
bool read_vector(hid_t location, const std::string& name, std::vector<T>& values, std::string& error) {
  std::vector<hsize_t> dims;
  return read_array(location, name, 1, dims, values, error);
}
bool read_strings(hid_t location, const std::string& name, std::vector<std::string>& values, std::string& error);
bool read_attribute(hid_t object, const std::string& name, hid_t memory_type, bool integer, void* value,
                    std::string& error);
bool read_string_attribute(hid_t object, const std::string& name, std::string& text, std::string& error);

// One member of every row, as a column to write.
template <typename Row, typename Field>
std::vector<Field> column(const std::vector<Row>& rows, Field Row::*member) {
  std::vector<Field> out;
  out.reserve(rows.size());
  for (const Row& row : rows) out.push_back(row.*member);
  return out;
}

// For readers: parallel datasets must have one length.
inline bool same_length(std::size_t actual, std::size_t expected, const std::string& what, std::string& error) {
  if (actual == expected) return true;
  error = "inconsistent sizes: " + what + " has " + std::to_string(actual) + " entries, expected " +
          std::to_string(expected);
  return false;
}

}  // namespace tremor::hdf5
