// POSIX I/O wrappers, one per line of posix_calls.inc (generated from the call
// table interpose/mpi_calls.py; family posix). Before MPI_Init, after
// MPI_Finalize and in processes that never use MPI they only forward. They
// delay (and trace) calls on regular files only, the file I/O the profiler
// counts (interpose/posix_files.cpp): a write to a pipe, a terminal or
// /dev/null is not file I/O, so a delay there would be a truth the profiler
// books elsewhere.
#undef _FORTIFY_SOURCE  // fortified inline open/read would clash with these definitions
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "runtime.hpp"

namespace tremor::inject {
namespace {

// The checks leave errno as the application left it: a failed fstat must
// not show through a call that then succeeds.
bool regular_descriptor(int fd) noexcept {
  const int saved = errno;
  struct stat info {};
  const bool regular = fd >= 0 && fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  errno = saved;
  return regular;
}

// A path names a regular file, or none yet and the call creates one.
bool regular_path(int dirfd, const char* path, bool creates) noexcept {
  const int saved = errno;
  struct stat info {};
  const bool exists = path != nullptr && fstatat(dirfd, path, &info, 0) == 0;
  errno = saved;
  return exists ? S_ISREG(info.st_mode) : creates;
}

bool regular_stream(FILE* stream) noexcept { return stream != nullptr && regular_descriptor(fileno(stream)); }

// Whether a call works on a regular file, from its arguments.
template <typename... Rest>
bool file_target(int fd, Rest...) noexcept {  // close, read, write, pread, pwrite, readv, writev
  return regular_descriptor(fd);
}
[[maybe_unused]] bool file_target(const char* path, mode_t) noexcept {  // creat
  return regular_path(AT_FDCWD, path, true);
}
[[maybe_unused]] bool file_target(const char* path, const char* mode) noexcept {  // fopen
  return regular_path(AT_FDCWD, path, mode != nullptr && (std::strchr(mode, 'w') || std::strchr(mode, 'a')));
}
[[maybe_unused]] bool file_target(FILE* stream) noexcept { return regular_stream(stream); }  // fclose
template <typename Buffer>
bool file_target(Buffer, size_t, size_t, FILE* stream) noexcept {  // fread, fwrite
  return regular_stream(stream);
}

bool creates(int flags) noexcept { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }
[[maybe_unused]] bool open_target(const char* path, int flags) noexcept {
  return regular_path(AT_FDCWD, path, creates(flags));
}
[[maybe_unused]] bool open_target(int dirfd, const char* path, int flags) noexcept {
  return regular_path(dirfd, path, creates(flags));
}

}  // namespace
}  // namespace tremor::inject

#define TREMOR_INJECT_EXPAND(...) __VA_ARGS__

// A wrapper entered from inside dlsym (resolution not finished) cannot
// forward; it fails with ENOSYS instead of recursing.
#define TREMOR_INJECT_POSIX_CALL(type, failure, name, params, args)                               \
  TREMOR_INJECT_EXPORT type name params {                                                         \
    static std::atomic<void*> next{nullptr};                                                      \
    void* const function = tremor::inject::next_definition(next, #name);                          \
    if (function == nullptr) [[unlikely]] {                                                       \
      errno = ENOSYS;                                                                             \
      return failure;                                                                             \
    }                                                                                             \
    return tremor::inject::intercept_if(                                                          \
        tremor::inject::posix, #name, function,                                                   \
        [&](void* forward) { return reinterpret_cast<decltype(&::name)>(forward) args; },         \
        [&] { return tremor::inject::file_target args; });                                        \
  }

// The mode argument exists only when the flags create a file.
#define TREMOR_INJECT_POSIX_OPEN(name, params, args)                                              \
  TREMOR_INJECT_EXPORT int name(TREMOR_INJECT_EXPAND params, ...) {                               \
    mode_t mode = 0;                                                                              \
    if (tremor::inject::creates(flags)) {                                                         \
      va_list extra;                                                                              \
      va_start(extra, flags);                                                                     \
      mode = static_cast<mode_t>(va_arg(extra, unsigned int));                                    \
      va_end(extra);                                                                              \
    }                                                                                             \
    static std::atomic<void*> next{nullptr};                                                      \
    void* const function = tremor::inject::next_definition(next, #name);                          \
    if (function == nullptr) [[unlikely]] {                                                       \
      errno = ENOSYS;                                                                             \
      return -1;                                                                                  \
    }                                                                                             \
    return tremor::inject::intercept_if(                                                          \
        tremor::inject::posix, #name, function,                                                   \
        [&](void* forward) {                                                                      \
          return reinterpret_cast<decltype(&::name)>(forward)(TREMOR_INJECT_EXPAND args, mode);   \
        },                                                                                        \
        [&] { return tremor::inject::open_target(TREMOR_INJECT_EXPAND args); });                  \
  }

#include "posix_calls.inc"
