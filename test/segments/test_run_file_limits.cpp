// What read_run refuses before HDF5 reads anything that a file could make it
// misuse: variable-length strings (HDF5 1.10 trusts the lengths in its global
// heap) and attributes or datasets larger than the file can hold. And what it
// still reads of files written before every string was fixed-length.
#include <hdf5.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "sample_run.hpp"
#include "temp_dir.hpp"
#include "tremor/run_file.hpp"

namespace fs = std::filesystem;
using tremor::test::TempDir;

namespace {

// Opens a run file for editing with the HDF5 C API; closed when it goes out of scope.
class Edit {
 public:
  explicit Edit(const fs::path& path) : file_(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) { REQUIRE(file_ >= 0); }
  ~Edit() { H5Fclose(file_); }
  Edit(const Edit&) = delete;
  Edit& operator=(const Edit&) = delete;
  hid_t get() const { return file_; }

 private:
  hid_t file_;
};

hid_t variable_string() {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  return type;
}

// The root's attribute `name` rewritten as a variable-length string, as
// Tremor wrote its attributes before 2026-11-23.
void make_variable_length_attribute(const fs::path& path, const char* name, const char* text) {
  Edit file(path);
  REQUIRE(H5Adelete(file.get(), name) >= 0);
  const hid_t type = variable_string(), space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(file.get(), name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Awrite(attribute, type, &text) >= 0);
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

// A scalar variable-length string dataset, as /analysis/report_json was written before this version.
void add_variable_length_dataset(hid_t location, const char* name, const char* text) {
  const hid_t type = variable_string(), space = H5Screate(H5S_SCALAR);
  const hid_t dataset = H5Dcreate2(location, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) >= 0);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Tclose(type);
}

// /segments/duration_s replaced by a dataset of `elements` doubles that are
// never written, made with `properties` (its layout and filters).
void replace_durations(const fs::path& path, hsize_t elements, hid_t properties) {
  Edit file(path);
  REQUIRE(H5Ldelete(file.get(), "/segments/duration_s", H5P_DEFAULT) >= 0);
  const hid_t space = H5Screate_simple(1, &elements, nullptr);
  const hid_t dataset = H5Dcreate2(file.get(), "/segments/duration_s", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                   properties, H5P_DEFAULT);
  REQUIRE(dataset >= 0);
  H5Dclose(dataset);
  H5Sclose(space);
}

fs::path written_sample(const TempDir& dir, const std::string& name) {
  const fs::path path = dir.path() / name;
  std::string error;
  REQUIRE(tremor::write_run(path, tremor::test::sample_run(), error));
  return path;
}

}  // namespace

