#include "reader_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "tremor/run_file.hpp"

namespace tremor::cli {

unsigned read_time_limit(const std::string& path, unsigned override_s) {
  if (override_s > 0) return override_s;
  std::error_code error;
  const auto bytes = path.empty() ? 0 : std::filesystem::file_size(path, error);
  return 60 + (error ? 0 : static_cast<unsigned>(std::min<std::uintmax_t>(bytes >> 20, 86400)));
}

void signal_read_done(int read_done) {
  const char done = 1;
  if (write(read_done, &done, 1) != 1) throw CommandFailure("cannot signal the parent process", Exit::internal);
}

std::optional<RunData> read_run_within(const std::string& path, unsigned limit_s, int read_done, std::string& error) {
  alarm(limit_s);  // SIGALRM ends a read that never returns
  std::optional<RunData> run = read_run(path, error);
  alarm(0);
  signal_read_done(read_done);
  return run;
}

void run_in_reader_process(const std::string& shown_input, unsigned limit_s, std::string_view task,
                           const std::function<void(int read_done)>& body) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) {
    throw CommandFailure(std::string("cannot create a pipe: ") + std::strerror(errno), Exit::internal);
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) {
    throw CommandFailure(std::string("cannot start the reader process: ") + std::strerror(errno), Exit::internal);
  }
  if (child == 0) {
    close(pipe_ends[0]);
    const int code = exit_code_of([&] { body(pipe_ends[1]); });
    std::cout.flush();
    std::cerr.flush();
    _exit(code);
  }
  close(pipe_ends[1]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  char done = 0;
  const bool read_finished = read(pipe_ends[0], &done, 1) == 1;
  close(pipe_ends[0]);
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) != 0) throw CommandFailure("", static_cast<Exit>(WEXITSTATUS(status)));  // said why
    return;
  }
  const int signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (read_finished) {
    throw CommandFailure(std::string(task) + " of " + shown_input + " died (" + strsignal(signal_number) + ")",
                         Exit::internal);
  }
  if (signal_number == SIGALRM) {
    throw CommandFailure(shown_input + ": not a readable Tremor run file: reading it took longer than " +
                             std::to_string(limit_s) + " s (corrupted?)",
                         Exit::bad_input);
  }
  throw CommandFailure(shown_input + ": not a readable Tremor run file: the HDF5 library failed on it (" +
                           strsignal(signal_number) + "); the file is corrupted",
                       Exit::bad_input);
}

}  // namespace tremor::cli
