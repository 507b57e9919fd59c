// render_html_view: the view goes to tremor-plot's standard input, the page
// comes back on its standard output; its messages go to our standard error.
#include "tremor/analysis/html_view.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <vector>

#include "tremor/json_text.hpp"

extern char** environ;

namespace tremor::analysis {
namespace {

constexpr const char* kRenderer = "tremor-plot";
constexpr int kRendererMissingStatus = 127;  // the shell's and tremor-plot's "not found"

// The renderer of the same build or install: the file beside /proc/self/exe.
std::string renderer_path() {
  std::error_code error;
  const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / kRenderer;
  return !error && ::access(beside.c_str(), X_OK) == 0 ? beside.string() : std::string(kRenderer);
}

void write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t count = ::write(fd, text.data() + written, text.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return;  // the renderer stopped reading: its exit status says why
    written += static_cast<std::size_t>(count);
  }
}

std::string read_all(int fd) {
  std::string text;
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t count = ::read(fd, buffer.data(), buffer.size());
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return text;
    text.append(buffer.data(), static_cast<std::size_t>(count));
  }
}

}  // namespace

std::string render_html_view(const nlohmann::json& view) {
  int to_renderer[2];
  int from_renderer[2];
  if (::pipe2(to_renderer, O_CLOEXEC) != 0) throw HtmlRendererFailure(std::strerror(errno), false);
  if (::pipe2(from_renderer, O_CLOEXEC) != 0) {
    ::close(to_renderer[0]);
    ::close(to_renderer[1]);
    throw HtmlRendererFailure(std::strerror(errno), false);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_renderer[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_renderer[1], STDOUT_FILENO);
  const std::string program = renderer_path();
  std::vector<char*> argv = {const_cast<char*>(kRenderer), const_cast<char*>("--view"), const_cast<char*>("-"),
                             nullptr};
  pid_t child = 0;
  const int spawned = ::posix_spawnp(&child, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_renderer[0]);
  ::close(from_renderer[1]);
  if (spawned != 0) {
    ::close(to_renderer[1]);
    ::close(from_renderer[0]);
    throw HtmlRendererFailure("cannot run " + program + ": " + std::strerror(spawned), spawned == ENOENT);
  }
  // The renderer reads the whole view before it writes, so writing first cannot deadlock;
  // a renderer that dies early must not kill this process with SIGPIPE.
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  write_all(to_renderer[1], json_text(view));
  ::close(to_renderer[1]);
  std::string page = read_all(from_renderer[0]);
  ::close(from_renderer[0]);
  ::sigaction(SIGPIPE, &previous, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !page.empty()) return page;
  const bool missing = WIFEXITED(status) && WEXITSTATUS(status) == kRendererMissingStatus;
  throw HtmlRendererFailure(program + " --view did not draw the page (" +
                                (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                                   : std::string("killed by a signal")) +
                                ")",
                            missing);
}

}  // namespace tremor::analysis
