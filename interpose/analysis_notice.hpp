// Rank 0's word while a long end-of-run analysis runs: a report that comes
// more than a second after the application finished is announced, so the
// wait is not silent (docs/analysis-time.md).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

namespace tremor::interpose {

class AnalysisNotice {
 public:
  static constexpr std::chrono::milliseconds kAfter{1000};

  // Starts the timer; without a thread (none can be made) there is no notice.
  explicit AnalysisNotice(std::size_t segments) noexcept {
    try {
      timer_.emplace([this, segments] {
        std::unique_lock lock(mutex_);
        if (!finished_.wait_for(lock, kAfter, [this] { return done_; })) {
          std::fprintf(stderr, "[tremor] analysing %zu segments\u2026\n", segments);
          std::fflush(stderr);
        }
      });
    } catch (...) {
      timer_.reset();
    }
  }
  ~AnalysisNotice() {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    finished_.notify_all();
    if (timer_ && timer_->joinable()) timer_->join();
  }
  AnalysisNotice(const AnalysisNotice&) = delete;
  AnalysisNotice& operator=(const AnalysisNotice&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::optional<std::thread> timer_;
};

}  // namespace tremor::interpose
