// open/open64/openat/openat64 take an optional mode argument (variadic), so
// they are written out here rather than generated; everything else about
// them follows the generated POSIX wrappers.
#include <cstdarg>

#include "posix_support.hpp"

namespace tremor::interpose {
namespace {

bool takes_mode(int flags) noexcept {
#ifdef O_TMPFILE
  if ((flags & O_TMPFILE) == O_TMPFILE) return true;
#endif
  return (flags & O_CREAT) != 0;
}

template <typename Real, typename... Args>
int counted_open(Real real, Args... args) noexcept {
  if (!real) return missing_symbol<int>();
  ThreadState* const state = enter();
  if (!state) return real(args...);
  const std::uint64_t start = ticks();
  refresh_if_stale(*state, start);
  const int result = real(args...);
  const std::uint64_t end = ticks();
  const int result_errno = errno;
  if (result >= 0 && classify_opened(result)) state->add(Feature::io_opens, 1);
  leave_io(*state, start, end);
  errno = result_errno;
  return result;
}

using OpenFn = int (*)(const char*, int, ...);
using OpenAtFn = int (*)(int, const char*, int, ...);

mode_t mode_argument(int flags, va_list& args) noexcept {
  return takes_mode(flags) ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

}  // namespace

extern "C" TREMOR_EXPORT int open(const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<OpenFn>(next_symbol("open"));
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  return counted_open(real, path, flags, mode);
}

extern "C" TREMOR_EXPORT int open64(const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<OpenFn>(next_symbol("open64"));
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  return counted_open(real, path, flags, mode);
}

extern "C" TREMOR_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<OpenAtFn>(next_symbol("openat"));
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  return counted_open(real, dirfd, path, flags, mode);
}

extern "C" TREMOR_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<OpenAtFn>(next_symbol("openat64"));
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  return counted_open(real, dirfd, path, flags, mode);
}

}  // namespace tremor::interpose
