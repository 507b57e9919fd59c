// `tremor analyze --recover`: a partial run from the crash-recovery spill
// files, saved as a new run file marked partial (never over an existing one).
#include <iostream>

#include "commands.hpp"
#include "tremor/output_path.hpp"
#include "tremor/run_file.hpp"
#include "tremor/spill.hpp"

namespace tremor::cli {

RecoveredInput recover_from_spills(const std::vector<std::string>& names, const std::string& output_dir) {
  std::string error;
  const std::vector<std::filesystem::path> paths = find_spill_files(names, error);
  if (paths.empty()) throw CommandFailure(error, Exit::bad_input);
  std::vector<SpillFile> files;
  for (const auto& path : paths) {
    std::optional<SpillFile> file = read_spill(path, error);
    if (!file) throw CommandFailure(path.string() + ": not a usable Tremor spill file: " + error, Exit::bad_input);
    files.push_back(std::move(*file));
  }
  std::optional<RecoveredRun> recovered = recover_run(files, error);
  if (!recovered) throw CommandFailure("cannot recover the run: " + error, Exit::bad_input);
  if (!validate_run(recovered->run, error)) throw CommandFailure("cannot recover the run: " + error, Exit::bad_input);
  for (const std::string& note : recovered->notes) std::cerr << "tremor: note: " << note << '\n';

  RecoveredInput out{std::move(recovered->run), {}};
  std::filesystem::path directory(output_dir);
  if (output_dir.empty()) directory = paths.front().has_parent_path() ? paths.front().parent_path() : ".";
  const SpillHeader& root = files.front().header.rank == 0 ? files.front().header : files.back().header;
  constexpr std::string_view extension = ".h5";
  const auto reserved =
      reserve_output_files(directory, root.program + "-recovered", root.job_id, std::span(&extension, 1), error);
  if (!reserved) {
    std::cerr << "tremor: warning: the recovered run is not saved: " << error << '\n';
  } else if (!write_run(reserved->paths[0], out.run, error, ExistingFile::fill_empty_reservation)) {
    std::cerr << "tremor: warning: cannot write " << reserved->paths[0].string() << ": " << error << '\n';
  } else {
    out.saved = reserved->paths[0];
  }
  return out;
}

}  // namespace tremor::cli
