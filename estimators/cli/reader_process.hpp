// Reading a run file in a child process (`tremor analyze`, `tremor export`).
// HDF5 1.10 itself can crash or loop forever on some corrupted files (its
// global heap, which holds the strings, has no checksum; found by test/fuzz),
// so a command reads and works on the file in a child: if the child dies or
// the read outlives its time limit, the file is reported unreadable (exit 2).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tremor/run_data.hpp"

namespace tremor::cli {

// The read's time limit: `override_s`, else 60 s + 1 s per MiB of the file.
unsigned read_time_limit(const std::string& path, unsigned override_s);

// read_run under SIGALRM after `limit_s` (which ends the child), then one
// byte on `read_done` so the parent tells a failed read from a failed analysis.
std::optional<RunData> read_run_within(const std::string& path, unsigned limit_s, int read_done, std::string& error);
// The byte alone, for a child that read its input otherwise.
void signal_read_done(int read_done);

// Runs body(read_done) in a child process and returns when it exited with 0.
// A child's non-zero status becomes CommandFailure with that status (the
// child said why); a child killed before its read was done makes
// `shown_input` unreadable (bad_input); one killed after it, an internal error
// naming `task` ("the analysis").
void run_in_reader_process(const std::string& shown_input, unsigned limit_s, std::string_view task,
                           const std::function<void(int read_done)>& body);

}  // namespace tremor::cli
