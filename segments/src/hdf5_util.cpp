#include "hdf5_util.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace tremor::hdf5 {
namespace {

constexpr hsize_t kCompressAbove = 4096;      // elements; smaller datasets stay contiguous
constexpr hsize_t kChunkElements = 1u << 16;  // ~64k elements per chunk

Handle dataset_creation_properties(const std::vector<hsize_t>& dims) {
  Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  hsize_t elements = 1;
  for (hsize_t d : dims) elements *= d;
  if (!properties.valid() || elements < kCompressAbove) return properties;
  // Chunks span whole rows of the last dimension where possible, so one
  // rank's row of a detail matrix reads from few chunks.
  std::vector<hsize_t> chunk(dims.size(), 1);
  chunk.back() = std::min(dims.back(), kChunkElements);
  if (dims.size() == 2) chunk[0] = std::clamp<hsize_t>(kChunkElements / chunk.back(), 1, dims[0]);
  H5Pset_chunk(properties.get(), static_cast<int>(chunk.size()), chunk.data());
  H5Pset_shuffle(properties.get());
  H5Pset_deflate(properties.get(), 4);
  return properties;
}

std::string where(const std::string& name) { return "'" + name + "'"; }

std::string variable_length_refusal(const std::string& what) {
  return "written by an older Tremor or altered (" + what +
         " is a variable-length string); this version does not read such files";
}

// The size of the file on disk: the superblock's end-of-file address comes
// from the file itself and may be anything.
hsize_t file_bytes(hid_t object) {
  Handle file(H5Iget_file_id(object), H5Fclose);
  Handle access(H5Fget_access_plist(file.get()), H5Pclose);
  void* handle = nullptr;
  struct stat status {};
  if (H5Pget_driver(access.get()) == H5FD_SEC2 && H5Fget_vfd_handle(file.get(), H5P_DEFAULT, &handle) >= 0 &&
      handle && ::fstat(*static_cast<int*>(handle), &status) == 0)
    return static_cast<hsize_t>(status.st_size);
  hsize_t size = 0;  // the core driver's in-memory image: its size is real
  return H5Fget_filesize(file.get(), &size) >= 0 ? size : 0;
}

// a x b, or nothing when either is unknown or the product overflows.
std::optional<hsize_t> checked_product(std::optional<hsize_t> a, hsize_t b) {
  hsize_t product = 0;
  if (!a || __builtin_mul_overflow(*a, b, &product)) return std::nullopt;
  return product;
}

// Every size read from a file is checked here before a buffer is allocated
// or HDF5 reads: an attribute or dataset cannot hold more than the file,
// except chunks that HDF5's deflate filter expanded (at most ~1032 times).
// `nominal`: the bytes its elements take in the file's type; `stored`: the
// bytes it keeps in the file.
bool plausible_size(hid_t object, const std::string& what, std::optional<hsize_t> nominal, hsize_t stored,
                    hsize_t expansion, std::string& error) {
  const hsize_t file = file_bytes(object);
  if (nominal && stored <= file && *nominal / expansion <= stored) return true;
  error = what + " claims " + (nominal ? std::to_string(*nominal) : std::string("over 2^64")) + " bytes" +
          (nominal && stored == *nominal ? "" : " stored in " + std::to_string(stored)) +
          ", implausible in a file of " + std::to_string(file) + " bytes (damaged or altered file)";
  return false;
}

// plausible_size for a dataset: a chunked one keeps what its allocated chunks
// hold, expanded by its filters; a filter Tremor never writes is refused.
bool plausible_dataset(hid_t dataset, const std::string& name, std::optional<hsize_t> nominal, std::string& error) {
  constexpr hsize_t kDeflateMaxExpansion = 1100;  // zlib's limit is 1032:1, plus chunk overheads
  Handle properties(H5Dget_create_plist(dataset), H5Pclose);
  hsize_t stored = nominal.value_or(0);
  hsize_t expansion = 1;
  if (H5Pget_layout(properties.get()) == H5D_CHUNKED) {
    stored = H5Dget_storage_size(dataset);
    const int filters = H5Pget_nfilters(properties.get());
    for (int i = 0; i < filters; ++i) {
      unsigned flags = 0;
      std::size_t values = 0;
      const H5Z_filter_t filter =
          H5Pget_filter2(properties.get(), static_cast<unsigned>(i), &flags, &values, nullptr, 0, nullptr, nullptr);
      if (filter == H5Z_FILTER_DEFLATE) {
        expansion = kDeflateMaxExpansion;
      } else if (filter != H5Z_FILTER_SHUFFLE && filter != H5Z_FILTER_FLETCHER32) {
        error = "dataset " + where(name) + " uses HDF5 filter " + std::to_string(filter) + ", which Tremor never writes";
        return false;
      }
    }
  }
  return plausible_size(dataset, "dataset " + where(name), nominal, stored, expansion, error);
}

}  // namespace

