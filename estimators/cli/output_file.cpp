#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "commands.hpp"

namespace tremor::cli {
namespace {

// The marker must be within this many bytes of the start of an existing output.
constexpr std::size_t kMarkerWindow = 4096;

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Whether the regular file at `path` carries `marker` in its first bytes.
bool carries_marker(const std::filesystem::path& path, std::string_view marker) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  std::string head(kMarkerWindow, '\0');
  ssize_t got = 0;
  while (true) {
    got = ::read(fd, head.data(), head.size());
    if (got >= 0 || errno != EINTR) break;
  }
  ::close(fd);
  if (got <= 0) return false;
  head.resize(static_cast<std::size_t>(got));
  return head.find(marker) != std::string::npos;
}

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    content.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

mode_t default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

std::string output_refusal(const std::filesystem::path& path, std::string_view marker,
                           const std::vector<std::filesystem::path>& inputs) {
  if (path.empty()) return "the output file name is empty";
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) {
    if (errno == ENOENT) return "";  // a new file (a missing directory fails at the write)
    return std::string("cannot check it: ") + std::strerror(errno);
  }
  for (const std::filesystem::path& input : inputs) {
    struct stat read {};
    if (::stat(input.c_str(), &read) == 0 && same_file(read, target)) {
      return "it is the input " + input.string() + "; choose another output name";
    }
  }
  if (!S_ISREG(target.st_mode)) return "it exists and is not a regular file";
  if (!carries_marker(path, marker)) {
    return "it exists and is not a page this command wrote; remove it or choose another name";
  }
  return "";
}

void write_output_file(const std::filesystem::path& path, std::string_view content, std::string_view marker,
                       const std::vector<std::filesystem::path>& inputs) {
  const std::string refusal = output_refusal(path, marker, inputs);
  if (!refusal.empty()) throw CommandFailure("will not write " + path.string() + ": " + refusal, Exit::output);
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : ".";
  std::string temporary = (directory / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) throw CommandFailure("cannot write " + path.string() + ": " + std::strerror(errno), Exit::output);
  const bool written = write_all(fd, content) && ::fchmod(fd, default_file_mode()) == 0 && ::fsync(fd) == 0;
  const int write_error = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = !written ? write_error : errno;
    ::unlink(temporary.c_str());
    throw CommandFailure("cannot write " + path.string() + ": " + std::strerror(error) + " (nothing was written)",
                         Exit::output);
  }
}

}  // namespace tremor::cli
