// `tremor watch`: the spill files of the job followed, kept in memory from
// one refresh to the next. A refresh reads only the bytes appended since the
// last one (pread from the end of the last whole block); a file replaced
// (another inode), truncated below what was read, or whose appended blocks do
// not continue the stream is read again from its start; a file that vanished
// is dropped until it comes back. Reading goes through a descriptor, never a
// mapping, so a file truncated or removed mid-read cannot fault the watch.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "cli_watch.hpp"

namespace tremor::cli::watch {
namespace fs = std::filesystem;

namespace {

// Reads [from, from + size) of `fd` (less where the file shrank meanwhile).
bool read_range(int fd, std::uint64_t from, std::uint64_t size, std::vector<char>& out) {
  out.resize(size);
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t got = pread(fd, out.data() + done, size - done, static_cast<off_t>(from + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  out.resize(done);
  return true;
}

class Descriptor {
 public:
  explicit Descriptor(const fs::path& path) : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void SpillFollower::update(const std::vector<fs::path>& paths) {
  std::vector<SpillFile> spills;
  std::vector<FollowedFile> states;
  bytes_read_ = 0;
  std::unordered_map<std::string, std::size_t> known;  // path -> index in states_ (thousands of ranks: no quadratic search)
  for (std::size_t i = 0; i < states_.size(); ++i) known.emplace(states_[i].path.string(), i);
  for (const fs::path& path : paths) {
    SpillFile spill;
    FollowedFile state{path, 0, 0, {}, false, false, {}};
    if (const auto found = known.find(path.string()); found != known.end()) {
      spill = std::move(spills_[found->second]);
      state = std::move(states_[found->second]);
      known.erase(found);  // a path named twice is read twice, never moved from twice
    }
    bring_up_to_date(spill, state);
    spills.push_back(std::move(spill));
    states.push_back(std::move(state));
  }
  spills_ = std::move(spills);
  states_ = std::move(states);
}

void SpillFollower::bring_up_to_date(SpillFile& spill, FollowedFile& state) {
  const Descriptor file(state.path);
  struct stat facts {};
  if (file.get() < 0 || fstat(file.get(), &facts) != 0) {
    state = FollowedFile{state.path, 0, 0, {}, false, false, errno == ENOENT ? "vanished" : std::strerror(errno)};
    spill = SpillFile{};
    return;
  }
  if (!S_ISREG(facts.st_mode)) {
    state = FollowedFile{state.path, 0, 0, {}, false, false, "not a regular file"};
    spill = SpillFile{};
    return;
  }
  const auto size = static_cast<std::uint64_t>(facts.st_size);
  const bool continues = state.readable && !state.reread && state.device == facts.st_dev &&
                         state.inode == facts.st_ino && size >= state.cursor.offset;
  const std::uint64_t from = continues ? state.cursor.offset : 0;
  std::vector<char> bytes;
  if (!read_range(file.get(), from, size - from, bytes)) {
    state = FollowedFile{state.path, 0, 0, {}, false, false, "cannot be read"};
    spill = SpillFile{};
    return;
  }
  bytes_read_ += bytes.size();
  if (continues) {
    if (spill.end == SpillEnd::none) take_spill_blocks(bytes, spill, state.cursor);
  } else {
    std::string error;
    std::optional<SpillFile> parsed = parse_spill_header(bytes, state.cursor, error);
    if (!parsed) {
      state = FollowedFile{state.path, 0, 0, {}, false, false, error};
      spill = SpillFile{};
      return;
    }
    spill = std::move(*parsed);
    spill.path = state.path;
    take_spill_blocks(std::span<const char>(bytes).subspan(state.cursor.offset), spill, state.cursor);
  }
  state.device = facts.st_dev;
  state.inode = facts.st_ino;
  state.readable = true;
  state.error.clear();
  const std::uint64_t end = from + bytes.size();
  spill.dropped_bytes = end - state.cursor.offset;
  if (spill.dropped_bytes > 0 && spill.dropped_reason.empty()) spill.dropped_reason = "truncated last block";
  // A torn last block is read again once complete; any other stop (a block
  // out of sequence or failing its checksum where a whole one should be: the
  // file was rewritten in place) is looked at again from the file's start.
  state.reread = spill.end == SpillEnd::none && spill.dropped_bytes > 0 &&
                 spill.dropped_reason != "truncated last block";
}

}  // namespace tremor::cli::watch