Handle uint8_enum_type(std::span<const std::string_view> names) {
  Handle type(H5Tenum_create(H5T_NATIVE_UINT8), H5Tclose);
  for (std::size_t i = 0; i < names.size() && type.valid(); ++i) {
    const auto value = static_cast<std::uint8_t>(i);
    if (H5Tenum_insert(type.get(), std::string(names[i]).c_str(), &value) < 0) type.reset();
  }
  return type;
}

Handle fixed_string_type(std::size_t width) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(width, 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

bool link_exists(hid_t location, const std::string& path) {
  // H5Lexists needs every intermediate link to exist: check them in turn.
  std::size_t position = 0;
  while (position != std::string::npos) {
    position = path.find('/', position + 1);
    const std::string prefix = path.substr(0, position);
    if (prefix.empty() || prefix == "/") continue;
    if (H5Lexists(location, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

Handle open_or_create_group(hid_t file, std::string_view path, std::string& error) {
  const std::string name(path.empty() ? "/" : path);
  if (name == "/" || link_exists(file, name)) {
    Handle group(H5Gopen2(file, name.c_str(), H5P_DEFAULT), H5Gclose);
    if (!group.valid()) error = "cannot open group " + where(name);
    return group;
  }
  Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(links.get(), 1);
  Handle group(H5Gcreate2(file, name.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group.valid()) error = "cannot create group " + where(name);
  return group;
}

bool write_numeric(hid_t location, const std::string& name, hid_t memory_type, const void* data,
                   const std::vector<hsize_t>& dims, std::string& error) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle properties = dataset_creation_properties(dims);
  Handle dataset(
      H5Dcreate2(location, name.c_str(), memory_type, space.get(), H5P_DEFAULT, properties.get(), H5P_DEFAULT),
      H5Dclose);
  if (!dataset.valid()) {
    error = "cannot create dataset " + where(name);
    return false;
  }
  hsize_t elements = 1;
  for (hsize_t d : dims) elements *= d;
  if (elements > 0 && H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    error = "cannot write dataset " + where(name);
    return false;
  }
  return true;
}

bool write_strings(hid_t location, const std::string& name, const std::vector<std::string>& values,
                   std::string& error) {
  // Fixed-length (NUL-padded) UTF-8: the text sits in the dataset itself, not
  // in HDF5's unchecksummed global heap, whose corruption can crash HDF5.
  std::size_t width = 1;
  for (const std::string& value : values) width = std::max(width, value.size());
  std::vector<char> packed(values.size() * width, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) std::memcpy(&packed[i * width], values[i].data(), values[i].size());
  Handle type = fixed_string_type(width);
  const hsize_t size = values.size();
  Handle space(H5Screate_simple(1, &size, nullptr), H5Sclose);
  Handle dataset(H5Dcreate2(location, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
  if (!dataset.valid() ||
      (size > 0 && H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()) < 0)) {
    error = "cannot write string dataset " + where(name);
    return false;
  }
  return true;
}

bool write_scalar_string(hid_t location, const std::string& name, std::string_view text, std::string& error) {
  // Fixed-length like every string Tremor writes (see write_strings).
  const std::string copy = text.empty() ? std::string(1, '\0') : std::string(text);
  Handle type = fixed_string_type(copy.size());
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle dataset(H5Dcreate2(location, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
  if (!dataset.valid() || H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, copy.data()) < 0) {
    error = "cannot write string dataset " + where(name);
    return false;
  }
  return true;
}

bool write_attribute(hid_t object, const std::string& name, hid_t memory_type, const void* value, std::string& error) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate2(object, name.c_str(), memory_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid() || H5Awrite(attribute.get(), memory_type, value) < 0) {
    error = "cannot write attribute " + where(name);
    return false;
  }
  return true;
}

bool write_string_attribute(hid_t object, const std::string& name, std::string_view text, std::string& error) {
  // Fixed-length, like write_strings: a variable-length attribute lives in the
  // global heap, and HDF5 1.10 crashes reading a corrupted one.
  const std::string copy = text.empty() ? std::string(1, '\0') : std::string(text);
  Handle type = fixed_string_type(copy.size());
  return write_attribute(object, name, type.get(), copy.data(), error);
}

bool read_numeric(hid_t location, const std::string& name, hid_t memory_type, bool integer, int rank,
                  std::vector<hsize_t>& dims, std::vector<unsigned char>& bytes, std::size_t element_size,
                  std::string& error) {
  if (!link_exists(location, name)) {
    error = "missing dataset " + where(name);
    return false;
  }
  Handle dataset(H5Dopen2(location, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) {
    error = "cannot open dataset " + where(name);
    return false;
  }
  Handle file_type(H5Dget_type(dataset.get()), H5Tclose);
  const H5T_class_t type_class = H5Tget_class(file_type.get());
  if (type_class != (integer ? H5T_INTEGER : H5T_FLOAT)) {
    error = "dataset " + where(name) + " has type class " + std::to_string(static_cast<int>(type_class)) +
            ", expected " + (integer ? "integer" : "floating point");
    return false;
  }
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != rank) {
    error = "dataset " + where(name) + " has rank " + std::to_string(H5Sget_simple_extent_ndims(space.get())) +
            ", expected " + std::to_string(rank);
    return false;
  }
  dims.assign(static_cast<std::size_t>(rank), 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  std::optional<hsize_t> elements = 1;
  for (hsize_t d : dims) elements = checked_product(elements, d);
  // The file's elements are at least a byte each, so once their bytes are
  // plausible, so are the elements of element_size bytes in memory.
  const std::size_t file_element_size = H5Tget_size(file_type.get());
  if (!plausible_dataset(dataset.get(), name,
                         file_element_size == 0 ? std::nullopt : checked_product(elements, file_element_size), error))
    return false;
  bytes.assign(static_cast<std::size_t>(*elements) * element_size, 0);
  if (!bytes.empty() && H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0) {
    error = "cannot read dataset " + where(name) + " (file truncated or corrupted?)";
    return false;
  }
  return true;
}

bool read_strings(hid_t location, const std::string& name, std::vector<std::string>& values, std::string& error) {
  if (!link_exists(location, name)) {
    error = "missing dataset " + where(name);
    return false;
  }
  Handle dataset(H5Dopen2(location, name.c_str(), H5P_DEFAULT), H5Dclose);
  Handle file_type(H5Dget_type(dataset.get()), H5Tclose);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (!dataset.valid() || H5Tget_class(file_type.get()) != H5T_STRING || H5Sget_simple_extent_ndims(space.get()) != 1) {
    error = "dataset " + where(name) + " is not a 1-D string dataset";
    return false;
  }
  if (H5Tis_variable_str(file_type.get()) != 0) {  // see read_string_attribute
    error = variable_length_refusal("dataset " + where(name));
    return false;
  }
  hsize_t size = 0;
  H5Sget_simple_extent_dims(space.get(), &size, nullptr);
  const std::size_t width = H5Tget_size(file_type.get());
  if (!plausible_dataset(dataset.get(), name, width == 0 ? std::nullopt : checked_product(size, width), error))
    return false;
  std::vector<char> packed(static_cast<std::size_t>(size) * width, '\0');
  Handle type(H5Tcopy(file_type.get()), H5Tclose);
  if (size > 0 && H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()) < 0) {
    error = "cannot read dataset " + where(name) + " (file truncated or corrupted?)";
    return false;
  }
  values.assign(size, {});
  for (std::size_t i = 0; i < size; ++i) {
    const char* begin = &packed[i * width];
    values[i].assign(begin, strnlen(begin, width));
  }
  return true;
}

bool read_attribute(hid_t object, const std::string& name, hid_t memory_type, bool integer, void* value,
                    std::string& error) {
  if (H5Aexists(object, name.c_str()) <= 0) {
    error = "missing attribute " + where(name);
    return false;
  }
  Handle attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle file_type(H5Aget_type(attribute.get()), H5Tclose);
  Handle space(H5Aget_space(attribute.get()), H5Sclose);
  if (!attribute.valid() || H5Tget_class(file_type.get()) != (integer ? H5T_INTEGER : H5T_FLOAT) ||
      H5Sget_simple_extent_npoints(space.get()) != 1) {
    error = "attribute " + where(name) + " is not a scalar " + (integer ? "integer" : "floating-point number");
    return false;
  }
  const hsize_t width = H5Tget_size(file_type.get());
  if (!plausible_size(attribute.get(), "attribute " + where(name), width == 0 ? std::nullopt : std::optional(width),
                      width, 1, error))
    return false;
  if (H5Aread(attribute.get(), memory_type, value) < 0) {
    error = "cannot read attribute " + where(name);
    return false;
  }
  return true;
}

bool read_string_attribute(hid_t object, const std::string& name, std::string& text, std::string& error) {
  if (H5Aexists(object, name.c_str()) <= 0) {
    error = "missing attribute " + where(name);
    return false;
  }
  Handle attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle file_type(H5Aget_type(attribute.get()), H5Tclose);
  Handle space(H5Aget_space(attribute.get()), H5Sclose);
  if (!attribute.valid() || H5Tget_class(file_type.get()) != H5T_STRING ||
      H5Sget_simple_extent_npoints(space.get()) != 1) {
    error = "attribute " + where(name) + " is not a scalar string";
    return false;
  }
  // A variable-length string lives in HDF5's global heap, whose lengths HDF5
  // 1.10 trusts (a damaged one makes it copy out of bounds): never read one.
  if (H5Tis_variable_str(file_type.get()) != 0) {
    error = variable_length_refusal("attribute " + where(name));
    return false;
  }
  const std::size_t width = H5Tget_size(file_type.get());
  const std::optional<hsize_t> nominal = width == 0 ? std::nullopt : std::optional<hsize_t>(width);
  if (!plausible_size(attribute.get(), "attribute " + where(name), nominal, nominal.value_or(0), 1, error))
    return false;
  std::vector<char> buffer(width, '\0');
  // The file's own type: strings need no conversion, and HDF5 converts no character sets.
  if (H5Aread(attribute.get(), file_type.get(), buffer.data()) < 0) {
    error = "cannot read attribute " + where(name);
    return false;
  }
  text.assign(buffer.data(), strnlen(buffer.data(), width));
  return true;
}

}  // namespace tremor::hdf5
