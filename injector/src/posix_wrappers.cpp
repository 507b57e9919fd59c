// POSIX I/O wrappers, one per line of posix_calls.inc (generated from the call
// table interpose/mpi_calls.py; family posix). Before MPI_Init, after
// MPI_Finalize and in processes that never use MPI they only forward.
#undef _FORTIFY_SOURCE  // fortified inline open/read would clash with these definitions
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime.hpp"

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
    return tremor::inject::intercept(tremor::inject::posix, #name, function, [&](void* forward) { \
      return reinterpret_cast<decltype(&::name)>(forward) args;                                   \
    });                                                                                           \
  }

// The mode argument exists only when the flags create a file.
#define TREMOR_INJECT_POSIX_OPEN(name, params, args)                                              \
  TREMOR_INJECT_EXPORT int name(TREMOR_INJECT_EXPAND params, ...) {                               \
    mode_t mode = 0;                                                                              \
    if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {                             \
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
    return tremor::inject::intercept(tremor::inject::posix, #name, function, [&](void* forward) { \
      return reinterpret_cast<decltype(&::name)>(forward)(TREMOR_INJECT_EXPAND args, mode);       \
    });                                                                                           \
  }

#include "posix_calls.inc"
