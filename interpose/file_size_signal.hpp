// Tremor's own writes on a full file system (RLIMIT_FSIZE): a write past the
// limit fails with EFBIG and also raises SIGXFSZ at the writing thread, whose
// default action kills the process. While a shield is alive the signal is
// blocked in this thread; on leaving, a SIGXFSZ that Tremor's writes caused is
// consumed and the thread's mask restored. The application's disposition is
// never touched, and a SIGXFSZ that was already pending before is left alone.
#pragma once
#include <signal.h>
#include <time.h>

namespace tremor::interpose {

class FileSizeSignalShield {
 public:
  FileSizeSignalShield() noexcept {
    sigemptyset(&only_xfsz_);
    sigaddset(&only_xfsz_, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &only_xfsz_, &saved_mask_);
    sigset_t pending;
    sigemptyset(&pending);
    already_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
  }
  ~FileSizeSignalShield() {
    if (!already_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1) {
        const timespec no_wait{0, 0};
        sigtimedwait(&only_xfsz_, nullptr, &no_wait);
      }
    }
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }
  FileSizeSignalShield(const FileSizeSignalShield&) = delete;
  FileSizeSignalShield& operator=(const FileSizeSignalShield&) = delete;

 private:
  sigset_t only_xfsz_;
  sigset_t saved_mask_;
  bool already_pending_ = false;
};

}  // namespace tremor::interpose
