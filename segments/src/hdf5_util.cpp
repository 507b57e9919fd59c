#include "hdf5_util.hpp"

#include <algorithm>
#include <cstring>
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

}  // namespace

Handle variable_string_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (type.valid()) {
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
  }
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
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), width);
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
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
  const std::string copy(text);
  const char* pointer = copy.c_str();
  Handle type = variable_string_type();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle dataset(H5Dcreate2(location, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
  if (!dataset.valid() || H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &pointer) < 0) {
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
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), copy.size());
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
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
  hsize_t elements = 1;
  for (hsize_t d : dims) elements *= d;
  if (elements > (hsize_t{1} << 40) / element_size) {
    error = "dataset " + where(name) + " is implausibly large";
    return false;
  }
  bytes.assign(static_cast<std::size_t>(elements) * element_size, 0);
  if (elements > 0 && H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0) {
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
  if (!dataset.valid() || H5Tget_class(file_type.get()) != H5T_STRING || H5Tis_variable_str(file_type.get()) != 0 ||
      H5Sget_simple_extent_ndims(space.get()) != 1) {
    error = "dataset " + where(name) + " is not a 1-D fixed-length string dataset";
    return false;
  }
  hsize_t size = 0;
  H5Sget_simple_extent_dims(space.get(), &size, nullptr);
  const std::size_t width = H5Tget_size(file_type.get());
  if (width == 0 || size > (hsize_t{1} << 34) / width) {
    error = "dataset " + where(name) + " has an implausible size";
    return false;
  }
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
  if (H5Tis_variable_str(file_type.get()) == 0) {
    const std::size_t width = H5Tget_size(file_type.get());
    if (width == 0 || width > (std::size_t{1} << 24)) {
      error = "attribute " + where(name) + " has an implausible size";
      return false;
    }
    std::vector<char> buffer(width, '\0');
    // The file's own type: strings need no conversion, and HDF5 converts no character sets.
    if (H5Aread(attribute.get(), file_type.get(), buffer.data()) < 0) {
      error = "cannot read attribute " + where(name);
      return false;
    }
    text.assign(buffer.data(), strnlen(buffer.data(), width));
    return true;
  }
  // Variable-length: files written before the attributes became fixed-length.
  char* pointer = nullptr;
  Handle type = variable_string_type();
  if (H5Aread(attribute.get(), type.get(), &pointer) < 0) {
    error = "cannot read attribute " + where(name);
    return false;
  }
  text = pointer ? pointer : "";
  H5free_memory(pointer);
  return true;
}

}  // namespace tremor::hdf5
