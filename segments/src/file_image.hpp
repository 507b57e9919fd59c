// Run files are built in memory (HDF5's core driver, no backing store) and
// written to disk by this code, not by HDF5: a full file system then fails a
// plain write(2) with a clear errno, and HDF5 never holds a file it could not
// close (HDF5 1.10 crashes at exit on a file whose flush failed).
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tremor::hdf5 {

// File access list for an in-memory file, optionally opened from `image`.
hid_t memory_file_access(const std::vector<char>* image);

// The bytes of an open in-memory file (after flushing it); empty on failure.
std::vector<char> file_image(hid_t file);

// Writes bytes to a new file: the caller's empty reservation (opened without
// O_CREAT, never a symlink) or, if none, a file created with O_EXCL, mode
// 0644. On failure the file is removed and `error` names the errno.
bool write_new_file(const std::filesystem::path& path, const std::vector<char>& bytes, bool reserved,
                    std::string& error);

// Replaces our own file atomically: a sibling created with O_EXCL is written
// and renamed over it. On failure the original is untouched.
bool replace_own_file(const std::filesystem::path& path, const std::vector<char>& bytes, std::string& error);

// HDF5's metadata checksum (lookup3), for the superblock repair.
std::uint32_t metadata_checksum(const unsigned char* data, std::size_t length);

// Whole-file read; false with `error` on failure.
bool read_file(const std::filesystem::path& path, std::vector<char>& bytes, std::string& error);

}  // namespace tremor::hdf5
