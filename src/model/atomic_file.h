// Internal to the model layer: crash-safe file writing for checkpoints.
//
// write_file_atomic writes into a temporary file next to `path`, fsyncs it,
// renames it over `path` and fsyncs the directory (the POSIX recipe: rename is
// atomic within one file system, so a reader sees the old file or the whole
// new one, never a prefix). Used by safetensors.cpp and hf_checkpoint.cpp.
// core/fs.h's write_file_atomic takes the whole content as one string; this
// streaming variant writes tensor by tensor so a multi-GB shard never has to
// exist in memory at once.
//
// Thread-safety: safe for concurrent calls on different paths.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

namespace agentrl::model::detail {

// Appends bytes to the file being written; throws IoError on failure.
class FileSink {
 public:
  FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void write(const void* data, size_t size);

 private:
  int fd_;
  std::string path_;
};

// Calls `fill` with a sink for a temporary file, then commits it to `path`.
// If `fill` throws, the temporary file is removed and the exception
// propagates; `path` is untouched. Throws IoError.
void write_file_atomic(const std::string& path, const std::function<void(FileSink&)>& fill);

// A fresh hidden sibling path of `dir` (".<name>.<what>-<pid>-<n>") to build
// a directory in before commit_dir moves it into place.
std::filesystem::path temp_sibling(const std::filesystem::path& dir, const char* what);
// Moves the finished `tmp` to `dir` (rename: atomic), replacing an old `dir`
// when `overwrite` (IoError when it exists non-empty otherwise), and fsyncs
// the parent directory.
void commit_dir(const std::filesystem::path& tmp, const std::filesystem::path& dir, bool overwrite);

// "<strerror(errno)>" helper for messages.
std::string errno_text();

}  // namespace agentrl::model::detail
