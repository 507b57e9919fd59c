// What the generated POSIX wrappers (posix_wrappers.cpp) call. The real
// functions are found with dlsym(RTLD_NEXT) on first use, so a stacked
// injector or the C library answers; I/O done inside MPI (MPI-IO) or inside
// Tremor is forwarded without being counted (ThreadState::depth).
#pragma once
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>

#include "runtime.hpp"

namespace tremor::interpose {

inline void* next_symbol(const char* name) noexcept { return dlsym(RTLD_NEXT, name); }

// File I/O means regular files: pipes, sockets, terminals and the event fds
// that MPI progress threads read are not the application's file I/O. The
// answer is cached per descriptor (one fstat), re-taken at every open and
// dropped at close.
bool is_regular_file(int fd) noexcept;
bool classify_opened(int fd) noexcept;
void forget_descriptor(int fd) noexcept;

// A symbol the C library does not have: fail like the call would.
template <typename Result>
Result missing_symbol() noexcept {
  errno = ENOSYS;
  if constexpr (std::is_pointer_v<Result>) {
    return nullptr;
  } else if constexpr (std::is_same_v<Result, std::size_t>) {
    return 0;
  } else {
    return static_cast<Result>(-1);
  }
}

}  // namespace tremor::interpose
