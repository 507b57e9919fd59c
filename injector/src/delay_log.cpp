// Delay log storage and its per-rank CSV file.
#include "delay_log.hpp"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char* program_invocation_short_name;  // glibc

namespace tremor::inject {
namespace {

// Keeps file names portable: anything unusual becomes '_'.
std::string sanitized(const char* text) {
  std::string result = (text != nullptr && *text != '\0') ? text : "unknown";
  for (char& c : result) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+';
    if (!plain) c = '_';
  }
  return result;
}

// Batch id when a scheduler provides one, else the local start time.
std::string job_tag() {
  for (const char* variable : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "JOB_ID"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && *value != '\0') return "job" + sanitized(value);
  }
  const time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  char text[32];
  strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t written = ::write(fd, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    done += static_cast<std::size_t>(written);
  }
  return true;
}

// A kernel count in seconds, or an empty field where it was not read (< 0).
void seconds_or_empty(char* out, std::size_t size, double seconds) {
  if (seconds < 0.0) {
    out[0] = '\0';
    return;
  }
  std::snprintf(out, size, "%.9f", seconds);
}

}  // namespace

DelayLog::~DelayLog() { std::free(entries_); }

bool DelayLog::open(const std::string& output_dir, int rank) noexcept {
  output_dir_ = output_dir;
  job_tag_ = job_tag();
  entries_ = static_cast<LogEntry*>(std::malloc(kInitialRecords * sizeof(LogEntry)));
  capacity_ = entries_ != nullptr ? kInitialRecords : 0;
  return entries_ != nullptr;
}

bool DelayLog::reserve_one() noexcept {
  if (full_) return false;
  if (reserved_ == capacity_) {
    const std::size_t grown = capacity_ * 2;
    void* moved = grown <= kMaxRecords ? std::realloc(entries_, grown * sizeof(LogEntry)) : nullptr;
    if (moved == nullptr) {
      full_ = true;
      return false;
    }
    entries_ = static_cast<LogEntry*>(moved);
    capacity_ = grown;
  }
  ++reserved_;
  return true;
}

std::size_t DelayLog::append(const LogEntry& entry) noexcept {
  entries_[size_] = entry;
  if (entry.delayed) {
    ++delays_;
    requested_us_total_ += entry.record.requested_us;
    spent_us_total_ += entry.record.spent_us;
  }
  return size_++;
}

std::size_t DelayLog::copy_to(tremor_inject_record* out, std::size_t max) const noexcept {
  std::size_t count = 0;
  for (std::size_t index = 0; index < size_ && count < max; ++index)
    if (entries_[index].delayed) out[count++] = entries_[index].record;
  return count;
}

void DelayLog::write_csv(int rank) const noexcept {
  const std::string stem = output_dir_ + "/tremor-inject_" + sanitized(program_invocation_short_name) + "_" + job_tag_ +
                           "_r" + std::to_string(rank) + "_" + std::to_string(getpid());
  std::string path;
  int fd = -1;
  for (int attempt = 0; attempt < 1000 && fd < 0; ++attempt) {
    path = stem + "-" + std::to_string(attempt) + ".csv";
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "tremor-inject: cannot create the delay log in TREMOR_OUTPUT_DIR='%s' (%s); %zu injected "
                   "delays are not saved, the application is unaffected.\n",
                   output_dir_.c_str(), std::strerror(errno), delays_);
    }
    return;
  }
  std::string text =
      "rank,sequence,time_s,call,requested_us,spent_us,segment,entered_s,returned_s,queued_entered_s,"
      "queued_returned_s\n";
  char line[288];
  char queued_entered[32];
  char queued_returned[32];
  bool ok = true;
  for (std::size_t index = 0; index < size_ && ok; ++index) {
    const LogEntry& entry = entries_[index];
    seconds_or_empty(queued_entered, sizeof queued_entered, entry.queued_entered_s);
    seconds_or_empty(queued_returned, sizeof queued_returned, entry.queued_returned_s);
    std::snprintf(line, sizeof line, "%d,%lld,%.9f,%s,%.3f,%.3f,%lld,%.9f,%.9f,%s,%s\n", rank, entry.sequence,
                  entry.record.time_s, entry.record.call, entry.record.requested_us, entry.record.spent_us,
                  entry.record.segment, entry.entered_s, entry.returned_s, queued_entered, queued_returned);
    text += line;
    if (text.size() > 60000) {
      ok = write_all(fd, text);
      text.clear();
    }
  }
  if (full_) {
    text += "# log full after " + std::to_string(size_) + " rows (" + std::to_string(delays_) +
            " delays): injection stopped on this rank\n";
  }
  ok = ok && write_all(fd, text);
  ::close(fd);
  if (!ok && rank == 0) {
    std::fprintf(stderr, "tremor-inject: writing the delay log %s failed (%s); it is incomplete.\n", path.c_str(),
                 std::strerror(errno));
  }
}

}  // namespace tremor::inject
