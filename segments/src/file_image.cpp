#include "file_image.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

namespace tremor::hdf5 {
namespace {

constexpr std::size_t kGrowBytes = std::size_t{1} << 20;

constexpr std::uint32_t rotate(std::uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

}  // namespace

// Bob Jenkins' lookup3 hashlittle, byte-wise, as HDF5's H5_checksum_lookup3.
std::uint32_t metadata_checksum(const unsigned char* k, std::size_t length) {
  std::uint32_t a = 0xdeadbeef + static_cast<std::uint32_t>(length), b = a, c = a;
  auto word = [&k](int at) {
    return static_cast<std::uint32_t>(k[at]) | static_cast<std::uint32_t>(k[at + 1]) << 8 |
           static_cast<std::uint32_t>(k[at + 2]) << 16 | static_cast<std::uint32_t>(k[at + 3]) << 24;
  };
  while (length > 12) {
    a += word(0);
    b += word(4);
    c += word(8);
    a -= c;
    a ^= rotate(c, 4);
    c += b;
    b -= a;
    b ^= rotate(a, 6);
    a += c;
    c -= b;
    c ^= rotate(b, 8);
    b += a;
    a -= c;
    a ^= rotate(c, 16);
    c += b;
    b -= a;
    b ^= rotate(a, 19);
    a += c;
    c -= b;
    c ^= rotate(b, 4);
    b += a;
    length -= 12;
    k += 12;
  }
  if (length == 0) return c;
  unsigned char tail[12] = {};
  std::memcpy(tail, k, length);
  a += static_cast<std::uint32_t>(tail[0]) | static_cast<std::uint32_t>(tail[1]) << 8 |
       static_cast<std::uint32_t>(tail[2]) << 16 | static_cast<std::uint32_t>(tail[3]) << 24;
  b += static_cast<std::uint32_t>(tail[4]) | static_cast<std::uint32_t>(tail[5]) << 8 |
       static_cast<std::uint32_t>(tail[6]) << 16 | static_cast<std::uint32_t>(tail[7]) << 24;
  c += static_cast<std::uint32_t>(tail[8]) | static_cast<std::uint32_t>(tail[9]) << 8 |
       static_cast<std::uint32_t>(tail[10]) << 16 | static_cast<std::uint32_t>(tail[11]) << 24;
  c ^= b;
  c -= rotate(b, 14);
  a ^= c;
  a -= rotate(c, 11);
  b ^= a;
  b -= rotate(a, 25);
  c ^= b;
  c -= rotate(b, 16);
  a ^= c;
  a -= rotate(c, 4);
  b ^= a;
  b -= rotate(a, 14);
  c ^= b;
  c -= rotate(b, 24);
  return c;
}

namespace {

// HDF5 1.10's H5Fget_file_image clears the superblock's status flags in the
// copy without updating the checksum of a version 2/3 superblock, so readers
// refuse the image; recompute it (signature, version, offset and length
// sizes, flags, four addresses, then the checksum).
void repair_superblock_checksum(std::vector<char>& image) {
  auto* bytes = reinterpret_cast<unsigned char*>(image.data());
  static constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (image.size() < 12 || std::memcmp(bytes, kSignature, 8) != 0 || (bytes[8] != 2 && bytes[8] != 3)) return;
  const std::size_t covered = 12 + 4 * static_cast<std::size_t>(bytes[9]);
  if (image.size() < covered + 4) return;
  const std::uint32_t sum = metadata_checksum(bytes, covered);
  for (int i = 0; i < 4; ++i) bytes[covered + static_cast<std::size_t>(i)] = static_cast<unsigned char>(sum >> (8 * i));
}

bool write_fd(int fd, const std::vector<char>& bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

// Writes and closes; on failure errno describes the first problem.
bool write_and_close(int fd, const std::vector<char>& bytes) {
  const bool written = write_fd(fd, bytes);
  const int code = errno;
  const bool closed = ::close(fd) == 0;
  if (!written) errno = code;
  return written && closed;
}

}  // namespace

hid_t memory_file_access(const std::vector<char>* image) {
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  if (access < 0) return access;
  // The 1.8 file format checksums its metadata, so read_run can tell a
  // corrupted file from a valid one; every HDF5 >= 1.8 and h5py reads it.
  if (H5Pset_libver_bounds(access, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
      H5Pset_fapl_core(access, kGrowBytes, false) < 0 ||
      (image && H5Pset_file_image(access, const_cast<char*>(image->data()), image->size()) < 0)) {
    H5Pclose(access);
    return H5I_INVALID_HID;
  }
  return access;
}

std::vector<char> file_image(hid_t file) {
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) return {};
  const ssize_t size = H5Fget_file_image(file, nullptr, 0);
  if (size <= 0) return {};
  std::vector<char> bytes(static_cast<std::size_t>(size));
  if (H5Fget_file_image(file, bytes.data(), bytes.size()) != size) return {};
  repair_superblock_checksum(bytes);
  return bytes;
}

bool write_new_file(const std::filesystem::path& path, const std::vector<char>& bytes, bool reserved,
                    std::string& error) {
  const int flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (reserved ? 0 : O_CREAT | O_EXCL);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    error = "cannot create '" + path.string() + "': " + std::strerror(errno);
    return false;
  }
  struct stat info {};
  if (reserved && (::fstat(fd, &info) != 0 || info.st_size != 0)) {  // not our empty reservation any more
    ::close(fd);
    error = "'" + path.string() + "' is no longer empty; refusing to overwrite it";
    return false;
  }
  if (!write_and_close(fd, bytes)) {
    error = "writing '" + path.string() + "': " + std::strerror(errno);
    ::unlink(path.c_str());  // our own partial file, never someone else's
    return false;
  }
  return true;
}

bool replace_own_file(const std::filesystem::path& path, const std::vector<char>& bytes, std::string& error) {
  for (int n = 0; n < 1000; ++n) {
    const std::filesystem::path temporary =
        path.string() + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(n);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      error = "cannot create '" + temporary.string() + "': " + std::strerror(errno);
      return false;
    }
    if (!write_and_close(fd, bytes) || ::rename(temporary.c_str(), path.c_str()) != 0) {
      error = "writing '" + path.string() + "': " + std::strerror(errno);
      ::unlink(temporary.c_str());
      return false;
    }
    return true;
  }
  error = "no free temporary name beside '" + path.string() + "'";
  return false;
}

bool read_file(const std::filesystem::path& path, std::vector<char>& bytes, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path.string() + "'";
    return false;
  }
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = "cannot read '" + path.string() + "'";
    return false;
  }
  return true;
}

}  // namespace tremor::hdf5
