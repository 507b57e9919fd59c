// Which descriptors are regular files (see posix_support.hpp).
#include <sys/stat.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "posix_support.hpp"

namespace tremor::interpose {
namespace {

enum Kind : std::uint8_t { kUnknown = 0, kFile = 1, kOther = 2 };
constexpr int kCachedDescriptors = 1 << 16;
// Relaxed atomics: threads may race to classify the same descriptor, and
// both write the same answer.
std::array<std::atomic<std::uint8_t>, kCachedDescriptors> g_kinds{};

bool stat_regular(int fd) noexcept {
  struct stat info {};
  return fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

bool classify_opened(int fd) noexcept {
  if (fd < 0) return false;
  const bool regular = stat_regular(fd);
  if (fd < kCachedDescriptors)
    g_kinds[static_cast<std::size_t>(fd)].store(regular ? kFile : kOther, std::memory_order_relaxed);
  return regular;
}

bool is_regular_file(int fd) noexcept {
  if (fd < 0) return false;
  if (fd >= kCachedDescriptors) return stat_regular(fd);
  const std::uint8_t kind = g_kinds[static_cast<std::size_t>(fd)].load(std::memory_order_relaxed);
  if (kind != kUnknown) return kind == kFile;
  return classify_opened(fd);
}

void forget_descriptor(int fd) noexcept {
  if (fd >= 0 && fd < kCachedDescriptors)
    g_kinds[static_cast<std::size_t>(fd)].store(kUnknown, std::memory_order_relaxed);
}

}  // namespace tremor::interpose
