#include "tremor/output_path.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace tremor {
namespace {

constexpr int kMaxAttempts = 100000;

std::string sanitize(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  return out;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &parts);
  return text;
}

}  // namespace

std::optional<ReservedOutput> reserve_output_files(const std::filesystem::path& directory, std::string_view program,
                                                   std::string_view job_id,
                                                   std::span<const std::string_view> extensions, std::string& error) {
  std::string name = sanitize(std::filesystem::path(program).filename().string());
  if (name.empty()) name = "run";
  const std::string prefix =
      name + "-" + (job_id.empty() ? utc_timestamp() : sanitize(job_id)) + "-" + std::to_string(::getpid()) + "-";
  for (int n = 0; n < kMaxAttempts; ++n) {
    ReservedOutput reserved{prefix + std::to_string(n), {}};
    bool taken = false;
    for (std::string_view extension : extensions) {
      std::filesystem::path path = directory / (reserved.stem + std::string(extension));
      const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0) {
        const int code = errno;
        for (const auto& created : reserved.paths) ::unlink(created.c_str());  // only files we just made
        if (code == EEXIST) {
          taken = true;
          break;
        }
        error = "cannot create '" + path.string() + "': " + std::strerror(code);
        return std::nullopt;
      }
      ::close(fd);
      reserved.paths.push_back(std::move(path));
    }
    if (!taken) return reserved;
  }
  error = "no free output name for '" + prefix + "<n>' in '" + directory.string() + "'";
  return std::nullopt;
}

}  // namespace tremor