TEST_CASE("a variable-length string is refused with one message, never read", "[hdf5]") {
  TempDir dir;
  std::string error;
  const fs::path attribute = written_sample(dir, "attribute.h5");
  make_variable_length_attribute(attribute, "command_line", "./app --size 10");
  CHECK_FALSE(tremor::read_run(attribute, error).has_value());
  CHECK_THAT(error, Catch::Contains("written by an older Tremor") && Catch::Contains("attribute 'command_line'") &&
                        Catch::Contains("variable-length string"));

  const fs::path dataset = written_sample(dir, "dataset.h5");
  {
    Edit file(dataset);
    REQUIRE(H5Ldelete(file.get(), "/ranks/hostname", H5P_DEFAULT) >= 0);
    const hid_t type = variable_string();
    const hsize_t three = 3;
    const hid_t space = H5Screate_simple(1, &three, nullptr);
    const char* names[3] = {"a", "b", "c"};
    const hid_t hostnames = H5Dcreate2(file.get(), "/ranks/hostname", type, space, H5P_DEFAULT, H5P_DEFAULT,
                                       H5P_DEFAULT);
    REQUIRE(H5Dwrite(hostnames, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
    H5Dclose(hostnames);
    H5Sclose(space);
    H5Tclose(type);
  }
  CHECK_FALSE(tremor::read_run(dataset, error).has_value());
  CHECK_THAT(error, Catch::Contains("written by an older Tremor") && Catch::Contains("dataset '/ranks/hostname'"));
}

TEST_CASE("a file whose only variable-length string is /analysis/report_json still reads", "[hdf5]") {
  // Every run file written before this version: the reader never reads /analysis.
  TempDir dir;
  const fs::path path = written_sample(dir, "old.h5");
  {
    Edit file(path);
    const hid_t analysis = H5Gcreate2(file.get(), "/analysis", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    add_variable_length_dataset(analysis, "report_json", "{\"class\": \"low\"}");
    H5Gclose(analysis);
  }
  std::string error;
  const auto run = tremor::read_run(path, error);
  INFO(error);
  REQUIRE(run.has_value());
  CHECK(run->meta.command_line == tremor::test::sample_run().meta.command_line);
}

TEST_CASE("the appender writes text fixed-length, like every string of the run file", "[hdf5]") {
  TempDir dir;
  const fs::path path = written_sample(dir, "run.h5");
  const std::string text = "{\"a\": \"\xc3\xa9\"}";
  std::string error;
  {
    auto appender = tremor::RunFileAppender::open(path, error);
    REQUIRE(appender.has_value());
    REQUIRE(appender->write_text("/analysis", "report_json", text));
    REQUIRE(appender->write_text("/analysis", "empty", ""));
    REQUIRE(appender->close());
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  for (const auto& [name, expected] : {std::pair{"/analysis/report_json", text}, std::pair{"/analysis/empty", std::string()}}) {
    INFO(name);
    const hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t type = H5Dget_type(dataset);
    CHECK(H5Tis_variable_str(type) == 0);
    std::string stored(H5Tget_size(type), '\0');
    REQUIRE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored.data()) >= 0);
    CHECK(stored.substr(0, stored.find('\0')) == expected);
    H5Tclose(type);
    H5Dclose(dataset);
  }
  H5Fclose(file);
}

TEST_CASE("a dataset larger than its file can hold is refused before it is read", "[hdf5]") {
  TempDir dir;
  std::string error;
  // 10^10 doubles: 80 GB that a file of some kB claims (HDF5 returns fill values for unwritten data).
  constexpr hsize_t kElements = 10'000'000'000ULL;
  SECTION("contiguous") {
    const fs::path path = written_sample(dir, "contiguous.h5");
    replace_durations(path, kElements, H5P_DEFAULT);
    CHECK_FALSE(tremor::read_run(path, error).has_value());
    CHECK_THAT(error, Catch::Contains("dataset '/segments/duration_s' claims 80000000000 bytes") &&
                          Catch::Contains("implausible in a file of"));
  }
  SECTION("chunked and deflated, no chunk written") {
    const fs::path path = written_sample(dir, "chunked.h5");
    const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk = 65536;
    H5Pset_chunk(properties, 1, &chunk);
    H5Pset_deflate(properties, 4);
    replace_durations(path, kElements, properties);
    H5Pclose(properties);
    CHECK_FALSE(tremor::read_run(path, error).has_value());
    CHECK_THAT(error, Catch::Contains("dataset '/segments/duration_s' claims 80000000000 bytes stored in 0") &&
                          Catch::Contains("implausible"));
  }
  SECTION("a filter Tremor never writes") {
    const fs::path path = written_sample(dir, "scaleoffset.h5");
    const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk = 7;
    H5Pset_chunk(properties, 1, &chunk);
    H5Pset_scaleoffset(properties, H5Z_SO_FLOAT_DSCALE, 2);
    replace_durations(path, 7, properties);
    H5Pclose(properties);
    CHECK_FALSE(tremor::read_run(path, error).has_value());
    CHECK_THAT(error, Catch::Contains("dataset '/segments/duration_s' uses HDF5 filter 6"));
  }
}
